"""Shared base of the Top-k deferral estimators (private).

The family's hooks are the abstract methods of :class:`_BaseTopKDeferral`; a
subclass that misses one fails at construction.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from abc import ABCMeta, abstractmethod
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone, is_classifier
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import (
    KFold,
    StratifiedKFold,
    check_cv,
    cross_val_predict,
)
from sklearn.pipeline import Pipeline
from sklearn.utils import Bunch, get_tags
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import (
    check_array,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
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
from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._batching import batched
from sklearn_iclr26.utils._random import (
    seed_from_random_state,
    set_child_random_state,
)
from sklearn_iclr26.utils._routing import fit_router, route_fit_params
from sklearn_iclr26.utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _check_method_params,
    _fit_context,
    _num_samples,
    _safe_indexing,
)
from sklearn_iclr26.utils._validation import explain_overflow
from sklearn_iclr26.utils._verbose import log_progress

__all__ = []


#: Attributes shared by the top-k deferral estimators (class docstrings).
ATTRIBUTES_DOC = """rejector_ : object or None
    Fitted allocator; ``None`` when there is a single entity.
cardinality_estimator_ : object or None
    Fitted cardinality model (``adaptive=True``).
transformer_ : transformer or None
    Fitted transformer feeding the built-in allocator and cardinality
    model (``None``: the feature columns as they are).
n_experts_ : int
    Number of experts (``len(expert_columns)``).
error_weight_ : ndarray of shape (`n_entities_`,)
    Error weights per entity.
costs_ : ndarray of shape (`n_entities_`,)
    Fees per entity.
n_features_in_ : int
    Number of columns of ``X`` seen during fit (features and experts).
feature_names_in_ : ndarray of shape (`n_features_in_`,)
    Names of the columns seen during fit. Defined only when `X` has
    feature names that are all strings."""

#: The paper, cited by the top-k deferral estimators.
REFERENCES_DOC = """.. [1] Y. Montreuil, A. Carlier, L. X. Ng, W. T. Ooi.
   "Why Ask One When You Can Ask k? Learning-to-Defer to the Top-k
   Experts." ICLR 2026, arXiv:2504.12988."""


def _missing_mask(values):
    """``True`` where an expert answer is missing (NaN, None or pandas NA)."""
    values = np.asarray(values)
    if values.dtype.kind in "fc":
        return np.isnan(values)
    if values.dtype.kind != "O":
        return np.zeros(values.shape, dtype=bool)

    def missing(v):
        return (
            v is None
            or type(v).__name__ in ("NAType", "NaTType")
            or (isinstance(v, (float, np.floating)) and np.isnan(v))
        )

    return np.frompyfunc(missing, 1, 1)(values).astype(bool)


def _is_dataframe(X):
    return hasattr(X, "iloc") and hasattr(X, "columns")


class _ExpertColumnsMixin:
    """Expert answers as named columns of ``X``: validation and splitting.

    Shared by the deferral estimators; needs ``expert_columns`` and, after
    ``_resolve_expert_columns`` at fit, ``_expert_positions``,
    ``_feature_positions``, ``n_experts_`` and ``_encode_experts``.
    """

    def _validate_input(self, X, reset):
        """Record ``n_features_in_``/``feature_names_in_``; ``X`` kept as is.

        A DataFrame passes untouched (its string columns are for the inner
        pipeline); anything else becomes a 2-D array of any dtype.
        """
        if _is_dataframe(X):
            return validate_data(self, X, reset=reset, skip_check_array=True)
        return validate_data(
            self,
            X,
            reset=reset,
            dtype=None,
            ensure_all_finite=False,
            accept_sparse=False,
        )

    def _validate_y(self, X, y):
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y "
                "is None."
            )
        y = check_array(y, ensure_2d=False, dtype=None, ensure_all_finite=False)
        y = column_or_1d(y, warn=True)
        check_consistent_length(X, y)
        return y

    def _resolve_expert_columns(self, X):
        """Positions of the expert columns in ``X`` (checked), at fit."""
        columns = self.expert_columns
        n_columns = self.n_features_in_
        if columns is None:
            return np.array([], dtype=int)
        if isinstance(columns, (str, Integral)):
            columns = [columns]
        columns = list(np.asarray(columns, dtype=object).ravel())
        if not columns:
            return np.array([], dtype=int)
        names = getattr(self, "feature_names_in_", None)
        if all(isinstance(c, str) for c in columns):
            if names is None:
                raise ValueError(
                    f"expert_columns={columns!r} are column names, but X has no "
                    "column names: pass a pandas DataFrame with these columns, or "
                    "give the expert columns as integer positions."
                )
            known = list(names)
            missing = [c for c in columns if c not in known]
            if missing:
                hints = [n for n in known if any(n.endswith(m) for m in missing)]
                hint = f" Did you mean {hints}?" if hints else ""
                raise ValueError(
                    f"expert_columns {missing} are not columns of X (X has "
                    f"{len(known)} columns: {known[:10]}"
                    f"{' ...' if len(known) > 10 else ''}).{hint}"
                )
            positions = np.array([known.index(c) for c in columns], dtype=int)
        elif all(
            isinstance(c, Integral) and not isinstance(c, (bool, np.bool_))
            for c in columns
        ):
            if names is not None:
                raise ValueError(
                    "X is a DataFrame with column names, so expert_columns must "
                    f"name the expert columns (e.g. {list(names[-1:])!r}), not give "
                    f"positions ({columns!r}): positions silently turn features into "
                    "expert answers when the columns move."
                )
            positions = np.array(columns, dtype=int)
            bad = positions[(positions < 0) | (positions >= n_columns)]
            if bad.size:
                raise ValueError(
                    f"expert_columns {bad.tolist()} are out of range: X has "
                    f"{n_columns} columns (positions 0 to {n_columns - 1})."
                )
        else:
            raise TypeError(
                "expert_columns must be column names (str) or column positions "
                f"(non-negative int), not a mix; got {columns!r}."
            )
        if len(np.unique(positions)) != len(positions):
            raise ValueError(f"expert_columns has duplicates: {columns!r}.")
        if len(positions) >= n_columns:
            raise ValueError(
                f"X has {n_columns} columns and expert_columns names "
                f"{len(positions)} of them: at least one feature column must remain "
                "for the predictor and the allocator."
            )
        return positions

    def _split(self, X):
        """Feature part of ``X`` (same type, untouched) and the raw expert part."""
        if self.n_experts_ == 0:
            return X, None
        X_feat = _safe_indexing(X, self._feature_positions, axis=1)
        E = _safe_indexing(X, self._expert_positions, axis=1)
        E = E.to_numpy() if hasattr(E, "to_numpy") else np.asarray(E)
        return X_feat, self._encode_experts(E)

    def _expert_names(self):
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            return [str(names[p]) for p in self._expert_positions]
        return [f"expert_{j}" for j in range(self.n_experts_)]


class _LabelExpertsMixin:
    """Expert answers that are labels of ``y`` (needs ``classes_``)."""

    def _encode(self, labels, what):
        """Indices of ``labels`` in ``classes_``; a clear error for others."""
        labels = np.asarray(labels)
        classes = self.classes_
        if labels.dtype.kind in "biuf" and classes.dtype.kind in "biuf":
            index = np.clip(np.searchsorted(classes, labels), 0, len(classes) - 1)
            bad = classes[index] != labels
        else:
            lookup = {c: i for i, c in enumerate(classes.tolist())}
            index = np.array(
                [lookup.get(v, -1) for v in labels.tolist()], dtype=int
            ).reshape(labels.shape)
            bad = index < 0
            index = np.where(bad, 0, index)
        if np.any(bad):
            unknown = list(dict.fromkeys(labels[bad].tolist()))[:5]
            raise ValueError(
                f"{what} contains labels not in classes_ "
                f"{classes[:10].tolist()}: {unknown}."
            )
        return index

    def _encode_experts(self, E):
        missing = _missing_mask(E)
        encoded = np.full(E.shape, np.nan)
        values = E[~missing]
        try:
            index = self._encode(values, "The expert answers")
        except ValueError:
            bad = [v for v in values.tolist() if v not in set(self.classes_.tolist())]
            raise ValueError(
                f"The expert answers (columns {self._expert_names()}) must be labels "
                f"of y, i.e. values in classes_ = {self.classes_[:10].tolist()}, or "
                "NaN/None for an expert unavailable on a row; not label-encoded "
                "indices, nor strings other than the labels. Found "
                f"{list(dict.fromkeys(bad))[:5]}."
            ) from None
        encoded[~missing] = index
        return encoded


class _BaseTopKDeferral(_ExpertColumnsMixin, BaseEstimator, metaclass=ABCMeta):
    """Common machinery: entities, costs, surrogate fit, Top-k and Top-k(x).

    ``X`` is handed untouched to the predictor and to a user-given allocator
    or cardinality model (minus the expert columns, rows indexed with safe
    indexing); the built-in allocator and cardinality model (``None``) compute
    on ``transformer_.transform(X_features)``.
    """

    _parameter_constraints: dict = {
        "rejector": [HasMethods(["fit", "predict_proba"]), None],
        "predictor": [HasMethods(["fit", "predict"]), None],
        "k": [Interval(Integral, 1, None, closed="left")],
        "adaptive": ["boolean"],
        "cardinality_estimator": [HasMethods(["fit", "predict_proba"]), None],
        "budget_weight": [Interval(Real, 0, None, closed="left")],
        "error_weight": ["array-like", Interval(Real, 0, None, closed="left")],
        "costs": ["array-like", Interval(Real, 0, None, closed="left"), None],
        "expert_columns": [
            "array-like",
            str,
            Interval(Integral, 0, None, closed="left"),
            None,
        ],
        "transformer": [
            HasMethods(["fit", "transform"]),
            StrOptions({"passthrough"}),
            None,
        ],
        "cv": ["cv_object"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # ------------------------------------------------------------------ hooks
    @abstractmethod
    def _default_predictor(self):
        """The predictor used when ``predictor=None``."""

    @abstractmethod
    def _uses_predictor(self):
        """Whether the model entity is a fitted predictor (two-stage)."""

    @abstractmethod
    def _encode_experts(self, E):
        """Raw expert columns -> float ``(n, n_experts)`` (NaN = unavailable)."""

    @abstractmethod
    def _entity_answers(self, X_feat, E, model_output):
        """``(answers, available, extra)`` of every entity, ``(n, n_entities)``.

        ``model_output`` is the cross-fitted output of the predictor at fit
        (``_crossfit_model_output``), ``None`` at prediction; ``extra`` is what
        ``_evidence`` needs beyond the answers (or ``None``).
        """

    def _crossfit_model_output(self, predictor, X_feat, y, cv, params):
        """Cross-fitted answers of the predictor (its own for a frozen one)."""
        if isinstance(predictor, FrozenEstimator):
            return self.predictor_.predict(X_feat)
        return cross_val_predict(predictor, X_feat, y, cv=cv, params=params)

    def _fit_votes(self, answers, available, extra, y_cost):
        """Fit what the aggregation needs beyond the allocator (default: none)."""

    def _evidence(self, answers, available, extra):
        """Per-entity evidence for the aggregation's tie rule (default: none)."""

    def _answer_table(self, X_feat, E):
        """``(answers, available, evidence)`` at prediction time."""
        answers, available, extra = self._entity_answers(X_feat, E, None)
        return answers, available, self._evidence(answers, available, extra)

    @abstractmethod
    def _answer_errors(self, answers, y):
        """Per-entity error ``psi(answer, y)`` (0 where unavailable)."""

    @abstractmethod
    def _aggregate(self, answers, mask, scores, ranked=False, evidence=None):
        """Aggregate answer of the consulted entities (encoded for classes)."""

    @abstractmethod
    def _aggregate_error(self, answers, mask, scores, y, ranked=False, evidence=None):
        """Per-row error of the aggregate answer."""

    @abstractmethod
    def _curve_values(self, answers, mask, scores, y, ranked=False, evidence=None):
        """Per-row terms of the curve metric (summed, then ``_curve_finish``)."""

    @abstractmethod
    def _curve_finish(self, mean_value):
        """Curve metric from the mean of ``_curve_values``."""

    @abstractmethod
    def _prepare_y_predict(self, y):
        """``y`` as compared with the entity answers (encoded for classes)."""

    @abstractmethod
    def _decode(self, aggregate):
        """Aggregate answers -> predictions in the label space of ``y``."""

    # ---------------------------------------------------------------- fit
    @abstractmethod
    def _check_target(self, y):
        """Checked ``y`` and the ``y`` the costs are computed from."""

    @abstractmethod
    def _model_entity_names(self):
        """Names of the entities before the experts (model or classes)."""

    def get_metadata_routing(self):
        """Route ``fit`` metadata (e.g. ``sample_weight``) to the predictor.

        Two-stage only (the one-stage regime has no predictor). The allocator
        and the cardinality model are fitted with the surrogate's own
        weights, not routed metadata.

        Returns
        -------
        routing : MetadataRouter
            The routing information.
        """
        predictor = self._get_predictor() if self._uses_predictor() else None
        return fit_router(self, {"predictor": predictor})

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, **fit_params):
        """Fit the predictor, the allocator and (if adaptive) the k(x) model.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Features and the expert columns (``expert_columns``). Handed
            untouched (rows and columns selected) to the predictor.
        y : array-like of shape (n_samples,)
            Target labels (classification) or values (regression).
        **fit_params : dict
            Parameters of the predictor's ``fit`` (e.g. ``sample_weight``),
            for its fit and its cross-fitted answers (two-stage only). With
            metadata routing enabled, the predictor receives what it
            requested (``set_fit_request``). The allocator and the
            cardinality model are not weighted by them.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        if fit_params and not self._uses_predictor():
            raise TypeError(
                f"{type(self).__name__}.fit got {sorted(fit_params)}, which only "
                'the predictor takes, and regime="one-stage" has none.'
            )
        X = self._validate_input(X, reset=True)
        params = route_fit_params(self, fit_params, ["predictor"])["predictor"]
        params = _check_method_params(X, params=params)
        y = self._validate_y(X, y)
        y, y_cost = self._check_target(y)
        self._expert_positions = self._resolve_expert_columns(X)
        self._feature_positions = np.setdiff1d(
            np.arange(self.n_features_in_), self._expert_positions
        )
        self.n_experts_ = len(self._expert_positions)
        self.entity_names_ = np.array(
            [*self._model_entity_names(), *self._expert_names()], dtype=object
        )
        # finite 1e300 features overflow inside a StandardScaler: say so
        # instead of the child's "Input X contains NaN" (issue 40, item 17)
        X_feat, _ = self._split_features_only(X)
        with explain_overflow(X_feat, "the predictor or the built-in allocator"):
            return self._fit_deferral(X, y, y_cost, params)

    def predict(self, X):
        """Aggregate answer of the consulted entities.

        Rows are processed in batches sized by scikit-learn's
        ``working_memory``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Features and the expert columns.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels (classification) or values (regression).
        """
        return self._predict_with_fees(X)[0]

    # ------------------------------------------------------------- validation
    def _get_predictor(self):
        if self.predictor is None:
            return self._default_predictor()
        return self.predictor

    def _resolve_costs(self, n_entities):
        n_experts = self.n_experts_
        n_fixed = n_entities - n_experts
        weight = np.asarray(self.error_weight, dtype=np.float64)
        if weight.ndim == 0:
            weight = np.full(n_entities, float(weight))
        elif weight.shape != (n_entities,):
            raise ValueError(
                f"error_weight must be a scalar or have one value per entity "
                f"({n_entities}), got shape {weight.shape}."
            )
        if self.costs is None:
            fees = np.zeros(n_entities)
        else:
            fees = np.asarray(self.costs, dtype=np.float64)
            if fees.ndim == 0:
                fees = np.r_[np.zeros(n_fixed), np.full(n_experts, float(fees))]
            elif fees.shape == (n_experts,):
                fees = np.r_[np.zeros(n_fixed), fees]
            elif fees.shape != (n_entities,):
                raise ValueError(
                    f"costs must be a scalar, one fee per expert ({n_experts}) "
                    f"or one fee per entity ({n_entities}), got shape {fees.shape}."
                )
        for name, value in (("error_weight", weight), ("costs", fees)):
            if not np.all(np.isfinite(value)) or np.any(value < 0):
                raise ValueError(f"{name} must be finite and non-negative.")
        return weight, fees

    # ------------------------------------------------- inputs of the scorers
    def _default_transformer(self):
        """The fitted steps before the predictor's final estimator, if any."""
        if not self._uses_predictor():
            return None
        inner = self.predictor_
        if isinstance(inner, FrozenEstimator):
            inner = inner.estimator
        if isinstance(inner, Pipeline) and len(inner.steps) > 1:
            return inner[:-1]
        return None

    def _fit_transformer(self, X_feat, y, seed):
        if self.transformer == "passthrough":
            return None
        if self.transformer is None:
            return self._default_transformer()
        transformer = clone(self.transformer)
        set_child_random_state(transformer, seed)
        log_progress(self, "fitting the transformer")
        return transformer.fit(X_feat, y)

    def _builtin_input(self, X_feat):
        """Numeric input of the built-in allocator / cardinality model."""
        Xt = (
            X_feat if self.transformer_ is None else self.transformer_.transform(X_feat)
        )
        if sp.issparse(Xt):
            Xt = Xt.toarray()
        try:
            Xt = check_array(Xt, dtype=np.float64, ensure_all_finite=False)
        except (TypeError, ValueError) as exc:
            # keep the exception type (TypeError for unconvertible objects)
            raise type(exc)(
                f"{type(self).__name__}'s built-in allocator (rejector=None or "
                "cardinality_estimator=None) computes on the feature columns of X, "
                f"which are not numeric ({exc}). Pass transformer= (e.g. the "
                "ColumnTransformer that encodes X), use a predictor Pipeline whose "
                "steps before its final estimator encode X (the default "
                "transformer), or give an allocator estimator that preprocesses X "
                "itself."
            ) from None
        if not np.all(np.isfinite(Xt)):
            raise ValueError(
                f"{type(self).__name__}'s built-in allocator (rejector=None or "
                "cardinality_estimator=None) cannot use the feature columns of X: "
                "they contain NaN or infinity after the transformer. Pass a "
                "transformer= that imputes, or an allocator estimator that accepts "
                "NaN (e.g. HistGradientBoostingClassifier)."
            )
        return Xt

    def _inputs(self, X_feat):
        """``get(user_estimator)``: what the allocator or k(x) model sees."""
        cache = {}

        def get(user):
            if user is not None:
                return X_feat
            if "builtin" not in cache:
                cache["builtin"] = self._builtin_input(X_feat)
            return cache["builtin"]

        return get

    def _cv(self, y, seed):
        if isinstance(self.cv, Integral) and seed is not None:
            stratify = is_classifier(self) and type_of_target(y) in (
                "binary",
                "multiclass",
            )
            splitter = StratifiedKFold if stratify else KFold
            return splitter(self.cv, shuffle=True, random_state=seed)
        return check_cv(self.cv, y, classifier=is_classifier(self))

    # -------------------------------------------------------------------- fit
    def _card(self):
        return self.cardinality_estimator_ if self.adaptive else None

    def _fit_deferral(self, X, y, y_cost, predictor_params=None):
        """Fit predictor, allocator (rejector) and cardinality model.

        ``y`` is what the predictor is fitted on; ``y_cost`` what the entity
        answers are compared with (encoded labels for classification).
        """
        check_scorer(self.rejector, "rejector")
        check_scorer(self.cardinality_estimator, "cardinality_estimator")
        if self.random_state is None:
            seeds = [None] * 5
        else:
            rng = np.random.RandomState(seed_from_random_state(self.random_state))
            seeds = [int(s) for s in rng.randint(np.iinfo(np.int32).max, size=5)]
        cv = self._cv(y, seeds[0])
        X_feat, E = self._split(X)
        model_output = None
        if self._uses_predictor():
            predictor = self._get_predictor()
            log_progress(self, "fitting the predictor")
            self.predictor_ = set_child_random_state(clone(predictor), seeds[1])
            params = predictor_params or {}
            self.predictor_.fit(X_feat, y, **params)
            if self.n_experts_ > 0:
                if not isinstance(predictor, FrozenEstimator):
                    log_progress(self, "cross-fitting the predictor's answers")
                    predictor = set_child_random_state(clone(predictor), seeds[1])
                model_output = self._crossfit_model_output(
                    predictor, X_feat, y, cv, params
                )
        answers, available, extra = self._entity_answers(X_feat, E, model_output)
        self._fit_votes(answers, available, extra, y_cost)
        evidence = self._evidence(answers, available, extra)
        n_entities = answers.shape[1]
        self.n_entities_ = n_entities
        if self.k > n_entities:
            raise ValueError(
                f"k={self.k} is larger than the number of entities ({n_entities})."
            )
        self.error_weight_, self.costs_ = self._resolve_costs(n_entities)
        errors = self._answer_errors(answers, y_cost)
        mu = entity_costs(errors, self.error_weight_, self.costs_, available)
        weights = surrogate_weights(mu, available)
        self.transformer_ = None
        self.rejector_ = None
        self.cardinality_estimator_ = None
        self._cardinality_training = None
        if n_entities == 1:
            return self
        uses_builtin = self.rejector is None or (
            self.adaptive and self.cardinality_estimator is None
        )
        if uses_builtin:
            self.transformer_ = self._fit_transformer(X_feat, y, seeds[2])
        inputs = self._inputs(X_feat)
        log_progress(self, f"fitting the allocator on {n_entities} entities")
        self.rejector_ = fit_scorer(
            self.rejector, inputs(self.rejector), weights, seeds[3]
        )
        if self.adaptive:
            self._fit_cardinality_data(
                inputs, y, y_cost, answers, available, weights, cv, seeds[3], evidence
            )
            self.cardinality_estimator_ = self._fit_cardinality(
                self.budget_weight, seeds[4]
            )
        return self

    def _fit_cardinality_data(
        self, inputs, y, y_cost, answers, available, weights, cv, seed, evidence=None
    ):
        """Out-of-fold allocator scores -> per-k aggregate errors and fees."""
        n, n_entities = answers.shape
        X_alloc = inputs(self.rejector)
        oof = np.empty((n, n_entities))
        for i, (train, test) in enumerate(cv.split(X_alloc, y)):
            log_progress(self, f"cross-fitting the allocator, fold {i + 1}")
            scorer = fit_scorer(
                self.rejector, _safe_indexing(X_alloc, train), weights[train], seed
            )
            oof[test] = scorer_scores(scorer, _safe_indexing(X_alloc, test), n_entities)
        agg_errors = np.empty((n, n_entities))
        fees = np.empty((n, n_entities))
        costs = np.broadcast_to(self.costs_, (n, n_entities))
        scores_r, answers_r, avail_r, costs_r, evidence_r = rank_columns(
            oof, answers, available, costs, evidence
        )
        position = np.cumsum(avail_r, axis=1)
        for k in range(1, n_entities + 1):
            mask_r = avail_r & (position <= k)
            agg_errors[:, k - 1] = self._aggregate_error(
                answers_r, mask_r, scores_r, y_cost, ranked=True, evidence=evidence_r
            )
            fees[:, k - 1] = np.sum(mask_r * costs_r, axis=1)
        # kept (private) so that deferral_curve(budget_weights=...) can refit the
        # small cardinality model per budget weight: the cardinality model's
        # training input (n rows), and the per-row cross-fitted costs of each k
        self._cardinality_training = Bunch(
            X=inputs(self.cardinality_estimator), errors=agg_errors, fees=fees
        )

    def _fit_cardinality(self, budget_weight, seed=None):
        data = self._cardinality_training
        cost = data.errors + budget_weight * data.fees
        weights = cost.sum(axis=1, keepdims=True) - cost
        log_progress(
            self, f"fitting the cardinality model (budget_weight={budget_weight})"
        )
        return fit_scorer(self.cardinality_estimator, data.X, weights, seed)

    # ---------------------------------------------------------------- predict
    def _row_bytes(self):
        return 8 * (4 * self.n_features_in_ + 16 * self.n_entities_)

    def _batched(self, function, X):
        """``function`` of the validated ``X``, in ``working_memory`` batches."""
        check_is_fitted(self)
        X = self._validate_input(X, reset=False)
        return batched(function, X, row_bytes=self._row_bytes())

    def _scores(self, inputs, n):
        if self.rejector_ is None:
            return np.zeros((n, self.n_entities_))
        return scorer_scores(self.rejector_, inputs(self.rejector), self.n_entities_)

    def _k_from_cardinality(self, cardinality, inputs, n):
        if cardinality is None:
            return np.full(n, min(self.k, self.n_entities_))
        scores = scorer_scores(
            cardinality, inputs(self.cardinality_estimator), self.n_entities_
        )
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

    def _allocation_batch(self, X, what, k=None):
        X_feat, _ = self._split_features_only(X)
        n = _num_samples(X)
        inputs = self._inputs(X_feat)
        if what == "scores":
            return self._scores(inputs, n)
        if what == "k" or k is None:
            k_rows = self._k_from_cardinality(self._card(), inputs, n)
            if what == "k":
                return k_rows
            k = k_rows
        return top_k_mask(self._scores(inputs, n), k)

    def _split_features_only(self, X):
        if self.n_experts_ == 0:
            return X, None
        return _safe_indexing(X, self._feature_positions, axis=1), None

    def entity_scores(self, X):
        """Allocator scores of the entities (log-probabilities).

        Entities are ordered as in ``entity_names_``. The ``k`` entities with
        the highest scores are consulted; an entity never seen with training
        mass scores ``-inf``. Rows are processed in batches sized by
        scikit-learn's ``working_memory``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Input data; the expert columns are ignored (they may be NaN).

        Returns
        -------
        scores : ndarray of shape (n_samples, `n_entities_`)
            Entity scores.
        """
        return self._batched(lambda Xb: self._allocation_batch(Xb, "scores"), X)

    def predict_k(self, X):
        """Number of entities consulted per query.

        ``k`` for every row, or the learned cardinality ``k(x)`` when
        ``adaptive=True``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Input data; the expert columns are ignored.

        Returns
        -------
        k : ndarray of shape (n_samples,)
            Integers in ``[1, n_entities_]``.
        """
        return self._batched(lambda Xb: self._allocation_batch(Xb, "k"), X)

    def predict_allocation(self, X, k=None):
        """Choose the entities to ask for each query, before asking any of them.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
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
        X = self._validate_input(X, reset=False)
        if k is not None:
            k = self._check_k(k)
        return batched(
            lambda Xb: self._allocation_batch(Xb, "allocation", k),
            X,
            row_bytes=self._row_bytes(),
        )

    def _consult(self, X, k=None, cardinality=None):
        """Scores, answers, availability, consulted mask, evidence (a batch)."""
        X_feat, E = self._split(X)
        n = _num_samples(X)
        inputs = self._inputs(X_feat)
        scores = self._scores(inputs, n)
        answers, available, evidence = self._answer_table(X_feat, E)
        if k is None:
            k = self._k_from_cardinality(cardinality, inputs, n)
        mask = top_k_mask(scores, k, available)
        return scores, answers, available, mask, evidence

    def _entity_table(self, X):
        """``(scores, answers, available, evidence)`` of all rows (tests, benchmarks).

        ``self._aggregate(answers, mask, scores, evidence=evidence)`` is the
        answer of any consulted ``mask``.
        """
        X = self._validate_input(X, reset=False)
        scores, answers, available, _, evidence = self._consult(X, k=1)
        return scores, answers, available, evidence

    def _predict_batch(self, X):
        scores, answers, _, mask, evidence = self._consult(X, cardinality=self._card())
        aggregate = self._aggregate(answers, mask, scores, evidence=evidence)
        return self._decode(aggregate), mask @ self.costs_

    def _predict_with_fees(self, X):
        """Predictions and the consultation fees paid for each of them.

        Used by the deferral-cost scorer (``deferral/_scorers.py``).

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Input data with the expert columns.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predictions of :meth:`predict`.
        fees : ndarray of shape (n_samples,)
            Sum of the fees (``costs_``) of the entities consulted for each
            row (unavailable experts are skipped and not paid).
        """
        return self._batched(self._predict_batch, X)

    def _fixed_k_sums(
        self, answers_r, avail_r, scores_r, position, ks, y, evidence_r=None
    ):
        """Sum of the curve terms for each fixed k, on rank-ordered columns."""
        return np.array(
            [
                np.sum(
                    self._curve_values(
                        answers_r,
                        avail_r & (position <= k),
                        scores_r,
                        y,
                        ranked=True,
                        evidence=evidence_r,
                    )
                )
                for k in ks
            ]
        )

    def _curve_batch(self, X, y, ks, cardinalities):
        X_feat, E = self._split(X)
        n = _num_samples(X)
        inputs = self._inputs(X_feat)
        scores = self._scores(inputs, n)
        answers, available, evidence = self._answer_table(X_feat, E)
        costs = np.broadcast_to(self.costs_, scores.shape)
        # one sort serves every k: work on rank-ordered columns
        scores_r, answers_r, avail_r, costs_r, evidence_r = rank_columns(
            scores, answers, available, costs, evidence
        )
        position = np.cumsum(avail_r, axis=1)
        fixed = self._fixed_k_sums(
            answers_r, avail_r, scores_r, position, ks, y, evidence_r
        )
        budget = [np.sum((avail_r & (position <= k)) * costs_r) for k in ks]
        adaptive, adaptive_budget, adaptive_k = [], [], []
        for cardinality in cardinalities:
            k_x = self._k_from_cardinality(cardinality, inputs, n)
            mask_r = avail_r & (position <= k_x[:, None])
            values = self._curve_values(
                answers_r, mask_r, scores_r, y, ranked=True, evidence=evidence_r
            )
            adaptive.append(np.sum(values))
            adaptive_budget.append(np.sum(mask_r * costs_r))
            adaptive_k.append(np.sum(k_x))
        out = [fixed, budget, adaptive, adaptive_budget, adaptive_k]
        return tuple(np.asarray(v, dtype=np.float64)[None, :] for v in out)

    def deferral_curve(self, X, y, ks=None, budget_weights=None):
        """Score against mean budget for every ``k``, from this one fit.

        The allocator's surrogate does not depend on ``k``, so every fixed
        ``k`` is evaluated without refitting. With ``adaptive=True``, each
        value of ``budget_weights`` refits only the (small) cardinality model
        on the cross-fitted data stored at fit time. Rows are processed in
        batches sized by scikit-learn's ``working_memory``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Input data with the expert columns.
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
        ks = np.arange(1, self.n_entities_ + 1) if ks is None else np.asarray(ks)
        ks = np.array([self._check_k(int(k)) for k in ks.ravel()], dtype=int)
        if budget_weights is not None and not self.adaptive:
            raise ValueError(
                "budget_weights needs adaptive=True: the Top-k(x) cardinality "
                "model is trained on cross-fitted data stored at fit time."
            )
        X = self._validate_input(X, reset=False)
        y = self._prepare_y_predict(self._validate_y(X, y))
        lambdas = np.array([])
        cardinalities = []
        if budget_weights is not None and self.n_entities_ > 1:
            lambdas = np.asarray(budget_weights, dtype=np.float64).ravel()
            if np.any(lambdas < 0) or not np.all(np.isfinite(lambdas)):
                raise ValueError("budget_weights must be finite and non-negative.")
            cardinalities = [self._fit_cardinality(float(lam)) for lam in lambdas]
        n = _num_samples(X)
        parts = batched(
            lambda Xb, yb: self._curve_batch(Xb, yb, ks, cardinalities),
            X,
            y,
            row_bytes=self._row_bytes(),
            combine=False,
        )
        sums = None
        for part in parts:
            part = [p[0] for p in part]
            sums = part if sums is None else [s + p for s, p in zip(sums, part)]
        fixed, budget, adaptive, adaptive_budget, adaptive_k = sums
        return Bunch(
            metric=self._curve_metric_name,
            k=ks,
            score=np.array([self._curve_finish(v / n) for v in fixed]),
            budget=budget / n,
            budget_weight=lambdas,
            adaptive_score=np.array([self._curve_finish(v / n) for v in adaptive]),
            adaptive_budget=adaptive_budget / n,
            adaptive_k=adaptive_k / n,
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        allow_nan = True
        if self._uses_predictor():
            allow_nan = get_tags(self._get_predictor()).input_tags.allow_nan
        elif self.rejector is None:
            allow_nan = False
        if self.rejector is not None:
            allow_nan = allow_nan and get_tags(self.rejector).input_tags.allow_nan
        tags.input_tags.allow_nan = allow_nan
        tags.input_tags.sparse = False
        return tags
