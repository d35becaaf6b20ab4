"""Tests of the DR-learner, the R-learner and the causal forest (issue 45 item 7).

Each is checked against econml 0.17 on the same models and folds (``DRLearner``,
``NonParamDML``, ``CausalForestDML``), by hand where econml has no counterpart
(the cross-fitted AIPW, the folds), and through the package's surface
(intervals, scorers and routing, controls, errors).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import sys

import numpy as np
import pandas as pd
import pytest
import sklearn
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_iclr26.causal import (
    CausalForestRegressor,
    DRLearnerRegressor,
    RLearnerRegressor,
    TreatmentStratifiedKFold,
    make_cate_scorer,
)
from sklearn_iclr26.causal._dr_learner import dr_pseudo_outcome


def confounded(seed, n=300, d=3):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    t = (rng.uniform(size=n) < 1 / (1 + np.exp(-X[:, 0]))).astype(int)
    tau = 1.0 + X[:, 1] + np.sin(2 * X[:, 2])
    y = np.sin(X[:, 0]) + X[:, 1] + t * tau + rng.normal(scale=0.3, size=n)
    return X, y, t, tau


def folds_of(t, seed=0, k=2):
    return list(
        StratifiedKFold(k, shuffle=True, random_state=seed).split(
            np.zeros((len(t), 1)), t
        )
    )


class ArmwiseRegressor(RegressorMixin, BaseEstimator):
    """econml's ``model_regression`` sees ``[X, W, T]``: one clone of
    ``estimator`` per value of the last column, i.e. one outcome model per arm
    (the package's DR-learner), so both compute the same quantity."""

    def __init__(self, estimator):
        self.estimator = estimator

    def fit(self, XT, y, sample_weight=None):
        XT = np.asarray(XT)
        arm = XT[:, -1]
        self.models_ = []
        for a in (0, 1):
            rows = arm == a
            kw = {} if sample_weight is None else {"sample_weight": sample_weight[rows]}
            self.models_.append(clone(self.estimator).fit(XT[rows, :-1], y[rows], **kw))
        return self

    def predict(self, XT):
        XT = np.asarray(XT)
        out = np.empty(len(XT))
        for a in (0, 1):
            rows = XT[:, -1] == a
            if rows.any():
                out[rows] = self.models_[a].predict(XT[rows, :-1])
        return out


# ------------------------------------------------------ equal to econml
def test_dr_learner_equals_econml_drlearner():
    """Same per-arm Ridge outcome models, logistic propensity, Ridge final
    model and folds: econml's DRLearner gives the same effects."""
    dr = pytest.importorskip("econml.dr")
    X, y, t, _ = confounded(0)
    folds = folds_of(t)
    ours = DRLearnerRegressor(
        Ridge(alpha=3.0),
        propensity_estimator=LogisticRegression(),
        final_estimator=Ridge(alpha=1.0),
        cv=folds,
    ).fit(X, y, treatment=t)
    anchor = dr.DRLearner(
        model_propensity=LogisticRegression(),
        model_regression=ArmwiseRegressor(Ridge(alpha=3.0)),
        model_final=Ridge(alpha=1.0),
        cv=folds,
    ).fit(y, t, X=X)
    assert_allclose(ours.predict(X), anchor.effect(X), rtol=1e-7, atol=1e-9)
    T0 = np.arange(len(X)) % 2
    T1 = 1 - (np.arange(len(X)) // 3) % 2
    assert_allclose(
        ours.effect(X, T0=T0, T1=T1), anchor.effect(X, T0=T0, T1=T1), atol=1e-9
    )
    assert_allclose(
        ours.const_marginal_effect(X), anchor.const_marginal_effect(X), atol=1e-9
    )
    assert ours.ate(X) == pytest.approx(anchor.ate(X), rel=1e-8)
    # a different fold structure changes the effects (the folds are used)
    other = clone(ours).set_params(cv=folds_of(t, seed=1)).fit(X, y, treatment=t)
    assert np.max(np.abs(other.predict(X) - ours.predict(X))) > 1e-3


def test_r_learner_equals_econml_nonparamdml():
    dml = pytest.importorskip("econml.dml")
    X, y, t, _ = confounded(1)
    folds = folds_of(t, seed=3)
    ours = RLearnerRegressor(
        Ridge(alpha=3.0),
        propensity_estimator=LogisticRegression(),
        final_estimator=Ridge(alpha=1.0),
        cv=folds,
    ).fit(X, y, treatment=t)
    anchor = dml.NonParamDML(
        model_y=Ridge(alpha=3.0),
        model_t=LogisticRegression(),
        model_final=Ridge(alpha=1.0),
        discrete_treatment=True,
        cv=folds,
    ).fit(y, t, X=X)
    assert_allclose(ours.predict(X), anchor.effect(X), rtol=1e-7, atol=1e-9)
    assert_allclose(
        ours.const_marginal_effect(X), anchor.const_marginal_effect(X), atol=1e-9
    )
    assert ours.ate(X) == pytest.approx(anchor.ate(X), rel=1e-8)
    # with sample weights too (they reach the nuisances and the final model)
    w = np.random.RandomState(0).uniform(0.5, 2.0, size=len(y))
    ours.fit(X, y, treatment=t, sample_weight=w)
    anchor.fit(y, t, X=X, sample_weight=w)
    assert_allclose(ours.predict(X), anchor.effect(X), rtol=1e-7, atol=1e-9)


def test_causal_forest_equals_econml_causal_forest_dml():
    """Same nuisances, folds and forest seed: econml's CausalForestDML gives
    the same effects, intervals and doubly robust ATE / ATT."""
    dml = pytest.importorskip("econml.dml")
    X, y, t, _ = confounded(2, n=400)
    folds = folds_of(t, seed=4)
    ours = CausalForestRegressor(
        Ridge(alpha=3.0),
        propensity_estimator=LogisticRegression(),
        cv=folds,
        n_estimators=40,
        random_state=0,
    ).fit(X, y, treatment=t)
    anchor = dml.CausalForestDML(
        model_y=Ridge(alpha=3.0),
        model_t=LogisticRegression(),
        discrete_treatment=True,
        cv=folds,
        n_estimators=40,
        random_state=ours.final_estimator_.random_state,
        n_jobs=1,
    ).fit(y, t, X=X)
    assert_allclose(ours.predict(X), anchor.effect(X), rtol=1e-7, atol=1e-9)
    lo, hi = ours.effect_interval(X, confidence_level=0.9)
    ref = anchor.effect_interval(X, alpha=0.1)
    assert_allclose(lo, ref[0], rtol=1e-6, atol=1e-8)
    assert_allclose(hi, ref[1], rtol=1e-6, atol=1e-8)
    assert np.all(lo < hi)
    inf = ours.effect_inference(X[:5])
    assert_allclose(inf.stderr, anchor.effect_inference(X[:5]).stderr, rtol=1e-6)
    assert ours.ate_aipw_ == pytest.approx(float(np.ravel(anchor.ate_)[0]), rel=1e-8)
    assert ours.ate_aipw_stderr_ == pytest.approx(
        float(np.ravel(anchor.ate_stderr_)[0]), rel=1e-8
    )
    assert ours.att_aipw_ == pytest.approx(
        float(np.ravel(anchor.att_(T=1))[0]), rel=1e-8
    )
    # T1 < T0 flips the interval
    lo2, hi2 = ours.effect_interval(X, T0=1, T1=0, confidence_level=0.9)
    assert_allclose((lo2, hi2), (-hi, -lo), rtol=1e-12)
    cme_lo, _ = ours.const_marginal_effect_interval(X, confidence_level=0.9)
    assert cme_lo.shape == (len(X), 1)


# ------------------------------------------------------------ by hand
def test_dr_cross_fitted_aipw_and_folds_by_hand():
    """``cv=2`` is StratifiedKFold(2, shuffle=True) seeded by the first draw
    of ``random_state``; ``ate_aipw_`` is the mean of the cross-fitted doubly
    robust scores (propensities clipped to [0.001, 0.999]) and its standard
    error the scores' standard deviation over sqrt(n)."""
    X, y, t, _ = confounded(3)
    est = DRLearnerRegressor(
        LinearRegression(),
        propensity_estimator=LogisticRegression(),
        final_estimator=LinearRegression(),
        random_state=0,
    ).fit(X, y, treatment=t)
    seed = int(np.random.RandomState(0).randint(np.iinfo(np.int32).max))
    folds = folds_of(t, seed=seed)
    mu0, mu1, e = np.empty(len(y)), np.empty(len(y)), np.empty(len(y))
    for train, test in folds:
        for arm, mu in ((0, mu0), (1, mu1)):
            rows = train[t[train] == arm]
            mu[test] = LinearRegression().fit(X[rows], y[rows]).predict(X[test])
        e[test] = (
            LogisticRegression().fit(X[train], t[train]).predict_proba(X[test])[:, 1]
        )
    pseudo = dr_pseudo_outcome(y, t, mu0, mu1, e, 1e-6)
    assert_allclose(
        est.predict(X), LinearRegression().fit(X, pseudo).predict(X), rtol=1e-9
    )
    ec = np.clip(e, 1e-3, 1 - 1e-3)
    psi = mu1 - mu0 + t * (y - mu1) / ec - (1 - t) * (y - mu0) / (1 - ec)
    assert est.ate_aipw_ == pytest.approx(psi.mean(), rel=1e-10)
    assert est.ate_aipw_stderr_ == pytest.approx(
        psi.std(ddof=1) / np.sqrt(len(psi)), rel=1e-8
    )
    lo, hi = est.ate_interval(X)
    assert lo < est.ate_aipw_ < hi
    # the predicted potential outcomes are the fold models' mean
    p0, _p1 = est.predict_outcomes(X[:4])
    ref0 = np.mean([m[0].predict(X[:4]) for m in est.outcome_estimators_], axis=0)
    assert_allclose(p0, ref0, rtol=1e-12)


def test_r_learner_outcomes_decompose_m():
    """``mu0 = m - e tau`` and ``mu1 = m + (1 - e) tau``: their propensity
    blend is ``m`` and their difference ``tau``."""
    X, y, t, _ = confounded(4)
    est = RLearnerRegressor(Ridge(), random_state=0).fit(X, y, treatment=t)
    mu0, mu1 = est.predict_outcomes(X)
    e = est.propensity_estimator_.predict_proba(X)[:, 1]
    m = np.mean([mdl.predict(X) for mdl in est.outcome_estimators_], axis=0)
    assert_allclose(mu1 - mu0, est.predict(X), rtol=1e-10)
    assert_allclose(e * mu1 + (1 - e) * mu0, m, rtol=1e-10)


# ----------------------------------------------------- package surface
@pytest.mark.parametrize("Est", [DRLearnerRegressor, RLearnerRegressor])
def test_bootstrap_intervals_and_reproducibility(Est):
    X, y, t, _ = confounded(5, n=200)
    est = Est(Ridge(), n_bootstrap=4, random_state=0).fit(X, y, treatment=t)
    again = clone(est).fit(X, y, treatment=t)
    assert_array_equal(est.predict(X), again.predict(X))
    lo, hi = est.effect_interval(X, confidence_level=0.8)
    assert lo.shape == (len(X),) and np.all(lo <= hi)
    assert est.effect_inference(X).summary_frame().shape == (len(X), 6)
    lo, hi = est.ate_interval(X, confidence_level=0.9, method="bootstrap")
    assert lo <= hi
    # the main fit does not depend on n_bootstrap
    plain = clone(est).set_params(n_bootstrap=0).fit(X, y, treatment=t)
    assert_array_equal(plain.predict(X), est.predict(X))


@pytest.mark.parametrize(
    "est",
    [
        DRLearnerRegressor(Ridge(), random_state=0),
        RLearnerRegressor(Ridge(), random_state=0),
        CausalForestRegressor(Ridge(), n_estimators=8, random_state=0),
    ],
    ids=["DR", "R", "forest"],
)
def test_grid_search_with_cate_scorer_and_routed_treatment(est):
    if isinstance(est, CausalForestRegressor):
        pytest.importorskip("econml")
    X, y, t, _ = confounded(6, n=240)
    grid = (
        {"min_samples_leaf": [5, 20]}
        if isinstance(est, CausalForestRegressor)
        else {"final_estimator": [Ridge(alpha=1.0), Ridge(alpha=100.0)]}
    )
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(
            est,
            grid,
            cv=TreatmentStratifiedKFold(3),
            scoring=make_cate_scorer("r_loss", outcome_estimator=Ridge()),
        ).fit(X, y, treatment=t)
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores)) and scores[0] != scores[1]
    assert search.best_estimator_.n_treated_ == int(t.sum())


def test_controls_reach_nuisances_not_the_effect():
    """With ``W``, the nuisance models see ``[X, W]`` and the final model ``X``
    alone, so ``effect(X)`` needs no ``W``."""
    X, y, t, _ = confounded(7)
    W = np.random.RandomState(0).normal(size=(len(y), 2))
    y = y + W[:, 0]
    estimators = [
        DRLearnerRegressor(Ridge(), random_state=0),
        RLearnerRegressor(Ridge(), random_state=0),
    ]
    try:
        import econml  # noqa: F401

        forest = CausalForestRegressor(Ridge(), n_estimators=8, random_state=0)
        estimators.append(forest)
    except ImportError:
        pass
    for est in estimators:
        est.fit(X, y, treatment=t, W=W)
        final = est.final_estimator_
        assert getattr(final, "n_features_in_", None) or final.n_features_ == 3
        first = est.outcome_estimators_[0]
        first = first[0] if isinstance(first, list) else first
        assert first.n_features_in_ == X.shape[1] + W.shape[1]
        assert est.propensity_estimators_[0].n_features_in_ == 5
        assert est.predict(X).shape == (len(X),)
        mu0, _mu1 = est.predict_outcomes(X, W=W)
        assert mu0.shape == (len(X),)
        with pytest.raises(ValueError, match="W"):
            est.predict_outcomes(X)


def test_dataframe_pipeline_outcome_model_gets_x_untouched():
    rng = np.random.RandomState(8)
    n = 200
    X = pd.DataFrame(
        {"a": rng.normal(size=n), "g": rng.choice(["u", "v", "w"], size=n)}
    )
    t = (rng.uniform(size=n) < 0.5).astype(int)
    y = X["a"].to_numpy() + t * (1 + (X["g"] == "u")) + rng.normal(scale=0.2, size=n)
    pre = make_column_transformer((OneHotEncoder(), ["g"]), remainder=StandardScaler())
    for Est in (DRLearnerRegressor, RLearnerRegressor):
        est = Est(make_pipeline(clone(pre), Ridge()), random_state=0).fit(
            X, y, treatment=t
        )
        assert est.predict(X).shape == (n,)
        assert list(est.feature_names_in_) == ["a", "g"]


def test_cv_splitters():
    """``cv`` takes an int, a splitter (TreatmentStratifiedKFold gets the
    treatment) or a list of folds; a splitter equals its folds as a list."""
    X, y, t, _ = confounded(12, n=120)
    splitter = TreatmentStratifiedKFold(3, shuffle=True, random_state=0)
    folds = list(splitter.split(X, y, treatment=t))
    a = DRLearnerRegressor(Ridge(), cv=splitter).fit(X, y, treatment=t)
    b = DRLearnerRegressor(Ridge(), cv=folds).fit(X, y, treatment=t)
    assert len(a.outcome_estimators_) == 3
    assert_array_equal(a.predict(X), b.predict(X))
    c = RLearnerRegressor(Ridge(), cv=KFold(4)).fit(X, y, treatment=t)
    assert len(c.outcome_estimators_) == 4


def test_errors():
    X, y, t, _ = confounded(9, n=60)
    # a fold whose training part holds one arm only
    treated, control = np.flatnonzero(t == 1), np.flatnonzero(t == 0)
    bad = [(control, treated), (treated, control)]
    with pytest.raises(ValueError, match="both treatment arms"):
        DRLearnerRegressor(Ridge(), cv=bad).fit(X, y, treatment=t)
    # held-out parts that do not cover every row
    half = folds_of(t)[:1]
    with pytest.raises(ValueError, match="exactly once"):
        RLearnerRegressor(Ridge(), cv=half).fit(X, y, treatment=t)
    # the R-learner's final model must take sample_weight
    from sklearn.neighbors import KNeighborsRegressor

    with pytest.raises(ValueError, match="final model KNeighborsRegressor"):
        RLearnerRegressor(Ridge(), final_estimator=KNeighborsRegressor()).fit(
            X, y, treatment=t
        )
    with pytest.raises(ValueError, match="treatment"):
        DRLearnerRegressor().fit(X, y)


def test_causal_forest_needs_numeric_x_and_names_econml(monkeypatch):
    pytest.importorskip("econml")
    X, y, t, _ = confounded(10, n=80)
    Xs = pd.DataFrame({"a": X[:, 0], "g": np.where(X[:, 1] > 0, "u", "v")})
    pre = make_column_transformer((OneHotEncoder(), ["g"]), remainder="passthrough")
    est = CausalForestRegressor(
        make_pipeline(pre, Ridge()),
        propensity_estimator=make_pipeline(clone(pre), LogisticRegression()),
        n_estimators=8,
    )
    with pytest.raises(ValueError, match="must be numeric"):
        est.fit(Xs, y, treatment=t)
    monkeypatch.setitem(sys.modules, "econml.grf", None)
    with pytest.raises(ImportError, match="pip install econml"):
        CausalForestRegressor(Ridge(), n_estimators=8).fit(X, y, treatment=t)


def test_cate_display_draws_the_forest_intervals():
    pytest.importorskip("econml")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sklearn_iclr26.causal import CATEDisplay

    X, y, t, _ = confounded(11, n=200)
    forest = CausalForestRegressor(Ridge(), n_estimators=8, random_state=0)
    forest.fit(X, y, treatment=t)
    disp = CATEDisplay.from_estimator(forest, X, feature=1, confidence_level=0.8)
    assert disp.band_ is not None
    lo, hi = forest.effect_interval(X, confidence_level=0.8)
    assert_allclose(np.sort(disp.lower), np.sort(lo))
    assert_allclose(np.sort(disp.upper), np.sort(hi))
    plt.close("all")
