"""Multi-layer perceptron regressor trained with torch through skorch."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.base import RegressorMixin, _fit_context
from sklearn.utils.validation import _check_sample_weight, validate_data

from sklearn_iclr26.neural_network._base import BaseTorchMLP
from sklearn_iclr26.utils._torch import fit_or_restore

__all__ = ["TorchMLPRegressor"]


class TorchMLPRegressor(RegressorMixin, BaseTorchMLP):
    """Multi-layer perceptron regressor trained with PyTorch through skorch.

    Same design as :class:`TorchMLPClassifier`. Targets are standardised
    internally; multi-output ``y`` of shape (n_samples, n_outputs) is supported.

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
        torch device.
    n_jobs : int or None, default=None
        torch threads during fit and predict; ``None`` means 1, ``-1`` all
        cores; 0 is rejected.
    random_state : int, RandomState instance or None, default=None
        Seeds weight initialisation and shuffling.
    verbose : int, default=0
        If positive, print the training loss after each epoch (one plain-text
        line per epoch).

    Attributes
    ----------
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.
    n_iter_ : int
        Number of epochs run.
    net_ : skorch.NeuralNet
        The fitted skorch net.

    See Also
    --------
    TorchMLPClassifier : The classification counterpart.

    Notes
    -----
    Protected entry points for the package's other families:
    ``_fit_with_criterion`` and ``_raw_decision`` (documented in
    ``sklearn_iclr26/neural_network/_base.py``).

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn_iclr26.neural_network import TorchMLPRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> reg = TorchMLPRegressor(max_iter=50, random_state=0).fit(X, y)
    >>> reg.predict(X[:3]).shape
    (3,)
    """

    def _set_output_encoding(self, n_outputs):
        # _fit_with_criterion: the targets are used as given (no scaling)
        self._y_ndim = 1 if n_outputs == 1 else 2
        self._y_mean = np.zeros(n_outputs)
        self._y_scale = np.ones(n_outputs)

    @fit_or_restore
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the network.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights (weighted mean loss).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        from torch import nn

        X, y = validate_data(
            self,
            X,
            y,
            dtype=[np.float64, np.float32],
            y_numeric=True,
            multi_output=True,
        )
        if sample_weight is not None:
            sample_weight = _check_sample_weight(
                sample_weight, X, ensure_non_negative=True
            )
        y = np.asarray(y, dtype=np.float64)
        self._y_ndim = y.ndim
        y_2d = y.reshape(len(y), -1)
        self._y_mean = np.average(y_2d, axis=0, weights=sample_weight)
        y_std = np.sqrt(
            np.average((y_2d - self._y_mean) ** 2, axis=0, weights=sample_weight)
        )
        self._y_scale = np.where(y_std > 0, y_std, 1.0)
        y_scaled = (y_2d - self._y_mean) / self._y_scale
        return self._train(
            X,
            y_scaled,
            y_2d.shape[1],
            criterion=nn.MSELoss,
            criterion_params={"reduction": "none"},
            sample_weight=sample_weight,
        )

    def predict(self, X):
        """Predicted targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Predictions in the units of ``y``.
        """
        out = self._raw_decision(X) * self._y_scale + self._y_mean
        return out.ravel() if self._y_ndim == 1 else out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
