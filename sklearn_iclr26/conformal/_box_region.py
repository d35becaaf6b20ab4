"""Coordinate-wise split-conformal box with a Bonferroni correction."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_iclr26.conformal._region_baselines import (
    BaseResidualRegion,
)
from sklearn_iclr26.conformal._scores import conformal_quantile

__all__ = ["BonferroniBoxRegressor"]


class BonferroniBoxRegressor(BaseResidualRegion):
    """Split-conformal box: one absolute-residual interval per output.

    Each of the ``d`` coordinates gets a split-conformal interval
    ``yhat_j(x) +- q_j`` at level ``alpha / d``; by the Bonferroni (union)
    bound the box has joint marginal coverage at least ``1 - alpha``. The
    box has the same shape at every ``x``. A baseline for
    :class:`CVQRRegressor`, with the same ``contains``/``region_volume``
    interface.

    Read more in the :ref:`User Guide <cvqr>`.

    Parameters
    ----------
    estimator : regressor or None, default=None
        Point regressor (multi-output); ``None`` means
        :class:`~sklearn.linear_model.LinearRegression`.
    alpha : float, default=0.1
        Joint miscoverage level.
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
    calibration_scores_ : ndarray of shape (n_calibration, n_outputs)
        Absolute calibration residuals, sorted per column.

    See Also
    --------
    CVQRRegressor : Adaptive regions from neural optimal transport.
    EllipsoidRegressor : Residual-normalized ellipsoids.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.conformal import BonferroniBoxRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(200, 3))
    >>> Y = X[:, :2] + rng.normal(size=(200, 2))
    >>> box = BonferroniBoxRegressor(random_state=0).fit(X, Y)
    >>> box.contains(X[:4], Y[:4]).shape
    (4,)
    """

    def __init__(
        self, estimator=None, *, alpha=0.1, calibration_size=0.25, random_state=None
    ):
        self.estimator = estimator
        self.alpha = alpha
        self.calibration_size = calibration_size
        self.random_state = random_state

    def _calibration_alpha(self, alpha):
        d = getattr(self, "n_outputs_", 1)
        return alpha / d

    def _fit_region(self, X_train, R_train, X_cal, R_cal):
        self.calibration_scores_ = np.sort(np.abs(R_cal), axis=0)

    def _half_widths(self, alpha):
        a = alpha / self.n_outputs_
        return np.array(
            [conformal_quantile(col, 1 - a) for col in self.calibration_scores_.T]
        )

    def _contains(self, X, R, alpha):
        return np.all(np.abs(R) <= self._half_widths(alpha), axis=1)

    def _log_volume(self, X, alpha):
        q = self._half_widths(alpha)
        with np.errstate(divide="ignore"):
            value = float(np.sum(np.log(2 * q)))
        return np.full(X.shape[0], value)

    def predict_region(self, X, alpha=None):
        """Box corners (``d = 2``) or interval endpoints (``d = 1``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        alpha : float, default=None
            Miscoverage level; ``None`` uses the constructor's ``alpha``.

        Returns
        -------
        boundary : ndarray of shape (n_samples, 4, 2) or (n_samples, 2, 1)
            The corners of the box in counter-clockwise order, or the
            interval ``[lower, upper]``.
        """
        check_is_fitted(self)
        if self.n_outputs_ > 2:
            raise ValueError(f"predict_region needs d <= 2, got d={self.n_outputs_}.")
        X = validate_data(self, X, reset=False)
        q = self._half_widths(self._alpha(alpha))
        center = self._point(X)
        if self.n_outputs_ == 1:
            signs = np.array([[-1.0], [1.0]])
        else:
            signs = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
        return center[:, None, :] + signs[None] * q[None, None, :]
