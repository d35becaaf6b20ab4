"""Neural-network estimators: torch modules trained through skorch."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.neural_network._bayes_aug import BayesianAugmentationClassifier
from sklearn_iclr26.neural_network._bayes_aug_regressor import (
    BayesianAugmentationRegressor,
)
from sklearn_iclr26.neural_network._ifusion import DiffusionInterestFusionClassifier
from sklearn_iclr26.neural_network._meta_pcn import MetaPCNClassifier
from sklearn_iclr26.neural_network._meta_pcn_regressor import MetaPCNRegressor
from sklearn_iclr26.neural_network._mlp_classifier import TorchMLPClassifier
from sklearn_iclr26.neural_network._mlp_regressor import TorchMLPRegressor

__all__ = [
    "BayesianAugmentationClassifier",
    "BayesianAugmentationRegressor",
    "DiffusionInterestFusionClassifier",
    "MetaPCNClassifier",
    "MetaPCNRegressor",
    "TorchMLPClassifier",
    "TorchMLPRegressor",
]
