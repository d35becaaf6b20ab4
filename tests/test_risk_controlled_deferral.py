"""Tests of RiskControlledDeferrer (issue 41, part B)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom
from sklearn import config_context
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import load_diabetes, make_classification
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV

from sklearn_iclr26.datasets import make_experts
from sklearn_iclr26.deferral import (
    ConfidenceThresholdDeferrer,
    RiskControlledDeferrer,
    TopKDeferralRegressor,
    TopKDeferrer,
    UncertifiedRiskWarning,
)
from sklearn_iclr26.deferral._risk_controlled import (
    FALLBACK_SHARE,
    _ConfidencePolicy,
    _TopKPolicy,
)
from sklearn_iclr26.metrics import get_scorer, learn_then_test

EXPERTS = [8, 9, 10]


def _data(seed=0, n_samples=1500, coverage=0.7, accuracy=0.95):
    X, y = make_classification(
        n_samples=n_samples,
        n_features=8,
        n_informative=5,
        n_classes=4,
        n_clusters_per_class=1,
        class_sep=0.7,
        random_state=seed,
    )
    E, fees = make_experts(
        X, y, n_experts=3, coverage=coverage, accuracy=accuracy, random_state=seed
    )
    return np.hstack([X, E]), y, fees


def _fit(inner=None, **params):
    X, y, fees = _data()
    if inner is None:
        inner = TopKDeferrer(expert_columns=EXPERTS, costs=fees, cv=3, random_state=0)
    params.setdefault("random_state", 0)
    params.setdefault("target_risk", 0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est = RiskControlledDeferrer(inner, **params).fit(X, y)
    return est, X, y


# ------------------------------------------------------------ bad input


@pytest.mark.parametrize("name", ["target_risk", "confidence_level"])
@pytest.mark.parametrize("value", [0.0, 1.0, -0.1, 1.5])
def test_levels_outside_the_open_unit_interval_raise(name, value):
    X, y, _ = _data(n_samples=200)
    with pytest.raises(ValueError, match=name):
        RiskControlledDeferrer(**{name: value}).fit(X, y)


def test_too_few_calibration_rows_warn():
    X, y, fees = _data(n_samples=200)
    inner = TopKDeferrer(expert_columns=EXPERTS, costs=fees, cv=3, random_state=0)
    est = RiskControlledDeferrer(
        inner, target_risk=0.05, calibration_size=20, random_state=0
    )
    with pytest.warns(UserWarning, match="too few for any certificate"):
        est.fit(X, y)
    assert not est.certified_


def test_nothing_certified_warns_loudly_and_says_so():
    # experts at chance level, target far below anything reachable
    X, y, fees = _data(n_samples=600, accuracy=0.3)
    inner = TopKDeferrer(expert_columns=EXPERTS, costs=fees, cv=3, random_state=0)
    est = RiskControlledDeferrer(inner, target_risk=0.01, random_state=0)
    with pytest.warns(UncertifiedRiskWarning, match="UNCERTIFIED"):
        est.fit(X, y)
    assert not est.certified_
    assert not est.risk_curve_["certified"].any()
    # the deployed rule is the one of least calibration risk
    assert est.calibration_risk_ == est.risk_curve_["risk"].min()


def test_fallback_to_a_certified_expert_when_the_grid_fails():
    # a model that always answers class 0, and routes (chosen net of fees)
    # to random experts: no threshold certifies; the expensive perfect
    # expert 0 does, and the system falls back to it, saying so
    class Wrong(ClassifierMixin, BaseEstimator):
        def fit(self, X, y):
            self.classes_ = np.unique(y)
            return self

        def predict_proba(self, X):
            p = np.zeros((len(X), len(self.classes_)))
            p[:, 0] = 1.0
            return p

        def predict(self, X):
            return np.full(len(X), self.classes_[0])

    X, y, _ = _data(n_samples=1500)
    rng = np.random.RandomState(0)
    X[:, 8] = y
    X[:, 9] = rng.randint(4, size=len(y))
    X[:, 10] = rng.randint(4, size=len(y))
    inner = ConfidenceThresholdDeferrer(
        Wrong(), expert_columns=EXPERTS, costs=[0.9, 0.0, 0.0]
    )
    est = RiskControlledDeferrer(inner, target_risk=0.05, random_state=0)
    with pytest.warns(UncertifiedRiskWarning, match="falling back"):
        est.fit(X, y)
    m = len(est.parameters_)
    assert est.deferrer_.routes_[0] != 0  # the baseline routes to a random one
    assert est.chosen_index_ == m and est.certified_
    assert est.risk_curve_["rule"][m] == "always expert_0"
    assert not est.risk_curve_["certified"][:m].any()
    assert est.risk_curve_["certified"][m]
    assert np.isnan(est.chosen_parameter_)
    assert est.expected_fee_ == pytest.approx(0.9)
    np.testing.assert_array_equal(est.predict(X), y)
    allocation = est.predict_allocation(X)
    assert allocation[:, 1].all() and allocation.sum() == len(y)


def test_missing_expert_columns_at_predict_raise_clearly():
    est, X, y = _fit()
    with pytest.raises(ValueError, match="expert columns"):
        est.predict(X[:, :8])
    names = [f"f{i}" for i in range(8)] + ["ann", "bob", "cy"]
    df = pd.DataFrame(X, columns=names)
    fees = _data()[2]
    inner = TopKDeferrer(expert_columns=["ann", "bob", "cy"], costs=fees, cv=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est = RiskControlledDeferrer(inner, random_state=0).fit(df, y)
    with pytest.raises(ValueError, match=r"lacks the expert columns \['bob'\]"):
        est.predict(df.drop(columns="bob"))
    # NaN answers (unavailable experts) are fine
    df_nan = df.copy()
    df_nan["bob"] = np.nan
    assert est.predict(df_nan).shape == (len(df),)


def test_regression_needs_a_bounded_loss():
    X, y = load_diabetes(return_X_y=True)
    E, _ = make_experts(X, y, n_experts=3, random_state=0)
    X_all = np.hstack([X, E])
    inner = TopKDeferralRegressor(expert_columns=[10, 11, 12], costs=0.0, cv=3)
    with pytest.raises(ValueError, match="tolerance"):
        RiskControlledDeferrer(inner).fit(X_all, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est = RiskControlledDeferrer(
            inner, target_risk=0.5, tolerance=50.0, random_state=0
        ).fit(X_all, y)
    err = np.abs(est.predict(X_all) - y) > 50.0
    assert est.risk_curve_["risk"].shape == est.risk_curve_["cost"].shape
    assert 0 <= err.mean() <= 1
    bad = RiskControlledDeferrer(inner, loss=lambda t, p: np.abs(t - p))
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        bad.fit(X_all, y)


# ------------------------------------------------------------ contract


@pytest.mark.parametrize("method", ["ltt", "crc"])
def test_risk_curve_protocol_and_the_cheapest_certified_rule(method):
    est = _fit(method=method)[0]
    curve = est.risk_curve_
    n_rules = len(est.parameters_) + 3
    for key in ["parameter", "risk", "cost", "p_value", "certified"]:
        assert curve[key].shape == (n_rules,)
    assert curve["cost_name"] == "expected fee"
    assert curve["certified"].dtype == bool
    assert isinstance(est.chosen_index_, int)
    assert est.certified_ and curve["certified"][est.chosen_index_]
    m = len(est.parameters_)
    grid_certified = curve["certified"][:m]
    assert np.all(np.diff(est.parameters_) > 0)
    np.testing.assert_array_equal(
        est.certified_parameters_, est.parameters_[grid_certified]
    )
    # the lowest expected fee among the certified thresholds
    assert est.expected_fee_ == curve["cost"][:m][grid_certified].min()
    # fees never decrease with lambda (more deferral)
    assert np.all(np.diff(curve["cost"][:m]) >= -1e-12)


def test_ltt_certificate_equals_learn_then_test_on_the_loss_matrix():
    inner = TopKDeferrer(expert_columns=EXPERTS, costs=_data()[2], cv=3, random_state=0)
    X, y, _ = _data()
    inner.fit(X[:700], y[:700])
    est = RiskControlledDeferrer(
        FrozenEstimator(inner), fwer="bonferroni", target_risk=0.1, ordering_size=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est.fit(X[700:], y[700:])
    policy = _TopKPolicy(inner)
    table = policy.table(X[700:])
    losses = np.column_stack(
        [policy.predict(table, lam)[0] != y[700:] for lam in est.parameters_]
    ).astype(float)
    expected = learn_then_test(
        losses,
        0.1,
        confidence_level=1 - 0.1 * (1 - FALLBACK_SHARE),
        method="bonferroni",
    )
    m = len(est.parameters_)
    np.testing.assert_array_equal(
        np.flatnonzero(est.risk_curve_["certified"][:m]), expected.valid_index
    )
    np.testing.assert_allclose(est.risk_curve_["p_value"][:m], expected.p_values)


def test_threshold_zero_is_the_allocators_own_choice():
    X, y, fees = _data()
    for k in [1, 2]:
        inner = TopKDeferrer(
            expert_columns=EXPERTS, costs=fees, k=k, cv=3, random_state=0
        ).fit(X, y)
        policy = _TopKPolicy(inner)
        table = policy.table(X)
        y_pred, fee = policy.predict(table, 0.0)
        np.testing.assert_array_equal(y_pred, inner.predict(X))
        np.testing.assert_allclose(fee, inner._predict_with_fees(X)[1])
        np.testing.assert_array_equal(
            policy.allocation(table, 0.0), inner.predict_allocation(X)
        )
        # -inf: the model alone; +inf with k=1: never the model
        assert policy.allocation(table, -np.inf)[:, 0].all()
        if k == 1:
            assert not policy.allocation(table, np.inf)[:, 0].any()


def test_confidence_policy_equals_the_baseline_at_its_threshold():
    X, y, fees = _data()
    inner = ConfidenceThresholdDeferrer(
        expert_columns=EXPERTS, costs=fees, cv=3, random_state=0
    ).fit(X, y)
    policy = _ConfidencePolicy(inner)
    table = policy.table(X)
    for lam in [0.3, 0.6, 0.9]:
        inner.threshold_ = lam
        y_pred, fee = policy.predict(table, lam)
        np.testing.assert_array_equal(y_pred, inner.predict(X))
        np.testing.assert_allclose(fee, inner._predict_with_fees(X)[1])
        np.testing.assert_array_equal(
            policy.allocation(table, lam), inner.predict_allocation(X)
        )


def test_predict_allocation_and_predict_agree_with_the_chosen_rule():
    est, X, y = _fit()
    allocation = est.predict_allocation(X)
    assert allocation.shape == (len(X), 4) and allocation.dtype == bool
    y_pred, fee = est._predict_with_fees(X)
    np.testing.assert_array_equal(y_pred, est.predict(X))
    # every expert is available here: the fee is that of the allocation
    np.testing.assert_allclose(fee, allocation @ est.deferrer_.costs_)
    assert est.score(X, y) == pytest.approx(np.mean(y_pred == y))


def test_risk_curve_on_new_rows_measures_every_rule():
    est, X, y = _fit()
    curve = est.risk_curve(X[:500], y[:500])
    y_pred, fee = est._predict_with_fees(X[:500])
    i = est.chosen_index_
    assert curve["risk"][i] == pytest.approx(np.mean(y_pred != y[:500]))
    assert curve["cost"][i] == pytest.approx(fee.mean())
    for key in ["risk", "cost"]:
        assert curve[key].shape == est.risk_curve_["risk"].shape
    with config_context(working_memory=0.01):  # batches of rows
        small = est.risk_curve(X[:500], y[:500])
    np.testing.assert_allclose(small["risk"], curve["risk"])
    np.testing.assert_allclose(small["cost"], curve["cost"])


def test_random_state_is_bit_identical():
    a, X, _ = _fit(random_state=3)
    b, _, _ = _fit(random_state=3)
    for key in ["risk", "cost", "p_value"]:
        np.testing.assert_array_equal(a.risk_curve_[key], b.risk_curve_[key])
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_sample_weight_reaches_the_inner_deferrer():
    class Recorder(ClassifierMixin, BaseEstimator):
        def fit(self, X, y, sample_weight=None):
            self.classes_ = np.unique(y)
            self.weights_ = sample_weight
            self.model_ = LogisticRegression().fit(X, y, sample_weight=sample_weight)
            return self

        def predict_proba(self, X):
            return self.model_.predict_proba(X)

        def predict(self, X):
            return self.model_.predict(X)

    X, y, fees = _data(n_samples=600)
    inner = TopKDeferrer(predictor=Recorder(), expert_columns=EXPERTS, costs=fees, cv=3)
    w = np.arange(1, 601, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est = RiskControlledDeferrer(inner, random_state=0).fit(X, y, sample_weight=w)
    got = est.deferrer_.predictor_.weights_
    assert got is not None and len(got) == 600 - 180
    assert set(got) <= set(w)
    baseline = ConfidenceThresholdDeferrer(expert_columns=EXPERTS)
    with pytest.raises(TypeError):
        RiskControlledDeferrer(baseline).fit(X, y, sample_weight=w)
    # with metadata routing: what the predictor requested, and nothing else
    with config_context(enable_metadata_routing=True):
        requested = TopKDeferrer(
            predictor=Recorder().set_fit_request(sample_weight=True),
            expert_columns=EXPERTS,
            costs=fees,
            cv=3,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            est = RiskControlledDeferrer(requested, random_state=0).fit(
                X, y, sample_weight=w
            )
        assert len(est.deferrer_.predictor_.weights_) == 600 - 180
        unrequested = clone(requested).set_params(predictor=Recorder())
        with pytest.raises(ValueError, match="sample_weight"):
            RiskControlledDeferrer(unrequested).fit(X, y, sample_weight=w)


def test_fee_at_target_risk_scorer_tunes_the_inner_deferrer():
    X, y, fees = _data(n_samples=900)
    inner = TopKDeferrer(expert_columns=EXPERTS, costs=fees, cv=3, random_state=0)
    est = RiskControlledDeferrer(inner, target_risk=0.2, random_state=0)
    scorer = get_scorer("neg_fee_at_target_risk")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        search = GridSearchCV(est, {"deferrer__k": [1, 2]}, scoring=scorer, cv=2)
        search.fit(X, y)
        fitted = clone(est).fit(X, y)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    _, fee = fitted._predict_with_fees(X)
    assert scorer(fitted, X, y) == pytest.approx(-fee.mean())
    fitted.certified_ = False
    assert scorer(fitted, X, y) == -np.inf


# ------------------------------------------------------------ validity


def test_ltt_validity_with_a_stated_error_rate():
    """Over R calibration draws from a large pool, the certified rule's risk
    on the pool (the population) exceeds the target at most with probability
    1 - confidence_level = 0.1 (LTT). With R = 30 draws, a valid method
    fails this test with probability P(Binomial(30, 0.1) > 9) < 0.002
    (the pool risk is the exact population risk: the draws are from it)."""
    X, y, fees = _data(n_samples=6000, seed=1)
    inner = TopKDeferrer(expert_columns=EXPERTS, costs=fees, cv=3, random_state=0)
    inner.fit(X[:1500], y[:1500])
    pool_X, pool_y = X[1500:], y[1500:]
    policy = _TopKPolicy(inner)
    table = policy.table(pool_X)
    target, reps, n_cal = 0.2, 30, 400
    est = RiskControlledDeferrer(FrozenEstimator(inner), target_risk=target)
    violations = certified = 0
    for r in range(reps):
        rows = np.random.RandomState(r).choice(len(pool_y), n_cal, replace=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            est.set_params(random_state=r).fit(pool_X[rows], pool_y[rows])
        certified += est.certified_
        m = len(est.parameters_)
        if est.chosen_index_ < m:
            lam = est.parameters_[est.chosen_index_]
            y_pred = policy.predict(table, lam)[0]
        else:
            y_pred = policy.predict_expert(table, est.chosen_index_ - m)[0]
        # the guarantee: P(certified and risk > target) <= 0.1
        violations += est.certified_ and np.mean(y_pred != pool_y) > target
    assert certified >= reps // 2  # the test has power
    assert violations <= binom.ppf(0.998, reps, 0.1), violations
