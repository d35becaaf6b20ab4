"""Top-k learning to defer for classification (Montreuil et al., ICLR 2026)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

from sklearn_iclr26.deferral._base import (
    ATTRIBUTES_DOC,
    REFERENCES_DOC,
    _BaseTopKDeferral,
    _LabelExpertsMixin,
)
from sklearn_iclr26.deferral._surrogate import (
    break_ties_by_posterior,
    majority_vote,
)
from sklearn_iclr26.utils._docstrings import Substitution
from sklearn_iclr26.utils._sklearn_compat import StrOptions, _num_samples
from sklearn_iclr26.utils._validation import check_at_least_two_classes, store_params

__all__ = ["TopKDeferrer"]


@Substitution(deferral_attributes=ATTRIBUTES_DOC, deferral_references=REFERENCES_DOC)
class TopKDeferrer(ClassifierMixin, _LabelExpertsMixin, _BaseTopKDeferral):
    """Learning to defer to the top-k experts, with an adaptive k(x) option.

    For each query, an allocator scores every *entity* (the model and the
    experts, or the classes and the experts) and consults the ``k`` entities
    with the highest scores; the answer is the aggregate (majority vote) of
    their answers. Entity ``j`` costs ``mu_j = w_j * error_j + beta_j`` (0-1
    error, error weight ``w_j`` given by ``error_weight``, fee ``beta_j`` by
    ``costs``). The allocator is trained once on the k-independent
    cost-weighted surrogate of Montreuil et al. (2026),
    ``sum_j (S - mu_j) * (-log softmax_j)`` with ``S = sum_i mu_i``, whose
    minimiser ranks the entities by increasing expected cost: the same fit
    serves every ``k``. With ``adaptive=True`` a cardinality model chooses
    ``k(x)`` per query (Top-k(x)).

    The expert answers are the columns of ``X`` named by ``expert_columns``,
    holding **labels of y** (as in ``classes_``; ``NaN``/``None`` means the
    expert is unavailable for that row). Everything else is a feature: the
    predictor receives the feature columns of ``X`` untouched (a
    ``Pipeline`` with a name-based ``ColumnTransformer`` on a raw DataFrame
    works), and so does a user-given allocator.

    Read more in the :ref:`User Guide <deferral>`.

    Parameters
    ----------
    rejector : classifier or None, default=None
        Allocator fitted on the surrogate. ``None`` uses a built-in soft-label
        multinomial logistic regression (standardised features, ``C=1``, L-BFGS
        on ``n`` rows), computed on ``transformer`` 's output. A classifier
        with ``predict_proba`` whose ``fit`` accepts ``sample_weight`` (a
        :class:`~sklearn.pipeline.Pipeline` gets ``<last step>__sample_weight``)
        is fitted on the raw feature rows replicated once per entity with
        weights ``S - mu_j`` (one global normalisation); for
        ``LogisticRegression`` this is the same objective as the default.
    predictor : classifier or None, default=None
        Two-stage base model. ``None`` means ``StandardScaler`` +
        ``LogisticRegression``. It is fitted on the feature columns of ``X``
        (untouched) and ``y``; its answers used to train the allocator are
        cross-fitted (``cv``). Wrap a trained model (e.g. a deployed pipeline)
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
        Cardinality model, fitted like ``rejector`` on the labels ``1..|A|``.
    budget_weight : float, default=1.0
        Weight of the fees in the Top-k(x) cost (``lambda`` in the paper).
    error_weight : float or array-like of shape (n_entities,), default=1.0
        Weight ``w_j`` of the error of each entity in its cost.
    costs : float or array-like, default=None
        Consultation fees ``beta``: a scalar or one value per expert (the model
        or the classes pay 0), or one value per entity. ``None`` means 0.
    aggregation : {"majority", "weighted"}, default="majority"
        ``"majority"``: one vote per consulted entity. ``"weighted"``: votes
        weighted by the softmax of the allocator scores of the consulted
        entities. Ties (every disagreement when ``k=2``) go to the tied class
        with the highest posterior given the consulted answers: the
        predictor's probabilities (when it has ``predict_proba``) times each
        consulted expert's training confusion matrix (naive Bayes), then to
        the best-ranked entity. So ``k=2`` combines two answers instead of
        repeating ``k=1``.
    expert_columns : list of str or list of int, default=None
        The columns of ``X`` holding the experts' answers, by name (a
        DataFrame's column names; required when ``X`` is a DataFrame with
        string column names) or by position (arrays). ``None``: no experts,
        the predictor alone (two-stage) or the classes alone (one-stage).
    transformer : transformer, "passthrough" or None, default=None
        Maps the feature columns of ``X`` to the numeric input of the built-in
        allocator and cardinality model (``rejector=None``,
        ``cardinality_estimator=None``); a user-given allocator receives the
        raw feature columns. ``None``: the fitted steps of the predictor
        before its final estimator when the predictor is a ``Pipeline`` (or a
        frozen one), else the features as they are; ``"passthrough"``: the
        features as they are. Non-numeric features without a transformer
        raise an error naming this option.
    cv : int, cross-validation generator or iterable, default=5
        Folds of the cross-fitting (predictor answers, Top-k(x) labels).
    random_state : int, RandomState instance or None, default=None
        Seeds the cross-fitting folds (shuffled, stratified when ``cv`` is an
        int) and the unset ``random_state`` of the predictor, allocator,
        cardinality model and transformer, so that results are bit-identical.
        ``None``: unshuffled folds, children as given.
    verbose : int, default=0
        Print progress messages when positive.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    predictor_ : classifier
        Fitted predictor (two-stage only).
    n_entities_ : int
        Number of entities.
    entity_names_ : ndarray of str of shape (`n_entities_`,)
        Names of the entities, in the order of :meth:`entity_scores`: the
        model (or the classes), then the expert columns.
    %(deferral_attributes)s

    See Also
    --------
    TopKDeferralRegressor : The regression counterpart.
    sklearn_iclr26.datasets.make_experts : Simulated specialist experts.
    DeferralCurveDisplay : Accuracy against budget.

    Notes
    -----
    Expert answers are columns of ``X`` rather than metadata so that every
    scorer, ``cross_val_predict`` and search object works. Put the
    preprocessing **inside** ``predictor`` (a ``Pipeline`` with a
    ``ColumnTransformer`` by column name) and pass the raw DataFrame with
    the expert columns named in ``expert_columns``; the built-in allocator
    then computes on the output of the predictor's preprocessing steps.

    An expert that is unavailable (``NaN``) is excluded from the training mass
    of that row and skipped at prediction, the next-ranked available entity
    taking its place; the model (or the classes) is always available, so a row
    without any expert falls back to the model. :meth:`predict_allocation`
    ignores availability: it chooses whom to ask before asking.

    ``predict_proba`` returns vote shares; with ``k`` even, majority ties are
    frequent and decided by the posterior in :meth:`predict` (see
    ``aggregation``), so ``argmax`` of the shares may differ from
    :meth:`predict` on tied rows. When the predictor has ``predict_proba``,
    the model's answer is the argmax of its probabilities. :meth:`score` is the
    accuracy minus the mean fee paid (``1 -`` the deferral cost).

    With ``adaptive=True`` the fitted estimator keeps (privately) the
    cardinality model's training input and cross-fitted costs, ``n`` rows,
    so that :meth:`deferral_curve` can refit the cardinality model for other
    budget weights; a pickled adaptive model therefore holds its training
    features.

    References
    ----------
    %(deferral_references)s

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from sklearn.datasets import load_iris
    >>> from sklearn_iclr26.datasets import make_experts
    >>> from sklearn_iclr26.deferral import TopKDeferrer
    >>> X, y = load_iris(return_X_y=True, as_frame=True)
    >>> experts, fees = make_experts(X, y, n_experts=3, random_state=0)
    >>> names = ["expert_a", "expert_b", "expert_c"]
    >>> X_all = X.join(pd.DataFrame(experts, columns=names))
    >>> clf = TopKDeferrer(k=2, expert_columns=names, costs=fees).fit(X_all, y)
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
        rejector=None,
        predictor=None,
        *,
        regime="two-stage",
        k=1,
        adaptive=False,
        cardinality_estimator=None,
        budget_weight=1.0,
        error_weight=1.0,
        costs=None,
        aggregation="majority",
        expert_columns=None,
        transformer=None,
        cv=5,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    def _default_predictor(self):
        return make_pipeline(StandardScaler(), LogisticRegression())

    def _uses_predictor(self):
        return self.regime == "two-stage"

    def _model_proba(self, X_feat):
        """The predictor's probabilities, columns ordered as ``classes_``."""
        proba = self.predictor_.predict_proba(X_feat)
        out = np.zeros((proba.shape[0], len(self.classes_)))
        out[:, self._encode(self.predictor_.classes_, "The predictor's classes")] = (
            proba
        )
        return out

    def _crossfit_model_output(self, predictor, X_feat, y, cv, params):
        # probabilities when the predictor has them: the model's answer is their
        # argmax and they weigh its vote in the tie rule (_evidence)
        if not hasattr(predictor, "predict_proba"):
            return super()._crossfit_model_output(predictor, X_feat, y, cv, params)
        if isinstance(predictor, FrozenEstimator):
            return self._model_proba(X_feat)
        # columns in the order of np.unique(y), which is classes_ here
        return cross_val_predict(
            predictor, X_feat, y, cv=cv, params=params, method="predict_proba"
        )

    def _entity_answers(self, X_feat, E, model_output):
        n, n_classes = _num_samples(X_feat), len(self.classes_)
        if E is None:
            E = np.empty((n, 0))
        proba = None
        if self.regime == "two-stage":
            if model_output is None and hasattr(self.predictor_, "predict_proba"):
                proba = self._model_proba(X_feat)
            elif model_output is None:
                model_output = self.predictor_.predict(X_feat)
            elif np.ndim(model_output) == 2:
                proba = np.asarray(model_output, dtype=np.float64)
            if proba is not None:
                first = np.argmax(proba, axis=1)[:, None]
            else:
                first = self._encode(model_output, "The predictor's output")[:, None]
        else:
            first = np.tile(np.arange(n_classes, dtype=np.float64), (n, 1))
        answers = np.hstack([first.astype(np.float64), E])
        return answers, ~np.isnan(answers), proba

    def _fit_votes(self, answers, available, extra, y_cost):
        """Per-entity confusion matrices and the class prior (the tie rule)."""
        n_entities, n_classes = answers.shape[1], len(self.classes_)
        # Laplace smoothing: one pseudo-count per (true class, answer) cell
        counts = np.ones((n_entities, n_classes, n_classes))
        for j in range(n_entities):
            valid = available[:, j]
            np.add.at(counts[j], (y_cost[valid], answers[valid, j].astype(int)), 1.0)
        # _log_confusion[j, c, a] = log P(entity j answers a | true class c)
        self._log_confusion = np.log(counts / counts.sum(axis=2, keepdims=True))
        prior = np.bincount(y_cost, minlength=n_classes) + 1.0
        self._log_prior = np.log(prior / prior.sum())

    def _evidence(self, answers, available, extra):
        """``(n, n_entities, n_classes)`` log-likelihoods of each entity's answer.

        Experts (and a predictor without ``predict_proba``): the log of their
        training confusion matrix, ``log P(answer | true class)``. A predictor
        with probabilities: ``log p(c | x) - log prior(c)`` (probabilities
        floored at 1e-3), so that a consulted model contributes its own
        posterior (Kerrigan et al., 2021). Classes (one-stage): no evidence.
        """
        n_entities, n_classes = answers.shape[1], len(self.classes_)
        index = np.where(available, answers, 0).astype(int)
        # [entity, answer, class] rows gathered contiguously: (n, n_entities, K)
        table = np.ascontiguousarray(self._log_confusion.transpose(0, 2, 1))
        evidence = table[np.arange(n_entities)[None, :], index]
        evidence[~available] = 0.0
        if self.regime == "one-stage":
            evidence[:, :n_classes, :] = 0.0
        elif extra is not None:
            proba = np.maximum(extra, 1e-3)
            proba /= proba.sum(axis=1, keepdims=True)
            evidence[:, 0, :] = np.log(proba) - self._log_prior[None, :]
        return evidence

    def _row_bytes(self):
        return super()._row_bytes() + 8 * 3 * self.n_entities_ * len(self.classes_)

    def _answer_errors(self, answers, y):
        return (answers != y[:, None]).astype(np.float64)

    def _aggregate(self, answers, mask, scores, ranked=False, evidence=None):
        return majority_vote(
            answers,
            mask,
            scores,
            len(self.classes_),
            weighted=self.aggregation == "weighted",
            ranked=ranked,
            evidence=evidence,
            log_prior=None if evidence is None else self._log_prior,
        )

    def _decode(self, aggregate):
        labels, _ = aggregate
        return self.classes_[labels]

    def _aggregate_error(self, answers, mask, scores, y, ranked=False, evidence=None):
        labels, _ = self._aggregate(answers, mask, scores, ranked, evidence)
        return (labels != y).astype(np.float64)

    def _curve_values(self, answers, mask, scores, y, ranked=False, evidence=None):
        return 1.0 - self._aggregate_error(answers, mask, scores, y, ranked, evidence)

    def _curve_finish(self, mean_value):
        return float(mean_value)

    def _fixed_k_sums(
        self, answers_r, avail_r, scores_r, position, ks, y, evidence_r=None
    ):
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
        if evidence_r is not None:
            # posterior after the first c rank-ordered columns (unavailable
            # ones add nothing): one cumulative sum serves every k
            cum_post = np.cumsum(np.where(avail_r[:, :, None], evidence_r, 0.0), axis=1)
        correct = {}
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
                multi = np.count_nonzero(tied, axis=1) > 1
                if evidence_r is not None and multi.any():
                    # the consulted set is the columns up to the k-th available
                    # one (all columns when a row has fewer than k)
                    last = np.where(has, j, n_entities - 1)[multi]
                    post = cum_post[rows[multi], last] + self._log_prior
                    tied[multi] = break_ties_by_posterior(tied[multi], post)
                ranked_tied = np.take_along_axis(tied, cols, axis=1)
                ranked_tied &= position <= k
                ranked_tied &= avail_r
                labels = cols[rows, np.argmax(ranked_tied, axis=1)]
                correct[k] = float(np.sum(labels == y))
        return np.array([correct[int(k)] for k in ks])

    def _prepare_y_predict(self, y):
        return self._encode(y, "y")

    def _check_target(self, y):
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
        return y, self._encode(y, "y")

    def _model_entity_names(self):
        if self.regime == "two-stage":
            return ["model"]
        return [f"class_{c}" for c in self.classes_]

    def _proba_batch(self, X):
        scores, answers, _, mask, evidence = self._consult(X, cardinality=self._card())
        return self._aggregate(answers, mask, scores, evidence=evidence)[1]

    def predict_proba(self, X):
        """Vote shares of the classes among the consulted entities.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Features and the expert columns.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Vote shares (weighted shares with ``aggregation="weighted"``).
        """
        return self._batched(self._proba_batch, X)

    def score(self, X, y, sample_weight=None):
        """Fee-adjusted accuracy: accuracy minus the mean fee paid per query.

        This is ``1 - deferral cost`` (0-1 error plus the fees of the entities
        consulted, see ``deferral/_scorers.py``), so ``GridSearchCV`` over
        ``k`` trades accuracy against fees instead of always picking the
        largest ``k``. Without fees (``costs=None``) it is the accuracy.

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
