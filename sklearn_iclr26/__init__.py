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
    CausalForestRegressor,
    ConformalITERegressor,
    DRLearnerRegressor,
    GeodesicCATERegressor,
    RLearnerRegressor,
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
    ConformalPredictiveRegressor,
    CVQRRegressor,
    EllipsoidRegressor,
    OTCPRegressor,
    RegionDisplay,
    SetSizeDisplay,
    SOCOPClassifier,
    SplitConformalClassifier,
    VennAbersClassifier,
)
from sklearn_iclr26.decomposition import SparseAutoencoder
from sklearn_iclr26.deferral import (
    ConfidenceThresholdDeferrer,
    DeferralCurveDisplay,
    RiskControlledDeferrer,
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
from sklearn_iclr26.metrics import RiskControlDisplay
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
from sklearn_iclr26.risk_control import SelectiveClassifier

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
    "CausalForestRegressor",
    "ClassConditionalNoiseCorrector",
    "ConNASSearch",
    "ConditionalCoverageDisplay",
    "ConfidenceThresholdDeferrer",
    "ConformalITERegressor",
    "ConformalPredictiveRegressor",
    "ConformalizedQuantileRegressor",
    "DRLearnerRegressor",
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
    "RLearnerRegressor",
    "RandomLabelProbe",
    "RandomNASSearch",
    "RegionDisplay",
    "ResamplingUtilityEstimator",
    "RiskControlDisplay",
    "RiskControlledDeferrer",
    "SOCOPClassifier",
    "SampleGradientMemorization",
    "SelectiveClassifier",
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
    "VennAbersClassifier",
    "XLearnerRegressor",
    "__version__",
]
