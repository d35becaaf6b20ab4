"""Tree-sliced Wasserstein distances: identities, invariances, validity of the test."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings

import numpy as np
import pytest
import scipy.stats
import sklearn
import torch
from scipy.optimize import minimize
from scipy.stats import special_ortho_group, wasserstein_distance
from sklearn.dummy import DummyClassifier
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import (
    check_estimator,
    check_set_output_transform,
    check_transformer_get_feature_names_out,
)

from sklearn_iclr26.ot import (
    TreeSlicedEmbedding,
    fw_tsw,
    geometric_median,
    pairwise_tree_sliced_wasserstein,
    tree_sliced_two_sample_test,
    tree_sliced_wasserstein,
)

TSW = tree_sliced_wasserstein


@pytest.fixture
def clouds():
    rng = np.random.RandomState(0)
    return rng.normal(size=(60, 4)), rng.normal(size=(45, 4)) * 1.5 + 0.7


# ----------------------------------------------------------------- metric axioms
def test_identity_and_symmetry(clouds):
    X, Y = clouds
    assert TSW(X, X, n_trees=20, random_state=0) < 1e-12
    assert TSW(X, Y, n_trees=20, random_state=0) > 0.1
    np.testing.assert_allclose(
        TSW(X, Y, n_trees=20, random_state=0),
        TSW(Y, X, n_trees=20, random_state=0),
        rtol=1e-10,
    )


def test_triangle_inequality_with_a_fixed_tree_system(clouds):
    X, Y = clouds
    Z = np.random.RandomState(1).uniform(-2, 2, size=(30, 4))
    _, trees = TSW(X, Y, n_trees=15, random_state=0, return_trees=True)
    d = {
        (i, j): TSW(A, B, trees=trees)
        for i, A in enumerate((X, Y, Z))
        for j, B in enumerate((X, Y, Z))
    }
    for i, j, k in [(0, 1, 2), (0, 2, 1), (1, 2, 0)]:
        assert d[i, j] <= d[i, k] + d[k, j] + 1e-12


def test_random_state_is_bit_identical(clouds):
    X, Y = clouds
    assert TSW(X, Y, random_state=3) == TSW(X, Y, random_state=3)
    assert TSW(X, Y, random_state=3) != TSW(X, Y, random_state=4)


# ------------------------------------------------------------ reductions to 1-D
@pytest.mark.parametrize("splitting", ["distance", "uniform"])
def test_one_line_in_one_dimension_is_the_exact_1d_wasserstein(splitting):
    rng = np.random.RandomState(0)
    x, y = rng.normal(size=37), rng.exponential(size=52)
    a, b = rng.uniform(size=37), rng.uniform(size=52)
    a, b = a / a.sum(), b / b.sum()
    for n_trees in (1, 7):
        d = TSW(x, y, a=a, b=b, n_trees=n_trees, n_lines=1, splitting=splitting)
        np.testing.assert_allclose(d, wasserstein_distance(x, y, a, b), rtol=1e-12)


def test_one_line_is_the_mean_1d_wasserstein_of_the_projections(clouds):
    X, Y = clouds
    d, (_roots, theta) = TSW(
        X, Y, n_trees=9, n_lines=1, random_state=0, return_trees=True
    )
    expected = np.mean([wasserstein_distance(X @ th[0], Y @ th[0]) for th in theta])
    np.testing.assert_allclose(d, expected, rtol=1e-12)


def test_equals_pot_wasserstein_1d():
    ot = pytest.importorskip("ot")  # optional extra [ot]
    rng = np.random.RandomState(2)
    x, y = rng.normal(size=40), rng.normal(size=30) + 1.0
    np.testing.assert_allclose(
        TSW(x, y, n_trees=3, n_lines=1), ot.wasserstein_1d(x, y, p=1), rtol=1e-10
    )


def test_uniform_split_is_sliced_wasserstein_with_the_same_directions(clouds):
    """TSW-SL on concurrent lines with a uniform split is SW1, whatever the roots.

    Hence the flows benchmark has no separate "TSW-SL" row: it would be SW.
    """
    X, Y = clouds
    d, (_roots, theta) = TSW(
        X,
        Y,
        n_trees=6,
        n_lines=4,
        splitting="uniform",
        random_state=0,
        return_trees=True,
    )
    lines = theta.reshape(-1, X.shape[1])
    sw = np.mean([wasserstein_distance(X @ u, Y @ u) for u in lines])
    np.testing.assert_allclose(d, sw, rtol=1e-12)
    far = TSW(X, Y, trees=(_roots + 100.0, theta), splitting="uniform")
    np.testing.assert_allclose(far, sw, rtol=1e-10)


def test_pooled_median_weighs_every_point_equally(clouds):
    """The root centre is the unweighted median of X u Y (authors' code), n != m."""
    X, Y = clouds
    _, (roots, _theta) = TSW(X, Y, n_trees=2, root_std=0.0, return_trees=True)
    expected = geometric_median(np.concatenate([X, Y]))
    np.testing.assert_allclose(roots[0], expected, rtol=1e-10, atol=1e-10)
    half = geometric_median(
        np.concatenate([X, Y]),
        weights=np.r_[np.full(60, 0.5 / 60), np.full(45, 0.5 / 45)],
    )
    assert np.linalg.norm(half - expected) > 1e-3  # the two choices differ here


# ----------------------------------------------------------------- invariances
def test_translation_invariance_with_the_median_root(clouds):
    X, Y = clouds
    shift = np.array([10.0, -3.0, 0.5, 100.0])
    for splitting in ("distance", "uniform"):
        base = TSW(X, Y, n_trees=30, splitting=splitting, random_state=0)
        moved = TSW(
            X + shift, Y + shift, n_trees=30, splitting=splitting, random_state=0
        )
        np.testing.assert_allclose(moved, base, rtol=1e-9)
    assert fw_tsw(X + shift, Y + shift, n_trees=30, random_state=0) == pytest.approx(
        fw_tsw(X, Y, n_trees=30, random_state=0), rel=1e-9
    )


def test_a_fixed_root_loses_translation_invariance(clouds):
    """Regression check: the invariance comes from the data-driven root."""
    X, Y = clouds
    kw = {"n_trees": 30, "root": np.zeros(4), "random_state": 0}
    base, moved = TSW(X, Y, **kw), TSW(X + 5.0, Y + 5.0, **kw)
    assert abs(moved - base) > 1e-2 * base


def test_rotation_invariance_when_the_directions_rotate_too(clouds):
    X, Y = clouds
    Q = special_ortho_group.rvs(4, random_state=0)
    theta = np.random.RandomState(1).normal(size=(20, 4, 4))
    kw = {"root_std": 0.0, "n_trees": 20, "n_lines": 4}
    base = TSW(X, Y, directions=theta, **kw)
    rotated = TSW(X @ Q.T, Y @ Q.T, directions=theta @ Q.T, **kw)
    np.testing.assert_allclose(rotated, base, rtol=1e-9)


def test_rotation_invariance_in_expectation(clouds):
    """Mean over 50 seeds within 3 Monte Carlo standard errors."""
    X, Y = clouds
    Q = special_ortho_group.rvs(4, random_state=1)
    kw = {"n_trees": 10, "n_lines": 3}
    base = np.array([TSW(X, Y, random_state=s, **kw) for s in range(50)])
    rot = np.array(
        [TSW(X @ Q.T, Y @ Q.T, random_state=100 + s, **kw) for s in range(50)]
    )
    se = np.sqrt(base.var(ddof=1) / 50 + rot.var(ddof=1) / 50)
    assert abs(base.mean() - rot.mean()) <= 3 * se


def test_grows_with_a_shift(clouds):
    X, _ = clouds
    direction = np.array([1.0, 0.5, -0.2, 0.0])
    d = [
        TSW(X, X + s * direction, n_trees=40, random_state=0)
        for s in (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)
    ]
    assert d[0] < 1e-12
    assert np.all(np.diff(d) > 0)


# ------------------------------------------------------------------------ torch
def test_torch_matches_numpy_and_passes_gradcheck(clouds):
    X, Y = clouds
    value = TSW(torch.tensor(X), torch.tensor(Y), n_trees=10, random_state=0)
    assert isinstance(value, torch.Tensor)
    np.testing.assert_allclose(
        value.item(), TSW(X, Y, n_trees=10, random_state=0), rtol=1e-10
    )
    rng = np.random.RandomState(0)
    Xt = torch.tensor(rng.normal(size=(6, 3)), requires_grad=True)
    Yt = torch.tensor(rng.normal(size=(5, 3)) + 0.5, requires_grad=True)
    _, trees = TSW(Xt, Yt, n_trees=3, n_lines=2, random_state=0, return_trees=True)
    for p in (1, 2):
        assert torch.autograd.gradcheck(
            lambda A, B, p=p: TSW(A, B, trees=trees, p=p), (Xt, Yt), atol=1e-6
        )


def test_torch_gradient_moves_the_cloud_towards_the_target(clouds):
    X, Y = clouds
    Xt = torch.tensor(X, requires_grad=True)
    d = TSW(Xt, torch.tensor(Y), n_trees=20, random_state=0)
    (grad,) = torch.autograd.grad(d, Xt)
    after = TSW(X - 0.5 * grad.numpy(), Y, n_trees=20, random_state=0)
    assert after < d.item()


# ----------------------------------------------------------------- Weiszfeld
def test_geometric_median_matches_a_numerical_minimiser():
    rng = np.random.RandomState(0)
    for d in (1, 2, 5):
        Z = rng.standard_t(df=2, size=(80, d))
        w = rng.uniform(size=80)
        m = geometric_median(Z, weights=w, tol=1e-12, max_iter=10_000)
        res = minimize(
            lambda z, Z=Z, w=w: w @ np.linalg.norm(Z - z, axis=1),
            np.median(Z, axis=0),
            method="Nelder-Mead",
            options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 20_000},
        )
        objective = w @ np.linalg.norm(Z - m, axis=1)
        assert objective <= res.fun + 1e-9
        np.testing.assert_allclose(m, res.x, atol=1e-4)


def test_geometric_median_on_a_data_point():
    """A point holding half the weight is the median; Weiszfeld must not divide by 0."""
    rng = np.random.RandomState(0)
    Z = rng.normal(size=(9, 3))
    w = np.ones(9)
    w[4] = 8.0
    np.testing.assert_allclose(geometric_median(Z, weights=w), Z[4], atol=1e-8)
    # iterate starting on a data point: the mean of a symmetric set is a point
    Z = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    np.testing.assert_array_equal(geometric_median(Z), [0.0, 0.0])


# --------------------------------------------------------------- pairwise
def test_pairwise_is_a_pseudometric_matching_single_calls():
    rng = np.random.RandomState(0)
    clouds = [rng.normal(size=(rng.randint(5, 20), 3)) + s for s in (0, 0.3, 1, 2)]
    D, trees = pairwise_tree_sliced_wasserstein(
        clouds, n_trees=10, random_state=0, return_trees=True
    )
    np.testing.assert_array_equal(D, D.T)
    np.testing.assert_array_equal(np.diag(D), 0.0)
    n = len(clouds)
    for i in range(n):
        for j in range(n):
            assert np.all(D[i, j] <= D[i] + D[:, j] + 1e-12)
    np.testing.assert_allclose(D[1, 3], TSW(clouds[1], clouds[3], trees=trees))
    D2 = pairwise_tree_sliced_wasserstein(clouds, n_trees=10, random_state=0, n_jobs=2)
    np.testing.assert_allclose(D2, D, rtol=1e-12)
    knn = KNeighborsClassifier(n_neighbors=1, metric="precomputed").fit(D, [0, 0, 1, 1])
    np.testing.assert_array_equal(knn.predict(D), [0, 0, 1, 1])


# ---------------------------------------------------------------- embedding
def _histograms(n=12, m=15, seed=0):
    rng = np.random.RandomState(seed)
    return rng.gamma(0.5, size=(n, m))


def test_embedding_l1_is_exactly_the_tree_sliced_distance():
    X = _histograms()
    support = np.random.RandomState(1).normal(size=(15, 2))
    emb = TreeSlicedEmbedding(support=support, n_trees=8, random_state=0).fit(X)
    E = emb.transform(X)
    P = X / X.sum(axis=1, keepdims=True)
    assert emb.grid_error_bound_ == 0.0
    for i, j in [(0, 1), (2, 7), (5, 11)]:
        d = TSW(support, support, a=P[i], b=P[j], trees=emb.trees_)
        np.testing.assert_allclose(np.abs(E[i] - E[j]).sum(), d, rtol=1e-10)


def test_embedding_grid_error_within_the_stated_bound():
    X = _histograms()
    support = np.random.RandomState(1).normal(size=(15, 2))
    P = X / X.sum(axis=1, keepdims=True)
    bounds, worst = [], []
    for n_bins in (2, 8, 32, 128):
        emb = TreeSlicedEmbedding(
            support=support, n_trees=8, n_bins=n_bins, random_state=0
        ).fit(X)
        E = emb.transform(X)
        gaps = []
        for i in range(6):
            for j in range(i + 1, 6):
                d = TSW(support, support, a=P[i], b=P[j], trees=emb.trees_)
                gap = d - np.abs(E[i] - E[j]).sum()
                assert -1e-10 <= gap <= emb.grid_error_bound_ + 1e-10
                gaps.append(gap)
        bounds.append(emb.grid_error_bound_)
        worst.append(max(gaps))
    assert np.all(np.diff(bounds) < 0)  # the bound shrinks with the resolution
    assert worst[-1] < worst[0]


def test_embedding_from_clouds_in_a_pipeline():
    rng = np.random.RandomState(0)
    clouds = [rng.normal(size=(10, 2)) + (i % 2) * 1.5 for i in range(20)]
    y = np.arange(20) % 2
    X, support = TreeSlicedEmbedding.from_clouds(clouds)
    np.testing.assert_allclose(X.sum(axis=1), 1.0)
    pipe = make_pipeline(
        TreeSlicedEmbedding(support=support, n_trees=10, random_state=0),
        KNeighborsClassifier(n_neighbors=1, metric="manhattan"),
    )
    pipe.fit(X[:10], y[:10])
    # the same split: the masses on their own do not separate the clouds
    # (their supports are disjoint), the embedding does (1.0 against 0.5)
    raw = KNeighborsClassifier(n_neighbors=1, metric="manhattan").fit(X[:10], y[:10])
    chance = DummyClassifier().fit(X[:10], y[:10]).score(X[10:], y[10:])
    assert pipe.score(X[10:], y[10:]) >= max(raw.score(X[10:], y[10:]), chance) + 0.4
    # the L1 distances are the pairwise tree-sliced distances of the clouds
    emb = pipe[0]
    E = emb.transform(X[:3])
    d01 = TSW(clouds[0], clouds[1], trees=emb.trees_)
    np.testing.assert_allclose(np.abs(E[0] - E[1]).sum(), d01, rtol=1e-10)


def test_embedding_batches_and_checks():
    X = _histograms(n=40)
    emb = TreeSlicedEmbedding(n_trees=6, n_bins=5, random_state=0).fit(X)
    full = emb.transform(X)
    with sklearn.config_context(working_memory=1e-4), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "could not adhere": 1 row
        np.testing.assert_allclose(emb.transform(X), full, rtol=1e-12, atol=1e-15)
    check_transformer_get_feature_names_out("TreeSlicedEmbedding", emb)
    check_set_output_transform("TreeSlicedEmbedding", emb)
    check_estimator(TreeSlicedEmbedding())  # default parameters
    with pytest.raises(ValueError, match="Negative values"):
        emb.transform(-X)
    with pytest.raises(ValueError, match="support has 3 points"):
        TreeSlicedEmbedding(support=np.zeros((3, 2))).fit(X)


# ------------------------------------------------------------ two-sample test
def test_two_sample_test_is_valid_under_the_null():
    """200 null replications: p-values ~ U(0,1) (KS) and the 5% level is held.

    The level check fails with probability < 0.003 for a valid test (binomial
    upper bound at 3 standard errors); the KS check with probability 0.001;
    the seeds are fixed, so the outcome is deterministic.
    """
    rng = np.random.RandomState(0)
    pvalues = []
    for _ in range(200):
        X, Y = rng.normal(size=(25, 3)), rng.normal(size=(30, 3))
        res = tree_sliced_two_sample_test(
            X, Y, n_permutations=99, n_trees=5, random_state=rng
        )
        pvalues.append(res.pvalue)
    pvalues = np.array(pvalues)
    assert scipy.stats.kstest(pvalues, "uniform").pvalue > 1e-3
    assert np.mean(pvalues <= 0.05) <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 200)


def test_two_sample_test_power_grows_with_the_shift():
    rng = np.random.RandomState(1)
    power = []
    for shift in (0.0, 0.3, 0.6, 1.2):
        rejections = 0
        for _ in range(30):
            X, Y = rng.normal(size=(30, 2)), rng.normal(size=(30, 2)) + shift
            res = tree_sliced_two_sample_test(
                X, Y, n_permutations=49, n_trees=5, random_state=rng
            )
            rejections += res.pvalue <= 0.05
        power.append(rejections / 30)
    assert power[-1] == 1.0
    assert np.all(np.diff(power) >= 0)


def test_two_sample_statistic_is_the_distance(clouds):
    X, Y = clouds
    res = tree_sliced_two_sample_test(
        X, Y, n_permutations=19, n_trees=7, random_state=0
    )
    assert res.null_distribution.shape == (19,)
    assert 1 / 20 <= res.pvalue <= 1
    again = tree_sliced_two_sample_test(
        X, Y, n_permutations=19, n_trees=7, random_state=0
    )
    assert again.statistic == res.statistic and again.pvalue == res.pvalue


@pytest.mark.parametrize(
    "p, splitting", [(1, "distance"), (2, "distance"), (1, "uniform")]
)
def test_two_sample_batched_statistics_equal_per_permutation_costs(
    p, splitting, monkeypatch
):
    """The batched statistics equal the per-permutation tree costs.

    The reference is the unbatched code path (``tree_costs`` on each row of
    permuted masses, as the test computed them before batching), with the same
    draws of trees and permutations: same statistics to 1e-12, same p-value.
    """
    from sklearn_iclr26.ot import _two_sample
    from sklearn_iclr26.ot._trees import draw_trees, tree_costs
    from sklearn_iclr26.ot._two_sample import _permuted_masses

    rng = np.random.RandomState(3)
    X, Y = rng.normal(size=(33, 5)), rng.normal(size=(27, 5)) + 0.3
    kw = {"n_trees": 13, "n_lines": 3, "p": p, "splitting": splitting}
    kw["delta"] = 1.5
    res = tree_sliced_two_sample_test(X, Y, n_permutations=199, random_state=7, **kw)
    ref_rng = np.random.RandomState(7)
    Z = np.concatenate([X, Y])
    trees = draw_trees(
        Z,
        np.full(60, 1 / 60),
        n_trees=13,
        n_lines=3,
        root="median",
        root_std=0.1,
        directions="gaussian",
        random_state=ref_rng,
    )
    W = _permuted_masses(ref_rng, 33, 27, 199)
    costs = tree_costs(Z, W, trees, splitting=splitting, delta=1.5, p=p)
    ref = costs.mean(axis=1) ** (1.0 / p)
    np.testing.assert_allclose(res.statistic, ref[0], rtol=1e-12)
    np.testing.assert_allclose(res.null_distribution, ref[1:], rtol=1e-12)
    gamma = 1e-12 * max(1.0, ref[0])
    assert res.pvalue == (1 + np.sum(ref[1:] >= ref[0] - gamma)) / 200
    monkeypatch.setattr(_two_sample, "_BLOCK_BYTES", 8 * 200 * 5)  # 5 lines
    with sklearn.config_context(working_memory=0.1):  # and few trees a chunk
        again = tree_sliced_two_sample_test(
            X, Y, n_permutations=199, random_state=7, **kw
        )
    np.testing.assert_allclose(again.null_distribution, ref[1:], rtol=1e-12)


def test_two_sample_test_with_pot_sliced_wasserstein(clouds):
    pytest.importorskip("ot")  # optional extra [ot]
    X, Y = clouds
    res = tree_sliced_two_sample_test(
        X, Y, n_permutations=19, statistic="sliced", n_trees=5, random_state=0
    )
    assert res.method.startswith("sliced") and res.pvalue == 1 / 20


# --------------------------------------------- FW-TSW*: perturbed path directions
@pytest.mark.parametrize("d, kappa", [(2, 30.0), (3, 30.0), (10, 5.0)])
def test_power_spherical_mean_is_the_stated_multiple_of_the_location(d, kappa):
    from sklearn_iclr26.ot._trees import power_spherical

    rng = np.random.RandomState(0)
    loc = rng.normal(size=d)
    loc /= np.linalg.norm(loc)
    n = 20_000
    draws = power_spherical(rng, np.tile(loc, (n, 1)), kappa)
    np.testing.assert_allclose(np.linalg.norm(draws, axis=1), 1.0, rtol=1e-12)
    # E[x] = kappa / (kappa + d - 1) * loc: the cosine's Beta law and a tangent
    # part symmetric around loc (a wrong reflection or tangent law moves it)
    se = draws.std(axis=0) / np.sqrt(n)
    err = np.abs(draws.mean(axis=0) - kappa / (kappa + d - 1) * loc)
    assert np.all(err < 4 * se + 1e-12)
    # more concentration, closer to the location
    tighter = power_spherical(rng, np.tile(loc, (n, 1)), 10 * kappa)
    assert (tighter @ loc).mean() > (draws @ loc).mean()


def test_power_spherical_matches_the_reference_package():
    ps = pytest.importorskip("power_spherical")  # the authors' sampler
    from sklearn_iclr26.ot._trees import power_spherical

    rng = np.random.RandomState(1)
    loc = rng.normal(size=(3, 5))
    loc /= np.linalg.norm(loc, axis=1, keepdims=True)
    n = 4000
    ours = power_spherical(rng, np.repeat(loc, n, axis=0), 30.0)
    torch.manual_seed(0)
    ref = ps.PowerSpherical(
        torch.tensor(np.repeat(loc, n, axis=0)),
        torch.full((3 * n,), 30.0, dtype=torch.float64),
    ).rsample()
    ref = ref.numpy()
    axes = np.vstack([loc, rng.normal(size=(3, 5))])
    for i in range(3):
        rows = slice(i * n, (i + 1) * n)
        for e in axes:  # the cosines and random marginals have the same law
            pv = scipy.stats.ks_2samp(ours[rows] @ e, ref[rows] @ e).pvalue
            assert pv > 1e-3


def test_random_path_kappa_perturbs_the_paths_and_stays_reproducible(clouds):
    X, Y = clouds
    kw = {"n_trees": 200, "directions": "random_path", "random_state": 0}
    _, paths = TSW(X, Y, return_trees=True, **kw)
    d30, perturbed = TSW(X, Y, kappa=30.0, return_trees=True, **kw)
    # the same paths are drawn first, then each is redrawn around itself
    cos = (paths.directions * perturbed.directions).sum(-1)
    assert 0.8 < cos.mean() < 1.0 and cos.min() < 0.99
    np.testing.assert_allclose(cos.mean(), 30 / 33, atol=0.02)
    np.testing.assert_array_equal(paths.roots, perturbed.roots)
    assert d30 == TSW(X, Y, kappa=30.0, **kw)  # bit-identical
    assert abs(TSW(X, Y, kappa=1e6, **kw) - TSW(X, Y, **kw)) < 1e-3
    with pytest.raises(ValueError, match="kappa perturbs the random-path"):
        TSW(X, Y, n_trees=3, kappa=30.0)
    with pytest.raises(ValueError, match="'kappa' parameter"):
        TSW(X, Y, n_trees=3, directions="random_path", kappa=0.0)


# -------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"Y": np.zeros((5, 3))}, "dimensions must match"),
        ({"a": -np.ones(10) / 10 + np.eye(10)[0] * 2.0}, "non-negative"),
        ({"a": np.ones(10)}, "sum to one"),
        ({"Y": np.zeros((0, 2))}, "empty"),
        ({"n_lines": 0}, "n_lines"),
        ({"p": 0.5}, "'p' parameter"),
        ({"a": np.ones(4) / 4}, "4 weights for 10 points"),
        ({"directions": np.ones((3, 2, 2))}, "directions must have shape"),
        ({"root": np.zeros(3)}, "root has 3 coordinates"),
    ],
)
def test_clear_errors(kwargs, match):
    rng = np.random.RandomState(0)
    args = {"X": rng.normal(size=(10, 2)), "Y": rng.normal(size=(8, 2))}
    args.update(kwargs)
    X, Y = args.pop("X"), args.pop("Y")
    with pytest.raises(ValueError, match=match):
        TSW(X, Y, n_trees=3, **args)


def test_embedding_verbose(capsys):
    X = _histograms()
    emb = TreeSlicedEmbedding(n_trees=5, n_lines=3, n_bins=4, random_state=0)
    emb.fit(X)
    assert capsys.readouterr().out == ""
    quiet = emb.transform(X)
    emb.set_params(verbose=1).fit(X)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2
    assert all(line.startswith("[TreeSlicedEmbedding] ") for line in lines)
    assert f"drew 5 trees of 3 lines on {X.shape[1]} support points" in lines[0]
    assert f"{5 * 3 * (4 + 1)} features" in lines[1]
    np.testing.assert_array_equal(emb.transform(X), quiet)  # printing only
