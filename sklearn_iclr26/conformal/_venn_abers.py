"""Venn-Abers calibration (Vovk, Petej and Fedorova 2015): inductive and cross.

For a binary problem with calibration scores ``s_i`` and labels ``y_i``, the
Venn-Abers predictor of a test score ``s`` fits the isotonic regression of the
labels on the scores twice, once with ``(s, 0)`` added and once with ``(s,
1)`` added; its values at ``s`` are the multiprobability pair ``p0 <= p1``,
one of which is perfectly calibrated (under exchangeability). They merge into
one probability ``p = p1 / (1 - p0 + p1)`` (minimax for the log loss) or
``p1 + p0^2 / 2 - p1^2 / 2`` (Brier). Cross Venn-Abers (CVAP) fits one model
per fold, calibrates it on its held-out fold, and merges the folds' pairs
(geometric means for the log loss). Multi-class problems go one-vs-rest
(normalized) or one-vs-one (pairwise coupling), as MAPIE's
``VennAbersCalibrator`` does (tests/test_conformal_predictive.py).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from itertools import combinations
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.frozen import FrozenEstimator
from sklearn.utils.validation import (
    check_is_fitted,
    check_random_state,
    column_or_1d,
)

from sklearn_iclr26.conformal._frozen import frozen_fitted
from sklearn_iclr26.utils._atomic import atomic_fit, scoped_params
from sklearn_iclr26.utils._batching import batched
from sklearn_iclr26.utils._random import set_child_random_state
from sklearn_iclr26.utils._routing import fit_router, route_fit_params
from sklearn_iclr26.utils._sklearn_compat import (
    HasMethods,
    Interval,
    RealNotInt,
    StrOptions,
    _check_method_params,
    _fit_context,
    _inplace_contiguous_isotonic_regression,
    _num_samples,
    _safe_indexing,
)
from sklearn_iclr26.utils._split import split_indices
from sklearn_iclr26.utils._validation import (
    check_at_least_two_classes,
    check_passthrough_X,
    store_params,
)
from sklearn_iclr26.utils._verbose import log_progress

__all__ = ["VennAbersClassifier", "venn_abers_p0_p1"]


# test scores this close (relative) to a calibration score are tied with it
_TIE = 1e-12


def venn_abers_p0_p1(calibration_scores, calibration_labels, scores):
    """Venn-Abers multiprobability pairs ``(p0, p1)`` of binary scores.

    ``p_b(s)`` is the value at ``s`` of the isotonic regression of the labels
    on the scores, fitted on the calibration pairs plus ``(s, b)``. A test
    score equal to a calibration score is placed just below its tied group
    for ``p1`` and just above it for ``p0`` (as MAPIE's and the reference
    implementation's ``searchsorted`` sides do); a test score within a
    relative ``1e-12`` of a calibration score counts as equal to it, so that
    rounding in the inner model (one row scored alone or in a batch) cannot
    move it across the step.

    Parameters
    ----------
    calibration_scores : array-like of shape (n,)
        Scores of the calibration rows (larger: more likely positive).
    calibration_labels : array-like of shape (n,)
        Their binary labels (0/1 or bool).
    scores : array-like of shape (m,)
        Test scores.

    Returns
    -------
    p0_p1 : ndarray of shape (m, 2)
        ``p0`` (column 0) and ``p1`` (column 1), ``0 <= p0 <= p1 <= 1``.
    """
    s = np.asarray(calibration_scores, dtype=np.float64)
    lab = np.asarray(calibration_labels, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    order = np.argsort(s, kind="stable")
    c, start, counts = np.unique(s[order], return_index=True, return_counts=True)
    sums = np.add.reduceat(lab[order], start) if c.shape[0] else np.empty(0)
    means = sums / np.maximum(counts, 1)
    weights = counts.astype(np.float64)
    out = np.empty((scores.shape[0], 2))
    pav = _inplace_contiguous_isotonic_regression
    k = c.shape[0]
    if k:
        # a test score that differs from a calibration score only in its last
        # bits (the same row scored in another batch, where the inner model's
        # matrix products round differently) is that score: the step function
        # jumps at the calibration scores, so rounding must not pick the side
        index = np.searchsorted(c, scores)
        for near in (np.clip(index - 1, 0, k - 1), np.clip(index, 0, k - 1)):
            tie = np.abs(scores - c[near]) <= _TIE * np.maximum(1.0, np.abs(c[near]))
            scores = np.where(tie, c[near], scores)
    y_buf, w_buf = np.empty(k + 1), np.empty(k + 1)
    for col, (label, side) in enumerate(((0.0, "right"), (1.0, "left"))):
        slots = np.searchsorted(c, scores, side=side)
        for slot in np.unique(slots):
            # the calibration groups with (s, label) inserted at the slot
            y_buf[:slot], y_buf[slot], y_buf[slot + 1 :] = (
                means[:slot],
                label,
                means[slot:],
            )
            w_buf[:slot], w_buf[slot], w_buf[slot + 1 :] = (
                weights[:slot],
                1.0,
                weights[slot:],
            )
            pav(y_buf, w_buf)
            out[slots == slot, col] = y_buf[slot]
    return out


def _merge(p0, p1, loss):
    """One probability from the pairs of ``n_members`` (last axis)."""
    if loss == "log":
        with np.errstate(divide="ignore"):
            g1 = np.exp(np.mean(np.log(p1), axis=-1))
            g0 = np.exp(np.mean(np.log1p(-p0), axis=-1))
        return g1 / (g0 + g1)
    return (
        np.mean(p1, axis=-1)
        + 0.5 * np.mean(p0**2, axis=-1)
        - 0.5 * np.mean(p1**2, axis=-1)
    )


class VennAbersClassifier(ClassifierMixin, BaseEstimator):
    """Venn-Abers calibrated probabilities of a classifier (IVAP and CVAP).

    Inductive (``cv=None``): the classifier is fitted on a training part and
    its scores are calibrated on the held-out part. Cross (``cv`` an int or
    splitter, CVAP): one classifier per fold, each calibrated on its held-out
    fold, the folds' multiprobability pairs merged (for the log loss, with
    geometric means). A binary problem calibrates the score of
    ``classes_[1]``; a multi-class one calibrates ``n_classes`` one-vs-rest
    problems (normalized) or the ``n_classes (n_classes - 1) / 2`` pairs
    (pairwise coupling), as MAPIE's ``VennAbersCalibrator``.

    **Guarantee** (binary, inductive, exchangeable rows): one of the pair
    ``(p0, p1)`` of :meth:`predict_p0_p1` is perfectly calibrated,
    ``P(Y = 1 | p_Y) = p_Y``; the merged probability lies between them and
    the gap ``p1 - p0`` shrinks as ``1 / n`` of the calibration rows. No
    guarantee is claimed for the merged or multi-class probabilities beyond
    this (they are what MAPIE and the reference implementation return).

    Parameters
    ----------
    estimator : classifier or None, default=None
        Classifier with ``predict_proba`` (or, for a binary problem,
        ``decision_function``), fitted with ``X`` untouched; ``None`` means a
        standardized :class:`~sklearn.linear_model.LogisticRegression`. A
        :class:`~sklearn.frozen.FrozenEstimator` (or :meth:`calibrate`) uses
        a fitted one as it is: every row is calibration data.
    cv : None, int or cross-validation splitter, default=None
        ``None``: inductive Venn-Abers on a split of ``calibration_size``.
        An int ``K >= 2``: cross Venn-Abers on ``StratifiedKFold(K,
        shuffle=True)``; a splitter: its folds (each row held out once).
    calibration_size : float or int, default=0.3
        Fraction (or number) of rows held out for calibration (``cv=None``).
    multi_class : {"ovr", "ovo"}, default="ovr"
        One-vs-rest (each class's probability calibrated against the rest,
        then the row normalized) or one-vs-one (each pair's renormalized
        probability calibrated on the pair's rows, then coupled: MAPIE's
        prefit multi-class rule). Ignored for two classes.
    loss : {"log", "brier"}, default="log"
        Loss whose minimax merge of ``(p0, p1)`` gives the probability.
    random_state : int, RandomState instance or None, default=None
        Seeds the split, the folds and the inner estimator.
    verbose : int, default=0
        Progress messages when positive.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    estimators_ : list of classifier
        The fitted classifier (inductive) or one per fold (CVAP).
    subproblems_ : list of tuple
        Class indices of each binary problem: ``(1,)`` for a binary problem,
        ``(k,)`` one-vs-rest, ``(i, j)`` one-vs-one (``j`` the positive).
    n_calibration_samples_ : int
        Rows whose scores were calibrated.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.

    See Also
    --------
    sklearn.calibration.CalibratedClassifierCV : Platt or isotonic calibration.

    References
    ----------
    V. Vovk, I. Petej and V. Fedorova, "Large-scale probabilistic predictors
    with and without guarantees of validity", NeurIPS 2015. V. Manokhin,
    "Multi-class probabilistic classification using inductive and cross
    Venn-Abers predictors", COPA 2017.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn_iclr26.conformal import VennAbersClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> va = VennAbersClassifier(random_state=0).fit(X[:400], y[:400])
    >>> va.predict_proba(X[400:403]).round(3)
    array([[0.963, 0.037],
           [0.025, 0.975],
           [0.037, 0.963]])
    >>> va.predict_p0_p1(X[400:403])[:, 0, 0].round(3)  # (p0, p1) of class 1
    array([[0.   , 0.038],
           [0.974, 1.   ],
           [0.962, 1.   ]])
    """

    _parameter_constraints: dict = {
        "estimator": [
            HasMethods(["fit", "predict_proba"]),
            HasMethods(["fit", "decision_function"]),
            None,
        ],
        "cv": [None, Interval(Integral, 2, None, closed="left"), "cv_object"],
        "calibration_size": [
            Interval(RealNotInt, 0, 1, closed="neither"),
            Interval(Integral, 1, None, closed="left"),
        ],
        "multi_class": [StrOptions({"ovr", "ovo"})],
        "loss": [StrOptions({"log", "brier"})],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        cv=None,
        calibration_size=0.3,
        multi_class="ovr",
        loss="log",
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    def _get_estimator(self):
        if self.estimator is not None:
            return self.estimator
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))

    def get_metadata_routing(self):
        """Route ``fit`` metadata (e.g. ``sample_weight``) to the estimator.

        Returns
        -------
        routing : MetadataRouter
            The routing information.
        """
        return fit_router(self, {"estimator": self._get_estimator()})

    # ---------------------------------------------------------------- fit
    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, **fit_params):
        """Fit the classifier(s) and calibrate their scores.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, handed untouched to the estimator.
        y : array-like of shape (n_samples,)
            Labels.
        **fit_params : dict
            Parameters of the estimator's ``fit`` (e.g. ``sample_weight``),
            given for every row; each fit receives those of its rows (with
            metadata routing enabled, what the estimator requested). The
            calibration is unweighted.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        self._fit_work(X, y, fit_params)
        return self

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def calibrate(self, X, y):
        """Calibrate a classifier fitted elsewhere on every row of ``(X, y)``.

        As ``fit`` with ``estimator=FrozenEstimator(estimator)``: nothing is
        refit. The rows must not have been used to train the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Calibration data.
        y : array-like of shape (n_samples,)
            Labels.

        Returns
        -------
        self : object
            The calibrated estimator.
        """
        scoped_params(self, estimator=frozen_fitted(self.estimator, self))
        self._fit_work(X, y, {})
        return self

    def _check_X(self, X, reset=False):
        return check_passthrough_X(self, X, reset=reset)

    def _fit_work(self, X, y, fit_params):
        from sklearn.model_selection import StratifiedKFold
        from sklearn.utils.multiclass import check_classification_targets

        X = self._check_X(X, reset=True)
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y "
                "is None."
            )
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        if _num_samples(X) != y.shape[0]:
            raise ValueError(
                "Found input variables with inconsistent numbers of samples: "
                f"[{_num_samples(X)}, {y.shape[0]}]"
            )
        check_at_least_two_classes(self, y)
        self.classes_, y_index = np.unique(y, return_inverse=True)
        n_samples, n_classes = y.shape[0], self.classes_.shape[0]
        if n_classes == 2:
            self.subproblems_ = [(1,)]
        elif self.multi_class == "ovr":
            self.subproblems_ = [(k,) for k in range(n_classes)]
        else:
            self.subproblems_ = list(combinations(range(n_classes), 2))
        estimator = self._get_estimator()
        if n_classes > 2 and not hasattr(estimator, "predict_proba"):
            raise ValueError(
                f"{type(self).__name__} needs predict_proba for "
                f"{n_classes} classes; {type(estimator).__name__} has none."
            )
        routed = route_fit_params(self, fit_params or {}, ["estimator"])["estimator"]
        routed = _check_method_params(X, params=routed)
        rng = check_random_state(self.random_state)
        frozen = isinstance(estimator, FrozenEstimator)
        if self.cv is None:
            if frozen:
                folds = [(np.arange(0), np.arange(n_samples))]
            else:
                cal, train = split_indices(
                    n_samples, [self.calibration_size], y=y_index, random_state=rng
                )
                folds = [(train, cal)]
        else:
            if frozen:
                raise TypeError(
                    f"{type(self).__name__}(cv={self.cv!r}) refits the estimator on "
                    "every fold, and a FrozenEstimator is never refit: use cv=None "
                    "(or calibrate) with a fitted model."
                )
            cv = self.cv
            if isinstance(cv, Integral):
                seed = int(rng.randint(np.iinfo(np.int32).max))
                cv = StratifiedKFold(cv, shuffle=True, random_state=seed)
            folds = list(cv.split(X, y))
        self.estimators_, self._calibration = [], []
        n_cal = 0
        for k, (train, cal) in enumerate(folds):
            est = clone(estimator)
            set_child_random_state(est, rng)
            if train.shape[0]:
                if np.unique(y_index[train]).shape[0] < n_classes:
                    raise ValueError(
                        f"Fold {k} trains on {np.unique(y_index[train]).shape[0]} "
                        f"of the {n_classes} classes; use fewer folds or a "
                        "stratified splitter."
                    )
                est.fit(
                    _safe_indexing(X, train),
                    y[train],
                    **_check_method_params(X, params=routed, indices=train),
                )
            scores = self._scores(est, _safe_indexing(X, cal))
            self._calibration.append((scores, y_index[cal]))
            self.estimators_.append(est)
            n_cal += cal.shape[0]
        self.n_calibration_samples_ = n_cal
        log_progress(
            self,
            f"calibrated {len(folds)} model(s) on {n_cal} rows, "
            f"{len(self.subproblems_)} binary problem(s)",
        )

    def _scores(self, estimator, X):
        """The class scores of ``estimator`` on ``X``, shape (n, n_classes)."""
        n_classes = self.classes_.shape[0]
        if hasattr(estimator, "predict_proba"):
            proba = np.asarray(estimator.predict_proba(X), dtype=np.float64)
        else:
            d = np.asarray(estimator.decision_function(X), dtype=np.float64).ravel()
            proba = np.c_[-d, d]
        if proba.ndim != 2 or proba.shape[1] != n_classes:
            raise ValueError(
                f"The estimator gives scores of shape {proba.shape} for "
                f"{n_classes} classes; it must be fitted on the same labels."
            )
        return proba

    @staticmethod
    def _binary(scores, y_index, problem):
        """Scores and labels (or rows) of one binary problem."""
        if len(problem) == 1:
            k = problem[0]
            return scores[:, k], None if y_index is None else (y_index == k)
        i, j = problem
        total = scores[:, i] + scores[:, j]
        with np.errstate(invalid="ignore", divide="ignore"):
            s = np.where(total > 0, scores[:, j] / total, 0.5)
        if y_index is None:
            return s, None
        rows = (y_index == i) | (y_index == j)
        return s[rows], y_index[rows] == j

    # --------------------------------------------------------- front-ends
    def _p0_p1_batch(self, X):
        members = []
        for est, (cal_scores, cal_y) in zip(self.estimators_, self._calibration):
            test = self._scores(est, X)
            per_problem = []
            for problem in self.subproblems_:
                s_cal, lab = self._binary(cal_scores, cal_y, problem)
                s_test, _ = self._binary(test, None, problem)
                per_problem.append(venn_abers_p0_p1(s_cal, lab, s_test))
            members.append(np.stack(per_problem, axis=1))
        return np.stack(members, axis=2)  # (n, n_problems, n_members, 2)

    def _row_bytes(self):
        n_cal = getattr(self, "n_calibration_samples_", 1)
        return (
            8
            * 4
            * (len(getattr(self, "estimators_", [1])) + 1)
            * (len(getattr(self, "subproblems_", [1])) + 2)
            + 16 * n_cal
        )

    def predict_p0_p1(self, X):
        """Predict the Venn-Abers multiprobability pairs of every binary problem.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        p0_p1 : ndarray of shape (n_samples, n_problems, n_members, 2)
            ``p0`` (last axis 0) and ``p1`` (1) of each binary problem of
            ``subproblems_`` and each fitted model (one inductive, one per
            fold in CVAP).
        """
        check_is_fitted(self)
        X = self._check_X(X)
        return batched(self._p0_p1_batch, X, row_bytes=self._row_bytes())

    def predict_proba(self, X):
        """Predict the Venn-Abers calibrated class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Rows sum to one; columns follow ``classes_``.
        """
        check_is_fitted(self)
        X = self._check_X(X)
        return batched(self._proba_batch, X, row_bytes=self._row_bytes())

    def _proba_batch(self, X):
        pairs = self._p0_p1_batch(X)
        p = _merge(pairs[..., 0], pairs[..., 1], self.loss)  # (n, n_problems)
        n, n_classes = p.shape[0], self.classes_.shape[0]
        if n_classes == 2:
            return np.c_[1 - p[:, 0], p[:, 0]]
        if len(self.subproblems_[0]) == 1:
            out = p
        else:
            inv = np.zeros((n, n_classes))
            with np.errstate(divide="ignore"):
                for col, (i, j) in enumerate(self.subproblems_):
                    inv[:, j] += 1.0 / p[:, col]
                    inv[:, i] += 1.0 / (1.0 - p[:, col])
                out = 1.0 / (inv - (n_classes - 2))
        total = out.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.where(total > 0, out / total, 1.0 / n_classes)
        return out

    def predict(self, X):
        """Most probable class (binary: ``classes_[1]`` when ``p >= 0.5``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels.
        """
        proba = self.predict_proba(X)
        if self.classes_.shape[0] == 2:
            return self.classes_[(proba[:, 1] >= 0.5).astype(int)]
        return self.classes_[np.argmax(proba, axis=1)]

    def __sklearn_tags__(self):
        from sklearn.utils import get_tags

        tags = super().__sklearn_tags__()
        child = get_tags(self._get_estimator()).input_tags
        tags.input_tags.allow_nan = child.allow_nan
        tags.input_tags.sparse = child.sparse
        return tags
