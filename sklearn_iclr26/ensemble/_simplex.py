"""Least squares over the probability simplex (the MoMa weight solve)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np

from sklearn_iclr26.utils._sklearn_compat import Interval, validate_params

__all__ = ["simplex_least_squares"]


def _kkt_solve(Q, c, support):
    """Minimise 0.5 w'Qw - c'w on ``support`` subject to sum(w) = 1.

    Returns the weights on the support (least-norm solution of the KKT system
    when ``Q`` is singular there).
    """
    s = len(support)
    kkt = np.zeros((s + 1, s + 1))
    kkt[:s, :s] = Q[np.ix_(support, support)]
    kkt[:s, s] = 1.0
    kkt[s, :s] = 1.0
    rhs = np.append(c[support], 1.0)
    sol = np.linalg.lstsq(kkt, rhs, rcond=None)[0]
    return sol[:s]


@validate_params(
    {
        "predictions": ["array-like"],
        "y": ["array-like"],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def simplex_least_squares(predictions, y, *, max_iter=None):
    """Least squares with weights on the probability simplex.

    Solves ``min_w ||predictions @ w - y||^2`` subject to ``w >= 0`` and
    ``sum(w) = 1`` exactly, by a primal active-set method (a convex quadratic
    programme over ``n_predictors`` weights). This is the weight solve of MoMa's
    adaptive module composition with the released setting (no cardinality
    limit): each column of ``predictions`` is one module's proxy prediction.
    Normalising a non-negative least-squares solution is *not* this optimum.

    Parameters
    ----------
    predictions : array-like of shape (n_samples, n_predictors) or \
            (n_samples, n_outputs, n_predictors)
        Predictions of each predictor (last axis). A 3-d array (multi-output or
        one-hot class scores) is flattened over samples and outputs.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Target.
    max_iter : int, default=None
        Maximum number of active-set iterations; ``None`` means
        ``10 * n_predictors + 10`` (the method terminates in finitely many).

    Returns
    -------
    weights : ndarray of shape (n_predictors,)
        Non-negative weights summing to one.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.ensemble import simplex_least_squares
    >>> rng = np.random.RandomState(0)
    >>> P = rng.normal(size=(50, 3))
    >>> y = P @ np.array([0.7, 0.3, 0.0])
    >>> np.round(simplex_least_squares(P, y), 6)
    array([0.7, 0.3, 0. ])
    """
    P = np.asarray(predictions, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if P.ndim not in (2, 3):
        raise ValueError(
            f"predictions must be 2-d or 3-d, got an array of shape {P.shape}."
        )
    n_predictors = P.shape[-1]
    P = P.reshape(-1, n_predictors)
    y = y.reshape(-1)
    if P.shape[0] != y.shape[0]:
        raise ValueError(
            "predictions and y have mismatched sizes: "
            f"{P.shape[0]} predicted values per predictor and {y.shape[0]} targets."
        )
    if n_predictors == 0 or P.shape[0] == 0:
        raise ValueError("predictions must have at least one sample and predictor.")
    if not (np.all(np.isfinite(P)) and np.all(np.isfinite(y))):
        raise ValueError("predictions and y must be finite (no NaN or inf).")
    if n_predictors == 1:
        return np.ones(1)
    if max_iter is None:
        max_iter = 10 * n_predictors + 10

    Q = P.T @ P
    c = P.T @ y
    scale = max(np.abs(Q).max(), np.abs(c).max(), 1e-300)
    tol = 1e-10 * scale

    # start at the best vertex (a feasible point)
    residual = ((P - y[:, None]) ** 2).sum(axis=0)
    w = np.zeros(n_predictors)
    w[int(np.argmin(residual))] = 1.0
    free = [int(np.argmin(residual))]
    for _ in range(max_iter):
        z = _kkt_solve(Q, c, free)
        if np.all(z >= -1e-14):
            w[:] = 0.0
            w[free] = np.maximum(z, 0.0)
            grad = Q @ w - c
            mu = -np.mean(grad[free])
            reduced = grad + mu
            reduced[free] = np.inf
            j = int(np.argmin(reduced))
            if reduced[j] >= -tol:
                break
            free.append(j)
        else:
            # step towards z until the first free weight hits zero
            current = w[free]
            blocking = z < current
            ratios = np.full(len(free), np.inf)
            ratios[blocking] = current[blocking] / (current[blocking] - z[blocking])
            alpha = min(1.0, ratios.min())
            new = current + alpha * (z - current)
            new[new <= 1e-15] = 0.0
            w[:] = 0.0
            w[free] = new
            free = [f for f, v in zip(free, new) if v > 0.0]
            if not free:  # numerical corner: restart at the best vertex
                j = int(np.argmin(residual))
                w[j] = 1.0
                free = [j]
    w = np.maximum(w, 0.0)
    return w / w.sum()
