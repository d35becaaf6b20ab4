"""Optimal transport between the two treatment arms, and McCann interpolation.

Private helpers of :class:`~sklearn_iclr26.causal.GeodesicCATERegressor`.
The exact plan comes from POT's network simplex (``ot.emd``) when POT is
installed (the ``causal`` extra), otherwise from scipy's HiGHS dual simplex
(``scipy.optimize.linprog``), whose basic optimal solution has at most
``n0 + n1 - 1`` non-zero entries as the network simplex's does. The entropic
plan is our own log-domain Sinkhorn in numpy (no POT needed).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

__all__ = ["emd_plan", "geodesic_atoms", "sinkhorn_plan", "sqeuclidean_cost"]

# above this many plan entries the scipy LP is too slow to be a default route
_LINPROG_MAX_ENTRIES = 120_000


def sqeuclidean_cost(Z0, Z1):
    """Squared Euclidean cost matrix ``C[i, j] = ||Z0[i] - Z1[j]||^2``."""
    C = (
        np.einsum("ij,ij->i", Z0, Z0)[:, None]
        + np.einsum("ij,ij->i", Z1, Z1)[None, :]
        - 2.0 * Z0 @ Z1.T
    )
    np.maximum(C, 0.0, out=C)
    return C


def _have_pot():
    try:
        import ot  # noqa: F401
    except ImportError:
        return False
    return True


def _linprog_plan(a, b, C):
    from scipy.optimize import linprog

    n0, n1 = C.shape
    rows = sp.kron(sp.eye(n0), np.ones((1, n1)), format="csr")
    cols = sp.kron(np.ones((1, n0)), sp.eye(n1), format="csr")
    A_eq = sp.vstack([rows, cols], format="csr")
    b_eq = np.concatenate([a, b])
    res = linprog(C.ravel(), A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs-ds")
    if res.status != 0:
        raise RuntimeError(f"The optimal-transport LP failed: {res.message}")
    return np.maximum(res.x.reshape(n0, n1), 0.0)


def emd_plan(a, b, C, *, backend="auto"):
    """Exact optimal-transport plan as a sparse COO matrix.

    Parameters
    ----------
    a, b : ndarray
        Marginals (each sums to one).
    C : ndarray of shape (len(a), len(b))
        Cost matrix.
    backend : {"auto", "pot", "scipy"}
        ``"auto"`` uses POT when installed, else scipy's HiGHS.

    Returns
    -------
    plan : scipy.sparse.coo_matrix
        Its non-zero entries (at most ``len(a) + len(b) - 1``).
    """
    if backend == "pot" or (backend == "auto" and _have_pot()):
        try:
            import ot
        except ImportError as exc:  # pragma: no cover - depends on the extra
            raise ImportError(
                "ot_solver='emd' with POT needs the POT package: "
                "pip install 'sklearn-iclr26[causal]'."
            ) from exc
        G = ot.emd(a, b, C, numItermax=1_000_000)
    else:
        G = _linprog_plan(a, b, C)
    G = np.asarray(G, dtype=np.float64)
    # drop round-off entries: the basic solution has at most n0 + n1 - 1 atoms
    G[G <= 1e-12 * G.max()] = 0.0
    return sp.coo_matrix(G)


def sinkhorn_plan(a, b, C, *, reg, max_iter=500, tol=1e-6, n_keep=None):
    """Entropic plan (log-domain Sinkhorn), keeping its ``n_keep`` largest entries.

    ``reg`` is relative to the mean cost (the cost is divided by its mean), so
    the same value suits any scale. The kept entries are rescaled to total
    mass one; the marginals then hold only approximately (the price of a
    sparse plan, as in skada's ``GradualEstimator``).
    """
    scale = float(C.mean()) or 1.0
    M = C / (scale * reg)
    log_a, log_b = np.log(a), np.log(b)
    f = np.zeros(len(a))
    g = np.zeros(len(b))
    for _ in range(max_iter):
        f = log_a - logsumexp(g[None, :] - M, axis=1)
        g_new = log_b - logsumexp(f[:, None] - M, axis=0)
        if np.max(np.abs(g_new - g)) < tol:
            g = g_new
            break
        g = g_new
    G = np.exp(f[:, None] + g[None, :] - M)
    if n_keep is not None and n_keep < G.size:
        threshold = np.partition(G.ravel(), G.size - n_keep)[G.size - n_keep]
        G[G < threshold] = 0.0
    G /= G.sum()
    return sp.coo_matrix(G)


def geodesic_atoms(Z0, Z1, rows, cols, kappa):
    """McCann interpolation ``(1 - kappa) Z0[rows] + kappa Z1[cols]``.

    One atom per non-zero plan entry ``(rows[k], cols[k])``; ``kappa = 0``
    gives the source points, ``kappa = 1`` the target points.
    """
    return (1.0 - kappa) * Z0[rows] + kappa * Z1[cols]
