"""Statistical inference with imperfect predictors.

* :class:`MultiPPIMeanEstimator` and :func:`multippi_allocate`:
  multiple-prediction-powered inference (Cowen-Breen et al., ICLR 2026).
* :class:`PerformanceMonitor` and :class:`PerformanceMonitorDisplay`:
  prediction-powered monitoring of a deployed model's performance from a few
  gold labels (PPI++, anytime-valid confidence sequences, label suggestion).
* :class:`ResamplingUtilityEstimator` and :class:`TwoTypeResamplingModel`: the
  limits of inference scaling by resampling with an imperfect verifier
  (Stroebl et al., ICLR 2026).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.inference._allocate import multippi_allocate
from sklearn_iclr26.inference._multippi import MultiPPIMeanEstimator
from sklearn_iclr26.inference._performance_monitor import PerformanceMonitor
from sklearn_iclr26.inference._performance_monitor_display import (
    PerformanceMonitorDisplay,
)
from sklearn_iclr26.inference._resampling import ResamplingUtilityEstimator
from sklearn_iclr26.inference._two_type import TwoTypeResamplingModel

__all__ = [
    "MultiPPIMeanEstimator",
    "PerformanceMonitor",
    "PerformanceMonitorDisplay",
    "ResamplingUtilityEstimator",
    "TwoTypeResamplingModel",
    "multippi_allocate",
]
