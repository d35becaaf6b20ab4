"""The family contract of the conformal regressors (CVQR, box, ellipsoid, OT-CP).

One base, one calibration policy: a calibration set too small for the level
(at fit or per call) warns at the user's line, quoting the user's level (never
an internal Bonferroni level), gives ``threshold_ = inf`` and regions that are
the whole space, and never raises. ``threshold_`` and
``n_calibration_samples_`` everywhere; ``fit(X, y)``; per-call
``confidence_level`` on ``contains``, ``region_log_volume`` and
``predict_region``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import inspect
import warnings

import numpy as np
import pytest
from sklearn.linear_model import QuantileRegressor

from sklearn_iclr26.conformal import (
    BonferroniBoxRegressor,
    ConformalizedQuantileRegressor,
    EllipsoidRegressor,
    OTCPRegressor,
    conformal_quantile,
)
from sklearn_iclr26.conformal._base_regressor import BaseConformalRegressor
from sklearn_iclr26.utils._torch_estimator import BaseTorchEstimator
from sklearn_iclr26.utils.discovery import all_estimators

# every public conformal regressor is under contract, found by its base (a
# new subclass cannot be left out by a hand list); fast or local variants by name
REGRESSORS = {
    name: cls
    for name, cls in all_estimators()
    if issubclass(cls, BaseConformalRegressor)
}
VARIANTS = {
    "CVQRRegressor": {
        "max_iter": 3,
        "warmup_epochs": 1,
        "hidden_layer_sizes": (4,),
    },
    "EllipsoidRegressor-local": {"covariance": "local", "n_neighbors": 5},
    "OTCPRegressor-local": {"transport": "local", "n_neighbors": 5},
}


def _make(name, **params):
    cls = REGRESSORS[name.split("-")[0]]
    return cls(**VARIANTS.get(name, {}), **params)


# the multi-target contract: every regressor but the single-target CQR (its
# one-target contract is NAMES_1D below)
NAMES = sorted(set(REGRESSORS) - {"ConformalizedQuantileRegressor"}) + [
    v for v in VARIANTS if "-" in v
]


def test_every_conformal_regressor_is_under_contract():
    assert {
        "BonferroniBoxRegressor",
        "CVQRRegressor",
        "EllipsoidRegressor",
        "OTCPRegressor",
    } <= set(REGRESSORS)
    # every one draws its region (OT-CP for one target only: see its test)
    assert all(hasattr(cls, "predict_region") for cls in REGRESSORS.values())


def _data(n, d=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 3))
    y = X[:, :d] + 0.3 * rng.normal(size=(n, d))
    return X, y


def _draws_region(name, y):
    # OT-CP draws its region for one target only (Laguerre cells otherwise)
    return not name.startswith("OTCP") or y.ndim == 1 or y.shape[1] == 1


@pytest.mark.parametrize("name", NAMES)
def test_small_calibration_set_warns_at_the_users_line(name):
    # 10 calibration points: too few for 0.95 (needs 19)
    X, y = _data(40)
    est = _make(name, confidence_level=0.95, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)  # never raises
    messages = [w for w in caught if "too few" in str(w.message)]
    assert messages, [str(w.message) for w in caught]
    for w in messages:
        assert w.filename == __file__, w.filename  # the user's line
        assert "confidence_level=0.95" in str(w.message)
        assert "0.975" not in str(w.message)  # never the Bonferroni level
    assert est.n_calibration_samples_ == 10
    assert np.all(np.isinf(est.threshold_))
    far = y + 1e6
    assert est.contains(X, far).all()
    assert np.all(est.region_log_volume(X[:3]) == np.inf)
    if _draws_region(name, y):
        assert np.all(np.isinf(est.predict_region(X[:2])))


@pytest.mark.parametrize("name", NAMES)
def test_per_call_level_follows_the_same_policy(name):
    X, y = _data(200)  # 50 calibration points
    est = _make(name, random_state=0).fit(X, y)
    assert est.n_calibration_samples_ == 50
    assert np.all(np.isfinite(est.threshold_))
    with pytest.warns(UserWarning, match="too few for confidence_level=0.99") as rec:
        inside = est.contains(X[:5], y[:5] + 1e6, confidence_level=0.99)
    assert rec[0].filename == __file__
    assert inside.all()
    with pytest.warns(UserWarning, match="confidence_level=0.99"):
        assert np.all(est.region_log_volume(X[:2], confidence_level=0.99) == np.inf)
    if _draws_region(name, y):
        with pytest.warns(UserWarning, match="confidence_level=0.99"):
            assert np.all(np.isinf(est.predict_region(X[:2], confidence_level=0.99)))
    # a reachable level: no warning, nested regions
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        small = est.region_log_volume(X[:4], confidence_level=0.5)
        large = est.region_log_volume(X[:4], confidence_level=0.9)
        np.testing.assert_array_equal(large, est.region_log_volume(X[:4]))
    assert np.all(small < large)
    with pytest.raises(ValueError, match="open interval"):
        est.contains(X[:2], y[:2], confidence_level=1.0)


@pytest.mark.parametrize("name", NAMES)
def test_threshold_is_the_conformal_order_statistic(name):
    X, y = _data(200)
    est = _make(name, random_state=0).fit(X, y)
    scores = est.calibration_scores_
    if name == "BonferroniBoxRegressor":
        expected = [
            conformal_quantile(c, confidence_level=1 - 0.1 / 2) for c in scores.T
        ]
    else:
        expected = conformal_quantile(scores, confidence_level=0.9)
    np.testing.assert_array_equal(est.threshold_, expected)
    # contains is the score against the threshold
    s = est.conformity_scores(X, y)
    inside = np.all(s <= est.threshold_, axis=1) if s.ndim == 2 else s <= est.threshold_
    np.testing.assert_array_equal(est.contains(X, y), inside)


@pytest.mark.parametrize("name", NAMES)
def test_signatures(name):
    est = _make(name)
    # fit(X, y, **fit_params): the inner estimator's parameters (routed);
    # the split-calibrated regions also take the target rows (issue 43)
    assert list(inspect.signature(est.fit).parameters) in (
        ["X", "y", "fit_params"],
        ["X", "y", "X_target", "fit_params"],
    )
    assert est.get_params()["confidence_level"] == 0.9
    # the level is confidence_level, never a miscoverage alpha; a torch
    # estimator's alpha is its L2 penalty (the torch base's vocabulary)
    if not isinstance(est, BaseTorchEstimator):
        assert "alpha" not in est.get_params()
    assert "verbose" in est.get_params()
    for method in (
        "contains",
        "region_log_volume",
        "predict_region",
        "predict_interval",
    ):
        params = inspect.signature(getattr(est, method)).parameters
        assert params["confidence_level"].default is None


def test_box_needs_the_bonferroni_count_but_quotes_the_users_level():
    # d = 2 at 0.9: each output at 0.95 needs 19 points; 12 are too few for
    # the box though enough for a single split-conformal interval (9)
    X, y = _data(48)
    with pytest.warns(UserWarning, match=r"confidence_level=0.9\b.*needs at least 19"):
        box = BonferroniBoxRegressor(random_state=0).fit(X, y)
    assert np.all(np.isinf(box.threshold_))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ell = EllipsoidRegressor(random_state=0).fit(X, y)
    assert np.isfinite(ell.threshold_)


@pytest.mark.parametrize("name", NAMES)
def test_seeds_bit_identical_and_split_changes_with_seed(name):
    X, y = _data(120)
    a = _make(name, random_state=3).fit(X, y)
    b = _make(name, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.calibration_scores_, b.calibration_scores_)
    np.testing.assert_array_equal(
        a.region_log_volume(X[:5]), b.region_log_volume(X[:5])
    )
    c = _make(name, random_state=4).fit(X, y)
    assert not np.array_equal(a.calibration_scores_, c.calibration_scores_)


@pytest.mark.parametrize("name", NAMES)
def test_verbose_prints_through_the_one_helper(name, capsys):
    X, y = _data(60)
    _make(name, verbose=1, random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert f"[{type(_make(name)).__name__}]" in out
    assert "calibrating on 15 rows" in out


# ------------------------------------------------ intervals, several levels
def _make_1d(name, **params):
    if name == "OTCPRegressor":
        return OTCPRegressor(**params)
    if name == "local-OTCP":
        return OTCPRegressor(transport="local", n_neighbors=30, **params)
    if name == "box-cv+":
        return BonferroniBoxRegressor(conformal_cv=5, **params)
    if name == "local-ellipsoid-cv+":
        return EllipsoidRegressor(
            covariance="local", n_neighbors=30, conformal_cv=5, **params
        )
    if name == "ConformalizedQuantileRegressor":
        return ConformalizedQuantileRegressor(
            QuantileRegressor(alpha=0.0, solver="highs"), **params
        )
    return _make(name, **params)


NAMES_1D = [
    *NAMES,
    "OTCPRegressor",
    "local-OTCP",
    "ConformalizedQuantileRegressor",
    "box-cv+",
    "local-ellipsoid-cv+",
]
LEVELS = [0.5, 0.8, 0.9]


@pytest.mark.parametrize("name", NAMES_1D)
def test_predict_interval_is_the_one_target_region(name):
    X, y = _data(240, d=1)
    y = y[:, 0]
    est = _make_1d(name, random_state=0).fit(X, y)
    interval = est.predict_interval(X)
    assert interval.shape == (240, 2)
    np.testing.assert_array_equal(interval, est.predict_region(X)[:, :, 0])
    # contains is membership of the interval; CVQR's contains solves for the
    # rank numerically, so a point at its own threshold (the calibration row
    # of the order statistic) may fall either side: within 1e-4 of an end
    inside = (interval[:, 0] <= y) & (y <= interval[:, 1])
    differ = inside != est.contains(X, y)
    if name == "CVQRRegressor":
        gap = np.min(np.abs(y[:, None] - interval), axis=1)
        assert differ.sum() <= 2 and np.all(gap[differ] < 1e-4), gap[differ]
    else:
        assert not differ.any()
    assert list(inspect.signature(est.predict_interval).parameters) == [
        "X",
        "confidence_level",
    ]


@pytest.mark.parametrize(
    "name", [n for n in NAMES_1D if n not in ("local-OTCP", "local-ellipsoid-cv+")]
)
def test_predict_interval_refuses_several_targets(name):
    if name == "ConformalizedQuantileRegressor":
        with pytest.raises(ValueError, match="single-target"):
            _make_1d(name).fit(*_data(80, d=2))
        return
    est = _make_1d(name, random_state=0).fit(*_data(80, d=2))
    with pytest.raises(ValueError, match=r"single target|d = 1"):
        est.predict_interval(_data(80)[0][:3])


@pytest.mark.parametrize("name", NAMES_1D)
def test_several_levels_equal_separate_calls_and_are_nested(name):
    X, y = _data(240, d=1)
    y = y[:, 0]
    est = _make_1d(name, random_state=0).fit(X, y)
    with pytest.warns(UserWarning, match="too few for confidence_level=0.999"):
        intervals = est.predict_interval(X[:20], confidence_level=[*LEVELS, 0.999])
    inside = est.contains(X, y, confidence_level=LEVELS)
    volume = est.region_log_volume(X[:20], confidence_level=LEVELS)
    assert intervals.shape == (20, 2, 4) and inside.shape == (240, 3)
    assert est.predict_region(X[:20], LEVELS).shape == (20, 2, 1, 3)
    for k, level in enumerate(LEVELS):
        np.testing.assert_array_equal(
            intervals[..., k], est.predict_interval(X[:20], level)
        )
        np.testing.assert_array_equal(inside[:, k], est.contains(X, y, level))
        np.testing.assert_array_equal(
            volume[:, k], est.region_log_volume(X[:20], level)
        )
    # nested: lower bounds never rise, upper bounds never fall with the level
    assert np.all(intervals[:, 0, 1:] <= intervals[:, 0, :-1])
    assert np.all(intervals[:, 1, 1:] >= intervals[:, 1, :-1])
    assert np.all(inside[:, 1:] >= inside[:, :-1])
    assert np.all(np.isinf(intervals[..., -1]))  # the policy, per level


@pytest.mark.parametrize("name", NAMES)
def test_several_levels_in_two_dimensions(name):
    X, y = _data(200)
    est = _make(name, random_state=0).fit(X, y)
    if _draws_region(name, y):
        region = est.predict_region(X[:4], confidence_level=(0.5, 0.9))
        np.testing.assert_array_equal(region[..., 1], est.predict_region(X[:4]))
    inside = est.contains(X, y, confidence_level=np.array([0.5, 0.9]))
    assert np.all(inside[:, 1] >= inside[:, 0])
    for bad in ([], [[0.5]], "0.9", [0.5, 1.0]):
        with pytest.raises((ValueError, TypeError)):
            est.contains(X[:2], y[:2], confidence_level=bad)


# ---------------------------------------------------------------------- CQR
def test_cqr_sets_the_quantile_levels_of_known_regressors():
    from sklearn.ensemble import (
        GradientBoostingRegressor,
        HistGradientBoostingRegressor,
    )
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _data(120, d=1)
    y = y[:, 0]
    cases = [
        (GradientBoostingRegressor(loss="quantile", n_estimators=5), "alpha"),
        (HistGradientBoostingRegressor(loss="quantile", max_iter=5), "quantile"),
        (QuantileRegressor(alpha=0.0), "quantile"),
        (make_pipeline(StandardScaler(), QuantileRegressor(alpha=0.0)), "quantile"),
    ]
    for est, param in cases:
        cqr = ConformalizedQuantileRegressor(
            est, confidence_level=0.8, random_state=0
        ).fit(X, y)
        levels = [
            (m[-1] if hasattr(m, "steps") else m).get_params()[param]
            for m in cqr.estimators_
        ]
        np.testing.assert_allclose(levels, [0.1, 0.9])
    from sklearn.linear_model import Ridge

    with pytest.raises(ValueError, match="cannot set the quantile level"):
        ConformalizedQuantileRegressor(Ridge()).fit(X, y)
    with pytest.raises(ValueError, match="loss='quantile'"):
        ConformalizedQuantileRegressor(GradientBoostingRegressor()).fit(X, y)
    with pytest.raises(ValueError, match=r"\(lower, upper\) pair"):
        ConformalizedQuantileRegressor([Ridge()] * 3).fit(X, y)
    with pytest.raises(ValueError, match="needs estimator=\\(lower, upper\\)"):
        ConformalizedQuantileRegressor(Ridge()).calibrate(X, y)


def test_cqr_calibrate_equals_frozen_fit_and_follows_the_policy():
    from sklearn.frozen import FrozenEstimator

    X, y = _data(300, d=1)
    y = y[:, 0]
    pair = [QuantileRegressor(quantile=q, alpha=0.0).fit(X, y) for q in (0.05, 0.95)]
    a = ConformalizedQuantileRegressor(pair, random_state=0).calibrate(X[:40], y[:40])
    b = ConformalizedQuantileRegressor(
        [FrozenEstimator(m) for m in pair], random_state=0
    ).fit(X[:40], y[:40])
    assert a.n_calibration_samples_ == 40
    np.testing.assert_array_equal(a.threshold_, b.threshold_)
    scores = a.calibration_scores_
    expected = [conformal_quantile(c, confidence_level=0.95) for c in scores.T]
    np.testing.assert_array_equal(a.threshold_, expected)
    # per bound at 1 - alpha / 2: 0.9 needs 19 points per side, 12 are too few
    # (quoting the user's level); the symmetric correction needs 9
    with pytest.warns(UserWarning, match=r"confidence_level=0.9\b") as rec:
        small = ConformalizedQuantileRegressor(pair).calibrate(X[:12], y[:12])
    assert rec[0].filename == __file__
    assert "0.95" not in str(rec[0].message)
    assert np.all(np.isinf(small.threshold_))
    assert np.all(np.isinf(small.predict_interval(X[:3])) == [[True, True]] * 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sym = ConformalizedQuantileRegressor(pair, symmetric_correction=True)
        sym.calibrate(X[:12], y[:12])
    assert np.all(np.isfinite(sym.threshold_))
    assert sym.threshold_[0] == sym.threshold_[1]


def test_interval_metrics_agree_with_contains_per_level():
    from sklearn_iclr26.metrics import (
        interval_coverage_score,
        mean_interval_width,
        region_coverage_score,
    )

    X, y = _data(240, d=1)
    y = y[:, 0]
    box = BonferroniBoxRegressor(random_state=0).fit(X, y)
    intervals = box.predict_interval(X, confidence_level=LEVELS)
    by_level = box.contains(X, y, confidence_level=LEVELS).mean(axis=0)
    np.testing.assert_array_equal(interval_coverage_score(y, intervals), by_level)
    assert interval_coverage_score(y, intervals[..., 2]) == region_coverage_score(
        box.contains(X, y)
    )
    np.testing.assert_allclose(
        mean_interval_width(intervals),
        2
        * np.array(
            [
                box.predict_interval(X[:1], lvl)[0, 1] - box.predict(X[:1])[0]
                for lvl in LEVELS
            ]
        ),
    )
    assert np.all(np.diff(mean_interval_width(intervals)) > 0)
    with pytest.raises(ValueError, match="shape"):
        mean_interval_width(np.zeros((3, 3)))
