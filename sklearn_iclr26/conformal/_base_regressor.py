"""One base for the conformal regressors: CVQR, the Bonferroni box, the ellipsoids.

:class:`BaseConformalRegressor` holds everything the three share: ``fit(X,
y)`` with the calibration split (``utils._split.split_indices``), the child
seeding (``utils._random``), the validation of ``y`` and of the per-call
``confidence_level``, the package's one calibration policy
(``utils._validation.calibration_size_ok``: warn quoting the user's level, the
threshold is ``inf`` and regions are the whole space; never raise), the
``threshold_`` / ``n_calibration_samples_`` attributes, and the batched
front-ends ``predict``, ``conformity_scores``, ``contains``,
``region_log_volume`` and ``predict_region`` (rows in batches sized by
``working_memory``, ``utils._batching.batched``).

``X`` reaches the point model untouched (rows indexed with scikit-learn's safe
indexing), so a ``Pipeline`` with a name-based ``ColumnTransformer`` on a raw
DataFrame can sit inside. Where an estimator computes on ``X`` itself (the
local ellipsoid's neighbours, CVQR's conditioning network) it goes through
:meth:`BaseConformalRegressor._features`, which applies the ``transformer``
and raises a clear error on non-numeric ``X``.

Subclasses implement ``_fit_model``, ``_conformity_scores_batch``,
``_contains_batch`` and ``_log_volume_batch`` (and may override
``_threshold_at`` and ``_n_calibration_needed``).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import warnings
from abc import ABCMeta, abstractmethod
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.exceptions import DataConversionWarning
from sklearn.frozen import FrozenEstimator
from sklearn.multioutput import MultiOutputRegressor
from sklearn.pipeline import Pipeline
from sklearn.utils import get_tags
from sklearn.utils.validation import (
    check_array,
    check_is_fitted,
    check_random_state,
)

from sklearn_iclr26.conformal._conformity_scores import conformal_quantile
from sklearn_iclr26.conformal._frozen import frozen_fitted
from sklearn_iclr26.conformal._shift_calibration import (
    SHIFT_REGRESSOR_ATTRIBUTES_DOC,
    SHIFT_REGRESSOR_DOC,
    ShiftRegressorMixin,
    _check_target,
    _RowLevel,
)
from sklearn_iclr26.utils._atomic import atomic_fit, scoped_params
from sklearn_iclr26.utils._batching import batched
from sklearn_iclr26.utils._docstrings import substitute
from sklearn_iclr26.utils._random import set_child_random_state
from sklearn_iclr26.utils._routing import fit_router, route_fit_params
from sklearn_iclr26.utils._sklearn_compat import (
    HasMethods,
    Interval,
    RealNotInt,
    StrOptions,
    _check_method_params,
    _fit_context,
    _num_samples,
    _safe_indexing,
)
from sklearn_iclr26.utils._split import split_indices
from sklearn_iclr26.utils._validation import (
    calibration_size_ok,
    check_confidence_level,
    check_passthrough_X,
)
from sklearn_iclr26.utils._verbose import log_progress
from sklearn_iclr26.utils._warnings import warn_user

__all__ = [
    "BaseConformalRegressor",
    "cross_fit_point_model",
    "log_unit_ball_volume",
]

# the conformal_cv parameter of the regions with a CV+ form
CONFORMAL_CV_CONSTRAINT = [
    StrOptions({"split"}),
    Interval(Integral, 2, None, closed="left"),
    HasMethods(["split", "get_n_splits"]),
]


# fraction of the rows below which the training part is too small to fit
_MIN_TRAIN_FRACTION = 0.1


def check_confidence_levels(confidence_level):
    """The levels of a sequence (checked, as floats), ``None`` for one level.

    ``None`` and a single number give ``None`` (the caller checks the one
    level); a list, tuple or 1-D array gives a non-empty list of floats in
    (0, 1).
    """
    if confidence_level is None or np.ndim(confidence_level) == 0:
        return None
    if isinstance(confidence_level, str) or np.ndim(confidence_level) != 1:
        raise ValueError(
            "confidence_level must be a float or a 1-D sequence of floats in "
            f"(0, 1), got {confidence_level!r}."
        )
    levels = [check_confidence_level(level) for level in confidence_level]
    if not levels:
        raise ValueError("confidence_level is an empty sequence.")
    return levels


def _join(columns, several):
    """One level's output, or the levels stacked on a trailing axis."""
    return np.stack(columns, axis=-1) if several else columns[0]


def log_unit_ball_volume(d):
    """Natural log of the volume of the unit ball of ``R^d``."""
    return 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d + 1)


def boundary_directions(d, n_points):
    """Unit directions of a region boundary: ``{-1, 1}`` (d=1) or a circle."""
    if d == 1:
        return np.array([[-1.0], [1.0]])
    theta = np.linspace(0, 2 * np.pi, n_points, endpoint=False)
    return np.c_[np.cos(theta), np.sin(theta)]


def default_transformer(fitted_estimator):
    """The fitted steps before the final estimator of an inner ``Pipeline``.

    Looks through ``FrozenEstimator`` and the automatic ``MultiOutputRegressor``
    wrapping; ``None`` when the estimator is not a pipeline of two or more
    steps.
    """
    est = fitted_estimator
    if isinstance(est, FrozenEstimator):
        est = est.estimator
    if isinstance(est, MultiOutputRegressor) and hasattr(est, "estimators_"):
        est = est.estimators_[0]
    if isinstance(est, Pipeline) and len(est.steps) > 1:
        return est[:-1]
    return None


def cross_fit_point_model(estimator, X, y, *, cv, random_state, fit_params=None):
    """Fit a point model and its residuals, out of fold when ``cv`` is set.

    The residuals a region shape is learned from must be honest: a flexible
    regressor (a random forest) nearly interpolates its own training rows, so
    in-sample residuals are far smaller and differently shaped than the
    residuals of new rows. With ``cv=K``, the training rows are split into
    ``K`` shuffled folds; each row's residual comes from a clone fitted on
    the other folds (never on the row itself), and the returned point model
    is then fitted on **all** rows, so no data is lost to the point model.
    The conformal calibration, on rows disjoint from all of these fits, uses
    that final model: its scores are a fixed function of ``(x, y)`` given the
    training part, so split-conformal validity is untouched.

    Parameters
    ----------
    estimator : regressor
        Unfitted point regressor (already wrapped for a multi-output ``y``
        and seeded). A ``FrozenEstimator`` is never refitted: its residuals
        are its predictions on the rows.
    X : array-like of shape (n_samples, n_features)
        Covariates, handed untouched to the regressor.
    y : ndarray of shape (n_samples, n_outputs)
        Responses.
    cv : int or None
        Number of folds (clipped to ``n_samples``); ``None`` gives in-sample
        residuals of the model fitted on all rows.
    random_state : RandomState instance
        Seeds the fold shuffling.
    fit_params : dict, default=None
        Parameters of the regressor's ``fit`` (e.g. ``sample_weight``), one
        entry per row where per-sample; each fold's fit gets its rows.

    Returns
    -------
    estimator : regressor
        The point model fitted on all rows.
    residuals : ndarray of shape (n_samples, n_outputs)
        ``y`` minus the out-of-fold (or in-sample) predictions.
    """
    from sklearn.model_selection import KFold, cross_val_predict

    n, d = y.shape
    target = y if d > 1 else y[:, 0]
    fit_params = {} if fit_params is None else fit_params
    oof = None
    if cv is not None and not isinstance(estimator, FrozenEstimator):
        seed = int(random_state.randint(np.iinfo(np.int32).max))
        folds = KFold(n_splits=min(cv, n), shuffle=True, random_state=seed)
        oof = cross_val_predict(estimator, X, target, cv=folds, params=fit_params)
    estimator.fit(X, target, **fit_params)
    if oof is None:
        oof = estimator.predict(X)
    oof = np.asarray(oof, dtype=np.float64)
    if (
        oof.shape[0] != n
        or (oof.ndim == 2 and oof.shape[1] != d)
        or (oof.ndim == 1 and d > 1)
    ):
        raise ValueError(
            f"The estimator predicts shape {oof.shape} for {d} outputs. Use a "
            "multi-output regressor (e.g. wrap it in "
            "sklearn.multioutput.MultiOutputRegressor)."
        )
    return estimator, y - oof.reshape(n, -1)


#: numpydoc entries shared by the conformal regressors, put in their docstrings
#: at ``%(estimator_parameter)s`` (the point-model ones) and
#: ``%(features_in_attributes)s``
_DOCS = {
    "shift_parameters": SHIFT_REGRESSOR_DOC,
    "shift_attributes": SHIFT_REGRESSOR_ATTRIBUTES_DOC,
    "estimator_parameter": """estimator : regressor or None, default=None
    Point regressor, fitted on the training part with ``X`` untouched (a
    ``Pipeline`` can preprocess a raw DataFrame); ``None`` means
    :class:`~sklearn.linear_model.LinearRegression`. A single-output
    regressor is wrapped in
    :class:`~sklearn.multioutput.MultiOutputRegressor` for a multi-output
    ``y``. A fitted one is used as it is by :meth:`calibrate` or when
    wrapped in :class:`~sklearn.frozen.FrozenEstimator` (never refit,
    never wrapped: it must predict every output).""",
    "features_in_attributes": """n_features_in_ : int
    Number of features seen during fit.
feature_names_in_ : ndarray of shape (`n_features_in_`,)
    Names of features seen during fit. Defined only when `X` has feature
    names that are all strings.""",
}


class BaseConformalRegressor(
    ShiftRegressorMixin, RegressorMixin, BaseEstimator, metaclass=ABCMeta
):
    """Split-conformal multivariate regions: the shared machinery (private)."""

    def __init_subclass__(cls, **kwargs):
        doc = cls.__dict__.get("__doc__")
        if doc:
            cls.__doc__ = substitute(doc, cls, **_DOCS)
        super().__init_subclass__(**kwargs)

    _parameter_constraints: dict = {
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
        "calibration_size": [
            Interval(RealNotInt, 0, 1, closed="neither"),
            Interval(Integral, 1, None, closed="left"),
        ],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # ------------------------------------------------------------- hooks
    @abstractmethod
    def _fit_model(self, X, y, random_state, fit_params=None):
        """Fit everything but the calibration on the training rows.

        ``fit_params`` is ``{child name: fit parameters}`` for the inner
        estimators of :meth:`_routing_children`, already restricted to the
        rows ``X``.
        """

    @abstractmethod
    def _conformity_scores_batch(self, X, y):
        """Calibration scores of a batch (n,) or (n, d) for the box."""

    @abstractmethod
    def _contains_batch(self, X, y, threshold):
        """Membership of a batch at a finite threshold."""

    @abstractmethod
    def _log_volume_batch(self, X, threshold):
        """Log-volumes of a batch at a finite threshold."""

    def _threshold_at(self, confidence_level, mass=None):
        """Threshold from ``calibration_scores_`` (enough points assumed).

        ``mass``: the test rows' normalised weights under covariate shift
        (then one threshold per row, along the last axis).
        """
        if mass is not None:
            return self._column_quantiles(confidence_level, mass)[0]
        return conformal_quantile(
            self.calibration_scores_, confidence_level=confidence_level
        )

    def _n_calibration_needed(self, confidence_level):
        """Calibration points for a finite threshold (``None``: 1/alpha - 1)."""
        return

    def _row_bytes(self):
        """Working bytes of one row of the predict-like methods."""
        return 64 * 8 * (getattr(self, "n_outputs_", 1) + 1) ** 2

    # --------------------------------------------------------------- fit
    def _point_estimator(self, estimator, n_outputs):
        """Clone; wrap a single-output regressor for a multi-output ``y``."""
        est = clone(estimator)
        # a frozen model is never refit: wrapped, each output would get the
        # same frozen model; it must predict every output itself
        if isinstance(est, FrozenEstimator):
            return est
        if n_outputs > 1 and not get_tags(est).target_tags.multi_output:
            est = MultiOutputRegressor(est)
        return est

    def _validate_y(self, X, y):
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y "
                "is None."
            )
        y = check_array(
            y,
            ensure_2d=False,
            dtype=np.float64,
            ensure_min_samples=2,
            input_name="y",
        )
        if y.ndim > 2:
            raise ValueError(f"y must be 1- or 2-dimensional, got shape {y.shape}.")
        n_samples = _num_samples(X)
        if n_samples != y.shape[0]:
            raise ValueError(
                "Found input variables with inconsistent numbers of samples: "
                f"[{n_samples}, {y.shape[0]}]"
            )
        return y

    # ------------------------------------------------------------ routing
    def _routing_children(self):
        """``{name: inner estimator}`` that ``fit`` parameters go to."""
        return {"estimator": self._get_estimator()}

    def get_metadata_routing(self):
        """Route ``fit`` metadata (e.g. ``sample_weight``) to the inner estimator.

        With ``sklearn.set_config(enable_metadata_routing=True)``, the inner
        estimator receives what it requested (``set_fit_request``), for the
        rows it is fitted on; the calibration itself is unweighted (but for
        the ``shift`` weights). ``X_target`` is the estimator's own fit
        metadata (``set_fit_request(X_target=True)``).

        Returns
        -------
        routing : MetadataRouter
            The routing information.
        """
        # self request: X_target, the owner's own fit metadata
        return fit_router(self, self._routing_children(), self_request=True)

    def _route_fit_params(self, X, fit_params):
        """``{child: params}`` of ``fit(X, y, **fit_params)``, checked."""
        children = self._routing_children()
        if fit_params and all(child is None for child in children.values()):
            raise TypeError(
                f"{type(self).__name__}.fit got {sorted(fit_params)}, but has no "
                f"inner estimator to pass them to (set {', '.join(children)})."
            )
        routed = route_fit_params(self, fit_params or {}, children)
        return {
            name: _check_method_params(X, params=params)
            for name, params in routed.items()
        }

    @staticmethod
    def _take_params(X, routed, indices):
        """The routed parameters restricted to the rows ``indices``."""
        return {
            name: _check_method_params(X, params=params, indices=indices)
            for name, params in routed.items()
        }

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, X_target=None, **fit_params):
        """Fit the model on a training part and calibrate the regions.

        Runs on a scratch copy: the fitted attributes are replaced together
        at the end, so a failed or interrupted fit leaves the previous fit
        intact.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates, handed untouched to the inner estimator (a
            ``Pipeline`` can preprocess a raw DataFrame).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Responses (``d = n_outputs >= 1``).
        X_target : array-like of shape (n_target, n_features), default=None
            Unlabeled rows of the target population: required with
            ``shift="covariate"``; otherwise only the shift check runs
            (``shift_pvalue_``, a warning when it rejects). Metadata: with
            routing, ``set_fit_request(X_target=True)``.
        **fit_params : dict
            Parameters of the inner estimator's ``fit`` (e.g.
            ``sample_weight``), given for every row; it receives those of its
            training rows. With metadata routing enabled, each inner
            estimator receives what it requested (``set_fit_request``). The
            calibration is unweighted (but for the ``shift`` weights).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        self._fit_work(X, y, fit_params, X_target=X_target)
        return self

    def _split(self, n_samples, rng):
        """Calibration and training rows."""
        return split_indices(n_samples, [self.calibration_size], random_state=rng)

    def _fit_work(self, X, y, fit_params=None, X_target=None):
        X = self._check_X(X, reset=True)
        X_target = _check_target(self, X, X_target)
        y = self._validate_y(X, y)
        routed = self._route_fit_params(X, fit_params)
        self._y_1d = y.ndim == 1
        y = y.reshape(y.shape[0], -1)
        n_samples, self.n_outputs_ = y.shape
        rng = check_random_state(self.random_state)
        cal_idx, train_idx = self._split(n_samples, rng)
        n_train = train_idx.shape[0]
        if n_train and n_train < _MIN_TRAIN_FRACTION * n_samples:
            warn_user(
                f"calibration_size={self.calibration_size} leaves {n_train} of "
                f"{n_samples} rows to fit {type(self).__name__}'s model, too few "
                "to fit it well: the regions stay valid but will be large. Use a "
                "smaller calibration_size (e.g. 0.25)."
            )
        log_progress(
            self,
            f"fitting on {n_train} rows, calibrating on {cal_idx.shape[0]} rows",
        )
        self._fit_model(
            _safe_indexing(X, train_idx),
            y[train_idx],
            random_state=rng,
            fit_params=self._take_params(X, routed, train_idx),
        )
        X_cal, y_cal = _safe_indexing(X, cal_idx), y[cal_idx]
        if X_target is None:
            self._calibrate(X_cal, y_cal)
            return
        # drawn last: the split and the model see the same stream
        self._shift_seed = rng.randint(2**31 - 1)
        self._calibrate(X_cal, y_cal, X_target=X_target)

    def _calibrate(self, X, y, X_target=None):
        scores = batched(
            self._conformity_scores_batch, X, y, row_bytes=self._row_bytes()
        )
        self.calibration_scores_ = np.sort(scores, axis=0)
        self.n_calibration_samples_ = int(scores.shape[0])
        if X_target is not None or "shift" in self.get_params(deep=False):
            self._fit_shift_regions(X, X_target, scores)
        self.threshold_ = self._threshold(self.confidence_level, per_call=False)
        log_progress(self, f"threshold_ = {self.threshold_}")

    def _threshold(self, confidence_level, *, per_call=True):
        """The threshold at a level, under the calibration policy.

        ``None`` (per call) means the fitted ``threshold_``; a too-small
        calibration set warns (quoting the user's level) and gives ``inf``.
        """
        if per_call and confidence_level is None:
            return self.threshold_
        level = check_confidence_level(confidence_level)
        if self._shift_active():
            # the threshold of a unit-ratio test point (rows get their own)
            t = np.asarray(self._threshold_at(level, self._unit_mass()))
            return float(t[0]) if t.ndim == 1 else t[:, 0]
        if not calibration_size_ok(
            self.n_calibration_samples_,
            level,
            needed=self._n_calibration_needed(level),
        ):
            return self._infinite_threshold()
        return self._threshold_at(level)

    def _infinite_threshold(self):
        return math.inf

    @staticmethod
    def _is_infinite(threshold):
        return not np.all(np.isfinite(threshold))

    # ------------------------------------------------------------ checks
    def _check_X(self, X, reset=False):
        """Feature count and names against fit; ``X`` itself untouched.

        Only made indexable (``_safe_indexing`` needs rows: objects exposing
        ``__array__`` alone become arrays, sparse matrices CSR).
        """
        return check_passthrough_X(self, X, reset=reset)

    def _check_y(self, y, n_samples, name="y"):
        y = check_array(y, ensure_2d=False, dtype=np.float64, input_name=name)
        if y.ndim == 1:
            y = y.reshape(-1, 1) if self.n_outputs_ == 1 else y.reshape(1, -1)
        if y.ndim != 2 or y.shape[1] != self.n_outputs_:
            raise ValueError(
                f"{name} must have {self.n_outputs_} columns, got shape {y.shape}."
            )
        if y.shape[0] != n_samples:
            raise ValueError(
                f"X and {name} have inconsistent numbers of samples: "
                f"{n_samples} and {y.shape[0]}."
            )
        return y

    def _features(self, X, transformer, *, name="transformer"):
        """Numeric float64 features the estimator computes on itself.

        Applies ``transformer`` (fitted, or ``None``) and densifies; raises a
        clear error naming the ``transformer`` option on non-numeric ``X``.
        """
        Xt = X if transformer is None else transformer.transform(X)
        if transformer is not None and sp.issparse(Xt):
            Xt = Xt.toarray()
        try:
            Xt = check_array(Xt, dtype=[np.float64, np.float32], input_name="X")
        except ValueError as exc:
            if "NaN" in str(exc) or "infinity" in str(exc):
                raise ValueError(
                    f"{type(self).__name__} computes on X itself (its "
                    "neighbours, scale or quantile model), so X must be finite "
                    f"there even when the inner estimator accepts missing values "
                    f"({exc}). Pass {name}= with an imputer (e.g. "
                    "sklearn.impute.SimpleImputer(), or the preprocessing of "
                    "your pipeline with one), or use a Pipeline with an imputer "
                    f"as the inner estimator: its steps before the final "
                    f"estimator are the default {name}."
                ) from exc
            if "could not convert" not in str(exc) and "string" not in str(exc):
                raise
            raise ValueError(
                f"{type(self).__name__} computes on X itself and X is not numeric "
                f"({exc}). Pass {name}= (e.g. the ColumnTransformer of your "
                "pipeline), or use a Pipeline as the inner estimator: its steps "
                f"before the final estimator are the default {name}."
            ) from exc
        return np.asarray(Xt, dtype=np.float64)

    # --------------------------------------------------------- front-ends
    def predict(self, X):
        """Point predictions (the centres of the regions).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Predictions (1-D if ``y`` was 1-D in fit).
        """
        check_is_fitted(self)
        X = self._check_X(X)
        out = batched(self._predict_batch, X, row_bytes=self._row_bytes())
        return out[:, 0] if self._y_1d else out

    def conformity_scores(self, X, y):
        """Conformity scores of ``(x, y)`` pairs (larger: less conforming).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Responses.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            The scores calibrated at fit (per output for the box).
        """
        check_is_fitted(self)
        X = self._check_X(X)
        y = self._check_y(y, _num_samples(X))
        return batched(self._conformity_scores_batch, X, y, row_bytes=self._row_bytes())

    def contains(self, X, y, confidence_level=None):
        """Whether each ``y`` lies in the conformal region at ``x``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Candidate responses.
        confidence_level : float or sequence of float, default=None
            Level of the regions in (0, 1); ``None`` uses the constructor's.
            A sequence of ``L`` levels gives one column per level (the
            regions are nested: a larger level never loses a point).

        Returns
        -------
        inside : ndarray of shape (n_samples,) or (n_samples, L), dtype=bool
            Membership of each ``(x, y)``; all ``True`` when the calibration
            set is too small for the level (the region is the whole space).
        """
        check_is_fitted(self)
        thresholds, several = self._thresholds(confidence_level)
        X = self._check_X(X)
        y = self._check_y(y, _num_samples(X))

        def one(Xb, yb, threshold):
            if isinstance(threshold, _RowLevel):
                return self._by_row(
                    lambda X_, t, y_: one(X_, y_, t), Xb, threshold.level, yb
                )
            if self._is_infinite(threshold):
                return np.ones(yb.shape[0], dtype=bool)
            return self._contains_batch(Xb, yb, threshold)

        return batched(
            lambda Xb, yb: _join([one(Xb, yb, t) for t in thresholds], several),
            X,
            y,
            row_bytes=self._row_bytes() * len(thresholds),
        )

    def _thresholds(self, confidence_level):
        """Thresholds of one level or of a sequence (and whether it was one).

        Each level follows the calibration policy; the thresholds are order
        statistics of the same sorted scores, non-decreasing in the level, so
        the regions of several levels are nested by construction.
        """
        levels = check_confidence_levels(confidence_level)
        if self._shift_active():
            if levels is None:
                level = (
                    self.confidence_level
                    if confidence_level is None
                    else (check_confidence_level(confidence_level))
                )
                return [_RowLevel(level)], False
            return [_RowLevel(level) for level in levels], True
        if levels is None:
            return [self._threshold(confidence_level)], False
        return [self._threshold(level) for level in levels], True

    def region_log_volume(self, X, confidence_level=None):
        """Natural log-volume of the region at each ``x`` (units of ``y``).

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
        log_volume : ndarray of shape (n_samples,)
            Log-volumes (``inf`` where the threshold is infinite). Divide by
            ``n_outputs_`` for the per-dimension (log V)/d.
        """
        return self._region_volume(X, confidence_level)

    def region_volume(self, X, confidence_level=None, **kwargs):
        """Deprecated: the natural log-volume; use :meth:`region_log_volume`.

        The name said volume but the values are log-volumes; it returns
        exactly what :meth:`region_log_volume` returns, after a
        ``FutureWarning``, and will be removed in a future release.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        confidence_level : float, default=None
            Level of the regions in (0, 1); ``None`` uses the constructor's.
        **kwargs : dict
            Passed to :meth:`region_log_volume` (``n_samples``).

        Returns
        -------
        log_volume : ndarray of shape (n_samples,)
            Natural log-volumes, as :meth:`region_log_volume`.
        """
        warnings.warn(
            f"{type(self).__name__}.region_volume returns the natural log of the "
            "volume and is deprecated: use region_log_volume (same values). "
            "region_volume will be removed in a future release.",
            FutureWarning,
            stacklevel=2,
        )
        return self.region_log_volume(X, confidence_level, **kwargs)

    def _region_volume(self, X, confidence_level, **kwargs):
        check_is_fitted(self)
        thresholds, several = self._thresholds(confidence_level)
        X = self._check_X(X)

        def one(Xb, threshold):
            if isinstance(threshold, _RowLevel):
                return self._by_row(one, Xb, threshold.level)
            if self._is_infinite(threshold):
                return np.full(_num_samples(Xb), np.inf)
            return self._log_volume_batch(Xb, threshold, **kwargs)

        return batched(
            lambda Xb: _join([one(Xb, t) for t in thresholds], several),
            X,
            row_bytes=self._volume_row_bytes(**kwargs) * len(thresholds),
        )

    def _volume_row_bytes(self, **kwargs):
        return self._row_bytes()

    def _predict_region(self, X, confidence_level, boundary_batch):
        """Shared front-end of ``predict_region`` (``d <= 2``)."""
        check_is_fitted(self)
        if self.n_outputs_ > 2:
            raise ValueError(
                f"predict_region needs d <= 2, got d={self.n_outputs_}; use "
                "contains() and region_log_volume()."
            )
        thresholds, several = self._thresholds(confidence_level)
        X = self._check_X(X)

        def one(Xb, threshold):
            if isinstance(threshold, _RowLevel):
                return self._by_row(one, Xb, threshold.level)
            return boundary_batch(Xb, threshold)

        return batched(
            lambda Xb: _join([one(Xb, t) for t in thresholds], several),
            X,
            row_bytes=self._row_bytes() * 100 * len(thresholds),
        )

    def predict_interval(self, X, confidence_level=None):
        """Prediction intervals ``[lower, upper]`` of a single-target fit.

        The one-target regions are intervals: this is ``predict_region``
        without its output axis.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        confidence_level : float or sequence of float, default=None
            Level of the intervals in (0, 1); ``None`` uses the
            constructor's. A sequence of ``L`` levels adds a trailing level
            axis (nested intervals, each equal to a call at that level).

        Returns
        -------
        intervals : ndarray of shape (n_samples, 2) or (n_samples, 2, L)
            Lower (``[:, 0]``) and upper (``[:, 1]``) bounds; ``-inf`` and
            ``inf`` where the calibration set is too small for the level.
        """
        check_is_fitted(self)
        if self.n_outputs_ != 1:
            raise ValueError(
                f"predict_interval needs a single target, and "
                f"{type(self).__name__} was fitted on {self.n_outputs_} targets; "
                "use predict_region (d <= 2) or contains()."
            )
        return self.predict_region(X, confidence_level=confidence_level)[:, :, 0]

    def _infinite_boundary(self, n_rows, n_points):
        out = np.full((n_rows, n_points, self.n_outputs_), np.inf)
        if self.n_outputs_ == 1:
            out[:, 0] = -np.inf
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags


class BaseResidualRegion(BaseConformalRegressor):
    """A point regressor + a split-conformal region on its residuals (private).

    Shared by :class:`BonferroniBoxRegressor` and :class:`EllipsoidRegressor`:
    the point model ``estimator_`` (a single-output regressor is wrapped in
    ``MultiOutputRegressor`` for a multi-output ``y``) sees ``X`` untouched.
    Subclasses implement ``_fit_region(X_train, R_train, random_state)``,
    ``_residual_scores(X, R)``, ``_contains_batch`` and ``_log_volume_batch``.
    """

    # whether the region's shape is learned from residuals (the ellipsoid's
    # covariance, OT-CP's transport); the box has no shape to learn
    _learns_shape = True

    def _get_estimator(self):
        from sklearn.linear_model import LinearRegression

        return LinearRegression() if self.estimator is None else self.estimator

    def _fit_neighbours(self, X, R, warning):
        """``transformer_`` and a kNN index of the standardized training rows
        (the local ellipsoid and OT-CP+), whose residuals ``R`` the neighbours
        return; ``warning``, formatted, when a neighbourhood is every row."""
        from sklearn.neighbors import NearestNeighbors

        if self.transformer is not None:
            self.transformer_ = clone(self.transformer).fit(X)
        else:
            self.transformer_ = default_transformer(self.estimator_)
        Z = self._features(X, self.transformer_)
        self._x_mean = Z.mean(axis=0)
        scale = Z.std(axis=0)
        self._x_scale = np.where(scale > 1e-12, scale, 1.0)
        n_train = Z.shape[0]
        self.n_neighbors_ = min(self.n_neighbors, n_train)
        if n_train <= self.n_neighbors:
            warn_user(
                warning.format(
                    n_train=n_train,
                    n_neighbors=self.n_neighbors,
                    n_neighbors_=self.n_neighbors_,
                )
            )
        self._knn = NearestNeighbors(n_neighbors=self.n_neighbors_).fit(
            (Z - self._x_mean) / self._x_scale
        )
        self._train_residuals = R

    def _neighbour_residuals(self, X):
        """The training residuals of each row's neighbours, shape (n, k, d)."""
        Z = self._features(X, self.transformer_)
        idx = self._knn.kneighbors(
            (Z - self._x_mean) / self._x_scale, return_distance=False
        )
        return self._train_residuals[idx]

    def _split(self, n_samples, rng):
        if isinstance(self._get_estimator(), FrozenEstimator) and not (
            self._learns_shape
        ):
            # nothing to fit: every row is calibration data
            rows = rng.permutation(n_samples)
            return rows, rows[:0]
        return super()._split(n_samples, rng)

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def calibrate(self, X, y):
        """Calibrate the regions of a model fitted elsewhere.

        ``estimator`` (already fitted) is used as it is, as ``fit(X, y)``
        with ``estimator=FrozenEstimator(estimator)`` would (MAPIE's
        ``conformalize``): nothing is refit. The box calibrates on every row;
        the ellipsoid and OT-CP still learn their shape (covariance,
        transport) from ``1 - calibration_size`` of the rows, which must be
        independent of the calibration rows, and calibrate on the others.
        The rows must not have been used to train the model. Like ``fit``,
        it changes nothing if it fails.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Calibration covariates.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Calibration responses.

        Returns
        -------
        self : object
            The calibrated estimator.
        """
        scoped_params(self, estimator=frozen_fitted(self.estimator, self))
        self._fit_work(X, y)
        return self

    # ---------------------------------------------------- cross-conformal
    def _cross_conformal(self):
        return getattr(self, "conformal_cv", "split") != "split"

    def _fit_work(self, X, y, fit_params=None, X_target=None):
        if not self._cross_conformal():
            return super()._fit_work(X, y, fit_params, X_target=X_target)
        if X_target is not None or getattr(self, "shift", None) is not None:
            raise ValueError(
                f"{type(self).__name__}(conformal_cv={self.conformal_cv!r}) does "
                "not take shift or X_target: the shift weights apply to split "
                "calibration only. Use conformal_cv='split'."
            )
        return self._fit_cross(X, y, fit_params)

    def _check_cross_conformal(self):
        """Raise where the region has no CV+ form (hook)."""

    def _fit_cross(self, X, y, fit_params=None):
        """CV+ / jackknife+: fold members, out-of-fold scores, a full model."""
        from sklearn.model_selection import KFold

        X = self._check_X(X, reset=True)
        y = self._validate_y(X, y)
        routed = self._route_fit_params(X, fit_params)
        if (
            y.ndim == 2
            and y.shape[1] == 1
            and not get_tags(self).target_tags.multi_output
        ):
            warn_user(
                "A column-vector y was passed when a 1d array was expected. "
                "Please change the shape of y to (n_samples,), for example "
                "using ravel().",
                DataConversionWarning,
            )
            y = y[:, 0]
        self._y_1d = y.ndim == 1
        y = y.reshape(y.shape[0], -1)
        n_samples, self.n_outputs_ = y.shape
        if isinstance(self._get_estimator(), FrozenEstimator):
            raise TypeError(
                f"{type(self).__name__}(conformal_cv={self.conformal_cv!r}) refits "
                "the estimator on every fold, and a FrozenEstimator is never "
                "refit: use conformal_cv='split' (or calibrate) with a fitted "
                "model."
            )
        self._check_cross_conformal()
        rng = check_random_state(self.random_state)
        cv = self.conformal_cv
        if isinstance(cv, Integral):
            seed = int(rng.randint(np.iinfo(np.int32).max))
            cv = KFold(n_splits=min(cv, n_samples), shuffle=True, random_state=seed)
        target = y[:, 0] if self.n_outputs_ == 1 else y
        folds = list(cv.split(X, target))
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
        log_progress(self, f"cross-conformal on {len(folds)} folds")
        members, scores = [], None
        for k, (train, test) in enumerate(folds):
            member = clone(self)
            member.n_outputs_, member._y_1d = self.n_outputs_, self._y_1d
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
        self.estimators_ = [member.estimator_ for member in members]
        # the full-data model serves predict (the CV+ bounds use the folds)
        self._fit_model(X, y, random_state=rng, fit_params=routed)
        self.calibration_scores_ = np.sort(scores, axis=0)
        self.n_calibration_samples_ = n_samples
        self.threshold_ = self._threshold(self.confidence_level, per_call=False)
        log_progress(self, f"threshold_ (CV+ ranks) = {self.threshold_}")

    def _cross_rank(self, level):
        """Rank of the CV+ order statistic at a level (float, as a threshold)."""
        n = self.n_calibration_samples_
        return float(math.ceil((n + 1) * level - 1e-12))

    def _center_scale(self, X):
        """Centre and per-output scale of the region at ``X`` (hook, d = 1)."""
        center = self._point(X)
        return center, np.ones_like(center)

    def _cross_bounds(self, X, ranks):
        """CV+ lower and upper bounds per output, each (n, d).

        Row ``i`` of the training set contributes ``c_k(x) - s_k(x) r_i`` and
        ``c_k(x) + s_k(x) r_i`` with ``k`` its fold and ``r_i`` its
        out-of-fold score; the bounds are the ``rank``-th largest of the former
        and the ``rank``-th smallest of the latter (Barber et al., 2021).
        """
        parts = [member._center_scale(X) for member in self._members]
        center = np.stack([c for c, _ in parts], axis=1)[:, self._fold_of]
        scale = np.stack([s for _, s in parts], axis=1)[:, self._fold_of]
        r = self._oof_scores.reshape(self._oof_scores.shape[0], -1)[None]
        low, up = center - scale * r, center + scale * r  # (m, n, d)
        ranks = np.broadcast_to(np.asarray(ranks, dtype=np.float64), (low.shape[2],))
        lower = np.empty((low.shape[0], low.shape[2]))
        upper = np.empty_like(lower)
        for j, rank in enumerate(ranks):
            k = int(rank) - 1
            upper[:, j] = np.partition(up[:, :, j], k, axis=1)[:, k]
            lower[:, j] = -np.partition(-low[:, :, j], k, axis=1)[:, k]
        return lower, upper

    def _cross_contains(self, X, y, ranks):
        lower, upper = self._cross_bounds(X, ranks)
        return np.all((lower <= y) & (y <= upper), axis=1)

    def _cross_log_volume(self, X, ranks):
        lower, upper = self._cross_bounds(X, ranks)
        with np.errstate(divide="ignore"):
            return np.sum(np.log(np.maximum(upper - lower, 0.0)), axis=1)

    def _cross_row_bytes(self):
        n = getattr(self, "n_calibration_samples_", 1)
        return 8 * 6 * n * (getattr(self, "n_outputs_", 1) + 1)

    def _row_bytes(self):
        extra = self._cross_row_bytes() if self._cross_conformal() else 0
        return super()._row_bytes() + extra

    def _fit_model(self, X, y, random_state, fit_params=None):
        est = self._point_estimator(self._get_estimator(), self.n_outputs_)
        if _num_samples(X) == 0:  # a frozen box: nothing to fit
            self.estimator_ = est
            return
        set_child_random_state(est, random_state)
        cv = getattr(self, "cv", None)
        self.estimator_, R = cross_fit_point_model(
            est,
            X,
            y,
            cv=cv,
            random_state=random_state,
            fit_params=(fit_params or {}).get("estimator"),
        )
        how = "in-sample" if cv is None else f"{cv}-fold out-of-fold"
        log_progress(self, f"fitted {type(est).__name__} ({how} residuals)")
        self._fit_region(X, R, random_state)

    @abstractmethod
    def _fit_region(self, X, R, random_state):
        """Fit the region shape on the (cross-fitted) training residuals."""

    @abstractmethod
    def _residual_scores(self, X, R):
        """Conformity scores of residuals ``R = y - yhat(x)``."""

    def _point(self, X):
        pred = np.asarray(self.estimator_.predict(X), dtype=np.float64)
        if (
            pred.shape[0] != _num_samples(X)
            or (pred.ndim == 2 and pred.shape[1] != self.n_outputs_)
            or (pred.ndim == 1 and self.n_outputs_ > 1)
        ):
            raise ValueError(
                f"The estimator predicts shape {pred.shape} for {self.n_outputs_} "
                "outputs. Use a multi-output regressor (e.g. wrap it in "
                "sklearn.multioutput.MultiOutputRegressor)."
            )
        return pred.reshape(pred.shape[0], -1)

    _predict_batch = _point

    def _conformity_scores_batch(self, X, y):
        return self._residual_scores(X, y - self._point(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        child = get_tags(self._get_estimator()).input_tags
        tags.input_tags.allow_nan = child.allow_nan
        tags.input_tags.sparse = child.sparse
        return tags
