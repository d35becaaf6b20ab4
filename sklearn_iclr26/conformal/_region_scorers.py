"""Scorers of the conformal regressors (merged into the family's ``SCORERS``).

Each is a :class:`~sklearn_iclr26.metrics.MethodScorer` ``(estimator, X, y)
-> float``, greater is better, at the estimator's own ``confidence_level``:

============================================  ====  =============================
name                                          sign  meant for
============================================  ====  =============================
``region_coverage``                           +1    checking validity; alone it
                                                    prefers the largest regions
``neg_region_log_volume``                     -1    efficiency; alone it prefers
                                                    the smallest (invalid) regions
``worst_slab_coverage``                       +1    conditional validity (numeric
                                                    ``X`` only)
``neg_region_log_volume_subject_to_coverage`` -1    **model selection**: the
                                                    volume, penalised when the
                                                    coverage falls below the level
============================================  ====  =============================

Volumes are the median of ``region_log_volume(X) / n_outputs_`` (the paper's
(log V)/d); ``-inf`` when the regions are the whole space.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np
from sklearn.utils.validation import check_array

from sklearn_iclr26.metrics import (
    MethodScorer,
    log_volume_per_dimension,
    region_coverage_score,
    worst_slab_coverage_score,
)

__all__ = ["REGION_SCORERS"]

# penalty per unit of coverage shortfall (in (log V)/d units): a shortfall of
# 0.01 beyond the tolerance costs 1 nat per dimension, more than any sensible
# volume gain
_PENALTY = 100.0


def region_coverage(estimator, X, y):
    """Fraction of ``(x, y)`` inside their region."""
    return region_coverage_score(estimator.contains(X, y))


def region_log_volume(estimator, X, y):
    """Median (log V)/d of the regions at the rows of ``X``."""
    return log_volume_per_dimension(
        estimator.region_log_volume(X), estimator.n_outputs_
    )


def worst_slab_coverage(estimator, X, y, *, n_directions=100, random_state=0):
    """Worst-slab coverage over random directions of (numeric) ``X``."""
    X_num = check_array(X, dtype=np.float64)
    X_num = (X_num - X_num.mean(axis=0)) / np.maximum(X_num.std(axis=0), 1e-12)
    return worst_slab_coverage_score(
        X_num,
        estimator.contains(X, y),
        n_directions=n_directions,
        random_state=random_state,
    )


def region_log_volume_subject_to_coverage(estimator, X, y):
    """Median (log V)/d plus a penalty for coverage below the level.

    The penalty is ``100 * max(0, level - coverage - 2 se)`` with
    ``se = sqrt(level (1 - level) / n)`` the standard error of the coverage of
    ``n`` test points: a valid estimator is not penalised for sampling noise.
    """
    level = estimator.confidence_level
    coverage = region_coverage_score(estimator.contains(X, y))
    n = len(y)
    tolerance = 2 * math.sqrt(level * (1 - level) / n)
    shortfall = max(0.0, level - coverage - tolerance)
    return region_log_volume(estimator, X, y) + _PENALTY * shortfall


REGION_SCORERS = {
    "region_coverage": MethodScorer(region_coverage, sign=1, name="region_coverage"),
    "neg_region_log_volume": MethodScorer(
        region_log_volume, sign=-1, name="neg_region_log_volume"
    ),
    "worst_slab_coverage": MethodScorer(
        worst_slab_coverage, sign=1, name="worst_slab_coverage"
    ),
    "neg_region_log_volume_subject_to_coverage": MethodScorer(
        region_log_volume_subject_to_coverage,
        sign=-1,
        name="neg_region_log_volume_subject_to_coverage",
    ),
}
