"""Optimal-transport conformal regions around a point regressor (OT-CP, OT-CP+)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from numbers import Integral

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.special import logsumexp
from scipy.stats import norm, qmc
from sklearn.utils.validation import check_scalar

from sklearn_iclr26.conformal._base_regressor import (
    BaseResidualRegion,
)
from sklearn_iclr26.utils._persistence import dict_from_pairs, pairs_from_dict
from sklearn_iclr26.utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _num_samples,
)
from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress

__all__ = ["OTCPRegressor", "reference_grid", "transport_potentials"]

# inflation of the Gaussian proposal of the importance-sampling volume
_PROPOSAL_SCALE = 1.5


def reference_grid(n, d, random_state):
    """``n`` points of the spherical uniform law: radii ``linspace(0, 1, n)``.

    Directions are scrambled Halton points mapped through the Gaussian
    quantile and normalized (the grid of Thurin et al.), so the empirical law
    of the grid approaches "uniform direction, radius uniform on [0, 1]".
    """
    radii = np.linspace(0.0, 1.0, n)
    if d == 1:
        signs = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
        return (radii * signs)[:, None]
    sampler = qmc.Halton(d=d, scramble=True, seed=random_state)
    z = norm.ppf(np.clip(sampler.random(n + 1)[1:], 1e-12, 1 - 1e-12))
    z /= np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-300)
    return z * radii[:, None]


def transport_potentials(points, grid):
    """Exact discrete OT of equal-size uniform point sets, with its potential.

    With uniform masses on ``n`` points each, optimal transport for the
    squared distance is an assignment problem, solved exactly by
    :func:`scipy.optimize.linear_sum_assignment`. The out-of-sample rank map
    needs a potential ``psi`` on the grid such that
    ``rank(s) = grid[argmax_j <grid_j, s> - psi_j]`` sends every point to its
    assigned grid point. Such a ``psi`` satisfies
    ``psi_j >= psi_k + <grid_j - grid_k, s_k>`` (``s_k`` the point assigned
    to ``grid_k``); the optimal assignment is cyclically monotone, so this
    graph has no positive cycle and longest-path potentials exist. The
    lowest and the highest feasible potentials (with ``psi_0 = 0``) are
    computed by Bellman-Ford relaxations (vectorized, at most ``n`` rounds
    each) and their midpoint is returned: it keeps every point strictly
    inside its own cell, away from ties.

    Parameters
    ----------
    points : ndarray of shape (n, d)
        Source points (residuals).
    grid : ndarray of shape (n, d)
        Target points (the reference grid).

    Returns
    -------
    assignment : ndarray of shape (n,)
        ``assignment[i]`` is the grid index matched to ``points[i]``.
    psi : ndarray of shape (n,)
        Potential on the grid (defined up to a constant; ``min psi = 0``).
    """
    if points.shape[1] == 1:
        return _transport_potentials_1d(points[:, 0], grid[:, 0])
    return _transport_potentials_exact(points, grid)


def _transport_potentials_1d(points, grid):
    """:func:`transport_potentials` in one dimension, in ``O(n log n)``.

    In 1-D the optimal assignment is the sorted order (the ``i``-th smallest
    point to the ``i``-th smallest grid value), and the feasible potentials
    are bounded by the constraints between neighbours in that order alone:
    ``psi`` rises from grid value ``g_j`` to ``g_{j+1}`` by between ``(g_{j+1}
    - g_j) s_j`` and ``(g_{j+1} - g_j) s_{j+1}``, ``s`` the sorted points. The
    lowest and highest potentials with ``psi = 0`` at grid index 0 are these
    chains, and their midpoint puts the cell boundary between grid values
    ``j`` and ``j + 1`` at ``(s_j + s_{j+1}) / 2``: the same potential as the
    general path (assignment problem and Bellman-Ford, ``O(n^3)``), up to
    rounding.
    """
    n = points.shape[0]
    g_order = np.argsort(grid, kind="stable")
    s_order = np.argsort(points, kind="stable")
    assignment = np.empty(n, dtype=np.intp)
    assignment[s_order] = g_order
    g, s = grid[g_order], points[s_order]
    step = np.diff(g)
    low_inc, high_inc = step * s[:-1], step * s[1:]
    c = int(np.flatnonzero(g_order == 0)[0])  # sorted position of index 0
    low = np.zeros(n)
    high = np.zeros(n)
    # above index 0: add the increments; below: subtract them, walking down
    low[c + 1 :] = np.cumsum(low_inc[c:])
    high[c + 1 :] = np.cumsum(high_inc[c:])
    low[:c] = -np.cumsum(high_inc[:c][::-1])[::-1]
    high[:c] = -np.cumsum(low_inc[:c][::-1])[::-1]
    psi_sorted = 0.5 * (low + high)
    psi = np.empty(n)
    psi[g_order] = psi_sorted
    return assignment, psi - psi.min()


def _transport_potentials_exact(points, grid):
    """:func:`transport_potentials` in any dimension (assignment, Bellman-Ford)."""
    n = points.shape[0]
    gram = points @ grid.T
    _, assignment = linear_sum_assignment(-gram)
    owner = np.empty(n, dtype=np.intp)
    owner[assignment] = np.arange(n)
    # W[k, j] = <grid_j - grid_k, s_owner(k)>: psi_j >= psi_k + W[k, j]
    g = gram[owner]
    W = g - np.diag(g)[:, None]
    tol = 1e-12 * max(1.0, float(np.abs(W).max(initial=0.0)))
    # lowest feasible potential with psi_0 = 0: longest paths from node 0
    low = W[0].copy()
    for _ in range(n + 1):
        new = np.maximum(low, np.max(low[:, None] + W, axis=0))
        new[0] = 0.0
        if np.all(new - low <= tol):
            break
        low = new
    # highest: psi_j <= -(longest path from j to node 0)
    to0 = W[:, 0].copy()
    for _ in range(n + 1):
        new = np.maximum(to0, np.max(W + to0[None, :], axis=1))
        new[0] = 0.0
        if np.all(new - to0 <= tol):
            break
        to0 = new
    # both are feasible; their midpoint lies inside the feasible polytope, so
    # each point is strictly inside its own Laguerre cell (no argmax ties)
    psi = 0.5 * (low - to0)
    return assignment, psi - psi.min()


def _interval_1d(grid, psi, threshold):
    """The standardized interval ``{s : |R(s)| <= threshold}`` of a 1-D map.

    In one dimension the rank map ``grid[argmax_j g_j s - psi_j]`` is
    non-decreasing in ``s``, and every grid line owns a cell (each holds its
    assigned point strictly inside), so the cells follow the sorted grid and
    cell ``j`` ends where lines ``j`` and ``j + 1`` cross. The region is the
    union of the cells of the grid points with ``|g_j| <= threshold``: an
    interval from the left end of the first such cell to the right end of the
    last (infinite where that cell is the first or last one).
    """
    order = np.argsort(grid[:, 0], kind="stable")
    g, p = grid[order, 0], psi[order]
    breaks = np.diff(p) / np.diff(g)  # breaks[j]: cell j / cell j + 1
    inside = np.flatnonzero(np.abs(g) <= threshold)
    if inside.size == 0:  # no grid point that small: an empty region
        return np.nan, np.nan
    lo, hi = inside[0], inside[-1]
    lower = -np.inf if lo == 0 else breaks[lo - 1]
    upper = np.inf if hi == g.shape[0] - 1 else breaks[hi]
    return lower, upper


def _ranks(S, grid, psi):
    """Rank map ``grid[argmax_j <grid_j, s> - psi_j]`` for the rows of ``S``.

    In 1-D by a binary search among the cells' boundaries (the lines'
    crossings in the sorted grid; each line owns a cell), the same map in
    ``O(log n)`` per row.
    """
    if grid.shape[1] == 1 and grid.shape[0] > 1:
        order = np.argsort(grid[:, 0], kind="stable")
        g, p = grid[order, 0], psi[order]
        breaks = np.diff(p) / np.diff(g)
        if np.all(np.diff(breaks) > 0):
            return grid[order[np.searchsorted(breaks, S[:, 0], side="left")]]
    return grid[np.argmax(S @ grid.T - psi, axis=1)]


class OTCPRegressor(BaseResidualRegion):
    """Optimal-transport conformal regions around a point regressor.

    OT-CP (``transport="global"``, Thurin, Nadjahi and Boyer, ICML 2025):
    the residuals ``s = y - yhat(x)`` (standardized per output) of the
    training part are matched by exact optimal transport to a grid of the
    spherical uniform law (uniform direction, radius uniform on [0, 1]). The
    multivariate rank ``R(s)`` is the grid point of the Laguerre cell of
    ``s`` (the out-of-sample extension by the OT potential); the score
    ``||R(s)||`` is conformalized on the calibration part, and the region is
    ``{y : ||R(y - yhat(x))|| <= q}``, the same shape at every ``x``.

    OT-CP+ (``transport="local"``): the OT is solved, for each ``x``, between
    the residuals of its ``n_neighbors`` nearest training rows and a grid of
    as many points, so the region's shape follows the local residual law.

    Scores are a fixed function of ``(x, y)`` given the training part, so
    split-conformal marginal coverage holds. Uniform masses on equal-size
    sets make the OT an assignment problem: no dependency beyond SciPy.

    There is no cross-conformal (CV+ / jackknife+) mode: CV+ needs the region
    of each fold model to be a centre plus a scaled score ball, and the OT-CP
    region is a union of Laguerre cells of a transport fitted per fold, with
    no order-statistic form; use the split (``calibration_size``) mode.

    Read more in the :ref:`User Guide <cvqr>`.

    Parameters
    ----------
    %(estimator_parameter)s
    confidence_level : float, default=0.9
        Coverage level of the regions, in (0, 1).
    cv : int or None, default=5
        Folds of the cross-fitted training residuals that the transport is
        fitted on (``estimator_`` is then fitted on all training rows).
        ``None`` uses in-sample residuals.
    transport : {"global", "local"}, default="global"
        OT-CP (one transport of all training residuals) or OT-CP+ (one per
        ``x``, on its nearest neighbours' residuals).
    n_neighbors : int, default=100
        Neighbours of ``transport="local"`` (clipped to the training size,
        with a warning).
    max_transport_samples : int, default=2000
        ``transport="global"``: at most this many training residuals (a
        random subset) enter the assignment problem, whose cost grows as the
        cube of its size.
    transformer : transformer or None, default=None
        Features of the neighbour search of ``transport="local"``. Cloned and
        fitted on the training part. ``None`` means the fitted steps of
        ``estimator`` before its final step when ``estimator`` is a
        ``Pipeline``, else ``X`` itself (which must then be numeric).
    calibration_size : float or int, default=0.25
        Fraction (float in (0, 1)) or number (int) of samples held out for
        calibration. With a fitted model (a ``FrozenEstimator``, or
        :meth:`calibrate`) the split stays: the other rows estimate the
        region's transport, which must be independent of the calibration rows
        (0.25 measured as good a default as 0.5 or 0.75 on enb, jura and
        slump, see the User Guide; use 0.5 on a few dozen rows).
    random_state : int, RandomState instance or None, default=None
        Seeds the split, the folds, the subset and the grid (and the
        regressor's ``random_state`` parameters that are ``None``).
    verbose : int, default=0
        If positive, print the fitting steps.

    Attributes
    ----------
    estimator_ : regressor
        The point regressor fitted on all training rows.
    %(features_in_attributes)s
    n_outputs_ : int
        Number of outputs ``d``.
    residual_scale_ : ndarray of shape (n_outputs,)
        Standard deviations of the training residuals (the OT runs on
        residuals divided by them).
    grid_ : ndarray of shape (n_grid, n_outputs)
        The reference grid.
    potential_ : ndarray of shape (n_grid,)
        The OT potential of the grid (``transport="global"``).
    n_neighbors_ : int
        Neighbours used by ``transport="local"``.
    calibration_scores_ : ndarray of shape (n_calibration_samples,)
        Sorted rank norms of the calibration residuals.
    n_calibration_samples_ : int
        Number of calibration samples.
    threshold_ : float
        Conformal threshold on ``||R||`` at ``confidence_level`` (``inf``
        when the calibration set is too small for the level).

    See Also
    --------
    CVQRRegressor : Neural conditional transport maps (the conditional
        version of the same idea).
    EllipsoidRegressor : Residual-normalized (local) ellipsoids.

    Notes
    -----
    Region volumes are estimated by importance sampling from a Gaussian
    fitted to the (local) training residuals with its scale inflated by 1.5:
    ``vol = E_g[1{s in region} / g(s)]``, deterministic (seeded draws). The
    regions are unions of Laguerre cells of the grid points with
    ``||grid_j|| <= q``; cells of the outermost grid points are unbounded, so
    a threshold of 1 (the largest radius) gives an unbounded region whose
    estimate is only a lower bound.

    References
    ----------
    .. [1] Thurin, Nadjahi and Boyer, "Optimal Transport-based Conformal
       Prediction", ICML 2025, arXiv:2501.18991.
    .. [2] Hallin, del Barrio, Cuesta-Albertos and Matran, "Distribution and
       quantile functions, ranks and signs in dimension d: a measure
       transportation approach", Annals of Statistics, 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.conformal import OTCPRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(400, 3))
    >>> y = X[:, :2] + rng.normal(size=(400, 2))
    >>> otcp = OTCPRegressor(random_state=0).fit(X, y)
    >>> otcp.contains(X[:4], y[:4]).shape
    (4,)
    >>> local = OTCPRegressor(transport="local", n_neighbors=50,
    ...                       random_state=0).fit(X, y)
    >>> local.region_log_volume(X[:2]).shape
    (2,)
    """

    _parameter_constraints: dict = {
        **BaseResidualRegion._parameter_constraints,
        "estimator": [HasMethods(["fit", "predict"]), None],
        "cv": [Interval(Integral, 2, None, closed="left"), None],
        "transport": [StrOptions({"global", "local"})],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "max_transport_samples": [Interval(Integral, 1, None, closed="left")],
        "transformer": [HasMethods(["fit", "transform"]), None],
    }

    def __init__(
        self,
        estimator=None,
        *,
        confidence_level=0.9,
        cv=5,
        transport="global",
        n_neighbors=100,
        max_transport_samples=2000,
        transformer=None,
        calibration_size=0.25,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    # ---------------------------------------------------------------- fit
    def _fit_region(self, X, R, random_state):
        scale = R.std(axis=0)
        self.residual_scale_ = np.where(scale > 1e-12, scale, 1.0)
        S = R / self.residual_scale_
        d, n_train = S.shape[1], S.shape[0]
        # log-volumes by threshold, filled by region_log_volume (fitted state:
        # a refit starts a new one)
        self._volume_cache = {}
        if self.transport == "global":
            m = min(n_train, self.max_transport_samples)
            rows = np.sort(random_state.permutation(n_train)[:m])
            self.grid_ = reference_grid(m, d, random_state)
            self._transport_points = S[rows]
            _, self.potential_ = transport_potentials(S[rows], self.grid_)
            log_progress(self, f"exact OT of {m} residuals to the reference grid")
            return
        self._fit_neighbours(
            X,
            S,
            "OTCPRegressor(transport='local') has {n_train} training rows, "
            "not more than n_neighbors={n_neighbors}: every "
            "neighbourhood is the whole training part, so OT-CP+ equals "
            "OT-CP on n_neighbors_={n_neighbors_} residuals. Use more "
            "data or a smaller n_neighbors.",
        )
        self.grid_ = reference_grid(self.n_neighbors_, d, random_state)
        log_progress(self, f"local OT on {self.n_neighbors_} neighbours per x")

    def _row_bytes(self):
        d = getattr(self, "n_outputs_", 1)
        k = getattr(self, "grid_", np.zeros((1, 1))).shape[0]
        return 8 * (4 * k * (d + 2) + 64)

    # ------------------------------------------------------------- scores
    def _residual_scores(self, X, R):
        S = R / self.residual_scale_
        if self.transport == "global":
            return np.linalg.norm(_ranks(S, self.grid_, self.potential_), axis=1)
        local = self._neighbour_residuals(X)
        out = np.empty(S.shape[0])
        for i in range(S.shape[0]):
            _, psi = transport_potentials(local[i], self.grid_)
            out[i] = np.linalg.norm(_ranks(S[i : i + 1], self.grid_, psi))
        return out

    def _contains_batch(self, X, y, threshold):
        return self._residual_scores(X, y - self._point(X)) <= threshold

    def predict_region(self, X, confidence_level=None):
        """Interval endpoints of a single-target fit (``d = 1``).

        In one dimension the OT rank map is monotone, so the region is an
        interval with exact endpoints (the crossings of the potential's
        lines, see :meth:`predict_interval`). For ``d >= 2`` the OT-CP region
        is a union of Laguerre cells with no closed-form boundary: use
        :meth:`contains` and :meth:`region_log_volume`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        confidence_level : float or sequence of float, default=None
            Level of the regions in (0, 1); ``None`` uses the constructor's.
            A sequence of ``L`` levels adds a trailing level axis (nested
            regions, each equal to a call at that level).

        Returns
        -------
        boundary : ndarray of shape (n_samples, 2, 1) or (n_samples, 2, 1, L)
            The interval ``[lower, upper]`` (infinite where the threshold is).
        """
        if getattr(self, "n_outputs_", 1) != 1:
            raise ValueError(
                f"OTCPRegressor.predict_region needs d = 1, got d={self.n_outputs_}: "
                "for d >= 2 the region is a union of Laguerre cells with no "
                "closed-form boundary; use contains() and region_log_volume()."
            )

        def interval(Xb, threshold):
            center = self._point(Xb)
            n = center.shape[0]
            if not np.isfinite(threshold):
                return self._infinite_boundary(n, 2)
            if self.transport == "global":
                bounds = np.tile(
                    _interval_1d(self.grid_, self.potential_, threshold), (n, 1)
                )
            else:
                local = self._neighbour_residuals(Xb)
                bounds = np.empty((n, 2))
                for i in range(n):
                    _, psi = transport_potentials(local[i], self.grid_)
                    bounds[i] = _interval_1d(self.grid_, psi, threshold)
            with np.errstate(invalid="ignore"):
                return (center + self.residual_scale_ * bounds)[:, :, None]

        return self._predict_region(X, confidence_level, interval)

    # ------------------------------------------------------------- volume
    def _log_volume_one(self, points, psi, threshold, n_samples):
        """Importance-sampling log-volume (standardized units) of one region."""
        d = points.shape[1]
        mean = points.mean(axis=0)
        cov = np.atleast_2d(np.cov(points, rowvar=False)) if len(points) > 1 else None
        if cov is None or not np.all(np.isfinite(cov)):
            cov = np.eye(d)
        cov = cov + 1e-9 * max(np.trace(cov) / d, 1e-12) * np.eye(d)
        chol = np.linalg.cholesky(cov) * _PROPOSAL_SCALE
        z = np.random.RandomState(0).normal(size=(n_samples, d))
        S = mean + z @ chol.T
        log_g = (
            -0.5 * (z**2).sum(1)
            - 0.5 * d * math.log(2 * math.pi)
            - np.log(np.diag(chol)).sum()
        )
        inside = np.linalg.norm(_ranks(S, self.grid_, psi), axis=1) <= threshold
        if not inside.any():
            return -np.inf
        return float(logsumexp(-log_g[inside]) - math.log(n_samples))

    def _log_volume_batch(self, X, threshold, n_samples=1024):
        n = _num_samples(X)
        if self.transport == "global":
            key = (float(threshold), n_samples)
            cache = self._volume_cache
            if key not in cache:
                cache[key] = self._log_volume_one(
                    self._transport_points, self.potential_, threshold, n_samples
                )
            values = np.full(n, cache[key])
        else:
            local = self._neighbour_residuals(X)
            values = np.empty(n)
            for i in range(n):
                _, psi = transport_potentials(local[i], self.grid_)
                values[i] = self._log_volume_one(local[i], psi, threshold, n_samples)
        return values + np.sum(np.log(self.residual_scale_))

    def _volume_row_bytes(self, n_samples=1024):
        k = self.grid_.shape[0]
        return 8 * n_samples * (k + 2 * self.n_outputs_)

    def region_log_volume(self, X, confidence_level=None, n_samples=1024):
        """Natural log-volume of the region at each ``x`` (units of ``y``).

        Importance sampling from a Gaussian fitted to the (neighbours')
        training residuals, scale inflated by 1.5; seeded, so deterministic.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        confidence_level : float or sequence of float, default=None
            Level of the regions in (0, 1); ``None`` uses the constructor's.
            A sequence of ``L`` levels adds a trailing level axis (nested
            regions, each equal to a call at that level).
        n_samples : int, default=1024
            Monte-Carlo points per region.

        Returns
        -------
        log_volume : ndarray of shape (n_samples,)
            Log-volumes (``inf`` where the threshold is infinite, ``-inf``
            when no Monte-Carlo point falls in the region). Divide by
            ``n_outputs_`` for the per-dimension (log V)/d.
        """
        check_scalar(n_samples, "n_samples", Integral, min_val=1)
        return self._region_volume(X, confidence_level, n_samples=n_samples)

    def __getstate__(self):
        # skops holds no tuple keys: the volume cache as (key, value) pairs
        return pairs_from_dict(super().__getstate__(), ("_volume_cache",))

    def __setstate__(self, state):
        super().__setstate__(dict_from_pairs(state, ("_volume_cache",)))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self.transport == "local":
            tags.input_tags.sparse = False
            tags.input_tags.allow_nan = tags.input_tags.allow_nan and (
                self.transformer is not None
            )
        return tags
