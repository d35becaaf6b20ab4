"""Residual-normalized ellipsoidal conformal regions (global or local covariance)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from numbers import Integral, Real

import numpy as np
from sklearn.neighbors import NearestNeighbors
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_iclr26.conformal._region_baselines import (
    BaseResidualRegion,
)
from sklearn_iclr26.conformal._scores import conformal_quantile

__all__ = ["EllipsoidRegressor"]


class EllipsoidRegressor(BaseResidualRegion):
    """Split-conformal ellipsoids ``{y : ||Sigma(x)^(-1/2) (y - yhat(x))|| <= q}``.

    With ``covariance="global"``, ``Sigma`` is the covariance of the training
    residuals (same ellipse at every ``x``). With ``covariance="local"`` (the
    "ELL" baseline of Messoudi et al.), ``Sigma(x) = lam * Sigma_kNN(x) +
    (1 - lam) * Sigma_global``, where ``Sigma_kNN(x)`` is the covariance of
    the training residuals of the ``n_neighbors`` nearest training points (in
    standardized feature space). The Mahalanobis norm is conformalized by
    split conformal, so marginal coverage holds in both cases.

    Read more in the :ref:`User Guide <cvqr>`.

    Parameters
    ----------
    estimator : regressor or None, default=None
        Point regressor (multi-output); ``None`` means
        :class:`~sklearn.linear_model.LinearRegression`.
    alpha : float, default=0.1
        Miscoverage level.
    covariance : {"global", "local"}, default="global"
        Covariance model of the residuals.
    n_neighbors : int, default=100
        Neighbours of the local covariance (clipped to the training size).
    shrinkage : float, default=0.95
        Weight ``lam`` of the local covariance in the mixture.
    calibration_size : float or int, default=0.25
        Fraction or number of samples held out for calibration.
    random_state : int, RandomState instance or None, default=None
        Seeds the split (and the regressor if it has ``random_state``).

    Attributes
    ----------
    estimator_ : regressor
        The fitted point regressor.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.
    n_outputs_ : int
        Number of outputs ``d``.
    covariance_ : ndarray of shape (n_outputs, n_outputs)
        Global residual covariance.
    calibration_scores_ : ndarray of shape (n_calibration,)
        Sorted Mahalanobis norms of the calibration residuals.

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
    >>> X = rng.normal(size=(200, 3))
    >>> Y = X[:, :2] + rng.normal(size=(200, 2))
    >>> ell = EllipsoidRegressor(covariance="local", random_state=0).fit(X, Y)
    >>> ell.region_volume(X[:2]).shape
    (2,)
    """

    _parameter_constraints: dict = {
        **BaseResidualRegion._parameter_constraints,
        "covariance": [StrOptions({"global", "local"})],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "shrinkage": [Interval(Real, 0, 1, closed="both")],
    }

    def __init__(
        self,
        estimator=None,
        *,
        alpha=0.1,
        covariance="global",
        n_neighbors=100,
        shrinkage=0.95,
        calibration_size=0.25,
        random_state=None,
    ):
        self.estimator = estimator
        self.alpha = alpha
        self.covariance = covariance
        self.n_neighbors = n_neighbors
        self.shrinkage = shrinkage
        self.calibration_size = calibration_size
        self.random_state = random_state

    @staticmethod
    def _cov(R):
        d = R.shape[1]
        if R.shape[0] < 2:
            cov = np.eye(d)
        else:
            cov = np.atleast_2d(np.cov(R, rowvar=False))
        ridge = 1e-8 * max(np.trace(cov) / d, 1e-12)
        return cov + ridge * np.eye(d)

    def _fit_region(self, X_train, R_train, X_cal, R_cal):
        self.covariance_ = self._cov(R_train)
        if self.covariance == "local":
            self._x_mean = X_train.mean(axis=0)
            scale = X_train.std(axis=0)
            self._x_scale = np.where(scale > 1e-12, scale, 1.0)
            k = min(self.n_neighbors, X_train.shape[0])
            self._knn = NearestNeighbors(n_neighbors=k).fit(
                (X_train - self._x_mean) / self._x_scale
            )
            self._train_residuals = R_train
        self.calibration_scores_ = np.sort(self._mahalanobis(X_cal, R_cal))

    def _covariances(self, X):
        n, d = X.shape[0], self.n_outputs_
        if self.covariance == "global":
            return np.broadcast_to(self.covariance_, (n, d, d))
        idx = self._knn.kneighbors(
            (X - self._x_mean) / self._x_scale, return_distance=False
        )
        local = self._train_residuals[idx]  # (n, k, d)
        centered = local - local.mean(axis=1, keepdims=True)
        k = local.shape[1]
        cov_local = np.einsum("nki,nkj->nij", centered, centered) / max(k - 1, 1)
        lam = self.shrinkage
        return lam * cov_local + (1 - lam) * self.covariance_[None]

    def _mahalanobis(self, X, R):
        chol = np.linalg.cholesky(self._covariances(X))
        z = np.linalg.solve(chol, R[..., None])[..., 0]
        return np.linalg.norm(z, axis=1)

    def _threshold(self, alpha):
        return conformal_quantile(self.calibration_scores_, 1 - alpha)

    def _contains(self, X, R, alpha):
        return self._mahalanobis(X, R) <= self._threshold(alpha)

    def _log_volume(self, X, alpha):
        d = self.n_outputs_
        q = self._threshold(alpha)
        if not np.isfinite(q):
            return np.full(X.shape[0], np.inf)
        logdet = np.linalg.slogdet(self._covariances(X))[1]
        log_ball = 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d + 1)
        return log_ball + d * math.log(q) + 0.5 * logdet

    def predict_region(self, X, alpha=None, n_points=100):
        """Ellipse boundary (``d = 2``) or interval endpoints (``d = 1``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        alpha : float, default=None
            Miscoverage level; ``None`` uses the constructor's ``alpha``.
        n_points : int, default=100
            Number of boundary points for ``d = 2``.

        Returns
        -------
        boundary : ndarray of shape (n_samples, n_points, 2) or (n_samples, 2, 1)
            Boundary points.
        """
        check_is_fitted(self)
        if self.n_outputs_ > 2:
            raise ValueError(f"predict_region needs d <= 2, got d={self.n_outputs_}.")
        X = validate_data(self, X, reset=False)
        q = self._threshold(self._alpha(alpha))
        if self.n_outputs_ == 1:
            directions = np.array([[-1.0], [1.0]])
        else:
            theta = np.linspace(0, 2 * np.pi, n_points, endpoint=False)
            directions = np.c_[np.cos(theta), np.sin(theta)]
        chol = np.linalg.cholesky(self._covariances(X))
        offsets = q * np.einsum("nij,kj->nki", chol, directions)
        return self._point(X)[:, None, :] + offsets
