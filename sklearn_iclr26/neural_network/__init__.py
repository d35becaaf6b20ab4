"""Neural-network estimators: torch modules trained through skorch."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.neural_network._bayesian_augmentation_classifier import (
    BayesianAugmentationClassifier,
)
from sklearn_iclr26.neural_network._bayesian_augmentation_regressor import (
    BayesianAugmentationRegressor,
)
from sklearn_iclr26.neural_network._interaction_sequence_encoder import (
    InteractionSequenceEncoder,
)
from sklearn_iclr26.neural_network._interest_fusion import (
    DiffusionInterestFusionClassifier,
)
from sklearn_iclr26.neural_network._meta_pcn_classifier import MetaPCNClassifier
from sklearn_iclr26.neural_network._meta_pcn_regressor import MetaPCNRegressor
from sklearn_iclr26.utils._torch_mlp_classifier import TorchMLPClassifier
from sklearn_iclr26.utils._torch_mlp_regressor import TorchMLPRegressor

__all__ = [
    "BayesianAugmentationClassifier",
    "BayesianAugmentationRegressor",
    "DiffusionInterestFusionClassifier",
    "InteractionSequenceEncoder",
    "MetaPCNClassifier",
    "MetaPCNRegressor",
    "TorchMLPClassifier",
    "TorchMLPRegressor",
]
