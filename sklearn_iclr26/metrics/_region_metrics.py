"""Metrics for multivariate conformal regions: coverage, worst-slab coverage, volume."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, check_consistent_length

from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, validate_params

__all__ = [
    "interval_coverage_score",
    "log_volume_per_dimension",
    "mean_interval_width",
    "region_coverage_score",
    "worst_slab_coverage_score",
]


def _check_covered(covered):
    covered = np.asarray(covered)
    if covered.ndim != 1:
        raise ValueError(f"covered must be 1-dimensional, got shape {covered.shape}.")
    if covered.shape[0] == 0:
        raise ValueError("covered is empty.")
    return covered.astype(np.float64)


@validate_params({"covered": ["array-like"]}, prefer_skip_nested_validation=True)
def region_coverage_score(covered):
    """Marginal coverage: the fraction of test responses inside their region.

    Parameters
    ----------
    covered : array-like of shape (n_samples,)
        Boolean membership of each test response in its region, e.g. the
        output of ``CVQRRegressor.contains(X_test, Y_test)`` (for several
        levels, take ``contains(...).mean(axis=0)``, one column per level).

    Returns
    -------
    coverage : float
        Mean of ``covered``.

    Examples
    --------
    >>> from sklearn_iclr26.metrics import region_coverage_score
    >>> region_coverage_score([True, True, False, True])
    0.75
    """
    return float(np.mean(_check_covered(covered)))


def _check_intervals(intervals):
    intervals = check_array(
        intervals, ensure_2d=False, allow_nd=True, ensure_all_finite=False
    )
    if intervals.ndim not in (2, 3) or intervals.shape[1] != 2:
        raise ValueError(
            "intervals must have shape (n_samples, 2) or (n_samples, 2, n_levels) "
            f"(lower, upper), got {intervals.shape}."
        )
    if np.isnan(intervals).any():
        raise ValueError("intervals contain NaN.")
    return intervals


@validate_params(
    {"y_true": ["array-like"], "intervals": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def interval_coverage_score(y_true, intervals):
    """Fraction of test responses inside their prediction interval.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Test responses.
    intervals : array-like of shape (n_samples, 2) or (n_samples, 2, n_levels)
        Lower and upper bounds, e.g. the output of ``predict_interval``
        (closed intervals; infinite bounds allowed).

    Returns
    -------
    coverage : float or ndarray of shape (n_levels,)
        Coverage (per level for three-dimensional ``intervals``).

    Examples
    --------
    >>> from sklearn_iclr26.metrics import interval_coverage_score
    >>> interval_coverage_score([0.5, 2.0], [[0.0, 1.0], [0.0, 1.0]])
    0.5
    """
    intervals = _check_intervals(intervals)
    y = check_array(y_true, ensure_2d=False, input_name="y_true").ravel()
    check_consistent_length(y, intervals)
    y = y.reshape((-1,) + (1,) * (intervals.ndim - 2))
    covered = (intervals[:, 0] <= y) & (y <= intervals[:, 1])
    if covered.ndim == 2:
        return covered.mean(axis=0)
    return float(np.mean(covered))


@validate_params({"intervals": ["array-like"]}, prefer_skip_nested_validation=True)
def mean_interval_width(intervals):
    """Mean width ``upper - lower`` of prediction intervals.

    Parameters
    ----------
    intervals : array-like of shape (n_samples, 2) or (n_samples, 2, n_levels)
        Lower and upper bounds, e.g. the output of ``predict_interval``.
        Crossed bounds (an empty CQR interval) count as width 0.

    Returns
    -------
    width : float or ndarray of shape (n_levels,)
        Mean width (``inf`` if any interval is unbounded; per level for
        three-dimensional ``intervals``).

    Examples
    --------
    >>> from sklearn_iclr26.metrics import mean_interval_width
    >>> mean_interval_width([[0.0, 1.0], [1.0, 4.0]])
    2.0
    """
    intervals = _check_intervals(intervals)
    width = np.maximum(intervals[:, 1] - intervals[:, 0], 0.0).mean(axis=0)
    return float(width) if np.ndim(width) == 0 else width


@validate_params(
    {
        "X": ["array-like"],
        "covered": ["array-like"],
        "delta": [Interval(Real, 0, 1, closed="right")],
        "n_directions": [Interval(Integral, 1, None, closed="left")],
        "test_size": [Interval(Real, 0, 1, closed="neither")],
        "n_starts": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def worst_slab_coverage_score(
    X,
    covered,
    *,
    delta=0.1,
    n_directions=1000,
    test_size=0.5,
    n_starts=100,
    random_state=None,
):
    """Worst-slab coverage (Cauchois et al., 2021), estimated without bias.

    Draws ``n_directions`` random unit directions ``v`` in feature space. On
    one part of the test set, for each ``v``, it searches the slab
    ``{x : a <= <v, x> <= b}`` holding at least a fraction ``delta`` of the
    points with the lowest coverage; the overall worst slab is then measured
    on the other part (``test_size``), so that the search does not bias the
    estimate downwards.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Test covariates (standardize them first if their scales differ).
    covered : array-like of shape (n_samples,)
        Boolean membership of each test response in its region.
    delta : float, default=0.1
        Minimal fraction of points in a slab.
    n_directions : int, default=1000
        Number of random directions.
    test_size : float, default=0.5
        Fraction of the points on which the chosen slab is measured.
    n_starts : int, default=100
        Number of candidate lower slab edges (quantiles of ``<v, x>``); the
        upper edge is searched over all points.
    random_state : int, RandomState instance or None, default=None
        Seeds the directions and the split.

    Returns
    -------
    coverage : float
        Coverage inside the worst slab, measured on the held-out part (NaN if
        that slab holds no held-out point).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.metrics import (
    ...     region_coverage_score, worst_slab_coverage_score)
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(1000, 2))
    >>> covered = rng.uniform(size=1000) < np.where(X[:, 0] > 1, 0.5, 0.95)
    >>> region_coverage_score(covered) > 0.85
    True
    >>> worst_slab_coverage_score(X, covered, random_state=0) < 0.7
    True
    """
    X = check_array(X, dtype=np.float64)
    covered = _check_covered(covered)
    check_consistent_length(X, covered)
    rng = check_random_state(random_state)
    n, p = X.shape
    perm = rng.permutation(n)
    n_eval = round(test_size * n)
    if n_eval < 1 or n - n_eval < 2:
        raise ValueError(f"Too few samples ({n}) to split for worst-slab coverage.")
    fit_idx, eval_idx = perm[n_eval:], perm[:n_eval]
    Xf, cf = X[fit_idx], covered[fit_idx]
    m = Xf.shape[0]
    min_size = max(1, int(np.ceil(delta * m)))
    V = rng.normal(size=(n_directions, p))
    V /= np.maximum(np.linalg.norm(V, axis=1, keepdims=True), 1e-300)
    best = (np.inf, None, -np.inf, np.inf)
    starts = np.unique(np.linspace(0, m - min_size, min(n_starts, m)).astype(int))
    ends = np.arange(m)
    for v in V:
        z = Xf @ v
        order = np.argsort(z, kind="stable")
        zs, cs = z[order], cf[order]
        cum = np.concatenate([[0.0], np.cumsum(cs)])
        # coverage of the slab [start, end] for every start (rows) and end
        counts = ends[None, :] - starts[:, None] + 1
        sums = cum[ends[None, :] + 1] - cum[starts[:, None]]
        with np.errstate(divide="ignore", invalid="ignore"):
            cov = np.where(counts >= min_size, sums / counts, np.inf)
        i, j = np.unravel_index(np.argmin(cov), cov.shape)
        if cov[i, j] < best[0]:
            best = (cov[i, j], v, zs[starts[i]], zs[j])
    _, v, a, b = best
    z_eval = X[eval_idx] @ v
    inside = (z_eval >= a) & (z_eval <= b)
    if not np.any(inside):
        return float("nan")
    return float(np.mean(covered[eval_idx][inside]))


@validate_params(
    {
        "log_volume": ["array-like"],
        "n_outputs": [Interval(Integral, 1, None, closed="left")],
        "aggregate": [StrOptions({"median", "mean", "none"})],
    },
    prefer_skip_nested_validation=True,
)
def log_volume_per_dimension(log_volume, n_outputs, *, aggregate="median"):
    """The paper's efficiency metric (log V)/d.

    Parameters
    ----------
    log_volume : array-like of shape (n_samples,)
        Natural log-volumes of the regions, e.g. ``region_log_volume(X_test)``.
    n_outputs : int
        Dimension ``d`` of the response.
    aggregate : {"median", "mean", "none"}, default="median"
        How to aggregate over test points (``"none"`` returns the array).

    Returns
    -------
    value : float or ndarray of shape (n_samples,)
        ``log_volume / d``, aggregated.

    Examples
    --------
    >>> from sklearn_iclr26.metrics import log_volume_per_dimension
    >>> log_volume_per_dimension([0.0, 2.0, 4.0], 2)
    1.0
    """
    values = np.asarray(log_volume, dtype=np.float64).ravel() / n_outputs
    if aggregate == "none":
        return values
    if values.size == 0:
        raise ValueError("log_volume is empty.")
    return float(np.median(values) if aggregate == "median" else np.mean(values))
