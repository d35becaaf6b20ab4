"""Coordinate-wise split-conformal box with a Bonferroni correction."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np

from sklearn_iclr26.conformal._base_regressor import (
    CONFORMAL_CV_CONSTRAINT,
    BaseResidualRegion,
)
from sklearn_iclr26.conformal._conformity_scores import conformal_quantile
from sklearn_iclr26.conformal._shift_calibration import SHIFT_REGRESSOR_CONSTRAINTS
from sklearn_iclr26.utils._sklearn_compat import HasMethods, _num_samples
from sklearn_iclr26.utils._validation import store_params

__all__ = ["BonferroniBoxRegressor"]


class BonferroniBoxRegressor(BaseResidualRegion):
    """Split-conformal box: one absolute-residual interval per output.

    Each of the ``d`` coordinates gets a split-conformal interval
    ``yhat_j(x) +- q_j`` at miscoverage ``(1 - confidence_level) / d``; by the
    Bonferroni (union) bound the box has joint marginal coverage at least
    ``confidence_level``. The box has the same shape at every ``x``. A
    baseline for :class:`CVQRRegressor`, with the same ``contains`` /
    ``region_log_volume`` / ``predict_region`` interface.

    Read more in the :ref:`User Guide <cvqr>`.

    Parameters
    ----------
    %(estimator_parameter)s
    confidence_level : float, default=0.9
        Joint coverage level of the box, in (0, 1).
    calibration_size : float or int, default=0.25
        Fraction (float in (0, 1)) or number (int) of samples held out for
        calibration. Unused with a fitted model (a ``FrozenEstimator``, or
        :meth:`calibrate`): there is nothing to fit, every row calibrates.
    conformal_cv : "split", int or CV splitter, default="split"
        ``"split"``: split conformal on ``calibration_size`` of the rows
        (coverage at least ``confidence_level``). An int ``K`` (shuffled
        ``KFold``, seeded by ``random_state``) or a splitter whose test folds
        partition the rows (``KFold``, ``LeaveOneOut``...): **CV+**
        (**jackknife+** with ``LeaveOneOut``; Barber, Candès, Ramdas and
        Tibshirani, 2021), per output at miscoverage ``alpha / d``: the point
        model is refit on each fold's training rows, every row's residual
        ``r_i`` is out of fold (no row is lost to calibration), and the
        bounds at ``x`` are the order statistics of ``mu_k(i)(x) -+ r_i``
        over the rows (MAPIE's ``CrossConformalRegressor(method="plus")``).
        Guarantee, weaker than split conformal's (``alpha = 1 -
        confidence_level``, ``n`` rows): coverage at least ``1 - 2 alpha`` for
        jackknife+, at least ``1 - 2 alpha - min(2 (1 - 1/K) / (n/K + 1),
        (1 - K/n) / (K + 1))`` for ``d = 1`` CV+ with ``K`` folds (the
        Bonferroni union over ``d`` outputs adds that term ``d`` times); in
        practice it is usually near ``1 - alpha``. ``calibration_size`` is
        then unused, ``threshold_`` holds the per-output rank of the order
        statistic, ``predict`` uses a model fitted on all rows. A
        ``FrozenEstimator`` cannot be refit: use ``"split"``.
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
    calibration_scores_ : ndarray of shape (n_calibration_samples, n_outputs)
        Absolute calibration residuals, sorted per column.
    n_calibration_samples_ : int
        Number of calibration samples.
    threshold_ : ndarray of shape (n_outputs,)
        Half-widths of the box at ``confidence_level`` (``inf`` when the
        calibration set is too small for the level); with a cross-conformal
        ``conformal_cv``, the rank of the CV+ order statistic per output.
    %(shift_attributes)s

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
    >>> y = X[:, :2] + rng.normal(size=(200, 2))
    >>> box = BonferroniBoxRegressor(random_state=0).fit(X, y)
    >>> box.contains(X[:4], y[:4]).shape
    (4,)
    >>> box.threshold_.shape
    (2,)
    """

    _parameter_constraints: dict = {
        **BaseResidualRegion._parameter_constraints,
        "estimator": [HasMethods(["fit", "predict"]), None],
        "conformal_cv": CONFORMAL_CV_CONSTRAINT,
        **SHIFT_REGRESSOR_CONSTRAINTS,
    }

    def __init__(
        self,
        estimator=None,
        *,
        confidence_level=0.9,
        calibration_size=0.25,
        conformal_cv="split",
        shift=None,
        shift_estimator=None,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    _learns_shape = False

    def _fit_region(self, X, R, random_state):
        pass

    def _residual_scores(self, X, R):
        return np.abs(R)

    def _n_calibration_needed(self, confidence_level):
        # each output at miscoverage alpha / d needs d / alpha - 1 points
        alpha = 1.0 - confidence_level
        return math.ceil(self.n_outputs_ / alpha - 1.0 - 1e-9)

    def _threshold_at(self, confidence_level, mass=None):
        alpha = (1.0 - confidence_level) / self.n_outputs_
        if mass is not None:  # covariate shift: one column per test row
            return self._column_quantiles(1.0 - alpha, mass)
        if self._cross_conformal():
            return np.full(self.n_outputs_, self._cross_rank(1.0 - alpha))
        return np.array(
            [
                conformal_quantile(col, confidence_level=1.0 - alpha)
                for col in self.calibration_scores_.T
            ]
        )

    def _infinite_threshold(self):
        return np.full(self.n_outputs_, np.inf)

    def _contains_batch(self, X, y, threshold):
        if self._cross_conformal():
            return self._cross_contains(X, y, threshold)
        return np.all(np.abs(y - self._point(X)) <= threshold, axis=1)

    def _log_volume_batch(self, X, threshold):
        if self._cross_conformal():
            return self._cross_log_volume(X, threshold)
        with np.errstate(divide="ignore"):  # a zero half-width: volume 0
            value = float(np.sum(np.log(2 * threshold)))
        return np.full(_num_samples(X), value)

    def predict_region(self, X, confidence_level=None):
        """Box corners (``d = 2``) or interval endpoints (``d = 1``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        confidence_level : float or sequence of float, default=None
            Level of the box in (0, 1); ``None`` uses the constructor's.
            A sequence of ``L`` levels adds a trailing level axis (nested
            regions, each equal to a call at that level).

        Returns
        -------
        boundary : ndarray of shape (n_samples, 4, 2) or (n_samples, 2, 1)
            The corners of the box in counter-clockwise order, or the
            interval ``[lower, upper]`` (infinite where the threshold is).
        """

        def corners(Xb, threshold):
            if self.n_outputs_ == 1:
                signs = np.array([[-1.0], [1.0]])
            else:
                signs = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
            if self._cross_conformal() and np.all(np.isfinite(threshold)):
                lower, upper = self._cross_bounds(Xb, threshold)
                return np.where(signs[None] < 0, lower[:, None], upper[:, None])
            center = self._point(Xb)
            with np.errstate(invalid="ignore"):
                return center[:, None, :] + signs[None] * threshold[None, None, :]

        return self._predict_region(X, confidence_level, corners)
