"""Split conformalized quantile regression (CQR, Romano et al. 2019)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import DataConversionWarning
from sklearn.frozen import FrozenEstimator
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_random_state

from sklearn_iclr26.conformal._base_regressor import (
    CONFORMAL_CV_CONSTRAINT,
    BaseConformalRegressor,
)
from sklearn_iclr26.conformal._conformity_scores import conformal_quantile
from sklearn_iclr26.conformal._frozen import frozen_fitted
from sklearn_iclr26.conformal._shift_calibration import SHIFT_REGRESSOR_CONSTRAINTS
from sklearn_iclr26.utils._atomic import atomic_fit, scoped_params
from sklearn_iclr26.utils._batching import batched
from sklearn_iclr26.utils._random import set_child_random_state
from sklearn_iclr26.utils._sklearn_compat import (
    HasMethods,
    _fit_context,
    _num_samples,
    _safe_indexing,
)
from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["ConformalizedQuantileRegressor"]

# (loss parameter, its quantile value, quantile-level parameter) of the
# quantile regressors known by name; any other regressor with a ``quantile``
# parameter is used through it
_QUANTILE_PARAMS = {
    "LGBMRegressor": ("objective", "quantile", "alpha"),
    "GradientBoostingRegressor": ("loss", "quantile", "alpha"),
    "HistGradientBoostingRegressor": ("loss", "quantile", "quantile"),
    "QuantileRegressor": (None, None, "quantile"),
}


def _default_quantile_regressor():
    try:
        from lightgbm import LGBMRegressor
    except ImportError as exc:  # pragma: no cover - lightgbm is a dependency
        raise ImportError(
            "ConformalizedQuantileRegressor(estimator=None) uses LightGBM's "
            "quantile objective; install lightgbm or pass a quantile regressor."
        ) from exc
    return LGBMRegressor(objective="quantile", verbose=-1)


def _quantile_parameter(estimator):
    """The ``set_params`` name of ``estimator``'s quantile level."""
    prefix, final = "", estimator
    if isinstance(estimator, Pipeline):
        prefix, final = f"{estimator.steps[-1][0]}__", estimator[-1]
    name = type(final).__name__
    params = final.get_params(deep=False)
    if name in _QUANTILE_PARAMS:
        loss, value, level = _QUANTILE_PARAMS[name]
        if loss is not None and params.get(loss) != value:
            raise ValueError(
                f"{name} fits a quantile with {loss}={value!r}, got "
                f"{loss}={params.get(loss)!r}: set it, or pass a (lower, upper) "
                "pair of quantile regressors."
            )
        return prefix + level
    if "quantile" in params:
        return prefix + "quantile"
    raise ValueError(
        f"ConformalizedQuantileRegressor cannot set the quantile level of {name}: "
        "pass a quantile regressor among LGBMRegressor(objective='quantile'), "
        "GradientBoostingRegressor(loss='quantile'), "
        "HistGradientBoostingRegressor(loss='quantile'), QuantileRegressor (or "
        "any regressor with a `quantile` parameter), or a (lower, upper) pair "
        "of regressors of the two quantiles."
    )


def _is_pair(estimator):
    return isinstance(estimator, (list, tuple))


class ConformalizedQuantileRegressor(BaseConformalRegressor):
    """Split conformalized quantile regression (CQR) intervals.

    Two quantile regressors ``q_lo`` and ``q_hi`` are fitted by pinball
    loss at the levels ``alpha / 2`` and ``1 - alpha / 2`` (``alpha = 1 -
    confidence_level``) on a training part; on the calibration part, the
    signed scores ``q_lo(x) - y`` and ``y - q_hi(x)`` (positive outside the
    band) give the corrections, and the interval is ``[q_lo(x) - t_lo,
    q_hi(x) + t_hi]`` (Romano, Patterson and Candès, 2019). Its width adapts to
    ``x`` through the quantile models while the conformal step makes its
    marginal coverage at least ``confidence_level`` for any pair of models.

    * ``symmetric_correction=False`` (the default, as MAPIE's): each side is
      corrected by its own order statistic at level ``1 - alpha / 2``; the
      union bound gives coverage at least ``1 - alpha`` and each tail's
      miscoverage is at most ``alpha / 2``.
    * ``symmetric_correction=True`` (the paper's CQR): one correction ``t``,
      the conformal quantile of ``max(q_lo(x) - y, y - q_hi(x))`` at level
      ``1 - alpha``.

    A correction may be negative (the quantile band over-covers): the
    interval then shrinks, and it is empty where the corrected bounds cross.
    The quantile models are fitted at the constructor's level; a per-call
    ``confidence_level`` keeps them and recomputes the corrections, which is
    still valid at the new level (the conformal step holds for any pair of
    models) but less efficient far from the fitted level.

    Read more in the :ref:`User Guide <cqr>`.

    Parameters
    ----------
    estimator : regressor, (regressor, regressor) or None, default=None
        A quantile regressor, cloned twice and fitted with its quantile level
        set to ``alpha / 2`` and ``1 - alpha / 2``: its level parameter is
        ``alpha`` for ``LGBMRegressor(objective="quantile")`` and
        ``GradientBoostingRegressor(loss="quantile")``, ``quantile`` for
        ``HistGradientBoostingRegressor(loss="quantile")``,
        ``QuantileRegressor`` and any regressor with a ``quantile`` parameter;
        the final step of a ``Pipeline`` is set. ``None`` means
        ``lightgbm.LGBMRegressor(objective="quantile", verbose=-1)``. A pair
        ``(lower, upper)`` is used as given (each cloned and fitted, the
        levels are yours); a pair of fitted models is used as it is by
        :meth:`calibrate`, or when each is wrapped in
        :class:`~sklearn.frozen.FrozenEstimator` (never refit: every row
        calibrates).
    confidence_level : float, default=0.9
        Coverage level of the intervals, in (0, 1); also sets the levels of
        the quantile models.
    symmetric_correction : bool, default=False
        One correction for both bounds (the conformal quantile of the larger
        of the two signed scores) instead of one per bound.
    calibration_size : float or int, default=0.25
        Fraction (float in (0, 1)) or number (int) of samples held out for
        calibration. Unused with fitted models (``FrozenEstimator``, or
        :meth:`calibrate`): every row calibrates.
    %(shift_parameters)s
    conformal_cv : "split", int or CV splitter, default="split"
        ``"split"``: split CQR on ``calibration_size`` of the rows. An int
        ``K`` (a shuffled ``KFold`` seeded by ``random_state``) or a
        splitter whose test folds partition the rows (``KFold``,
        ``LeaveOneOut``): **cross-CQR**, the CV+ form of CQR. The two
        quantile models are refit on each fold's training rows, every row's
        score is out of fold, and the bounds at ``x`` are order statistics
        over the rows of ``q_lo^{k(i)}(x) - s_i`` (the ``r``-th largest) and
        ``q_hi^{k(i)}(x) + s_i`` (the ``r``-th smallest), ``k(i)`` the fold
        of row ``i``, ``r = ceil((n + 1) level)`` with ``level`` the
        confidence level (``symmetric_correction=True``: one score, the
        maximum of the two) or ``1 - alpha / 2`` per side (the default: the
        lower and upper scores, each side on its own). Equal to MAPIE's
        ``CrossConformalizedQuantileRegressor(method="plus")`` on the same
        folds (``AbsoluteQuantileRegressionScore`` for the symmetric
        correction, ``QuantileRegressionScore(sym=False)`` otherwise).
        Guarantee, as CV+: coverage at least ``1 - 2 alpha`` (minus a term
        that vanishes with the fold size), about ``1 - alpha`` in practice
        (see the user guide). ``estimators_`` (fitted on every row) serves
        :meth:`predict`; the folds' models are ``fold_estimators_``. Not
        combined with ``shift`` or fitted (frozen) models.
    random_state : int, RandomState instance or None, default=None
        Seeds the split or the folds (and the regressors' ``random_state``
        parameters that are ``None``).
    verbose : int, default=0
        If positive, print the fitting steps.

    Attributes
    ----------
    estimators_ : list of two regressors
        The fitted lower and upper quantile models.
    %(features_in_attributes)s
    fold_estimators_ : list of (regressor, regressor)
        With a cross-conformal ``conformal_cv``: each fold's lower and upper
        quantile models.
    n_outputs_ : int
        Always 1 (CQR is a single-target method).
    calibration_scores_ : ndarray of shape (n_calibration_samples, 2) or \
(n_calibration_samples,)
        The signed calibration scores ``q_lo(x) - y`` and ``y - q_hi(x)``,
        sorted per column; with ``symmetric_correction=True`` their row-wise
        maximum, sorted.
    n_calibration_samples_ : int
        Number of calibration samples.
    threshold_ : ndarray of shape (2,)
        The corrections ``(t_lo, t_hi)`` at ``confidence_level`` (equal with
        ``symmetric_correction=True``; ``inf`` when the calibration set is
        too small for the level: ``2 / alpha - 1`` points per side without
        the symmetric correction, ``1 / alpha - 1`` with it). With a
        cross-conformal ``conformal_cv``: the ranks ``r`` of the CV+ order
        statistics of the two bounds.
    %(shift_attributes)s

    See Also
    --------
    BonferroniBoxRegressor : Constant-width split-conformal intervals.
    CVQRRegressor : Vector-quantile regions (CVQR with one target is another
        conditional-quantile interval).

    References
    ----------
    .. [1] Romano, Patterson and Candès, "Conformalized Quantile Regression",
       NeurIPS 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import QuantileRegressor
    >>> from sklearn_iclr26.conformal import ConformalizedQuantileRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(0, 2, size=(300, 1))
    >>> y = X[:, 0] + X[:, 0] * rng.normal(size=300)
    >>> cqr = ConformalizedQuantileRegressor(
    ...     QuantileRegressor(alpha=0.0), random_state=0).fit(X, y)
    >>> cqr.predict_interval(X[:3]).shape
    (3, 2)
    >>> cqr.predict_interval(X[:3], confidence_level=[0.5, 0.9]).shape
    (3, 2, 2)
    """

    _parameter_constraints: dict = {
        **BaseConformalRegressor._parameter_constraints,
        "estimator": [HasMethods(["fit", "predict"]), list, tuple, None],
        "symmetric_correction": ["boolean"],
        **SHIFT_REGRESSOR_CONSTRAINTS,
        "conformal_cv": CONFORMAL_CV_CONSTRAINT,
    }

    def __init__(
        self,
        estimator=None,
        *,
        confidence_level=0.9,
        symmetric_correction=False,
        calibration_size=0.25,
        shift=None,
        shift_estimator=None,
        conformal_cv="split",
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    # ------------------------------------------------------------- models
    def _pair(self):
        """The two (unfitted or frozen) quantile models, lower then upper."""
        if _is_pair(self.estimator):
            if len(self.estimator) != 2:
                raise ValueError(
                    "estimator as a sequence must be a (lower, upper) pair of "
                    f"quantile regressors, got {len(self.estimator)} items."
                )
            return [clone(est) for est in self.estimator]
        est = (
            _default_quantile_regressor() if self.estimator is None else self.estimator
        )
        name = _quantile_parameter(est)
        alpha = 1.0 - self.confidence_level
        return [
            clone(est).set_params(**{name: level})
            for level in (alpha / 2, 1.0 - alpha / 2)
        ]

    def _frozen(self):
        return _is_pair(self.estimator) and all(
            isinstance(est, FrozenEstimator) for est in self.estimator
        )

    def _split(self, n_samples, rng):
        if self._frozen():  # nothing to fit: every row is calibration data
            rows = rng.permutation(n_samples)
            return rows, rows[:0]
        return super()._split(n_samples, rng)

    def _validate_y(self, X, y):
        y = super()._validate_y(X, y)
        if y.ndim == 2 and y.shape[1] == 1:
            warn_user(
                "A column-vector y was passed when a 1d array was expected. "
                "Please change the shape of y to (n_samples,), for example "
                "using ravel().",
                DataConversionWarning,
            )
            y = y[:, 0]
        return y

    def _routing_children(self):
        if _is_pair(self.estimator) and len(self.estimator) == 2:
            lower, upper = self.estimator
            return {"lower_estimator": lower, "upper_estimator": upper}
        est = (
            _default_quantile_regressor() if self.estimator is None else self.estimator
        )
        return {"estimator": est}

    def _fit_model(self, X, y, random_state, fit_params=None):
        if self.n_outputs_ != 1:
            raise ValueError(
                "ConformalizedQuantileRegressor is a single-target method, got y "
                f"with {self.n_outputs_} columns; for several targets use "
                "BonferroniBoxRegressor, EllipsoidRegressor or CVQRRegressor."
            )
        models = self._pair()
        if not self._frozen():
            fit_params = fit_params or {}
            names = ["lower_estimator", "upper_estimator"]
            for name, est in zip(names, models):
                set_child_random_state(est, random_state)
                params = fit_params.get(name, fit_params.get("estimator", {}))
                est.fit(X, y[:, 0], **params)
            log_progress(self, f"fitted two {type(models[0]).__name__} quantiles")
        self.estimators_ = models

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def calibrate(self, X, y):
        """Calibrate the intervals of a (lower, upper) pair fitted elsewhere.

        ``estimator`` must be a pair of fitted quantile models; they are used
        as they are, as ``fit(X, y)`` with each wrapped in
        ``FrozenEstimator`` would (MAPIE's ``conformalize``), and every row
        calibrates. The rows must not have been used to train the models.
        Like ``fit``, it changes nothing if it fails.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Calibration covariates.
        y : array-like of shape (n_samples,)
            Calibration responses.

        Returns
        -------
        self : object
            The calibrated estimator.
        """
        if not _is_pair(self.estimator) or len(self.estimator) != 2:
            raise ValueError(
                "ConformalizedQuantileRegressor.calibrate uses fitted models as "
                "they are and needs estimator=(lower, upper), a pair of fitted "
                "quantile regressors; call fit to train them on a split."
            )
        frozen = tuple(frozen_fitted(est, self) for est in self.estimator)
        scoped_params(self, estimator=frozen)
        self._fit_work(X, y)
        return self

    def _bounds(self, X):
        """Lower and upper quantile predictions, shape (n, 2)."""
        pred = [
            np.asarray(est.predict(X), dtype=np.float64).reshape(-1)
            for est in self.estimators_
        ]
        if pred[0].shape[0] != _num_samples(X) or pred[1].shape != pred[0].shape:
            raise ValueError(
                "The quantile models must predict one value per row, got shapes "
                f"{pred[0].shape} and {pred[1].shape} for {_num_samples(X)} rows."
            )
        return np.stack(pred, axis=1)

    def _predict_batch(self, X):
        return self._bounds(X).mean(axis=1, keepdims=True)

    # ------------------------------------------------------------- scores
    def _conformity_scores_batch(self, X, y):
        q = self._bounds(X)
        scores = np.stack([q[:, 0] - y[:, 0], y[:, 0] - q[:, 1]], axis=1)
        return scores.max(axis=1) if self.symmetric_correction else scores

    def _n_calibration_needed(self, confidence_level):
        if self.symmetric_correction:
            return None
        # each bound at miscoverage alpha / 2 needs 2 / alpha - 1 points
        return math.ceil(2.0 / (1.0 - confidence_level) - 1.0 - 1e-9)

    # ---------------------------------------------------------- cross-CQR
    def _cross_conformal(self):
        return self.conformal_cv != "split"

    def _fit_work(self, X, y, fit_params=None, X_target=None):
        if not self._cross_conformal():
            return super()._fit_work(X, y, fit_params, X_target=X_target)
        from sklearn.model_selection import KFold

        name = f"ConformalizedQuantileRegressor(conformal_cv={self.conformal_cv!r})"
        if X_target is not None or self.shift is not None:
            raise ValueError(
                f"{name} does not take shift or X_target: the shift weights "
                "apply to split calibration only. Use conformal_cv='split'."
            )
        if self._frozen():
            raise TypeError(
                f"{name} refits the quantile models on every fold, and a "
                "FrozenEstimator is never refit: use conformal_cv='split' (or "
                "calibrate) with fitted models."
            )
        X = self._check_X(X, reset=True)
        y = self._validate_y(X, y)
        routed = self._route_fit_params(X, fit_params)
        self._y_1d = y.ndim == 1
        y = y.reshape(y.shape[0], -1)
        n_samples, self.n_outputs_ = y.shape
        rng = check_random_state(self.random_state)
        cv = self.conformal_cv
        if isinstance(cv, Integral):
            seed = int(rng.randint(np.iinfo(np.int32).max))
            cv = KFold(n_splits=min(cv, n_samples), shuffle=True, random_state=seed)
        folds = list(cv.split(X, y[:, 0]))
        fold_of = np.full(n_samples, -1, dtype=np.intp)
        for k, (_, test) in enumerate(folds):
            if np.any(fold_of[test] >= 0):
                raise ValueError(
                    "conformal_cv must hold out every row exactly once (a "
                    "partition, e.g. KFold or LeaveOneOut); a row is held out "
                    "twice."
                )
            fold_of[test] = k
        if np.any(fold_of < 0):
            raise ValueError(
                "conformal_cv must hold out every row exactly once (a partition, "
                f"e.g. KFold or LeaveOneOut); {int(np.sum(fold_of < 0))} rows "
                "are never held out."
            )
        log_progress(self, f"cross-CQR on {len(folds)} folds")
        members, scores = [], None
        for train, test in folds:
            member = clone(self)
            member.n_outputs_ = self.n_outputs_
            member._fit_model(
                _safe_indexing(X, train),
                y[train],
                random_state=rng,
                fit_params=self._take_params(X, routed, train),
            )
            fold_scores = batched(
                member._conformity_scores_batch,
                _safe_indexing(X, test),
                y[test],
                row_bytes=member._row_bytes(),
            )
            if scores is None:
                scores = np.empty((n_samples, *fold_scores.shape[1:]))
            scores[test] = fold_scores
            members.append(member)
        self._members = members
        self._fold_of = fold_of
        self._oof_scores = scores
        self.fold_estimators_ = [member.estimators_ for member in members]
        # the models fitted on every row serve predict
        self._fit_model(X, y, random_state=rng, fit_params=routed)
        self.calibration_scores_ = np.sort(scores, axis=0)
        self.n_calibration_samples_ = n_samples
        self.threshold_ = self._threshold(self.confidence_level, per_call=False)
        log_progress(self, f"threshold_ (CV+ ranks) = {self.threshold_}")

    def _cross_interval(self, X, threshold):
        """CV+ bounds: order statistics of ``q^{k(i)}(x) -+ s_i``, (m, 2)."""
        m = _num_samples(X)
        if not np.all(np.isfinite(threshold)):
            return np.column_stack([np.full(m, -np.inf), np.full(m, np.inf)])
        q = np.stack([member._bounds(X) for member in self._members], axis=1)
        q = q[:, self._fold_of]  # (m, n, 2)
        s = self._oof_scores.reshape(self._oof_scores.shape[0], -1)
        s_lo, s_hi = s[:, 0], s[:, -1]
        k_lo, k_hi = int(threshold[0]) - 1, int(threshold[1]) - 1
        low = q[:, :, 0] - s_lo[None]
        up = q[:, :, 1] + s_hi[None]
        lower = -np.partition(-low, k_lo, axis=1)[:, k_lo]
        upper = np.partition(up, k_hi, axis=1)[:, k_hi]
        return np.stack([lower, upper], axis=1)

    def _row_bytes(self):
        extra = 0
        if self._cross_conformal():
            extra = 8 * 6 * getattr(self, "n_calibration_samples_", 1)
        return super()._row_bytes() + extra

    def _threshold_at(self, confidence_level, mass=None):
        if self._cross_conformal() and mass is None:
            level = confidence_level
            if not self.symmetric_correction:
                level = 1.0 - (1.0 - confidence_level) / 2.0
            rank = float(math.ceil((self.n_calibration_samples_ + 1) * level - 1e-12))
            return np.array([rank, rank])
        if mass is not None:  # covariate shift: one column per test row
            if self.symmetric_correction:
                t = self._column_quantiles(confidence_level, mass)[0]
                return np.stack([t, t])
            level = 1.0 - (1.0 - confidence_level) / 2.0
            return self._column_quantiles(level, mass)
        if self.symmetric_correction:
            t = conformal_quantile(self.calibration_scores_, confidence_level)
            return np.array([t, t])
        level = 1.0 - (1.0 - confidence_level) / 2.0
        return np.array(
            [conformal_quantile(col, level) for col in self.calibration_scores_.T]
        )

    def _infinite_threshold(self):
        return np.full(2, np.inf)

    def _interval(self, X, threshold):
        if self._cross_conformal():
            return self._cross_interval(X, threshold)
        q = self._bounds(X)
        return np.stack([q[:, 0] - threshold[0], q[:, 1] + threshold[1]], axis=1)

    def _contains_batch(self, X, y, threshold):
        bounds = self._interval(X, threshold)
        return (bounds[:, 0] <= y[:, 0]) & (y[:, 0] <= bounds[:, 1])

    def _log_volume_batch(self, X, threshold):
        bounds = self._interval(X, threshold)
        width = np.maximum(bounds[:, 1] - bounds[:, 0], 0.0)
        with np.errstate(divide="ignore"):  # an empty interval: volume 0
            return np.log(width)

    def conformity_scores(self, X, y):
        """Signed CQR scores of ``(x, y)`` pairs (positive: outside the band).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        y : array-like of shape (n_samples,)
            Responses.

        Returns
        -------
        scores : ndarray of shape (n_samples, 2) or (n_samples,)
            ``q_lo(x) - y`` and ``y - q_hi(x)``; their maximum with
            ``symmetric_correction=True``.
        """
        return super().conformity_scores(X, y)

    def predict_region(self, X, confidence_level=None):
        """Interval endpoints in the regions' layout, shape (n_samples, 2, 1).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        confidence_level : float or sequence of float, default=None
            Level of the intervals in (0, 1); ``None`` uses the constructor's.
            A sequence of ``L`` levels adds a trailing level axis (nested
            intervals, each equal to a call at that level).

        Returns
        -------
        boundary : ndarray of shape (n_samples, 2, 1) or (n_samples, 2, 1, L)
            ``[lower, upper]`` (infinite where the threshold is).
        """

        def interval(Xb, threshold):
            with np.errstate(invalid="ignore"):
                return self._interval(Xb, threshold)[:, :, None]

        return self._predict_region(X, confidence_level, interval)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = False
        if _is_pair(self.estimator):
            return tags
        from sklearn.utils import get_tags

        try:
            est = (
                _default_quantile_regressor()
                if self.estimator is None
                else self.estimator
            )
        except ImportError:  # pragma: no cover
            return tags
        child = get_tags(est).input_tags
        tags.input_tags.allow_nan = child.allow_nan
        tags.input_tags.sparse = child.sparse
        return tags
