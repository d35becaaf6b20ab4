"""Permutation two-sample test with the tree-sliced Wasserstein distance."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np
from sklearn.utils.validation import check_random_state

from sklearn_iclr26.ot._result import TwoSampleTestResult
from sklearn_iclr26.ot._tree_sliced_wasserstein import tree_constraints
from sklearn_iclr26.ot._trees import (
    check_cloud,
    draw_trees,
    project,
    sort_lines,
    tree_chunks,
)
from sklearn_iclr26.utils._batching import batch_slices
from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, validate_params

__all__ = ["tree_sliced_two_sample_test"]

_BLOCK_BYTES = 1 << 21


def _permuted_masses(rng, n, m, n_permutations):
    """Signed masses: row 0 the observed split, then one row per permutation."""
    N = n + m
    W = np.empty((n_permutations + 1, N))
    W[0, :n], W[0, n:] = 1.0 / n, -1.0 / m
    for b in range(1, n_permutations + 1):
        idx = rng.permutation(N)
        W[b, idx[:n]] = 1.0 / n
        W[b, idx[n:]] = -1.0 / m
    return W


def _line_block_statistics(WT, total, order, ss, length, left, p):
    """Sum over a block of lines of the tree cost of every mass column of ``WT``.

    ``WT`` is (N + 1, B): the signed masses of the B permutations, one column
    each, with a zero row for the root; ``total`` (lines, B) is each line's
    total mass. The subtree masses are accumulated one sorted position at a
    time over all lines and permutations at once (a running sum over (lines,
    B) rows); on the positive side of the root the subtree holds the mass
    beyond the cut, ``total - prefix``, so the running sum drops each line's
    total once it passes its root. The passes are torch's in-place fused
    multiply-adds (``addcmul_``: two passes over the block per position
    fewer than numpy's separate multiply and add, about 2x faster on one
    thread); the final sum over lines is numpy's, as before.
    """
    import torch

    C, B = order.shape[0], WT.shape[1]
    root_at = left.sum(axis=1)  # index of each line's first positive segment
    W = torch.from_numpy(WT)
    order_t = torch.from_numpy(np.ascontiguousarray(order.T))
    ss_t = torch.from_numpy(np.ascontiguousarray(ss.T)).unsqueeze(-1)
    length_t = torch.from_numpy(np.ascontiguousarray(length.T)).unsqueeze(-1)
    total_t = torch.from_numpy(total)
    run = torch.zeros((C, B), dtype=W.dtype)
    g = torch.empty((C, B), dtype=W.dtype)
    acc = torch.zeros((C, B), dtype=W.dtype)
    for j in range(order.shape[1] - 1):
        torch.index_select(W, 0, order_t[j], out=g)
        run.addcmul_(g, ss_t[j])
        crossing = np.flatnonzero(root_at == j)
        if crossing.size:
            rows = torch.from_numpy(crossing)
            run[rows] -= total_t[rows]
        torch.abs(run, out=g)
        if p != 1:
            g.pow_(p)
        acc.addcmul_(g, length_t[j])
    return acc.numpy().sum(axis=0)


def _tree_sliced_statistics(Z, W, trees, splitting, delta, p):
    """The statistic of every row of signed masses ``W`` (B, N) on fixed trees.

    The projections, splits and sorts are computed once per line; the
    permutations only enter through the masses, batched over all B rows.
    """
    roots, theta = trees
    L, k, d = theta.shape
    N, B = Z.shape[0], W.shape[0]
    WT = np.zeros((N + 1, B))
    WT[:N] = W.T
    totals = np.zeros(B)
    # a block of lines keeps its (lines, B) running sums in cache
    lines_per_block = max(1, _BLOCK_BYTES // (8 * B))
    for sl in tree_chunks(L, 8 * k * (N + 1) * 8 + 8 * N * d):
        t, s = project(Z, roots[sl], theta[sl], splitting, delta)
        order, ss, length, left = sort_lines(t, s)
        for cs in batch_slices(order.shape[0], 1, max_n_rows=lines_per_block):
            total = s[cs] @ W.T
            totals += _line_block_statistics(
                WT, total, order[cs], ss[cs], length[cs], left[cs], p
            )
    return (totals / L) ** (1.0 / p)


def _sliced_statistics(Z, W, n, projections, p):
    try:
        import ot
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            'statistic="sliced" needs POT: pip install "sklearn-iclr26[ot]" '
            "(or pip install POT)."
        ) from exc
    out = np.empty(W.shape[0])
    for b, w in enumerate(W):
        x, y = w > 0, w < 0
        out[b] = ot.sliced_wasserstein_distance(
            Z[x], Z[y], projections=projections, p=p
        )
    return out


@validate_params(
    {
        **tree_constraints(
            *("X", "Y", "n_trees", "n_lines", "p", "root_std", "splitting"),
            *("delta", "random_state"),
        ),
        "n_permutations": [Interval(Integral, 1, None, closed="left")],
        "statistic": [StrOptions({"tree_sliced", "sliced"})],
        "root": [StrOptions({"median", "mean"})],
        "n_projections": [Interval(Integral, 1, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def tree_sliced_two_sample_test(
    X,
    Y,
    *,
    n_permutations=999,
    statistic="tree_sliced",
    n_trees=250,
    n_lines=4,
    p=1,
    root="median",
    root_std=0.1,
    splitting="distance",
    delta=2.0,
    n_projections=None,
    random_state=None,
):
    """Permutation test of ``H0: X and Y come from the same distribution``.

    The statistic is the tree-sliced Wasserstein distance (FW-TSW by default)
    between the two samples. The tree system is drawn once from the *pooled*
    sample (its geometric median does not depend on the labels), and every
    permutation of the pooled sample is scored with the same trees, so the
    permutations are exchangeable under H0 and the p-value
    ``(1 + #{null >= observed}) / (1 + n_permutations)`` is valid at every
    level. Projections, splits and sorts are computed once: a permutation only
    changes the signed masses, and the subtree masses of all permutations are
    accumulated together, one sorted position at a time over (lines,
    permutations) blocks, so the cost is ``n_permutations * n_trees * n_lines
    * (n + m)`` multiply-adds without a Python loop over permutations.

    With ``splitting="uniform"`` the statistic is exactly the sliced
    1-Wasserstein distance with the ``n_trees * n_lines`` directions (whatever
    the roots), so that is the sliced test at the same batched cost.
    ``statistic="sliced"`` runs the test with POT's
    ``ot.sliced_wasserstein_distance`` instead (optional dependency POT; fixed
    ``n_projections`` Gaussian directions, by default ``n_trees * n_lines``),
    which projects and sorts again for every permutation: far slower, kept as
    an external reference and for ``p > 1``.

    Parameters
    ----------
    X : array-like of shape (n, n_features)
        First sample (a 1-D array is points on the line).
    Y : array-like of shape (m, n_features)
        Second sample.
    n_permutations : int, default=999
        Number of random permutations.
    statistic : {"tree_sliced", "sliced"}, default="tree_sliced"
        The distance.
    n_trees : int, default=250
        Number of tree systems.
    n_lines : int, default=4
        Lines per tree.
    p : float, default=1
        Exponent.
    root : {"median", "mean"}, default="median"
        Centre of the roots, from the pooled sample.
    root_std : float, default=0.1
        Jitter of the roots.
    splitting : {"distance", "uniform"}, default="distance"
        Mass split over the lines.
    delta : float, default=2.0
        Sharpness of the distance-based split.
    n_projections : int, default=None
        Directions of ``statistic="sliced"``; ``None`` is ``n_trees * n_lines``.
    random_state : int, RandomState instance or None, default=None
        Seed of the trees (or projections) and the permutations.

    Returns
    -------
    result : TwoSampleTestResult
        With ``statistic``, ``pvalue``, ``null_distribution`` and ``method``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.ot import tree_sliced_two_sample_test
    >>> rng = np.random.RandomState(0)
    >>> X, Y = rng.normal(size=(50, 3)), rng.normal(size=(60, 3))
    >>> res = tree_sliced_two_sample_test(X, Y, n_permutations=99, n_trees=20,
    ...                                   random_state=0)
    >>> bool(res.pvalue > 0.05)
    True
    """
    X = check_cloud(X, "X")
    Y = check_cloud(Y, "Y", n_features=X.shape[1])
    if X.shape[0] < 2 and Y.shape[0] < 2:
        raise ValueError("A two-sample test needs at least 3 points in all.")
    rng = check_random_state(random_state)
    n, m = X.shape[0], Y.shape[0]
    Z = np.concatenate([X, Y])
    if statistic == "tree_sliced":
        trees = draw_trees(
            Z,
            np.full(n + m, 1.0 / (n + m)),
            n_trees=n_trees,
            n_lines=n_lines,
            root=root,
            root_std=root_std,
            directions="gaussian",
            random_state=rng,
        )
        W = _permuted_masses(rng, n, m, n_permutations)
        values = _tree_sliced_statistics(Z, W, trees, splitting, delta, p)
        method = "tree-sliced Wasserstein"
    else:
        n_proj = n_trees * n_lines if n_projections is None else n_projections
        theta = rng.standard_normal((Z.shape[1], n_proj))
        theta /= np.linalg.norm(theta, axis=0, keepdims=True)
        W = _permuted_masses(rng, n, m, n_permutations)
        values = _sliced_statistics(Z, W, n, theta, p)
        method = "sliced Wasserstein (POT)"
    observed, null = float(values[0]), values[1:]
    # ties within rounding count as "at least as extreme" (as scipy does)
    gamma = 1e-12 * max(1.0, abs(observed))
    pvalue = (1.0 + np.sum(null >= observed - gamma)) / (1.0 + n_permutations)
    return TwoSampleTestResult(
        statistic=observed, pvalue=float(pvalue), null_distribution=null, method=method
    )
