"""Meta-PCN regressor: predictive coding with a squared-error output energy."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.neural_network._meta_pcn import BaseMetaPCN
from sklearn_iclr26.utils._torch_estimator import TorchRegressorMixin

__all__ = ["MetaPCNRegressor"]


class MetaPCNRegressor(TorchRegressorMixin, BaseMetaPCN):
    """Deep predictive-coding regressor with meta-prediction errors.

    Same network, inference and local learning as
    :class:`MetaPCNClassifier`; the output layer is clamped to the
    standardised targets with the energy ``1/2 ||t - mu_L||^2``. Multi-output
    ``y`` of shape (n_samples, n_outputs) is supported.

    Parameters
    ----------
    %(meta_pcn_parameters)s
    %(training_parameters)s

    Attributes
    ----------
    %(meta_pcn_attributes)s

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
