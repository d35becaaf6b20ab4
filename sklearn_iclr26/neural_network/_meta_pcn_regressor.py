"""Meta-PCN regressor: predictive coding with a squared-error output energy."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.base import RegressorMixin, _fit_context
from sklearn.utils.validation import _check_sample_weight, validate_data

from sklearn_iclr26.neural_network._meta_pcn import (
    _ATTRIBUTES_DOC,
    _PARAMETERS_DOC,
    BaseMetaPCN,
)
from sklearn_iclr26.utils._torch import fit_or_restore

__all__ = ["MetaPCNRegressor"]


class MetaPCNRegressor(RegressorMixin, BaseMetaPCN):
    __doc__ = f"""Deep predictive-coding regressor with meta-prediction errors.

    Same network, inference and local learning as
    :class:`MetaPCNClassifier`; the output layer is clamped to the
    standardised targets with the energy ``1/2 ||t - mu_L||^2``. Multi-output
    ``y`` of shape (n_samples, n_outputs) is supported.

    Parameters
    ----------
    {_PARAMETERS_DOC}

    Attributes
    ----------
    {_ATTRIBUTES_DOC}

    See Also
    --------
    MetaPCNClassifier : The classification counterpart.
    TorchMLPRegressor : The same network trained by backpropagation.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn_iclr26.neural_network import MetaPCNRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> reg = MetaPCNRegressor(hidden_layer_sizes=(16, 16), max_iter=10,
    ...                        random_state=0).fit(X, y)
    >>> reg.predict(X[:3]).shape
    (3,)
    """

    @fit_or_restore
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the network by predictive coding.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (finite; standardise it first).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets (standardised internally).
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights of the weight updates.

        Returns
        -------
        self : object
            Fitted estimator.
        """
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
        return self._train(X, y_scaled, y_2d.shape[1], "se", sample_weight)

    def predict(self, X):
        """Predicted targets (feed-forward pass).

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
