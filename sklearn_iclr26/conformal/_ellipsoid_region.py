"""Residual-normalized ellipsoidal conformal regions (global or local covariance)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from numbers import Integral, Real

import numpy as np

from sklearn_iclr26.conformal._base_regressor import (
    CONFORMAL_CV_CONSTRAINT,
    BaseResidualRegion,
    boundary_directions,
    log_unit_ball_volume,
)
from sklearn_iclr26.conformal._shift_calibration import SHIFT_REGRESSOR_CONSTRAINTS
from sklearn_iclr26.utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _num_samples,
)
from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress

__all__ = ["EllipsoidRegressor"]


class EllipsoidRegressor(BaseResidualRegion):
    """Split-conformal ellipsoids ``{y : ||Sigma(x)^(-1/2) (y - yhat(x))|| <= q}``.

    With ``covariance="global"``, ``Sigma`` is the covariance of the training
    residuals (same ellipse at every ``x``). With ``covariance="local"`` (the
    "ELL" baseline of Messoudi et al.), ``Sigma(x) = shrinkage * Sigma_kNN(x)
    + (1 - shrinkage) * Sigma_global``, where ``Sigma_kNN(x)`` is the
    covariance of the training residuals of the ``n_neighbors`` nearest
    training points (in standardized feature space). The Mahalanobis norm is
    conformalized by split conformal, so marginal coverage holds in both
    cases.

    Read more in the :ref:`User Guide <cvqr>`.

    Parameters
    ----------
    %(estimator_parameter)s
    confidence_level : float, default=0.9
        Coverage level of the regions, in (0, 1).
    cv : int or None, default=5
        Folds of the cross-fitted residuals the covariances are estimated
        from: each training row's residual comes from a clone of
        ``estimator`` fitted on the other folds, and ``estimator_`` is then
        fitted on all training rows (used for the calibration and the
        regions). ``None`` uses in-sample residuals, which a flexible
        regressor shrinks (it nearly interpolates its own rows).
    covariance : {"global", "local"}, default="global"
        Covariance model of the residuals.
    n_neighbors : int, default=100
        Neighbours of the local covariance. With at most ``n_neighbors``
        training rows every neighbourhood is the whole training part, the
        local covariance is the global one, and a warning says so.
    shrinkage : float, default=0.95
        Weight of the local covariance in the mixture.
    transformer : transformer or None, default=None
        Features of the neighbour search of ``covariance="local"`` (the
        ellipsoid computes on ``X`` itself there). Cloned and fitted on the
        training part. ``None`` means the fitted steps of ``estimator``
        before its final step when ``estimator`` is a ``Pipeline``, else
        ``X`` itself (which must then be numeric).
    calibration_size : float or int, default=0.25
        Fraction (float in (0, 1)) or number (int) of samples held out for
        calibration. With a fitted model (a ``FrozenEstimator``, or
        :meth:`calibrate`) the split stays: the other rows estimate the
        region's covariance, which must be independent of the calibration rows
        (0.25 measured as good a default as 0.5 or 0.75 on enb, jura and
        slump, see the User Guide; use 0.5 on a few dozen rows).
    conformal_cv : "split", int or CV splitter, default="split"
        ``"split"``: split conformal on ``calibration_size`` of the rows
        (coverage at least ``confidence_level``). An int ``K`` (shuffled
        ``KFold``, seeded by ``random_state``) or a splitter whose test folds
        partition the rows (``KFold``, ``LeaveOneOut``...): **CV+**
        (**jackknife+** with ``LeaveOneOut``; Barber, Candès, Ramdas and
        Tibshirani, 2021), for **one target only**: the point model and the
        residual scale ``s_k(x)`` (global, or of the neighbours with
        ``covariance="local"``) are refit on each fold's training rows, every
        row's normalized residual ``r_i`` is out of fold, and the interval at
        ``x`` is the order statistics of ``mu_k(i)(x) -+ s_k(i)(x) r_i``.
        Guarantee (``alpha = 1 - confidence_level``, ``n`` rows): coverage at
        least ``1 - 2 alpha`` for jackknife+, at least ``1 - 2 alpha - min(2
        (1 - 1/K) / (n/K + 1), (1 - K/n) / (K + 1))`` for CV+ with ``K`` folds;
        in practice usually near ``1 - alpha``. With several targets the CV+
        set is a count over ellipsoids of different centres, not an
        ellipsoid, and fit raises: use ``"split"``. ``calibration_size`` is
        then unused, ``threshold_`` is the rank of the order statistic,
        ``predict`` uses a model fitted on all rows. A ``FrozenEstimator``
        cannot be refit: use ``"split"``.
    %(shift_parameters)s
    random_state : int, RandomState instance or None, default=None
        Seeds the split (and the regressor's ``random_state`` parameters that
        are ``None``).
    verbose : int, default=0
        If positive, print the fitting steps.

    Attributes
    ----------
    estimator_ : regressor
        The fitted point regressor (on all rows with ``conformal_cv``).
    estimators_ : list of regressors
        The point models of the folds; only with a cross-conformal
        ``conformal_cv``.
    %(features_in_attributes)s
    n_outputs_ : int
        Number of outputs ``d``.
    covariance_ : ndarray of shape (n_outputs, n_outputs)
        Global covariance of the (cross-fitted) training residuals.
    n_neighbors_ : int
        Neighbours used by ``covariance="local"`` (``n_neighbors`` clipped to
        the training size).
    calibration_scores_ : ndarray of shape (n_calibration_samples,)
        Sorted Mahalanobis norms of the calibration residuals.
    n_calibration_samples_ : int
        Number of calibration samples.
    threshold_ : float
        Conformal threshold (Mahalanobis radius) at ``confidence_level``
        (``inf`` when the calibration set is too small for the level); with a
        cross-conformal ``conformal_cv``, the rank of the CV+ order statistic.
    %(shift_attributes)s

    See Also
    --------
    CVQRRegressor : Adaptive regions from neural optimal transport.
    BonferroniBoxRegressor : Coordinate-wise box.

    References
    ----------
    .. [1] Messoudi, Destercke and Rousseau, "Ellipsoidal conformal inference
       for multi-target regression", COPA 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.conformal import EllipsoidRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = X[:, :2] + rng.normal(size=(300, 2))
    >>> ell = EllipsoidRegressor(
    ...     covariance="local", n_neighbors=50, random_state=0).fit(X, y)
    >>> ell.region_log_volume(X[:2]).shape
    (2,)
    """

    _parameter_constraints: dict = {
        **BaseResidualRegion._parameter_constraints,
        "estimator": [HasMethods(["fit", "predict"]), None],
        "cv": [Interval(Integral, 2, None, closed="left"), None],
        "covariance": [StrOptions({"global", "local"})],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "shrinkage": [Interval(Real, 0, 1, closed="both")],
        "transformer": [HasMethods(["fit", "transform"]), None],
        "conformal_cv": CONFORMAL_CV_CONSTRAINT,
        **SHIFT_REGRESSOR_CONSTRAINTS,
    }

    def __init__(
        self,
        estimator=None,
        *,
        confidence_level=0.9,
        cv=5,
        covariance="global",
        n_neighbors=100,
        shrinkage=0.95,
        transformer=None,
        calibration_size=0.25,
        conformal_cv="split",
        shift=None,
        shift_estimator=None,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    @staticmethod
    def _cov(R):
        d = R.shape[1]
        if R.shape[0] < 2:
            cov = np.eye(d)
        else:
            cov = np.atleast_2d(np.cov(R, rowvar=False))
        ridge = 1e-8 * max(np.trace(cov) / d, 1e-12)
        return cov + ridge * np.eye(d)

    def _fit_region(self, X, R, random_state):
        self.covariance_ = self._cov(R)
        if self.covariance != "local":
            return
        self._fit_neighbours(
            X,
            R,
            "EllipsoidRegressor(covariance='local') has {n_train} training "
            "rows, not more than n_neighbors={n_neighbors}: every "
            "neighbourhood is the whole training part, so the local "
            "covariance used (n_neighbors_={n_neighbors_}) equals the "
            "global one. Use more data or a smaller n_neighbors.",
        )
        log_progress(self, f"local covariance from {self.n_neighbors_} neighbours")

    def _row_bytes(self):
        d = getattr(self, "n_outputs_", 1)
        k = getattr(self, "n_neighbors_", 1) if self.covariance == "local" else 1
        extra = self._cross_row_bytes() if self._cross_conformal() else 0
        return 8 * (4 * k * d + 4 * d * d + 64) + extra

    # ------------------------------------------------------ cross-conformal
    def _check_cross_conformal(self):
        if self.n_outputs_ != 1:
            raise ValueError(
                f"EllipsoidRegressor(conformal_cv={self.conformal_cv!r}) needs a "
                f"single target, got {self.n_outputs_}: with several targets the "
                "CV+ set is a count over ellipsoids of different centres, not an "
                "ellipsoid. Use conformal_cv='split'."
            )

    def _center_scale(self, X):
        scale = np.sqrt(self._covariances(X)[:, 0, 0])[:, None]
        return self._point(X), scale

    def _threshold_at(self, confidence_level, mass=None):
        if self._cross_conformal():
            return self._cross_rank(confidence_level)
        return super()._threshold_at(confidence_level, mass)

    def _covariances(self, X):
        n, d = _num_samples(X), self.n_outputs_
        if self.covariance == "global":
            return np.broadcast_to(self.covariance_, (n, d, d))
        local = self._neighbour_residuals(X)  # (n, k, d)
        centered = local - local.mean(axis=1, keepdims=True)
        k = local.shape[1]
        cov_local = np.einsum("nki,nkj->nij", centered, centered) / max(k - 1, 1)
        lam = self.shrinkage
        return lam * cov_local + (1 - lam) * self.covariance_[None]

    def _mahalanobis(self, X, R):
        chol = np.linalg.cholesky(self._covariances(X))
        z = np.linalg.solve(chol, R[..., None])[..., 0]
        return np.linalg.norm(z, axis=1)

    def _residual_scores(self, X, R):
        return self._mahalanobis(X, R)

    def _contains_batch(self, X, y, threshold):
        if self._cross_conformal():
            return self._cross_contains(X, y, threshold)
        return self._mahalanobis(X, y - self._point(X)) <= threshold

    def _log_volume_batch(self, X, threshold):
        if self._cross_conformal():
            return self._cross_log_volume(X, threshold)
        d = self.n_outputs_
        logdet = np.linalg.slogdet(self._covariances(X))[1]
        # threshold 0 (a constant or perfectly predicted target): volume 0
        log_radius = math.log(threshold) if threshold > 0 else -math.inf
        return log_unit_ball_volume(d) + d * log_radius + 0.5 * logdet

    def predict_region(self, X, confidence_level=None, n_points=100):
        """Ellipse boundary (``d = 2``) or interval endpoints (``d = 1``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        confidence_level : float or sequence of float, default=None
            Level of the regions in (0, 1); ``None`` uses the constructor's.
            A sequence of ``L`` levels adds a trailing level axis (nested
            regions, each equal to a call at that level).
        n_points : int, default=100
            Number of boundary points for ``d = 2``.

        Returns
        -------
        boundary : ndarray of shape (n_samples, n_points, 2) or (n_samples, 2, 1)
            Boundary points (infinite where the threshold is).
        """

        def boundary(Xb, threshold):
            directions = boundary_directions(self.n_outputs_, n_points)
            center = self._point(Xb)
            if not np.isfinite(threshold):
                return self._infinite_boundary(center.shape[0], len(directions))
            if self._cross_conformal():  # one target: the CV+ interval
                return np.stack(self._cross_bounds(Xb, threshold), axis=1)
            chol = np.linalg.cholesky(self._covariances(Xb))
            offsets = threshold * np.einsum("nij,kj->nki", chol, directions)
            return center[:, None, :] + offsets

        return self._predict_region(X, confidence_level, boundary)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self.conformal_cv != "split":  # CV+ has an interval form only
            tags.target_tags.multi_output = False
        if self.covariance == "local":
            # the neighbour search computes on X (or the transformer's output)
            tags.input_tags.sparse = False
            tags.input_tags.allow_nan = tags.input_tags.allow_nan and (
                self.transformer is not None
            )
        return tags
