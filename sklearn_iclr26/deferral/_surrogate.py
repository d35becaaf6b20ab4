"""The Top-k deferral surrogate, the scorer fits and the allocation rules.

Private helpers shared by :class:`TopKDeferrer` and :class:`TopKDeferralRegressor`.

Notation (Montreuil et al., ICLR 2026): an *entity* ``j`` (the model, a class,
an expert) answering a query costs ``mu_j = w_j * error_j + beta_j`` (``w`` the
``error_weight``). The
k-independent surrogate of the Top-k deferral loss is

    Phi(pi, x, z) = sum_j w_j * (-log softmax_j(pi(x))),  w_j = S - mu_j,

with ``S = sum_i mu_i`` over the entities available for that row. It is a
weighted multinomial log-loss, so any classifier accepting ``sample_weight``
minimises it on rows replicated once per entity with weight ``w_j``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp
from sklearn import config_context
from sklearn.base import BaseEstimator, clone
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import has_fit_parameter

from sklearn_iclr26.utils._random import set_child_random_state
from sklearn_iclr26.utils._sklearn_compat import _num_samples, _safe_indexing
from sklearn_iclr26.utils._validation import store_params

__all__ = []


def entity_costs(errors, error_weight, fees, available):
    """Per-entity costs ``mu = error_weight * error + beta``; 0 where unavailable."""
    mu = error_weight[None, :] * errors + fees[None, :]
    return np.where(available, mu, 0.0)


def surrogate_weights(mu, available):
    """Surrogate weights ``w_j = S - mu_j`` over the available entities.

    Unavailable entities get weight 0 (no training mass) and do not enter
    ``S``. Rows with a single available entity get zero weight everywhere.
    """
    mu = np.where(available, mu, 0.0)
    total = mu.sum(axis=1, keepdims=True)
    return np.where(available, total - mu, 0.0)


def global_scale(weights):
    """The one global constant that scales the weights to a mean row mass of 1.

    Never normalise per row: ``S`` depends on the label, so a per-row scale
    changes the population minimiser of the surrogate.
    """
    mass = weights.sum(axis=1)
    mean = float(mass.mean()) if mass.size else 0.0
    return mean if mean > 0 else 1.0


def surrogate_loss(scores, weights):
    """``sum_i sum_j W_ij * (-log softmax_j(scores_i))`` (scores may be -inf)."""
    log_proba = scores - logsumexp(scores, axis=1, keepdims=True)
    mask = weights > 0
    return float(-np.sum(weights[mask] * log_proba[mask]))


def replicate_rows(X, weights):
    """Rows repeated once per entity with positive weight.

    Returns ``X_rep, entity, sample_weight``: the weighted log-loss of a
    classifier on these rows equals the surrogate (exactly, see the tests).
    """
    rows, entity = np.nonzero(weights > 0)
    return _safe_indexing(X, rows), entity, weights[rows, entity]


class _SoftLabelLogisticRegression(BaseEstimator):
    """Multinomial logistic regression on soft label weights (L-BFGS).

    Minimises ``C * sum_ij W_ij * (-log p_ij) + 0.5 * ||coef||^2`` (intercept
    not penalised), which is exactly scikit-learn's ``LogisticRegression``
    objective on the replicated rows, but on ``n`` rows instead of
    ``n * n_entities``. Optional internal standardisation of ``X``.
    """

    def __init__(self, C=1.0, standardize=True, max_iter=1000, tol=1e-8):
        store_params(self, locals())

    def fit(self, X, weights):
        X = np.asarray(X, dtype=np.float64)
        weights = np.asarray(weights, dtype=np.float64)
        n_features, n_labels = X.shape[1], weights.shape[1]
        if self.standardize:
            self.mean_ = X.mean(axis=0)
            scale = X.std(axis=0)
            self.scale_ = np.where(scale > 1e-12, scale, 1.0)
        else:
            self.mean_ = np.zeros(n_features)
            self.scale_ = np.ones(n_features)
        Xs = (X - self.mean_) / self.scale_
        row_mass = weights.sum(axis=1)
        C = float(self.C)

        def objective(theta):
            coef = theta[: n_features * n_labels].reshape(n_features, n_labels)
            intercept = theta[n_features * n_labels :]
            logits = Xs @ coef + intercept
            log_norm = logsumexp(logits, axis=1, keepdims=True)
            log_proba = logits - log_norm
            loss = -np.sum(weights * log_proba)
            proba = np.exp(log_proba)
            grad_logits = proba * row_mass[:, None] - weights
            grad_coef = C * (Xs.T @ grad_logits) + coef
            grad_intercept = C * grad_logits.sum(axis=0)
            value = C * loss + 0.5 * np.sum(coef**2)
            return value, np.concatenate([grad_coef.ravel(), grad_intercept])

        theta0 = np.zeros(n_features * n_labels + n_labels)
        result = minimize(
            objective,
            theta0,
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": self.max_iter, "gtol": self.tol, "ftol": 1e-12},
        )
        theta = result.x
        self.coef_ = theta[: n_features * n_labels].reshape(n_features, n_labels)
        self.intercept_ = theta[n_features * n_labels :]
        self.n_iter_ = int(result.nit)
        return self

    def decision_function(self, X):
        Xs = (np.asarray(X, dtype=np.float64) - self.mean_) / self.scale_
        return Xs @ self.coef_ + self.intercept_


class _ConstantScorer(BaseEstimator):
    """Intercept-only scorer (used when a single entity has training mass)."""

    def fit(self, X, weights):
        mass = weights.sum(axis=0)
        if mass.sum() <= 0:  # no information at all: every entity ties
            mass = np.ones_like(mass)
        with np.errstate(divide="ignore"):
            self.log_share_ = np.log(mass / mass.sum())
        return self

    def decision_function(self, X):
        return np.tile(self.log_share_, (_num_samples(X), 1))


def fit_scorer(estimator, X, weights, random_state=None):
    """Fit a scorer over entities on the (globally scaled) surrogate weights.

    ``estimator`` is None (built-in soft-label multinomial logistic regression,
    n rows) or a scikit-learn classifier with ``predict_proba`` that accepts
    ``sample_weight`` (replicated rows; ``X`` indexed with safe indexing, so a
    DataFrame reaches a preprocessing pipeline untouched), whose unset
    ``random_state`` parameters are seeded from ``random_state``. Returns the
    fitted scorer.
    """
    weights = weights / global_scale(weights)
    if np.count_nonzero(weights.sum(axis=0) > 0) < 2:
        return _ConstantScorer().fit(X, weights)
    if estimator is None:
        return _SoftLabelLogisticRegression().fit(X, weights)
    X_rep, entity, sample_weight = replicate_rows(X, weights)
    scorer = set_child_random_state(clone(estimator), random_state)
    if isinstance(scorer, Pipeline):
        params = {f"{scorer.steps[-1][0]}__sample_weight": sample_weight}
    else:
        params = {"sample_weight": sample_weight}
    # the surrogate's own weights, not routed metadata: the step__param form
    # with routing off for this internal call
    with config_context(enable_metadata_routing=False):
        scorer.fit(X_rep, entity, **params)
    return scorer


def check_scorer(estimator, role="estimator"):
    """Raise a clear error if ``estimator`` cannot fit the surrogate."""
    if estimator is None:
        return
    last = estimator.steps[-1][1] if isinstance(estimator, Pipeline) else estimator
    if not hasattr(estimator, "predict_proba"):
        raise TypeError(
            f"The {role} {type(estimator).__name__} does not implement "
            "predict_proba, which the deferral surrogate needs."
        )
    if not has_fit_parameter(last, "sample_weight"):
        raise TypeError(
            f"The {role} {type(last).__name__} does not accept sample_weight in "
            "fit, which the deferral surrogate (weighted replicated rows) needs."
        )


def scorer_scores(scorer, X, n_labels):
    """Log-probability scores ``(n, n_labels)``; ``-inf`` for unseen labels."""
    if isinstance(scorer, (_SoftLabelLogisticRegression, _ConstantScorer)):
        logits = scorer.decision_function(X)
        return logits - logsumexp(logits, axis=1, keepdims=True)
    proba = scorer.predict_proba(X)
    out = np.full((_num_samples(X), n_labels), -np.inf)
    with np.errstate(divide="ignore"):
        out[:, np.asarray(scorer.classes_, dtype=int)] = np.log(proba)
    return out


def rank_entities(scores):
    """Entities sorted by decreasing score; ties go to the lower index."""
    return np.argsort(-scores, axis=1, kind="stable")


def top_k_mask(scores, k, available=None, order=None):
    """Boolean ``(n, n_entities)`` mask of the (at most) ``k[i]`` best entities.

    ``k`` is an int or an array of per-row ints. Unavailable entities are
    skipped and the next-ranked available entity takes their place; a row
    with fewer than ``k`` available entities consults all of them. ``order``
    (``rank_entities(scores)``) may be passed to skip the sort.
    """
    n, n_entities = scores.shape
    if order is None:
        order = rank_entities(scores)
    k = np.broadcast_to(np.asarray(k, dtype=int), (n,))
    if available is None:
        available = np.ones((n, n_entities), dtype=bool)
    avail_sorted = np.take_along_axis(available, order, axis=1)
    position = np.cumsum(avail_sorted, axis=1)
    chosen_sorted = avail_sorted & (position <= k[:, None])
    mask = np.zeros((n, n_entities), dtype=bool)
    np.put_along_axis(mask, order, chosen_sorted, axis=1)
    return mask


def majority_vote(
    answers,
    mask,
    scores,
    n_classes,
    weighted=False,
    order=None,
    ranked=False,
    evidence=None,
    log_prior=None,
):
    """Aggregate class answers of the selected entities.

    Returns ``(labels, shares)``: ``shares`` are the vote shares (or weights
    shares with ``weighted=True``, the softmax of the scores of the selected
    entities); the label is the class with the most votes. Ties between
    classes go, when ``evidence`` is given, to the tied class with the highest
    posterior ``log_prior + sum over the selected entities of evidence``
    (``evidence`` of shape ``(n, n_entities, n_classes)``, the log-likelihood
    of each entity's answer under each true class, columns ordered as
    ``answers``; see :func:`posterior_log_scores`), and then (or without
    ``evidence``) to the class of the best-ranked entity among the tied ones.
    ``order`` (``rank_entities(scores)``) may be passed to skip the sort; with
    ``ranked=True`` the columns are already in rank order (best first).
    """
    n, n_entities = answers.shape
    if weighted:
        finite = np.where(mask, scores, -np.inf)
        finite = np.where(np.isfinite(finite), finite, -1e300)
        vote = np.exp(finite - finite.max(axis=1, keepdims=True)) * mask
    else:
        vote = mask.astype(np.float64)
    shares = np.zeros((n, n_classes))
    rows = np.arange(n)
    cols = np.where(mask, answers, 0).astype(int)
    for j in range(n_entities):  # few entities: one vectorised pass each
        shares[rows, cols[:, j]] += vote[:, j]
    shares /= shares.sum(axis=1, keepdims=True)
    best = shares.max(axis=1, keepdims=True)
    tied = shares >= best - 1e-12 * np.maximum(best, 1.0)
    if evidence is not None:
        tied = break_ties_by_posterior(
            tied, posterior_log_scores(evidence, mask, log_prior)
        )
    # walk the selected entities in rank order; the first whose class is tied wins
    if ranked:
        ranked_answers, ranked_mask = cols, mask
    else:
        if order is None:
            order = rank_entities(scores)
        ranked_answers = np.take_along_axis(cols, order, axis=1)
        ranked_mask = np.take_along_axis(mask, order, axis=1)
    ranked_tied = np.take_along_axis(tied, ranked_answers, axis=1) & ranked_mask
    first = np.argmax(ranked_tied, axis=1)
    return ranked_answers[rows, first], shares


def posterior_log_scores(evidence, mask, log_prior=None):
    """``log_prior + sum_j mask_j * evidence_j``: the class log-posterior.

    ``evidence[i, j, c]`` is the log-likelihood of entity ``j``'s answer on
    row ``i`` if the true class were ``c`` (naive Bayes: the consulted
    entities err independently given the class). Shape ``(n, n_classes)``.
    """
    post = np.sum(np.where(mask[:, :, None], evidence, 0.0), axis=1)
    if log_prior is not None:
        post = post + log_prior[None, :]
    return post


def break_ties_by_posterior(tied, post):
    """Keep, among the ``tied`` classes of each row, those of highest ``post``."""
    masked = np.where(tied, post, -np.inf)
    best = masked.max(axis=1, keepdims=True)
    return tied & (masked >= best - 1e-9 * np.maximum(np.abs(best), 1.0))


def rank_columns(scores, *arrays):
    """Sort the columns of ``scores`` and of each array by decreasing score.

    An array may have a third axis (it is sorted along its second); ``None``
    stays ``None``.
    """
    order = rank_entities(scores)

    def sort(a):
        if a is None:
            return None
        if a.ndim == 3:
            return np.take_along_axis(a, order[:, :, None], axis=1)
        return np.take_along_axis(a, order, axis=1)

    return [sort(a) for a in (scores, *arrays)]


def aggregate_values(answers, mask, scores, how):
    """Aggregate real-valued answers: ``"mean"``, ``"weighted_mean"``, ``"median"``."""
    values = np.where(mask, answers, np.nan)
    if how == "mean":
        return np.nanmean(values, axis=1)
    if how == "median":
        return np.nanmedian(values, axis=1)
    finite = np.where(mask, scores, -np.inf)
    finite = np.where(np.isfinite(finite), finite, -1e300)
    weight = np.exp(finite - finite.max(axis=1, keepdims=True)) * mask
    weight /= weight.sum(axis=1, keepdims=True)
    return np.sum(np.where(mask, answers, 0.0) * weight, axis=1)
