"""Metrics and scorers: conformal sets and regions, and the scorer registry."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.metrics._calibration_metrics import expected_calibration_error
from sklearn_iclr26.metrics._identifiability import (
    concept_identifiability_score,
    counterfactual_identifiability_check,
    linear_identifiability_check,
)
from sklearn_iclr26.metrics._rank_diagnostics import rank_calibration
from sklearn_iclr26.metrics._region_metrics import (
    interval_coverage_score,
    log_volume_per_dimension,
    mean_interval_width,
    region_coverage_score,
    worst_slab_coverage_score,
)
from sklearn_iclr26.metrics._risk_control_display import RiskControlDisplay
from sklearn_iclr26.metrics._scorers import MethodScorer, get_scorer, get_scorer_names
from sklearn_iclr26.metrics._set_metrics import (
    conditional_coverage_score,
    coverage_score,
    mean_set_size,
    multiple_prediction_rate,
    set_size_stratified_coverage_violation,
    singleton_rate,
)
from sklearn_iclr26.utils._risk_control import (
    conformal_risk_control,
    fwer_control,
    hoeffding_bentkus_p_values,
    learn_then_test,
    wsr_p_values,
)

__all__ = [
    "MethodScorer",
    "RiskControlDisplay",
    "concept_identifiability_score",
    "conditional_coverage_score",
    "conformal_risk_control",
    "counterfactual_identifiability_check",
    "coverage_score",
    "expected_calibration_error",
    "fwer_control",
    "get_scorer",
    "get_scorer_names",
    "hoeffding_bentkus_p_values",
    "interval_coverage_score",
    "learn_then_test",
    "linear_identifiability_check",
    "log_volume_per_dimension",
    "mean_interval_width",
    "mean_set_size",
    "multiple_prediction_rate",
    "rank_calibration",
    "region_coverage_score",
    "set_size_stratified_coverage_violation",
    "singleton_rate",
    "worst_slab_coverage_score",
    "wsr_p_values",
]
