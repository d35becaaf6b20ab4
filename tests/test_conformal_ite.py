"""Weighted split-conformal quantile and conformal ITE intervals (issue 42).

* The weighted quantile equals a brute-force construction of the weighted
  empirical distribution with the test point's mass at +inf, and reduces to
  the unweighted split-conformal threshold exactly with equal weights.
* ``ConformalITERegressor`` with a known (randomised-trial) propensity gives
  the plain split-conformal intervals of each arm, equal to MAPIE's
  ``SplitConformalRegressor`` on the same calibration rows.
* Coverage over 20 (nested: 10) simulated replicates with an estimated
  propensity: the mean counterfactual coverage of the unobserved arm and the
  mean ITE coverage are at least the level minus 0.02 (the mean over the
  replicates, each with 2,000 test units and a few hundred calibration rows,
  has a standard deviation below 0.005 at 0.9, so a valid method fails this
  with probability below 1e-4).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LinearRegression

from sklearn_iclr26.causal import ConformalITERegressor, TLearnerRegressor
from sklearn_iclr26.conformal import conformal_quantile, weighted_conformal_quantile


def _brute_force(scores, level, weights, test_weight):
    values = np.append(scores, np.inf)
    mass = np.append(weights, test_weight)
    mass = mass / mass.sum()
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(mass[order])
    # the smallest value whose cumulative mass reaches the level
    for value, c in zip(values[order], cumulative):
        if c >= level - 1e-12:
            return value
    return np.inf


@pytest.mark.parametrize("seed", range(20))
def test_weighted_quantile_equals_brute_force(seed):
    rng = np.random.RandomState(seed)
    n = rng.randint(1, 60)
    scores = np.round(rng.normal(size=n), 1)  # ties included
    weights = rng.exponential(size=n) * (rng.uniform(size=n) > 0.1)
    weights[0] += 0.1
    test_weights = rng.exponential(size=7)
    levels = [0.5, 0.8, 0.9, 0.95]
    got = weighted_conformal_quantile(
        scores, levels, sample_weight=weights, test_weight=test_weights
    )
    assert got.shape == (7, 4)
    for i, tw in enumerate(test_weights):
        for j, level in enumerate(levels):
            assert got[i, j] == _brute_force(scores, level, weights, tw)


@pytest.mark.parametrize("n", [1, 2, 9, 19, 100, 1001])
@pytest.mark.parametrize("level", [0.1, 0.5, 0.9, 0.95])
@pytest.mark.parametrize("weight", [1.0, 0.37, 13.0])
def test_equal_weights_reduce_to_split_conformal_exactly(n, level, weight):
    scores = np.random.RandomState(n).normal(size=n)
    got = weighted_conformal_quantile(
        scores, level, sample_weight=np.full(n, weight), test_weight=weight
    )
    assert got == conformal_quantile(scores, level)
    assert weighted_conformal_quantile(scores, level) == conformal_quantile(
        scores, level
    )


def test_weighted_quantile_bad_input():
    with pytest.raises(ValueError, match="NaN"):
        weighted_conformal_quantile([0.1, np.nan], 0.9)
    with pytest.raises(ValueError, match="non-negative"):
        weighted_conformal_quantile([0.1, 0.2], 0.9, sample_weight=[1.0, -1.0])
    with pytest.raises(ValueError, match="entries"):
        weighted_conformal_quantile([0.1, 0.2], 0.9, sample_weight=[1.0])
    with pytest.raises(ValueError, match=r"\(0, 1\)"):
        weighted_conformal_quantile([0.1, 0.2], [0.9, 1.5])


def _simulate(n, rng, strength=1.0, hetero=False):
    X = rng.normal(size=(n, 3))
    e = 1.0 / (1.0 + np.exp(-strength * X[:, 0]))
    t = (rng.uniform(size=n) < e).astype(int)
    sd = 0.5 * (1.0 + np.abs(X[:, 1])) if hetero else 0.5
    y0 = X[:, 0] + rng.normal(size=n) * sd
    y1 = X[:, 0] + 1.0 + X[:, 1] + rng.normal(size=n) * sd
    return X, t, np.where(t == 1, y1, y0), y0, y1


def test_known_propensity_gives_split_conformal_equal_to_mapie():
    mapie_regression = pytest.importorskip("mapie.regression")
    rng = np.random.RandomState(0)
    X, t, y, _, _ = _simulate(600, rng, strength=0.0)
    X_test = rng.normal(size=(50, 3))
    est = ConformalITERegressor(
        TLearnerRegressor(LinearRegression()),
        known_propensity=0.5,
        ite_method="bonferroni",
        random_state=0,
    ).fit(X, y, treatment=t)
    got = est.predict_counterfactual_interval(X_test)
    for arm in (0, 1):
        rows = est.calibration_indices_[arm]
        model = est.cate_estimator_.estimators_[arm]
        mu = model.predict(X_test)
        q = conformal_quantile(np.abs(y[rows] - model.predict(X[rows])), 0.9)
        np.testing.assert_array_equal(got[:, arm, 0], mu - q)
        np.testing.assert_array_equal(got[:, arm, 1], mu + q)
        mapie = mapie_regression.SplitConformalRegressor(
            model, confidence_level=0.9, prefit=True
        ).conformalize(X[rows], y[rows])
        _, bounds = mapie.predict_interval(X_test)
        np.testing.assert_allclose(got[:, arm, 0], bounds[:, 0, 0], rtol=0, atol=1e-12)
        np.testing.assert_allclose(got[:, arm, 1], bounds[:, 1, 0], rtol=0, atol=1e-12)
    # with a trial's propensity the counterfactual calibration is unweighted:
    # the intervals do not depend on the arm the unit was in
    t_test = rng.randint(0, 2, 50)
    np.testing.assert_array_equal(
        est.predict_counterfactual_interval(X_test, treatment=t_test), got
    )


@pytest.mark.parametrize("ite_method", ["bonferroni", "nested"])
def test_coverage_over_replicates_with_estimated_propensity(ite_method):
    rng = np.random.RandomState(1)
    cf, ite = [], []
    for r in range(20 if ite_method == "bonferroni" else 10):
        X, t, y, _, _ = _simulate(2000, rng)
        X_t, t_t, _, y0_t, y1_t = _simulate(2000, rng)
        est = ConformalITERegressor(
            TLearnerRegressor(LinearRegression()),
            ite_method=ite_method,
            random_state=r,
        ).fit(X, y, treatment=t)
        C = est.predict_counterfactual_interval(X_t, treatment=t_t)
        covered0 = (C[:, 0, 0] <= y0_t) & (y0_t <= C[:, 0, 1])
        covered1 = (C[:, 1, 0] <= y1_t) & (y1_t <= C[:, 1, 1])
        cf.append(np.mean(np.where(t_t == 1, covered0, covered1)))
        interval = est.predict_interval(X_t)
        effect = y1_t - y0_t
        ite.append(np.mean((interval[:, 0] <= effect) & (effect <= interval[:, 1])))
    assert np.mean(cf) >= 0.88, np.mean(cf)
    assert np.mean(ite) >= 0.88, np.mean(ite)


def test_levels_sequence_trailing_axis_and_nesting():
    rng = np.random.RandomState(2)
    X, t, y, _, _ = _simulate(900, rng)
    est = ConformalITERegressor(
        TLearnerRegressor(LinearRegression()),
        confidence_level=[0.8, 0.95],
        random_state=0,
    ).fit(X, y, treatment=t)
    C = est.predict_counterfactual_interval(X[:30])
    assert C.shape == (30, 2, 2, 2)
    assert np.all(C[:, :, 0, 1] <= C[:, :, 0, 0])  # wider at 0.95
    assert np.all(C[:, :, 1, 1] >= C[:, :, 1, 0])
    assert est.predict_interval(X[:30]).shape == (30, 2, 2)
    single = clone(est).set_params(confidence_level=0.8).fit(X, y, treatment=t)
    np.testing.assert_array_equal(
        single.predict_counterfactual_interval(X[:30]), C[..., 0]
    )


def test_quantile_score_runs_and_is_seeded():
    rng = np.random.RandomState(3)
    X, t, y, _, _ = _simulate(800, rng, hetero=True)
    params = {
        "conformity_score": "quantile",
        "ite_method": "bonferroni",
        "random_state": 0,
    }
    a = ConformalITERegressor(TLearnerRegressor(LinearRegression()), **params)
    b = clone(a)
    out_a = a.fit(X, y, treatment=t).predict_interval(X[:40])
    out_b = b.fit(X, y, treatment=t).predict_interval(X[:40])
    np.testing.assert_array_equal(out_a, out_b)
    assert np.all(out_a[:, 1] >= out_a[:, 0])


def test_bad_input():
    rng = np.random.RandomState(4)
    X, _, y, _, _ = _simulate(300, rng)
    est = ConformalITERegressor(
        TLearnerRegressor(LinearRegression()), ite_method="bonferroni"
    )
    with pytest.raises(ValueError, match="treatment"):
        est.fit(X, y)
    with pytest.raises(ValueError, match="binary"):
        est.fit(X, y, treatment=np.arange(300) % 3)
    t_small = np.zeros(300, dtype=int)
    t_small[:1] = 1
    with pytest.raises(ValueError, match="at least 2 units"):
        est.fit(X, y, treatment=t_small)
    # an arm with a handful of units: its intervals are infinite, with a warning
    t_small[:4] = 1
    with pytest.warns(UserWarning, match="too few"):
        small = est.fit(X, y, treatment=t_small)
    assert np.isinf(small.predict_counterfactual_interval(X[:5])[:, 1]).all()
    # poor overlap: propensities clipped with a warning naming it
    X_far = X.copy()
    X_far[:, 0] *= 20
    t_far = (X_far[:, 0] > 0).astype(int)
    t_far[:5], t_far[-5:] = 1 - t_far[:5], 1 - t_far[-5:]
    with pytest.warns(UserWarning, match="overlap"):
        fitted = est.fit(X_far, y, treatment=t_far)
    assert np.all(np.isfinite(fitted.calibration_propensity_[0]))
    assert fitted.calibration_propensity_[0].min() >= fitted.propensity_clip


def test_predict_is_the_cate_and_random_state_is_bit_identical():
    rng = np.random.RandomState(5)
    X, t, y, _, _ = _simulate(600, rng)
    est = ConformalITERegressor(random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = clone(est).fit(X, y, treatment=t)
        b = clone(est).fit(X, y, treatment=t)
    np.testing.assert_array_equal(a.predict(X), a.cate_estimator_.predict(X))
    np.testing.assert_array_equal(a.predict_interval(X), b.predict_interval(X))


def test_cate_display_draws_the_ite_intervals():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from sklearn_iclr26.causal import CATEDisplay

    rng = np.random.RandomState(6)
    X, t, y, _, _ = _simulate(600, rng)
    est = ConformalITERegressor(
        TLearnerRegressor(LinearRegression()), random_state=0
    ).fit(X, y, treatment=t)
    disp = CATEDisplay.from_estimator(est, X[:50], feature=1)
    interval = est.predict_interval(X[:50])
    assert disp.band_ is not None
    np.testing.assert_array_equal(disp.lower, interval[:, 0])
    np.testing.assert_array_equal(disp.upper, interval[:, 1])
    np.testing.assert_array_equal(disp.effect, est.predict(X[:50]))
