"""The confidence-threshold deferral baseline (Chow's rule with routing)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, check_cv, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import get_tags
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from sklearn_iclr26.deferral._base import _ExpertColumnsMixin, _LabelExpertsMixin
from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._batching import batched
from sklearn_iclr26.utils._random import (
    seed_from_random_state,
    set_child_random_state,
)
from sklearn_iclr26.utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    _num_samples,
    _safe_indexing,
)
from sklearn_iclr26.utils._validation import (
    check_at_least_two_classes,
    explain_overflow,
    store_params,
)
from sklearn_iclr26.utils._verbose import log_progress

__all__ = ["ConfidenceThresholdDeferrer"]


class ConfidenceThresholdDeferrer(
    ClassifierMixin, _LabelExpertsMixin, _ExpertColumnsMixin, BaseEstimator
):
    """Defer to an expert when the model's confidence is below a threshold.

    The baseline that learned deferral has to beat: the model answers when
    its top class probability is at least ``threshold_``, otherwise one
    expert answers, chosen by ``routing``: the expert most accurate (net of
    its fee) on the rows where the model predicted the same class
    (``"class"``), or the one most accurate overall (``"best"``). With
    ``threshold="auto"`` the threshold minimises the deferral cost (0-1
    error plus the fee paid) on cross-fitted probabilities of the training
    rows. It is Chow's rule with a fee, one fit of the predictor plus ``cv``
    cross-fitted ones, and no learned allocator.

    The expert answers are the columns of ``X`` named by ``expert_columns``,
    as for :class:`TopKDeferrer` (labels of ``y``; ``NaN``/``None`` means the
    expert is unavailable for that row, and the model then answers).

    Read more in the :ref:`User Guide <deferral-confidence>`.

    Parameters
    ----------
    predictor : classifier or None, default=None
        The model; it needs ``predict_proba``. ``None`` means
        ``StandardScaler`` + ``LogisticRegression``. It is fitted on the
        feature columns of ``X`` (untouched) and ``y``. Wrap a trained model in
        :class:`~sklearn.frozen.FrozenEstimator` to keep it as is (its
        probabilities on the training rows then choose the threshold).
    expert_columns : list of str or list of int, default=None
        The columns of ``X`` holding the experts' answers, by name (a
        DataFrame's column names) or by position (arrays). ``None``: no
        experts, the predictor alone.
    costs : float or array-like of shape (n_experts,), default=None
        Fee of each expert per query answered. ``None`` means 0.
    routing : {"class", "best"}, default="class"
        Which expert takes a deferred query: the one with the highest
        training accuracy minus fee on the rows whose (cross-fitted) model
        prediction is the model's prediction for this query (``"class"``), or
        the one with the highest overall accuracy minus fee (``"best"``).
    threshold : "auto" or float in [0, 1], default="auto"
        Defer when the model's top probability is below it. ``"auto"``
        chooses it on the cross-fitted training probabilities (smallest
        mean deferral cost; among equal costs, the one that defers least).
    cv : int, cross-validation generator or iterable, default=5
        Folds of the cross-fitted probabilities (not used for a frozen
        predictor).
    random_state : int, RandomState instance or None, default=None
        Seeds the folds (shuffled and stratified when ``cv`` is an int) and
        the unset ``random_state`` of the predictor. ``None``: unshuffled
        folds, predictor as given.
    verbose : int, default=0
        Print progress messages when positive.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    predictor_ : classifier
        The fitted predictor.
    threshold_ : float
        The confidence threshold used: defer when the top probability is
        strictly below it.
    routes_ : ndarray of shape (n_classes,)
        Index (into ``expert_columns``) of the expert that takes a deferred
        query, by the model's predicted class; empty without experts.
    expert_accuracy_ : ndarray of shape (n_experts, n_classes)
        Training accuracy of each expert on the rows where the model
        predicted each class (``routing="class"``; Laplace-smoothed), or its
        overall accuracy repeated (``routing="best"``).
    training_deferral_rate_ : float
        Share of the training rows deferred at ``threshold_`` (cross-fitted
        probabilities).
    n_experts_ : int
        Number of experts.
    costs_ : ndarray of shape (n_experts,)
        Fee of each expert.
    n_features_in_ : int
        Number of columns of ``X`` seen during fit (features and experts).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the columns seen during fit. Defined only when `X` has
        feature names that are all strings.

    See Also
    --------
    TopKDeferrer : Learned allocation over the model and the experts.

    Notes
    -----
    The rule uses only the model's confidence, and no feature: it cannot
    learn that an expert beats a confident model somewhere. When the model's
    probabilities rank its own errors well (a good, calibrated model) it is a
    strong baseline: on the hpc table of the issue's benchmark it beat
    :class:`TopKDeferrer` at ``k=1`` with the default linear allocator
    (``doc/deferral.rst``, section "Confidence-threshold baseline").

    :meth:`score` is the accuracy minus the mean fee paid (``1 -`` the
    deferral cost), as for :class:`TopKDeferrer`; the ``"neg_deferral_cost"``
    scorer works on both.

    References
    ----------
    .. [1] C. K. Chow. "On optimum recognition error and reject tradeoff."
       IEEE Transactions on Information Theory 16(1), 1970.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.datasets import load_iris
    >>> from sklearn_iclr26.datasets import make_experts
    >>> from sklearn_iclr26.deferral import ConfidenceThresholdDeferrer
    >>> X, y = load_iris(return_X_y=True, as_frame=True)
    >>> experts, fees = make_experts(X, y, n_experts=3, random_state=0)
    >>> names = ["expert_a", "expert_b", "expert_c"]
    >>> X_all = X.join(pd.DataFrame(experts, columns=names))
    >>> clf = ConfidenceThresholdDeferrer(expert_columns=names, costs=fees,
    ...                                   random_state=0).fit(X_all, y)
    >>> 0.0 <= clf.threshold_ <= 1.0 + 1e-12
    True
    >>> clf.predict_allocation(X_all[:2]).shape
    (2, 4)
    """

    _parameter_constraints: dict = {
        "predictor": [HasMethods(["fit", "predict_proba"]), None],
        "expert_columns": [
            "array-like",
            str,
            Interval(Integral, 0, None, closed="left"),
            None,
        ],
        "costs": ["array-like", Interval(Real, 0, None, closed="left"), None],
        "routing": [StrOptions({"class", "best"})],
        "threshold": [StrOptions({"auto"}), Interval(Real, 0, 1, closed="both")],
        "cv": ["cv_object"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        predictor=None,
        *,
        expert_columns=None,
        costs=None,
        routing="class",
        threshold="auto",
        cv=5,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    def _get_predictor(self):
        if self.predictor is None:
            return make_pipeline(StandardScaler(), LogisticRegression())
        return self.predictor

    def _resolve_fees(self):
        if self.costs is None:
            return np.zeros(self.n_experts_)
        fees = np.asarray(self.costs, dtype=np.float64)
        if fees.ndim == 0:
            fees = np.full(self.n_experts_, float(fees))
        elif fees.shape != (self.n_experts_,):
            raise ValueError(
                f"costs must be a scalar or one fee per expert ({self.n_experts_}), "
                f"got shape {fees.shape}."
            )
        if not np.all(np.isfinite(fees)) or np.any(fees < 0):
            raise ValueError("costs must be finite and non-negative.")
        return fees

    def _model_proba(self, X_feat, predictor=None):
        """Probabilities of ``predictor`` (default ``predictor_``), as ``classes_``."""
        predictor = self.predictor_ if predictor is None else predictor
        proba = predictor.predict_proba(X_feat)
        out = np.zeros((proba.shape[0], len(self.classes_)))
        out[:, self._encode(predictor.classes_, "The predictor's classes")] = proba
        return out

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit the predictor, the routes and the threshold.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Features and the expert columns (``expert_columns``). The feature
            columns reach the predictor untouched.
        y : array-like of shape (n_samples,)
            Target labels.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X = self._validate_input(X, reset=True)
        y = self._validate_y(X, y)
        check_classification_targets(y)
        classes = np.unique(y)
        predictor = self._get_predictor()
        if isinstance(predictor, FrozenEstimator) and hasattr(predictor, "classes_"):
            classes = np.union1d(classes, predictor.classes_)
        self.classes_ = classes
        check_at_least_two_classes(self, y)
        y_index = self._encode(y, "y")
        self._expert_positions = self._resolve_expert_columns(X)
        self._feature_positions = np.setdiff1d(
            np.arange(self.n_features_in_), self._expert_positions
        )
        self.n_experts_ = len(self._expert_positions)
        self.costs_ = self._resolve_fees()
        seed = None
        if self.random_state is not None:
            seed = seed_from_random_state(self.random_state)
        X_feat, E = self._split(X)
        # finite 1e300 features overflow inside a StandardScaler: say so
        # instead of the child's "Input X contains NaN" (issue 40, item 17)
        with explain_overflow(X_feat, "the predictor"):
            return self._fit_predictor_and_rule(predictor, X_feat, E, y, y_index, seed)

    def _fit_predictor_and_rule(self, predictor, X_feat, E, y, y_index, seed):
        log_progress(self, "fitting the predictor")
        self.predictor_ = set_child_random_state(clone(predictor), seed)
        self.predictor_.fit(X_feat, y)
        n_classes = len(self.classes_)
        self.threshold_ = 0.0 if self.threshold == "auto" else float(self.threshold)
        self.routes_ = np.zeros(n_classes, dtype=int)[:0]
        self.expert_accuracy_ = np.zeros((0, n_classes))
        self.training_deferral_rate_ = 0.0
        if self.n_experts_ == 0:
            return self
        if isinstance(predictor, FrozenEstimator):
            proba = self._model_proba(X_feat)
        else:
            log_progress(self, "cross-fitting the predictor's probabilities")
            if isinstance(self.cv, Integral) and seed is not None:
                cv = StratifiedKFold(self.cv, shuffle=True, random_state=seed)
            else:
                cv = check_cv(self.cv, y, classifier=True)
            # columns in the order of np.unique(y), which is classes_ here
            proba = cross_val_predict(
                set_child_random_state(clone(predictor), seed),
                X_feat,
                y,
                cv=cv,
                method="predict_proba",
            )
        model = np.argmax(proba, axis=1)
        confidence = np.max(proba, axis=1)
        self._fit_routes(model, E, y_index)
        # deferral cost of each row if kept and if deferred (to its route)
        keep = (model != y_index).astype(np.float64)
        route = self.routes_[model]
        answer = E[np.arange(len(route)), route]
        available = ~np.isnan(answer)
        defer = np.where(
            available, (answer != y_index) + self.costs_[route], keep
        ).astype(np.float64)
        if self.threshold == "auto":
            self.threshold_ = _best_threshold(confidence, keep, defer)
        deferred = (confidence < self.threshold_) & available
        self.training_deferral_rate_ = float(np.mean(deferred))
        return self

    def _fit_routes(self, model, E, y_index):
        """Expert accuracy per model-predicted class, and the route of each class."""
        n_classes = len(self.classes_)
        accuracy = np.empty((self.n_experts_, n_classes))
        for j in range(self.n_experts_):
            valid = ~np.isnan(E[:, j])
            right = valid & (E[:, j] == y_index)
            if self.routing == "best":
                accuracy[j] = (right.sum() + 1.0) / (valid.sum() + 2.0)
                continue
            hits = np.bincount(model[right], minlength=n_classes)
            seen = np.bincount(model[valid], minlength=n_classes)
            accuracy[j] = (hits + 1.0) / (seen + 2.0)
        self.expert_accuracy_ = accuracy
        # ties go to the lower expert index (argmax)
        self.routes_ = np.argmax(accuracy - self.costs_[:, None], axis=0)

    def _row_bytes(self):
        return 8 * (4 * self.n_features_in_ + 4 * len(self.classes_))

    def _decide(self, X):
        """Model answers, confidence, route and whether each row is deferred."""
        X_feat, E = self._split(X)
        proba = self._model_proba(X_feat)
        model = np.argmax(proba, axis=1)
        confidence = np.max(proba, axis=1)
        n = _num_samples(X)
        if self.n_experts_ == 0:
            return model, np.zeros(n, dtype=bool), None, None
        route = self.routes_[model]
        below = confidence < self.threshold_
        return model, below, route, E

    def _predict_batch(self, X):
        model, below, route, E = self._decide(X)
        if E is None:
            return self.classes_[model], np.zeros(len(model))
        answer = E[np.arange(len(model)), route]
        defer = below & ~np.isnan(answer)
        labels = np.where(defer, np.nan_to_num(answer), model).astype(int)
        return self.classes_[labels], np.where(defer, self.costs_[route], 0.0)

    def _predict_with_fees(self, X):
        """Predictions and the fee paid for each (the deferral-cost scorer)."""
        check_is_fitted(self)
        X = self._validate_input(X, reset=False)
        return batched(self._predict_batch, X, row_bytes=self._row_bytes())

    def predict(self, X):
        """The model's answer, or the routed expert's when it is unsure.

        Rows are processed in batches sized by scikit-learn's
        ``working_memory``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Features and the expert columns.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels.
        """
        return self._predict_with_fees(X)[0]

    def _allocation_batch(self, X):
        if self.n_experts_ == 0:
            X_feat = X
        else:
            X_feat = _safe_indexing(X, self._feature_positions, axis=1)
        proba = self._model_proba(X_feat)
        model = np.argmax(proba, axis=1)
        n = len(model)
        allocation = np.zeros((n, 1 + self.n_experts_), dtype=bool)
        if self.n_experts_ == 0:
            allocation[:, 0] = True
            return allocation
        below = np.max(proba, axis=1) < self.threshold_
        allocation[:, 0] = ~below
        allocation[np.flatnonzero(below), 1 + self.routes_[model[below]]] = True
        return allocation

    def predict_allocation(self, X):
        """Whom to ask for each query, before asking (the model or one expert).

        As :meth:`TopKDeferrer.predict_allocation` with ``k=1``: expert
        availability is ignored (an unavailable expert's query falls back to
        the model in :meth:`predict`). Rows are processed in batches sized by
        scikit-learn's ``working_memory``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Input data; the expert columns are ignored (they may be NaN).

        Returns
        -------
        allocation : ndarray of bool of shape (n_samples, 1 + n_experts)
            ``True`` for the entity asked: column 0 the model, then the
            experts in the order of ``expert_columns``.
        """
        check_is_fitted(self)
        X = self._validate_input(X, reset=False)
        return batched(self._allocation_batch, X, row_bytes=self._row_bytes())

    def score(self, X, y, sample_weight=None):
        """Fee-adjusted accuracy: accuracy minus the mean fee paid per query.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Features and the expert columns.
        y : array-like of shape (n_samples,)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        score : float
            Accuracy minus the mean fee per query; greater is better.
        """
        y_pred, fees = self._predict_with_fees(X)
        y = column_or_1d(y, warn=True)
        correct = (y_pred == y).astype(np.float64)
        return float(np.average(correct - fees, weights=sample_weight))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = get_tags(self._get_predictor()).input_tags.allow_nan
        tags.input_tags.sparse = False
        return tags


def _best_threshold(confidence, keep, defer):
    """Threshold of least total cost (defer iff ``confidence < threshold``).

    Candidates: 0 (defer nothing), the midpoints between consecutive distinct
    confidences, and just above the largest (defer everything); ties go to
    the smallest threshold (the fewest deferrals).
    """
    values, inverse = np.unique(confidence, return_inverse=True)
    gain = np.bincount(inverse, weights=keep - defer, minlength=len(values))
    # total cost when deferring the first i distinct values = sum(keep) - cum gain
    cum_gain = np.concatenate([[0.0], np.cumsum(gain)])
    best = int(np.argmax(cum_gain > cum_gain.max() - 1e-9))
    if best == 0:
        return 0.0
    if best == len(values):
        return float(np.nextafter(values[-1], np.inf))
    return float((values[best - 1] + values[best]) / 2)
