"""Cross-conformal classification and cross-CQR against MAPIE 1.6 (issue 45).

Anchors, on the same folds (a ``KFold`` given to both):

* ``SplitConformalClassifier(cv=...)``: out-of-fold scores and sets equal
  MAPIE's ``CrossConformalClassifier`` for LAC (``agg_scores="crossval"`` and
  ``"mean"``) and APS (``"mean"``, given MAPIE's randomized out-of-fold
  scores). MAPIE's APS ``"crossval"`` compares the mass *through* each test
  label with the calibration scores, which empties half the sets (coverage
  0.42 at 0.9 on digits): the package keeps the include-last rule of its
  split sets; the test pins MAPIE's rule as read, reproduced from our fold
  models, and our coverage.
* ``ConformalizedQuantileRegressor(conformal_cv=...)``: MAPIE's
  ``CrossConformalizedQuantileRegressor(method="plus")``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np
import pytest
from sklearn.datasets import load_diabetes, load_digits
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold

from sklearn_iclr26.conformal import (
    ConformalizedQuantileRegressor,
    SOCOPClassifier,
    SplitConformalClassifier,
)
from sklearn_iclr26.conformal._conformity_scores import (
    _cumulative_mass,
    conformal_quantile,
)

N_FIT = 300  # MAPIE's LAC count alpha (n - 1) and Vovk's agree at n = 300, 0.9


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    return X[:N_FIT], y[:N_FIT], X[1000:1300], y[1000:1300]


def _mapie(score, folds, X, y):
    mapie = pytest.importorskip("mapie.classification")
    return mapie.CrossConformalClassifier(
        LogisticRegression(max_iter=500),
        confidence_level=0.9,
        conformity_score=score,
        cv=folds,
        random_state=0,
    ).fit_conformalize(X, y)


def _ours(score, folds, agg, X, y):
    return SplitConformalClassifier(
        LogisticRegression(max_iter=500),
        conformity_score=score,
        cv=folds,
        agg_scores=agg,
        allow_empty=True,
        random_state=0,
    ).fit(X, y)


@pytest.mark.parametrize("agg", ["crossval", "mean"])
def test_lac_cross_conformal_equals_mapie(digits, agg):
    X, y, X_test, _ = digits
    folds = KFold(5, shuffle=True, random_state=1)
    # the two count rules agree at this n (see the class docstring)
    assert math.ceil(0.1 * (N_FIT - 1) - 1e-12) == math.floor(0.1 * (N_FIT + 1) - 1) + 1
    theirs = _mapie("lac", folds, X, y)
    ours = _ours("lac", folds, agg, X, y)
    np.testing.assert_allclose(
        ours.oof_scores_, np.asarray(theirs.conformity_scores).ravel(), atol=1e-12
    )
    assert ours.n_calibration_samples_ == N_FIT and len(ours.estimators_) == 5
    expected = theirs.predict_set(X_test, agg_scores=agg)[1][:, :, 0]
    np.testing.assert_array_equal(ours.predict_set(X_test), expected)
    np.testing.assert_array_equal(ours.predict(X_test), theirs.predict(X_test))


def test_aps_mean_cross_conformal_equals_mapie_on_its_scores(digits):
    X, y, X_test, _ = digits
    folds = KFold(5, shuffle=True, random_state=1)
    theirs = _mapie("aps", folds, X, y)
    ours = _ours("aps", folds, "mean", X, y)
    # MAPIE randomizes the out-of-fold scores with its own draws: use them
    ours._set_cross_scores(np.asarray(theirs.conformity_scores).ravel(), ours.fold_of_)
    ours.threshold_ = conformal_quantile(ours.oof_scores_, 0.9)
    expected = theirs.predict_set(X_test, agg_scores="mean")[1][:, :, 0]
    np.testing.assert_array_equal(ours.predict_set(X_test), expected)


def test_aps_crossval_keeps_the_include_last_rule_mapie_does_not(digits):
    X, y, X_test, y_test = digits
    folds = KFold(5, shuffle=True, random_state=1)
    theirs = _mapie("aps", folds, X, y)
    mapie_sets = theirs.predict_set(X_test, agg_scores="crossval")[1][:, :, 0]
    ours = _ours("aps", folds, "crossval", X, y)
    # MAPIE's rule as read: label j in iff #{i : s_i <= mass through j under
    # fold k(i)} <= (n + 1)(1 - alpha); reproduced from our fold models
    s = np.asarray(theirs.conformity_scores).ravel()
    count = np.zeros(mapie_sets.shape)
    for k, member in enumerate(ours.estimators_):
        through = _cumulative_mass(member.predict_proba(X_test))[0]
        fold = s[ours.fold_of_ == k]
        count += (fold[None, None, :] <= through[..., None] + 1e-8).sum(axis=-1)
    np.testing.assert_array_equal(count <= (N_FIT + 1) * 0.9, mapie_sets)
    rows = np.arange(len(y_test))
    # MAPIE's sets are often empty and under-cover; ours never empty and cover
    assert mapie_sets[rows, y_test].mean() < 0.6
    sets = ours.predict_set(X_test)
    assert sets.sum(axis=1).min() >= 1
    # 300 test rows at level 0.9: below 0.85 has probability < 1e-2 for a
    # valid 1 - alpha procedure (binomial); the guarantee is 1 - 2 alpha
    assert sets[rows, y_test].mean() >= 0.85


def test_crossval_p_values_reproduce_the_sets(digits):
    X, y, X_test, _ = digits
    clf = SplitConformalClassifier(
        LogisticRegression(max_iter=500), cv=4, random_state=0
    ).fit(X[:150], y[:150])
    n = clf.n_calibration_samples_
    assert n == 150
    p = clf.predict_p(X_test)
    for level in (0.8, 0.9):
        sets = clf.predict_set(X_test, confidence_level=level)
        rule = p > (n + 1 - math.ceil((n + 1) * level - 1e-12)) / (n + 1) - 1e-12
        empty = ~rule.any(axis=1)
        rule[empty, np.argmax(p[empty], axis=1)] = True
        np.testing.assert_array_equal(sets, rule)
    multi = clf.predict_set(X_test, confidence_level=[0.8, 0.9])
    assert np.all(multi[..., 0] <= multi[..., 1])
    smooth = clf.predict_p(X_test, smoothed=True, random_state=0)
    assert np.all(smooth <= p + 1e-12) and np.all(smooth >= p - 1.0 / (n + 1) - 1e-12)
    # seeded folds: bit-identical refits
    again = SplitConformalClassifier(
        LogisticRegression(max_iter=500), cv=4, random_state=0
    ).fit(X[:150], y[:150])
    np.testing.assert_array_equal(again.predict_p(X_test), p)


def test_socop_cross_conformal_with_a_numeric_lam(digits):
    X, y, X_test, y_test = digits
    clf = SOCOPClassifier(LogisticRegression(max_iter=500), lam=0.1, cv=3).fit(X, y)
    assert clf.n_calibration_samples_ == N_FIT and len(clf.estimators_) == 3
    sets = clf.predict_set(X_test)
    assert sets[np.arange(len(y_test)), y_test].mean() >= 0.85
    with pytest.raises(ValueError, match='lam="auto"'):
        SOCOPClassifier(cv=3).fit(X, y)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"label_noise": 0.1}, "label_noise"),
        ({"conditional": "class"}, "conditional"),
        ({"shift": "covariate"}, "shift"),
    ],
)
def test_cross_conformal_refuses_what_it_does_not_support(digits, params, match):
    X, y, _, _ = digits
    with pytest.raises(ValueError, match=match):
        SplitConformalClassifier(cv=3, **params).fit(X, y)


def test_cross_conformal_refuses_a_frozen_model_and_a_partial_splitter(digits):
    from sklearn.model_selection import ShuffleSplit

    X, y, _, _ = digits
    model = LogisticRegression(max_iter=500).fit(X, y)
    with pytest.raises(TypeError, match="never refit"):
        SplitConformalClassifier(FrozenEstimator(model), cv=3).fit(X, y)
    with pytest.raises(TypeError, match="never refit"):
        SplitConformalClassifier(model, cv=3).calibrate(X, y)
    with pytest.raises(ValueError, match="held out"):
        SplitConformalClassifier(cv=ShuffleSplit(2, random_state=0)).fit(X, y)


# ---------------------------------------------------------------- cross-CQR
@pytest.mark.parametrize("symmetric", [True, False], ids=["sym", "asym"])
def test_cross_cqr_equals_mapie(symmetric):
    lightgbm = pytest.importorskip("lightgbm")
    regression = pytest.importorskip("mapie.regression")
    scores = pytest.importorskip("mapie.conformity_scores")
    X, y = load_diabetes(return_X_y=True)
    X_fit, y_fit, X_test = X[:200], y[:200], X[300:]
    folds = KFold(5, shuffle=True, random_state=1)
    est = lightgbm.LGBMRegressor(
        objective="quantile", alpha=0.5, n_estimators=20, n_jobs=1, verbose=-1
    )
    score = (
        scores.AbsoluteQuantileRegressionScore()
        if symmetric
        else scores.QuantileRegressionScore(sym=False)
    )
    theirs = regression.CrossConformalizedQuantileRegressor(
        est, confidence_level=0.9, conformity_score=score, method="plus", cv=folds
    ).fit_conformalize(X_fit, y_fit)
    _, interval = theirs.predict_interval(X_test)
    ours = ConformalizedQuantileRegressor(
        est, symmetric_correction=symmetric, conformal_cv=folds
    ).fit(X_fit, y_fit)
    np.testing.assert_allclose(
        ours.predict_interval(X_test), interval[:, :, 0], rtol=0, atol=1e-10
    )
    assert ours.n_calibration_samples_ == 200 and len(ours.fold_estimators_) == 5
    # contains and the per-call levels follow the same bounds
    bounds = ours.predict_interval(X_test, confidence_level=[0.8, 0.9])
    assert np.all(bounds[:, 0, 1] <= bounds[:, 0, 0])
    np.testing.assert_array_equal(bounds[..., 1], ours.predict_interval(X_test))
    inside = (bounds[:, 0, 1] <= y[300:]) & (y[300:] <= bounds[:, 1, 1])
    np.testing.assert_array_equal(ours.contains(X_test, y[300:]), inside)


def test_cross_cqr_refuses_what_it_cannot_do():
    from sklearn.linear_model import QuantileRegressor

    X, y = load_diabetes(return_X_y=True)
    X, y = X[:80], y[:80]
    pair = tuple(
        FrozenEstimator(QuantileRegressor(quantile=q, alpha=0.0).fit(X, y))
        for q in (0.05, 0.95)
    )
    with pytest.raises(TypeError, match="never refit"):
        ConformalizedQuantileRegressor(pair, conformal_cv=3).fit(X, y)
    with pytest.raises(ValueError, match="shift"):
        ConformalizedQuantileRegressor(conformal_cv=3, shift="covariate").fit(
            X, y, X_target=X
        )


# ------------------------------------------------------- top-k, tuned RAPS
@pytest.fixture(scope="module")
def weak_digits():
    """A weak model (16 pixels) so that the top-k quantile exceeds 0."""
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X = X[:, 16:32] / 16.0
    X_train, X_rest, y_train, y_rest = train_test_split(
        X, y, train_size=0.3, random_state=0
    )
    X_cal, X_test, y_cal, y_test = train_test_split(
        X_rest, y_rest, train_size=0.5, random_state=0
    )
    model = LogisticRegression(max_iter=500).fit(X_train, y_train)
    return model, X_cal, y_cal, X_test, y_test


def test_top_k_sets_equal_mapie(weak_digits):
    mapie = pytest.importorskip("mapie.classification")
    model, X_cal, y_cal, X_test, _ = weak_digits
    theirs = mapie.SplitConformalClassifier(
        model, confidence_level=0.9, conformity_score="top_k", prefit=True
    ).conformalize(X_cal, y_cal)
    expected = theirs.predict_set(X_test)[1][:, :, 0]
    ours = SplitConformalClassifier(model, conformity_score="top_k").calibrate(
        X_cal, y_cal
    )
    quantile = theirs._mapie_classifier.conformity_score_function_.quantiles_[0]
    assert ours.threshold_ == quantile >= 1
    np.testing.assert_array_equal(ours.predict_set(X_test), expected)
    assert np.all(expected.sum(axis=1) == quantile + 1)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("level", [0.8, 0.9])
def test_raps_auto_tunes_k_and_lam_as_mapie(weak_digits, seed, level):
    mapie = pytest.importorskip("mapie.classification")
    model, X_cal, y_cal, X_test, _ = weak_digits
    theirs = mapie.SplitConformalClassifier(
        model,
        confidence_level=level,
        conformity_score="raps",
        prefit=True,
        random_state=seed,
    ).conformalize(X_cal, y_cal)
    theirs.predict_set(X_test)  # MAPIE tunes k and lam at predict time
    score = theirs._mapie_classifier.conformity_score_function_
    ours = SplitConformalClassifier(
        model,
        confidence_level=level,
        conformity_score="raps",
        score_params={"lam_reg": "auto", "k_reg": "auto"},
    )
    ours._init_fit_state()
    ours.classes_ = model.classes_
    # the same tuning rows: MAPIE's (its own stratified split)
    ours._tune(model.predict_proba(score.X_raps), score.y_raps, None)
    assert ours.k_reg_ == int(np.ravel(score.k_star)[0]) >= 2
    assert ours.lam_reg_ == pytest.approx(float(score.lambda_star))


def test_raps_auto_fit_end_to_end(weak_digits):
    model, X_cal, y_cal, X_test, y_test = weak_digits
    clf = SplitConformalClassifier(
        model,
        conformity_score="raps",
        score_params={"lam_reg": "auto", "k_reg": "auto", "tuning_size": 0.3},
        random_state=0,
    ).calibrate(X_cal, y_cal)
    assert clf.k_reg_ >= 1 and clf.lam_reg_ in (0.001, 0.01, 0.1, 0.2, 0.5)
    # 30 % of the rows tuned, the rest calibrated
    assert clf.n_calibration_samples_ < 0.75 * len(y_cal)
    sets = clf.predict_set(X_test)
    assert sets[np.arange(len(y_test)), y_test].mean() >= 0.85
    with pytest.raises(ValueError, match="tuning_size"):
        SplitConformalClassifier(
            conformity_score="lac", score_params={"tuning_size": 0.2}
        ).fit(X_cal, y_cal)
    with pytest.raises(ValueError, match="tuned score"):
        SplitConformalClassifier(
            conformity_score="raps", score_params={"lam_reg": "auto"}, cv=3
        ).fit(X_cal, y_cal)
