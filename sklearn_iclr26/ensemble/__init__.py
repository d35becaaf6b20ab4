"""Reusing trained modules: adaptive module composition (MoMa, ICLR 2026)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.ensemble._adaptive_composition_classifier import (
    AdaptiveCompositionClassifier,
)
from sklearn_iclr26.ensemble._adaptive_composition_regressor import (
    AdaptiveCompositionRegressor,
)
from sklearn_iclr26.ensemble._hub import ModuleHub
from sklearn_iclr26.ensemble._simplex import simplex_least_squares

__all__ = [
    "AdaptiveCompositionClassifier",
    "AdaptiveCompositionRegressor",
    "ModuleHub",
    "simplex_least_squares",
]
