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


# --------------------------------------------------------------- Venn-Abers
def _classification(n_classes, n=900, seed=0):
    from sklearn.datasets import make_classification

    return make_classification(
        n, n_features=8, n_informative=5, n_classes=n_classes, random_state=seed
    )


@pytest.mark.parametrize("n_classes", [2, 3])
def test_venn_abers_prefit_equals_mapie(n_classes):
    from mapie.calibration import VennAbersCalibrator
    from sklearn.naive_bayes import GaussianNB

    from sklearn_iclr26.conformal import VennAbersClassifier

    X, y = _classification(n_classes)
    clf = GaussianNB().fit(X[:300], y[:300])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = VennAbersCalibrator(clf, cv="prefit").fit(X[300:600], y[300:600])
        ref = ref.predict_proba(X[600:])
    # MAPIE's prefit multi-class rule is one-vs-one
    ours = VennAbersClassifier(FrozenEstimator(clf), multi_class="ovo")
    ours = ours.fit(X[300:600], y[300:600]).predict_proba(X[600:])
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12)


def test_venn_abers_one_vs_rest_equals_mapie():
    from mapie._venn_abers import predict_proba_prefitted_va
    from sklearn.naive_bayes import GaussianNB

    from sklearn_iclr26.conformal import VennAbersClassifier

    X, y = _classification(4)
    clf = GaussianNB().fit(X[:300], y[:300])
    ref, _ = predict_proba_prefitted_va(
        clf.predict_proba(X[300:600]),
        y[300:600],
        clf.predict_proba(X[600:]),
        va_tpe="one_vs_all",
    )
    ours = VennAbersClassifier(clf).calibrate(X[300:600], y[300:600])
    # MAPIE's p1 of a score above every calibration score of its class is
    # not the isotonic fit's value (row 222 here: 0.8 where the fit with
    # (s, 1) appended is 1.0, see the next test); the other rows are equal
    above = np.any(clf.predict_proba(X[600:]) > clf.predict_proba(X[300:600]).max(0), 1)
    assert above.sum() <= 10
    np.testing.assert_allclose(
        ours.predict_proba(X[600:])[~above], ref[~above], rtol=0, atol=1e-12
    )


def test_cross_venn_abers_equals_mapie_on_the_same_folds():
    from mapie.calibration import VennAbersCalibrator
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    from sklearn_iclr26.conformal import VennAbersClassifier

    X, y = _classification(2, n=600, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = VennAbersCalibrator(
            LogisticRegression(), inductive=False, n_splits=5, random_state=0
        ).fit(X[:400], y[:400])
        ref = ref.predict_proba(X[400:])
    ours = VennAbersClassifier(
        LogisticRegression(), cv=StratifiedKFold(5, shuffle=True, random_state=0)
    ).fit(X[:400], y[:400])
    np.testing.assert_allclose(ours.predict_proba(X[400:]), ref, rtol=0, atol=1e-12)
    assert ours.predict_p0_p1(X[400:]).shape == (200, 1, 5, 2)


def test_venn_abers_pair_is_isotonic_regression_with_the_test_point():
    # by definition: p_b(s) is the isotonic fit at s with (s, b) added
    from sklearn.isotonic import IsotonicRegression

    from sklearn_iclr26.conformal._venn_abers import venn_abers_p0_p1

    rng = np.random.RandomState(0)
    s = rng.uniform(size=60)
    lab = (rng.uniform(size=60) < s).astype(int)
    # test scores inside, below and above the calibration scores
    test = np.r_[rng.uniform(size=7), -1.0, 2.0]
    pairs = venn_abers_p0_p1(s, lab, test)
    for t, (p0, p1) in zip(test, pairs):
        for b, value in ((0, p0), (1, p1)):
            iso = IsotonicRegression().fit(np.r_[s, t], np.r_[lab, b])
            assert value == pytest.approx(iso.predict([t])[0], abs=1e-12)
    assert np.all(pairs[:, 0] <= pairs[:, 1])


def test_venn_abers_pair_ignores_rounding_at_a_calibration_score():
    # the same row scored alone or in a batch can differ in its last bits
    # (found by scikit-learn 1.7's check_methods_subset_invariance, cv=3,
    # multi_class="ovo": 0.17 apart); the pair must be that of the tied score
    from sklearn_iclr26.conformal._venn_abers import venn_abers_p0_p1

    rng = np.random.RandomState(0)
    s = rng.uniform(size=40)
    lab = (rng.uniform(size=40) < s).astype(int)
    exact = venn_abers_p0_p1(s, lab, s)
    for shift in (np.spacing(s), -np.spacing(s), 4 * np.spacing(s)):
        np.testing.assert_array_equal(venn_abers_p0_p1(s, lab, s + shift), exact)
    # a real difference still moves the score off the tie
    apart = venn_abers_p0_p1(s, lab, s + 1e-9)
    assert not np.array_equal(apart, exact)


def test_venn_abers_bad_inputs_raise():
    from sklearn.linear_model import LogisticRegression

    from sklearn_iclr26.conformal import VennAbersClassifier

    X, y = _classification(2, n=100)
    with pytest.raises(TypeError, match="FrozenEstimator"):
        VennAbersClassifier(FrozenEstimator(LogisticRegression().fit(X, y)), cv=3).fit(
            X, y
        )
    with pytest.raises(ValueError, match="class"):
        VennAbersClassifier().fit(X, np.zeros(100))


def test_expected_calibration_error_by_hand():
    from sklearn_iclr26.metrics import expected_calibration_error

    y = np.array([0, 1, 1, 0])
    proba = np.array([[0.9, 0.1], [0.2, 0.8], [0.4, 0.6], [0.3, 0.7]])
    # bins of width 0.2: {0.9, 0.8} all right (|1 - 0.85|), {0.6, 0.7} half
    # right (|0.5 - 0.65|), each half the rows
    assert expected_calibration_error(y, proba, n_bins=5) == pytest.approx(0.15)
    with pytest.raises(ValueError, match="labels"):
        expected_calibration_error(y, np.c_[proba, proba[:, :1]])


# ------------------------------------------------------------- martingales
def test_martingale_equals_crepes_and_mapie_simple_jumper():
    from crepes.martingales import SimpleJumper
    from mapie.exchangeability_testing import OnlineMartingaleTest

    from sklearn_iclr26.conformal import ExchangeabilityMartingale

    p = np.random.RandomState(0).uniform(size=1500) ** 1.2
    ours = ExchangeabilityMartingale().partial_fit(p[:700]).partial_fit(p[700:])
    np.testing.assert_allclose(ours.martingale_, SimpleJumper().apply(p), rtol=1e-10)
    omt = OnlineMartingaleTest(task="regression", jump_size=0.01, random_state=0)
    ref = [omt.update_simple_jumper_martingale(float(v)) for v in p[:800]]
    ours = ExchangeabilityMartingale(epsilons=(-1, 0, 1)).partial_fit(p[:800])
    np.testing.assert_allclose(ours.martingale_, ref, rtol=1e-10)


def test_online_p_values_equal_crepes_semi_online():
    from crepes.martingales import semi_online_p_values

    from sklearn_iclr26.conformal import online_p_values

    s = np.random.RandomState(1).randint(0, 20, size=400).astype(float)
    np.testing.assert_array_equal(
        online_p_values(s, random_state=3), semi_online_p_values(s, seed=3)
    )
    # a reference set is the stream's past: the same p-values as the tail
    # of the whole sequence
    whole = online_p_values(np.r_[s[:100], s[100:]], random_state=3)
    tau = check_random_state(3).uniform(size=400)
    assert whole.shape == (400,) and np.all((0 < whole) & (whole <= 1))
    tail = online_p_values(s[100:], reference_scores=s[:100][::-1], random_state=4)
    tau_tail = check_random_state(4).uniform(size=300)
    for t in (0, 57, 299):
        past = s[: 100 + t]
        gt, eq = np.sum(past > s[100 + t]), np.sum(past == s[100 + t])
        assert tail[t] == pytest.approx((gt + tau_tail[t] * (eq + 1)) / (101 + t))
    del tau


def test_ville_false_alarm_rate_under_exchangeability():
    # 200 exchangeable streams of 300 rows: online p-values of iid scores
    # (through a fixed calibration bag), each stream's martingale at level
    # 0.9 (threshold 10). Ville: P(sup M >= 10) <= 0.1; the count of
    # rejections exceeds binom(200, 0.1)'s 0.999 quantile with probability
    # below 1e-3.
    from sklearn_iclr26.conformal import ExchangeabilityMartingale, online_p_values

    rng = np.random.RandomState(0)
    n_streams, rejected = 200, 0
    for _ in range(n_streams):
        scores = rng.exponential(size=350)
        p = online_p_values(scores[50:], reference_scores=scores[:50], random_state=rng)
        test = ExchangeabilityMartingale(confidence_level=0.9).partial_fit(p)
        rejected += test.rejected_
    assert rejected <= binom.ppf(1 - 1e-3, n_streams, 0.1)


def test_martingale_rejects_small_p_values_and_checks_inputs():
    from sklearn_iclr26.conformal import ExchangeabilityMartingale

    # p = 0.01 forever: the epsilon = -1 expert gains 1.49 per step, so M
    # passes 100 within 30 steps by construction
    test = ExchangeabilityMartingale().partial_fit(np.full(30, 0.01))
    assert test.rejected_ and test.rejection_index_ < 30
    assert test.max_martingale_ >= test.threshold_ == pytest.approx(100)
    # no overflow on long strange streams: the log stays finite
    long = ExchangeabilityMartingale().partial_fit(np.zeros(5000))
    assert np.isfinite(long.log_martingale_[-1])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ExchangeabilityMartingale().partial_fit([0.5, 1.5])
    with pytest.raises(ValueError, match="epsilons"):
        ExchangeabilityMartingale(epsilons=(3,)).partial_fit([0.5])
    assert ExchangeabilityMartingale().reset().n_seen_ == 0


def test_mondrian_column_of_a_dataframe_and_calibrate_with_a_normalizer():
    pd = pytest.importorskip("pandas")
    X, y = _data(n=400)
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(g=(X[:, 2] > 0).astype(int))
    by_name = ConformalPredictiveRegressor(mondrian="g", random_state=0).fit(frame, y)
    by_call = ConformalPredictiveRegressor(
        mondrian=lambda F: np.asarray(F["g"]), random_state=0
    ).fit(frame, y)
    np.testing.assert_array_equal(by_name.bin_counts_, by_call.bin_counts_)
    np.testing.assert_array_equal(
        by_name.predict_interval(frame), by_call.predict_interval(frame)
    )
    # a frozen model with a normalizer: the normalizer still learns from a
    # training part of the calibrate rows, the model is never refit
    model = LinearRegression().fit(X[:200], y[:200])
    est = ConformalPredictiveRegressor(model, normalizer="knn", calibration_size=0.5)
    est.calibrate(X[200:], y[200:])
    assert est.n_calibration_samples_ == 100
    np.testing.assert_array_equal(est.predict(X[:5]), model.predict(X[:5]))


def test_predict_like_methods_batch_by_working_memory():
    # LinearRegression's BLAS predictions may differ by an ulp between batch
    # sizes: the family's tolerance (tests/test_batching_common.py)
    import sklearn

    est, _, _, X_test, y_test = _fitted("knn", _bins_of)
    X_test, y_test = X_test[:60], y_test[:60]
    calls = {
        "cdf": lambda: est.predict_cdf(X_test, y_test),
        "grid": lambda: est.predict_cdf(X_test, np.c_[y_test, y_test + 1]),
        "quantile": lambda: est.predict_quantile(X_test, [0.1, 0.5, 0.9]),
        "interval": lambda: est.predict_interval(X_test),
        "sigma": lambda: est.predict_sigma(X_test),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = {k: f() for k, f in calls.items()}
        with sklearn.config_context(working_memory=1e-4):
            for k, f in calls.items():
                np.testing.assert_allclose(
                    f(), whole[k], rtol=1e-12, atol=1e-12, err_msg=k
                )
