"""Shared machinery of the split-conformal residual-region baselines."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context, clone
from sklearn.linear_model import LinearRegression
from sklearn.utils._param_validation import HasMethods, Interval, RealNotInt
from sklearn.utils.validation import (
    check_array,
    check_is_fitted,
    check_random_state,
    validate_data,
)

from sklearn_iclr26.utils._validation import check_alpha, check_calibration_size

__all__ = ["BaseResidualRegion"]


class BaseResidualRegion(RegressorMixin, BaseEstimator):
    """Point regressor + split-conformal region on its residuals (private base).

    Subclasses implement ``_fit_region(X_train, R_train, X_cal, R_cal)``,
    ``_contains(X, R, alpha)`` and ``_log_volume(X, alpha)``.
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"]), None],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "calibration_size": [
            Interval(RealNotInt, 0, 1, closed="neither"),
            Interval(Integral, 1, None, closed="left"),
        ],
        "random_state": ["random_state"],
    }

    def _get_estimator(self):
        return LinearRegression() if self.estimator is None else self.estimator

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, Y):
        """Fit the point regressor and calibrate the region.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        Y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Responses.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X, Y = validate_data(
            self, X, Y, multi_output=True, y_numeric=True, ensure_min_samples=2
        )
        Y = np.asarray(Y, dtype=np.float64)
        self._y_1d = Y.ndim == 1
        Y = Y.reshape(Y.shape[0], -1)
        n = Y.shape[0]
        self.n_outputs_ = Y.shape[1]
        n_cal = (
            int(self.calibration_size)
            if isinstance(self.calibration_size, Integral)
            else math.floor(self.calibration_size * n)
        )
        if n_cal >= n - 1:
            raise ValueError(
                f"calibration_size={self.calibration_size} leaves {n - n_cal} "
                f"training samples out of {n}; at least 2 are needed."
            )
        check_calibration_size(n_cal, self._calibration_alpha(self.alpha))
        rng = check_random_state(self.random_state)
        perm = rng.permutation(n)
        cal, train = perm[:n_cal], perm[n_cal:]
        est = clone(self._get_estimator())
        if "random_state" in est.get_params():
            est.set_params(random_state=rng.randint(np.iinfo(np.int32).max))
        est.fit(X[train], Y[train] if self.n_outputs_ > 1 else Y[train, 0])
        self.estimator_ = est
        self._fit_region(
            X[train],
            Y[train] - self._point(X[train]),
            X[cal],
            Y[cal] - self._point(X[cal]),
        )
        return self

    def _calibration_alpha(self, alpha):
        return alpha

    def _point(self, X):
        pred = np.asarray(self.estimator_.predict(X), dtype=np.float64)
        return pred.reshape(pred.shape[0], -1)

    def _check_Y(self, Y, n_samples):
        Y = check_array(Y, ensure_2d=False, dtype=np.float64, input_name="Y")
        if Y.ndim == 1:
            Y = Y.reshape(-1, 1) if self.n_outputs_ == 1 else Y.reshape(1, -1)
        if Y.ndim != 2 or Y.shape[1] != self.n_outputs_:
            raise ValueError(
                f"Y must have {self.n_outputs_} columns, got shape {Y.shape}."
            )
        if Y.shape[0] != n_samples:
            raise ValueError(
                "X and Y have inconsistent numbers of samples: "
                f"{n_samples} and {Y.shape[0]}."
            )
        return Y

    def _alpha(self, alpha):
        return self.alpha if alpha is None else check_alpha(alpha)

    def predict(self, X):
        """Point predictions of the underlying regressor.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.

        Returns
        -------
        Y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Predictions.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        out = self._point(X)
        return out[:, 0] if self._y_1d else out

    def contains(self, X, Y, alpha=None):
        """Whether each ``y`` lies in the conformal region at ``x``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        Y : array-like of shape (n_samples, n_outputs)
            Candidate responses.
        alpha : float, default=None
            Miscoverage level; ``None`` uses the constructor's ``alpha``.

        Returns
        -------
        inside : ndarray of shape (n_samples,), dtype=bool
            Membership of each ``(x, y)``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        Y = self._check_Y(Y, X.shape[0])
        return self._contains(X, Y - self._point(X), self._alpha(alpha))

    def region_volume(self, X, alpha=None):
        """Natural log-volume of the region at each ``x`` (units of ``Y``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        alpha : float, default=None
            Miscoverage level; ``None`` uses the constructor's ``alpha``.

        Returns
        -------
        log_volume : ndarray of shape (n_samples,)
            Log-volumes (``inf`` where the threshold is infinite).
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self._log_volume(X, self._alpha(alpha))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags
