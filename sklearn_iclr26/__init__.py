"""sklearn-iclr26: scikit-learn estimators for methods from ICLR 2026 papers.

torch, skorch and LightGBM are imported lazily, inside the estimators that use
them, so importing the package is fast.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.causal import (
    BackdoorAdjustedClassifier,
    BackdoorAdjustedRegressor,
    CATEDisplay,
    ConformalITERegressor,
    GeodesicCATERegressor,
    TabularAttentionClassifier,
    TabularAttentionRegressor,
    TLearnerRegressor,
    TwoKeyAttentionRegressor,
    XLearnerRegressor,
)
from sklearn_iclr26.conformal import (
    BonferroniBoxRegressor,
    ConditionalCoverageDisplay,
    ConformalizedQuantileRegressor,
    CVQRRegressor,
    EllipsoidRegressor,
    OTCPRegressor,
    RegionDisplay,
    SetSizeDisplay,
    SOCOPClassifier,
    SplitConformalClassifier,
)
from sklearn_iclr26.decomposition import SparseAutoencoder
from sklearn_iclr26.deferral import (
    ConfidenceThresholdDeferrer,
    DeferralCurveDisplay,
    TopKDeferralRegressor,
    TopKDeferrer,
)
from sklearn_iclr26.ensemble import (
    AdaptiveCompositionClassifier,
    AdaptiveCompositionRegressor,
)
from sklearn_iclr26.inference import (
    MultiPPIMeanEstimator,
    PerformanceMonitor,
    PerformanceMonitorDisplay,
    ResamplingUtilityEstimator,
)
from sklearn_iclr26.label_noise import (
    ClassConditionalNoiseCorrector,
    InstanceNoiseCorrector,
    LabelIssuesDisplay,
)
from sklearn_iclr26.memorization import (
    RandomLabelProbe,
    RLPHeadClassifier,
    SampleGradientMemorization,
)
from sklearn_iclr26.nas import (
    ArchitectureFrontierDisplay,
    ConNASSearch,
    PenaltyNASSearch,
    RandomNASSearch,
)
from sklearn_iclr26.neural_network import (
    BayesianAugmentationClassifier,
    BayesianAugmentationRegressor,
    DiffusionInterestFusionClassifier,
    InteractionSequenceEncoder,
    MetaPCNClassifier,
    MetaPCNRegressor,
    TorchMLPClassifier,
    TorchMLPRegressor,
)
from sklearn_iclr26.ot import TreeSlicedEmbedding

__version__ = "0.1.0.dev0"

__all__ = [
    "AdaptiveCompositionClassifier",
    "AdaptiveCompositionRegressor",
    "ArchitectureFrontierDisplay",
    "BackdoorAdjustedClassifier",
    "BackdoorAdjustedRegressor",
    "BayesianAugmentationClassifier",
    "BayesianAugmentationRegressor",
    "BonferroniBoxRegressor",
    "CATEDisplay",
    "CVQRRegressor",
    "ClassConditionalNoiseCorrector",
    "ConNASSearch",
    "ConditionalCoverageDisplay",
    "ConfidenceThresholdDeferrer",
    "ConformalITERegressor",
    "ConformalizedQuantileRegressor",
    "DeferralCurveDisplay",
    "DiffusionInterestFusionClassifier",
    "EllipsoidRegressor",
    "GeodesicCATERegressor",
    "InstanceNoiseCorrector",
    "InteractionSequenceEncoder",
    "LabelIssuesDisplay",
    "MetaPCNClassifier",
    "MetaPCNRegressor",
    "MultiPPIMeanEstimator",
    "OTCPRegressor",
    "PenaltyNASSearch",
    "PerformanceMonitor",
    "PerformanceMonitorDisplay",
    "RLPHeadClassifier",
    "RandomLabelProbe",
    "RandomNASSearch",
    "RegionDisplay",
    "ResamplingUtilityEstimator",
    "SOCOPClassifier",
    "SampleGradientMemorization",
    "SetSizeDisplay",
    "SparseAutoencoder",
    "SplitConformalClassifier",
    "TLearnerRegressor",
    "TabularAttentionClassifier",
    "TabularAttentionRegressor",
    "TopKDeferralRegressor",
    "TopKDeferrer",
    "TorchMLPClassifier",
    "TorchMLPRegressor",
    "TreeSlicedEmbedding",
    "TwoKeyAttentionRegressor",
    "XLearnerRegressor",
    "__version__",
]
