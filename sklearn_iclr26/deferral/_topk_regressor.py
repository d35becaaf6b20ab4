"""Top-k learning to defer for regression (Montreuil et al., ICLR 2026)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.base import RegressorMixin, _fit_context
from sklearn.linear_model import RidgeCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, column_or_1d

from sklearn_iclr26.deferral._base import _BaseTopKDeferral
from sklearn_iclr26.deferral._surrogate import aggregate_values

__all__ = ["TopKDeferralRegressor"]


class TopKDeferralRegressor(RegressorMixin, _BaseTopKDeferral):
    """Regression with deferral to the top-k experts, with an optional k(x).

    Two-stage Top-k learning to defer for regression: a fixed predictor and
    ``n_experts`` experts are the entities; an allocator, trained once on the
    k-independent cost-weighted surrogate of Montreuil et al. (2026), scores
    them and the ``k`` best are consulted. The prediction aggregates their
    answers (mean, softmax-weighted mean or median). Entity ``j`` costs
    ``mu_j = alpha_j * error_j + beta_j`` with the absolute or squared error
    and the fee ``beta_j`` (``costs``). With ``adaptive=True`` a cardinality
    model chooses ``k(x)`` per query (Top-k(x)).

    The expert answers are the **last** ``n_experts`` columns of ``X``
    (``NaN`` = expert unavailable for that row); the allocator and the
    predictor only see the other columns.

    Read more in the :ref:`User Guide <deferral>`.

    Parameters
    ----------
    estimator : classifier or None, default=None
        Allocator fitted on the surrogate. ``None`` uses a built-in soft-label
        multinomial logistic regression (standardised features, ``C=1``); a
        classifier with ``predict_proba`` whose ``fit`` accepts
        ``sample_weight`` is fitted on rows replicated once per entity.
    predictor : regressor or None, default=None
        Base model. ``None`` means ``StandardScaler`` + ``RidgeCV``. Fitted on
        ``(X, y)``; its answers used to train the allocator are cross-fitted
        (``cv``). Wrap a trained model in
        :class:`~sklearn.frozen.FrozenEstimator` to keep it as is.
    k : int, default=1
        Number of entities consulted (``k=1`` is regression with deferral).
    adaptive : bool, default=False
        Learn ``k(x)`` (Top-k(x)) on cross-fitted allocator scores, with the
        cost "error of the aggregate + budget_weight * fees".
    cardinality_estimator : classifier or None, default=None
        Cardinality model, fitted like ``estimator`` on the labels ``1..|A|``.
    budget_weight : float, default=1.0
        Weight of the fees in the Top-k(x) cost (``lambda``).
    alpha : float or array-like of shape (n_entities,), default=1.0
        Error weight ``alpha_j`` of each entity.
    costs : float or array-like, default=None
        Consultation fees: a scalar or one value per expert (the model pays 0),
        or one value per entity; in the units of the error. ``None`` means 0.
    error : {"absolute", "squared"}, default="absolute"
        Error ``psi`` of an entity's answer (and of the aggregate in the
        Top-k(x) cost).
    aggregation : {"mean", "weighted_mean", "median"}, default="mean"
        How the answers of the consulted entities are combined;
        ``"weighted_mean"`` weights them by the softmax of their scores.
    n_experts : int, default=0
        Number of expert columns at the end of ``X``; ``0`` is the predictor
        alone.
    cv : int, cross-validation generator or iterable, default=5
        Folds of the cross-fitting (predictor answers, Top-k(x) labels).
    verbose : int, default=0
        Print progress messages when positive.

    Attributes
    ----------
    predictor_ : regressor
        Fitted predictor.
    rejector_ : object or None
        Fitted allocator; ``None`` when there is a single entity.
    cardinality_estimator_ : object or None
        Fitted cardinality model (``adaptive=True``).
    n_entities_ : int
        Number of entities (``1 + n_experts``).
    entity_names_ : ndarray of str of shape (`n_entities_`,)
        Names of the entities.
    alpha_ : ndarray of shape (`n_entities_`,)
        Error weights per entity.
    costs_ : ndarray of shape (`n_entities_`,)
        Fees per entity.
    n_features_in_ : int
        Number of columns of ``X`` seen during fit (features and experts).
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the columns seen during fit. Defined only when `X` has
        feature names that are all strings.

    See Also
    --------
    TopKDeferrer : The classification counterpart (also one-stage).
    sklearn_iclr26.datasets.make_experts : Simulated specialist experts.

    Notes
    -----
    Only the two-stage regime exists for regression: the one-stage entities
    of the paper are the class labels. Unavailable experts are skipped as in
    :class:`TopKDeferrer`; the model is always available.

    References
    ----------
    .. [1] Y. Montreuil, A. Carlier, L. X. Ng, W. T. Ooi. "Why Ask One When
       You Can Ask k? Learning-to-Defer to the Top-k Experts." ICLR 2026,
       arXiv:2504.12988.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn_iclr26.datasets import make_experts
    >>> from sklearn_iclr26.deferral import TopKDeferralRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> experts, fees = make_experts(X, y, n_experts=3, random_state=0)
    >>> X_all = np.hstack([X, experts])
    >>> reg = TopKDeferralRegressor(k=2, n_experts=3, costs=fees).fit(X_all, y)
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
        estimator=None,
        predictor=None,
        *,
        k=1,
        adaptive=False,
        cardinality_estimator=None,
        budget_weight=1.0,
        alpha=1.0,
        costs=None,
        error="absolute",
        aggregation="mean",
        n_experts=0,
        cv=5,
        verbose=0,
    ):
        self.estimator = estimator
        self.predictor = predictor
        self.k = k
        self.adaptive = adaptive
        self.cardinality_estimator = cardinality_estimator
        self.budget_weight = budget_weight
        self.alpha = alpha
        self.costs = costs
        self.error = error
        self.aggregation = aggregation
        self.n_experts = n_experts
        self.cv = cv
        self.verbose = verbose

    def _default_predictor(self):
        return make_pipeline(StandardScaler(), RidgeCV())

    def _uses_predictor(self):
        return True

    def _entity_answers(self, X_feat, E, model_answers):
        if model_answers is None:
            model_answers = self.predictor_.predict(X_feat)
        model_answers = np.asarray(model_answers, dtype=np.float64).reshape(-1, 1)
        answers = np.hstack([model_answers, E])
        return answers, ~np.isnan(answers)

    def _psi(self, residual):
        return np.abs(residual) if self.error == "absolute" else residual**2

    def _answer_errors(self, answers, y):
        return np.nan_to_num(self._psi(answers - y[:, None]), nan=0.0)

    def _aggregate(self, answers, mask, scores, ranked=False):
        # permutation invariant: ``ranked`` columns need no special care
        return aggregate_values(answers, mask, scores, self.aggregation)

    def _aggregate_error(self, answers, mask, scores, y, ranked=False):
        return self._psi(self._aggregate(answers, mask, scores) - y)

    def _curve_metric(self, answers, mask, scores, y, ranked=False):
        residual = self._aggregate(answers, mask, scores) - y
        return float(np.sqrt(np.mean(residual**2)))

    def _prepare_y_predict(self, y):
        return column_or_1d(y, warn=True).astype(np.float64)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit the predictor, the allocator and (if adaptive) the k(x) model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features followed by the ``n_experts`` expert columns.
        y : array-like of shape (n_samples,)
            Target values.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X_feat, E, y = self._validate_X(X, y, reset=True)
        y = np.asarray(y, dtype=np.float64)
        if not np.all(np.isfinite(y)):
            raise ValueError("Input y contains NaN or infinity.")
        self.entity_names_ = np.array(
            ["model"] + [f"expert_{j}" for j in range(self.n_experts)], dtype=object
        )
        return self._fit_deferral(X_feat, E, y, y)

    def predict(self, X):
        """Aggregate answer of the consulted entities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features followed by the expert columns.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted values.
        """
        check_is_fitted(self)
        _, scores, answers, mask = self._consult(X, cardinality=self._card())
        return self._aggregate(answers, mask, scores)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags
