"""Causal methods: confounded and spurious features, treatment effects."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.causal._prism import (
    BackdoorAdjustedClassifier,
    BackdoorAdjustedRegressor,
)
from sklearn_iclr26.causal._tabular_attention import (
    TabularAttentionClassifier,
    TabularAttentionRegressor,
)
from sklearn_iclr26.causal._two_key_attention import TwoKeyAttentionRegressor

__all__ = [
    "BackdoorAdjustedClassifier",
    "BackdoorAdjustedRegressor",
    "TabularAttentionClassifier",
    "TabularAttentionRegressor",
    "TwoKeyAttentionRegressor",
]
