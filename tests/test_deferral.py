"""Tests of Top-k learning to defer (TopKDeferrer, TopKDeferralRegressor)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_diabetes, load_iris, make_classification
from sklearn.dummy import DummyClassifier
from sklearn.ensemble import RandomForestClassifier
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import (
    GridSearchCV,
    StratifiedKFold,
    cross_val_predict,
    train_test_split,
)
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

from sklearn_iclr26.datasets import make_experts
from sklearn_iclr26.deferral import (
    ConfidenceThresholdDeferrer,
    DeferralCurveDisplay,
    TopKDeferralRegressor,
    TopKDeferrer,
)
from sklearn_iclr26.deferral._surrogate import (
    _SoftLabelLogisticRegression,
    aggregate_values,
    fit_scorer,
    majority_vote,
    replicate_rows,
    scorer_scores,
    surrogate_loss,
    surrogate_weights,
    top_k_mask,
)
from sklearn_iclr26.metrics import get_scorer

# ----------------------------------------------------------------- helpers

EXPERTS = [10, 11, 12, 13]  # _classification_data: 10 features, then 4 experts
EXPERTS_REG = [10, 11, 12]  # _regression_data: diabetes' 10 features, 3 experts


def _classification_data(seed=0, n_samples=600, n_experts=4, unavailable=0.0):
    X, y = make_classification(
        n_samples=n_samples,
        n_features=10,
        n_informative=6,
        n_classes=5,
        n_clusters_per_class=1,
        random_state=seed,
    )
    E, fees = make_experts(
        X, y, n_experts=n_experts, coverage=0.4, unavailable=unavailable,
        random_state=seed,
    )  # fmt: skip
    return np.hstack([X, E]), y, fees


def _regression_data(seed=0, n_experts=3):
    X, y = load_diabetes(return_X_y=True)
    E, fees = make_experts(X, y, n_experts=n_experts, random_state=seed)
    return np.hstack([X, E]), y, fees


class _ConstantClassifier(ClassifierMixin, BaseEstimator):
    """Always predicts label 0 (a fixed base model for two-stage tests)."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.zeros(len(X), dtype=int)


# --------------------------------------------------------- surrogate math


def test_replicated_weighted_log_loss_equals_surrogate():
    rng = np.random.RandomState(0)
    n, n_entities = 50, 5
    scores = rng.normal(size=(n, n_entities))
    mu = rng.uniform(0, 2, size=(n, n_entities))
    available = rng.uniform(size=(n, n_entities)) > 0.2
    available[:, 0] = True
    W = surrogate_weights(mu, available)
    # closed form: sum_j (S - mu_j) * (-log softmax_j), S over available entities
    S = np.where(available, mu, 0).sum(axis=1, keepdims=True)
    log_p = scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))
    expected = np.sum(np.where(available, (S - mu) * -log_p, 0.0))
    assert surrogate_loss(scores, W) == pytest.approx(expected, rel=1e-12)
    # the replicated rows with weights S - mu_j give the same weighted log-loss
    rows, entity = np.nonzero(W > 0)
    X_rep, label, sw = replicate_rows(np.arange(n)[:, None], W)
    np.testing.assert_array_equal(X_rep[:, 0], rows)
    np.testing.assert_array_equal(label, entity)
    proba = np.exp(log_p)[rows]
    replicated = log_loss(
        label, proba, sample_weight=sw, normalize=False, labels=range(n_entities)
    )
    assert replicated == pytest.approx(expected, rel=1e-10)
    # unavailable entities carry no mass
    assert np.all(W[~available] == 0)


def test_soft_label_scorer_equals_logistic_regression_on_replicated_rows():
    rng = np.random.RandomState(1)
    X = rng.normal(size=(120, 3))
    mu = (rng.uniform(size=(120, 4)) < 0.3 + 0.1 * X[:, :1]).astype(float)
    mu += np.array([0.0, 0.05, 0.1, 0.2])
    W = surrogate_weights(mu, np.ones_like(mu, dtype=bool))
    W /= W.sum(axis=1).mean()
    soft = _SoftLabelLogisticRegression(standardize=False, tol=1e-10).fit(X, W)
    X_rep, label, sw = replicate_rows(X, W)
    lr = LogisticRegression(C=1.0, tol=1e-10, max_iter=5000).fit(
        X_rep, label, sample_weight=sw
    )
    np.testing.assert_allclose(
        np.exp(scorer_scores(soft, X, 4)), lr.predict_proba(X), atol=1e-5
    )


def test_weights_normalised_globally_not_per_row():
    # a single region; two kinds of rows whose total cost S differs.
    # E[mu] = (0.6, 4.0, 4.6): entity 0 is the best.
    rows_a = np.tile([0.0, 10.0, 10.0], (40, 1))  # S = 20
    rows_b = np.tile([1.0, 0.0, 1.0], (60, 1))  # S = 2
    mu = np.vstack([rows_a, rows_b])
    W = surrogate_weights(mu, np.ones_like(mu, dtype=bool))
    X = np.zeros((100, 1))
    scorer = fit_scorer(None, X, W)
    assert np.argmax(scorer_scores(scorer, X[:1], 3)) == 0
    # scaling all weights by one constant changes nothing
    scaled = fit_scorer(None, X, 7.5 * W)
    np.testing.assert_allclose(
        scorer_scores(scaled, X[:1], 3), scorer_scores(scorer, X[:1], 3), atol=1e-6
    )
    # per-row normalisation would change the minimiser (and pick entity 1)
    per_row = fit_scorer(None, X, W / W.sum(axis=1, keepdims=True))
    assert np.argmax(scorer_scores(per_row, X[:1], 3)) == 1


def _region_problem(seed, n_per_region=800):
    """One-hot regions; entity error probabilities known per region."""
    rng = np.random.RandomState(seed)
    # rows: regions; columns: model, expert 0..3 (error probabilities)
    p_error = np.array(
        [
            [0.10, 0.60, 0.30, 0.85, 0.45],
            [0.70, 0.05, 0.40, 0.25, 0.90],
            [0.50, 0.80, 0.10, 0.35, 0.20],
            [0.90, 0.40, 0.65, 0.05, 0.20],
        ]
    )
    fees = np.array([0.0, 0.02, 0.04, 0.06, 0.08])
    n_regions, n_entities = p_error.shape
    region = np.repeat(np.arange(n_regions), n_per_region)
    n = region.size
    wrong = rng.uniform(size=(n, n_entities)) < p_error[region]
    # the model always predicts 0: y = 0 unless the model is wrong
    y = np.where(wrong[:, 0], rng.randint(1, 3, size=n), 0)
    E = np.where(wrong[:, 1:], (y[:, None] + 1) % 3, y[:, None]).astype(float)
    X = np.hstack([np.eye(n_regions)[region], E])
    predictor = FrozenEstimator(_ConstantClassifier().fit(X, y))
    expected_cost = p_error + fees  # population expected cost per region
    empirical_cost = np.array([wrong[region == r].mean(axis=0) for r in range(4)])
    return X, y, predictor, fees, expected_cost, empirical_cost + fees


@pytest.mark.parametrize("seed", [0, 1])
def test_exact_costs_allocation_is_k_smallest_expected_costs(seed):
    X, y, predictor, fees, expected, empirical = _region_problem(seed)
    clf = TopKDeferrer(
        predictor=predictor, expert_columns=[4, 5, 6, 7], costs=fees[1:]
    ).fit(X, y)
    X_regions = np.hstack([np.eye(4), np.full((4, 4), np.nan)])
    scores = clf.entity_scores(X_regions)
    for k in range(1, 6):
        allocation = clf.predict_allocation(X_regions, k=k)
        for r in range(4):
            chosen = set(np.flatnonzero(allocation[r]))
            assert chosen == set(np.argsort(expected[r])[:k])
            assert chosen == set(np.argsort(empirical[r])[:k])
    # scores order the entities by increasing empirical expected cost
    np.testing.assert_array_equal(
        np.argsort(-scores, axis=1), np.argsort(empirical, axis=1)
    )


def test_chow_rule_with_an_abstain_entity():
    # entity 1 abstains: error weight 0, fee = lambda; k=1 abstains iff
    # P(model wrong | x) > lambda (Chow's rule)
    rng = np.random.RandomState(0)
    q = np.array([0.1, 0.5, 0.2, 0.6])  # model error per region
    region = np.repeat(np.arange(4), 600)
    wrong = rng.uniform(size=region.size) < q[region]
    y = np.where(wrong, 1, 0)
    abstain_answer = np.zeros((region.size, 1))
    X = np.hstack([np.eye(4)[region], abstain_answer])
    predictor = FrozenEstimator(_ConstantClassifier().fit(X, y))
    clf = TopKDeferrer(
        predictor=predictor, expert_columns=[4], error_weight=[1.0, 0.0], costs=[0.35]
    ).fit(X, y)
    allocation = clf.predict_allocation(np.hstack([np.eye(4), np.zeros((4, 1))]))
    np.testing.assert_array_equal(allocation[:, 1], q > 0.35)


def test_k1_reduces_to_classic_two_stage_l2d():
    X, y, fees = _classification_data(seed=3, n_experts=2)
    X_feat, E = X[:, :-2], X[:, -2:]
    predictor = FrozenEstimator(LogisticRegression().fit(X_feat[:200], y[:200]))
    lr = LogisticRegression(C=1.0, max_iter=2000)
    clf = TopKDeferrer(lr, predictor, expert_columns=[10, 11], costs=fees, k=1).fit(
        X, y
    )
    # classic two-stage L2D (Mao et al., 2023): label j ("ask entity j") has
    # weight sum_{i != j} c_i with c_i = 1{entity i wrong} + fee_i
    answers = np.column_stack([predictor.predict(X_feat), E])
    c = (answers != y[:, None]) + np.r_[0.0, fees]
    rows = np.repeat(np.arange(len(y)), 3)
    labels = np.tile(np.arange(3), len(y))
    weights = (c.sum(axis=1, keepdims=True) - c).ravel()
    keep = weights > 0
    weights = weights / (weights.sum() / len(y))
    classic = clone(lr).fit(X_feat[rows[keep]], labels[keep], weights[keep])
    rule = classic.predict_proba(X_feat).argmax(axis=1)
    allocation = clf.predict_allocation(X)
    assert np.all(allocation.sum(axis=1) == 1)
    np.testing.assert_array_equal(allocation.argmax(axis=1), rule)
    # the k=1 prediction is the answer of the chosen entity
    np.testing.assert_array_equal(clf.predict(X), answers[np.arange(len(y)), rule])
    # and its Top-1 deferral loss is the classic one
    loss = np.mean(c[np.arange(len(y)), rule])
    assert np.mean((allocation * c).sum(axis=1)) == pytest.approx(loss)


def test_one_fit_serves_every_k():
    X, y, fees = _classification_data(seed=1)
    one = TopKDeferrer(expert_columns=EXPERTS, costs=fees, k=1).fit(X, y)
    for k in (2, 4):
        refit = TopKDeferrer(expert_columns=EXPERTS, costs=fees, k=k).fit(X, y)
        np.testing.assert_array_equal(
            one.predict_allocation(X, k=k), refit.predict_allocation(X)
        )
        np.testing.assert_array_equal(
            one.deferral_curve(X, y, ks=[k]).score,
            [accuracy_score(y, refit.predict(X))],
        )


# ------------------------------------------------------ allocation helpers


def test_top_k_mask_skips_unavailable_entities():
    scores = np.array([[3.0, 2.0, 1.0, 0.0], [0.0, 1.0, 2.0, 3.0]])
    available = np.array([[True, False, True, True], [True, True, False, False]])
    np.testing.assert_array_equal(
        top_k_mask(scores, 2, available),
        [[True, False, True, False], [True, True, False, False]],
    )
    # a row with fewer available entities than k consults all of them
    assert top_k_mask(scores, 4, available).sum(axis=1).tolist() == [3, 2]
    # per-row k
    np.testing.assert_array_equal(
        top_k_mask(scores, np.array([1, 3])).sum(axis=1), [1, 3]
    )


def test_majority_vote_ties_go_to_the_better_ranked_entity():
    answers = np.array([[2, 1, 1, 2], [0, 1, 2, 2]], dtype=float)
    scores = np.array([[0.1, 0.9, 0.3, 0.5], [3.0, 2.0, 1.0, 0.0]])
    mask = np.array([[True, True, True, True], [True, True, True, True]])
    labels, shares = majority_vote(answers, mask, scores, 3)
    # row 0: classes 1 and 2 tie 2-2; entity 1 (class 1) is ranked first
    # row 1: class 2 has two votes and wins outright
    np.testing.assert_array_equal(labels, [1, 2])
    np.testing.assert_allclose(shares, [[0, 0.5, 0.5], [0.25, 0.25, 0.5]])
    # k = 2, 1-1 tie: the top-ranked entity wins
    mask2 = top_k_mask(scores, 2)
    labels, _ = majority_vote(answers, mask2, scores, 3)
    np.testing.assert_array_equal(labels, [1, 0])
    # weighted votes follow the softmax of the scores
    labels, shares = majority_vote(answers, mask, scores, 3, weighted=True)
    assert labels[1] == 0 and shares[1, 0] > 0.5


def test_majority_vote_ties_broken_by_posterior_evidence():
    # two entities disagree (1-1 tie); the evidence favours the second-ranked
    answers = np.array([[0, 1], [0, 1]], dtype=float)
    scores = np.array([[1.0, 0.0], [1.0, 0.0]])
    mask = np.ones((2, 2), dtype=bool)
    evidence = np.zeros((2, 2, 2))
    evidence[0, 1] = np.log([0.1, 0.9])  # row 0: entity 1 sure of class 1
    evidence[0, 0] = np.log([0.6, 0.4])  # entity 0 barely prefers class 0
    evidence[1, 0] = np.log([0.9, 0.1])  # row 1: the best-ranked is sure
    evidence[1, 1] = np.log([0.4, 0.6])
    labels, shares = majority_vote(answers, mask, scores, 2, evidence=evidence)
    np.testing.assert_array_equal(labels, [1, 0])
    np.testing.assert_allclose(shares, 0.5)
    # equal posteriors: back to the best-ranked entity; no tie: evidence unused
    labels, _ = majority_vote(answers, mask, scores, 2, evidence=np.zeros((2, 2, 2)))
    np.testing.assert_array_equal(labels, [0, 0])
    labels, _ = majority_vote(
        answers, np.array([[True, False], [True, False]]), scores, 2, evidence=evidence
    )
    np.testing.assert_array_equal(labels, [0, 0])
    # a prior breaks otherwise equal posteriors
    labels, _ = majority_vote(
        answers, mask, scores, 2, evidence=np.zeros((2, 2, 2)),
        log_prior=np.log([0.3, 0.7]),
    )  # fmt: skip
    np.testing.assert_array_equal(labels, [1, 1])


def _model_and_one_expert(seed, n):
    """3 classes; a logistic model near 0.68; one fee-free expert right w.p. 0.75."""
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 3, n)
    X = np.array([[0, 0], [1.5, 0], [0, 1.5]])[y] + rng.normal(size=(n, 2))
    wrong = (y + rng.randint(1, 3, n)) % 3
    expert = np.where(rng.uniform(size=n) < 0.75, y, wrong)
    return np.column_stack([X, expert]).astype(float), y


def test_k2_majority_differs_from_k1_and_is_right_more_often():
    # With two votes every disagreement is a tie. Broken by rank (the rule
    # before), k = 2 always answered like k = 1 and the second fee bought
    # nothing. Broken by the posterior (model probabilities times the
    # expert's training confusion matrix), k = 2 combines the two answers.
    X, y = _model_and_one_expert(0, 4000)
    X_te, y_te = _model_and_one_expert(100, 4000)
    clf = TopKDeferrer(expert_columns=[2], random_state=0).fit(X, y)
    pred1 = clf.predict(X_te)
    pred2 = clf.set_params(k=2).predict(X_te)
    differ = pred1 != pred2
    assert differ.mean() > 0.05
    # paired gain: expected about 0.055 (SE about 0.006 over 4000 rows)
    gain = np.mean(pred2 == y_te) - np.mean(pred1 == y_te)
    assert gain > 0.02
    # the rule, by hand: on disagreements, the class of highest
    # log p_model(c|x) + log P(expert says e | c) (p floored at 1e-3)
    proba = np.maximum(clf.predictor_.predict_proba(X_te[:, :2]), 1e-3)
    proba /= proba.sum(axis=1, keepdims=True)
    log_conf = clf._log_confusion[1]  # [true class, answer]
    post = np.log(proba) + log_conf[:, X_te[:, 2].astype(int)].T
    model_answer = proba.argmax(axis=1)
    disagree = model_answer != X_te[:, 2]
    pair = np.column_stack([model_answer, X_te[:, 2].astype(int)])[disagree]
    pick = np.take_along_axis(post[disagree], pair, axis=1).argmax(axis=1)
    np.testing.assert_array_equal(pred2[disagree], pair[np.arange(len(pair)), pick])
    # the curve's fast path applies the same rule
    curve = clf.deferral_curve(X_te, y_te, ks=[1, 2])
    expected = [np.mean(pred1 == y_te), np.mean(pred2 == y_te)]
    np.testing.assert_allclose(curve.score, expected)


def test_aggregate_values():
    answers = np.array([[1.0, 2.0, 10.0]])
    mask = np.array([[True, True, True]])
    scores = np.log(np.array([[0.5, 0.25, 0.25]]))
    assert aggregate_values(answers, mask, scores, "mean")[0] == pytest.approx(13 / 3)
    assert aggregate_values(answers, mask, scores, "median")[0] == 2.0
    assert aggregate_values(answers, mask, scores, "weighted_mean")[0] == (
        pytest.approx(0.5 + 0.5 + 2.5)
    )


# -------------------------------------------------------------- behaviour


def _random_k_accuracy(clf, X, y, k, rng, n_repeats=20):
    _, answers, available, evidence = clf._entity_table(X)
    accs = []
    for _ in range(n_repeats):
        scores = rng.uniform(size=answers.shape)
        mask = top_k_mask(scores, k, available)
        labels, _ = clf._aggregate(answers, mask, scores, evidence=evidence)
        accs.append(np.mean(labels == y))
    return np.mean(accs)


def test_topk_dominates_top1_and_random_k_and_topkx_matches_fixed_k():
    gaps_random, gaps_top1, gaps_adaptive = [], [], []
    for seed in range(4):
        X, y, fees = _classification_data(seed=seed)
        X_tr, X_te, y_tr, y_te = train_test_split(
            X, y, test_size=0.5, random_state=seed, stratify=y
        )
        clf = TopKDeferrer(expert_columns=EXPERTS, costs=fees, adaptive=True, cv=3)
        clf.fit(X_tr, y_tr)
        curve = clf.deferral_curve(X_te, y_te, budget_weights=[0, 0.05, 0.1, 0.2])
        rng = np.random.RandomState(seed)
        for k, score in zip(curve.k, curve.score):
            gaps_random.append(score - _random_k_accuracy(clf, X_te, y_te, k, rng))
        gaps_top1.append(curve.score.max() - curve.score[0])
        matched = np.interp(curve.adaptive_budget, curve.budget, curve.score)
        gaps_adaptive.append(np.mean(curve.adaptive_score - matched))
    assert np.mean(gaps_random) > 0.05 and np.min(gaps_random) > -0.01
    assert np.min(gaps_top1) > 0.03
    # Top-k(x) is no worse than fixed Top-k at matched budget (on average)
    assert np.mean(gaps_adaptive) > -0.005


def test_topkx_budget_weight_traces_the_budget_axis():
    X, y, fees = _classification_data(seed=0)
    clf = TopKDeferrer(expert_columns=EXPERTS, costs=fees, adaptive=True, cv=3).fit(
        X, y
    )
    # (k = 2 is worth a fee of 5x on some rows since the tie rule uses the
    # posterior; at 50x no extra answer is)
    curve = clf.deferral_curve(X, y, ks=[1], budget_weights=[0.0, 0.1, 0.5, 50.0])
    assert np.all(np.diff(curve.adaptive_budget) <= 1e-12)
    assert curve.adaptive_k[0] > curve.adaptive_k[-1]
    assert curve.adaptive_k[-1] == pytest.approx(1.0, abs=0.1)
    k_x = clf.predict_k(X)
    assert k_x.min() >= 1 and k_x.max() <= clf.n_entities_
    np.testing.assert_array_equal(clf.predict_allocation(X).sum(axis=1), k_x)


def test_unavailable_experts_fall_back_and_get_no_mass():
    X, y, fees = _classification_data(seed=2, unavailable=0.3)
    clf = TopKDeferrer(expert_columns=EXPERTS, costs=fees, k=3).fit(X, y)
    X_none = X.copy()
    X_none[:, -4:] = np.nan  # every expert unavailable: the model answers
    np.testing.assert_array_equal(
        clf.predict(X_none), clf.predictor_.predict(X_none[:, :-4])
    )
    # the allocation itself does not look at the expert answers
    np.testing.assert_array_equal(
        clf.predict_allocation(X_none), clf.predict_allocation(X)
    )
    assert clf.deferral_curve(X_none, y).budget.max() == 0.0


def test_one_stage_regime():
    X, y, fees = _classification_data(seed=0)
    clf = TopKDeferrer(regime="one-stage", expert_columns=EXPERTS, costs=fees, k=1).fit(
        X, y
    )
    assert clf.n_entities_ == 5 + 4
    assert not hasattr(clf, "predictor_")
    assert clf.entity_names_[0] == "class_0"
    # the experts help: better than the same linear model without them
    alone = TopKDeferrer().fit(X[:, :-4], y).score(X[:, :-4], y)
    assert accuracy_score(y, clf.predict(X)) > alone + 0.03
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_regressor_topk_and_aggregations():
    X, y, fees = _regression_data()
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, random_state=0)
    for aggregation in ("mean", "weighted_mean", "median"):
        reg = TopKDeferralRegressor(
            expert_columns=EXPERTS_REG, costs=fees, k=2, aggregation=aggregation
        ).fit(X_tr, y_tr)
        curve = reg.deferral_curve(X_te, y_te)
        assert curve.metric == "rmse"
        assert curve.score.shape == (4,)
        pred = reg.predict(X_te)
        assert np.sqrt(np.mean((pred - y_te) ** 2)) == pytest.approx(curve.score[1])
    model_rmse = np.sqrt(np.mean((reg.predictor_.predict(X_te[:, :-3]) - y_te) ** 2))
    assert curve.score.min() < model_rmse
    reg = TopKDeferralRegressor(
        expert_columns=EXPERTS_REG, costs=fees, adaptive=True, error="squared", cv=3
    ).fit(X_tr, y_tr)
    curve = reg.deferral_curve(X_te, y_te, budget_weights=[0.0, 1.0, 100.0])
    assert curve.adaptive_score.shape == (3,)
    assert curve.adaptive_budget[0] >= curve.adaptive_budget[-1]


# ---------------------------------------------------------------- bad input


def test_bad_input_errors():
    X, y, fees = _classification_data(seed=0, n_samples=150)
    with pytest.raises(ValueError, match="at least one feature column"):
        TopKDeferrer(expert_columns=list(range(X.shape[1]))).fit(X, y)
    with pytest.raises(ValueError, match="costs must be"):
        TopKDeferrer(expert_columns=EXPERTS, costs=[0.1, 0.2]).fit(X, y)
    with pytest.raises(ValueError, match="non-negative"):
        TopKDeferrer(expert_columns=EXPERTS, costs=[0.1, -0.2, 0.1, 0.1]).fit(X, y)
    with pytest.raises(ValueError, match="error_weight must be"):
        TopKDeferrer(expert_columns=EXPERTS, error_weight=[1.0, 1.0]).fit(X, y)
    X_bad = X.copy()
    X_bad[0, -1] = 7  # not a class index
    with pytest.raises(ValueError, match="must be labels of y"):
        TopKDeferrer(expert_columns=EXPERTS).fit(X_bad, y)
    X_bad[0, -1] = 0.5
    with pytest.raises(ValueError, match="must be labels of y"):
        TopKDeferrer(expert_columns=EXPERTS).fit(X_bad, y)
    X_bad[0, -1] = np.inf
    with pytest.raises(ValueError, match="must be labels of y"):
        TopKDeferrer(expert_columns=EXPERTS).fit(X_bad, y)
    X_bad = X.copy()
    X_bad[0, 0] = np.nan  # NaN is allowed in expert columns only
    with pytest.raises(ValueError, match="NaN"):
        TopKDeferrer(expert_columns=EXPERTS).fit(X_bad, y)
    with pytest.raises(ValueError, match="larger than the number of entities"):
        TopKDeferrer(expert_columns=EXPERTS, k=6).fit(X, y)
    clf = TopKDeferrer(expert_columns=EXPERTS, costs=fees).fit(X, y)
    for k in (0, 6):
        with pytest.raises(ValueError, match="k must be in"):
            clf.predict_allocation(X, k=k)
    with pytest.raises(ValueError, match="adaptive=True"):
        clf.deferral_curve(X, y, budget_weights=[0.1])
    with pytest.raises(ValueError, match="not in classes_"):
        clf.deferral_curve(X, y + 10)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :-1])
    with pytest.raises(TypeError, match="sample_weight"):
        TopKDeferrer(KNeighborsClassifier(), expert_columns=EXPERTS).fit(X, y)
    Xr, yr, _ = _regression_data()
    with pytest.raises(ValueError, match="costs must be"):
        TopKDeferralRegressor(expert_columns=EXPERTS_REG, costs=[1.0, 2.0]).fit(Xr, yr)
    Xr_bad = Xr.copy()
    Xr_bad[0, -1] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        TopKDeferralRegressor(expert_columns=EXPERTS_REG).fit(Xr_bad, yr)


# --------------------------------------------------------- scikit-learn API


def test_pipeline_grid_search_cross_val_predict():
    # pickle: tests/test_common_contracts.py
    X, y, fees = _classification_data(seed=4, n_samples=400)
    n_feat = X.shape[1] - 4
    pipe = Pipeline(
        [
            (
                "prep",
                ColumnTransformer(
                    [("scale", StandardScaler(), list(range(n_feat)))],
                    remainder="passthrough",
                ),
            ),
            ("defer", TopKDeferrer(expert_columns=EXPERTS, costs=fees, cv=3)),
        ]
    )
    grid = GridSearchCV(pipe, {"defer__k": [1, 3]}, scoring="accuracy", cv=3)
    grid.fit(X, y)
    assert grid.best_params_["defer__k"] == 3
    # cross_val_predict is a fit/predict per fold, nothing else
    est = TopKDeferrer(expert_columns=EXPERTS, costs=fees, cv=3)
    pred = cross_val_predict(est, X, y, cv=3)
    for train, test in StratifiedKFold(3).split(X, y):
        fold = clone(est).fit(X[train], y[train])
        np.testing.assert_array_equal(pred[test], fold.predict(X[test]))
    # a Pipeline as allocator gets <last step>__sample_weight
    allocator = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))
    clf = TopKDeferrer(allocator, expert_columns=EXPERTS, costs=fees, k=2).fit(X, y)
    np.testing.assert_array_equal(
        clf.predict(X), clone(clf).fit(X, y).predict(X)
    )  # deterministic


def test_regressor_with_prefit_predictor_and_pandas():
    import pandas as pd

    X, y, fees = _regression_data()
    df = pd.DataFrame(X, columns=[f"c{i}" for i in range(X.shape[1])])
    experts = ["c10", "c11", "c12"]
    features = df.drop(columns=experts)
    model = Ridge().fit(features[:100], y[:100])
    reg = TopKDeferralRegressor(
        predictor=FrozenEstimator(model), expert_columns=experts, costs=fees, k=2
    ).fit(df, y)
    assert reg.predictor_.estimator is model  # kept as is, not refitted
    np.testing.assert_array_equal(reg.feature_names_in_, df.columns)
    np.testing.assert_array_equal(reg.entity_names_, ["model", *experts])
    all_nan = df.copy()
    all_nan[experts] = np.nan
    # no expert available: the frozen model answers, on its own columns
    np.testing.assert_allclose(reg.predict(all_nan), model.predict(features))


def test_display():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y, fees = _classification_data(seed=0, n_samples=300)
    clf = TopKDeferrer(expert_columns=EXPERTS, costs=fees, adaptive=True, cv=3)
    with pytest.raises(NotFittedError):
        DeferralCurveDisplay.from_estimator(clf, X, y)
    clf.fit(X, y)
    _, ax = plt.subplots()
    disp = DeferralCurveDisplay.from_estimator(
        clf, X, y, budget_weights=[0.0, 0.1, 1.0], name="digits", ax=ax
    )
    assert disp.ax_ is ax and disp.figure_ is ax.figure
    assert disp.line_.get_label() == "digits: Top-k"
    assert disp.adaptive_line_ is not None
    assert disp.ax_.get_ylabel() == "accuracy"
    assert len(disp.line_.get_xdata()) == clf.n_entities_
    # from the Bunch of deferral_curve: the same line, name overridable
    curve = clf.deferral_curve(X, y, budget_weights=[0.0, 0.1, 1.0])
    other = DeferralCurveDisplay.from_curve(curve, name="first", color="red")
    np.testing.assert_allclose(other.line_.get_xdata(), disp.line_.get_xdata())
    np.testing.assert_allclose(other.line_.get_ydata(), disp.line_.get_ydata())
    assert other.line_.get_color() == "red"
    other.plot(name="second")
    assert other.line_.get_label() == "second: Top-k"
    with pytest.raises(ValueError, match="deferral_curve"):
        DeferralCurveDisplay.from_curve({"k": [1]})
    plt.close("all")


# ------------------------------------------------------------ make_experts


def test_make_experts_classification():
    X, y = load_iris(return_X_y=True)
    a1, fees = make_experts(X, y, n_experts=3, coverage=0.3, random_state=0)
    a2, _ = make_experts(X, y, n_experts=3, coverage=0.3, random_state=0)
    np.testing.assert_array_equal(a1, a2)
    assert a1.shape == (150, 3) and fees.shape == (3,)
    assert set(np.unique(a1)) <= {0.0, 1.0, 2.0}
    # every expert masters one class (accuracy >= 0.9 there) and is near
    # random (about 1/3) on the others
    per_class = np.array(
        [[np.mean(a1[y == c, j] == c) for c in range(3)] for j in range(3)]
    )
    assert np.all(per_class.max(axis=1) > 0.85)
    assert np.all(np.sort(per_class, axis=1)[:, :2] < 0.6)
    answers, _ = make_experts(X, y, n_experts=3, unavailable=0.5, random_state=0)
    assert 0.4 < np.isnan(answers).mean() < 0.6
    answers, _ = make_experts(X, y, n_experts=2, expertise="region", random_state=0)
    assert answers.shape == (150, 2)
    with pytest.raises(ValueError, match="fees"):
        make_experts(X, y, n_experts=3, fees=[0.1, 0.2])


def test_make_experts_regression():
    X, y = load_diabetes(return_X_y=True)
    answers, fees = make_experts(X, y, n_experts=4, random_state=0)
    errors = np.abs(answers - y[:, None])
    assert np.all(np.min(errors, axis=1) < np.std(y))
    assert fees[-1] == pytest.approx(0.1 * np.std(y))
    answers, _ = make_experts(
        X, y, n_experts=2, expertise="region", task="regression", random_state=1
    )
    assert answers.shape == (len(y), 2)


@pytest.mark.parametrize("regime", ["two-stage", "one-stage"])
@pytest.mark.parametrize("aggregation", ["majority", "weighted"])
def test_options_smoke(regime, aggregation, capsys):
    X, y, fees = _classification_data(seed=5, n_samples=200, unavailable=0.2)
    clf = TopKDeferrer(
        regime=regime,
        aggregation=aggregation,
        expert_columns=EXPERTS,
        costs=fees,
        k=2,
        adaptive=True,
        cv=3,
        verbose=1,
    ).fit(X, y)
    assert "cross-fitting the allocator" in capsys.readouterr().out
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    agree = clf.classes_[proba.argmax(axis=1)] == clf.predict(X)
    tied = np.sum(np.isclose(proba, proba.max(axis=1, keepdims=True)), axis=1) > 1
    assert np.all(agree[~tied])  # majority ties are broken by rank in predict
    if aggregation == "weighted":
        assert not np.any(tied)
    assert clf.entity_scores(X).shape == (len(y), clf.n_entities_)


def test_no_information_gives_uniform_scores():
    # perfect model and experts, no fees: every surrogate weight is 0
    X, y = load_iris(return_X_y=True)
    experts = np.column_stack([y, y]).astype(float)
    predictor = FrozenEstimator(KNeighborsClassifier(1).fit(X, y))
    clf = TopKDeferrer(predictor=predictor, expert_columns=[4, 5])
    clf.fit(np.hstack([X, experts]), y)
    scores = clf.entity_scores(np.hstack([X, experts]))
    np.testing.assert_allclose(scores, np.log(1 / 3))
    assert clf.score(np.hstack([X, experts]), y) == 1.0


def test_regressor_topk_beats_random_k_and_top1_over_seeds():
    X, y = load_diabetes(return_X_y=True)
    gaps_random, gaps_top1 = [], []
    for seed in range(4):
        E, fees = make_experts(X, y, n_experts=4, expertise="region", random_state=seed)
        X_tr, X_te, y_tr, y_te = train_test_split(
            np.hstack([X, E]), y, test_size=0.5, random_state=seed
        )
        reg = TopKDeferralRegressor(expert_columns=EXPERTS, costs=fees, cv=3).fit(
            X_tr, y_tr
        )
        curve = reg.deferral_curve(X_te, y_te)
        _, answers, available, _ = reg._entity_table(X_te)
        rng = np.random.RandomState(seed)
        for k, rmse in zip(curve.k[:-1], curve.score[:-1]):  # k = |A| is the same
            random_rmse = np.mean(
                [
                    np.sqrt(np.mean((reg._aggregate(answers, m, s) - y_te) ** 2))
                    for s in rng.uniform(size=(20, *answers.shape))
                    for m in [top_k_mask(s, k, available)]
                ]
            )
            gaps_random.append(random_rmse - rmse)
        gaps_top1.append(curve.score[0] - curve.score.min())
    assert np.mean(gaps_random) > 2.0 and np.min(gaps_random) > -1.0
    assert np.min(gaps_top1) > 5.0


@pytest.mark.parametrize("aggregation", ["majority", "weighted"])
def test_deferral_curve_matches_predict(aggregation):
    X, y, fees = _classification_data(seed=6, n_samples=300, unavailable=0.3)
    clf = TopKDeferrer(
        expert_columns=EXPERTS, costs=fees, aggregation=aggregation, adaptive=True, cv=3
    ).fit(X, y)
    curve = clf.deferral_curve(X, y, budget_weights=[clf.budget_weight, 0.0])
    for k, score, budget in zip(curve.k, curve.score, curve.budget):
        fixed = clone(clf).set_params(adaptive=False, k=int(k)).fit(X, y)
        assert score == pytest.approx(accuracy_score(y, fixed.predict(X)))
        # the budget counts the fees of the entities actually consulted
        _, _, _, mask, _ = fixed._consult(X)
        assert budget == pytest.approx(np.mean(mask @ fixed.costs_))
    assert curve.adaptive_score[0] == pytest.approx(accuracy_score(y, clf.predict(X)))


# ----------------------------------------------------------------- scorers


def _voting_experts(seed, n=3000):
    """Binary labels, a constant model (50% right) and five voting experts.

    Experts 0-2 are right with probability 0.85 (fee 0.03), experts 3-4 with
    0.75 (fee 0.05), independently. Expected deferral cost (error + fees) of
    fixed Top-k along the ranking 0, 1, 2, 3, 4, model: k=1 0.18; k=2 0.21
    (a 1-1 tie between two equally accurate experts: no better than k=1, one
    more fee);
    k=3 0.061 + 0.09 = 0.151 (majority of three); k=4, 5, 6 above 0.2. So
    the cost is minimal at k=3, while accuracy keeps growing to k=5.
    """
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 2, n)
    X = rng.normal(size=(n, 3))
    right = rng.uniform(size=(n, 5)) < np.array([0.85, 0.85, 0.85, 0.75, 0.75])
    E = np.where(right, y[:, None], 1 - y[:, None]).astype(float)
    predictor = FrozenEstimator(DummyClassifier(strategy="constant", constant=0))
    predictor.estimator.fit(X, y)
    fees = [0.03, 0.03, 0.03, 0.05, 0.05]
    return np.hstack([X, E]), y, predictor, fees


def test_deferral_cost_scorer_picks_the_cheapest_k_in_grid_search():
    X, y, predictor, fees = _voting_experts(seed=0)
    est = TopKDeferrer(predictor=predictor, expert_columns=[3, 4, 5, 6, 7], costs=fees)
    grid = {"k": [1, 2, 3, 4, 5, 6]}
    cost = GridSearchCV(est, grid, scoring=get_scorer("neg_deferral_cost"), cv=3)
    assert cost.fit(X, y).best_params_ == {"k": 3}  # not the first, not the last
    # the default score (accuracy minus fees) measures the same thing
    default = GridSearchCV(est, grid, cv=3).fit(X, y)
    assert default.best_params_ == {"k": 3}
    np.testing.assert_allclose(
        default.cv_results_["mean_test_score"],
        1.0 + cost.cv_results_["mean_test_score"],
    )
    # accuracy ignores the fees and prefers more voters
    accuracy = GridSearchCV(est, grid, scoring="accuracy", cv=3).fit(X, y)
    assert accuracy.best_params_["k"] > 3


def test_deferral_cost_is_error_plus_fees_of_the_curve():
    X, y, fees = _classification_data(seed=7, n_samples=300, unavailable=0.2)
    scorer = get_scorer("neg_deferral_cost")
    for k in (1, 2, 4):
        clf = TopKDeferrer(expert_columns=EXPERTS, costs=fees, k=k).fit(X, y)
        curve = clf.deferral_curve(X, y, ks=[k])
        expected = (1.0 - curve.score[0]) + curve.budget[0]
        assert scorer(clf, X, y) == pytest.approx(-expected)
        assert clf.score(X, y) == pytest.approx(1.0 - expected)
    # through an outer Pipeline too
    pipe = make_pipeline(FunctionTransformer(), clf).fit(X, y)
    assert np.isfinite(scorer(pipe, X, y))
    Xr, yr, fees_r = _regression_data()
    reg = TopKDeferralRegressor(expert_columns=EXPERTS_REG, costs=fees_r, k=2)
    reg.fit(Xr, yr)
    pred = reg.predict(Xr)
    paid = np.mean(reg.predict_allocation(Xr) @ reg.costs_)  # no NaN experts
    expected = np.mean(np.abs(pred - yr)) + paid
    assert scorer(reg, Xr, yr) == pytest.approx(-expected)
    with pytest.raises(TypeError, match="TopKDeferrer"):
        X_clean = np.nan_to_num(X)
        scorer(LogisticRegression().fit(X_clean, y), X_clean, y)


# ---------------------------------------------------------------- batching


@pytest.mark.filterwarnings("ignore:Could not adhere to working_memory")
@pytest.mark.parametrize("Est", [TopKDeferrer, TopKDeferralRegressor])
def test_batched_methods_with_experts_equal_one_batch(Est):
    import sklearn

    if Est is TopKDeferrer:
        X, y, fees = _classification_data(seed=8, n_samples=300, unavailable=0.2)
        columns = EXPERTS
    else:
        X, y, fees = _regression_data()
        columns = EXPERTS_REG
    est = Est(expert_columns=columns, costs=fees, k=2, adaptive=True, cv=3)
    est.fit(X, y)
    X, y = X[:60], y[:60]  # a few rows per batch: 60 calls of the predictor
    methods = ["predict", "predict_allocation", "entity_scores", "predict_k"]
    if Est is TopKDeferrer:
        methods.append("predict_proba")
    for name in methods:
        with sklearn.config_context(working_memory=1024):
            full = getattr(est, name)(X)
        with sklearn.config_context(working_memory=1e-4):
            small = getattr(est, name)(X)
        if full.dtype.kind == "f":  # BLAS paths: rounding of the last bit
            np.testing.assert_allclose(full, small, rtol=1e-12, err_msg=name)
        else:
            np.testing.assert_array_equal(full, small, err_msg=name)
    with sklearn.config_context(working_memory=1024):
        full = est.deferral_curve(X, y, budget_weights=[0.0, 1.0])
    with sklearn.config_context(working_memory=1e-4):
        small = est.deferral_curve(X, y, budget_weights=[0.0, 1.0])
    for key in ("score", "budget", "adaptive_score", "adaptive_budget", "adaptive_k"):
        np.testing.assert_allclose(full[key], small[key], rtol=1e-12, err_msg=key)


def test_random_state_seeds_folds_and_children():
    X, y, fees = _classification_data(seed=9, n_samples=300)
    allocator = RandomForestClassifier(n_estimators=10)
    params = {"expert_columns": EXPERTS, "costs": fees, "adaptive": True, "cv": 3}
    a = TopKDeferrer(allocator, random_state=0, **params).fit(X, y)
    b = TopKDeferrer(allocator, random_state=0, **params).fit(X, y)
    np.testing.assert_array_equal(a.entity_scores(X), b.entity_scores(X))
    np.testing.assert_array_equal(a.predict_k(X), b.predict_k(X))
    assert allocator.random_state is None  # the user's object is untouched
    c = TopKDeferrer(allocator, random_state=1, **params).fit(X, y)
    assert not np.array_equal(a.entity_scores(X), c.entity_scores(X))


def test_family_hooks_are_abstract():
    from sklearn_iclr26.deferral._base import _BaseTopKDeferral

    class _Incomplete(_BaseTopKDeferral):
        def _default_predictor(self):
            return None

    with pytest.raises(TypeError, match="abstract"):
        _Incomplete()
    assert not TopKDeferrer.__abstractmethods__
    assert not TopKDeferralRegressor.__abstractmethods__


# ------------------------------------------------ confidence-threshold baseline


def _confidence_case(seed=0, n=1500, unavailable=0.0):
    """3 classes; a logistic model; expert j is right w.p. 0.95 on class j only.

    Columns 0-1 are features, 2-4 the experts (0.4 accurate off their class).
    """
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 3, n)
    X = np.array([[0, 0], [1.5, 0], [0, 1.5]])[y] + rng.normal(size=(n, 2))
    E = np.empty((n, 3))
    for j in range(3):
        p_right = np.where(y == j, 0.95, 0.4)
        wrong = (y + rng.randint(1, 3, n)) % 3
        E[:, j] = np.where(rng.uniform(size=n) < p_right, y, wrong)
    E[rng.uniform(size=E.shape) < unavailable] = np.nan
    return np.hstack([X, E]), y


def _deferral_costs(proba, E, y, routes, fees):
    model = proba.argmax(axis=1)
    keep = (model != y).astype(float)
    answer = E[np.arange(len(y)), routes[model]]
    ok = ~np.isnan(answer)
    defer = np.where(ok, (answer != y) + fees[routes[model]], keep)
    return proba.max(axis=1), keep, defer


def test_confidence_threshold_auto_minimises_the_training_cost():
    X, y = _confidence_case(0)
    model = make_pipeline(StandardScaler(), LogisticRegression()).fit(X[:, :2], y)
    fees = np.array([0.05, 0.1, 0.02])
    clf = ConfidenceThresholdDeferrer(
        FrozenEstimator(model), expert_columns=[2, 3, 4], costs=fees
    ).fit(X, y)
    # frozen: the threshold is chosen on the model's own training probabilities
    conf, keep, defer = _deferral_costs(
        model.predict_proba(X[:, :2]), X[:, 2:], y, clf.routes_, fees
    )

    def total(threshold):
        return np.sum(np.where(conf < threshold, defer, keep))

    candidates = np.r_[0.0, np.unique(conf), 1.0 + 1e-9]
    best = min(total(t) for t in candidates)
    assert total(clf.threshold_) == pytest.approx(best)
    assert 0 < clf.threshold_ < 1
    assert clf.training_deferral_rate_ == pytest.approx(np.mean(conf < clf.threshold_))
    # the routes: expert j is the specialist of class j
    np.testing.assert_array_equal(clf.routes_, [0, 1, 2])
    assert clf.expert_accuracy_.shape == (3, 3)
    best_route = clf.set_params(routing="best").fit(X, y).routes_
    assert len(set(best_route.tolist())) == 1


def test_confidence_threshold_predict_fees_allocation_and_scorer():
    X, y = _confidence_case(1, unavailable=0.2)
    fees = np.array([0.05, 0.1, 0.02])
    clf = ConfidenceThresholdDeferrer(
        expert_columns=[2, 3, 4], costs=fees, random_state=0
    ).fit(X, y)
    proba = clf.predictor_.predict_proba(X[:, :2])
    model, conf = proba.argmax(axis=1), proba.max(axis=1)
    route = clf.routes_[model]
    answer = X[np.arange(len(y)), 2 + route]
    defer = (conf < clf.threshold_) & ~np.isnan(answer)
    assert 0.05 < defer.mean() < 0.95
    expected = np.where(defer, np.nan_to_num(answer), model).astype(int)
    y_pred, paid = clf._predict_with_fees(X)
    np.testing.assert_array_equal(y_pred, expected)
    np.testing.assert_allclose(paid, np.where(defer, fees[route], 0.0))
    allocation = clf.predict_allocation(X)
    np.testing.assert_array_equal(allocation.sum(axis=1), 1)
    np.testing.assert_array_equal(allocation[:, 0], conf >= clf.threshold_)
    score = clf.score(X, y)
    assert score == pytest.approx(np.mean(expected == y) - np.mean(paid))
    assert get_scorer("neg_deferral_cost")(clf, X, y) == pytest.approx(score - 1)
    # threshold 0 is the model alone; threshold 1 defers (almost) everything
    alone = clone(clf).set_params(threshold=0.0).fit(X, y)
    np.testing.assert_array_equal(alone.predict(X), model)
    everyone = clone(clf).set_params(threshold=1.0).fit(X, y)
    assert everyone.predict_allocation(X)[:, 0].mean() < 0.01
    # no experts: the predictor alone
    solo = ConfidenceThresholdDeferrer().fit(X[:, :2], y)
    np.testing.assert_array_equal(solo.predict(X[:, :2]), model)


def test_confidence_threshold_bad_input():
    X, y = _confidence_case(2, n=200)
    with pytest.raises(ValueError, match="one fee per expert"):
        ConfidenceThresholdDeferrer(expert_columns=[2, 3, 4], costs=[0.1, 0.2]).fit(
            X, y
        )
    with pytest.raises(ValueError, match="predict_proba"):
        ConfidenceThresholdDeferrer(Ridge(), expert_columns=[2, 3, 4]).fit(X, y)
    X_bad = X.copy()
    X_bad[0, 2] = 7
    with pytest.raises(ValueError, match="must be labels"):
        ConfidenceThresholdDeferrer(expert_columns=[2, 3, 4]).fit(X_bad, y)
    with pytest.raises(ValueError, match="threshold"):
        ConfidenceThresholdDeferrer(threshold=1.5).fit(X, y)


# ------------------------------------------- huge finite inputs (issue 40/17)


@pytest.mark.parametrize(
    "make",
    [
        lambda: TopKDeferrer(expert_columns=EXPERTS, random_state=0),
        lambda: TopKDeferrer(expert_columns=EXPERTS, adaptive=True, random_state=0),
        lambda: TopKDeferralRegressor(expert_columns=EXPERTS_REG, random_state=0),
        lambda: ConfidenceThresholdDeferrer(expert_columns=EXPERTS, random_state=0),
    ],
    ids=["topk", "topk-adaptive", "topk-regressor", "confidence"],
)
def test_huge_finite_features_name_the_overflow(make):
    """Finite 1e300 features overflow inside the default StandardScaler; the
    error names the overflow instead of scikit-learn's "Input X contains NaN"
    (on main: the NaN message, though X has none)."""
    est = make()
    if isinstance(est, TopKDeferralRegressor):
        X, y, _ = _regression_data()
    else:
        X, y, _ = _classification_data(n_samples=200)
    X = X.copy()
    X[:, 0] *= 1e300
    with (
        np.errstate(all="ignore"),
        pytest.raises(ValueError, match="contains no NaN or infinity, but values"),
    ):
        est.fit(X, y)
    assert not hasattr(est, "n_features_in_")  # all-or-nothing fit
    X[0, 1] = np.nan  # a real NaN in a feature keeps scikit-learn's message
    with np.errstate(all="ignore"), pytest.raises(ValueError, match="contains NaN"):
        make().fit(X, y)
