"""MultiPPI design algebra and budget allocation (Cowen-Breen et al., ICLR 2026).

Notation: ``k`` sources ``Z = (Z_0, ..., Z_{k-1})`` with covariance ``Sigma``
(``Z_0`` is the gold measurement in :class:`MultiPPIMeanEstimator`); a *subset*
``I`` is a sorted tuple of source indices; a *design* ``{I: n_I}`` says how many
independent rows observe exactly ``Z_I``. With ``Q_I`` the ``k x k`` embedding
of ``pinv(Sigma_II)`` and ``M(n) = sum_I n_I Q_I``, the best linear unbiased
estimator of ``a' E[Z]`` has weights ``lambda_I = n_I pinv(Sigma_II) (S a)_I``
with ``S = pinv(M)`` and variance ``a' S a``. Allocation minimises that
variance over ``n >= 0`` subject to ``sum_I c_I n_I <= budget`` (a c-optimal
design problem, convex in ``n``).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools
import math
from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch

from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, validate_params
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["multippi_allocate"]

MAX_ENUMERATED_SOURCES = 12  # 2**12 - 1 = 4095 subsets


def _check_covariance(covariance, n_sources=None):
    cov = np.asarray(covariance, dtype=np.float64)
    if cov.ndim != 2 or cov.shape[0] != cov.shape[1] or cov.shape[0] < 1:
        raise ValueError(
            f"covariance must be a square (k, k) matrix, got shape {cov.shape}."
        )
    if n_sources is not None and cov.shape[0] != n_sources:
        raise ValueError(
            f"covariance has shape {cov.shape} but there are {n_sources} sources "
            "(y and every column of X)."
        )
    if not np.all(np.isfinite(cov)):
        raise ValueError("covariance contains NaN or infinite values.")
    if not np.allclose(cov, cov.T, rtol=1e-8, atol=1e-12):
        raise ValueError("covariance must be symmetric.")
    scale = max(float(np.max(np.abs(np.diag(cov)))), 1e-300)
    if np.linalg.eigvalsh(cov)[0] < -1e-8 * scale:
        raise ValueError("covariance must be positive semi-definite.")
    return (cov + cov.T) / 2


def _check_subset(subset, n_sources):
    try:
        subset = tuple(sorted(int(i) for i in subset))
    except TypeError:
        raise ValueError(
            f"Each subset must be an iterable of source indices, got {subset!r}."
        ) from None
    if not subset:
        raise ValueError("Subsets must not be empty.")
    if len(set(subset)) != len(subset):
        raise ValueError(f"Subset {subset} repeats a source.")
    if subset[0] < 0 or subset[-1] >= n_sources:
        raise ValueError(
            f"Subset {subset} has a source index outside [0, {n_sources - 1}]."
        )
    return subset


def _all_subsets(n_sources):
    if n_sources > MAX_ENUMERATED_SOURCES:
        raise ValueError(
            f"There are {n_sources} sources, so {2**n_sources - 1} subsets: more "
            f"than can be enumerated (at most {MAX_ENUMERATED_SOURCES} sources). "
            "Pass an explicit list of subsets."
        )
    return [
        subset
        for size in range(1, n_sources + 1)
        for subset in itertools.combinations(range(n_sources), size)
    ]


def _resolve_subsets(subsets, n_sources, costs=None):
    if subsets is None or (isinstance(subsets, str) and subsets == "all"):
        if isinstance(costs, dict):
            subsets = list(costs)
        else:
            return _all_subsets(n_sources)
    if isinstance(subsets, str):
        raise TypeError(f"subsets must be 'all' or a list of subsets, got {subsets!r}.")
    resolved = []
    for subset in subsets:
        subset = _check_subset(subset, n_sources)
        if subset not in resolved:
            resolved.append(subset)
    if not resolved:
        raise ValueError("subsets must hold at least one subset.")
    return resolved


def _subset_costs(costs, subsets, n_sources):
    """Cost per row of each subset: additive vector, dict or callable."""
    if costs is None:
        costs = np.ones(n_sources)
    if callable(costs):
        values = [costs(subset) for subset in subsets]
    elif isinstance(costs, dict):
        table = {_check_subset(key, n_sources): value for key, value in costs.items()}
        missing = [subset for subset in subsets if subset not in table]
        if missing:
            raise ValueError(f"costs has no entry for the subsets {missing[:5]}.")
        values = [table[subset] for subset in subsets]
    else:
        per_source = np.asarray(costs, dtype=np.float64)
        if per_source.ndim != 1 or per_source.shape[0] != n_sources:
            raise ValueError(
                f"costs must hold one cost per source ({n_sources}: y and every "
                f"column of X), got shape {per_source.shape}; or pass a dict "
                "{subset: cost} or a callable(subset) -> cost."
            )
        values = [per_source[list(subset)].sum() for subset in subsets]
    values = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ValueError(
            "Every subset must cost a finite positive amount per row; got "
            f"{values[(~np.isfinite(values)) | (values <= 0)][:5]}."
        )
    return values


def _check_contrast(contrast, n_sources):
    if contrast is None:
        a = np.zeros(n_sources)
        a[0] = 1.0
        return a
    a = np.asarray(contrast, dtype=np.float64)
    if a.ndim != 1 or a.shape[0] != n_sources:
        raise ValueError(
            f"The contrast must hold one coefficient per source ({n_sources}: y "
            f"and every column of X), got shape {a.shape}."
        )
    if not np.all(np.isfinite(a)) or not np.any(a):
        raise ValueError("The contrast must be finite and not all zero.")
    return a


def _subset_informations(cov, subsets):
    """Stack of the embedded ``pinv(Sigma_II)``, shape (n_subsets, k, k)."""
    k = cov.shape[0]
    out = np.zeros((len(subsets), k, k))
    for s, subset in enumerate(subsets):
        idx = np.asarray(subset)
        out[s][np.ix_(idx, idx)] = np.linalg.pinv(cov[np.ix_(idx, idx)], hermitian=True)
    return out


def _pinv(M):
    return np.linalg.pinv(M, rcond=1e-12, hermitian=True)


def _in_range(M, S, a):
    return np.linalg.norm(M @ (S @ a) - a) <= 1e-7 * max(np.linalg.norm(a), 1e-300)


def _design_variance(information, a):
    """``a' pinv(M) a``, ``inf`` when ``a`` is outside the range of ``M``."""
    S = _pinv(information)
    if not _in_range(information, S, a):
        return math.inf
    return float(a @ S @ a)


def _optimal_weights(cov, design, a):
    """BLUE weights for a realised design.

    Returns ``(weights, S)``: ``{subset: lambda_I}`` and ``S = pinv(M)``;
    raises ``ValueError`` when the design cannot estimate ``a' E[Z]``.
    """
    subsets = [subset for subset, n in design.items() if n > 0]
    counts = np.array([design[subset] for subset in subsets], dtype=np.float64)
    Q = _subset_informations(cov, subsets)
    M = np.einsum("s,sij->ij", counts, Q)
    S = _pinv(M)
    if not _in_range(M, S, a):
        # e.g. y constant on the burn-in rows: a tiny ridge on the covariance
        # gives the limit of the BLUE (the plain mean of the observed values)
        ridge = 1e-10 * max(float(np.trace(cov)) / cov.shape[0], 1e-300)
        Q = _subset_informations(cov + ridge * np.eye(cov.shape[0]), subsets)
        M = np.einsum("s,sij->ij", counts, Q)
        S = _pinv(M)
        if _in_range(M, S, a):
            warn_user(
                "The covariance is singular along the contrast (a source with no "
                f"variance?); a ridge of {ridge:.3g} was added to it."
            )
    if not _in_range(M, S, a):
        raise ValueError(
            "The observed subsets cannot estimate the contrast without bias: a "
            "source with a non-zero coefficient (the gold y for the mean of y) is "
            "never observed, or the covariance is singular along the contrast."
        )
    Sa = S @ a
    weights = {}
    for s, subset in enumerate(subsets):
        idx = np.asarray(subset)
        weights[subset] = counts[s] * (Q[s][np.ix_(idx, idx)] @ Sa[idx])
    return weights, S


def _solve_multiplicative(A, M0, a, budget, max_iter, tol):
    """Multiplicative (Elfving / Silvey-Titterington) update on budget shares.

    ``t`` on the simplex, ``n_I = budget t_I / c_I``, ``A_I = Q_I / c_I``;
    ``t_I <- t_I g_I / sum_J t_J g_J`` with ``g_I = z' A_I z``, ``z = M^-1 a``.
    Stops when the equivalence-theorem gap ``max_I g_I / sum_J t_J g_J - 1``
    is below ``tol``.
    """
    n = A.shape[0]
    t = np.full(n, 1.0 / n)
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        M = M0 + budget * np.einsum("s,sij->ij", t, A)
        z = _pinv(M) @ a
        g = np.einsum("i,sij,j->s", z, A, z)
        mean_g = float(t @ g)
        if mean_g <= 0:
            break
        if g.max() <= (1.0 + tol) * mean_g:
            break
        t = t * g / mean_g
        t[t < 1e-14] = 0.0
        t /= t.sum()
    return t, n_iter


def _variance_of_shares(t, A, M0, a, budget):
    return _design_variance(M0 + budget * np.einsum("s,sij->ij", t, A), a)


def _solve_slsqp(A, M0, a, budget, max_iter, tol):
    from scipy.optimize import minimize

    n = A.shape[0]
    k = A.shape[1]
    ridge = 1e-10 * max(float(np.trace(A.sum(axis=0))) * budget / k, 1e-300)

    def objective(t):
        M = M0 + budget * np.einsum("s,sij->ij", t, A) + ridge * np.eye(k)
        z = np.linalg.solve(M, a)
        return float(a @ z), -budget * np.einsum("i,sij,j->s", z, A, z)

    # the objective is tiny (variance ~ 1/budget): rescale so SLSQP's tolerance
    # means something
    t0 = np.full(n, 1.0 / n)
    scale = objective(t0)[0]

    def scaled(t):
        value, grad = objective(t)
        return value / scale, grad / scale

    result = minimize(
        scaled,
        t0,
        jac=True,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * n,
        constraints=[{"type": "eq", "fun": lambda t: t.sum() - 1.0}],
        options={"maxiter": max_iter, "ftol": min(tol, 1e-10)},
    )
    t = np.clip(result.x, 0.0, None)
    return t / t.sum(), int(result.nit)


def _solve_cvxpy(Q, M0, a, costs, budget):
    try:
        import cvxpy as cp
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "solver='cvxpy' needs cvxpy: pip install 'sklearn-iclr26[inference]'."
        ) from exc
    n = cp.Variable(Q.shape[0], nonneg=True)
    # scale to unit budget so the solver's tolerances are relative
    M = M0 / budget + sum(n[s] * Q[s] for s in range(Q.shape[0]))
    problem = cp.Problem(cp.Minimize(cp.matrix_frac(a, M)), [costs @ n <= 1.0])
    problem.solve()
    if n.value is None:
        raise ValueError(f"cvxpy failed to solve the allocation: {problem.status}.")
    t = np.clip(np.asarray(n.value) * costs, 0.0, None)
    return t / t.sum(), 0


def _round_design(relaxed, Q, M0, a, costs, budget):
    """Round down, then spend what is left greedily (best variance drop per cost)."""
    counts = np.floor(relaxed + 1e-9).astype(np.int64)
    left = budget - float(costs @ counts)
    M = M0 + np.einsum("s,sij->ij", counts.astype(float), Q)
    while True:
        affordable = np.flatnonzero(costs <= left + 1e-12)
        if affordable.size == 0:
            break
        S = _pinv(M)
        if _in_range(M, S, a):
            z = S @ a
            gain = np.einsum("i,sij,j->s", z, Q[affordable], z) / costs[affordable]
            best = affordable[int(np.argmax(gain))]
        else:  # singular so far: pick the row that makes the variance smallest
            values = [_design_variance(M + Q[s], a) * costs[s] for s in affordable]
            best = affordable[int(np.argmin(values))]
        counts[best] += 1
        M = M + Q[best]
        left -= costs[best]
    return counts


def _burn_in_information(burn_in, cov, n_sources):
    if burn_in is None:
        return np.zeros((n_sources, n_sources)), {}
    if isinstance(burn_in, dict):
        design = {_check_subset(s, n_sources): float(v) for s, v in burn_in.items()}
        if any(v < 0 for v in design.values()):
            raise ValueError("burn_in counts must be non-negative.")
    else:
        design = {tuple(range(n_sources)): float(burn_in)}
    subsets = [s for s, v in design.items() if v > 0]
    if not subsets:
        return np.zeros((n_sources, n_sources)), design
    Q = _subset_informations(cov, subsets)
    counts = np.array([design[s] for s in subsets])
    return np.einsum("s,sij->ij", counts, Q), design


@validate_params(
    {
        "covariance": ["array-like"],
        "costs": ["array-like", dict, callable, None],
        "budget": [Interval(Real, 0, None, closed="neither")],
        "subsets": [StrOptions({"all"}), list, tuple, None],
        "a": ["array-like", None],
        "burn_in": [Interval(Integral, 0, None, closed="left"), dict, None],
        "solver": [StrOptions({"multiplicative", "slsqp", "cvxpy"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def multippi_allocate(
    covariance,
    costs,
    budget,
    subsets=None,
    a=None,
    burn_in=None,
    *,
    solver="multiplicative",
    max_iter=5000,
    tol=1e-6,
):
    """Budget-optimal number of rows per subset of sources (MultiPPI).

    Minimises the variance ``a' (M0 + sum_I n_I pinv(Sigma_II))^+ a`` of the
    best linear unbiased estimator of ``a' E[Z]`` over the numbers of rows
    ``n_I >= 0`` that observe subset ``I``, subject to ``sum_I c_I n_I <=
    budget`` (Cowen-Breen et al., ICLR 2026). ``M0`` is the information of
    rows already paid for (``burn_in``), reused by the estimator. The relaxed
    problem is solved, rounded down, and what is left of the budget is spent
    greedily on the best variance drop per unit cost.

    Without burn-in rows the optimal *budget shares* do not depend on the
    budget (the variance scales as ``1 / budget``); with them they do.

    Read more in the :ref:`User Guide <inference>`.

    Parameters
    ----------
    covariance : array-like of shape (k, k)
        Covariance of the ``k`` sources (for :class:`MultiPPIMeanEstimator`:
        ``[y, X columns]``).
    costs : array-like of shape (k,), dict, callable or None
        Cost of one row of each subset: one cost per source (additive: a row
        of ``I`` costs ``sum_{j in I} c_j``), a dict ``{subset: cost}`` (then
        ``subsets=None`` means the dict's keys) or a callable ``(subset) ->
        cost`` for non-additive costs (maximum latency, thinking budgets,
        agents x rounds). ``None`` means every source costs 1.
    budget : float
        Total budget, in the units of ``costs``; must be positive.
    subsets : "all", list of tuples or None, default=None
        Candidate subsets (tuples of source indices). ``None``/``"all"`` means
        every non-empty subset (at most 12 sources). Special cases: ``[(0,)]``
        is classical sampling; ``[(0, j), (j,)]`` is PPI++ with proxy ``j``;
        ``[(0, 1, ..., k-1), (1, ..., k-1)]`` is vector PPI++; a chain of nested
        subsets is cascaded PPI.
    a : array-like of shape (k,) or None, default=None
        Contrast; ``None`` is ``e_0`` (the mean of source 0).
    burn_in : int, dict or None, default=None
        Rows already observed and reused by the estimator: an int is a number
        of fully observed rows; a dict ``{subset: count}``.
    solver : {"multiplicative", "slsqp", "cvxpy"}, default="multiplicative"
        ``"multiplicative"``: the dependency-free multiplicative design update
        (stops at an equivalence-theorem gap ``tol``); ``"slsqp"``: scipy's
        SLSQP on the budget shares (an oracle); ``"cvxpy"``: the convex
        ``matrix_frac`` program (needs the ``inference`` extra).
    max_iter : int, default=5000
        Iteration cap of the multiplicative and SLSQP solvers.
    tol : float, default=1e-6
        Relative optimality gap of the multiplicative solver.

    Returns
    -------
    allocation : :class:`~sklearn.utils.Bunch`
        ``counts`` (``{subset: int}``, rounded, only the subsets used),
        ``relaxed_counts`` (``{subset: float}``), ``budget_shares``
        (``{subset: share of the budget}`` of the relaxed plan), ``variance``
        (of the rounded design, burn-in included), ``relaxed_variance``,
        ``cost`` (spent by the rounded design), ``subsets`` (the candidates),
        ``n_iter``.

    Examples
    --------
    PPI++ with one proxy correlated at 0.8, gold cost 1 and proxy cost 0.01:

    >>> import numpy as np
    >>> from sklearn_iclr26.inference import multippi_allocate
    >>> cov = np.array([[1.0, 0.8], [0.8, 1.0]])
    >>> plan = multippi_allocate(cov, [1.0, 0.01], budget=1000,
    ...                          subsets=[(0, 1), (1,)])
    >>> ratio = plan.relaxed_counts[(1,)] / plan.relaxed_counts[(0, 1)]
    >>> round(ratio, 2)
    12.33
    """
    cov = _check_covariance(covariance)
    k = cov.shape[0]
    candidates = _resolve_subsets(subsets, k, costs)
    c = _subset_costs(costs, candidates, k)
    a = _check_contrast(a, k)
    M0, _ = _burn_in_information(burn_in, cov, k)
    Q = _subset_informations(cov, candidates)
    usable = np.isfinite([_design_variance(M0 + Q.sum(axis=0) * budget, a)])[0]
    if not usable:
        raise ValueError(
            "No allocation over these subsets can estimate the contrast: a source "
            "with a non-zero coefficient (the gold source for a mean) is in no "
            "candidate subset and not in the burn-in."
        )
    A = Q / c[:, None, None]
    if solver == "multiplicative":
        t, n_iter = _solve_multiplicative(A, M0, a, budget, max_iter, tol)
    elif solver == "slsqp":
        t, n_iter = _solve_slsqp(A, M0, a, budget, max_iter, tol)
    else:
        t, n_iter = _solve_cvxpy(Q, M0, a, c, budget)
    t = np.where(t > 1e-9 * t.max(), t, 0.0)
    t /= t.sum()
    relaxed = budget * t / c
    counts = _round_design(relaxed, Q, M0, a, c, budget)
    information = M0 + np.einsum("s,sij->ij", counts.astype(float), Q)
    return Bunch(
        counts={s: int(n) for s, n in zip(candidates, counts) if n > 0},
        relaxed_counts={s: float(n) for s, n in zip(candidates, relaxed) if n > 0},
        budget_shares={s: float(v) for s, v in zip(candidates, t) if v > 0},
        variance=_design_variance(information, a),
        relaxed_variance=_variance_of_shares(t, A, M0, a, budget),
        cost=float(c @ counts),
        subsets=candidates,
        n_iter=n_iter,
    )
