"""Multi-layer perceptron classifier trained with torch through skorch."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.base import ClassifierMixin, _fit_context

from sklearn_iclr26.neural_network._base import BaseTorchMLP
from sklearn_iclr26.utils._torch import fit_or_restore
from sklearn_iclr26.utils._validation import validate_classifier_fit_data

__all__ = ["TorchMLPClassifier"]


def _softmax(logits):
    logits = logits - logits.max(axis=1, keepdims=True)
    proba = np.exp(logits)
    return proba / proba.sum(axis=1, keepdims=True)


class TorchMLPClassifier(ClassifierMixin, BaseTorchMLP):
    """Multi-layer perceptron classifier trained with PyTorch through skorch.

    A scikit-learn estimator outside (plain hyperparameters, ``random_state``,
    validation, label encoding) with a skorch net inside (``net_``), built in
    :meth:`fit`. It is the network the package's meta-estimators wrap, e.g.
    :class:`~sklearn_iclr26.label_noise.InstanceNoiseCorrector`, which swaps its
    loss for a noise-corrected one.

    Parameters
    ----------
    hidden_layer_sizes : array-like of int, default=(32,)
        Width of each hidden layer.
    activation : {"relu", "tanh", "gelu"}, default="relu"
        Hidden-layer non-linearity.
    alpha : float, default=0.0
        L2 penalty (Adam ``weight_decay``).
    batch_size : int or None, default=None
        Mini-batch size, clipped to ``n_samples``; ``None`` means full batch.
    learning_rate_init : float, default=1e-2
        Adam learning rate.
    max_iter : int, default=200
        Number of epochs.
    dtype : {"float64", "float32"}, default="float64"
        Precision of the torch module.
    device : str, default="cpu"
        torch device, e.g. ``"cuda"``.
    n_jobs : int or None, default=None
        torch threads during fit and predict; ``None`` means 1, ``-1`` all
        cores, ``-2`` all but one; 0 is rejected.
    random_state : int, RandomState instance or None, default=None
        Seeds weight initialisation and shuffling; a fixed value gives
        bit-identical results.
    verbose : int, default=0
        If positive, print the training loss after each epoch (one plain-text
        line per epoch).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels seen during fit.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.
    n_iter_ : int
        Number of epochs run.
    net_ : skorch.NeuralNet
        The fitted skorch net; ``net_.module_`` is the torch module.

    See Also
    --------
    TorchMLPRegressor : The regression counterpart.
    sklearn.neural_network.MLPClassifier : scikit-learn's numpy MLP.

    Notes
    -----
    Protected entry points for the package's other families (documented in
    ``sklearn_iclr26/neural_network/_base.py``): ``_fit_with_criterion`` fits
    with a given per-sample loss and auxiliary per-sample arrays,
    ``_raw_decision`` returns the logits. The label-noise correctors train
    the network with their corrected losses through them.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn_iclr26.neural_network import TorchMLPClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = TorchMLPClassifier(max_iter=100, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    """

    def _criterion(self):
        from torch import nn

        return nn.CrossEntropyLoss

    def _set_output_encoding(self, n_outputs):
        # _fit_with_criterion: y holds encoded labels, predictions are indices
        self.classes_ = np.arange(n_outputs)

    @fit_or_restore
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the network.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Target labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights (weighted mean loss); all-zero weights raise.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X, _, y_encoded, sample_weight = validate_classifier_fit_data(
            self, X, y, sample_weight, dtype=[np.float64, np.float32]
        )
        return self._train(
            X,
            y_encoded,
            len(self.classes_),
            criterion=self._criterion(),
            criterion_params={"reduction": "none"},
            sample_weight=sample_weight,
        )

    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Softmax of the logits; columns follow ``classes_``.
        """
        return _softmax(self._raw_decision(X))

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The most probable class.
        """
        logits = self._raw_decision(X)  # NotFittedError before classes_ is read
        return self.classes_[np.argmax(logits, axis=1)]
