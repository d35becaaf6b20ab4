"""Multi-layer perceptron classifier trained with torch through skorch."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.utils._torch_estimator import TorchClassifierMixin
from sklearn_iclr26.utils._torch_mlp import BaseTorchMLP

__all__ = ["TorchMLPClassifier"]


class TorchMLPClassifier(TorchClassifierMixin, BaseTorchMLP):
    """Multi-layer perceptron classifier trained with PyTorch through skorch.

    A scikit-learn estimator outside (plain hyperparameters, ``random_state``,
    validation, label encoding) with a skorch net inside (``net_``), built in
    :meth:`fit`. It is the network the package's meta-estimators wrap, e.g.
    :class:`~sklearn_iclr26.label_noise.InstanceNoiseCorrector`, which swaps its
    loss for a noise-corrected one.

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
    classes_ : ndarray of shape (n_classes,)
        Class labels seen during fit.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.
    %(training_attributes)s

    See Also
    --------
    TorchMLPRegressor : The regression counterpart.
    sklearn.neural_network.MLPClassifier : The numpy MLP of scikit-learn.

    Notes
    -----
    Protected entry points for the package's other families (documented in
    ``sklearn_iclr26/utils/_torch_estimator.py``):
    ``_fit_with_criterion`` fits with a given per-sample loss and auxiliary
    per-sample arrays, ``_raw_decision`` returns the logits. The label-noise
    correctors train the network with their corrected losses through them.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn_iclr26.neural_network import TorchMLPClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = TorchMLPClassifier(max_iter=100, random_state=0).fit(X, y)
    >>> print(round(clf.score(X, y), 2))
    0.99
    """
