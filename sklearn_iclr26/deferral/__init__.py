"""Learning to defer to the top-k experts (Montreuil et al., ICLR 2026)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.deferral._confidence import ConfidenceThresholdDeferrer
from sklearn_iclr26.deferral._display import DeferralCurveDisplay
from sklearn_iclr26.deferral._risk_controlled import (
    RiskControlledDeferrer,
    UncertifiedRiskWarning,
)
from sklearn_iclr26.deferral._topk_classifier import TopKDeferrer
from sklearn_iclr26.deferral._topk_regressor import TopKDeferralRegressor

__all__ = [
    "ConfidenceThresholdDeferrer",
    "DeferralCurveDisplay",
    "RiskControlledDeferrer",
    "TopKDeferralRegressor",
    "TopKDeferrer",
    "UncertifiedRiskWarning",
]
