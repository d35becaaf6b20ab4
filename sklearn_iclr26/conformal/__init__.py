"""Conformal prediction: sets for classification, regions for regression."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.conformal._box_region import BonferroniBoxRegressor
from sklearn_iclr26.conformal._conformity_scores import (
    SCORE_NAMES,
    aps_scores,
    conformal_quantile,
    conformity_scores,
    lac_scores,
    lac_sets,
    margin_scores,
    raps_scores,
    socop_scores,
    socop_sets,
    top_k_scores,
)
from sklearn_iclr26.conformal._coverage_display import ConditionalCoverageDisplay
from sklearn_iclr26.conformal._cqr import ConformalizedQuantileRegressor
from sklearn_iclr26.conformal._cvqr import CVQRRegressor
from sklearn_iclr26.conformal._ellipsoid_region import EllipsoidRegressor
from sklearn_iclr26.conformal._martingale import ExchangeabilityMartingale
from sklearn_iclr26.conformal._otcp import OTCPRegressor
from sklearn_iclr26.conformal._predictive_system import ConformalPredictiveRegressor
from sklearn_iclr26.conformal._region_display import RegionDisplay
from sklearn_iclr26.conformal._score_objects import (
    APSScore,
    BaseClassificationScore,
    LACScore,
    MarginScore,
    RAPSScore,
    SOCOPScore,
    TopKScore,
)
from sklearn_iclr26.conformal._set_size_display import SetSizeDisplay
from sklearn_iclr26.conformal._socop import SOCOPClassifier
from sklearn_iclr26.conformal._split_classifier import SplitConformalClassifier
from sklearn_iclr26.conformal._venn_abers import VennAbersClassifier
from sklearn_iclr26.utils._p_values import online_p_values
from sklearn_iclr26.utils._weighted_quantile import weighted_conformal_quantile

__all__ = [
    "SCORE_NAMES",
    "APSScore",
    "BaseClassificationScore",
    "BonferroniBoxRegressor",
    "CVQRRegressor",
    "ConditionalCoverageDisplay",
    "ConformalPredictiveRegressor",
    "ConformalizedQuantileRegressor",
    "EllipsoidRegressor",
    "ExchangeabilityMartingale",
    "LACScore",
    "MarginScore",
    "OTCPRegressor",
    "RAPSScore",
    "RegionDisplay",
    "SOCOPClassifier",
    "SOCOPScore",
    "SetSizeDisplay",
    "SplitConformalClassifier",
    "TopKScore",
    "VennAbersClassifier",
    "aps_scores",
    "conformal_quantile",
    "conformity_scores",
    "lac_scores",
    "lac_sets",
    "margin_scores",
    "online_p_values",
    "raps_scores",
    "socop_scores",
    "socop_sets",
    "top_k_scores",
    "weighted_conformal_quantile",
]
