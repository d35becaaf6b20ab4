"""OPTIMA-style Bayesian data augmentation for regression."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.neural_network._bayesian_augmentation import (
    BaseBayesianAugmentation,
)
from sklearn_iclr26.utils._torch_estimator import TorchRegressorMixin

__all__ = ["BayesianAugmentationRegressor"]


class BayesianAugmentationRegressor(TorchRegressorMixin, BaseBayesianAugmentation):
    """MLP regressor whose data augmentation is learned by an ELBO.

    Same method as :class:`BayesianAugmentationClassifier` with a
    unit-variance Gaussian likelihood on the standardised targets (mixup
    mixes the targets). Multi-output ``y`` is supported.

    Parameters
    ----------
    %(augmentation_parameters)s
    %(training_parameters)s

    Attributes
    ----------
    %(augmentation_attributes)s

    See Also
    --------
    BayesianAugmentationClassifier : The classification counterpart.
    TorchMLPRegressor : The same network without augmentation.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn_iclr26.neural_network import BayesianAugmentationRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> reg = BayesianAugmentationRegressor(max_iter=50, random_state=0).fit(X, y)
    >>> reg.predict(X[:3]).shape
    (3,)
    """
