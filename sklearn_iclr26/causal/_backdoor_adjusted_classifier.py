"""Classifier with backdoor adjustment over learned background states (Prism)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from scipy.special import softmax

from sklearn_iclr26.causal._backdoor_adjusted import BaseBackdoorAdjusted
from sklearn_iclr26.utils._torch_estimator import TorchClassifierMixin

__all__ = ["BackdoorAdjustedClassifier"]


class BackdoorAdjustedClassifier(TorchClassifierMixin, BaseBackdoorAdjusted):
    """Classifier with backdoor adjustment over learned background states.

    The classification counterpart of :class:`BackdoorAdjustedRegressor`
    (Prism, ICLR 2026): cross-entropy replaces the Huber loss in both
    branches. With ``adjust_in="output"`` the adjusted prediction is the mean
    of the copies' class probabilities (the paper's formula); with
    ``"hidden"`` the copies are averaged before the head. ``predict_mode=
    "mix"`` averages the factual and adjusted class probabilities.

    Read more in the :ref:`User Guide <prism>`.

    Parameters
    ----------
    %(backdoor_parameters)s
    %(training_parameters)s

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels seen during fit.
    %(backdoor_attributes)s
    %(training_attributes)s

    See Also
    --------
    BackdoorAdjustedRegressor : The regression counterpart.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn_iclr26.causal import BackdoorAdjustedClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = BackdoorAdjustedClassifier(
    ...     feature_groups={"context": [2, 3]}, max_iter=30, random_state=0
    ... ).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    """

    def predict_proba(self, X, mode=None):
        """Class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        mode : {"factual", "adjusted", "mix"} or None, default=None
            Branch to use; ``None`` means ``predict_mode``.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``; ``"mix"`` averages the two branches'
            probabilities.
        """
        parts = [softmax(out, axis=1) for out in self._branch_outputs(X, mode)]
        return sum(parts) / len(parts)

    def predict(self, X, mode=None):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        mode : {"factual", "adjusted", "mix"} or None, default=None
            Branch to use; ``None`` means ``predict_mode``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The most probable class.
        """
        proba = self.predict_proba(X, mode)  # NotFittedError before classes_
        return self.classes_[np.argmax(proba, axis=1)]
