"""Top-k learning to defer for regression (Montreuil et al., ICLR 2026)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.linear_model import RidgeCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.deferral._base import (
    ATTRIBUTES_DOC,
    REFERENCES_DOC,
    _BaseTopKDeferral,
    _missing_mask,
)
from sklearn_iclr26.deferral._surrogate import aggregate_values
from sklearn_iclr26.utils._docstrings import Substitution
from sklearn_iclr26.utils._sklearn_compat import StrOptions
from sklearn_iclr26.utils._validation import store_params

__all__ = ["TopKDeferralRegressor"]


@Substitution(deferral_attributes=ATTRIBUTES_DOC, deferral_references=REFERENCES_DOC)
class TopKDeferralRegressor(RegressorMixin, _BaseTopKDeferral):
    """Regression with deferral to the top-k experts, with an optional k(x).

    Two-stage Top-k learning to defer for regression: a fixed predictor and
    the experts are the entities; an allocator, trained once on the
    k-independent cost-weighted surrogate of Montreuil et al. (2026), scores
    them and the ``k`` best are consulted. The prediction aggregates their
    answers (mean, softmax-weighted mean or median). Entity ``j`` costs
    ``mu_j = w_j * error_j + beta_j`` with the absolute or squared error,
    the error weight ``w_j`` (``error_weight``) and the fee ``beta_j``
    (``costs``). With ``adaptive=True`` a cardinality
    model chooses ``k(x)`` per query (Top-k(x)).

    The expert answers are the columns of ``X`` named by ``expert_columns``
    (numbers; ``NaN`` = expert unavailable for that row). The predictor (and
    a user-given allocator) receives the other columns untouched, so a
    ``Pipeline`` with a name-based ``ColumnTransformer`` on a raw DataFrame
    works.

    Read more in the :ref:`User Guide <deferral>`.

    Parameters
    ----------
    rejector : classifier or None, default=None
        Allocator fitted on the surrogate. ``None`` uses a built-in soft-label
        multinomial logistic regression (standardised features, ``C=1``) on
        ``transformer`` 's output; a classifier with ``predict_proba`` whose
        ``fit`` accepts ``sample_weight`` is fitted on the raw feature rows
        replicated once per entity.
    predictor : regressor or None, default=None
        Base model. ``None`` means ``StandardScaler`` + ``RidgeCV``. Fitted on
        the feature columns of ``X`` (untouched) and ``y``; its answers used
        to train the allocator are cross-fitted (``cv``). Wrap a trained model
        (e.g. a deployed pipeline) in :class:`~sklearn.frozen.FrozenEstimator`
        to keep it as is.
    k : int, default=1
        Number of entities consulted (``k=1`` is regression with deferral).
    adaptive : bool, default=False
        Learn ``k(x)`` (Top-k(x)) on cross-fitted allocator scores, with the
        cost "error of the aggregate + budget_weight * fees".
    cardinality_estimator : classifier or None, default=None
        Cardinality model, fitted like ``rejector`` on the labels ``1..|A|``.
    budget_weight : float, default=1.0
        Weight of the fees in the Top-k(x) cost (``lambda``).
    error_weight : float or array-like of shape (n_entities,), default=1.0
        Weight ``w_j`` of the error of each entity in its cost.
    costs : float or array-like, default=None
        Consultation fees: a scalar or one value per expert (the model pays 0),
        or one value per entity; in the units of the error. ``None`` means 0.
    error : {"absolute", "squared"}, default="absolute"
        Error ``psi`` of an entity's answer (and of the aggregate in the
        Top-k(x) cost).
    aggregation : {"mean", "weighted_mean", "median"}, default="mean"
        How the answers of the consulted entities are combined;
        ``"weighted_mean"`` weights them by the softmax of their scores.
    expert_columns : list of str or list of int, default=None
        The columns of ``X`` holding the experts' answers, by name (required
        when ``X`` is a DataFrame with string column names) or by position
        (arrays). ``None``: no experts, the predictor alone.
    transformer : transformer, "passthrough" or None, default=None
        Maps the feature columns of ``X`` to the numeric input of the built-in
        allocator and cardinality model; ``None``: the fitted steps of the
        predictor before its final estimator when it is a ``Pipeline``, else
        the features as they are. See :class:`TopKDeferrer`.
    cv : int, cross-validation generator or iterable, default=5
        Folds of the cross-fitting (predictor answers, Top-k(x) labels).
    random_state : int, RandomState instance or None, default=None
        Seeds the cross-fitting folds (shuffled when ``cv`` is an int) and the
        unset ``random_state`` of the children; ``None``: unshuffled folds.
    verbose : int, default=0
        Print progress messages when positive.

    Attributes
    ----------
    predictor_ : regressor
        Fitted predictor.
    n_entities_ : int
        Number of entities (``1 + n_experts_``).
    entity_names_ : ndarray of str of shape (`n_entities_`,)
        Names of the entities.
    %(deferral_attributes)s

    See Also
    --------
    TopKDeferrer : The classification counterpart (also one-stage).
    sklearn_iclr26.datasets.make_experts : Simulated specialist experts.

    Notes
    -----
    Only the two-stage regime exists for regression: the one-stage entities
    of the paper are the class labels. Unavailable experts are skipped as in
    :class:`TopKDeferrer`; the model is always available. :meth:`score` is
    the R^2 of the predictions; tune ``k`` with
    ``scoring="neg_deferral_cost"`` (error plus fees), not with it.

    References
    ----------
    %(deferral_references)s

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn_iclr26.datasets import make_experts
    >>> from sklearn_iclr26.deferral import TopKDeferralRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> experts, fees = make_experts(X, y, n_experts=3, random_state=0)
    >>> X_all = np.hstack([X, experts])  # columns 10, 11, 12 are the experts
    >>> reg = TopKDeferralRegressor(k=2, expert_columns=[10, 11, 12], costs=fees)
    >>> reg = reg.fit(X_all, y)
    >>> reg.predict(X_all[:3]).shape
    (3,)
    """

    _parameter_constraints: dict = {
        **_BaseTopKDeferral._parameter_constraints,
        "error": [StrOptions({"absolute", "squared"})],
        "aggregation": [StrOptions({"mean", "weighted_mean", "median"})],
    }

    _curve_metric_name = "rmse"

    def __init__(
        self,
        rejector=None,
        predictor=None,
        *,
        k=1,
        adaptive=False,
        cardinality_estimator=None,
        budget_weight=1.0,
        error_weight=1.0,
        costs=None,
        error="absolute",
        aggregation="mean",
        expert_columns=None,
        transformer=None,
        cv=5,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    def _default_predictor(self):
        return make_pipeline(StandardScaler(), RidgeCV())

    def _uses_predictor(self):
        return True

    def _encode_experts(self, E):
        missing = _missing_mask(E)
        values = np.where(missing, np.nan, E)
        try:
            values = values.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"The expert answers (columns {self._expert_names()}) must be "
                "numbers (predictions of y), or NaN for an expert unavailable on a "
                "row."
            ) from None
        if np.isinf(values).any():
            raise ValueError(
                "The expert columns of X contain infinite values; use NaN for an "
                "expert that is unavailable for a row."
            )
        return values

    def _entity_answers(self, X_feat, E, model_answers):
        if model_answers is None:
            model_answers = self.predictor_.predict(X_feat)
        model_answers = np.asarray(model_answers, dtype=np.float64).reshape(-1, 1)
        if E is None:
            E = np.empty((model_answers.shape[0], 0))
        answers = np.hstack([model_answers, E])
        return answers, ~np.isnan(answers), None

    def _psi(self, residual):
        return np.abs(residual) if self.error == "absolute" else residual**2

    def _answer_errors(self, answers, y):
        return np.nan_to_num(self._psi(answers - y[:, None]), nan=0.0)

    def _aggregate(self, answers, mask, scores, ranked=False, evidence=None):
        # permutation invariant: ``ranked`` columns need no special care
        return aggregate_values(answers, mask, scores, self.aggregation)

    def _decode(self, aggregate):
        return aggregate

    def _aggregate_error(self, answers, mask, scores, y, ranked=False, evidence=None):
        return self._psi(self._aggregate(answers, mask, scores) - y)

    def _curve_values(self, answers, mask, scores, y, ranked=False, evidence=None):
        return (self._aggregate(answers, mask, scores) - y) ** 2

    def _curve_finish(self, mean_value):
        return float(np.sqrt(mean_value))

    def _prepare_y_predict(self, y):
        return np.asarray(y, dtype=np.float64)

    def _check_target(self, y):
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"{type(self).__name__} needs a numeric target y."
            ) from None
        if not np.all(np.isfinite(y)):
            raise ValueError("Input y contains NaN or infinity.")
        return y, y

    def _model_entity_names(self):
        return ["model"]
