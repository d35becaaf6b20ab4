"""Metrics for conformal prediction sets and regions."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.metrics._set_metrics import (
    coverage_score,
    mean_set_size,
    multiple_prediction_rate,
    set_size_stratified_coverage_violation,
    singleton_rate,
)

__all__ = [
    "coverage_score",
    "mean_set_size",
    "multiple_prediction_rate",
    "set_size_stratified_coverage_violation",
    "singleton_rate",
]
