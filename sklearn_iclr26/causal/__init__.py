"""Causal methods: confounded and spurious features, treatment effects."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.causal._prism import (
    BackdoorAdjustedClassifier,
    BackdoorAdjustedRegressor,
)

__all__ = [
    "BackdoorAdjustedClassifier",
    "BackdoorAdjustedRegressor",
]
