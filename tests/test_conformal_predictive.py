"""Conformal predictive systems, Venn-Abers and exchangeability martingales (issue 45).

Each quantity is compared with the anchor that computes it (crepes 0.9.1,
MAPIE 1.6) on the same residuals, sigmas, bins, folds or p-values; the
guarantees are checked with a stated error rate.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings

import numpy as np
import pytest
from scipy.stats import binom
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression
from sklearn.utils import check_random_state

from sklearn_iclr26.conformal import ConformalPredictiveRegressor
from sklearn_iclr26.utils._split import split_indices

crepes = pytest.importorskip("crepes")


def _data(n=600, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 3))
    y = X[:, 0] + (0.3 + np.abs(X[:, 1])) * rng.normal(size=n)
    return X, y


def _bins_of(X):
    return (X[:, 2] > 0.06).astype(int) + 2 * (X[:, 0] > 0.86)


def _exact_rows(est, X):
    """Rows whose bin's ``n + 1`` is odd and not a multiple of 5.

    There no level of these tests (multiples of 0.05) makes ``q (n + 1)`` an
    integer, where crepes' floating-point rank can fall one short (see
    test_ranks_are_exact_where_crepes_rounds); the other rows are left out
    of the comparison.
    """
    if est.bins_ is None:
        return np.ones(X.shape[0], dtype=bool)
    safe = {
        b for b, n in zip(est.bins_, est.bin_counts_) if (n + 1) % 2 and (n + 1) % 5
    }
    rows = np.isin(_bins_of(X), list(safe))
    assert rows.mean() > 0.3, est.bin_counts_
    return rows


NORMALIZERS = [None, "knn", LinearRegression()]


def _fitted(normalizer, mondrian, interval="equal_tailed", n_cal=198):
    # n_cal + 1 = 199 is prime: no level q of the tests makes q (n + 1) an
    # integer, where crepes' floating-point (1 - c) / 2 * 100 / 100 (n + 1)
    # can fall one rank short (see test_ranks_are_exact_where_crepes_rounds)
    X, y = _data()
    X_fit, y_fit, X_test, y_test = X[:400], y[:400], X[400:], y[400:]
    est = ConformalPredictiveRegressor(
        normalizer=normalizer,
        mondrian=mondrian,
        interval=interval,
        calibration_size=n_cal,
        random_state=0,
    ).fit(X_fit, y_fit)
    # the split fit made (its first draw of random_state=0)
    cal, train = split_indices(400, [n_cal], random_state=check_random_state(0))
    return est, (X_fit[train], y_fit[train]), (X_fit[cal], y_fit[cal]), X_test, y_test


@pytest.mark.parametrize("normalizer", NORMALIZERS, ids=["plain", "knn", "model"])
@pytest.mark.parametrize("mondrian", [None, _bins_of], ids=["", "mondrian"])
def test_predictive_system_equals_crepes(normalizer, mondrian):
    from crepes import ConformalPredictiveSystem

    est, _, (X_cal, y_cal), X_test, y_test = _fitted(normalizer, mondrian)
    residuals = y_cal - est.predict(X_cal)
    sigmas = None if normalizer is None else est.predict_sigma(X_cal)
    bins = None if mondrian is None else mondrian(X_cal)
    cps = ConformalPredictiveSystem().fit(residuals, sigmas=sigmas, bins=bins)
    kw = {
        "sigmas": None if normalizer is None else est.predict_sigma(X_test),
        "bins": None if mondrian is None else mondrian(X_test),
    }
    y_hat = est.predict(X_test)
    rows = _exact_rows(est, X_test)
    np.testing.assert_array_equal(
        est.predict_cdf(X_test, y_test),
        cps.predict_p(y_hat, y_test, smoothing=False, **kw),
    )
    # one value for every row, as crepes' scalar y
    np.testing.assert_array_equal(
        est.predict_cdf(X_test, 0.5), cps.predict_p(y_hat, 0.5, smoothing=False, **kw)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lower = cps.predict_percentiles(y_hat, lower_percentiles=[5, 25], **kw)
        higher = cps.predict_percentiles(y_hat, higher_percentiles=[50, 90], **kw)
        ours_low = est.predict_quantile(X_test, [0.05, 0.25])
        ours_high = est.predict_quantile(X_test, [0.5, 0.9])
        np.testing.assert_allclose(ours_low[rows], lower[rows], rtol=0, atol=1e-12)
        np.testing.assert_allclose(ours_high[rows], higher[rows], rtol=0, atol=1e-12)
        np.testing.assert_allclose(
            est.predict_interval(X_test, confidence_level=0.8)[rows],
            cps.predict_int(y_hat, confidence=0.8, **kw)[rows],
            rtol=0,
            atol=1e-12,
        )


@pytest.mark.parametrize("normalizer", NORMALIZERS, ids=["plain", "knn", "model"])
@pytest.mark.parametrize("mondrian", [None, _bins_of], ids=["", "mondrian"])
def test_symmetric_intervals_equal_crepes_conformal_regressor(normalizer, mondrian):
    from crepes import ConformalRegressor

    est, _, (X_cal, y_cal), X_test, _ = _fitted(normalizer, mondrian, "symmetric")
    residuals = y_cal - est.predict(X_cal)
    sigmas = None if normalizer is None else est.predict_sigma(X_cal)
    bins = None if mondrian is None else mondrian(X_cal)
    cr = ConformalRegressor().fit(residuals, sigmas=sigmas, bins=bins)
    kw = {
        "sigmas": None if normalizer is None else est.predict_sigma(X_test),
        "bins": None if mondrian is None else mondrian(X_test),
    }
    rows = _exact_rows(est, X_test)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for level in (0.8, 0.9):
            np.testing.assert_allclose(
                est.predict_interval(X_test, confidence_level=level)[rows],
                cr.predict_int(est.predict(X_test), confidence=level, **kw)[rows],
                rtol=0,
                atol=1e-12,
            )


def test_ranks_are_exact_where_crepes_rounds():
    # n = 199 at level 0.8: the lower tail's rank is exactly 0.1 * 200 = 20;
    # crepes computes int((1 - 0.8) / 2 * 100 / 100 * 200) = int(19.99...) = 19
    from crepes import ConformalPredictiveSystem

    est, _, (X_cal, y_cal), X_test, _ = _fitted(None, None, n_cal=199)
    scores = np.sort(y_cal - est.predict(X_cal))
    lower = est.predict_interval(X_test, confidence_level=0.8)[:, 0]
    np.testing.assert_allclose(lower, est.predict(X_test) + scores[19], atol=1e-12)
    cps = ConformalPredictiveSystem().fit(y_cal - est.predict(X_cal))
    crepes_lower = cps.predict_int(est.predict(X_test), confidence=0.8)[:, 0]
    np.testing.assert_allclose(
        crepes_lower, est.predict(X_test) + scores[18], atol=1e-12
    )


def test_knn_normalizer_equals_crepes_difficulty_estimator():
    from crepes.extras import DifficultyEstimator

    est, (X_train, y_train), _, X_test, _ = _fitted("knn", None)
    de = DifficultyEstimator().fit(
        X_train, residuals=y_train - est.predict(X_train), k=25, beta=0.01
    )
    np.testing.assert_allclose(
        est.predict_sigma(X_test), de.apply(X_test), rtol=1e-12, atol=0
    )


def test_symmetric_interval_equals_mapie_split_regressor():
    from mapie.regression import SplitConformalRegressor

    X, y = _data()
    model = LinearRegression().fit(X[:200], y[:200])
    est = ConformalPredictiveRegressor(
        FrozenEstimator(model), interval="symmetric", confidence_level=0.9
    ).calibrate(X[200:400], y[200:400])
    mapie = SplitConformalRegressor(model, confidence_level=0.9, prefit=True)
    mapie.conformalize(X[200:400], y[200:400])
    _, bounds = mapie.predict_interval(X[400:])
    np.testing.assert_allclose(
        est.predict_interval(X[400:]), bounds[:, :, 0], rtol=0, atol=1e-10
    )


def test_smoothed_pit_is_uniform_and_intervals_cover():
    # exchangeable rows: the smoothed CDF at the true y is U(0, 1) and the
    # 0.8 intervals cover; each check has a false-alarm rate below 1e-3
    X, y = _data(n=3000, seed=1)
    est = ConformalPredictiveRegressor(
        normalizer="knn", mondrian=_bins_of, calibration_size=0.5, random_state=0
    ).fit(X[:1500], y[:1500])
    pit = est.predict_cdf(X[1500:], y[1500:], smoothed=True, random_state=0)
    from scipy.stats import kstest

    assert kstest(pit, "uniform").pvalue > 1e-3
    covered = (
        (est.predict_interval(X[1500:], 0.8)[:, 0] <= y[1500:])
        & (y[1500:] <= est.predict_interval(X[1500:], 0.8)[:, 1])
    ).sum()
    # marginal coverage >= 0.8 on 1500 rows, given one calibration draw;
    # a one-sided binomial band at 1e-3 around the guarantee
    assert covered >= binom.ppf(1e-3, 1500, 0.8) - 30


def test_cdf_grid_quantile_and_interval_are_consistent():
    est, _, _, X_test, _ = _fitted("knn", None)
    q = est.predict_quantile(X_test, [0.1, 0.9])
    grid = np.c_[q[:, 0], q[:, 1]]
    cdf = est.predict_cdf(X_test, grid)
    assert cdf.shape == (X_test.shape[0], 2)
    assert np.all(cdf[:, 0] <= cdf[:, 1])
    # the CDF is non-decreasing in y and at the 0.9 higher quantile >= 0.9
    assert np.all(cdf[:, 1] >= 0.9)
    np.testing.assert_array_equal(est.predict_interval(X_test, 0.8), q)


def test_unseen_bin_and_small_calibration_give_infinite_bounds():
    X, y = _data(n=120)
    est = ConformalPredictiveRegressor(
        mondrian=lambda X: (X[:, 0] > 1.5).astype(int), random_state=0
    )
    with pytest.warns(UserWarning, match="too few"):
        est.fit(X, y)
    with pytest.warns(UserWarning):
        bounds = est.predict_interval(X[:5] + np.array([10.0, 0, 0]))
    assert np.all(np.isinf(bounds))


def test_bad_inputs_raise_clear_errors():
    X, y = _data(n=100)
    est = ConformalPredictiveRegressor(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="one row per row"):
        est.predict_cdf(X[:3], np.zeros(4))
    with pytest.raises(ValueError, match="quantile"):
        est.predict_quantile(X[:3], 1.5)
    with pytest.raises(ValueError, match="names a column"):
        ConformalPredictiveRegressor(mondrian="a").fit(X, y)
