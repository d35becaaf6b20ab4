"""Tests of CVQRRegressor, the region baselines and the region metrics."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import pickle

import numpy as np
import pytest
import torch
from scipy import stats
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.linear_model import LinearRegression

from sklearn_iclr26.conformal import (
    BonferroniBoxRegressor,
    CVQRRegressor,
    EllipsoidRegressor,
    conformal_quantile,
)
from sklearn_iclr26.metrics import (
    log_volume_per_dimension,
    region_coverage_score,
    worst_slab_coverage_score,
)
from sklearn_iclr26.utils._sklearn_compat import InvalidParameterError

FAST = {
    "max_iter": 30,
    "early_stopping": False,
    "learning_rate_init": 3e-2,
    "hidden_layer_sizes": (16, 16),
    "warmup_epochs": 5,
    # the map on y itself: these tests check the transport map, not the
    # default point model (test_default_is_the_cross_fitted_forest_residual)
    "residual_estimator": None,
}


def banana(n, rng):
    """Heteroscedastic banana: the spread grows linearly with x in [0, 2]."""
    X = rng.uniform(0, 2, size=(n, 1))
    s = 0.2 + X[:, 0]
    e = rng.normal(size=(n, 2))
    Y = np.c_[X[:, 0] + s * e[:, 0], s * (0.6 * e[:, 0] ** 2 + 0.3 * e[:, 1])]
    return X, Y


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.RandomState(0)
    X, Y = banana(2400, rng)
    reg = CVQRRegressor(random_state=0, **FAST).fit(X, Y)
    return reg, X, Y


# --------------------------------------------------------------- the math
def _random_module(d=2, p=3, seed=0):
    from sklearn_iclr26.conformal._cvqr_modules import CVQRModule

    torch.manual_seed(seed)
    module = CVQRModule(p, d, hidden_layer_sizes=(8, 8), dtype=torch.float64)
    with torch.no_grad():  # a clearly non-quadratic potential
        for param in module.potential.parameters():
            param.add_(0.5 * torch.randn_like(param))
    return module


def test_potential_is_convex_in_u():
    module = _random_module()
    gen = torch.Generator().manual_seed(1)
    u = 3 * torch.randn(200, 2, generator=gen, dtype=torch.float64)
    x = torch.randn(200, 3, generator=gen, dtype=torch.float64)
    eig = torch.linalg.eigvalsh(module.hessian(x, u))
    assert eig.min() > 0
    # convexity along random segments (midpoint inequality)
    v = 3 * torch.randn(200, 2, generator=gen, dtype=torch.float64)
    with torch.no_grad():
        phi = module.potential
        mid = phi(0.5 * (u + v), x)
        assert torch.all(mid <= 0.5 * (phi(u, x) + phi(v, x)) + 1e-10)


def test_hessian_matches_finite_differences():
    from sklearn_iclr26.conformal._cvqr_modules import potential_grad

    module = _random_module(d=3)
    gen = torch.Generator().manual_seed(2)
    u = torch.randn(5, 3, generator=gen, dtype=torch.float64)
    x = torch.randn(5, 3, generator=gen, dtype=torch.float64)
    hess = module.hessian(x, u)
    h = 1e-6
    for j in range(3):
        e = torch.zeros(3, dtype=torch.float64)
        e[j] = h
        fd = (
            potential_grad(module.potential, u + e, x)
            - potential_grad(module.potential, u - e, x)
        ) / (2 * h)
        np.testing.assert_allclose(hess[:, :, j], fd, atol=1e-6)


@pytest.mark.parametrize("curvature", ["free", "floor", "global", "bounded"])
@pytest.mark.parametrize("n_layers", [0, 1, 3])
def test_closed_form_derivatives_equal_autograd(n_layers, curvature):
    # the Newton solver's closed-form phi, gradient and Hessian are those of
    # autograd on the same network, to round-off, at any depth and in d = 1
    from functools import partial

    from sklearn_iclr26.conformal._cvqr_modules import PICNN, _derivatives

    torch.manual_seed(n_layers)
    for d in (1, 4):
        net = PICNN(
            3,
            d,
            hidden_layer_sizes=(6,) * n_layers,
            dtype=torch.float64,
            curvature=curvature,
        )
        with torch.no_grad():
            for param in net.parameters():
                param.add_(0.5 * torch.randn_like(param))
        x = torch.randn(40, 3, dtype=torch.float64)
        u = 2 * torch.randn(40, d, dtype=torch.float64)
        terms = net.context_terms(x)
        expected = _derivatives(partial(net.forward_u, terms=terms), u)
        with torch.no_grad():
            got = net.derivatives_u(u, terms)
        for a, b in zip(got, expected):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_newton_survives_a_numerically_singular_hessian():
    # float32, curvature exp(s) underflowing to 0 and phi depending on
    # u_1 + u_2 only: the Hessian is exactly rank 1 (a plain solve raised
    # here, which stopped a training run on bio); the relative ridge and the
    # gradient-step fallback keep every row finite
    from sklearn_iclr26.conformal._cvqr_modules import PICNN, newton_conjugate

    torch.manual_seed(0)
    net = PICNN(3, 2, hidden_layer_sizes=(4,), dtype=torch.float32, curvature="free")
    with torch.no_grad():
        net.log_curvature.bias.fill_(-200.0)
        for w in net.u_weight:
            w.weight[:, 1] = w.weight[:, 0]
    x, y = torch.randn(20, 3), torch.randn(20, 2)
    with torch.no_grad():
        hess = net.derivatives_u(torch.zeros(20, 2), net.context_terms(x))[2]
    assert torch.all(torch.linalg.matrix_rank(hess) == 1)
    u, _ = newton_conjugate(net, x, y, torch.zeros(20, 2), max_iter=5)
    assert torch.isfinite(u).all()


def _picnn_gradient_bound(net, x):
    """An upper bound, per row, of ``||grad_u softplus(PICNN(u, x))||`` over u."""
    terms = net.context_terms(x)
    bound = None  # bound of ||d z_l / du|| (rows of the layer, summed)
    for layer in range(len(net.context) + 1):
        w_u = net.u_weight[layer].weight.abs()
        gate = terms["u_gates"][layer].abs()
        b = (gate[:, None, :] * w_u[None]).sum(-1)  # (n, out) >= ||row||
        if bound is not None:
            pos = net.z_weight[layer - 1]
            w_z = torch.nn.functional.softplus(pos.raw) / pos.n_in
            # softplus' <= 1: ||d z / du|| <= (w_z * gate) @ bound
            b = b + (bound * terms["z_gates"][layer - 1]) @ w_z.T
        bound = b
    return bound[:, 0]  # the outer softplus has slope <= 1


@pytest.mark.parametrize("curvature", ["floor", "bounded"])
def test_ranks_stay_bounded_where_the_curvature_would_vanish(curvature):
    # a log-curvature driven to -200 (exp underflows to 0 in float32, and the
    # ranks of responses outside the PICNN gradient's bounded range blow up:
    # the collapse measured on bio) is held at its floor, so the first-order
    # condition g(R) + c R + m = y bounds every rank:
    # ||R|| <= (||y - m|| + sup ||g||) / c_min
    from sklearn_iclr26.conformal import _cvqr_modules as mod

    torch.manual_seed(0)
    net = mod.PICNN(
        3, 2, hidden_layer_sizes=(4,), dtype=torch.float32, curvature=curvature
    )
    with torch.no_grad():
        net.log_curvature.bias.fill_(-200.0)
        net.log_curvature.weight.fill_(0.0)
    x = torch.randn(50, 3)
    y = 100.0 * torch.randn(50, 2)
    with torch.no_grad():
        terms = net.context_terms(x)
        g_max = _picnn_gradient_bound(net, x)
    c_min = (
        mod._CURVATURE_MIN
        if curvature == "floor"
        else mod._CURVATURE_INIT / math.exp(mod._CURVATURE_LOG_RANGE)
    )
    assert torch.all(terms["curvature"] >= c_min * (1 - 1e-5))
    u, _ = mod.newton_conjugate(net, x, y, torch.zeros(50, 2), max_iter=100)
    bound = ((y - terms["location"]).norm(dim=1) + g_max) / c_min
    assert torch.isfinite(u).all()
    assert torch.all(u.norm(dim=1) <= bound * (1 + 1e-4))
    # and the solver converged: grad phi(R) = y
    with torch.no_grad():
        grad = net.derivatives_u(u, terms)[1]
    np.testing.assert_allclose(grad, y, rtol=1e-3, atol=1e-2)
    # the unbounded log-curvature underflows: no such bound exists
    free = mod.PICNN(
        3, 2, hidden_layer_sizes=(4,), dtype=torch.float32, curvature="free"
    )
    free.load_state_dict(net.state_dict())
    with torch.no_grad():
        assert torch.all(free.context_terms(x)["curvature"] == 0)


@pytest.mark.parametrize("curvature", ["free", "floor", "global", "bounded"])
def test_curvature_parameter_reaches_the_potential(curvature):
    rng = np.random.RandomState(0)
    X, Y = banana(300, rng)
    # the map on y itself: the default forest residual is not what is tested
    reg = CVQRRegressor(
        curvature=curvature,
        max_iter=2,
        warmup_epochs=1,
        hidden_layer_sizes=(4, 4),
        residual_estimator=None,
        random_state=0,
    ).fit(X, Y)
    assert reg.net_.module_.potential.curvature_mode == curvature
    assert reg.contains(X[:5], Y[:5]).shape == (5,)
    with pytest.raises(ValueError, match="curvature"):
        CVQRRegressor(curvature="none").fit(X, Y)


def test_bounded_curvature_stays_within_its_range():
    from sklearn_iclr26.conformal import _cvqr_modules as mod

    torch.manual_seed(0)
    net = mod.PICNN(
        3, 2, hidden_layer_sizes=(4, 4), dtype=torch.float64, curvature="bounded"
    )
    with torch.no_grad():
        net.log_curvature.weight.normal_(0.0, 50.0)
    x = 1e3 * torch.randn(200, 3, dtype=torch.float64)
    with torch.no_grad():
        c = net.context_terms(x)["curvature"]
    log_c0, b = math.log(mod._CURVATURE_INIT), mod._CURVATURE_LOG_RANGE
    assert torch.all(c.log() >= log_c0 - b - 1e-9)
    assert torch.all(c.log() <= log_c0 + b + 1e-9)
    assert c.min() < 0.1 * mod._CURVATURE_INIT < 10 * mod._CURVATURE_INIT < c.max()
    # at initialization every mode starts from the same curvature
    for mode in mod.CURVATURE_MODES:
        torch.manual_seed(0)
        net = mod.PICNN(
            3, 2, hidden_layer_sizes=(4, 4), dtype=torch.float64, curvature=mode
        )
        with torch.no_grad():
            c = net.context_terms(torch.randn(5, 3, dtype=torch.float64))["curvature"]
        np.testing.assert_allclose(c, mod._CURVATURE_INIT, rtol=1e-12)


def test_newton_conjugate_solves_the_argmax():
    from sklearn_iclr26.conformal._cvqr_modules import (
        lbfgs_conjugate,
        potential_grad,
    )

    module = _random_module()
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(50, 3, generator=gen, dtype=torch.float64)
    y = 2 * torch.randn(50, 2, generator=gen, dtype=torch.float64)
    u = module.rank(x, y)
    # first-order condition grad phi(u*, x) = y, and agreement with L-BFGS
    grad = potential_grad(module.potential, u, x)
    np.testing.assert_allclose(grad, y, atol=1e-7)
    u_lbfgs = lbfgs_conjugate(module.potential, x, y, torch.zeros_like(y))
    np.testing.assert_allclose(u, u_lbfgs, atol=1e-5)
    # each row is solved on its own: batch composition does not matter (up to
    # the last bit of batched BLAS kernels)
    np.testing.assert_allclose(module.rank(x[:7], y[:7]), u[:7], rtol=1e-12)


def test_round_trip_and_cyclical_monotonicity(fitted):
    reg, X, _ = fitted
    rng = np.random.RandomState(1)
    U = rng.normal(size=(300, 2))
    Xq = X[:300]
    Yq = reg.quantile(Xq, U)
    np.testing.assert_allclose(reg.rank(Xq, Yq), U, atol=1e-6)
    # Q(., x) is the gradient of a convex function: monotone
    x0 = np.repeat(X[:1], 300, axis=0)
    U2 = rng.normal(size=(300, 2))
    Q1, Q2 = reg.quantile(x0, U), reg.quantile(x0, U2)
    assert np.all(np.sum((Q1 - Q2) * (U - U2), axis=1) >= -1e-9)


def test_exact_order_statistic_threshold():
    rng = np.random.RandomState(0)
    for n in (9, 10, 57, 200):
        scores = np.sort(rng.uniform(size=n))
        for alpha in (0.1, 0.2, 0.3):
            k = math.ceil((n + 1) * (1 - alpha))
            expected = scores[k - 1] if k <= n else np.inf
            assert conformal_quantile(scores, 1 - alpha) == expected


def test_ranks_roughly_gaussian_on_held_out(fitted):
    reg, _, Y = fitted
    rng = np.random.RandomState(5)
    Xt, Yt = banana(2000, rng)
    ranks = reg.rank(Xt, Yt)
    # loose (the map is trained briefly): ranks look like N(0, I) ...
    np.testing.assert_allclose(ranks.mean(axis=0), 0, atol=0.1)
    np.testing.assert_allclose(np.cov(ranks.T), np.eye(2), atol=0.25)
    # ... and ||R||^2 like chi2(2): far closer than globally standardized Y
    ks = stats.kstest(np.sum(ranks**2, axis=1), stats.chi2(2).cdf).statistic
    Z = (Yt - Y.mean(axis=0)) / Y.std(axis=0)
    ks_global = stats.kstest(np.sum(Z**2, axis=1), stats.chi2(2).cdf).statistic
    assert ks < 0.12
    assert ks < 0.5 * ks_global


# ------------------------------------------------------------- validity
@pytest.mark.parametrize("alpha", [0.1, 0.2, 0.3])
def test_coverage_validity_over_random_splits(fitted, alpha):
    """MAPIE-style: fixed map, 200 random calibration/test splits of new data.

    Conditional on the pool, a uniformly random split gives mean coverage in
    [1 - alpha, 1 - alpha + 1/(n + 1)]; one-sided t-tests at a family-wise 1%
    (Bonferroni over 3 alphas x 2 sides).
    """
    reg, _, _ = fitted
    rng = np.random.RandomState(10)
    Xp, Yp = banana(1500, rng)
    est = clone(reg)
    est.__dict__.update(reg.__dict__)
    scores = reg.conformity_scores(Xp, Yp)
    n_cal, coverages = 500, []
    for _ in range(200):
        perm = rng.permutation(len(scores))
        cal, test = np.sort(scores[perm[:n_cal]]), scores[perm[n_cal:]]
        coverages.append(np.mean(test <= conformal_quantile(cal, 1 - alpha)))
    level = 0.01 / 6
    low = stats.ttest_1samp(coverages, 1 - alpha, alternative="less").pvalue
    high = stats.ttest_1samp(
        coverages, 1 - alpha + 1 / (n_cal + 1), alternative="greater"
    ).pvalue
    assert low > level and high > level
    # the public path gives the same membership as the scores
    est.calibrate(Xp[:n_cal], Yp[:n_cal])
    inside = est.contains(Xp[n_cal:], Yp[n_cal:], confidence_level=1 - alpha)
    q = conformal_quantile(np.sort(scores[:n_cal]), 1 - alpha)
    np.testing.assert_array_equal(inside, scores[n_cal:] <= q)


def test_d1_gives_a_valid_interval():
    rng = np.random.RandomState(0)
    n = 2400
    X = rng.uniform(-1, 1, size=(n, 2))
    y = X[:, 0] + (0.3 + 0.5 * np.abs(X[:, 1])) * rng.normal(size=n)
    reg = CVQRRegressor(random_state=0, **{**FAST, "batch_size": 100})
    reg.fit(X[:1200], y[:1200])
    assert reg.predict(X[:3]).shape == (3,)
    Xt, yt = X[1200:], y[1200:]
    interval = reg.predict_region(Xt)
    assert interval.shape == (1200, 2, 1)
    lower, upper = interval[:, 0, 0], interval[:, 1, 0]
    assert np.all(lower < upper)
    inside = reg.contains(Xt, yt)
    np.testing.assert_array_equal(inside, (lower <= yt + 1e-7) & (yt - 1e-7 <= upper))
    # the log-volume of an interval is its log-length
    np.testing.assert_allclose(
        reg.region_log_volume(Xt[:20], n_samples=512),
        np.log(upper[:20] - lower[:20]),
        atol=0.03,
    )
    # compared with a standard split-conformal interval (absolute residuals)
    lin = LinearRegression().fit(X[:900], y[:900])
    res = np.sort(np.abs(y[900:1200] - lin.predict(X[900:1200])))
    q = conformal_quantile(res, 0.9)
    split_cov = np.mean(np.abs(yt - lin.predict(Xt)) <= q)
    assert abs(inside.mean() - 0.9) < 0.04
    assert abs(split_cov - 0.9) < 0.04
    # adaptivity: CVQR intervals widen with |x_1|, the split interval cannot
    width = upper - lower
    outer = np.abs(Xt[:, 1]) > 0.7
    inner = np.abs(Xt[:, 1]) < 0.3
    assert width[outer].mean() > 1.15 * width[inner].mean()


# ---------------------------------------------------------- adaptivity
def test_heteroscedastic_regions_adapt(fitted):
    reg, X, Y = fitted
    rng = np.random.RandomState(7)
    Xt, Yt = banana(4000, rng)
    bins = np.digitize(Xt[:, 0], [0.5, 1.0, 1.5])
    ell = EllipsoidRegressor(random_state=0).fit(X, Y)
    cvqr_in, ell_in = reg.contains(Xt, Yt), ell.contains(Xt, Yt)
    cvqr_dev = max(abs(cvqr_in[bins == b].mean() - 0.9) for b in range(4))
    ell_dev = max(abs(ell_in[bins == b].mean() - 0.9) for b in range(4))
    assert cvqr_dev < 0.07
    assert ell_dev > cvqr_dev + 0.02
    # worst-slab coverage is better than the global ellipse's
    wsc_cvqr = worst_slab_coverage_score(Xt, cvqr_in, n_directions=50, random_state=0)
    wsc_ell = worst_slab_coverage_score(Xt, ell_in, n_directions=50, random_state=0)
    assert wsc_cvqr > wsc_ell
    # the volume follows the noise level 0.2 + x (area ~ (0.2 + x)^2)
    grid = np.array([[0.2], [0.7], [1.2], [1.8]])
    log_vol = reg.region_log_volume(grid)
    assert np.all(np.diff(log_vol) > 0)
    slope = np.polyfit(np.log(0.2 + grid[:, 0]), log_vol, 1)[0]
    assert 1.2 < slope < 2.8  # 2 for a perfect location-scale fit
    assert np.ptp(ell.region_log_volume(grid)) == 0


def test_region_volume_matches_monte_carlo(fitted):
    reg, _, _ = fitted
    x = np.array([[1.0]])
    log_vol = reg.region_log_volume(x, n_samples=512)[0]
    boundary = reg.predict_region(x, n_points=200)[0]
    lo, hi = boundary.min(axis=0) - 0.2, boundary.max(axis=0) + 0.2
    rng = np.random.RandomState(0)
    Y = rng.uniform(lo, hi, size=(20000, 2))
    frac = reg.contains(np.repeat(x, len(Y), axis=0), Y).mean()
    mc = math.log(frac * np.prod(hi - lo))
    assert abs(log_vol - mc) < 0.05
    # the boundary is the image of the sphere of radius q: its ranks have norm q
    ranks = reg.rank(np.repeat(x, 200, axis=0), boundary)
    np.testing.assert_allclose(np.linalg.norm(ranks, axis=1), reg.threshold_, 1e-6)


def test_sample_and_predict(fitted):
    reg, X, _ = fitted
    draws = reg.sample(X[:4], n_samples=500, random_state=0)
    assert draws.shape == (4, 500, 2)
    np.testing.assert_array_equal(
        draws, reg.sample(X[:4], n_samples=500, random_state=0)
    )
    # the vector median is the image of u = 0
    np.testing.assert_allclose(
        reg.predict(X[:4]), reg.quantile(X[:4], np.zeros((4, 2)))
    )
    assert reg.predict_region(X[:3], n_points=50).shape == (3, 50, 2)
    # smaller alpha, larger regions
    assert np.all(
        reg.region_log_volume(X[:3], confidence_level=0.95)
        > reg.region_log_volume(X[:3])
    )


# ------------------------------------------------------- other variants
@pytest.mark.parametrize(
    "params",
    [
        {"solver": "lbfgs", "inner_max_iter": 30},
        {"solver": "entropic", "n_mc": 128, "epsilon": 1e-2},
        {"reference": "uniform_ball"},
        {"conformity_score": "hpd"},
        {"residual_estimator": LinearRegression()},
    ],
)
def test_variants_fit_and_cover(params):
    rng = np.random.RandomState(0)
    X, Y = banana(800, rng)
    Xt, Yt = banana(1000, rng)
    p = {
        **FAST,
        "max_iter": 12,
        "hidden_layer_sizes": (8, 8),
        "batch_size": 200,
        **params,
    }
    reg = CVQRRegressor(random_state=0, **p).fit(X, Y)
    cov = reg.contains(Xt, Yt).mean()
    # 200 calibration and 1000 test points: the test coverage has standard
    # deviation about sqrt(0.09 / 200 + 0.09 / 1000) = 0.023 around 0.9
    # (at least); +-3.5 sd fails with probability < 5e-4 per case
    assert 0.82 < cov < 0.98
    log_vol = reg.region_log_volume(Xt[:5], n_samples=256)
    assert np.all(np.isfinite(log_vol))
    if params.get("conformity_score") == "hpd":
        assert reg.calibration_rank_outlier_fraction_ is None
        with pytest.raises(ValueError, match="HPD"):
            reg.predict_region(Xt[:2])


# ------------------------------------------------------------ bad input
def test_bad_input():
    rng = np.random.RandomState(0)
    X, Y = banana(100, rng)
    # error paths and the calibration policy, not the point model: the map on
    # y itself (no cross-fitted forest to fit five times per call)
    cheap = {"residual_estimator": None}
    reg = CVQRRegressor(max_iter=2, warmup_epochs=1, hidden_layer_sizes=(4, 4), **cheap)
    Y_nan = Y.copy()
    Y_nan[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        reg.fit(X, Y_nan)
    Y_inf = Y.copy()
    Y_inf[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        reg.fit(X, Y_inf)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        reg.fit(X, Y[:-1])
    for level in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(InvalidParameterError):
            CVQRRegressor(confidence_level=level).fit(X, Y)
    # too small a calibration set: a warning, never an error (the policy)
    with pytest.warns(UserWarning, match="too few for confidence_level=0.99"):
        small = CVQRRegressor(confidence_level=0.99, max_iter=2, **cheap).fit(X, Y)
    assert small.threshold_ == np.inf
    with pytest.warns(UserWarning, match="too few for confidence_level=0.9"):
        CVQRRegressor(calibration_size=5, max_iter=2, **cheap).fit(X, Y)
    reg.fit(X, Y)
    with pytest.raises(ValueError, match="open interval"):
        reg.contains(X, Y, confidence_level=1.2)
    with pytest.raises(ValueError, match="2 columns"):
        reg.contains(X, Y[:, :1])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        reg.contains(X[:5], Y[:4])
    with pytest.raises(ValueError, match="NaN"):
        reg.contains(X[:3], Y_nan[:3] * np.nan)
    with pytest.raises(ValueError, match="features"):
        reg.predict(np.c_[X, X])
    # too small a calibration set for a method-level alpha: whole space
    with pytest.warns(UserWarning, match="too few for confidence_level=0.999"):
        assert reg.contains(X[:3], Y[:3] + 1e6, confidence_level=0.999).all()
    with pytest.raises(ValueError, match="d <= 2"):
        CVQRRegressor(max_iter=2, hidden_layer_sizes=(4, 4), **cheap).fit(
            X, np.c_[Y, Y[:, 0]]
        ).predict_region(X[:2])


# -------------------------------------------- ecosystem and determinism
# determinism and the global RNGs (fit, rank, sample): tests/test_common_contracts.py
# (test_fit_and_methods_leave_the_global_rngs_alone, test_clone_is_unfitted_...)


def test_verbose_prints_progress(capsys):
    rng = np.random.RandomState(0)
    X, Y = banana(100, rng)
    CVQRRegressor(
        max_iter=2, warmup_epochs=1, hidden_layer_sizes=(4, 4), verbose=1
    ).fit(X, Y)
    out = capsys.readouterr().out
    assert "[CVQRRegressor] epoch 1/2: train_loss" in out
    assert "[CVQRRegressor] threshold_" in out
    assert "[CVQRModule]" not in out


# ------------------------------------------------------------- baselines
def test_baselines_cover_and_volumes():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(3000, 3))
    A = np.array([[1.0, 0.8], [0.0, 0.6]])
    Y = X[:, :2] + (rng.normal(size=(3000, 2)) * (0.5 + np.abs(X[:, 2:3]))) @ A
    Xt, Yt = X[1500:], Y[1500:]
    for est in (
        BonferroniBoxRegressor(random_state=0),
        EllipsoidRegressor(random_state=0),
        EllipsoidRegressor(covariance="local", random_state=0),
    ):
        est.fit(X[:1500], Y[:1500])
        cov = est.contains(Xt, Yt).mean()
        assert cov > 0.87, type(est).__name__
        # analytic volume against Monte Carlo in a bounding box
        x = Xt[:1]
        boundary = est.predict_region(x)[0]
        lo, hi = boundary.min(0) - 0.1, boundary.max(0) + 0.1
        Ys = np.random.RandomState(1).uniform(lo, hi, size=(20000, 2))
        frac = est.contains(np.repeat(x, len(Ys), 0), Ys).mean()
        mc = math.log(frac * np.prod(hi - lo))
        assert abs(est.region_log_volume(x)[0] - mc) < 0.05
    box = BonferroniBoxRegressor(random_state=0).fit(X[:1500], Y[:1500])
    assert box.predict_region(Xt[:2]).shape == (2, 4, 2)
    # the local ellipse adapts to |x_3|, the global one does not
    loc = EllipsoidRegressor(covariance="local", random_state=0).fit(X, Y)
    vol = loc.region_log_volume(np.array([[0, 0, 0.0], [0, 0, 2.0]]))
    assert vol[1] > vol[0] + 1


# --------------------------------------------------------------- metrics
def test_region_metrics():
    assert region_coverage_score(np.array([1, 0, 1, 1], dtype=bool)) == 0.75
    assert log_volume_per_dimension([1.0, 3.0, 100.0], 2) == 1.5
    np.testing.assert_allclose(
        log_volume_per_dimension([2.0, 4.0], 2, aggregate="none"), [1.0, 2.0]
    )
    rng = np.random.RandomState(0)
    X = rng.normal(size=(2000, 3))
    # uniform miscoverage: the worst slab is close to the marginal coverage
    covered = rng.uniform(size=2000) < 0.9
    wsc = worst_slab_coverage_score(X, covered, n_directions=100, random_state=0)
    assert 0.8 < wsc <= 1.0
    # coverage collapses on x_0 > 1 (16% of the points): found and measured
    covered = rng.uniform(size=2000) < np.where(X[:, 0] > 1, 0.3, 0.95)
    wsc = worst_slab_coverage_score(X, covered, n_directions=200, random_state=0)
    assert wsc < 0.6
    with pytest.raises(ValueError, match="1-dimensional"):
        region_coverage_score(np.ones((2, 2)))
    with pytest.raises(ValueError, match="inconsistent"):
        worst_slab_coverage_score(X, covered[:10])


# ------------------------------------------------- cross-fitted residuals
class _Recorder(RegressorMixin, BaseEstimator):
    """Predicts 1 for the rows it was fitted on (column 0 is a row id), else 0."""

    def __init__(self, multi=True):
        self.multi = multi

    def fit(self, X, y):
        self.ids_ = set(np.asarray(X)[:, 0].astype(int).tolist())
        self.n_fit_ = len(self.ids_)
        self.n_out_ = 1 if np.ndim(y) == 1 else np.shape(y)[1]
        return self

    def predict(self, X):
        seen = np.array([int(i) in self.ids_ for i in np.asarray(X)[:, 0]], float)
        return seen if self.n_out_ == 1 else np.repeat(seen[:, None], self.n_out_, 1)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = self.multi
        return tags


def _id_data(n, seed=0):
    rng = np.random.RandomState(seed)
    X = np.c_[np.arange(n), rng.normal(size=(n, 2))]
    Y = X[:, 1:] + rng.normal(size=(n, 2))
    return X, Y


@pytest.mark.parametrize("multi", [True, False])
def test_cross_fitted_residuals_never_use_a_rows_own_fit(multi):
    from sklearn.multioutput import MultiOutputRegressor

    from sklearn_iclr26.conformal._base_regressor import cross_fit_point_model

    X, Y = _id_data(103)
    est = _Recorder(multi=multi)
    est = est if multi else MultiOutputRegressor(est)
    final, R = cross_fit_point_model(
        clone(est), X, Y, cv=5, random_state=np.random.RandomState(0)
    )
    # out of fold: no row was in the fit that predicted it, so R == Y exactly
    np.testing.assert_array_equal(R, Y)
    # the final model is fitted on all rows
    inner = final if multi else final.estimators_[0]
    assert inner.n_fit_ == 103
    _, R_in = cross_fit_point_model(
        clone(est), X, Y, cv=None, random_state=np.random.RandomState(0)
    )
    np.testing.assert_array_equal(R_in, Y - 1)


def test_residual_variants_calibrate_with_the_final_point_model():
    X, Y = _id_data(400)
    ell = EllipsoidRegressor(_Recorder(), random_state=0).fit(X, Y)
    n_train = 400 - ell.n_calibration_samples_
    assert ell.estimator_.n_fit_ == n_train
    train = np.array(sorted(ell.estimator_.ids_))
    cal = np.setdiff1d(np.arange(400), train)
    # the shape comes from out-of-fold residuals (here: Y itself)
    np.testing.assert_allclose(ell.covariance_, np.cov(Y[train].T), rtol=1e-6)
    # calibration scores are those of the final model (which predicts 0 on
    # the calibration rows it never saw)
    np.testing.assert_allclose(
        np.sort(ell.conformity_scores(X[cal], Y[cal])), ell.calibration_scores_
    )
    cvqr = CVQRRegressor(
        residual_estimator=_Recorder(multi=False),
        max_iter=2,
        warmup_epochs=1,
        hidden_layer_sizes=(4, 4),
        random_state=0,
    ).fit(X, Y)
    inner = cvqr.residual_estimator_.estimators_  # wrapped: single-output
    assert all(e.n_fit_ == n_train for e in inner)
    train = np.array(sorted(inner[0].ids_))
    cal = np.setdiff1d(np.arange(400), train)
    # the map standardizes out-of-fold residuals (= Y), not in-sample (= Y - 1)
    np.testing.assert_allclose(cvqr._y_mean, Y[train].mean(axis=0))
    scores = np.sort(cvqr.calibration_scores_)
    np.testing.assert_allclose(
        np.sort(cvqr.conformity_scores(X[cal], Y[cal])), scores, rtol=1e-10
    )


def test_early_stopping_restores_the_best_epoch(capsys):
    rng = np.random.RandomState(0)
    X, Y = banana(900, rng)
    reg = CVQRRegressor(
        max_iter=25,
        warmup_epochs=2,
        n_iter_no_change=3,
        tol=0.0,
        hidden_layer_sizes=(8, 8),
        random_state=0,
        verbose=2,
    ).fit(X, Y)
    assert "early stopping on the semi-dual objective of 68" in capsys.readouterr().out
    # one entry per epoch, NaN in the 2 warm-up epochs (not evaluated)
    curve = np.asarray(reg.validation_loss_curve_)
    assert len(curve) == reg.n_iter_ == len(reg.loss_curve_)
    assert np.isnan(curve[:2]).all() and np.isfinite(curve[2:]).all()
    best_value = curve[reg.best_iter_ - 1]
    assert best_value == np.nanmin(curve)
    assert reg.best_iter_ == 1 + int(np.nanargmin(curve))
    # the restored parameters are those of the best epoch: re-evaluating the
    # held-out objective on the same rows gives its value
    import torch

    from sklearn_iclr26.conformal._cvqr_modules import semi_dual_objective

    stopper = dict(reg.net_.callbacks_)["early_stopping"]
    args = [torch.as_tensor(a) for a in (stopper.X_valid, stopper.Y_valid)]
    value = semi_dual_objective(
        reg.net_.module_, *args, torch.as_tensor(stopper.U_valid)
    )
    assert value == pytest.approx(best_value, rel=1e-10)
    # the rank diagnostic of the same rows is recorded at every epoch: at the
    # restored epoch it is mean ||R||^2 over the mean squared reference draw
    assert len(reg.validation_rank_ratios_) == len(curve)
    ranks = reg.net_.module_.rank(*args).detach().numpy()
    ratio = (ranks**2).sum(1).mean() / (stopper.U_valid**2).sum(1).mean()
    best = reg.validation_rank_ratios_[reg.best_iter_ - 1]
    assert best == pytest.approx(ratio, rel=1e-10)
    # fewer than 50 validation rows: no early stopping, all epochs
    small = CVQRRegressor(
        max_iter=4, warmup_epochs=1, hidden_layer_sizes=(4, 4), random_state=0
    )
    small.fit(X[:300], Y[:300])
    assert small.validation_loss_curve_ is None and small.n_iter_ == 4
    assert small.best_iter_ == 4
    assert small.validation_rank_ratios_ is None


# ------------------------------------------------ calibration rank-outlier guard
def test_rank_outlier_guard_silent_on_a_healthy_map(fitted):
    import warnings

    reg, _, _ = fitted
    assert reg.calibration_rank_outlier_fraction_ == 0.0
    reg = pickle.loads(pickle.dumps(reg))
    X_cal, Y_cal = banana(1000, np.random.RandomState(7))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reg.calibrate(X_cal, Y_cal)
    assert reg.calibration_rank_outlier_fraction_ == 0.0


def test_rank_outlier_guard_warns_on_a_collapsed_region(fitted, monkeypatch):
    # a map that sends the x-region x > 1.6 (about 20% of rows) to absurd
    # ranks, as the broken bio fits do: coverage stays valid, the guard warns
    reg, _, _ = fitted
    reg = pickle.loads(pickle.dumps(reg))
    healthy = reg._ranks_batch

    def collapsed(Xb, yb):
        ranks = healthy(Xb, yb)
        return np.where(np.asarray(Xb)[:, :1] > 1.6, 1e8 * ranks, ranks)

    monkeypatch.setattr(reg, "_ranks_batch", collapsed)
    X_cal, Y_cal = banana(1000, np.random.RandomState(7))
    with pytest.warns(UserWarning, match="Marginal coverage still holds"):
        reg.calibrate(X_cal, Y_cal)
    assert 0.15 < reg.calibration_rank_outlier_fraction_ < 0.25
    X_te, Y_te = banana(2000, np.random.RandomState(8))
    assert region_coverage_score(reg.contains(X_te, Y_te)) > 0.87


def test_rank_outlier_guard_tolerates_a_few_outliers(fitted, monkeypatch):
    # up to the Binomial(n, 1e-3) 0.999 quantile (2 of 100) stays silent,
    # one more warns
    import warnings

    from sklearn_iclr26.conformal._cvqr import reference_norm_quantile

    reg, _, _ = fitted
    reg = pickle.loads(pickle.dumps(reg))
    big = 20 * reference_norm_quantile(0.999, 2, "gaussian")
    for n_out, warns in [(2, False), (3, True)]:
        scores = np.zeros(100)
        scores[:n_out] = big
        monkeypatch.setattr(
            reg, "_conformity_scores_batch", lambda Xb, yb, s=scores: s[: len(Xb)]
        )
        X_cal, Y_cal = np.zeros((100, 1)), np.zeros((100, 2))
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            reg.calibrate(X_cal, Y_cal)
        assert any("Marginal coverage" in str(w.message) for w in record) == warns
        assert reg.calibration_rank_outlier_fraction_ == n_out / 100


def test_reference_norm_quantile():
    from sklearn_iclr26.conformal._cvqr import reference_norm_quantile

    rng = np.random.RandomState(0)
    norms = np.linalg.norm(rng.normal(size=(200000, 3)), axis=1)
    assert (
        abs(np.mean(norms <= reference_norm_quantile(0.9, 3, "gaussian")) - 0.9) < 5e-3
    )
    u = reference_norm_quantile(0.5, 2, "uniform_ball")
    assert u == pytest.approx(0.5**0.5)


def test_default_is_the_cross_fitted_forest_residual():
    """``residual_estimator="auto"``: the reproduction's forest, cross-fitted,
    seeded from ``random_state``; ``None`` is the plain variant."""
    from sklearn.ensemble import RandomForestRegressor

    rng = np.random.default_rng(0)
    X, Y = banana(400, rng)
    p = {**FAST, "max_iter": 3, "hidden_layer_sizes": (4,)}
    del p["residual_estimator"]
    reg = CVQRRegressor(random_state=0, **p).fit(X, Y)
    assert reg.residual_estimator == "auto"
    forest = reg.residual_estimator_
    assert isinstance(forest, RandomForestRegressor)
    assert (forest.n_estimators, forest.min_samples_leaf, forest.max_features) == (
        100,
        5,
        0.5,
    )
    again = CVQRRegressor(random_state=0, **p).fit(X, Y)
    np.testing.assert_array_equal(reg.rank(X, Y), again.rank(X, Y))
    plain = CVQRRegressor(random_state=0, **{**p, "residual_estimator": None})
    assert plain.fit(X, Y).residual_estimator_ is None
