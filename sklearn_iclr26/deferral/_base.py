"""Shared base of the Top-k deferral estimators (private)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, clone, is_classifier
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import check_cv, cross_val_predict
from sklearn.utils import Bunch
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import (
    _assert_all_finite,
    check_is_fitted,
    validate_data,
)

from sklearn_iclr26.deferral._surrogate import (
    check_scorer,
    entity_costs,
    fit_scorer,
    rank_columns,
    scorer_scores,
    surrogate_weights,
    top_k_mask,
)

__all__ = []


class _BaseTopKDeferral(BaseEstimator):
    """Common machinery: entities, costs, surrogate fit, Top-k and Top-k(x)."""

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict_proba"]), None],
        "predictor": [HasMethods(["fit", "predict"]), None],
        "k": [Interval(Integral, 1, None, closed="left")],
        "adaptive": ["boolean"],
        "cardinality_estimator": [HasMethods(["fit", "predict_proba"]), None],
        "budget_weight": [Interval(Real, 0, None, closed="left")],
        "alpha": ["array-like", Interval(Real, 0, None, closed="left")],
        "costs": ["array-like", Interval(Real, 0, None, closed="left"), None],
        "n_experts": [Interval(Integral, 0, None, closed="left")],
        "cv": ["cv_object"],
        "verbose": ["verbose"],
    }

    # ----------------------------------------------------------------- hooks
    # subclasses define: _default_predictor, _prepare_y, _model_answers,
    # _entity_answers, _answer_errors, _aggregate, _curve_metric, _n_fixed_entities

    def _log(self, message):
        if self.verbose:
            print(f"[{type(self).__name__}] {message}")

    def _get_predictor(self):
        if self.predictor is None:
            return self._default_predictor()
        return self.predictor

    # ------------------------------------------------------------- validation
    def _validate_X(self, X, y=None, reset=False):
        kwargs = {"dtype": np.float64, "ensure_all_finite": False}
        if reset:
            y_numeric = not is_classifier(self)
            X, y = validate_data(self, X, y, reset=True, y_numeric=y_numeric, **kwargs)
            if self.n_experts >= X.shape[1]:
                raise ValueError(
                    f"X has {X.shape[1]} columns but n_experts={self.n_experts}: "
                    "the expert answers are the last n_experts columns of X and "
                    "at least one feature column must remain."
                )
        else:
            X = validate_data(self, X, reset=False, **kwargs)
        n_features = X.shape[1] - self.n_experts
        X_feat, E = X[:, :n_features], X[:, n_features:]
        _assert_all_finite(X_feat, allow_nan=False, input_name="X")
        if np.isinf(E).any():
            raise ValueError(
                "The expert columns of X contain infinite values; use NaN for an "
                "expert that is unavailable for a row."
            )
        return X_feat, E, y

    def _resolve_costs(self, n_entities):
        n_fixed = n_entities - self.n_experts
        alpha = np.asarray(self.alpha, dtype=np.float64)
        if alpha.ndim == 0:
            alpha = np.full(n_entities, float(alpha))
        elif alpha.shape != (n_entities,):
            raise ValueError(
                f"alpha must be a scalar or have one value per entity "
                f"({n_entities}), got shape {alpha.shape}."
            )
        if self.costs is None:
            fees = np.zeros(n_entities)
        else:
            fees = np.asarray(self.costs, dtype=np.float64)
            if fees.ndim == 0:
                fees = np.r_[np.zeros(n_fixed), np.full(self.n_experts, float(fees))]
            elif fees.shape == (self.n_experts,):
                fees = np.r_[np.zeros(n_fixed), fees]
            elif fees.shape != (n_entities,):
                raise ValueError(
                    f"costs must be a scalar, one fee per expert ({self.n_experts}) "
                    f"or one fee per entity ({n_entities}), got shape {fees.shape}."
                )
        for name, value in (("alpha", alpha), ("costs", fees)):
            if not np.all(np.isfinite(value)) or np.any(value < 0):
                raise ValueError(f"{name} must be finite and non-negative.")
        return alpha, fees

    # -------------------------------------------------------------------- fit
    def _card(self):
        return self.cardinality_estimator_ if self.adaptive else None

    def _fit_deferral(self, X_feat, E, y, y_cost):
        """Fit predictor, allocator (rejector) and cardinality model.

        ``y`` is what the predictor is fitted on; ``y_cost`` what the entity
        answers are compared with (encoded labels for classification).
        """
        check_scorer(self.estimator, "estimator")
        check_scorer(self.cardinality_estimator, "cardinality_estimator")
        cv = check_cv(self.cv, y, classifier=is_classifier(self))
        model_answers = None
        if self._uses_predictor():
            predictor = self._get_predictor()
            self._log("fitting the predictor")
            self.predictor_ = clone(predictor).fit(X_feat, y)
            if self.n_experts > 0:
                if isinstance(predictor, FrozenEstimator):
                    model_answers = self.predictor_.predict(X_feat)
                else:
                    self._log("cross-fitting the predictor's answers")
                    model_answers = cross_val_predict(
                        clone(predictor), X_feat, y, cv=cv
                    )
        answers, available = self._entity_answers(X_feat, E, model_answers)
        n_entities = answers.shape[1]
        self.n_entities_ = n_entities
        if self.k > n_entities:
            raise ValueError(
                f"k={self.k} is larger than the number of entities ({n_entities})."
            )
        self.alpha_, self.costs_ = self._resolve_costs(n_entities)
        errors = self._answer_errors(answers, y_cost)
        mu = entity_costs(errors, self.alpha_, self.costs_, available)
        weights = surrogate_weights(mu, available)
        if n_entities == 1:
            self.rejector_ = None
        else:
            self._log(f"fitting the allocator on {n_entities} entities")
            self.rejector_ = fit_scorer(self.estimator, X_feat, weights)
        self.cardinality_estimator_ = None
        if self.adaptive and n_entities > 1:
            self._fit_cardinality_data(
                X_feat, y, y_cost, answers, available, weights, cv
            )
            self.cardinality_estimator_ = self._fit_cardinality(self.budget_weight)
        return self

    def _fit_cardinality_data(self, X_feat, y, y_cost, answers, available, weights, cv):
        """Out-of-fold allocator scores -> per-k aggregate errors and fees."""
        n, n_entities = answers.shape
        oof = np.empty((n, n_entities))
        for i, (train, test) in enumerate(cv.split(X_feat, y)):
            self._log(f"cross-fitting the allocator, fold {i + 1}")
            scorer = fit_scorer(self.estimator, X_feat[train], weights[train])
            oof[test] = scorer_scores(scorer, X_feat[test], n_entities)
        agg_errors = np.empty((n, n_entities))
        fees = np.empty((n, n_entities))
        costs = np.broadcast_to(self.costs_, (n, n_entities))
        scores_r, answers_r, avail_r, costs_r = rank_columns(
            oof, answers, available, costs
        )
        position = np.cumsum(avail_r, axis=1)
        for k in range(1, n_entities + 1):
            mask_r = avail_r & (position <= k)
            agg_errors[:, k - 1] = self._aggregate_error(
                answers_r, mask_r, scores_r, y_cost, ranked=True
            )
            fees[:, k - 1] = np.sum(mask_r * costs_r, axis=1)
        self._cardinality_data_ = (X_feat, agg_errors, fees)

    def _fit_cardinality(self, budget_weight):
        X_feat, agg_errors, fees = self._cardinality_data_
        cost = agg_errors + budget_weight * fees
        weights = cost.sum(axis=1, keepdims=True) - cost
        self._log(f"fitting the cardinality model (budget_weight={budget_weight})")
        return fit_scorer(self.cardinality_estimator, X_feat, weights)

    # ---------------------------------------------------------------- predict
    def _scores(self, X_feat):
        if self.rejector_ is None:
            return np.zeros((X_feat.shape[0], self.n_entities_))
        return scorer_scores(self.rejector_, X_feat, self.n_entities_)

    def _k_from_cardinality(self, cardinality, X_feat):
        if cardinality is None:
            return np.full(X_feat.shape[0], min(self.k, self.n_entities_))
        scores = scorer_scores(cardinality, X_feat, self.n_entities_)
        return np.argmax(scores, axis=1) + 1

    def _check_k(self, k):
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, Integral):
            raise TypeError(f"k must be an int, got {k!r}.")
        if not 1 <= k <= self.n_entities_:
            raise ValueError(
                f"k must be in [1, {self.n_entities_}] (the number of entities), "
                f"got {k}."
            )
        return int(k)

    def entity_scores(self, X):
        """Allocator scores of the entities (log-probabilities).

        Entities are ordered as in ``entity_names_``. The ``k`` entities with
        the highest scores are consulted; an entity never seen with training
        mass scores ``-inf``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data; the expert columns are ignored (they may be NaN).

        Returns
        -------
        scores : ndarray of shape (n_samples, `n_entities_`)
            Entity scores.
        """
        check_is_fitted(self)
        X_feat, _, _ = self._validate_X(X)
        return self._scores(X_feat)

    def predict_k(self, X):
        """Number of entities consulted per query.

        ``k`` for every row, or the learned cardinality ``k(x)`` when
        ``adaptive=True``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data; the expert columns are ignored.

        Returns
        -------
        k : ndarray of shape (n_samples,)
            Integers in ``[1, n_entities_]``.
        """
        check_is_fitted(self)
        X_feat, _, _ = self._validate_X(X)
        return self._k_from_cardinality(self.cardinality_estimator_, X_feat)

    def predict_allocation(self, X, k=None):
        """Entities chosen for each query, before asking any of them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data; the expert columns are ignored (they may be NaN: whom
            to ask is chosen before asking).
        k : int, default=None
            Number of entities; ``None`` uses ``k`` (or ``k(x)`` when
            ``adaptive=True``).

        Returns
        -------
        allocation : ndarray of bool of shape (n_samples, `n_entities_`)
            ``True`` for the entities consulted, ordered as ``entity_names_``.
        """
        check_is_fitted(self)
        X_feat, _, _ = self._validate_X(X)
        scores = self._scores(X_feat)
        if k is None:
            k = self._k_from_cardinality(self.cardinality_estimator_, X_feat)
        else:
            k = self._check_k(k)
        return top_k_mask(scores, k)

    def _consult(self, X, k=None, cardinality=None):
        """Scores, entity answers, availability and the consulted mask."""
        X_feat, E, _ = self._validate_X(X)
        scores = self._scores(X_feat)
        answers, available = self._entity_answers(X_feat, E, None)
        if k is None:
            k = self._k_from_cardinality(cardinality, X_feat)
        mask = top_k_mask(scores, k, available)
        return X_feat, scores, answers, mask

    def _fixed_k_metrics(self, answers_r, avail_r, scores_r, position, ks, y):
        """Curve metric for each fixed k, on rank-ordered columns."""
        return [
            self._curve_metric(
                answers_r, avail_r & (position <= k), scores_r, y, ranked=True
            )
            for k in ks
        ]

    def deferral_curve(self, X, y, ks=None, budget_weights=None):
        """Score against mean budget for every ``k``, from this one fit.

        The allocator's surrogate does not depend on ``k``, so every fixed
        ``k`` is evaluated without refitting. With ``adaptive=True``, each
        value of ``budget_weights`` refits only the (small) cardinality model
        on the cross-fitted data stored at fit time.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data with the expert answers in the last ``n_experts``
            columns.
        y : array-like of shape (n_samples,)
            True targets.
        ks : array-like of int, default=None
            Values of ``k``; ``None`` means ``1..n_entities_``.
        budget_weights : array-like of float, default=None
            Values of the budget weight for Top-k(x); requires
            ``adaptive=True``. ``None`` means no Top-k(x) points.

        Returns
        -------
        curve : :class:`~sklearn.utils.Bunch`
            ``metric`` (``"accuracy"`` or ``"rmse"``); ``k``, ``score`` and
            ``budget`` (mean fees paid per query) for fixed Top-k;
            ``budget_weight``, ``adaptive_score``, ``adaptive_budget`` and
            ``adaptive_k`` (mean ``k(x)``) for Top-k(x).
        """
        check_is_fitted(self)
        y = self._prepare_y_predict(y)
        ks = np.arange(1, self.n_entities_ + 1) if ks is None else np.asarray(ks)
        ks = np.array([self._check_k(int(k)) for k in ks.ravel()], dtype=int)
        if budget_weights is not None and not self.adaptive:
            raise ValueError(
                "budget_weights needs adaptive=True: the Top-k(x) cardinality "
                "model is trained on cross-fitted data stored at fit time."
            )
        X_feat, E, _ = self._validate_X(X)
        if X_feat.shape[0] != y.shape[0]:
            raise ValueError("X and y have inconsistent numbers of samples.")
        scores = self._scores(X_feat)
        answers, available = self._entity_answers(X_feat, E, None)
        # one sort serves every k: work on rank-ordered columns
        n = scores.shape[0]
        costs = np.broadcast_to(self.costs_, scores.shape)
        scores_r, answers_r, avail_r, costs_r = rank_columns(
            scores, answers, available, costs
        )
        position = np.cumsum(avail_r, axis=1)
        score = self._fixed_k_metrics(answers_r, avail_r, scores_r, position, ks, y)
        budget = [float(np.sum((avail_r & (position <= k)) * costs_r) / n) for k in ks]
        curve = Bunch(
            metric=self._curve_metric_name,
            k=ks,
            score=np.array(score),
            budget=np.array(budget),
            budget_weight=np.array([]),
            adaptive_score=np.array([]),
            adaptive_budget=np.array([]),
            adaptive_k=np.array([]),
        )
        if budget_weights is not None and self.n_entities_ > 1:
            lambdas = np.asarray(budget_weights, dtype=np.float64).ravel()
            if np.any(lambdas < 0) or not np.all(np.isfinite(lambdas)):
                raise ValueError("budget_weights must be finite and non-negative.")
            a_score, a_budget, a_k = [], [], []
            for lam in lambdas:
                cardinality = self._fit_cardinality(float(lam))
                k_x = self._k_from_cardinality(cardinality, X_feat)
                mask_r = avail_r & (position <= k_x[:, None])
                a_score.append(
                    self._curve_metric(answers_r, mask_r, scores_r, y, ranked=True)
                )
                a_budget.append(float(np.sum(mask_r * costs_r) / n))
                a_k.append(float(np.mean(k_x)))
            curve.budget_weight = lambdas
            curve.adaptive_score = np.array(a_score)
            curve.adaptive_budget = np.array(a_budget)
            curve.adaptive_k = np.array(a_k)
        return curve
