"""Metadata routing everywhere: sample_weight reaches every model, row-aligned.

Column 0 of ``X`` holds each row's id and row ``i`` has weight
``_weight(i)``; the rows are shuffled before the search. A spy (one that
records the ``X`` and ``sample_weight`` every ``fit`` receives) then shows
whether each fit got the weights of the rows it was given:

* every estimator whose ``fit`` takes ``sample_weight`` is searched by
  ``GridSearchCV`` with routing enabled and ``set_fit_request(sample_weight=
  True)``, spied on at its own ``fit``;
* every meta-estimator is searched with a spy *inner* estimator, routing
  enabled (the inner spy requests the weights) and disabled (the default:
  the meta-estimator passes them on as before);
* the package's scorers are scikit-learn scorer objects: a weighted
  ``set_efficiency`` routed by ``set_score_request`` equals the weighted
  metric computed by hand on each test fold.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import functools
import inspect

import numpy as np
import pytest
import sklearn
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.exceptions import UnsetMetadataPassedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.utils import get_tags

from sklearn_iclr26.causal import TLearnerRegressor, XLearnerRegressor
from sklearn_iclr26.conformal import (
    BonferroniBoxRegressor,
    ConformalizedQuantileRegressor,
    CVQRRegressor,
    EllipsoidRegressor,
    OTCPRegressor,
    SOCOPClassifier,
    SplitConformalClassifier,
)
from sklearn_iclr26.conformal._scorers import set_efficiency
from sklearn_iclr26.deferral import TopKDeferralRegressor, TopKDeferrer
from sklearn_iclr26.metrics import get_scorer, get_scorer_names
from sklearn_iclr26.utils._sklearn_compat import _BaseScorer
from sklearn_iclr26.utils._test_common import yield_test_instances

# small folds: the calibration-size and convergence warnings are expected
pytestmark = [
    pytest.mark.filterwarnings("ignore:The calibration set has:UserWarning"),
    pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning"),
]

N = 120
_RECORDS = []


def _weight(ids):
    return 1.0 + np.asarray(ids, dtype=np.float64) / N


def _record(who, X, sample_weight):
    X = np.asarray(X)
    ids = X[:, 0].astype(np.float64)
    w = None if sample_weight is None else np.asarray(sample_weight, np.float64)
    _RECORDS.append((who, ids, w))


def _data(task, n_outputs=1, seed=0, n_classes=3):
    """Shuffled rows: column 0 the row id, then 4 features; weights by id."""
    rng = np.random.RandomState(seed)
    ids = rng.permutation(N).astype(np.float64)
    F = rng.randn(N, 4)
    X = np.column_stack([ids, F])
    if task == "classification":
        y = (F[:, 0] + 0.5 * rng.randn(N) > 0).astype(int)
        if n_classes > 2:
            y[F[:, 1] > 1.0] = 2
    else:
        y = np.column_stack([F[:, j] + F[:, 2] for j in range(n_outputs)])
        y = y + 0.3 * rng.randn(*y.shape)
        if n_outputs == 1:
            y = y[:, 0]
    return X, y, _weight(ids)


def _check_aligned(records):
    assert records, "no fit was recorded"
    for who, ids, w in records:
        assert w is not None, f"{who} got no sample_weight"
        assert w.shape == ids.shape, who
        np.testing.assert_array_equal(w, _weight(ids), err_msg=who)


# -- spy inner estimators -----------------------------------------------------
class SpyRegressor(RegressorMixin, BaseEstimator):
    """Weighted least squares (multi-output) that records what fit receives."""

    def __init__(self, offset=0.0):
        self.offset = offset

    def fit(self, X, y, sample_weight=None):
        _record(type(self).__name__, X, sample_weight)
        X = np.asarray(X, dtype=np.float64)
        Y = np.asarray(y, dtype=np.float64)
        self._1d = Y.ndim == 1
        Y = Y.reshape(len(Y), -1)
        w = np.ones(len(X)) if sample_weight is None else np.asarray(sample_weight)
        A = np.column_stack([np.ones(len(X)), X]) * np.sqrt(w)[:, None]
        self.coef_ = np.linalg.lstsq(A, Y * np.sqrt(w)[:, None], rcond=None)[0]
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        X = np.asarray(X, dtype=np.float64)
        pred = np.column_stack([np.ones(len(X)), X]) @ self.coef_ + self.offset
        return pred[:, 0] if self._1d else pred

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class SpyClassifier(ClassifierMixin, BaseEstimator):
    """A logistic regression that records what fit receives."""

    def __init__(self, C=1.0):
        self.C = C

    def fit(self, X, y, sample_weight=None):
        _record(type(self).__name__, X, sample_weight)
        self.model_ = LogisticRegression(C=self.C).fit(
            X, y, sample_weight=sample_weight
        )
        self.classes_ = self.model_.classes_
        self.n_features_in_ = self.model_.n_features_in_
        return self

    def predict_proba(self, X):
        return self.model_.predict_proba(X)

    def predict(self, X):
        return self.model_.predict(X)


def _spy_regressor(request, **kw):
    spy = SpyRegressor(**kw)
    return spy.set_fit_request(sample_weight=True) if request else spy


def _spy_classifier(request):
    spy = SpyClassifier()
    return spy.set_fit_request(sample_weight=True) if request else spy


# -- every meta-estimator with a spy inside -----------------------------------
_CVQR = {
    "max_iter": 5,
    "hidden_layer_sizes": (4,),
    "batch_size": None,
    "inner_max_iter": 5,
    "warmup_epochs": 1,
}


def _cate(cls):
    # the CATE learners consume sample_weight themselves and hand it to every
    # nuisance model (requests or not): the learner is what requests it. (The
    # G-learner's later fits are on transported rows weighted by the plan's
    # masses, not rows of X: it is checked at its own fit below.)
    def build(request):
        est = cls(_spy_regressor(False), propensity_estimator=_spy_classifier(False))
        if request:
            est.set_fit_request(sample_weight=True, treatment=True)
        return est

    return build


reg, clf = _spy_regressor, _spy_classifier
#: name: (build(request) -> meta-estimator with spies inside, task, n_outputs)
META_CASES = {
    "SplitConformalClassifier": (
        lambda r: SplitConformalClassifier(clf(r), random_state=0),
        "classification",
        1,
    ),
    "SOCOPClassifier": (
        lambda r: SOCOPClassifier(clf(r), random_state=0),
        "classification",
        1,
    ),
    "BonferroniBoxRegressor": (
        lambda r: BonferroniBoxRegressor(reg(r), random_state=0),
        "regression",
        2,
    ),
    "BonferroniBoxRegressor-cv+": (
        lambda r: BonferroniBoxRegressor(reg(r), conformal_cv=3, random_state=0),
        "regression",
        2,
    ),
    "EllipsoidRegressor-cv": (
        lambda r: EllipsoidRegressor(reg(r), cv=3, random_state=0),
        "regression",
        2,
    ),
    "OTCPRegressor": (
        lambda r: OTCPRegressor(reg(r), random_state=0),
        "regression",
        2,
    ),
    "CVQRRegressor": (
        lambda r: CVQRRegressor(residual_estimator=reg(r), random_state=0, **_CVQR),
        "regression",
        2,
    ),
    "ConformalizedQuantileRegressor": (
        lambda r: ConformalizedQuantileRegressor(
            (reg(r, offset=-1.0), reg(r, offset=1.0)), random_state=0
        ),
        "regression",
        1,
    ),
    "TopKDeferrer": (
        lambda r: TopKDeferrer(predictor=clf(r), random_state=0),
        "classification",
        1,
    ),
    "TopKDeferralRegressor": (
        lambda r: TopKDeferralRegressor(predictor=reg(r), random_state=0),
        "regression",
        1,
    ),
    "TLearnerRegressor": (_cate(TLearnerRegressor), "regression", 1),
    "XLearnerRegressor": (_cate(XLearnerRegressor), "regression", 1),
}


def _build(name, request):
    build, task, n_outputs = META_CASES[name]
    meta = build(request)
    X, y, w = _data(task, n_outputs)
    extra = {}
    if "treatment" in inspect.signature(type(meta).fit).parameters:
        extra["treatment"] = np.random.RandomState(1).rand(N) < 0.5
    return meta, X, y, w, extra


def _search(meta, X, y, **params):
    grid = GridSearchCV(
        meta,
        {"random_state": [0]},
        cv=KFold(2, shuffle=True, random_state=0),
        scoring=lambda est, X, y: 0.0,
        error_score="raise",
    )
    return grid.fit(X, y, **params)


@pytest.mark.parametrize("name", sorted(META_CASES))
@pytest.mark.parametrize("routing", [True, False], ids=["routed", "unrouted"])
def test_meta_estimator_passes_row_aligned_weights_to_its_inner_spy(name, routing):
    with sklearn.config_context(enable_metadata_routing=routing):
        meta, X, y, w, extra = _build(name, routing)
        _RECORDS.clear()
        _search(meta, X, y, sample_weight=w, **extra)
    _check_aligned(list(_RECORDS))


@pytest.mark.parametrize(
    "name",
    [
        "BonferroniBoxRegressor",
        "CVQRRegressor",
        "ConformalizedQuantileRegressor",
        "SplitConformalClassifier",
        "TopKDeferrer",
    ],
)
def test_meta_estimator_routes_only_what_the_inner_estimator_requested(name):
    with sklearn.config_context(enable_metadata_routing=True):
        meta, X, y, w, _ = _build(name, False)
        # unset request: scikit-learn's error, naming the inner estimator
        with pytest.raises(UnsetMetadataPassedError, match="Spy"):
            meta.fit(X, y, sample_weight=w)
        # explicitly not requested: nothing takes the weights, scikit-learn's
        # error again (never silently dropped)
        for param in ("estimator", "residual_estimator", "predictor"):
            inner = meta.get_params().get(param)
            if isinstance(inner, BaseEstimator):
                meta.set_params(**{param: inner.set_fit_request(sample_weight=False)})
            elif isinstance(inner, tuple):
                unrequested = tuple(
                    e.set_fit_request(sample_weight=False) for e in inner
                )
                meta.set_params(**{param: unrequested})
        with pytest.raises(TypeError, match="not routed to any object"):
            meta.fit(X, y, sample_weight=w)


def test_fit_params_without_an_inner_estimator_raise():
    X, y, w = _data("regression", 2)
    with pytest.raises(TypeError, match="residual_estimator"):
        CVQRRegressor(max_iter=2).fit(X, y, sample_weight=w)
    Xc, yc, wc = _data("classification")
    with pytest.raises(TypeError, match="one-stage"):
        TopKDeferrer(regime="one-stage").fit(Xc, yc, sample_weight=wc)


# -- every estimator whose fit takes sample_weight -----------------------------
def _weighted_instances():
    seen = set()
    for est in yield_test_instances():
        name = type(est).__name__
        if name in seen:
            continue
        if "sample_weight" in inspect.signature(type(est).fit).parameters:
            seen.add(name)
            yield est


WEIGHTED = list(_weighted_instances())


def _spied(est):
    """``est`` as an instance of a subclass whose ``fit`` records its input."""
    cls = type(est)

    @functools.wraps(cls.fit)
    def fit(self, X, y=None, **params):
        _record(cls.__name__, X, params.get("sample_weight"))
        return cls.fit(self, X, y, **params)

    spy_cls = type(cls.__name__, (cls,), {"fit": fit, "__module__": __name__})
    return spy_cls(**est.get_params(deep=False))


def test_the_weighted_estimators_are_found():
    names = {type(est).__name__ for est in WEIGHTED}
    assert {
        "TorchMLPClassifier",
        "TLearnerRegressor",
        "ClassConditionalNoiseCorrector",
        "SampleGradientMemorization",
    } <= names


@pytest.mark.parametrize("estimator", WEIGHTED, ids=lambda e: type(e).__name__)
def test_grid_search_routes_row_aligned_sample_weight(estimator):
    task = "classification" if sklearn.base.is_classifier(estimator) else "regression"
    if type(estimator).__name__ == "SampleGradientMemorization":
        task = "classification"
    est = _spied(estimator)
    params = {}
    if "treatment" in inspect.signature(type(estimator).fit).parameters:
        # the test instances read the treatment from column 0 (here the row
        # id): pass it as metadata instead
        est.set_params(treatment_column=None, treatment_threshold=None)
        params["treatment"] = np.random.RandomState(1).rand(N) < 0.5
    with sklearn.config_context(enable_metadata_routing=True):
        est.set_fit_request(sample_weight=True, **dict.fromkeys(params, True))
        tags = get_tags(estimator).classifier_tags
        X, y, w = _data(task, n_classes=3 if tags is None or tags.multi_class else 2)
        _RECORDS.clear()
        search = _search(est, X, y, sample_weight=w, **params)
    records = list(_RECORDS)
    # two folds and the refit, each with its own rows' weights
    assert len(records) == 3
    _check_aligned(records)
    assert search.best_estimator_ is not None


# -- scorers ------------------------------------------------------------------
def test_every_package_scorer_is_a_scikit_learn_scorer():
    for name in get_scorer_names():
        scorer = get_scorer(name)
        if not isinstance(scorer, _BaseScorer):
            # the CATE scorers route their own metadata (treatment, tau_true)
            assert hasattr(scorer, "set_score_request"), name
            continue
        with sklearn.config_context(enable_metadata_routing=True):
            routed = scorer.set_score_request(sample_weight=True)
            request = routed._get_metadata_request().score.requests
        assert request.get("sample_weight") is True, name
        # get_scorer hands out copies: the registry's scorer is unchanged
        fresh = get_scorer(name)._get_metadata_request().score.requests
        assert fresh.get("sample_weight") is None, name


def test_routed_weighted_set_efficiency_equals_the_weighted_metric():
    X, y, w = _data("classification")
    cv = KFold(3, shuffle=True, random_state=0)
    model = SplitConformalClassifier(LogisticRegression(), random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = get_scorer("set_efficiency").set_score_request(sample_weight=True)
        est = clone(model).set_params(
            estimator=LogisticRegression().set_fit_request(sample_weight=False)
        )
        result = cross_validate(
            est,
            X,
            y,
            cv=cv,
            scoring={
                "eff": scorer,
                "cov": get_scorer("set_coverage").set_score_request(sample_weight=True),
            },
            params={"sample_weight": w},
        )
    expected, unweighted = [], []
    for train, test in cv.split(X):
        fitted = clone(model).fit(X[train], y[train])
        expected.append(
            -set_efficiency(fitted, X[test], y[test], sample_weight=w[test])
        )
        unweighted.append(-set_efficiency(fitted, X[test], y[test]))
    np.testing.assert_allclose(result["test_eff"], expected, rtol=1e-12)
    assert not np.allclose(expected, unweighted)


def test_scorer_works_with_routing_disabled_as_before():
    X, y, w = _data("classification")
    model = SplitConformalClassifier(LogisticRegression(), random_state=0).fit(X, y)
    scorer = get_scorer("set_efficiency")
    assert scorer(model, X, y) == -set_efficiency(model, X, y)
    assert scorer(model, X, y, sample_weight=w) == -set_efficiency(
        model, X, y, sample_weight=w
    )
    with pytest.raises(RuntimeError, match="metadata routing"):
        scorer.set_score_request(sample_weight=True)
