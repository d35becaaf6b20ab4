"""Class-conditional label-noise correction (backward / forward, Patrini et al.)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MetaEstimatorMixin,
    _fit_context,
    clone,
)
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import (
    check_is_fitted,
    check_random_state,
    validate_data,
)

from sklearn_iclr26.label_noise._common import (
    estimator_kind,
    fit_lightgbm,
    fit_stacked,
    init_score,
    proba_from_raw,
    raw_score,
    torch_child,
)
from sklearn_iclr26.utils._validation import (
    input_validation_kwargs,
    validate_classifier_fit_data,
)

__all__ = ["ClassConditionalNoiseCorrector"]


def estimate_transition_matrix(proba, quantile=0.97):
    """Anchor-point estimate of ``T[i, j] = P(Y~ = j | Y = i)`` (Patrini et al.).

    For each class ``i`` the anchor is the row whose noisy probability of ``i``
    is closest to its ``quantile`` over all rows (a robust ``argmax``); row
    ``i`` of ``T`` is that row's noisy probability vector.
    """
    proba = np.asarray(proba, dtype=np.float64)
    n_classes = proba.shape[1]
    T = np.empty((n_classes, n_classes))
    for i in range(n_classes):
        level = np.quantile(proba[:, i], quantile)
        anchor = np.argmin(np.abs(proba[:, i] - level))
        T[i] = proba[anchor]
    T = np.clip(T, 1e-6, None)
    return T / T.sum(axis=1, keepdims=True)


def shrink_to_diagonally_dominant(T, margin=0.05):
    """Mix ``T`` with the identity until every diagonal entry is at least 1/2 + margin.

    A strictly diagonally dominant row-stochastic matrix is invertible; it
    means every class keeps its label more often than not. Returns the matrix
    and the mixing weight (0 when ``T`` already satisfies it).
    """
    for alpha in np.linspace(0.0, 1.0, 41):
        mixed = (1.0 - alpha) * T + alpha * np.eye(T.shape[0])
        if np.all(np.diag(mixed) >= 0.5 + margin):
            return mixed, float(alpha)
    return np.eye(T.shape[0]), 1.0


class ClassConditionalNoiseCorrector(
    ClassifierMixin, MetaEstimatorMixin, BaseEstimator
):
    """Train a classifier on noisy labels with class-conditional loss correction.

    The class-conditional noise model (CCN): a label of class ``i`` is flipped
    to ``j`` with a probability ``T[i, j]`` that does not depend on ``x``. The
    transition matrix ``T`` is given or estimated with anchor points from
    out-of-fold noisy probabilities (Patrini et al. 2017; mixed with the
    identity, with a warning, if a class would be flipped more often than
    kept), then

    - ``method="backward"``: the loss is ``sum_y inv(T)[y~, y] l(h, y)`` (its
      expectation over the noise is the clean loss), applied to any classifier
      whose ``fit`` takes ``sample_weight`` by stacking one copy of ``X`` per
      class with the (signed) weights ``inv(T)[y~, y]``, as
      ``bqlearn.unbiased.LossCorrection`` does;
    - ``method="forward"``: the loss is ``-log (T^T p(x))[y~]``, the
      log-likelihood of the noisy label. Needs a ``TorchMLPClassifier`` (any
      number of classes, as its criterion) or a ``LGBMClassifier`` (binary
      targets only, as a custom objective).

    It is the baseline of :class:`InstanceNoiseCorrector`: the same wrapper,
    a different noise model.

    Read more in the :ref:`User Guide <label_noise>`.

    Parameters
    ----------
    estimator : estimator object, default=None
        The classifier; ``None`` means ``LogisticRegression()``.
    method : {"backward", "forward"}, default="backward"
        The correction.
    transition_matrix : array-like of shape (n_classes, n_classes) or None, \
            default=None
        Known ``T`` (rows sum to 1, ordered as ``classes_``); ``None`` estimates
        it.
    anchor_quantile : float, default=0.97
        Quantile defining the anchor point of each class.
    cv : int, default=3
        Folds of the out-of-fold probabilities used to estimate ``T`` (fewer
        when a class is too small; in-sample probabilities below 2 folds).
    random_state : int, RandomState instance or None, default=None
        Seeds the fold split and, when the estimator has a ``random_state``
        parameter left at ``None``, the estimator.

    Attributes
    ----------
    estimator_ : estimator object
        The fitted classifier.
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    transition_matrix_ : ndarray of shape (n_classes, n_classes)
        The transition matrix used.
    init_score_ : float
        Raw-score offset (LightGBM forward mode), else 0.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.

    See Also
    --------
    InstanceNoiseCorrector : Correction for instance-dependent flip rates.

    References
    ----------
    .. [1] G. Patrini, A. Rozza, A. Menon, R. Nock and L. Qu, "Making Deep Neural
       Networks Robust to Label Noise: a Loss Correction Approach", CVPR 2017.
    .. [2] N. Natarajan, I. Dhillon, P. Ravikumar and A. Tewari, "Learning with
       Noisy Labels", NeurIPS 2013.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn_iclr26.datasets import make_label_noise
    >>> from sklearn_iclr26.label_noise import ClassConditionalNoiseCorrector
    >>> X, y = make_classification(n_samples=300, random_state=0)
    >>> y_noisy, _ = make_label_noise(y, kind="symmetric", rate=0.2, random_state=0)
    >>> clf = ClassConditionalNoiseCorrector(random_state=0).fit(X, y_noisy)
    >>> clf.transition_matrix_.shape
    (2, 2)
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict_proba"]), None],
        "method": [StrOptions({"backward", "forward"})],
        "transition_matrix": ["array-like", None],
        "anchor_quantile": [Interval(Real, 0, 1, closed="right")],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        method="backward",
        transition_matrix=None,
        anchor_quantile=0.97,
        cv=3,
        random_state=None,
    ):
        self.estimator = estimator
        self.method = method
        self.transition_matrix = transition_matrix
        self.anchor_quantile = anchor_quantile
        self.cv = cv
        self.random_state = random_state

    def _get_estimator(self):
        if self.estimator is None:
            from sklearn.linear_model import LogisticRegression

            return LogisticRegression()
        return self.estimator

    def _transition_matrix(self, estimator, X, y, sample_weight, n_classes):
        if self.transition_matrix is not None:
            T = np.asarray(self.transition_matrix, dtype=np.float64)
            if T.shape != (n_classes, n_classes):
                raise ValueError(
                    f"transition_matrix must have shape ({n_classes}, {n_classes}), "
                    f"got {T.shape}."
                )
            if np.any(T < 0) or not np.allclose(T.sum(axis=1), 1.0):
                raise ValueError(
                    "transition_matrix must be non-negative with rows summing to 1."
                )
            return T
        n_splits = min(self.cv, int(np.bincount(y).min()))
        params = {} if sample_weight is None else {"sample_weight": sample_weight}
        if n_splits >= 2:
            folds = StratifiedKFold(
                n_splits, shuffle=True, random_state=self.random_state
            )
            proba = cross_val_predict(
                clone(estimator), X, y, cv=folds, method="predict_proba", params=params
            )
        else:
            proba = clone(estimator).fit(X, y, **params).predict_proba(X)
        T = estimate_transition_matrix(proba, self.anchor_quantile)
        T, alpha = shrink_to_diagonally_dominant(T)
        if alpha > 0:
            warnings.warn(
                "The estimated transition matrix had a class flipped more often "
                f"than kept; it was mixed with the identity (weight {alpha:.3g}) "
                "so that it is invertible. The noise may be too strong, or the "
                "estimator too weak, for the anchor-point estimate.",
                UserWarning,
                stacklevel=3,
            )
        return T

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Estimate the transition matrix and fit with the corrected loss.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Observed, possibly noisy, labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        estimator = self._get_estimator()
        X, y, y_enc, sample_weight = validate_classifier_fit_data(
            self, X, y, sample_weight, **input_validation_kwargs(estimator)
        )
        n_classes = len(self.classes_)
        kind = estimator_kind(estimator)
        if self.method == "forward":
            if kind not in ("lightgbm", "torch"):
                raise ValueError(
                    "method='forward' needs a TorchMLPClassifier or a "
                    f"LGBMClassifier, got {type(estimator).__name__}; use "
                    "method='backward' for other classifiers."
                )
            if kind == "lightgbm" and n_classes != 2:
                raise ValueError(
                    "method='forward' with a LGBMClassifier supports binary "
                    f"targets only, got {n_classes} classes. Use "
                    "method='backward' or a TorchMLPClassifier."
                )
        elif kind is None:
            raise ValueError(
                f"{type(estimator).__name__} does not accept sample_weight in "
                "fit, which method='backward' needs."
            )
        params = estimator.get_params(deep=False)
        if "random_state" in params and params["random_state"] is None:
            seed = int(check_random_state(self.random_state).randint(2**31 - 1))
            estimator = clone(estimator).set_params(random_state=seed)
        T = self._transition_matrix(estimator, X, y_enc, sample_weight, n_classes)
        self.transition_matrix_ = T
        self._kind = kind
        self.init_score_ = 0.0
        if self.method == "backward":
            if abs(np.linalg.det(T)) < 1e-8:
                raise ValueError(
                    "The transition matrix is singular; backward correction "
                    "needs an invertible T (flip rates summing to less than 1)."
                )
            T_inv = np.linalg.inv(T)
            base = np.ones(X.shape[0]) if sample_weight is None else sample_weight
            weights = [base * T_inv[y_enc, c] for c in range(n_classes)]
            scale = base.sum() / max(
                float(sum(np.abs(w).sum() for w in weights)), 1e-300
            )
            labels = [np.full(X.shape[0], c) for c in range(n_classes)]
            self.estimator_ = fit_stacked(
                estimator, X, labels, [w * scale for w in weights]
            )
        elif kind == "lightgbm":
            from sklearn_iclr26.label_noise._lgbm_objective import (
                ForwardCorrectedObjective,
            )

            self.estimator_, self.init_score_ = fit_lightgbm(
                estimator,
                ForwardCorrectedObjective(transition_matrix=T),
                X,
                y_enc,
                sample_weight,
                init_score(y_enc, sample_weight),
            )
        else:
            from sklearn_iclr26.label_noise._torch_loss import ForwardCorrectedLoss

            est = torch_child(estimator, X, n_classes)
            est._fit_net(
                np.asarray(X, dtype=np.float64),
                y_enc,
                n_classes,
                criterion=ForwardCorrectedLoss,
                criterion_params={"transition_matrix": T},
                sample_weight=sample_weight,
            )
            self.estimator_ = est
        return self

    def predict_proba(self, X):
        """Class probabilities (of the clean labels).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        check_is_fitted(self)
        X = validate_data(
            self, X, reset=False, **input_validation_kwargs(self._get_estimator())
        )
        if self.method == "forward" and self._kind == "lightgbm":
            return proba_from_raw(
                raw_score("lightgbm", self.estimator_, X, self.init_score_)
            )
        return np.asarray(self.estimator_.predict_proba(X), dtype=np.float64)

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The most probable class.
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        sub = get_tags(self._get_estimator())
        tags.input_tags.sparse = sub.input_tags.sparse
        tags.input_tags.allow_nan = sub.input_tags.allow_nan
        return tags
