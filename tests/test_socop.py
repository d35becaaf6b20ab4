"""Tests of SOCOPClassifier and SplitConformalClassifier: validity, efficiency, API."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import load_digits, load_iris, make_classification
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from sklearn.utils.validation import check_random_state

from sklearn_iclr26.conformal import SOCOPClassifier, SplitConformalClassifier
from sklearn_iclr26.metrics import (
    coverage_score,
    mean_set_size,
    multiple_prediction_rate,
)
from sklearn_iclr26.neural_network import TorchMLPClassifier
from sklearn_iclr26.utils._random import seed_from_random_state
from sklearn_iclr26.utils._split import split_indices

N_SPLITS = 100
N_CAL = 500
FWER = 0.01

# (name, factory of an unfitted conformal classifier around a frozen model,
#  whether the scores are continuous so that the upper bound holds)
METHODS = [
    ("lac", lambda m: SplitConformalClassifier(m, conformity_score="lac"), True),
    # non-randomized APS sets include the label crossing the threshold: they
    # contain the randomized set of every draw, so coverage is conservative
    ("aps", lambda m: SplitConformalClassifier(m, conformity_score="aps"), False),
    (
        "aps_randomized",
        lambda m: SplitConformalClassifier(
            m, conformity_score="aps", score_params={"randomized": True}
        ),
        True,
    ),
    # non-randomized RAPS likewise (its sets include the crossing label)
    (
        "raps",
        lambda m: SplitConformalClassifier(
            m, conformity_score="raps", score_params={"lam_reg": 0.01, "k_reg": 2}
        ),
        False,
    ),
    ("margin", lambda m: SplitConformalClassifier(m, conformity_score="margin"), True),
    ("socop_0.05", lambda m: SOCOPClassifier(m, lam=0.05), True),
    ("socop_auto", lambda m: SOCOPClassifier(m, lam="auto"), True),
    ("socop_k0_2", lambda m: SOCOPClassifier(m, lam=0.05, k0=2), True),
    # lam = 0: every top label scores exactly 0, ties make coverage conservative
    ("socop_0", lambda m: SOCOPClassifier(m, lam=0.0), False),
]
LEVELS = [0.95, 0.9, 0.8]


@pytest.fixture(scope="module")
def digits_model_and_pool():
    X, y = load_digits(return_X_y=True)
    X_train, X_pool, y_train, y_pool = train_test_split(
        X, y, train_size=500, random_state=0, stratify=y
    )
    model = LogisticRegression(C=1e-4, max_iter=2000).fit(X_train, y_train)
    return model, X_pool, y_pool


@pytest.mark.parametrize("level", LEVELS)
def test_coverage_validity_over_random_splits(level, digits_model_and_pool):
    """MAPIE-style: a fixed model, many random calibration/test splits.

    Conditionally on the calibration set, coverage is Beta distributed with
    mean in [level, level + 1 / (n + 1)] for continuous scores. One-sided
    t-tests on the mean coverage over the splits, Bonferroni-corrected over all
    (method, level, side) cells at a 1% family-wise error.
    """
    model, X_pool, y_pool = digits_model_and_pool
    frozen = FrozenEstimator(model)
    n_tests = len(METHODS) * len(LEVELS) * 2
    test_level = FWER / n_tests
    for name, factory, continuous in METHODS:
        coverages = []
        for split in range(N_SPLITS):
            X_cal, X_test, y_cal, y_test = train_test_split(
                X_pool, y_pool, train_size=N_CAL, random_state=split
            )
            if name == "socop_auto":
                # the tuning split comes out of the data given to fit
                X_cal, y_cal = (
                    np.vstack([X_cal, X_test[:300]]),
                    np.r_[y_cal, y_test[:300]],
                )
                X_test, y_test = X_test[300:], y_test[300:]
            clf = factory(frozen).set_params(
                confidence_level=level, allow_empty=True, random_state=split
            )
            if name == "socop_auto":
                clf.set_params(calibration_size=N_CAL / len(y_cal), tuning_size=0.3)
            clf.fit(X_cal, y_cal)
            sets = clf.predict_set(X_test)
            coverages.append(coverage_score(y_test, sets, classes=clf.classes_))
        coverages = np.asarray(coverages)
        n_cal = clf.n_calibration_samples_
        low = stats.ttest_1samp(coverages, level, alternative="less").pvalue
        assert low > test_level, (name, level, coverages.mean())
        if continuous:
            upper = level + 1 / (n_cal + 1)
            high = stats.ttest_1samp(coverages, upper, alternative="greater").pvalue
            assert high > test_level, (name, level, coverages.mean(), upper)


def test_allow_empty_false_only_adds_the_top_label(digits_model_and_pool):
    model, X_pool, y_pool = digits_model_and_pool
    kwargs = {"lam": 0.5, "confidence_level": 0.7, "random_state": 0}
    with_empty = SOCOPClassifier(FrozenEstimator(model), allow_empty=True, **kwargs)
    without = SOCOPClassifier(FrozenEstimator(model), allow_empty=False, **kwargs)
    sets_a = with_empty.fit(X_pool, y_pool).predict_set(X_pool)
    sets_b = without.fit(X_pool, y_pool).predict_set(X_pool)
    empty = ~sets_a.any(axis=1)
    assert empty.any(), "the setting should produce empty sets"
    assert np.all(sets_b.sum(axis=1) >= 1)
    np.testing.assert_array_equal(sets_a[~empty], sets_b[~empty])
    np.testing.assert_array_equal(sets_b[empty].sum(axis=1), 1)
    top = np.argmax(model.predict_proba(X_pool[empty]), axis=1)
    assert np.all(sets_b[empty][np.arange(empty.sum()), top])


def test_socop_lowers_non_singleton_rate_against_lac_on_digits():
    """The paper's direction on real data, averaged over random splits."""
    X, y = load_digits(return_X_y=True)
    lac_rates, socop_rates, lac_sizes, socop_sizes = [], [], [], []
    for split in range(10):
        X_fit, X_test, y_fit, _ = train_test_split(
            X, y, test_size=0.3, random_state=split, stratify=y
        )
        base = LogisticRegression(C=1e-4, max_iter=2000)
        lac = SplitConformalClassifier(base, confidence_level=0.9, random_state=split)
        socop = SOCOPClassifier(base, confidence_level=0.9, random_state=split)
        lac_sets = lac.fit(X_fit, y_fit).predict_set(X_test)
        socop_sets = socop.fit(X_fit, y_fit).predict_set(X_test)
        lac_rates.append(multiple_prediction_rate(lac_sets))
        socop_rates.append(multiple_prediction_rate(socop_sets))
        lac_sizes.append(mean_set_size(lac_sets))
        socop_sizes.append(mean_set_size(socop_sets))
    assert np.mean(socop_rates) < 0.7 * np.mean(lac_rates)
    assert np.mean(socop_sizes) < np.mean(lac_sizes) + 1.0


def test_lam_auto_records_the_path_and_picks_a_grid_value():
    X, y = load_digits(return_X_y=True)
    clf = SOCOPClassifier(GaussianNB(), random_state=0).fit(X, y)
    path = clf.lam_path_
    assert set(path) == {"lam", "mean_size", "multiple_rate", "coverage", "sscv"}
    assert clf.lam_ in path["lam"]
    # lam moves along the trade-off: larger lam, smaller sets
    assert path["mean_size"][0] >= path["mean_size"][-1]
    clf_sscv = SOCOPClassifier(GaussianNB(), lam_criterion="sscv", random_state=0)
    clf_sscv.fit(X, y)
    best = np.argmin(clf_sscv.lam_path_["sscv"])
    assert clf_sscv.lam_ == clf_sscv.lam_path_["lam"][best]


def test_numeric_lam_and_predict_set_level_override():
    X, y = load_iris(return_X_y=True)
    clf = SOCOPClassifier(lam=0.2, random_state=0).fit(X, y)
    assert clf.lam_ == 0.2 and clf.lam_path_ is None
    small = clf.predict_set(X, confidence_level=0.7).sum()
    large = clf.predict_set(X, confidence_level=0.95).sum()
    assert small <= large
    scores = clf.conformity_scores(X)
    np.testing.assert_array_equal(
        clf.predict_set(X), (scores <= clf.threshold_) | _top_if_empty(scores, clf)
    )


def _top_if_empty(scores, clf):
    sets = scores <= clf.threshold_
    extra = np.zeros_like(sets)
    empty = ~sets.any(axis=1)
    extra[np.flatnonzero(empty), np.argmin(scores[empty], axis=1)] = True
    return extra


@pytest.mark.parametrize(
    "estimator",
    [
        GaussianNB(),
        make_pipeline(StandardScaler(), LogisticRegression()),
        TorchMLPClassifier(max_iter=50, random_state=0),
    ],
    ids=["nb", "pipeline", "torch"],
)
def test_works_with_various_probabilistic_classifiers(estimator):
    X, y = load_iris(return_X_y=True)
    clf = SOCOPClassifier(estimator, random_state=0).fit(X, y)
    sets = clf.predict_set(X)
    assert sets.shape == (150, 3) and sets.dtype == bool
    assert coverage_score(y, sets, classes=clf.classes_) > 0.8


def test_works_with_lightgbm_and_string_labels():
    from lightgbm import LGBMClassifier

    X, y = make_classification(
        n_samples=400, n_classes=3, n_informative=5, random_state=0
    )
    labels = np.array(["ant", "bee", "cat"])[y]
    clf = SOCOPClassifier(
        LGBMClassifier(n_estimators=30, n_jobs=1, verbose=-1), random_state=0
    ).fit(X, labels)
    assert list(clf.classes_) == ["ant", "bee", "cat"]
    assert set(clf.predict(X)) <= set(clf.classes_)
    assert clf.predict_set(X).shape == (400, 3)


def test_prefit_model_with_frozen_estimator_uses_all_data():
    X, y = load_digits(return_X_y=True)
    X_train, X_rest, y_train, y_rest = train_test_split(X, y, random_state=0)
    model = GaussianNB().fit(X_train, y_train)
    clf = SOCOPClassifier(FrozenEstimator(model), lam=0.1).fit(X_rest, y_rest)
    assert clf.estimator_ is not None and clf.estimator_.estimator is model
    assert clf.n_calibration_samples_ == len(y_rest)
    np.testing.assert_array_equal(clf.predict(X_rest), model.predict(X_rest))
    auto = SOCOPClassifier(FrozenEstimator(model), random_state=0).fit(X_rest, y_rest)
    expected = len(y_rest) - int(np.floor(0.2 / 0.5 * len(y_rest)))
    assert auto.n_calibration_samples_ == expected


def test_pipeline_grid_search_and_determinism():
    # pickle and the GridSearch contract: tests/test_common_contracts.py
    X, y = load_digits(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), SOCOPClassifier(random_state=0))
    grid = GridSearchCV(pipe, {"socopclassifier__confidence_level": [0.95, 0.9]}, cv=3)
    grid.fit(X, y)
    # the same folds: within 3 points of a logistic regression trained on every
    # row (SOCOP's model sees 3/4 of them): 0.920 against 0.929
    linear = make_pipeline(StandardScaler(), LogisticRegression())
    assert grid.best_score_ >= cross_val_score(linear, X, y, cv=3).mean() - 0.03

    a = SOCOPClassifier(GaussianNB(), random_state=3).fit(X, y)
    b = SOCOPClassifier(GaussianNB(), random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.calibration_scores_, b.calibration_scores_)
    assert a.lam_ == b.lam_
    np.testing.assert_array_equal(a.predict_set(X), b.predict_set(X))


def test_randomized_aps_is_reproducible():
    X, y = load_iris(return_X_y=True)
    params = {"conformity_score": "aps", "score_params": {"randomized": True}}
    a = SplitConformalClassifier(random_state=1, **params).fit(X, y)
    b = SplitConformalClassifier(random_state=1, **params).fit(X, y)
    np.testing.assert_array_equal(a.predict_set(X), b.predict_set(X))


def test_bad_inputs_raise_clear_errors():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="confidence_level"):
        SOCOPClassifier(confidence_level=1.5).fit(X, y)
    with pytest.raises(ValueError, match="confidence_level"):
        SOCOPClassifier(confidence_level=0.0).fit(X, y)
    clf = SOCOPClassifier(lam=0.1, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="open interval"):
        clf.predict_set(X, confidence_level=2.0)
    # an estimator without predict_proba is named in the error
    with pytest.raises(ValueError, match="predict_proba"):
        SOCOPClassifier(LinearSVC()).fit(X, y)
    with pytest.raises(TypeError, match="LinearSVC"):
        SOCOPClassifier(FrozenEstimator(LinearSVC().fit(X, y))).fit(X, y)
    # NaN only if the base estimator accepts it
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SOCOPClassifier(lam=0.1).fit(X_nan, y)
    hgb = HistGradientBoostingClassifier(max_iter=20)
    SOCOPClassifier(hgb, lam=0.1, random_state=0).fit(X_nan, y).predict_set(X_nan)
    # wrong number of features at predict time
    with pytest.raises(ValueError, match="features"):
        clf.predict_set(X[:, :2])
    with pytest.raises(ValueError, match="calibration_size"):
        SOCOPClassifier(calibration_size=0.6, tuning_size=0.5).fit(X, y)


def test_too_small_calibration_set_warns_and_gives_full_sets():
    X, y = load_iris(return_X_y=True)
    idx = np.r_[0:10, 50:60, 100:110]
    with pytest.warns(UserWarning, match="too few"):
        clf = SOCOPClassifier(lam=0.1, confidence_level=0.95, random_state=0).fit(
            X[idx], y[idx]
        )
    assert np.isinf(clf.threshold_)
    assert clf.predict_set(X).all()


def test_unseen_labels_in_calibration_raise():
    X, y = load_iris(return_X_y=True)
    model = GaussianNB().fit(X[y < 2], y[y < 2])
    with pytest.raises(ValueError, match=r"never saw in training"):
        SOCOPClassifier(FrozenEstimator(model), lam=0.1).fit(X, y)


def test_sample_weight_is_routed_to_the_training_split():
    """Non-uniform weights reach the inner fit on the training rows only."""
    X, y = load_iris(return_X_y=True)
    weights = np.random.RandomState(0).uniform(0.1, 5.0, size=len(y))
    clf = SOCOPClassifier(LogisticRegression(max_iter=1000), lam=0.1, random_state=0)
    clf.fit(X, y, sample_weight=weights)
    # the same split: the training rows are those the unweighted fit used
    unweighted = SOCOPClassifier(
        LogisticRegression(max_iter=1000), lam=0.1, random_state=0
    )
    unweighted.fit(X, y)
    assert not np.allclose(clf.predict_proba(X), unweighted.predict_proba(X))
    # equal to fitting the model by hand on the training rows with their weights
    rng = check_random_state(0)
    seed_from_random_state(rng)
    train = split_indices(len(y), [0.7], y=y, random_state=rng)[0]
    by_hand = LogisticRegression(max_iter=1000)
    by_hand.fit(X[train], y[train], sample_weight=weights[train])
    np.testing.assert_allclose(clf.predict_proba(X), by_hand.predict_proba(X))


class _ProbaPassThrough(LogisticRegression):
    """A 'fitted' classifier whose input is its probability matrix."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        return np.asarray(X)


@pytest.mark.parametrize("conditional", [None, "class"])
@pytest.mark.parametrize("kind", ["lac", "socop"])
def test_fast_predict_set_equals_thresholded_scores(kind, conditional):
    """predict_set (blocked, sort-free set rules) equals ``scores <= threshold_``
    exactly, on probabilities with ties, at the fitted and other levels."""
    rng = np.random.default_rng(3)
    K = 6
    P = rng.dirichlet(np.full(K, 0.5), size=900)
    grid = np.round(P[::3] * 4) / 4  # ties on a grid of quarters
    grid[grid.sum(axis=1) == 0, 0] = 1.0
    P[::3] = grid / grid.sum(axis=1, keepdims=True)
    P[1::7] = 1.0 / K
    y = np.arange(900) % K
    model = FrozenEstimator(_ProbaPassThrough().fit(P, y))
    if kind == "lac":
        est = SplitConformalClassifier(model, conditional=conditional, allow_empty=True)
    else:
        est = SOCOPClassifier(
            model, lam=0.05, conditional=conditional, allow_empty=True
        )
    est.fit(P[:600], y[:600])
    scores = est.conformity_scores(P[600:])
    for level in [None, 0.5, 0.8, 0.95]:
        threshold = est.threshold_ if level is None else est._threshold(level)
        expected = scores <= np.asarray(threshold)[None, ...]
        np.testing.assert_array_equal(
            est.predict_set(P[600:], confidence_level=level), expected
        )
