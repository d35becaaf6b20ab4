"""Multi-layer perceptron regressor trained with torch through skorch."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.utils._torch_estimator import TorchRegressorMixin
from sklearn_iclr26.utils._torch_mlp import BaseTorchMLP

__all__ = ["TorchMLPRegressor"]


class TorchMLPRegressor(TorchRegressorMixin, BaseTorchMLP):
    """Multi-layer perceptron regressor trained with PyTorch through skorch.

    Same design as :class:`TorchMLPClassifier`. Targets are standardised
    internally; multi-output ``y`` of shape (n_samples, n_outputs) is supported.

    Parameters
    ----------
    hidden_layer_sizes : array-like of int, default=(32,)
        Width of each hidden layer; empty for a linear model.
    activation : {"relu", "tanh", "gelu"}, default="relu"
        Hidden-layer non-linearity.
    dropout : float in [0, 1), default=0.0
        Probability of zeroing a hidden unit (a ``Dropout`` layer after each
        hidden activation, active in training only); ``0`` adds no layer.
    %(training_parameters)s

    Attributes
    ----------
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.
    %(training_attributes)s

    See Also
    --------
    TorchMLPClassifier : The classification counterpart.
    sklearn.neural_network.MLPRegressor : The numpy MLP of scikit-learn.

    Notes
    -----
    Protected entry points for the package's other families:
    ``_fit_with_criterion`` and ``_raw_decision`` (documented in
    ``sklearn_iclr26/utils/_torch_estimator.py``).

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn_iclr26.neural_network import TorchMLPRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> reg = TorchMLPRegressor(max_iter=50, random_state=0).fit(X, y)
    >>> print(round(reg.score(X, y), 2))
    0.46
    """
