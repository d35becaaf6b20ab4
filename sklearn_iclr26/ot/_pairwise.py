"""Pairwise tree-sliced Wasserstein distances over a list of point clouds."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.utils import gen_even_slices

from sklearn_iclr26.ot._tree_sliced_wasserstein import tree_constraints
from sklearn_iclr26.ot._trees import (
    TreeSystem,
    check_cloud,
    check_mass,
    check_trees,
    draw_trees,
    line_costs,
    project,
    sort_lines,
    tree_chunks,
)
from sklearn_iclr26.utils._sklearn_compat import StrOptions, validate_params
from sklearn_iclr26.utils._validation import N_JOBS_CONSTRAINT

__all__ = ["pairwise_tree_sliced_wasserstein"]


def _chunk_costs(clouds, masses, roots, theta, splitting, delta, p):
    """Summed tree costs (n_clouds, n_clouds) of one chunk of trees."""
    n = len(clouds)
    proj = [project(Z, roots, theta, splitting, delta) for Z in clouds]
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            t = np.concatenate([proj[i][0], proj[j][0]], axis=1)
            s = np.concatenate([proj[i][1], proj[j][1]], axis=1)
            w = np.concatenate([masses[i], -masses[j]])[None, :]
            out[i, j] = line_costs(*sort_lines(t, s), w, p).sum()
    return out + out.T


@validate_params(
    {
        "clouds": [list, tuple],
        "weights": [list, tuple, None],
        **tree_constraints(
            *("n_trees", "n_lines", "p", "root", "root_std", "splitting"),
            *("delta", "trees", "return_trees", "random_state"),
        ),
        "directions": [StrOptions({"gaussian"}), "array-like"],
        "n_jobs": N_JOBS_CONSTRAINT,
    },
    prefer_skip_nested_validation=True,
)
def pairwise_tree_sliced_wasserstein(
    clouds,
    *,
    weights=None,
    n_trees=250,
    n_lines=4,
    p=1,
    root="median",
    root_std=0.1,
    directions="gaussian",
    splitting="distance",
    delta=2.0,
    trees=None,
    return_trees=False,
    n_jobs=None,
    random_state=None,
):
    """Tree-sliced Wasserstein distance between every pair of point clouds.

    One tree system is shared by all pairs: its roots sit around the
    geometric median (or mean) of *all* clouds pooled, each cloud weighted
    equally. With ``p=1`` the matrix is then a pseudometric (symmetric, zero
    diagonal, triangle inequality), usable with ``metric="precomputed"`` in
    ``KNeighborsClassifier``, ``DBSCAN`` or ``AgglomerativeClustering``. An
    entry differs from the single-pair :func:`tree_sliced_wasserstein` (which
    roots its trees at that pair's median) unless the same ``trees`` are
    passed to both. ``exp(-gamma * D)`` is not guaranteed to be a positive
    semi-definite kernel.

    Parameters
    ----------
    clouds : list of array-like of shape (n_i, n_features)
        The point clouds (at least one point each, same ``n_features``).
    weights : list of array-like of shape (n_i,), default=None
        Per-cloud weights (non-negative, summing to one); ``None`` is uniform.
    n_trees : int, default=250
        Number of tree systems.
    n_lines : int, default=4
        Lines per tree.
    p : float, default=1
        Exponent, as in :func:`tree_sliced_wasserstein`.
    root : {"median", "mean"} or array-like of shape (n_features,), \
            default="median"
        Centre of the roots, from the pooled clouds.
    root_std : float, default=0.1
        Jitter of the roots.
    directions : "gaussian" or array-like, default="gaussian"
        Normalized Gaussian directions, or an array of shape (n_lines,
        n_features) or (n_trees, n_lines, n_features).
    splitting : {"distance", "uniform"}, default="distance"
        Mass split over the lines.
    delta : float, default=2.0
        Sharpness of the distance-based split.
    trees : tuple (roots, directions), default=None
        A tree system to use instead of drawing one.
    return_trees : bool, default=False
        Also return the tree system used.
    n_jobs : int, default=None
        Parallel jobs (joblib threads) over chunks of trees; ``None`` means 1,
        ``-1`` all cores.
    random_state : int, RandomState instance or None, default=None
        Seed of the tree system.

    Returns
    -------
    distances : ndarray of shape (n_clouds, n_clouds)
        Symmetric, with a zero diagonal.
    trees : TreeSystem
        Only with ``return_trees=True``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.ot import pairwise_tree_sliced_wasserstein
    >>> rng = np.random.RandomState(0)
    >>> clouds = [rng.normal(size=(30, 2)) + shift for shift in (0.0, 0.1, 3.0)]
    >>> D = pairwise_tree_sliced_wasserstein(clouds, n_trees=50, random_state=0)
    >>> D.shape, bool(D[0, 1] < D[0, 2])
    ((3, 3), True)
    """
    if n_jobs == 0:
        raise ValueError("n_jobs == 0 has no meaning; use None, -1 or a positive int.")
    if len(clouds) == 0:
        raise ValueError("clouds is an empty list.")
    first = check_cloud(clouds[0], "clouds[0]")
    d = first.shape[1]
    clouds = [first] + [
        check_cloud(c, f"clouds[{i}]", n_features=d)
        for i, c in enumerate(clouds[1:], start=1)
    ]
    if weights is not None and len(weights) != len(clouds):
        raise ValueError(
            f"weights has {len(weights)} entries for {len(clouds)} clouds."
        )
    masses = [
        check_mass(None if weights is None else weights[i], c.shape[0], f"weights[{i}]")
        for i, c in enumerate(clouds)
    ]
    Z = np.concatenate(clouds)
    pooled = np.concatenate(masses) / len(clouds)
    if trees is None:
        trees = draw_trees(
            Z,
            pooled,
            n_trees=n_trees,
            n_lines=n_lines,
            root=root,
            root_std=root_std,
            directions=directions,
            random_state=random_state,
        )
    else:
        trees = check_trees(trees, d)
    roots, theta = trees
    L, k, _ = theta.shape
    biggest = sorted(c.shape[0] for c in clouds)[-2:]
    per_tree = 8 * k * (2 * Z.shape[0] + 6 * (sum(biggest) + 1)) + 8 * Z.shape[0] * d
    chunks = tree_chunks(L, per_tree)
    n_workers = min(effective_n_jobs(n_jobs), L)
    if len(chunks) < n_workers:  # at least one chunk of trees per worker
        chunks = [sl for sl in gen_even_slices(L, n_workers)]
    # threads: the work is numpy sorting and cumulative sums, which release the GIL
    parts = Parallel(n_jobs=n_jobs, prefer="threads")(
        delayed(_chunk_costs)(clouds, masses, roots[sl], theta[sl], splitting, delta, p)
        for sl in chunks
    )
    D = (sum(parts) / L) ** (1.0 / p)
    np.fill_diagonal(D, 0.0)
    if return_trees:
        return D, TreeSystem(roots, theta)
    return D
