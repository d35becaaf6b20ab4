"""Tests of OTCPRegressor (OT-CP, OT-CP+) and its exact discrete transport."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from sklearn.ensemble import RandomForestRegressor

from sklearn_iclr26.conformal import OTCPRegressor, conformal_quantile
from sklearn_iclr26.conformal._otcp import (
    _ranks,
    reference_grid,
    transport_potentials,
)


def _data(n, seed, p=3):
    """Heteroscedastic, skewed 2-D residuals whose spread grows with |x_0|."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, p))
    e = rng.normal(size=(n, 2))
    s = 0.3 + np.abs(X[:, :1])
    Y = X[:, :2] + s * np.c_[e[:, 0], 0.5 * e[:, 0] ** 2 + 0.4 * e[:, 1]]
    return X, Y


# ------------------------------------------------------------ transport
def test_assignment_is_optimal_brute_force():
    rng = np.random.RandomState(0)
    P, G = rng.normal(size=(6, 2)), reference_grid(6, 2, rng)
    assignment, _ = transport_potentials(P, G)
    cost = ((P - G[assignment]) ** 2).sum()
    best = min(
        ((P - G[list(perm)]) ** 2).sum() for perm in itertools.permutations(range(6))
    )
    assert cost == pytest.approx(best, rel=1e-12)


def test_assignment_matches_pot():
    ot = pytest.importorskip("ot")
    rng = np.random.RandomState(1)
    P, G = rng.normal(size=(200, 3)), reference_grid(200, 3, rng)
    assignment, _ = transport_potentials(P, G)
    w = np.full(200, 1 / 200)
    plan = ot.emd(w, w, ot.dist(P, G))
    assert ((P - G[assignment]) ** 2).sum() == pytest.approx(
        200 * (plan * ot.dist(P, G)).sum(), rel=1e-9
    )


@pytest.mark.parametrize("d", [1, 2, 5])
def test_potential_sends_each_point_to_its_grid_point(d):
    rng = np.random.RandomState(d)
    P, G = rng.standard_t(3, size=(150, d)), reference_grid(150, d, rng)
    assignment, psi = transport_potentials(P, G)
    values = P @ G.T - psi
    own = values[np.arange(150), assignment]
    # each point lies in (the closure of) its own Laguerre cell
    assert np.all(own >= values.max(axis=1) - 1e-10)
    # and the out-of-sample map is monotone: <R(s) - R(t), s - t> >= 0
    S = rng.normal(size=(400, d))
    R = _ranks(S, G, psi)
    assert np.all(np.sum((R[:200] - R[200:]) * (S[:200] - S[200:]), axis=1) >= -1e-12)


def test_reference_grid_is_spherical_uniform():
    G = reference_grid(2001, 3, np.random.RandomState(0))
    radii = np.linalg.norm(G, axis=1)
    np.testing.assert_allclose(np.sort(radii), np.linspace(0, 1, 2001), atol=1e-12)
    directions = G[1:] / radii[1:, None]
    assert np.abs(directions.mean(axis=0)).max() < 0.05


# ------------------------------------------------------------- validity
@pytest.mark.parametrize("transport", ["global", "local"])
def test_coverage_validity_over_random_splits(transport):
    """Fixed score function, 200 random calibration/test splits of new data.

    Mean coverage in [1 - alpha, 1 - alpha + 1/(n + 1)] (ties of the discrete
    ranks only raise coverage); one-sided t-tests at a family-wise 1%
    (Bonferroni over 2 levels x 2 sides x 2 transports).
    """
    X, Y = _data(1200, seed=0)
    est = OTCPRegressor(
        transport=transport, n_neighbors=60, calibration_size=0.05, random_state=0
    ).fit(X, Y)
    Xp, Yp = _data(900, seed=1)
    scores = est.conformity_scores(Xp, Yp)
    rng = np.random.RandomState(2)
    n_cal = 400
    for alpha in (0.1, 0.3):
        coverages = []
        for _ in range(200):
            perm = rng.permutation(len(scores))
            cal, test = np.sort(scores[perm[:n_cal]]), scores[perm[n_cal:]]
            coverages.append(np.mean(test <= conformal_quantile(cal, 1 - alpha)))
        level = 0.01 / 8
        low = stats.ttest_1samp(coverages, 1 - alpha, alternative="less").pvalue
        assert low > level
        # ties can only add coverage; without many ties the upper bound holds
        n_ties = len(scores) - len(np.unique(scores))
        if n_ties == 0:
            high = stats.ttest_1samp(
                coverages, 1 - alpha + 1 / (n_cal + 1), alternative="greater"
            ).pvalue
            assert high > level
    # the public path agrees with the scores
    inside = est.contains(Xp, Yp, confidence_level=0.8)
    np.testing.assert_array_equal(inside, scores <= est._threshold(0.8))


def test_marginal_coverage_and_adaptivity():
    X, Y = _data(2000, seed=3)
    Xt, Yt = _data(1500, seed=4)
    glob = OTCPRegressor(random_state=0).fit(X, Y)
    loc = OTCPRegressor(transport="local", n_neighbors=100, random_state=0).fit(X, Y)
    for est in (glob, loc):
        assert est.contains(Xt, Yt).mean() > 0.87
    # the global region has the same volume everywhere, the local one grows
    # with the residual spread |x_0|
    x = np.array([[0.0, 0, 0], [2.0, 0, 0]])
    v_glob, v_loc = glob.region_log_volume(x), loc.region_log_volume(x)
    assert v_glob[0] == v_glob[1]
    assert v_loc[1] > v_loc[0] + 1


def test_volume_matches_box_monte_carlo():
    X, Y = _data(1600, seed=5)
    est = OTCPRegressor(random_state=0).fit(X, Y)
    x = np.zeros((1, 3))
    center = est.predict(x)[0]
    R = est._transport_points * est.residual_scale_
    lo, hi = center + R.min(0) - 1, center + R.max(0) + 1
    Ys = np.random.RandomState(1).uniform(lo, hi, size=(40000, 2))
    frac = est.contains(np.repeat(x, len(Ys), 0), Ys).mean()
    mc = math.log(frac * np.prod(hi - lo))
    assert abs(est.region_log_volume(x, n_samples=8192)[0] - mc) < 0.1


def test_equal_point_model_and_cross_fitting():
    X, Y = _data(600, seed=6)
    rf = RandomForestRegressor(n_estimators=20, random_state=0)
    est = OTCPRegressor(rf, random_state=0).fit(X, Y)
    n_train = len(X) - est.n_calibration_samples_
    # the final point model sees every training row (cross-fitting loses none)
    assert est.estimator_.n_features_in_ == 3
    assert est.estimator_.estimators_[0].n_features_in_ == 3
    assert est.grid_.shape == (n_train, 2)
    # in-sample residuals of a forest are far narrower than out-of-fold ones
    ins = OTCPRegressor(rf, cv=None, random_state=0).fit(X, Y)
    assert np.all(ins.residual_scale_ < 0.8 * est.residual_scale_)


def test_determinism_d1_and_small_neighbourhoods():
    X, Y = _data(300, seed=7)
    a = OTCPRegressor(transport="local", n_neighbors=20, random_state=3).fit(X, Y)
    b = OTCPRegressor(transport="local", n_neighbors=20, random_state=3).fit(X, Y)
    np.testing.assert_array_equal(a.calibration_scores_, b.calibration_scores_)
    np.testing.assert_array_equal(
        a.region_log_volume(X[:5]), b.region_log_volume(X[:5])
    )
    one = OTCPRegressor(random_state=0).fit(X, Y[:, 0])
    assert one.predict(X[:3]).shape == (3,)
    assert one.contains(X, Y[:, 0]).mean() > 0.8
    with pytest.warns(UserWarning, match="every neighbourhood is the whole"):
        OTCPRegressor(transport="local", n_neighbors=500, random_state=0).fit(X, Y)
