"""Geometric median (Fermat-Weber point) by Weiszfeld's algorithm."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.utils.validation import check_array

from sklearn_iclr26.utils._sklearn_compat import Interval, validate_params

__all__ = ["geometric_median"]


def _check_point_weights(weights, n, name="weights"):
    """Non-negative weights of length ``n`` with a positive sum (not normalized)."""
    if weights is None:
        return np.full(n, 1.0 / n)
    weights = check_array(
        weights, ensure_2d=False, dtype=np.float64, input_name=name
    ).ravel()
    if weights.shape[0] != n:
        raise ValueError(
            f"{name} has {weights.shape[0]} entries but there are {n} points."
        )
    if np.any(weights < 0):
        raise ValueError(f"{name} must be non-negative.")
    if not weights.sum() > 0:
        raise ValueError(f"{name} must have a positive sum.")
    return weights


@validate_params(
    {
        "Z": ["array-like"],
        "weights": ["array-like", None],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def geometric_median(Z, *, weights=None, tol=1e-7, max_iter=100):
    """Geometric median (Fermat-Weber point) of weighted points, by Weiszfeld.

    Minimises ``sum_j weights[j] * ||z - Z[j]||`` over ``z``. Weiszfeld's
    fixed-point iteration starts from the weighted mean; an iterate that lands
    on a data point is handled by the Vardi-Zhang modification (the point's own
    weight enters as a pull towards staying there), so the iteration never
    divides by zero and converges to the exact median, also when the median is
    a data point. The iteration is translation- and rotation-equivariant.

    Parameters
    ----------
    Z : array-like of shape (n_points, n_features)
        The points; a 1-D array is read as points on the line.
    weights : array-like of shape (n_points,), default=None
        Non-negative weights with a positive sum (they need not sum to one);
        ``None`` gives uniform weights.
    tol : float, default=1e-7
        Stop when an iteration moves the iterate by less than ``tol`` times
        the weighted mean distance of the points to their mean (a scale that
        moves with the data, so the result is exactly equivariant).
    max_iter : int, default=100
        Maximum number of Weiszfeld iterations.

    Returns
    -------
    median : ndarray of shape (n_features,)
        The geometric median.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.ot import geometric_median
    >>> Z = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [10.0, 10.0]])
    >>> geometric_median(Z).round(3)
    array([0.5, 0.5])
    """
    Z = check_array(Z, ensure_2d=False, dtype=np.float64, input_name="Z")
    if Z.ndim == 1:
        Z = Z[:, None]
    if Z.ndim != 2 or Z.shape[0] == 0:
        raise ValueError("Z must be a non-empty 2-D array of points.")
    w = _check_point_weights(weights, Z.shape[0])
    w = w / w.sum()
    y = w @ Z
    # a translation- and rotation-invariant length scale: the stopping rule
    # (and so the result) is equivariant, as the median itself
    scale = w @ np.linalg.norm(Z - y, axis=1)
    if scale == 0:  # all points coincide
        return y
    for _ in range(max_iter):
        diff = Z - y
        dist = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        at = dist <= 1e-13 * scale
        inv = np.where(at, 0.0, w / np.where(at, 1.0, dist))
        if not inv.sum() > 0:  # every point coincides with y
            return y
        T = inv @ Z / inv.sum()
        eta = w[at].sum()
        if eta > 0:  # Vardi-Zhang: y is a data point
            r = np.linalg.norm(inv @ diff)
            gamma = 1.0 if r == 0 else min(1.0, eta / r)
            y_new = (1.0 - gamma) * T + gamma * y
        else:
            y_new = T
        step = np.linalg.norm(y_new - y)
        y = y_new
        if step <= tol * scale:
            break
    return y
