"""Conformal estimators against MAPIE, and the "no silent wrong result" rules.

Anchors (MAPIE 1.6, ``prefit=True`` + ``conformalize``): LAC sets, APS sets
(the include-last-label rule at MAPIE's threshold) and split intervals equal
MAPIE's on the same frozen model and rows. The other tests pin what holds by
construction: a frozen model's ``fit`` keywords raise, ``calibrate`` uses
every row, an interrupted refit leaves the previous fit intact, randomized
RAPS leaves numpy's global RNG alone (every test instance:
``tests/test_common_contracts.py``).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.datasets import load_diabetes, load_digits
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.conformal import (
    BonferroniBoxRegressor,
    ConformalizedQuantileRegressor,
    EllipsoidRegressor,
    OTCPRegressor,
    SOCOPClassifier,
    SplitConformalClassifier,
)
from sklearn_iclr26.metrics import coverage_score


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    X_train, X_rest, y_train, y_rest = train_test_split(
        X, y, train_size=0.5, random_state=0
    )
    X_cal, X_test, y_cal, y_test = train_test_split(
        X_rest, y_rest, train_size=0.5, random_state=0
    )
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    model.fit(X_train, y_train)
    return model, X_cal, y_cal, X_test, y_test


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    model = Ridge().fit(X[:300], y[:300])
    return model, X[300:], y[300:]


def _mapie_classifier(model, score, X, y):
    mapie = pytest.importorskip("mapie.classification")
    return mapie.SplitConformalClassifier(
        model, confidence_level=0.9, conformity_score=score, prefit=True
    ).conformalize(X, y)


# ------------------------------------------------------------------ anchors
def test_lac_sets_equal_mapie(digits):
    model, X_cal, y_cal, X_test, _ = digits
    theirs = _mapie_classifier(model, "lac", X_cal, y_cal).predict_set(X_test)[1]
    ours = SplitConformalClassifier(model, allow_empty=True).calibrate(X_cal, y_cal)
    assert ours.n_calibration_samples_ == len(y_cal)
    np.testing.assert_array_equal(ours.predict_set(X_test), theirs[:, :, 0])


def test_aps_sets_equal_mapie_at_its_threshold(digits):
    """The set rule: include the label at which the cumulative mass crosses.

    MAPIE calibrates APS on the randomized score with its own draws, so the
    thresholds differ by the draws; at MAPIE's threshold the sets are equal.
    """
    model, X_cal, y_cal, X_test, _ = digits
    mapie = _mapie_classifier(model, "aps", X_cal, y_cal)
    theirs = mapie.predict_set(X_test)[1][:, :, 0]
    ours = SplitConformalClassifier(
        model, conformity_score="aps", allow_empty=True, random_state=0
    ).calibrate(X_cal, y_cal)
    ours.threshold_ = float(
        mapie._mapie_classifier.conformity_score_function_.quantiles_[0]
    )
    sets = ours.predict_set(X_test)
    np.testing.assert_array_equal(sets, theirs)
    # the top label is in every set: no empty set even with allow_empty=True
    assert sets[np.arange(len(sets)), model.predict_proba(X_test).argmax(1)].all()


@pytest.mark.parametrize(
    "score, params",
    [("aps", None), ("raps", {"lam_reg": 0.01, "k_reg": 1})],
    ids=["aps", "raps"],
)
def test_aps_sets_are_small_and_never_empty(digits, score, params):
    """The old rule dropped the top label whenever it exceeded the threshold.

    With a 96 % accurate model the old sets had 3 to 4 labels on average and
    ``allow_empty=True`` emptied the most confident rows; the sets are
    now about MAPIE's size (1.2 on these rows).
    """
    model, X_cal, y_cal, X_test, y_test = digits
    clf = SplitConformalClassifier(
        model,
        conformity_score=score,
        score_params=params,
        allow_empty=True,
        random_state=0,
    ).calibrate(X_cal, y_cal)
    sets = clf.predict_set(X_test)
    assert sets.sum(axis=1).min() >= 1
    top = model.predict_proba(X_test).argmax(axis=1)
    assert sets[np.arange(len(top)), top].all()
    assert sets.sum(axis=1).mean() < 1.6
    assert coverage_score(y_test, sets, classes=clf.classes_) >= 0.85


def test_split_interval_equals_mapie(diabetes):
    mapie = pytest.importorskip("mapie.regression")
    model, X, y = diabetes
    theirs = mapie.SplitConformalRegressor(
        model, confidence_level=0.9, prefit=True
    ).conformalize(X, y)
    _, interval = theirs.predict_interval(X[:5])
    theirs_half = (interval[:, 1, 0] - interval[:, 0, 0]) / 2
    for box in (
        BonferroniBoxRegressor(model).calibrate(X, y),
        BonferroniBoxRegressor(FrozenEstimator(model)).fit(X, y),
    ):
        assert box.n_calibration_samples_ == len(y)
        np.testing.assert_allclose(box.threshold_[0], theirs_half, rtol=1e-12)


def test_split_predict_interval_equals_mapie(diabetes):
    mapie = pytest.importorskip("mapie.regression")
    model, X, y = diabetes
    theirs = mapie.SplitConformalRegressor(
        model, confidence_level=0.9, prefit=True
    ).conformalize(X, y)
    _, interval = theirs.predict_interval(X)
    ours = BonferroniBoxRegressor(model).calibrate(X, y).predict_interval(X)
    np.testing.assert_allclose(ours, interval[:, :, 0], rtol=1e-12)


@pytest.mark.parametrize("symmetric", [False, True])
def test_cqr_equals_mapie_given_the_same_quantile_models(symmetric):
    mapie = pytest.importorskip("mapie.regression")
    lightgbm = pytest.importorskip("lightgbm")
    X, y = load_diabetes(return_X_y=True)
    X_train, y_train, X_cal, y_cal = X[:250], y[:250], X[250:400], y[250:400]

    def quantile(level):
        return lightgbm.LGBMRegressor(
            objective="quantile", alpha=level, n_estimators=30, verbose=-1
        ).fit(X_train, y_train)

    lower, upper, median = quantile(0.05), quantile(0.95), quantile(0.5)
    theirs = mapie.ConformalizedQuantileRegressor(
        [lower, upper, median], confidence_level=0.9, prefit=True
    ).conformalize(X_cal, y_cal)
    _, interval = theirs.predict_interval(X, symmetric_correction=symmetric)
    for cqr in (
        ConformalizedQuantileRegressor(
            (lower, upper), symmetric_correction=symmetric
        ).calibrate(X_cal, y_cal),
        ConformalizedQuantileRegressor(
            (FrozenEstimator(lower), FrozenEstimator(upper)),
            symmetric_correction=symmetric,
        ).fit(X_cal, y_cal),
    ):
        assert cqr.n_calibration_samples_ == len(y_cal)
        np.testing.assert_allclose(cqr.predict_interval(X), interval[:, :, 0])


@pytest.mark.parametrize("method", ["cv+", "jackknife+"])
@pytest.mark.parametrize("cls", [BonferroniBoxRegressor, EllipsoidRegressor])
def test_cross_conformal_interval_equals_mapie(cls, method):
    mapie = pytest.importorskip("mapie.regression")
    from sklearn.model_selection import KFold, LeaveOneOut

    X, y = load_diabetes(return_X_y=True)
    X_fit, y_fit, X_test = X[:150], y[:150], X[300:]
    folds = KFold(5, shuffle=True, random_state=1) if method == "cv+" else LeaveOneOut()
    theirs = mapie.CrossConformalRegressor(
        LinearRegression(), confidence_level=0.9, method="plus", cv=folds
    ).fit_conformalize(X_fit, y_fit)
    _, interval = theirs.predict_interval(X_test)
    params = {"cv": None} if cls is EllipsoidRegressor else {}
    ours = cls(LinearRegression(), conformal_cv=folds, **params).fit(X_fit, y_fit)
    # equal up to the rounding of mu(x) +- r (a few ulps of |y| ~ 300)
    np.testing.assert_allclose(
        ours.predict_interval(X_test), interval[:, :, 0], rtol=0, atol=1e-10
    )
    assert ours.n_calibration_samples_ == 150
    assert len(ours.estimators_) == folds.get_n_splits(X_fit)


def test_cross_conformal_is_valid_at_its_guarantee():
    # CV+ (K=5, n=60) at level 0.8: coverage >= 1 - 2 alpha - min(...) holds
    # by theory; we assert the mean over 60 draws exceeds 1 - 2 alpha (a
    # stronger bound than the guarantee) minus 3 standard errors of the mean:
    # a false failure has probability below 0.2% under the guarantee
    rng = np.random.RandomState(0)
    coverage = []
    for _ in range(60):
        X = rng.normal(size=(260, 3))
        y = X @ [1.0, -1.0, 0.5] + rng.standard_t(3, size=260)
        box = BonferroniBoxRegressor(
            LinearRegression(), confidence_level=0.8, conformal_cv=5, random_state=0
        ).fit(X[:60], y[:60])
        coverage.append(box.contains(X[60:], y[60:]).mean())
    coverage = np.asarray(coverage)
    se = coverage.std(ddof=1) / np.sqrt(len(coverage))
    assert coverage.mean() >= 1 - 2 * 0.2 - 3 * se
    # and the bounds nest across levels, one call equal to separate calls
    wide = box.predict_interval(X[:5], confidence_level=[0.5, 0.8])
    np.testing.assert_array_equal(wide[..., 1], box.predict_interval(X[:5]))
    assert np.all(wide[:, 0, 1] <= wide[:, 0, 0])


def test_cross_conformal_refuses_what_it_cannot_do():
    from sklearn.model_selection import TimeSeriesSplit

    X, y = load_diabetes(return_X_y=True)
    model = Ridge().fit(X, y)
    with pytest.raises(TypeError, match="FrozenEstimator is never refit"):
        BonferroniBoxRegressor(FrozenEstimator(model), conformal_cv=3).fit(X, y)
    with pytest.raises(ValueError, match="needs a single target"):
        EllipsoidRegressor(conformal_cv=3).fit(X, np.c_[y, y])
    with pytest.raises(ValueError, match="never held out"):
        BonferroniBoxRegressor(conformal_cv=TimeSeriesSplit(3)).fit(X, y)


# ---------------------------------------------------------- frozen models
FROZEN_CLASSIFIERS = [SplitConformalClassifier, SOCOPClassifier]


@pytest.mark.parametrize("cls", FROZEN_CLASSIFIERS)
@pytest.mark.parametrize("kwarg", ["groups", "sample_weight", "foo"])
def test_frozen_classifier_fit_keywords_raise(cls, kwarg, digits):
    model, X_cal, y_cal, _, _ = digits
    with pytest.raises(TypeError, match=kwarg):
        cls(FrozenEstimator(model)).fit(X_cal, y_cal, **{kwarg: np.ones(len(y_cal))})


@pytest.mark.parametrize("cls", FROZEN_CLASSIFIERS)
def test_classifier_calibrate_equals_frozen_fit(cls, digits):
    model, X_cal, y_cal, X_test, _ = digits
    a = cls(model, random_state=0).calibrate(X_cal, y_cal)
    b = cls(FrozenEstimator(model), random_state=0).fit(X_cal, y_cal)
    assert a.estimator is model  # the parameter is left as it is
    assert a.threshold_ == b.threshold_
    np.testing.assert_array_equal(a.predict_set(X_test), b.predict_set(X_test))


@pytest.mark.parametrize(
    "cls", [SplitConformalClassifier, BonferroniBoxRegressor, EllipsoidRegressor]
)
def test_calibrate_needs_a_fitted_estimator(cls):
    X, y = np.random.RandomState(0).normal(size=(40, 2)), np.arange(40) % 2
    with pytest.raises(ValueError, match="fitted"):
        cls().calibrate(X, y)
    inner = LogisticRegression() if cls is SplitConformalClassifier else Ridge()
    with pytest.raises(Exception, match="not fitted"):
        cls(inner).calibrate(X, y)


def test_frozen_box_calibrates_on_every_row(diabetes):
    model, X, y = diabetes
    box = BonferroniBoxRegressor(FrozenEstimator(model)).fit(X, y)
    assert box.n_calibration_samples_ == len(y)


class _SingleOutputTagged(RegressorMixin, BaseEstimator):
    """Predicts two outputs but keeps the default single-output tags."""

    def fit(self, X, y):
        self.model_ = LinearRegression().fit(X, y)
        return self

    def predict(self, X):
        return self.model_.predict(X)


def test_frozen_multi_output_model_is_not_wrapped():
    """A frozen model predicts every output itself (no per-output copies)."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 3))
    Y = np.c_[X[:, 0], -3 * X[:, 1]] + 0.1 * rng.normal(size=(200, 2))
    model = _SingleOutputTagged().fit(X[:100], Y[:100])
    box = BonferroniBoxRegressor(FrozenEstimator(model)).fit(X[100:], Y[100:])
    np.testing.assert_allclose(box.predict(X[:5]), model.predict(X[:5]))


@pytest.mark.parametrize("cls", [EllipsoidRegressor, OTCPRegressor])
def test_frozen_shape_regions_keep_a_shape_split(cls):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 3))
    Y = X[:, :2] + rng.normal(size=(200, 2))
    model = LinearRegression().fit(X[:100], Y[:100])
    est = cls(model, calibration_size=0.5, random_state=0).calibrate(X[100:], Y[100:])
    assert est.n_calibration_samples_ == 50


# ----------------------------------------------------- data and failed fits
# (an interrupted fit or refit of every conformal estimator, and of every
# other public one: tests/test_common_contracts.py)
def _classification_data(seed, n=200, n_features=4):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, n_features))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int) + (X[:, 1] > 1)
    return X, y


def _regression_data(seed, n=200, n_features=4):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, n_features))
    return X, X[:, :2] + 0.3 * rng.normal(size=(n, 2))


FAST_CVQR = {"max_iter": 3, "warmup_epochs": 1, "hidden_layer_sizes": (4,)}


def test_failed_calibrate_leaves_the_previous_fit(digits):
    model, X_cal, y_cal, _, _ = digits
    clf = SplitConformalClassifier(model).calibrate(X_cal, y_cal)
    before = pickle.dumps(clf)
    with pytest.raises(ValueError):
        clf.calibrate(X_cal[:, :3], y_cal)  # the model needs 64 features
    assert pickle.dumps(clf) == before


# -------------------------------------------------------- global RNG state
# the contract over every test instance is
# tests/test_common_contracts.py::test_fit_and_methods_leave_the_global_rngs_alone;
# randomized RAPS is the one configuration here that no instance has
def test_randomized_raps_leaves_the_global_rng_alone():
    est = SplitConformalClassifier(
        conformity_score="raps", score_params={"randomized": True}, random_state=0
    )
    X, y = _classification_data(0)
    np.random.seed(12345)
    state = np.random.get_state()
    est = clone(est).fit(X, y)
    est.predict_set(X)
    est.conformity_scores(X)
    after = np.random.get_state()
    assert after[0] == state[0]
    np.testing.assert_array_equal(after[1], state[1])
    assert after[2:] == state[2:]


# ------------------------------------------------------------- volumes
@pytest.mark.parametrize("covariance", ["global", "local"])
def test_ellipsoid_constant_target_has_zero_volume(covariance):
    X = np.random.RandomState(0).normal(size=(80, 3))
    Y = np.ones((80, 2))
    est = EllipsoidRegressor(covariance=covariance, n_neighbors=10, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est.fit(X, Y)
    assert np.all(est.region_log_volume(X[:3]) == -np.inf)
    assert est.contains(X[:3], Y[:3]).all()


def test_region_volume_is_a_deprecated_alias():
    X, Y = _regression_data(0)
    est = BonferroniBoxRegressor(random_state=0).fit(X, Y)
    with pytest.warns(FutureWarning, match="region_log_volume"):
        old = est.region_volume(X[:4])
    np.testing.assert_array_equal(old, est.region_log_volume(X[:4]))


# ------------------------------------------------------------- metrics
def test_coverage_score_refuses_ambiguous_integer_labels():
    sets = np.zeros((4, 6), dtype=bool)
    classes = np.array([0, 2, 3, 4, 5, 6])
    y = np.array([2, 3, 0, 2])
    sets[np.arange(4), np.searchsorted(classes, y)] = True
    assert coverage_score(y, sets, classes=classes) == 1.0
    with pytest.raises(ValueError, match="classes="):
        coverage_score(y, sets)
    # every column index occurs: read as indices
    assert coverage_score(np.arange(6), np.eye(6, dtype=bool)) == 1.0


def test_non_randomized_raps_sets_contain_every_randomized_set(digits):
    """At one threshold, the u = 1 score is the smallest the randomized score
    can be, so the non-randomized set contains the randomized set of every
    draw (conservative coverage), and both are prefixes of the ranking."""
    from sklearn_iclr26.conformal._conformity_scores import _raps_with_uniforms

    model, X_cal, y_cal, X_test, _ = digits
    proba = model.predict_proba(X_test)
    clf = SplitConformalClassifier(
        model, conformity_score="raps", score_params={"lam_reg": 0.01, "k_reg": 1}
    ).calibrate(X_cal, y_cal)
    sets = clf.predict_set(X_test)
    q = clf.threshold_
    rng = np.random.RandomState(0)
    for _ in range(5):
        u = rng.uniform(size=(len(proba), 1))
        randomized = _raps_with_uniforms(proba, 0.01, 1, u) <= q
        assert not (randomized & ~sets).any()
    order = np.argsort(-proba, axis=1, kind="stable")
    in_order = np.take_along_axis(sets, order, axis=1)
    assert (np.diff(in_order.astype(int), axis=1) <= 0).all()
