"""sklearn-iclr26: scikit-learn estimators for methods from ICLR 2026 papers.

torch, skorch and LightGBM are imported lazily, inside the estimators that use
them, and the families themselves on first use (PEP 562): ``import
sklearn_iclr26`` loads no family, and ``from sklearn_iclr26 import
SOCOPClassifier`` loads the conformal family alone.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import importlib

__version__ = "0.1.0.dev0"

#: The public estimators and displays of each family, re-exported here and
#: imported on first access. A new public estimator or display goes into its
#: family's ``__all__`` and into its family's tuple below (one line);
#: ``tests/test_lazy_import.py`` checks that the two agree.
_FAMILY_EXPORTS = {
    "causal": (
        "BackdoorAdjustedClassifier",
        "BackdoorAdjustedRegressor",
        "CATEDisplay",
        "CausalForestRegressor",
        "ConformalITERegressor",
        "DRLearnerRegressor",
        "GeodesicCATERegressor",
        "RLearnerRegressor",
        "TabularAttentionClassifier",
        "TabularAttentionRegressor",
        "TLearnerRegressor",
        "TwoKeyAttentionRegressor",
        "XLearnerRegressor",
    ),
    "conformal": (
        "BonferroniBoxRegressor",
        "ConditionalCoverageDisplay",
        "ConformalizedQuantileRegressor",
        "ConformalPredictiveRegressor",
        "CVQRRegressor",
        "EllipsoidRegressor",
        "OTCPRegressor",
        "RegionDisplay",
        "SetSizeDisplay",
        "SOCOPClassifier",
        "SplitConformalClassifier",
        "VennAbersClassifier",
    ),
    "decomposition": ("SparseAutoencoder",),
    "deferral": (
        "ConfidenceThresholdDeferrer",
        "DeferralCurveDisplay",
        "RiskControlledDeferrer",
        "TopKDeferralRegressor",
        "TopKDeferrer",
    ),
    "ensemble": (
        "AdaptiveCompositionClassifier",
        "AdaptiveCompositionRegressor",
    ),
    "inference": (
        "MultiPPIMeanEstimator",
        "PerformanceMonitor",
        "PerformanceMonitorDisplay",
        "ResamplingUtilityEstimator",
    ),
    "label_noise": (
        "ClassConditionalNoiseCorrector",
        "InstanceNoiseCorrector",
        "LabelIssuesDisplay",
    ),
    "memorization": (
        "RandomLabelProbe",
        "RLPHeadClassifier",
        "SampleGradientMemorization",
    ),
    "metrics": ("RiskControlDisplay",),
    "nas": (
        "ArchitectureFrontierDisplay",
        "ConNASSearch",
        "PenaltyNASSearch",
        "RandomNASSearch",
    ),
    "neural_network": (
        "BayesianAugmentationClassifier",
        "BayesianAugmentationRegressor",
        "DiffusionInterestFusionClassifier",
        "InteractionSequenceEncoder",
        "MetaPCNClassifier",
        "MetaPCNRegressor",
        "TorchMLPClassifier",
        "TorchMLPRegressor",
    ),
    "ot": ("TreeSlicedEmbedding",),
    "risk_control": ("SelectiveClassifier",),
}

#: Public subpackages, reachable as attributes (``sklearn_iclr26.conformal``).
_SUBPACKAGES = (
    "causal",
    "compression",
    "conformal",
    "datasets",
    "decomposition",
    "deferral",
    "ensemble",
    "inference",
    "label_noise",
    "memorization",
    "metrics",
    "nas",
    "neural_network",
    "ot",
    "risk_control",
    "utils",
)

_NAME_TO_FAMILY = {
    name: family for family, names in _FAMILY_EXPORTS.items() for name in names
}

__all__ = [*sorted(_NAME_TO_FAMILY), "__version__"]  # noqa: PLE0604 (built from the map)


def __getattr__(name):
    family = _NAME_TO_FAMILY.get(name)
    if family is not None:
        value = getattr(importlib.import_module(f"{__name__}.{family}"), name)
        globals()[name] = value  # later lookups skip this function
        return value
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__) | set(_SUBPACKAGES))
