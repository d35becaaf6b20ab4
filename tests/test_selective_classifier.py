"""Tests of SelectiveClassifier, RiskControlDisplay and the selective scorers.

The precision case equals MAPIE 1.6's ``BinaryClassificationController``
(same scores, same grid: the same certified thresholds and the same chosen
one). Validity over calibration draws is checked with a stated error rate
(a 99% binomial band); the 200-split count is ``benchmarks/selective_validity.py``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings

import numpy as np
import pytest
import sklearn
from scipy.stats import binom
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.metrics import RiskControlDisplay, get_scorer
from sklearn_iclr26.risk_control import SelectiveClassifier
from sklearn_iclr26.utils._sklearn_compat import InvalidParameterError

# a grid whose first (most confident) threshold accepts enough rows of this
# moderately regularised model for fixed-sequence testing to get started
GRID = np.linspace(0.5, 0.98, 25)


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_rest, y_train, y_rest = train_test_split(
        X, y, test_size=0.6, random_state=0, stratify=y
    )
    model = make_pipeline(StandardScaler(), LogisticRegression(C=0.05)).fit(
        X_train, y_train
    )
    return model, X_rest, y_rest


def _frozen_fit(model, X, y, **params):
    return SelectiveClassifier(FrozenEstimator(model), **params).fit(X, y)


@pytest.mark.parametrize("fwer", ["fixed_sequence", "bonferroni"])
@pytest.mark.parametrize("target_risk", [0.02, 0.05, 0.1])
def test_precision_equals_mapie_controller(cancer, fwer, target_risk):
    risk_control = pytest.importorskip("mapie.risk_control")
    model, X, y = cancer
    grid = np.linspace(0.99, 0.0, 100)  # MAPIE's grid, tested from the top
    # MAPIE's built-in precision computes the risk as 1 - precision, whose
    # float error can push ceil(n * risk) one error up (176 * (1 - 173/176)
    # = 3.0000000000000075): the same risk counted as errors among the
    # predicted positives, as we count it, is a custom BinaryRisk
    errors_among_positives = risk_control.BinaryRisk(
        risk_occurrence=lambda y_true, y_pred: y_true.ravel() != 1,
        risk_condition=lambda y_true, y_pred: y_pred.ravel() == 1,
        higher_is_better=False,
    )
    controller = risk_control.BinaryClassificationController(
        model.predict_proba,
        errors_among_positives,
        target_risk,
        confidence_level=0.9,
        best_predict_param_choice="recall",
        list_predict_params=grid,
        fwer_method=fwer,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        controller.calibrate(X, y)
        ours = _frozen_fit(
            model,
            X,
            y,
            risk="precision",
            target_risk=target_risk,
            thresholds=grid,
            fwer=fwer,
        )
    curve = ours.risk_curve_
    certified = np.sort(curve["parameter"][1:][curve["certified"][1:]])
    np.testing.assert_array_equal(certified, np.sort(controller.valid_predict_params))
    np.testing.assert_allclose(
        curve["p_value"][1:], np.ravel(controller.p_values), rtol=1e-10
    )
    if controller.best_predict_param is None:
        assert not ours.certified_ and ours.threshold_ == np.inf
    else:
        assert ours.threshold_ == controller.best_predict_param
        np.testing.assert_array_equal(ours.predict(X), controller.predict(X))


def test_fit_predict_accept_and_attributes(cancer):
    model, X, y = cancer
    clf = _frozen_fit(model, X, y, target_risk=0.05, thresholds=GRID)
    accepted = clf.accept(X)
    assert accepted.dtype == bool and accepted.shape == (X.shape[0],)
    assert clf.certified_ and 0 < clf.chosen_index_
    np.testing.assert_array_equal(accepted, clf.confidence_score(X) >= clf.threshold_)
    # calibration attributes agree with the rows themselves
    assert clf.calibration_acceptance_rate_ == pytest.approx(accepted.mean())
    errors = clf.predict(X)[accepted] != y[accepted]
    assert clf.calibration_risk_ == pytest.approx(errors.mean())
    assert clf.calibration_risk_ <= 0.05
    np.testing.assert_array_equal(clf.predict(X), model.predict(X))
    np.testing.assert_allclose(clf.predict_proba(X), model.predict_proba(X))
    np.testing.assert_allclose(clf.decision_function(X), model.decision_function(X))
    curve = clf.risk_curve_
    assert set(curve) >= {"parameter", "risk", "cost", "p_value", "certified"}
    # fixed sequence from the most confident end: the certified set is a prefix
    certified = curve["certified"]
    assert certified[: np.flatnonzero(~certified)[0]].all()
    assert not certified[np.flatnonzero(~certified)[0] :].any()
    assert np.all(np.diff(curve["parameter"][1:]) < 0)


def test_fnr_and_crc(cancer):
    model, X, y = cancer
    for method in ["ltt", "crc"]:
        clf = _frozen_fit(model, X, y, risk="fnr", target_class=0, method=method)
        assert clf.target_class_ == 0
        accepted = clf.accept(X)
        missed = accepted & (clf.predict(X) != 0) & (y == 0)
        # the miss rate of class 0 on the calibration rows, as recorded
        assert missed.sum() / (y == 0).sum() == pytest.approx(clf.calibration_risk_)
        assert clf.calibration_risk_ <= 0.1
        # a row the model thinks may be class 0 is kept for review
        assert np.all(clf.predict_proba(X)[accepted, 0] <= 1 - clf.threshold_ + 1e-12)
    with pytest.raises(ValueError, match="ratio among the accepted rows"):
        SelectiveClassifier(method="crc", risk="error").fit(X, y)
    with pytest.raises(ValueError, match="target_class"):
        SelectiveClassifier(risk="fnr", target_class="absent").fit(X, y)


def test_crc_matches_the_foundation(cancer):
    from sklearn_iclr26.metrics import conformal_risk_control

    model, X, y = cancer
    clf = _frozen_fit(model, X, y, risk="fnr", target_class=1, method="crc")
    grid = np.sort(clf.risk_curve_["parameter"][1:])
    rows = y == 1
    score = 1 - model.predict_proba(X)[rows, 1]
    miss = model.predict(X)[rows] != 1
    losses = (score[:, None] >= grid[None, :]) & miss[:, None]
    losses = np.hstack([losses, np.zeros((losses.shape[0], 1), bool)]).astype(float)
    index = conformal_risk_control(losses, 0.1)
    expected = np.r_[grid, np.inf][index]
    assert clf.threshold_ == expected


@pytest.mark.parametrize(
    "params, match",
    [
        ({"target_risk": 0.0}, "target_risk"),
        ({"target_risk": 1.0}, "target_risk"),
        ({"confidence_level": 1.0}, "confidence_level"),
        ({"confidence_level": -0.1}, "confidence_level"),
    ],
)
def test_bad_levels_raise(params, match):
    X, y = make_classification(n_samples=50, random_state=0)
    with pytest.raises(InvalidParameterError, match=match):
        SelectiveClassifier(**params).fit(X, y)


def test_too_few_rows_warn_and_accept_nothing():
    X, y = make_classification(n_samples=40, random_state=0)
    clf = SelectiveClassifier(target_risk=0.05, random_state=0)
    with pytest.warns(UserWarning, match="too few for any certificate"):
        clf.fit(X, y)
    assert clf.threshold_ == np.inf and not clf.certified_
    assert clf.chosen_index_ == 0
    assert not clf.accept(X).any()
    assert clf.selective_risk(X, y) == (0.0, 0.0)


def test_no_certified_point_warns_and_accepts_nothing(cancer):
    model, X, y = cancer
    # a grid of thresholds that accept almost every row: error ~ the model's
    with pytest.warns(UserWarning, match="no threshold of the grid is certified"):
        clf = _frozen_fit(model, X, y, target_risk=0.01, thresholds=[0.5, 0.51])
    assert clf.threshold_ == np.inf and not clf.accept(X).any()


def test_sample_weight_reaches_the_estimator():
    X, y = make_classification(n_samples=300, random_state=0)
    w = np.random.RandomState(0).uniform(0.1, 3, size=300)
    est = LogisticRegression()
    a = SelectiveClassifier(est, random_state=0).fit(X, y, sample_weight=w)
    b = SelectiveClassifier(est, random_state=0).fit(X, y)
    assert not np.allclose(a.estimator_.coef_, b.estimator_.coef_)
    with sklearn.config_context(enable_metadata_routing=True):
        routed = LogisticRegression().set_fit_request(sample_weight=True)
        c = SelectiveClassifier(routed, random_state=0).fit(X, y, sample_weight=w)
        np.testing.assert_allclose(c.estimator_.coef_, a.estimator_.coef_)
        with pytest.raises(Exception, match="sample_weight"):
            SelectiveClassifier(LogisticRegression(), random_state=0).fit(
                X, y, sample_weight=w
            )
    with pytest.raises(TypeError, match="FrozenEstimator"):
        SelectiveClassifier(FrozenEstimator(a.estimator_)).fit(X, y, sample_weight=w)


def test_ltt_validity_over_calibration_draws():
    """Stated error rate: at most 1 % of runs fail by chance.

    30 calibration draws (600 rows) of a fixed model (error 0.056) on a
    simulated population, target 0.05 among the accepted rows. When the
    guarantee holds (delta = 0.1) the number of draws whose risk exceeds the
    target is at most the 99 % quantile of Binomial(30, 0.1), 7. The risk
    is measured on 20,000 test rows (standard error about 0.002). The
    uncorrected plug-in threshold of the same curves serves as the power
    check: it exceeds the target in about half of the draws (15 of 30 when
    written, against 3 for LTT), so a test that let it through would be
    one that cannot fail.
    """
    X, y = make_classification(
        n_samples=41_000,
        n_features=8,
        n_informative=4,
        n_clusters_per_class=1,
        flip_y=0.0,
        class_sep=0.7,
        random_state=0,
    )
    model = LogisticRegression().fit(X[:1000], y[:1000])
    X_test, y_test = X[1000:21000], y[1000:21000]
    pool_X, pool_y = X[21000:], y[21000:]
    grid = np.linspace(0.5, 0.98, 49)
    rng = np.random.RandomState(0)
    n_draws, exceed, plugin_exceed, certified = 30, 0, 0, 0
    bound = binom.ppf(0.99, n_draws, 0.1)
    for _ in range(n_draws):
        rows = rng.choice(pool_X.shape[0], 600, replace=False)
        clf = _frozen_fit(
            model, pool_X[rows], pool_y[rows], target_risk=0.05, thresholds=grid
        )
        certified += clf.certified_
        exceed += clf.selective_risk(X_test, y_test)[0] > 0.05
        curve = clf.risk_curve_
        ok = np.flatnonzero(np.nan_to_num(curve["risk"], nan=1.0) <= 0.05)
        clf.threshold_ = curve["parameter"][ok[np.argmax(curve["cost"][ok])]]
        plugin_exceed += clf.selective_risk(X_test, y_test)[0] > 0.05
    assert certified >= 25  # 30 of 30 when written
    assert exceed <= bound
    assert plugin_exceed > bound


def test_display_and_scorers(cancer):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    model, X, y = cancer
    clf = _frozen_fit(model, X[:200], y[:200], target_risk=0.05, thresholds=GRID)
    disp = RiskControlDisplay.from_estimator(clf, X[200:], y[200:], name="LR")
    assert disp.test_line_ is not None and disp.certified_line_ is not None
    chosen = disp.chosen_line_.get_xydata()[0]
    assert chosen[0] == pytest.approx(clf.calibration_acceptance_rate_)
    assert disp.ax_.get_xlabel() == "acceptance rate"
    with pytest.raises(ValueError, match="lacks the keys"):
        RiskControlDisplay.from_risk_curve({"risk": [0.1]}, 0)
    plt.close("all")

    acceptance = get_scorer("selective_acceptance")(clf, X[200:], y[200:])
    neg_risk = get_scorer("neg_selective_risk")(clf, X[200:], y[200:])
    risk, rate = clf.selective_risk(X[200:], y[200:])
    assert acceptance == rate and neg_risk == -risk
    accepted = clf.accept(X[200:])
    assert rate == accepted.mean()
    # weighted: integer weights equal repeated rows
    w = np.random.RandomState(0).randint(1, 4, size=X[200:].shape[0])
    repeated = clf.selective_risk(np.repeat(X[200:], w, axis=0), np.repeat(y[200:], w))
    weighted = get_scorer("selective_acceptance")(
        clf, X[200:], y[200:], sample_weight=w
    )
    assert weighted == pytest.approx(repeated[1])
    assert clf.selective_risk(X[200:], y[200:], sample_weight=w)[0] == (
        pytest.approx(repeated[0])
    )
    assert risk == np.mean(clf.predict(X[200:])[accepted] != y[200:][accepted])
    search = GridSearchCV(
        SelectiveClassifier(target_risk=0.1, random_state=0),
        {"estimator": [LogisticRegression(C=0.01), LogisticRegression(C=1.0)]},
        scoring=get_scorer("selective_acceptance"),
        cv=2,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(*load_breast_cancer(return_X_y=True))
    assert 0.0 <= search.best_score_ <= 1.0
