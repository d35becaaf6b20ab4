"""Top-k learning to defer for classification (Montreuil et al., ICLR 2026)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.base import ClassifierMixin, _fit_context
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from sklearn_iclr26.deferral._base import _BaseTopKDeferral
from sklearn_iclr26.deferral._surrogate import majority_vote
from sklearn_iclr26.utils._validation import check_at_least_two_classes

__all__ = ["TopKDeferrer"]


class TopKDeferrer(ClassifierMixin, _BaseTopKDeferral):
    """Learning to defer to the top-k experts, with an optional adaptive k(x).

    For each query, an allocator scores every *entity* (the model and the
    experts, or the classes and the experts) and consults the ``k`` entities
    with the highest scores; the answer is the aggregate (majority vote) of
    their answers. Entity ``j`` costs ``mu_j = alpha_j * error_j + beta_j``
    (0-1 error, fee ``beta_j`` given by ``costs``). The allocator is trained
    once on the k-independent cost-weighted surrogate of Montreuil et al.
    (2026), ``sum_j (S - mu_j) * (-log softmax_j)`` with ``S = sum_i mu_i``,
    whose minimiser ranks the entities by increasing expected cost: the same
    fit serves every ``k``. With ``adaptive=True`` a cardinality model chooses
    ``k(x)`` per query (Top-k(x)).

    The expert answers are the **last** ``n_experts`` columns of ``X``, as
    label-encoded classes (integers indexing ``classes_``; ``NaN`` means the
    expert is unavailable for that row). The allocator and the predictor only
    see the other columns.

    Read more in the :ref:`User Guide <deferral>`.

    Parameters
    ----------
    estimator : classifier or None, default=None
        Allocator fitted on the surrogate. ``None`` uses a built-in soft-label
        multinomial logistic regression (standardised features, ``C=1``, L-BFGS
        on ``n`` rows). A classifier with ``predict_proba`` whose ``fit``
        accepts ``sample_weight`` (a :class:`~sklearn.pipeline.Pipeline` gets
        ``<last step>__sample_weight``) is fitted on the rows replicated once
        per entity with weights ``S - mu_j`` (one global normalisation); for
        ``LogisticRegression`` this is the same objective as the default.
    predictor : classifier or None, default=None
        Two-stage base model. ``None`` means ``StandardScaler`` +
        ``LogisticRegression``. It is fitted on ``(X, y)`` and its answers used
        to train the allocator are cross-fitted (``cv``). Wrap a trained model
        in :class:`~sklearn.frozen.FrozenEstimator` to keep it as is. Unused
        when ``regime="one-stage"``.
    regime : {"two-stage", "one-stage"}, default="two-stage"
        ``"two-stage"``: entities are the predictor and the experts; only the
        allocator is learned. ``"one-stage"``: entities are the classes and the
        experts, and one scorer is learned (the classifier is implicit).
    k : int, default=1
        Number of entities consulted (``k=1`` is classic learning to defer).
    adaptive : bool, default=False
        Learn a cardinality model ``k(x)`` (Top-k(x)) on cross-fitted allocator
        scores, with the cost "aggregate error + budget_weight * fees".
    cardinality_estimator : classifier or None, default=None
        Cardinality model, fitted like ``estimator`` on the labels ``1..|A|``.
    budget_weight : float, default=1.0
        Weight of the fees in the Top-k(x) cost (``lambda`` in the paper).
    alpha : float or array-like of shape (n_entities,), default=1.0
        Error weight ``alpha_j`` of each entity.
    costs : float or array-like, default=None
        Consultation fees ``beta``: a scalar or one value per expert (the model
        or the classes pay 0), or one value per entity. ``None`` means 0.
    aggregation : {"majority", "weighted"}, default="majority"
        ``"majority"``: one vote per consulted entity, ties going to the class
        of the best-ranked tied entity. ``"weighted"``: votes weighted by the
        softmax of the allocator scores of the consulted entities.
    n_experts : int, default=0
        Number of expert columns at the end of ``X``. ``0`` degenerates to the
        predictor alone (two-stage).
    cv : int, cross-validation generator or iterable, default=5
        Folds of the cross-fitting (predictor answers, Top-k(x) labels).
    verbose : int, default=0
        Print progress messages when positive.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    predictor_ : classifier
        Fitted predictor (two-stage only).
    rejector_ : object or None
        Fitted allocator; ``None`` when there is a single entity.
    cardinality_estimator_ : object or None
        Fitted cardinality model (``adaptive=True``).
    n_entities_ : int
        Number of entities.
    entity_names_ : ndarray of str of shape (`n_entities_`,)
        Names of the entities, in the order of :meth:`entity_scores`.
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
    TopKDeferralRegressor : The regression counterpart.
    sklearn_iclr26.datasets.make_experts : Simulated specialist experts.
    DeferralCurveDisplay : Accuracy against budget.

    Notes
    -----
    Expert answers are columns of ``X`` rather than metadata so that every
    scorer, ``cross_val_predict`` and search object works. In a
    :class:`~sklearn.pipeline.Pipeline`, preprocess with
    ``ColumnTransformer(..., remainder="passthrough")`` (the expert columns
    stay last) or put the preprocessing inside ``estimator``/``predictor``.

    An expert that is unavailable (``NaN``) is excluded from the training mass
    of that row and skipped at prediction, the next-ranked available entity
    taking its place; the model (or the classes) is always available, so a row
    without any expert falls back to the model. :meth:`predict_allocation`
    ignores availability: it chooses whom to ask before asking.

    ``predict_proba`` returns vote shares; with ``k`` even, majority ties are
    frequent and decided by rank in :meth:`predict`, so ``argmax`` of the
    shares may differ from :meth:`predict` on tied rows.

    References
    ----------
    .. [1] Y. Montreuil, A. Carlier, L. X. Ng, W. T. Ooi. "Why Ask One When
       You Can Ask k? Learning-to-Defer to the Top-k Experts." ICLR 2026,
       arXiv:2504.12988.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn_iclr26.datasets import make_experts
    >>> from sklearn_iclr26.deferral import TopKDeferrer
    >>> X, y = load_iris(return_X_y=True)
    >>> experts, fees = make_experts(X, y, n_experts=3, random_state=0)
    >>> X_all = np.hstack([X, experts])  # expert answers go last
    >>> clf = TopKDeferrer(k=2, n_experts=3, costs=fees).fit(X_all, y)
    >>> clf.predict_allocation(X_all[:2]).shape
    (2, 4)
    >>> curve = clf.deferral_curve(X_all, y)  # every k from this one fit
    >>> curve.k
    array([1, 2, 3, 4])
    """

    _parameter_constraints: dict = {
        **_BaseTopKDeferral._parameter_constraints,
        "regime": [StrOptions({"two-stage", "one-stage"})],
        "aggregation": [StrOptions({"majority", "weighted"})],
    }

    _curve_metric_name = "accuracy"

    def __init__(
        self,
        estimator=None,
        predictor=None,
        *,
        regime="two-stage",
        k=1,
        adaptive=False,
        cardinality_estimator=None,
        budget_weight=1.0,
        alpha=1.0,
        costs=None,
        aggregation="majority",
        n_experts=0,
        cv=5,
        verbose=0,
    ):
        self.estimator = estimator
        self.predictor = predictor
        self.regime = regime
        self.k = k
        self.adaptive = adaptive
        self.cardinality_estimator = cardinality_estimator
        self.budget_weight = budget_weight
        self.alpha = alpha
        self.costs = costs
        self.aggregation = aggregation
        self.n_experts = n_experts
        self.cv = cv
        self.verbose = verbose

    def _default_predictor(self):
        return make_pipeline(StandardScaler(), LogisticRegression())

    def _uses_predictor(self):
        return self.regime == "two-stage"

    def _encode(self, labels, what):
        labels = np.asarray(labels)
        index = np.searchsorted(self.classes_, labels)
        index = np.clip(index, 0, len(self.classes_) - 1)
        bad = self.classes_[index] != labels
        if np.any(bad):
            raise ValueError(
                f"{what} contains labels not in classes_: "
                f"{np.unique(labels[bad])[:5].tolist()}."
            )
        return index

    def _entity_answers(self, X_feat, E, model_answers):
        n, n_classes = X_feat.shape[0], len(self.classes_)
        if E.shape[1]:
            observed = E[~np.isnan(E)]
            if np.any(observed != np.round(observed)) or np.any(
                (observed < 0) | (observed >= n_classes)
            ):
                raise ValueError(
                    "The expert answers (the last n_experts columns of X) must be "
                    f"label-encoded classes, integers in [0, {n_classes}) indexing "
                    "classes_, or NaN for an unavailable expert."
                )
        if self.regime == "two-stage":
            if model_answers is None:
                model_answers = self.predictor_.predict(X_feat)
            first = self._encode(model_answers, "The predictor's output")[:, None]
        else:
            first = np.tile(np.arange(n_classes, dtype=np.float64), (n, 1))
        answers = np.hstack([first.astype(np.float64), E])
        return answers, ~np.isnan(answers)

    def _answer_errors(self, answers, y):
        return (answers != y[:, None]).astype(np.float64)

    def _aggregate(self, answers, mask, scores, ranked=False):
        return majority_vote(
            answers,
            mask,
            scores,
            len(self.classes_),
            weighted=self.aggregation == "weighted",
            ranked=ranked,
        )

    def _aggregate_error(self, answers, mask, scores, y, ranked=False):
        labels, _ = self._aggregate(answers, mask, scores, ranked)
        return (labels != y).astype(np.float64)

    def _curve_metric(self, answers, mask, scores, y, ranked=False):
        error = self._aggregate_error(answers, mask, scores, y, ranked)
        return 1.0 - float(np.mean(error))

    def _fixed_k_metrics(self, answers_r, avail_r, scores_r, position, ks, y):
        # Votes do not depend on k (the weighted votes are the softmax
        # numerators, normalised by the top consulted score), so the shares of
        # k are those of k - 1 plus the k-th available entity's vote: one
        # column per k instead of k. Same labels as ``majority_vote``.
        n = answers_r.shape[0]
        rows = np.arange(n)
        cols = np.where(avail_r, answers_r, 0).astype(int)
        if self.aggregation == "weighted":
            finite = np.where(avail_r & np.isfinite(scores_r), scores_r, -1e300)
            vote = np.exp(finite - finite.max(axis=1, keepdims=True)) * avail_r
        else:
            vote = avail_r.astype(np.float64)
        shares = np.zeros((n, len(self.classes_)))
        accuracy = {}
        wanted = {int(k) for k in ks}
        # the column of the k-th available entity of each row (n_entities if none)
        n_entities = answers_r.shape[1]
        kth = np.full((n, n_entities + 1), n_entities)
        r, c = np.nonzero(avail_r)
        kth[r, position[r, c]] = c
        for k in range(1, max(wanted) + 1):
            j = kth[:, k]
            has = j < n_entities
            shares[rows[has], cols[has, j[has]]] += vote[has, j[has]]
            if k in wanted:
                best = shares.max(axis=1, keepdims=True)
                tied = shares >= best * (1.0 - 1e-12)
                ranked_tied = np.take_along_axis(tied, cols, axis=1)
                ranked_tied &= position <= k
                ranked_tied &= avail_r
                labels = cols[rows, np.argmax(ranked_tied, axis=1)]
                accuracy[k] = float(np.mean(labels == y))
        return [accuracy[int(k)] for k in ks]

    def _prepare_y_predict(self, y):
        y = column_or_1d(y, warn=True)
        return self._encode(y, "y")

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit the predictor, the allocator and (if adaptive) the k(x) model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features followed by the ``n_experts`` expert columns.
        y : array-like of shape (n_samples,)
            Target labels.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X_feat, E, y = self._validate_X(X, y, reset=True)
        check_classification_targets(y)
        classes = np.unique(y)
        predictor = self.predictor
        if (
            self.regime == "two-stage"
            and isinstance(predictor, FrozenEstimator)
            and hasattr(predictor, "classes_")
        ):
            classes = np.union1d(classes, predictor.classes_)
        self.classes_ = classes
        check_at_least_two_classes(self, y)
        y_encoded = self._encode(y, "y")
        if self.regime == "two-stage":
            names = ["model"]
        else:
            names = [f"class_{c}" for c in self.classes_]
        self.entity_names_ = np.array(
            names + [f"expert_{j}" for j in range(self.n_experts)], dtype=object
        )
        return self._fit_deferral(X_feat, E, y, y_encoded)

    def predict(self, X):
        """Aggregate answer of the consulted entities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features followed by the expert columns.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels.
        """
        check_is_fitted(self)
        _, scores, answers, mask = self._consult(X, cardinality=self._card())
        labels, _ = self._aggregate(answers, mask, scores)
        return self.classes_[labels]

    def predict_proba(self, X):
        """Vote shares of the classes among the consulted entities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features followed by the expert columns.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Vote shares (weighted shares with ``aggregation="weighted"``).
        """
        check_is_fitted(self)
        _, scores, answers, mask = self._consult(X, cardinality=self._card())
        _, shares = self._aggregate(answers, mask, scores)
        return shares

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags
