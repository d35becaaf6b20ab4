"""Smoothed online conformal p-values (shared by the exchangeability tests)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import bisect

import numpy as np
from sklearn.utils import check_random_state

from sklearn_iclr26.utils._sklearn_compat import validate_params

__all__ = ["online_p_values"]


@validate_params(
    {
        "scores": ["array-like"],
        "reference_scores": ["array-like", None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def online_p_values(scores, *, reference_scores=None, random_state=None):
    """Smoothed online conformal p-values of a stream of nonconformity scores.

    The p-value of score ``s_t`` is ``(#{s > s_t} + tau_t (#{s = s_t} + 1))
    / (m + 1)`` over the ``m`` scores before it: the ``reference_scores``
    (e.g. a fitted conformal estimator's ``calibration_scores_``) and the
    stream's earlier scores; ``tau_t`` are independent uniforms. If the
    reference rows and the stream are exchangeable, the p-values are
    independent and uniform on (0, 1) (Vovk, Gammerman and Shafer,
    *Algorithmic Learning in a Random World*, 2005, Theorem 8.2): the input a
    conformal test martingale needs. Without reference they equal crepes'
    ``semi_online_p_values(scores, seed)`` for the same seed.

    Parameters
    ----------
    scores : array-like of shape (n_scores,)
        Nonconformity scores in stream order (larger: stranger).
    reference_scores : array-like of shape (n_reference,), default=None
        Scores that come before the stream, in any order.
    random_state : int, RandomState instance or None, default=None
        The draws of ``tau`` (``n_scores`` uniforms, in stream order).

    Returns
    -------
    p_values : ndarray of shape (n_scores,)
        The p-values, in (0, 1].

    Examples
    --------
    >>> from sklearn_iclr26.conformal import online_p_values
    >>> online_p_values([0.3, 0.1, 0.5], random_state=0).round(3)
    array([0.549, 0.858, 0.201])
    """
    scores = np.asarray(scores, dtype=np.float64).ravel()
    if np.isnan(scores).any():
        raise ValueError("scores contains NaN.")
    tau = check_random_state(random_state).uniform(size=scores.shape[0])
    seen = []
    if reference_scores is not None:
        reference = np.asarray(reference_scores, dtype=np.float64).ravel()
        if np.isnan(reference).any():
            raise ValueError("reference_scores contains NaN.")
        seen = sorted(reference.tolist())
    out = np.empty(scores.shape[0])
    for t, s in enumerate(scores.tolist()):
        m = len(seen)
        below_or_equal = bisect.bisect_right(seen, s)
        below = bisect.bisect_left(seen, s)
        greater, equal = m - below_or_equal, below_or_equal - below
        out[t] = (greater + tau[t] * (equal + 1)) / (m + 1)
        bisect.insort(seen, s)
    return out
