"""Adaptive module composition for classification (MoMa)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from scipy.special import softmax
from sklearn.linear_model import LogisticRegression

from sklearn_iclr26.ensemble._base import BaseAdaptiveComposition
from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._sklearn_compat import _fit_context
from sklearn_iclr26.utils._torch_estimator import TorchClassifierMixin
from sklearn_iclr26.utils._validation import validate_classifier_fit_data

__all__ = ["AdaptiveCompositionClassifier"]


class AdaptiveCompositionClassifier(TorchClassifierMixin, BaseAdaptiveComposition):
    """Compose hub task modules for a new classification task (MoMa's AMC).

    As :class:`AdaptiveCompositionRegressor`, with one-hot class indicators as
    the propagated labels: each module's proxy predicts class frequencies among
    a row's neighbours, the simplex weights minimise the squared error of the
    blended frequencies to the one-hot labels, and the merged network is
    fine-tuned with cross-entropy (``merge="weights"``) or a logistic head per
    selected module is averaged in probability (``merge="predictions"``).

    The training parameters (``max_iter``, ``learning_rate_init``,
    ``early_stopping``...) are those of the fine-tune of the merged network
    (``merge="weights"``); ``random_state`` also seeds the proxy subsample.

    Parameters
    ----------
    %(composition_parameters)s
    %(training_parameters)s

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    proxy_errors_ : ndarray of shape (n_modules,)
        Misclassification rate of each module's proxy (NaN: dropped).
    %(composition_attributes)s

    See Also
    --------
    AdaptiveCompositionRegressor : The regression counterpart.
    ModuleHub : The hub of modules.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.ensemble import AdaptiveCompositionClassifier, ModuleHub
    >>> from sklearn_iclr26.neural_network import TorchMLPRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(80, 4))
    >>> hub = ModuleHub(TorchMLPRegressor((16,), max_iter=30), random_state=0)
    >>> hub = hub.add_task("x0", X, X[:, 0]).add_task("x1", X, X[:, 1])
    >>> clf = AdaptiveCompositionClassifier(hub, max_iter=20, random_state=0)
    >>> clf = clf.fit(X, (X[:, 0] > 0).astype(int))
    >>> clf.predict_proba(X[:2]).shape
    (2, 2)
    """

    def _validate_targets(self, X, y):
        X_checked, _, y_enc, _ = validate_classifier_fit_data(
            self, X, y, dtype="numeric"
        )
        Y = np.zeros((len(y_enc), len(self.classes_)))
        Y[np.arange(len(y_enc)), y_enc] = 1.0
        X_mod = X if hasattr(X, "columns") else X_checked
        return X_mod, Y, y_enc

    def _n_outputs(self):
        return len(self.classes_)

    def _proxy_error(self, proxy, target):
        return float(np.mean(proxy.argmax(axis=1) != target.argmax(axis=1)))

    def _make_head(self):
        return LogisticRegression(max_iter=1000)

    def _head_output(self, head, embedding):
        return head.predict_proba(embedding)

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Compute the proxy, solve the weights, merge and fine-tune.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Downstream inputs (handed to the hub's modules).
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._fit(X, y)

    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Softmax of the fine-tuned network's logits (``merge_ ==
            "weights"``) or the weighted average of the heads' probabilities.
        """
        out = self._raw_decision(X)
        if self.merge_ == "weights":
            return softmax(out, axis=1)
        return out / out.sum(axis=1, keepdims=True)
