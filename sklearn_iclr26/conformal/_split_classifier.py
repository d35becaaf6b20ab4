"""Split-conformal classifier with the classic scores (LAC, APS, RAPS, Margin)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn.base import _fit_context
from sklearn.utils._param_validation import StrOptions

from sklearn_iclr26.conformal._base_classifier import BaseConformalClassifier
from sklearn_iclr26.conformal._scores import conformity_scores

__all__ = ["SplitConformalClassifier"]

_RANDOMIZED = {"aps", "raps"}


class SplitConformalClassifier(BaseConformalClassifier):
    """Split-conformal prediction sets with a classic conformity score.

    The baseline family of :class:`SOCOPClassifier`, with the same data
    handling (training / calibration split, ``FrozenEstimator`` for prefit
    models, ``predict_set``), so that comparisons are one call away. Unlike
    MAPIE's class of the same name, it is a scikit-learn estimator: it clones,
    pickles and works in ``Pipeline`` and ``GridSearchCV``.

    Parameters
    ----------
    estimator : classifier with ``predict_proba``, default=None
        The probabilistic classifier; ``None`` means
        ``LogisticRegression(max_iter=1000)``. Wrap a fitted one in
        :class:`~sklearn.frozen.FrozenEstimator`.
    conformity_score : {"lac", "aps", "raps", "margin"}, default="lac"
        Conformity score: ``1 - p(y|x)`` (LAC), cumulative sorted mass (APS),
        APS plus a rank penalty (RAPS), or the margin
        ``max_{y' != y} p(y'|x) - p(y|x)``.
    score_params : dict, default=None
        Parameters of the score function: ``randomized`` for APS/RAPS,
        ``lam_reg`` and ``k_reg`` for RAPS.
    alpha : float, default=0.1
        Target miscoverage.
    calibration_size : float, default=0.3
        Fraction of the data used for calibration (all of it with a
        ``FrozenEstimator``).
    allow_empty : bool, default=False
        If ``False`` the top label is added to empty sets.
    random_state : int, RandomState instance or None, default=None
        Controls the split and the uniform draws of randomized scores.

    Attributes
    ----------
    estimator_ : classifier
        The fitted classifier.
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    quantile_ : float
        Conformal threshold at ``alpha`` (``inf`` if the calibration set is
        too small).
    calibration_scores_ : ndarray of shape (`n_calibration_samples_`,)
        Sorted scores of the true calibration labels.
    n_calibration_samples_ : int
        Number of calibration points.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.

    See Also
    --------
    SOCOPClassifier : Singleton-optimized scores.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn_iclr26.conformal import SplitConformalClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = SplitConformalClassifier(conformity_score="aps", random_state=0).fit(X, y)
    >>> clf.predict_set(X[:3]).sum(axis=1)
    array([1, 1, 1])
    """

    _parameter_constraints: dict = {
        **BaseConformalClassifier._parameter_constraints,
        "conformity_score": [StrOptions({"lac", "aps", "raps", "margin"})],
        "score_params": [dict, None],
    }

    def __init__(
        self,
        estimator=None,
        *,
        conformity_score="lac",
        score_params=None,
        alpha=0.1,
        calibration_size=0.3,
        allow_empty=False,
        random_state=None,
    ):
        self.estimator = estimator
        self.conformity_score = conformity_score
        self.score_params = score_params
        self.alpha = alpha
        self.calibration_size = calibration_size
        self.allow_empty = allow_empty
        self.random_state = random_state

    def _score_matrix(self, proba, random_state=None):
        params = dict(self.score_params or {})
        if self.conformity_score in _RANDOMIZED and params.get("randomized", False):
            params["random_state"] = random_state
        return conformity_scores(proba, self.conformity_score, **params)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, **fit_params):
        """Fit the classifier and calibrate.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, split into training and calibration parts.
        y : array-like of shape (n_samples,)
            Labels.
        **fit_params : dict
            Passed (split) to ``estimator.fit``.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._fit_conformal(X, y, **fit_params)
