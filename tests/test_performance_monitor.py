"""PerformanceMonitor: prediction-powered monitoring over a stream (issue 44).

The statistical tests state their error rate: a coverage over ``R`` streams
is compared with the nominal level minus three binomial standard errors
(about 0.1 % chance of failing when the interval is valid). Validity over
hundreds of streams of real data is ``benchmarks/performance_monitor.py``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import copy as copy_module
import pickle

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import (
    check_do_not_raise_errors_in_init_or_set_params,
    check_estimator_cloneable,
    check_estimator_repr,
    check_get_params_invariance,
    check_no_attributes_set_in_init,
    check_parameters_default_constructible,
    check_set_params,
)

from sklearn_iclr26.inference import PerformanceMonitor, PerformanceMonitorDisplay


def _problem(seed=0, n=4000, n_features=4):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, n_features))
    y = (X[:, 0] + 0.7 * X[:, 1] + rng.normal(size=n) > 0).astype(float)
    return X, y


_X, _Y = _problem()
_MODEL = FrozenEstimator(LogisticRegression().fit(_X[:500], _Y[:500]))


def _stream(monitor, X, y, rate, rng, batch=500):
    """Feed X in batches with a share ``rate`` of gold labels; return the truth."""
    truths, metrics, proxies = [], [], []
    for start in range(0, len(y), batch):
        Xb, yb = X[start : start + batch], y[start : start + batch].copy()
        yb[rng.rand(len(yb)) > rate] = np.nan
        monitor.partial_fit(Xb, yb)
        m, p = monitor.row_values(Xb, yb)
        metrics.append(m)
        proxies.append(p)
        truths.append(
            np.mean(monitor.estimator.predict(X[: start + batch]) == y[: start + batch])
        )
    return np.array(truths), np.concatenate(metrics), np.concatenate(proxies)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("anytime", [False, True])
def test_fixed_sample_equals_ppi_python(seed, anytime):
    # one proxy (the model's top probability), uniform labels: the estimate
    # and the interval are ppi-python's PPI++ mean on the same per-row values
    ppi = pytest.importorskip("ppi_py")
    rng = np.random.RandomState(seed)
    monitor = PerformanceMonitor(_MODEL, anytime=anytime).fit(
        _X[500:1500], _Y[500:1500]
    )
    assert monitor.proxy_names_ == ["confidence:top_probability"]
    _, m, p = _stream(monitor, _X[1500:], _Y[1500:], 0.05, rng)
    lab = ~np.isnan(m)
    assert monitor.n_labeled_ == lab.sum()
    expected = ppi.ppi_mean_pointestimate(m[lab], p[lab], p[~lab])
    assert_allclose(monitor.estimate_, expected[0], rtol=1e-10)
    lower, upper = ppi.ppi_mean_ci(m[lab], p[lab], p[~lab], alpha=0.05)
    if anytime:
        # the confidence sequence is wider, around the same estimate
        assert monitor.interval_[0] < lower[0] and monitor.interval_[1] > upper[0]
        assert_allclose(monitor.interval_.mean(), expected[0], rtol=1e-10)
    else:
        assert_allclose(monitor.interval_, [lower[0], upper[0]], rtol=1e-10)


def test_named_column_proxy_equals_ppi_python():
    ppi = pytest.importorskip("ppi_py")
    rng = np.random.RandomState(3)
    frame = pd.DataFrame(_X, columns=["a", "b", "c", "d"])
    score = frame.assign(score=np.abs(_X[:, 0] + 0.7 * _X[:, 1]))
    # the model sees the four features; the monitor reads the extra column
    pipe = make_pipeline(
        ColumnTransformer([("keep", "passthrough", ["a", "b", "c", "d"])]),
        LogisticRegression(),
    ).fit(score.iloc[:500], _Y[:500])
    monitor = PerformanceMonitor(FrozenEstimator(pipe), proxies=["score"])
    monitor.fit(score.iloc[500:1500], _Y[500:1500])
    assert monitor.proxy_names_ == ["column:score"]
    y = _Y[1500:].copy()
    y[rng.rand(len(y)) > 0.1] = np.nan
    monitor.partial_fit(score.iloc[1500:], y)
    m, p = monitor.row_values(score.iloc[1500:], y)
    lab = ~np.isnan(m)
    lower, upper = ppi.ppi_mean_ci(m[lab], p[lab], p[~lab], alpha=0.05)
    assert_allclose(monitor.interval_, [lower[0], upper[0]], rtol=1e-10)
    # a proxy missing at partial_fit: a clear error, the state unchanged
    before = monitor.history_
    with pytest.raises(ValueError, match="proxy column 'score' is missing"):
        monitor.partial_fit(score.iloc[:100].drop(columns="score"), y[:100])
    assert monitor.history_ == before


def test_no_gold_label_yet_and_all_nan_batches():
    monitor = PerformanceMonitor(_MODEL, threshold=0.99).fit(_X[500:1500], _Y[500:1500])
    # before any row and with no gold label: the trivial interval, no alarm
    assert np.isnan(monitor.estimate_)
    assert_array_equal(monitor.interval_, [0.0, 1.0])
    monitor.partial_fit(_X[1500:1600], np.full(100, np.nan))
    assert np.isnan(monitor.estimate_) and not monitor.alarm_
    assert_array_equal(monitor.interval_, [0.0, 1.0])
    monitor.partial_fit(_X[1600:1700])  # y=None: no row labelled
    assert monitor.n_rows_ == 200 and monitor.n_labeled_ == 0
    y = _Y[1700:2700].copy()
    y[::10] = np.nan  # most rows labelled
    monitor.partial_fit(_X[1700:2700], y)
    assert np.isfinite(monitor.estimate_)
    width = np.diff(monitor.interval_)[0]
    assert 0 < width < 0.2
    # an all-NaN batch afterwards: more unlabelled rows, still an estimate
    monitor.partial_fit(_X[2700:3200], np.full(500, np.nan))
    assert np.isfinite(monitor.estimate_) and monitor.n_rows_ == 1700
    assert len(monitor.history_["estimate"]) == 4
    assert monitor.history_["n_labeled"] == [0, 0, 900, 900]


def test_unsupported_metric_or_estimator_fails_at_fit():
    X, y = _X[:200], _Y[:200]
    reg = FrozenEstimator(LinearRegression().fit(X, y))
    with pytest.raises(ValueError, match="metric='accuracy' needs a classifier"):
        PerformanceMonitor(reg).fit(X, y)
    with pytest.raises(ValueError, match="needs a conformal estimator"):
        PerformanceMonitor(_MODEL, metric="coverage").fit(X, y)
    with pytest.raises(ValueError, match="needs a deferral estimator"):
        PerformanceMonitor(_MODEL, metric="system_error").fit(X, y)
    with pytest.raises(ValueError, match="needs a regressor"):
        PerformanceMonitor(_MODEL, metric="absolute_error").fit(X, y)
    with pytest.raises(ValueError, match="needs a fitted `estimator`"):
        PerformanceMonitor().fit(X, y)
    with pytest.raises(ValueError, match="is not fitted"):
        PerformanceMonitor(LogisticRegression()).fit(X, y)
    with pytest.raises(ValueError, match="must carry its gold label"):
        PerformanceMonitor(_MODEL).fit(X, np.r_[np.nan, y[1:]])
    with pytest.raises(NotFittedError, match="call fit"):
        PerformanceMonitor(_MODEL).partial_fit(X, y)


def test_other_estimator_as_proxy_and_absolute_error():
    rng = np.random.RandomState(0)
    other = GaussianNB().fit(_X[:500], _Y[:500])
    monitor = PerformanceMonitor(_MODEL, proxies=["confidence", other])
    monitor.fit(_X[500:1500], _Y[500:1500])
    assert monitor.proxy_names_ == [
        "confidence:top_probability",
        "GaussianNB:agrees",
        "GaussianNB:probability_of_answer",
    ]
    m, _ = monitor.row_values(_X[:50], _Y[:50])
    assert_array_equal(m, (_MODEL.predict(_X[:50]) == _Y[:50]).astype(float))
    # a regressor's absolute error, with another regressor as the proxy
    t = _X[:, 0] + rng.normal(scale=0.5, size=len(_X))
    reg = FrozenEstimator(LinearRegression().fit(_X[:500], t[:500]))
    other = LinearRegression().fit(_X[:500, :], t[:500] + 0.1)
    monitor = PerformanceMonitor(reg, metric="absolute_error", proxies=[other])
    monitor.fit(_X[500:1000], t[500:1000])
    assert monitor.metric_range_ == (0.0, np.inf)
    m, _ = monitor.row_values(_X[:20], t[:20])
    assert_allclose(m, np.abs(t[:20] - reg.predict(_X[:20])))


def test_conformal_coverage_and_set_size():
    from sklearn_iclr26.conformal import SplitConformalClassifier

    X, y = _X, _Y.astype(int)
    conformal = SplitConformalClassifier(
        FrozenEstimator(LogisticRegression().fit(X[:500], y[:500])),
        confidence_level=0.9,
    ).fit(X[500:1000], y[500:1000])
    frozen = FrozenEstimator(conformal)
    sets = conformal.predict_set(X[1000:])
    sets = sets.toarray() if hasattr(sets, "toarray") else np.asarray(sets)
    coverage = PerformanceMonitor(frozen, metric="coverage").fit(
        X[1000:1500], y[1000:1500]
    )
    m, _ = coverage.row_values(X[1500:1600], y[1500:1600])
    assert_array_equal(m, sets[500:600, :][np.arange(100), y[1500:1600]])
    # the size needs no label: exact mean over the rows, zero width
    size = PerformanceMonitor(frozen, metric="set_size", threshold=1.5)
    size.fit(X[1000:1500])  # no label needed
    size.partial_fit(X[1500:2500])
    assert_allclose(size.estimate_, sets[500:1500].sum(axis=1).mean())
    assert_array_equal(size.interval_, [size.estimate_, size.estimate_])
    assert size.alarm_ == (size.estimate_ > 1.5)
    with pytest.raises(ValueError, match="needs no gold label"):
        size.suggest_labels(X[:100], 10)


def test_deferral_system_error():
    from sklearn_iclr26.deferral import ConfidenceThresholdDeferrer

    rng = np.random.RandomState(0)
    expert = np.where(rng.rand(len(_Y)) < 0.9, _Y, 1 - _Y)
    X = np.c_[_X, expert]
    deferrer = ConfidenceThresholdDeferrer(
        LogisticRegression(), expert_columns=[4], random_state=0
    ).fit(X[:800], _Y[:800].astype(int))
    monitor = PerformanceMonitor(FrozenEstimator(deferrer), metric="system_error")
    monitor.fit(X[800:1500], _Y[800:1500].astype(int))
    assert "confidence:deferred" in monitor.proxy_names_
    m, _ = monitor.row_values(X[1500:1600], _Y[1500:1600])
    assert_array_equal(m, (deferrer.predict(X[1500:1600]) != _Y[1500:1600]))


def _coverage(anytime, n_streams, suggest=False, batch=300):
    hits, errors = [], []
    for seed in range(n_streams):
        rng = np.random.RandomState(100 + seed)
        order = rng.permutation(np.arange(1500, len(_Y)))[:1500]
        monitor = PerformanceMonitor(_MODEL, anytime=anytime, random_state=seed)
        monitor.fit(_X[500:1500], _Y[500:1500])
        covered = True
        for start in range(0, 1500, batch):
            rows = order[start : start + batch]
            Xb, yb = _X[rows], _Y[rows].copy()
            if suggest:
                keep = monitor.suggest_labels(Xb, 0.05 * batch)
                mask = np.ones(len(rows), bool)
                mask[keep] = False
                yb[mask] = np.nan
            else:
                yb[rng.rand(len(rows)) > 0.05] = np.nan
            monitor.partial_fit(Xb, yb)
            seen = order[: start + batch]
            truth = np.mean(_MODEL.predict(_X[seen]) == _Y[seen])
            if start >= 600:  # from 45 labels on: the CLT regime
                covered &= monitor.interval_[0] <= truth <= monitor.interval_[1]
        hits.append(covered)
        errors.append(monitor.estimate_ - truth)
    return np.mean(hits), np.array(errors)


@pytest.mark.parametrize("anytime", [False, True])
def test_coverage_of_the_stream_metric(anytime):
    # fixed sample: the last batch's interval (each of the last three
    # batches for the confidence sequence, simultaneously), 60 streams,
    # 5 % gold labels; nominal 0.95 minus three binomial standard errors
    n = 60
    rate, _ = _coverage(anytime, n)
    assert rate >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / n), rate


def test_suggest_labels_keeps_the_estimate_unbiased():
    # inverse-probability weights: the mean error over 40 streams is within
    # four of its standard errors of zero, and the intervals cover
    n = 40
    rate, errors = _coverage(False, n, suggest=True, batch=500)
    assert abs(errors.mean()) < 4 * errors.std() / np.sqrt(n)
    assert rate >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / n), rate


def test_suggest_labels_probabilities_and_seeding():
    monitor = PerformanceMonitor(_MODEL, random_state=0).fit(_X[500:1500], _Y[500:1500])
    _, p = monitor.row_values(_X[1500:2500])
    pi = monitor._inclusion_probabilities(p, 40.0)
    assert_allclose(pi.sum(), 40.0)
    assert pi.min() >= 0.2 * 40 / 1000 - 1e-12  # the uniform share
    # more labels where the proxy is least sure
    order = np.argsort(p)
    assert pi[order[:100]].mean() > pi[order[-100:]].mean()
    first = clone(monitor).fit(_X[500:1500], _Y[500:1500])
    second = clone(monitor).fit(_X[500:1500], _Y[500:1500])
    for _ in range(2):
        a, b = (
            first.suggest_labels(_X[1500:2500], 40),
            second.suggest_labels(_X[1500:2500], 40),
        )
        assert_array_equal(a, b)
    # the next call draws other rows
    assert not np.array_equal(a, first.suggest_labels(_X[1500:2500], 40))
    # the suggested batch is weighted; the same probabilities given explicitly
    # give the same estimate
    rows = first.suggest_labels(_X[1500:2500], 40)
    pending = first._pending["probability"]
    y = np.full(1000, np.nan)
    y[rows] = _Y[1500:2500][rows]
    explicit = clone(first).fit(_X[500:1500], _Y[500:1500])
    first.partial_fit(_X[1500:2500], y)
    explicit.partial_fit(_X[1500:2500], y, label_probability=pending)
    assert_allclose(first.estimate_, explicit.estimate_)
    assert first._pending is None
    with pytest.raises(ValueError, match="budget must be a positive"):
        first.suggest_labels(_X[:10], 0)


def test_alarm_direction_and_display():
    import matplotlib

    matplotlib.use("Agg")
    rng = np.random.RandomState(0)
    accuracy = np.mean(_MODEL.predict(_X[1500:]) == _Y[1500:])
    low = PerformanceMonitor(_MODEL, threshold=accuracy - 0.15, anytime=True)
    high = PerformanceMonitor(_MODEL, threshold=accuracy + 0.15, anytime=True)
    for monitor in (low, high):
        monitor.fit(_X[500:1500], _Y[500:1500])
        _stream(monitor, _X[1500:], _Y[1500:], 0.2, rng)
    assert not any(low.history_["alarm"])
    assert high.alarm_ and high.history_["alarm"][-1]
    disp = PerformanceMonitorDisplay.from_monitor(high, truth=None)
    assert_allclose(disp.line_.get_ydata(), high.history_["estimate"])
    assert disp.alarms_ is not None
    assert disp.ax_.get_ylabel() == "accuracy"


def test_display_from_estimator_replays_a_copy():
    import matplotlib

    matplotlib.use("Agg")
    monitor = PerformanceMonitor(_MODEL, threshold=0.8).fit(_X[500:1500], _Y[500:1500])
    before = pickle.dumps(monitor)
    y = _Y[1500:3500].copy()
    disp = PerformanceMonitorDisplay.from_estimator(
        monitor, _X[1500:3500], y, n_batches=4
    )
    # the monitor itself is untouched
    assert pickle.dumps(monitor) == before
    # the same as feeding the four batches by hand
    by_hand = copy_module.deepcopy(monitor)
    for start in range(1500, 3500, 500):
        by_hand.partial_fit(_X[start : start + 500], _Y[start : start + 500])
    assert_allclose(disp.line_.get_ydata(), by_hand.history_["estimate"])
    # every row labelled: the true metric so far is drawn
    assert len(disp.ax_.get_lines()) >= 2
    with pytest.raises(ValueError, match="n_batches"):
        PerformanceMonitorDisplay.from_estimator(monitor, _X[:3], n_batches=5)
    with pytest.raises(NotFittedError):
        PerformanceMonitorDisplay.from_estimator(PerformanceMonitor(_MODEL), _X, _Y)


def test_api_checks_pickle_skops_and_clone():
    est = PerformanceMonitor(_MODEL, threshold=0.7, random_state=0)
    name = type(est).__name__
    for check in (
        check_estimator_cloneable,
        check_estimator_repr,
        check_no_attributes_set_in_init,
        check_parameters_default_constructible,
        check_get_params_invariance,
        check_set_params,
        check_do_not_raise_errors_in_init_or_set_params,
    ):
        check(name, est)
    rng = np.random.RandomState(0)
    fitted = clone(est).fit(_X[500:1500], _Y[500:1500])
    _stream(fitted, _X[1500:2500], _Y[1500:2500], 0.1, rng)
    copies = [pickle.loads(pickle.dumps(fitted))]
    sio = pytest.importorskip("skops.io")
    data = sio.dumps(fitted)
    copies.append(sio.loads(data, trusted=sio.get_untrusted_types(data=data)))
    y = _Y[2500:3000].copy()
    y[::3] = np.nan
    fitted.partial_fit(_X[2500:3000], y)
    rows = copy_module.deepcopy(fitted).suggest_labels(_X[:300], 20)
    for copy in copies:
        copy.partial_fit(_X[2500:3000], y)
        assert copy.history_ == fitted.history_
        assert_array_equal(copy.interval_, fitted.interval_)
        assert_array_equal(copy.suggest_labels(_X[:300], 20), rows)
    # clone: unfitted, the monitored model still fitted (FrozenEstimator)
    copy = clone(fitted)
    assert not hasattr(copy, "history_")
    assert copy.fit(_X[500:1500], _Y[500:1500]).reference_metric_ == (
        fitted.reference_metric_
    )


def test_all_gold_labels_equal_do_not_give_a_zero_width_interval():
    # a model right on every labelled row: the sample variance is 0 and a
    # plain CLT interval has zero width; the rule of succession's variance
    # keeps it honest (Wilson-like width ~ 1/n)
    monitor = PerformanceMonitor(_MODEL).fit(_X[500:1500], _Y[500:1500])
    pred = _MODEL.predict(_X[1500:2000])
    y = np.full(500, np.nan)
    right = np.flatnonzero(pred == _Y[1500:2000])[:30]
    y[right] = _Y[1500:2000][right]
    monitor.partial_fit(_X[1500:2000], y)
    lower, upper = monitor.interval_
    assert upper - lower > 0.02
    assert upper == 1.0 and lower < 0.99


def test_labels_outside_the_classes_warn():
    monitor = PerformanceMonitor(_MODEL).fit(_X[500:1500], _Y[500:1500])
    y = np.array(["a"] * 10 + [None] * 90, dtype=object)
    with pytest.warns(UserWarning, match="not among the monitored model's classes_"):
        monitor.partial_fit(_X[1500:1600], y)
    assert monitor.n_labeled_ == 10
