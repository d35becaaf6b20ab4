"""The constraint-guided gradient modification rule of ConNAS, in numpy.

One implementation, shared by :class:`~sklearn_iclr26.nas.ConNASSearch` (on the
gradient of the validation loss with respect to the architecture logits) and by
the NAS-Bench-201 table surrogate (``benchmarks/connas_nasbench201.py``).

The rule is a reconstruction (see ``doc/connas.rst``): ConNAS applies the
Constraint-Guided Gradient Descent (CGGD) modification of Van Baelen and
Karsmakers to the architecture logits. When the architecture derived from the
logits violates the budget, the gradient ``g`` becomes
``g + R * ||g|| * d / ||d||`` where ``d`` raises the logits of costly
operations, so that a descent step favours cheaper ones; ``R > 1`` guarantees a
descent component along ``-d`` of at least ``(R - 1) ||g||``, whatever the size
of the task gradient, so no penalty weight is needed.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = [
    "DIRECTIONS",
    "constraint_guided_gradient",
    "cost_direction",
    "expected_cost_gradient",
]

DIRECTIONS = ("cost_rank", "selected", "expected_cost")

_EPS = 1e-12


def _flat(blocks):
    return np.concatenate([np.ravel(b) for b in blocks]) if blocks else np.zeros(0)


def _unflat(flat, like):
    out, start = [], 0
    for block in like:
        size = np.size(block)
        out.append(flat[start : start + size].reshape(np.shape(block)))
        start += size
    return out


def expected_cost_gradient(local_costs, probs):
    """Gradient of ``sum_e sum_k p_ek c_ek`` with respect to the logits.

    Parameters
    ----------
    local_costs : list of ndarray of shape (n_ops_e,)
        Cost of the architecture with edge ``e`` set to each of its operations.
    probs : list of ndarray of shape (n_ops_e,)
        Softmax probabilities of each edge.

    Returns
    -------
    grad : list of ndarray of shape (n_ops_e,)
        ``p_ek (c_ek - sum_j p_ej c_ej)`` per edge (softmax Jacobian).
    """
    return [
        np.asarray(p) * (np.asarray(c) - np.dot(p, c))
        for c, p in zip(local_costs, probs)
    ]


def cost_direction(local_costs, arch, kind="cost_rank", probs=None):
    """Direction ``d`` that raises the logits of costly operations.

    Parameters
    ----------
    local_costs : list of ndarray of shape (n_ops_e,)
        ``local_costs[e][k]`` is the cost of the current discrete architecture
        with edge ``e`` switched to operation ``k`` (a per-operation cost
        table: for an additive cost it equals the per-operation costs up to a
        constant per edge).
    arch : sequence of int
        Index of the selected operation on each edge.
    kind : {"cost_rank", "selected", "expected_cost"}, default="cost_rank"
        ``"cost_rank"``: per edge, the standardised costs
        ``(c_ek - mean_k c_ek) / std_k c_ek`` (zero on edges whose operations
        all cost the same). ``"selected"``: per edge where a cheaper operation
        exists, ``+1`` on the selected operation and ``-1 / n_cheaper`` on each
        cheaper one. ``"expected_cost"``: the gradient of the expected cost
        (the FBNet/ProxylessNAS proxy; an ablation).
    probs : list of ndarray, default=None
        Softmax probabilities, needed for ``"expected_cost"``.

    Returns
    -------
    d : list of ndarray of shape (n_ops_e,)
        Unnormalised direction, one block per edge.
    """
    if kind not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {kind!r}.")
    local_costs = [np.asarray(c, dtype=np.float64) for c in local_costs]
    if kind == "expected_cost":
        if probs is None:
            raise ValueError("direction='expected_cost' needs the probabilities.")
        return expected_cost_gradient(local_costs, probs)
    out = []
    for c, k_sel in zip(local_costs, arch):
        d = np.zeros_like(c)
        if kind == "cost_rank":
            std = c.std()
            if std > _EPS * max(1.0, np.abs(c).max()):
                d = (c - c.mean()) / std
        else:  # "selected"
            cheaper = c < c[k_sel] - _EPS * max(1.0, abs(c[k_sel]))
            n_cheaper = int(cheaper.sum())
            if n_cheaper:
                d[k_sel] = 1.0
                d[cheaper] = -1.0 / n_cheaper
        out.append(d)
    return out


def constraint_guided_gradient(grad, direction, rescale_factor=1.5, eps=1e-8):
    """Modify a gradient so that a descent step moves towards feasibility.

    Returns ``g + R * max(||g||, eps) * d / ||d||`` (Frobenius norms over all
    blocks together). Call it only when the constraint is violated. With
    ``R > 1`` the result has a component along ``d / ||d||`` of at least
    ``(R - 1) ||g||``, so ``-step`` decreases ``d``-weighted cost whatever the
    size of ``g``.

    Parameters
    ----------
    grad : list of ndarray
        Gradient blocks (one per edge).
    direction : list of ndarray
        Direction blocks of the same shapes.
    rescale_factor : float, default=1.5
        ``R``; must exceed 1.
    eps : float, default=1e-8
        Lower bound on ``||g||`` (as congrads), so that a zero task gradient
        still moves towards feasibility.

    Returns
    -------
    grad : list of ndarray
        The modified gradient; ``grad`` unchanged (copied) when ``||d|| = 0``
        (no cheaper operation anywhere).
    """
    if not rescale_factor > 1:
        raise ValueError(
            f"rescale_factor must exceed 1 so that the constraint direction wins "
            f"over the task gradient, got {rescale_factor}."
        )
    g = _flat([np.asarray(b, dtype=np.float64) for b in grad])
    d = _flat([np.asarray(b, dtype=np.float64) for b in direction])
    if g.shape != d.shape:
        raise ValueError("grad and direction must have the same shapes.")
    d_norm = np.linalg.norm(d)
    if d_norm <= _EPS:
        return _unflat(g.copy(), grad)
    g_norm = max(np.linalg.norm(g), eps)
    return _unflat(g + rescale_factor * g_norm * d / d_norm, grad)
