"""Tree systems of concurrent lines and the closed-form tree-Wasserstein cost.

Private machinery shared by the distance, the pairwise matrix, the embedding
and the two-sample test.

A tree system is ``n_lines`` unit directions sharing one root ``r``. A point
``x`` is projected to ``t_i = <x - r, theta_i>`` on line ``i`` and its mass is
split over the lines, uniformly (``1 / n_lines``, TSW-SL) or by distance
(``softmax_i(-delta * ||(x - r) - t_i theta_i||)``, Db-TSW and FW-TSW). On a
tree the optimal transport cost has a closed form: for every edge, the edge
length times ``|mass(mu) - mass(nu)|`` of the subtree it cuts off. Along line
``i`` with the root at 0, the subtree cut at ``s < 0`` holds the mass at
``t <= s`` and the one cut at ``s > 0`` the mass at ``t >= s``; so after
sorting the projections (with the root inserted as a massless breakpoint) the
cost is a cumulative sum. With ``p > 1`` the edge term is ``|...|**p`` (the
reference code's Sobolev-type surrogate, not the 2-Wasserstein distance on
the tree).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from collections import namedtuple

import numpy as np
from sklearn.utils.validation import check_array, check_random_state

from sklearn_iclr26.ot._geometric_median import geometric_median
from sklearn_iclr26.utils._batching import batch_slices

__all__ = ["TreeSystem"]

#: A tree system: ``roots`` of shape (n_trees, n_features) and unit
#: ``directions`` of shape (n_trees, n_lines, n_features).
TreeSystem = namedtuple("TreeSystem", ["roots", "directions"])

WEIGHT_ATOL = 1e-6


def is_torch(*arrays):
    return any(
        a is not None and type(a).__module__.split(".")[0] == "torch" for a in arrays
    )


def to_numpy(a):
    if is_torch(a):
        return a.detach().cpu().numpy()
    return a


def check_cloud(X, name, n_features=None):
    """A non-empty 2-D float cloud (1-D is points on the line); torch kept."""
    if is_torch(X):
        if X.ndim == 1:
            X = X[:, None]
        if X.ndim != 2:
            raise ValueError(f"{name} must be a 2-D array of points, got {X.ndim}-D.")
        if X.shape[0] == 0:
            raise ValueError(f"{name} is an empty point cloud.")
        if not bool(X.isfinite().all()):
            raise ValueError(f"{name} contains NaN or infinity.")
    else:
        X = np.asarray(X) if not hasattr(X, "shape") else X
        if getattr(X, "ndim", 2) == 1:
            X = np.asarray(X).reshape(-1, 1)
        if X.shape[0] == 0:
            raise ValueError(f"{name} is an empty point cloud.")
        X = check_array(X, dtype=np.float64, input_name=name)
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(
            f"{name} has {X.shape[1]} features but the other point cloud has "
            f"{n_features}: the dimensions must match."
        )
    return X


def check_mass(a, n, name, like=None):
    """Probability weights of length ``n``: non-negative, summing to one."""
    torch_in = is_torch(a)
    if a is None:
        if is_torch(like):
            import torch

            return torch.full((n,), 1.0 / n, dtype=like.dtype, device=like.device)
        return np.full(n, 1.0 / n)
    if torch_in:
        a = a.reshape(-1)
        values = a.detach().cpu().numpy().astype(np.float64)
    else:
        a = check_array(a, ensure_2d=False, dtype=np.float64, input_name=name)
        a = a.ravel()
        values = a
    if values.shape[0] != n:
        raise ValueError(f"{name} has {values.shape[0]} weights for {n} points.")
    if np.any(values < 0):
        raise ValueError(f"{name} must be non-negative.")
    if abs(values.sum() - 1.0) > WEIGHT_ATOL:
        raise ValueError(
            f"{name} must sum to one (got {values.sum():.6g}); normalize the "
            "weights, e.g. a / a.sum()."
        )
    if is_torch(like) and not torch_in:
        import torch

        a = torch.as_tensor(a, dtype=like.dtype, device=like.device)
    return a


def _unit(V, what):
    norms = np.linalg.norm(V, axis=-1, keepdims=True)
    if np.any(norms == 0) or not np.all(np.isfinite(norms)):
        raise ValueError(f"{what} must be finite and non-zero.")
    return V / norms


def power_spherical(rng, loc, kappa):
    """Draws of the power spherical law ``p(x) ~ (1 + <loc, x>)**kappa``.

    One draw per unit row of ``loc`` (De Cao and Aziz, 2020, the perturbation
    of the authors' FW-TSW* directions, their ``PowerSpherical(loc, kappa)``):
    the cosine to ``loc`` is ``2 z - 1`` with ``z ~ Beta((d - 1) / 2 + kappa,
    (d - 1) / 2)``, the tangent part is uniform on the sphere orthogonal to
    ``e_1``, and a Householder reflection takes ``e_1`` to ``loc``. In one
    dimension the sphere is ``{-1, 1}`` and ``loc`` is returned.
    """
    shape = loc.shape
    loc = loc.reshape(-1, shape[-1])
    d = loc.shape[1]
    if d == 1:
        return loc.reshape(shape).copy()
    t = 2.0 * rng.beta((d - 1) / 2 + kappa, (d - 1) / 2, size=loc.shape[0]) - 1.0
    v = _unit(rng.standard_normal((loc.shape[0], d - 1)), "tangent draws")
    sine = np.sqrt(np.clip(1.0 - t**2, 0.0, None))
    y = np.concatenate([t[:, None], sine[:, None] * v], axis=1)
    u = -loc.copy()
    u[:, 0] += 1.0  # u = e_1 - loc
    norm = np.linalg.norm(u, axis=1, keepdims=True)
    u = np.divide(u, norm, out=np.zeros_like(u), where=norm > 1e-12)  # loc = e_1: y
    x = y - 2.0 * (y * u).sum(axis=1, keepdims=True) * u
    return _unit(x, "power spherical draws").reshape(shape)


def draw_trees(
    Z,
    weights,
    *,
    n_trees,
    n_lines,
    root,
    root_std,
    directions,
    random_state,
    X=None,
    Y=None,
    kappa=None,
):
    """Draw a tree system for the pooled support ``Z`` (numpy, weights sum 1).

    ``root``: "median" (geometric median of ``Z``, FW-TSW), "mean" (weighted
    mean) or a point; every tree's root is that centre plus
    ``root_std * N(0, I)``. ``directions``: "gaussian" (normalized Gaussian),
    "random_path" (``x_i - y_j`` for random pairs of ``X`` and ``Y``, each
    perturbed by :func:`power_spherical` with concentration ``kappa`` unless
    ``kappa`` is None) or an array of shape (n_trees, n_lines, n_features).
    """
    rng = check_random_state(random_state)
    if kappa is not None and not (
        isinstance(directions, str) and directions == "random_path"
    ):
        raise ValueError(
            'kappa perturbs the random-path directions: pass directions="random_path" '
            f"with it (got directions={directions!r})."
        )
    d = Z.shape[1]
    if isinstance(root, str):
        if root == "median":
            centre = geometric_median(Z, weights=weights)
        else:
            centre = weights @ Z
    else:
        centre = check_array(root, ensure_2d=False, dtype=np.float64, input_name="root")
        centre = centre.ravel()
        if centre.shape[0] != d:
            raise ValueError(
                f"root has {centre.shape[0]} coordinates for {d}-dimensional data."
            )
    noise = rng.standard_normal((n_trees, d))
    roots = centre[None, :] + root_std * noise
    if isinstance(directions, str):
        if directions == "gaussian":
            theta = rng.standard_normal((n_trees, n_lines, d))
        else:  # random_path
            if X is None or Y is None:
                raise ValueError('directions="random_path" needs two point clouds.')
            i = rng.randint(X.shape[0], size=(n_trees, n_lines))
            j = rng.randint(Y.shape[0], size=(n_trees, n_lines))
            theta = X[i] - Y[j]
            tiny = np.linalg.norm(theta, axis=-1) <= 1e-12
            if tiny.any():  # coincident pairs: a Gaussian direction instead
                theta[tiny] = rng.standard_normal((int(tiny.sum()), d))
            theta = _unit(theta, "directions")
            if kappa is not None:
                theta = power_spherical(rng, theta, kappa)
        return TreeSystem(roots, _unit(theta, "directions"))
    theta = check_array(
        directions,
        ensure_2d=False,
        allow_nd=True,
        dtype=np.float64,
        input_name="directions",
    )
    if theta.ndim == 2:
        theta = np.broadcast_to(theta, (n_trees, *theta.shape))
    if theta.ndim != 3 or theta.shape != (n_trees, n_lines, d):
        raise ValueError(
            "directions must have shape (n_lines, n_features) or (n_trees, "
            f"n_lines, n_features) = ({n_trees}, {n_lines}, {d}); got "
            f"{theta.shape}."
        )
    return TreeSystem(roots, _unit(np.array(theta), "directions"))


def check_trees(trees, d):
    roots, theta = trees
    roots = check_array(roots, dtype=np.float64, input_name="trees.roots")
    theta = check_array(
        theta, allow_nd=True, dtype=np.float64, input_name="trees.directions"
    )
    if (
        theta.ndim != 3
        or roots.shape[1] != d
        or theta.shape[2] != d
        or theta.shape[0] != roots.shape[0]
    ):
        raise ValueError(
            "trees must be (roots of shape (n_trees, n_features), directions of "
            f"shape (n_trees, n_lines, n_features)) with n_features={d}."
        )
    return TreeSystem(roots, _unit(theta, "trees.directions"))


def tree_chunks(n_trees, per_tree_bytes):
    return list(batch_slices(n_trees, per_tree_bytes))


# ---------------------------------------------------------------- numpy core
def project(Z, roots, theta, splitting, delta):
    """Projections ``t`` and split shares ``s``, both (n_trees * n_lines, N)."""
    c, k, d = theta.shape
    lines = theta.reshape(c * k, d)
    t = lines @ Z.T - np.einsum("lkd,ld->lk", theta, roots).reshape(-1, 1)
    if splitting == "uniform":
        return t, np.full_like(t, 1.0 / k)
    # squared distances to the roots, ||z||^2 - 2 <z, r> + ||r||^2: one
    # (c, d) x (d, N) product instead of a (c, N, d) array of differences
    # (the cost that grows with d); clipped at 0 below with the perpendicular
    sq = (
        np.einsum("nd,nd->n", Z, Z)[None, :]
        - 2.0 * (roots @ Z.T)
        + np.einsum("cd,cd->c", roots, roots)[:, None]
    )
    t3 = t.reshape(c, k, -1)
    perp = np.sqrt(np.maximum(sq[:, None, :] - t3 * t3, 0.0))
    z = -delta * perp
    z -= z.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    return t, z.reshape(c * k, -1)


def sort_lines(t, s):
    """Sort each line's projections with the root (0, massless) inserted.

    Returns the sorting ``order`` (lines, N + 1) into the padded point index
    (index N is the root), sorted split shares, segment ``length`` (lines, N)
    and the mask ``left`` of segments on the negative side of the root.
    """
    C, _N = t.shape
    t = np.concatenate([t, np.zeros((C, 1))], axis=1)
    s = np.concatenate([s, np.zeros((C, 1))], axis=1)
    order = np.argsort(t, axis=1, kind="stable")
    ts = np.take_along_axis(t, order, axis=1)
    ss = np.take_along_axis(s, order, axis=1)
    return order, ss, np.diff(ts, axis=1), ts[:, 1:] <= 0


def line_costs(order, ss, length, left, w, p):
    """``sum_segments |subtree mass|**p * length`` per mass row and line.

    ``w`` is (B, N) signed masses; returns (B, lines).
    """
    B = w.shape[0]
    w = np.concatenate([w, np.zeros((B, 1))], axis=1)
    cum = np.cumsum(w[:, order] * ss[None], axis=2)  # (B, C, N+1)
    head = cum[:, :, :-1]
    F = np.where(left[None], head, cum[:, :, -1:] - head)
    np.abs(F, out=F)
    if p != 1:
        F **= p
    return np.einsum("bcn,cn->bc", F, length)


def tree_costs(Z, w, trees, *, splitting, delta, p):
    """Per-tree costs (B, n_trees) of signed masses ``w`` (B, N) on ``Z``."""
    roots, theta = trees
    L, k, _ = theta.shape
    N, B = Z.shape[0], w.shape[0]
    per_tree = 8 * k * (N + 1) * (6 + 3 * B) + 8 * N
    out = np.empty((B, L))
    for sl in tree_chunks(L, per_tree):
        t, s = project(Z, roots[sl], theta[sl], splitting, delta)
        costs = line_costs(*sort_lines(t, s), w, p)
        out[:, sl] = costs.reshape(B, -1, k).sum(axis=2)
    return out


# ---------------------------------------------------------------- torch core
def tree_costs_torch(Z, w, trees, *, splitting, delta, p):
    """Differentiable per-tree costs (n_trees,) of one signed mass vector."""
    import torch

    roots_np, theta_np = trees
    L, k, d = theta_np.shape
    N = Z.shape[0]
    per_tree = 8 * k * (N + 1) * (10 + d)
    parts = []
    zero = torch.zeros(1, dtype=Z.dtype, device=Z.device)
    for sl in tree_chunks(L, per_tree):
        roots = torch.as_tensor(roots_np[sl], dtype=Z.dtype, device=Z.device)
        theta = torch.as_tensor(theta_np[sl], dtype=Z.dtype, device=Z.device)
        c = theta.shape[0]
        centred = Z[None, :, :] - roots[:, None, :]  # (c, N, d)
        t = torch.einsum("cnd,ckd->ckn", centred, theta)  # (c, k, N)
        if splitting == "uniform":
            s = torch.full_like(t, 1.0 / k)
        else:
            perp = centred[:, None, :, :] - t[..., None] * theta[:, :, None, :]
            dist = torch.linalg.vector_norm(perp, dim=-1)
            s = torch.softmax(-delta * dist, dim=1)
        t = t.reshape(c * k, N)
        s = s.reshape(c * k, N)
        t = torch.cat([t, zero.expand(c * k, 1)], dim=1)
        m = torch.cat([s * w[None, :], zero.expand(c * k, 1)], dim=1)
        ts, order = torch.sort(t, dim=1, stable=True)
        cum = torch.cumsum(torch.gather(m, 1, order), dim=1)
        head = cum[:, :-1]
        left = ts[:, 1:] <= 0
        F = torch.where(left, head, cum[:, -1:] - head).abs()
        if p != 1:
            F = F**p
        costs = (F * (ts[:, 1:] - ts[:, :-1])).sum(dim=1)
        parts.append(costs.reshape(c, k).sum(dim=1))
    return torch.cat(parts)
