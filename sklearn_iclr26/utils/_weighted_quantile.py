"""Weighted split-conformal quantile (the foundation shared by the families).

Under covariate shift (Tibshirani, Barber, Candès and Ramdas, NeurIPS 2019) a
test point ``x`` with likelihood ratio ``w(x)`` is covered at level ``1 - a``
by the threshold

    q(x) = Quantile(1 - a; sum_i p_i(x) delta_{s_i} + p_{n+1}(x) delta_{+inf}),

    p_i(x) = w_i / (sum_j w_j + w(x)),    p_{n+1}(x) = w(x) / (sum_j w_j + w(x)),

the smallest calibration score whose cumulative normalised weight reaches the
level, or ``+inf`` when the test point's own mass at ``+inf`` is needed. With
equal weights it is the ``ceil((n + 1)(1 - a))``-th smallest score: the
unweighted split-conformal threshold, exactly.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Real

import numpy as np

from sklearn_iclr26.utils._batching import batch_slices
from sklearn_iclr26.utils._sklearn_compat import Interval, validate_params

__all__ = ["weighted_conformal_quantile"]


def _levels(confidence_level):
    levels = np.atleast_1d(np.asarray(confidence_level, dtype=np.float64))
    if levels.ndim != 1 or levels.size == 0:
        raise ValueError("confidence_level must be a float or a 1-D sequence.")
    if not np.all((levels > 0) & (levels < 1)):
        raise ValueError(
            f"confidence_level must be in (0, 1), got {confidence_level!r}."
        )
    return levels


def _check_weights(weights, n, name):
    w = np.asarray(weights, dtype=np.float64).ravel()
    if n is not None and w.shape[0] != n:
        raise ValueError(f"{name} has {w.shape[0]} entries, expected {n}.")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"{name} must be finite and non-negative.")
    return w


@validate_params(
    {
        "scores": ["array-like"],
        "confidence_level": [Interval(Real, 0, 1, closed="neither"), "array-like"],
        "sample_weight": ["array-like", None],
        "test_weight": ["array-like", Interval(Real, 0, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def weighted_conformal_quantile(
    scores, confidence_level, *, sample_weight=None, test_weight=None
):
    """Weighted split-conformal threshold, with the test point's mass at +inf.

    With calibration weights ``w_i`` (likelihood ratios of the target
    population to the calibration population at the calibration rows) and a
    test point's weight ``w(x)``, the threshold is the smallest calibration
    score ``s`` with ``sum_{s_i <= s} w_i >= level * (sum_i w_i + w(x))``, or
    ``+inf`` when no score reaches it (Tibshirani, Barber, Candès and Ramdas,
    2019). If the weights are the true likelihood ratio ``dP_target /
    dP_calibration`` and the calibration rows are i.i.d., a test point drawn
    from the target population has ``P(s(X, Y) <= q(X)) >= level``. Equal
    weights give the unweighted split-conformal threshold exactly
    (:func:`~sklearn_iclr26.conformal.conformal_quantile`).

    Exact: one sort of the calibration scores, then a binary search per test
    point, in batches of test points sized by ``working_memory``.

    Parameters
    ----------
    scores : array-like of shape (n_calibration,)
        Conformity scores of the calibration rows (no NaN).
    confidence_level : float or array-like of shape (n_levels,)
        Target coverage(s) in (0, 1).
    sample_weight : array-like of shape (n_calibration,), default=None
        Non-negative calibration weights; ``None``: all 1.
    test_weight : float or array-like of shape (n_test,), default=None
        Non-negative weight of each test point; ``None``: 1 (a single test
        point of unit weight, the exchangeable case).

    Returns
    -------
    threshold : float or ndarray
        A float for a scalar ``test_weight`` and a scalar level; otherwise of
        shape ``(n_test,)``, ``(n_levels,)`` or ``(n_test, n_levels)``
        (a trailing level axis, as the package's other conformal outputs).

    Examples
    --------
    >>> from sklearn_iclr26.conformal import weighted_conformal_quantile
    >>> scores = [0.1, 0.2, 0.3, 0.4]
    >>> weighted_conformal_quantile(scores, 0.6)
    0.3
    >>> weighted_conformal_quantile(scores, 0.6, sample_weight=[4, 1, 1, 1])
    0.2
    >>> weighted_conformal_quantile(scores, 0.6, test_weight=[1.0, 10.0])
    array([0.3, inf])
    """
    levels = _levels(confidence_level)
    s = np.asarray(scores, dtype=np.float64).ravel()
    if np.isnan(s).any():
        raise ValueError("scores contain NaN.")
    n = s.shape[0]
    w = (
        np.ones(n)
        if sample_weight is None
        else _check_weights(sample_weight, n, "sample_weight")
    )
    scalar_test = test_weight is None or np.ndim(test_weight) == 0
    wt = _check_weights(
        1.0 if test_weight is None else test_weight, None, "test_weight"
    )
    # normalise by the largest calibration weight: equal weights become
    # exactly 1, so the cumulative sums are exact counts and the rule is the
    # unweighted ceil((n + 1) * level)-th score, bit for bit
    scale = w.max() if n and w.max() > 0 else 1.0
    w = w / scale
    wt = wt / scale
    order = np.argsort(s, kind="stable")
    sorted_scores = np.append(s[order], np.inf)
    cumulative = np.cumsum(w[order])
    total = cumulative[-1] if n else 0.0
    out = np.empty((wt.shape[0], levels.shape[0]))
    for rows in batch_slices(wt.shape[0], 8 * 4 * levels.shape[0]):
        need = (total + wt[rows, None]) * levels[None, :] - 1e-12
        idx = np.searchsorted(cumulative, need.ravel(), side="left")
        out[rows] = sorted_scores[idx].reshape(need.shape)
    if scalar_test:
        out = out[0]
        return float(out[0]) if np.ndim(confidence_level) == 0 else out
    return out[:, 0] if np.ndim(confidence_level) == 0 else out
