"""Real tabular workflows of the conformal classifiers (issues 10 and 11).

Raw DataFrames through a wrapped pipeline, a deployed pipeline frozen,
scorers that tune what the sets are for, set metrics that never answer
silently wrong, sparse sets and row batches.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import sklearn
from lightgbm import LGBMClassifier
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_digits, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_iclr26.conformal import SOCOPClassifier, SplitConformalClassifier
from sklearn_iclr26.conformal._scorers import SCORERS, set_efficiency
from sklearn_iclr26.metrics import (
    MethodScorer,
    coverage_score,
    get_scorer,
    get_scorer_names,
    mean_set_size,
    multiple_prediction_rate,
    set_size_stratified_coverage_violation,
    singleton_rate,
)

# ---------------------------------------------------------------- raw DataFrame


def _raw_frame(n=900, seed=0):
    """Mixed DataFrame: string categoricals, numbers, string labels."""
    rng = np.random.RandomState(seed)
    region = rng.choice(["north", "south", "east", "west"], size=n)
    job = rng.choice(["clerk", "nurse", "driver"], size=n)
    age = rng.uniform(18, 70, size=n)
    income = rng.lognormal(10, 0.5, size=n)
    logit = (
        (region == "north") * 1.5
        - (job == "driver") * 1.0
        + (age - 45) / 10
        + rng.normal(size=n)
    )
    label = np.where(logit > 0.8, "high", np.where(logit < -0.8, "low", "mid"))
    frame = pd.DataFrame({"region": region, "job": job, "age": age, "income": income})
    return frame, label


def _pipeline():
    pre = ColumnTransformer(
        [
            ("cat", OneHotEncoder(handle_unknown="ignore"), ["region", "job"]),
            ("num", "passthrough", ["age", "income"]),
        ]
    )
    lgbm = LGBMClassifier(n_estimators=40, min_child_samples=10, verbose=-1, n_jobs=1)
    return Pipeline([("pre", pre), ("model", lgbm)])


@pytest.mark.parametrize(
    "make",
    [
        lambda est: SOCOPClassifier(est, random_state=0),
        lambda est: SplitConformalClassifier(
            est, conformity_score="aps", random_state=0
        ),
    ],
    ids=["socop", "split"],
)
def test_raw_dataframe_through_a_wrapped_pipeline(make):
    frame, label = _raw_frame()
    X_fit, X_test, y_fit, y_test = train_test_split(frame, label, random_state=0)
    clf = make(_pipeline()).fit(X_fit, y_fit)
    assert list(clf.feature_names_in_) == list(frame.columns)
    assert clf.n_features_in_ == 4
    assert sorted(clf.classes_) == ["high", "low", "mid"]
    sets = clf.predict_set(X_test)
    assert sets.shape == (len(y_test), 3)
    cov = coverage_score(y_test, sets, classes=clf.classes_)
    assert cov > 0.8  # level 0.9, 225 test rows: 0.8 is 5 standard errors below
    assert set(clf.predict(X_test)) <= set(clf.classes_)
    # columns in another order are refused by name, as scikit-learn does
    with pytest.raises(ValueError, match="feature names"):
        clf.predict_set(X_test[["job", "region", "age", "income"]])
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(restored.predict_set(X_test), sets)


def test_frozen_deployed_pipeline_is_calibrated_on_raw_data():
    frame, label = _raw_frame(seed=1)
    X_train, X_rest, y_train, y_rest = train_test_split(
        frame, label, test_size=0.5, random_state=0
    )
    X_cal, X_test, y_cal, y_test = train_test_split(
        X_rest, y_rest, test_size=0.5, random_state=0
    )
    deployed = _pipeline().fit(X_train, y_train)
    clf = SplitConformalClassifier(FrozenEstimator(deployed)).fit(X_cal, y_cal)
    assert clf.n_calibration_samples_ == len(y_cal)
    np.testing.assert_array_equal(clf.predict(X_test), deployed.predict(X_test))
    socop = SOCOPClassifier(FrozenEstimator(deployed), random_state=0)
    sets = socop.fit(X_cal, y_cal).predict_set(X_test, output="sparse")
    assert coverage_score(y_test, sets, classes=socop.classes_) > 0.8


def test_default_inner_model_does_not_warn_on_raw_numeric_data():
    X, y = make_classification(n_samples=600, n_features=8, random_state=0)
    X = X * np.array([1, 10, 100, 1e3, 1e4, 1, 1, 1]) + 5e3  # raw units
    for clf in (SOCOPClassifier(random_state=0), SplitConformalClassifier()):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            clf.fit(X, y).predict_set(X)


# ---------------------------------------------------------------- scorers


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X, y


def _search(estimator, grid, scoring, data):
    X, y = data
    if isinstance(scoring, str):
        scoring = get_scorer(scoring)  # the package's names, then scikit-learn's
    search = GridSearchCV(estimator, grid, scoring=scoring, cv=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return search.fit(X, y)


def test_scorers_are_registered_with_their_sign(digits):
    names = get_scorer_names()
    for name in ("set_coverage", "neg_mean_set_size", "singleton_rate"):
        # get_scorer hands out a copy (set_score_request must not leak)
        scorer = get_scorer(name)
        assert name in names and scorer is not SCORERS[name]
        assert scorer.score_func is SCORERS[name].score_func
    assert "set_efficiency" in names
    X, y = digits
    clf = SplitConformalClassifier(GaussianNB(), random_state=0).fit(X, y)
    sets = clf.predict_set(X)
    assert SCORERS["set_coverage"](clf, X, y) == coverage_score(
        y, sets, classes=clf.classes_
    )
    assert SCORERS["neg_mean_set_size"](clf, X, y) == -mean_set_size(sets)
    assert SCORERS["singleton_rate"](clf, X, y) == singleton_rate(sets)
    # efficiency: minus (size + K * shortfall)
    cov = coverage_score(y, sets, classes=clf.classes_)
    expected = -(mean_set_size(sets) + 10 * max(0.0, 0.9 - cov))
    assert SCORERS["set_efficiency"](clf, X, y) == pytest.approx(expected)
    # a Pipeline ending in the conformal classifier is scored through its steps
    pipe = make_pipeline(StandardScaler(), SplitConformalClassifier(random_state=0))
    pipe.fit(X, y)
    direct = mean_set_size(pipe[-1].predict_set(pipe[:-1].transform(X)))
    assert SCORERS["neg_mean_set_size"](pipe, X, y) == -direct
    assert pickle.loads(pickle.dumps(SCORERS["set_efficiency"]))(clf, X, y) == (
        SCORERS["set_efficiency"](clf, X, y)
    )


def test_grid_search_each_scorer_picks_the_known_answer(digits):
    """Sets are nested in the level (same model and calibration split in a
    fold), so coverage grows with it, size grows, singletons shrink (weakly:
    a tie keeps the first, so the grids are spaced enough to separate): each
    scorer's known choice is the last grid value, never the first. The
    default score (the inner model's accuracy) ties and keeps the first.
    """
    base = SplitConformalClassifier(GaussianNB(), random_state=0)
    # (GaussianNB on digits: mean sizes about 1.0, 1.24, 1.55 at these levels)
    levels_up = {"confidence_level": [0.8, 0.9, 0.95]}
    levels_down = {"confidence_level": [0.95, 0.9, 0.8]}
    accuracy = _search(base, levels_up, None, digits)
    assert accuracy.best_params_["confidence_level"] == 0.8  # the tie
    assert (
        _search(base, levels_up, "set_coverage", digits).best_params_[
            "confidence_level"
        ]
        == 0.95
    )
    assert (
        _search(base, levels_down, "neg_mean_set_size", digits).best_params_[
            "confidence_level"
        ]
        == 0.8
    )
    assert (
        _search(
            base, {"confidence_level": [0.95, 0.8]}, "singleton_rate", digits
        ).best_params_["confidence_level"]
        == 0.8
    )
    # efficiency subject to coverage at a fixed target of 0.9: the lower
    # level is smaller but undercovers (coverage about 0.8 < 0.9), so the
    # level that meets the target wins; size alone picks the lower level
    efficiency_at_90 = MethodScorer(set_efficiency, sign=-1, target_level=0.9)
    grid = {"confidence_level": [0.8, 0.9]}
    assert (
        _search(base, grid, efficiency_at_90, digits).best_params_["confidence_level"]
        == 0.9
    )
    assert (
        _search(base, grid, "neg_mean_set_size", digits).best_params_[
            "confidence_level"
        ]
        == 0.8
    )


def test_set_efficiency_prefers_the_informative_model_and_lac(digits):
    """Model selection with the registered scorer, at the estimator's level.

    Between a constant model (every label equally likely: full sets) and a
    fitted one, the fitted one; between APS (conservative without
    randomization) and LAC (the smallest expected size at a given coverage,
    Sadinle et al. 2019), LAC. Both are listed second in their grids.
    """
    from sklearn.dummy import DummyClassifier

    models = {"estimator": [DummyClassifier(strategy="uniform"), GaussianNB()]}
    base = SplitConformalClassifier(random_state=0)
    best = _search(base, models, "set_efficiency", digits).best_params_
    assert isinstance(best["estimator"], GaussianNB)
    scores = {"conformity_score": ["aps", "lac"]}
    lac_model = SplitConformalClassifier(
        make_pipeline(StandardScaler(), LogisticRegression(C=0.05, max_iter=500)),
        random_state=0,
    )
    search = _search(lac_model, scores, "set_efficiency", digits)
    assert search.best_params_["conformity_score"] == "lac"
    # the default score (accuracy of the same inner model) ties here
    ties = _search(lac_model, scores, None, digits).cv_results_["mean_test_score"]
    assert ties[0] == ties[1]


# ---------------------------------------------------------------- metrics


def test_metrics_refuse_labels_that_are_not_column_indices():
    sets = np.ones((3, 3), dtype=bool)
    # labels {1, 2, 3}: before, coverage 0.0 silently; now an error naming classes
    with pytest.raises(ValueError, match="classes="):
        coverage_score([1, 2, 3], sets)
    assert coverage_score([1, 2, 3], sets, classes=[1, 2, 3]) == 1.0
    # string labels: before, a TypeError from numpy
    with pytest.raises(ValueError, match="classes="):
        coverage_score(["a", "b", "c"], sets)
    one_hot = np.eye(3, dtype=bool)
    assert coverage_score(["c", "b", "a"], one_hot, classes=["c", "b", "a"]) == 1.0
    assert coverage_score(["a", "b", "c"], one_hot, classes=["c", "b", "a"]) == (
        pytest.approx(1 / 3)
    )
    # a label outside the classes: before, silently "not covered"
    with pytest.raises(ValueError, match=r"not among classes"):
        coverage_score(["a", "b", "z"], sets, classes=["a", "b", "c"])
    with pytest.raises(ValueError, match="columns"):
        coverage_score([0, 1, 2], sets, classes=["a", "b"])
    with pytest.raises(ValueError, match="classes="):
        set_size_stratified_coverage_violation([1, 2, 3], sets, confidence_level=0.9)
    # an estimator's classes_ is the usual argument
    X, y = make_classification(n_samples=300, n_classes=3, n_informative=4)
    labels = np.array(["x", "y", "z"])[y]
    clf = SplitConformalClassifier(random_state=0).fit(X, labels)
    assert coverage_score(labels, clf.predict_set(X), classes=clf.classes_) > 0.8


def test_metrics_accept_sparse_sets():
    rng = np.random.RandomState(0)
    dense = rng.uniform(size=(200, 7)) < 0.25
    y = rng.randint(0, 7, size=200)
    for fmt in (sp.csr_array, sp.csr_matrix, sp.csc_array, sp.coo_matrix):
        sparse = fmt(dense)
        assert coverage_score(y, sparse) == coverage_score(y, dense)
        assert mean_set_size(sparse) == mean_set_size(dense)
        assert singleton_rate(sparse) == singleton_rate(dense)
        assert multiple_prediction_rate(sparse, k0=2) == multiple_prediction_rate(
            dense, k0=2
        )
        assert set_size_stratified_coverage_violation(
            y, sparse, confidence_level=0.8
        ) == set_size_stratified_coverage_violation(y, dense, confidence_level=0.8)


# ---------------------------------------------------------------- scale


@pytest.mark.parametrize(
    "clf",
    [
        SOCOPClassifier(GaussianNB(), random_state=0),
        SOCOPClassifier(GaussianNB(), lam=0.05, k0=2, random_state=0),
        SplitConformalClassifier(
            GaussianNB(),
            conformity_score="raps",
            score_params={"randomized": True, "k_reg": 2},
            random_state=0,
        ),
    ],
    ids=["socop", "socop_k0_2", "raps_randomized"],
)
def test_sparse_equals_dense_and_batches_equal_one_batch(clf, digits):
    X, y = digits
    clf.fit(X[:1200], y[:1200])
    X_test = X[1200:]
    with sklearn.config_context(working_memory=1024):
        dense = clf.predict_set(X_test)
        sparse = clf.predict_set(X_test, output="sparse")
        scores = clf.conformity_scores(X_test)
        other_level = clf.predict_set(X_test, confidence_level=0.8, output="sparse")
    np.testing.assert_array_equal(sparse.toarray(), dense)
    with sklearn.config_context(working_memory=4e-3):  # batches of about 10 rows
        np.testing.assert_array_equal(clf.predict_set(X_test), dense)
        np.testing.assert_array_equal(
            clf.predict_set(X_test, output="sparse").toarray(), dense
        )
        np.testing.assert_array_equal(clf.conformity_scores(X_test), scores)
        np.testing.assert_array_equal(
            clf.predict_set(X_test, confidence_level=0.8, output="sparse").toarray(),
            other_level.toarray(),
        )
    # the sets are the thresholded scores (plus the top label of empty sets)
    raw = scores <= clf.threshold_
    np.testing.assert_array_equal(dense[raw.any(axis=1)], raw[raw.any(axis=1)])
    # a DataFrame batches the same way
    frame = pd.DataFrame(X_test)
    clf_frame = sklearn.clone(clf).fit(pd.DataFrame(X[:1200]), y[:1200])
    with sklearn.config_context(working_memory=4e-3):
        np.testing.assert_array_equal(clf_frame.predict_set(frame), dense)


def test_readme_tuning_grid_does_not_tie():
    """The README's tuning line scores distinct values and picks the best.

    Its former grid over ``lam`` tied at -1.0 (every wine set is a
    singleton) and kept the first value; a grid the sets depend on does not.
    """
    from sklearn.compose import make_column_transformer
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True, as_frame=True)
    X["region"] = pd.cut(X["alcohol"], 3, labels=["north", "centre", "south"])
    X["region"] = X["region"].astype(str)
    y = y.map({0: "barolo", 1: "grignolino", 2: "barbera"})
    model = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), ["region"]),
            remainder="passthrough",
        ),
        LGBMClassifier(n_estimators=50, verbose=-1),
    )
    clf = SOCOPClassifier(model, confidence_level=0.9, random_state=0)
    search = GridSearchCV(
        clf,
        {"estimator__lgbmclassifier__n_estimators": [3, 10, 50]},
        scoring=get_scorer("set_efficiency"),
    ).fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    assert np.unique(scores).size == 3
    assert search.best_params_ == {"estimator__lgbmclassifier__n_estimators": 50}
