"""The result of a permutation two-sample test."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from dataclasses import dataclass

import numpy as np

__all__ = ["TwoSampleTestResult"]


@dataclass(frozen=True)
class TwoSampleTestResult:
    """Result of a permutation two-sample test, as ``scipy.stats.permutation_test``.

    Attributes
    ----------
    statistic : float
        The distance between the two samples.
    pvalue : float
        ``(1 + #{null >= statistic}) / (1 + n_permutations)``: a valid p-value
        (``P(pvalue <= level) <= level`` under exchangeability).
    null_distribution : ndarray of shape (n_permutations,)
        The statistic on each permutation of the pooled sample.
    method : str
        The statistic used.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.ot import tree_sliced_two_sample_test
    >>> rng = np.random.RandomState(0)
    >>> res = tree_sliced_two_sample_test(
    ...     rng.normal(size=(40, 2)), rng.normal(size=(40, 2)) + 1.0,
    ...     n_permutations=99, n_trees=20, random_state=0)
    >>> res.pvalue
    0.01
    """

    statistic: float
    pvalue: float
    null_distribution: np.ndarray
    method: str
