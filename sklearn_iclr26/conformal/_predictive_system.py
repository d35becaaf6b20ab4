"""Split conformal predictive systems (Vovk et al. 2017-2020), as crepes has them.

A conformal predictive system turns a point regressor into a predictive
distribution (a CDF) for every test row. With split calibration residuals
``r_i = y_i - yhat(x_i)`` (divided by a difficulty estimate ``sigma(x_i)``
when normalized, taken within the row's Mondrian bin when binned), the CDF at
``y`` of a test row is

    Q(y) = (#{i : yhat(x) + sigma(x) r_i <= y} + 1) / (n + 1)

(unsmoothed; the smoothed one draws the ties' share uniformly, ``Q(y) =
(#{<} + tau (#{=} + 1)) / (n + 1)``). Its value at the true ``y`` of a new
exchangeable row is a valid p-value; smoothed, it is exactly uniform (the
probability integral transform, PIT, of a calibrated forecast). Quantiles and
intervals are order statistics of the same shifted residuals. crepes'
``ConformalPredictiveSystem`` and ``ConformalRegressor`` compute the same
quantities from the same residuals, sigmas and bins (tests/test_conformal_
predictive.py).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.frozen import FrozenEstimator
from sklearn.utils.validation import (
    check_array,
    check_is_fitted,
    check_random_state,
    column_or_1d,
)

from sklearn_iclr26.conformal._frozen import frozen_fitted
from sklearn_iclr26.utils._atomic import atomic_fit, scoped_params
from sklearn_iclr26.utils._batching import batched
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
    store_params,
)
from sklearn_iclr26.utils._verbose import log_progress
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["ConformalPredictiveRegressor", "order_statistic_rank"]


def order_statistic_rank(level, n, *, side):
    """Rank (1-based) of the order statistic at ``level`` among ``n`` values.

    ``side="higher"``: ``ceil(level (n + 1))`` (the conformal upper rank: the
    value is ``+inf`` when the rank exceeds ``n``); ``side="lower"``:
    ``floor(level (n + 1))`` (``-inf`` when the rank is 0). The product is
    first taken to the integer it is within ``1e-9`` of, so that ``n = 99`` at
    level 0.9 gives the exact rank 90, not floating point's 89.99...

    Parameters
    ----------
    level : float
        Level in [0, 1].
    n : int
        Number of values.
    side : {"higher", "lower"}
        Which rounding.

    Returns
    -------
    rank : int
        The rank, in ``[0, n + 1]``.
    """
    t = level * (n + 1)
    if abs(t - round(t)) < 1e-9:
        return round(t)
    return math.ceil(t) if side == "higher" else math.floor(t)


def _bin_key(value):
    """A hashable key of a bin label (numpy scalars as Python scalars)."""
    return value.item() if isinstance(value, np.generic) else value


class ConformalPredictiveRegressor(RegressorMixin, BaseEstimator):
    """Split conformal predictive system: a predictive CDF for every row.

    Fits a point regressor on a training part and calibrates its residuals
    ``r_i = y_i - yhat(x_i)`` on the held-out part (crepes'
    ``ConformalPredictiveSystem``). With a ``normalizer``, the residuals are
    divided by a difficulty estimate ``sigma(x)`` learned on the training
    part (crepes' ``DifficultyEstimator``); with ``mondrian``, each row is
    calibrated against the residuals of its own bin only (crepes'
    ``MondrianCategorizer``). The predictive CDF of a row at ``y`` is
    ``Q(y) = (#{i : yhat(x) + sigma(x) r_i <= y} + 1) / (n + 1)`` over the
    ``n`` calibration residuals of the row's bin.

    **Guarantee** (exchangeable rows, of the same bin under ``mondrian``):
    ``P(Q(Y) <= t) <= t`` for every ``t``; the smoothed CDF
    (``predict_cdf(..., smoothed=True)``) at the true ``y`` is exactly
    uniform (a calibrated probability integral transform). Hence
    ``predict_quantile(X, q)`` is a conformal bound at level ``q`` (``P(Y
    <= Q_q) >= q`` for ``q >= 0.5``, ``P(Y >= Q_q) >= 1 - q`` below), and
    ``predict_interval`` covers with probability at least
    ``confidence_level`` (within each bin under ``mondrian``), marginally
    over the calibration draw.

    Parameters
    ----------
    estimator : regressor or None, default=None
        Point regressor, fitted on the training part with ``X`` untouched
        (a ``Pipeline`` can preprocess a raw DataFrame); ``None`` means
        :class:`~sklearn.linear_model.LinearRegression`. A
        :class:`~sklearn.frozen.FrozenEstimator` (or :meth:`calibrate`) uses
        a fitted one as it is.
    normalizer : None, "knn" or regressor, default=None
        Difficulty estimate ``sigma(x) > 0`` that scales the residuals.
        ``None``: no scaling (``sigma = 1``). ``"knn"``: crepes'
        ``DifficultyEstimator().fit(X, residuals=r, k=n_neighbors,
        beta=beta)``: the mean absolute training residual of the
        ``n_neighbors`` nearest training rows (features min-max scaled,
        clipped) plus ``beta``. A regressor: fitted on the training rows to
        predict ``|r|``; ``sigma = max(prediction, 0) + beta``. The
        normalizer computes on ``X`` itself, which must then be numeric.
    n_neighbors : int, default=25
        Neighbours of ``normalizer="knn"`` (clipped to the training rows).
    beta : float, default=0.01
        Added to every difficulty estimate (keeps ``sigma > 0``).
    mondrian : None, callable, str or int, default=None
        Mondrian bins: a callable ``bins = mondrian(X)`` (one hashable label
        per row, e.g. crepes' ``MondrianCategorizer().fit(...).apply`` or a
        function of a column), or the name (str, of a DataFrame column) or
        position (int) of a column of ``X`` whose values are the bins. Each
        bin is calibrated on its own calibration rows; a bin with too few
        (or no) calibration rows gets infinite bounds, with a warning.
    interval : {"equal_tailed", "symmetric"}, default="equal_tailed"
        Rule of :meth:`predict_interval`. ``"equal_tailed"``: the lower
        ``(1 - level) / 2`` and upper ``(1 + level) / 2`` quantiles of the
        predictive distribution (crepes' ``ConformalPredictiveSystem.
        predict_int``). ``"symmetric"``: ``yhat +- sigma q`` with ``q`` the
        ``ceil(level (n + 1))``-th smallest ``|r_i|`` (split conformal with
        the absolute, or normalized absolute, residual: crepes'
        ``ConformalRegressor.predict_int``, MAPIE's split regressor).
    confidence_level : float, default=0.9
        Level of :meth:`predict_interval`, in (0, 1).
    calibration_size : float or int, default=0.25
        Fraction (or number) of the rows held out for calibration.
    random_state : int, RandomState instance or None, default=None
        Seeds the split and the inner estimators (where they have no seed).
    verbose : int, default=0
        Progress messages when positive.

    Attributes
    ----------
    estimator_ : regressor
        The fitted point regressor.
    normalizer_ : object or None
        The fitted difficulty estimate (``None`` without normalizer).
    calibration_scores_ : ndarray of shape (n_calibration_samples_,)
        The sorted calibration scores ``r_i / sigma(x_i)`` (all bins).
    bins_ : ndarray or None
        The Mondrian bins seen in calibration (sorted), or ``None``.
    bin_counts_ : ndarray of shape (n_bins,) or None
        Calibration rows per bin.
    n_calibration_samples_ : int
        Number of calibration rows.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.

    See Also
    --------
    ConformalizedQuantileRegressor : Conformalized quantile regression.

    References
    ----------
    V. Vovk, J. Shen, V. Manokhin and M. Xie, "Nonparametric predictive
    distributions based on conformal prediction", Machine Learning 108
    (2019). H. Boström, U. Johansson and T. Löfström, "Mondrian conformal
    predictive distributions", COPA 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.conformal import ConformalPredictiveRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(400, 3))
    >>> y = X[:, 0] + 0.5 * rng.normal(size=400)
    >>> cps = ConformalPredictiveRegressor(random_state=0).fit(X, y)
    >>> cps.predict_cdf(X[:2], [0.0, 1.0]).round(2)
    array([0.01, 0.03])
    >>> cps.predict_interval(X[:2]).round(2)
    array([[0.84, 2.65],
           [1.31, 3.12]])
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"]), None],
        "normalizer": [None, StrOptions({"knn"}), HasMethods(["fit", "predict"])],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "beta": [Interval(Real, 0, None, closed="left")],
        "mondrian": [None, callable, str, Interval(Integral, 0, None, closed="left")],
        "interval": [StrOptions({"equal_tailed", "symmetric"})],
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
        "calibration_size": [
            Interval(RealNotInt, 0, 1, closed="neither"),
            Interval(Integral, 1, None, closed="left"),
        ],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        normalizer=None,
        n_neighbors=25,
        beta=0.01,
        mondrian=None,
        interval="equal_tailed",
        confidence_level=0.9,
        calibration_size=0.25,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    # ------------------------------------------------------------ routing
    def _get_estimator(self):
        from sklearn.linear_model import LinearRegression

        return LinearRegression() if self.estimator is None else self.estimator

    def get_metadata_routing(self):
        """Route ``fit`` metadata (e.g. ``sample_weight``) to the estimator.

        Returns
        -------
        routing : MetadataRouter
            The routing information.
        """
        return fit_router(self, {"estimator": self._get_estimator()})

    # ---------------------------------------------------------------- fit
    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, **fit_params):
        """Fit the point model (and normalizer) and calibrate the residuals.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates, handed untouched to the estimator.
        y : array-like of shape (n_samples,)
            Responses.
        **fit_params : dict
            Parameters of the estimator's ``fit`` (e.g. ``sample_weight``),
            given for every row; it receives those of its training rows
            (with metadata routing enabled, what it requested). The
            calibration is unweighted.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        self._fit_work(X, y, fit_params)
        return self

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def calibrate(self, X, y):
        """Calibrate a regressor fitted elsewhere, as it is.

        As ``fit`` with ``estimator=FrozenEstimator(estimator)``: nothing is
        refit. Without normalizer every row is calibration data; a
        normalizer still learns from ``1 - calibration_size`` of the rows.
        The rows must not have been used to train the model.

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
        scoped_params(self, estimator=frozen_fitted(self.estimator, self))
        self._fit_work(X, y, {})
        return self

    def _check_X(self, X, reset=False):
        return check_passthrough_X(self, X, reset=reset)

    def _fit_work(self, X, y, fit_params):
        X = self._check_X(X, reset=True)
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y "
                "is None."
            )
        y = column_or_1d(
            check_array(
                y,
                ensure_2d=False,
                dtype=np.float64,
                input_name="y",
                ensure_min_samples=2,
            ),
            warn=True,
        )
        n_samples = _num_samples(X)
        if n_samples != y.shape[0]:
            raise ValueError(
                "Found input variables with inconsistent numbers of samples: "
                f"[{n_samples}, {y.shape[0]}]"
            )
        estimator = self._get_estimator()
        routed = route_fit_params(self, fit_params or {}, ["estimator"])
        routed = _check_method_params(X, params=routed["estimator"])
        rng = check_random_state(self.random_state)
        frozen = isinstance(estimator, FrozenEstimator)
        if frozen and self.normalizer is None:
            cal_idx, train_idx = rng.permutation(n_samples), np.arange(0)
        else:
            cal_idx, train_idx = split_indices(
                n_samples, [self.calibration_size], random_state=rng
            )
        log_progress(
            self,
            f"fitting on {train_idx.shape[0]} rows, calibrating on "
            f"{cal_idx.shape[0]} rows",
        )
        est = clone(estimator)
        set_child_random_state(est, rng)
        X_train, y_train = _safe_indexing(X, train_idx), y[train_idx]
        if train_idx.shape[0]:
            est.fit(
                X_train,
                y_train,
                **_check_method_params(X, params=routed, indices=train_idx),
            )
        self.estimator_ = est
        self.normalizer_ = None
        if self.normalizer is not None:
            residuals = y_train - self._point(X_train)
            self.normalizer_ = self._fit_normalizer(X_train, residuals, rng)
        X_cal, y_cal = _safe_indexing(X, cal_idx), y[cal_idx]
        yhat, sigma = self._point(X_cal), self._sigma(X_cal)
        scores = (y_cal - yhat) / sigma
        self.n_calibration_samples_ = int(scores.shape[0])
        self.calibration_scores_ = np.sort(scores)
        if self.mondrian is None:
            self.bins_, self.bin_counts_ = None, None
            self._sorted_scores = [self.calibration_scores_]
        else:
            bins = self._bins(X_cal)
            self.bins_ = np.unique(bins)
            self._sorted_scores = [np.sort(scores[bins == b]) for b in self.bins_]
            self.bin_counts_ = np.asarray(
                [s.shape[0] for s in self._sorted_scores], dtype=np.intp
            )
        self._sorted_abs_scores = [np.sort(np.abs(s)) for s in self._sorted_scores]
        self._max_bin = max(s.shape[0] for s in self._sorted_scores)
        # the fitted level's policy: warn now (never raise) when too small
        level = self.confidence_level
        needed = (
            math.ceil(2.0 / (1 - level) - 1.0 - 1e-9)
            if self.interval == "equal_tailed"
            else None
        )
        calibration_size_ok(self._smallest_bin(), level, needed=needed)
        log_progress(self, f"calibrated {self.n_calibration_samples_} residuals")

    def _fit_normalizer(self, X, residuals, rng):
        from sklearn.neighbors import NearestNeighbors
        from sklearn.preprocessing import MinMaxScaler

        if isinstance(self.normalizer, str):  # "knn", as crepes' estimator
            Z = self._numeric(X)
            scaler = MinMaxScaler(clip=True).fit(Z)
            k = min(self.n_neighbors, Z.shape[0])
            knn = NearestNeighbors(n_neighbors=k).fit(scaler.transform(Z))
            return {"scaler": scaler, "knn": knn, "residuals": np.abs(residuals)}
        model = clone(self.normalizer)
        set_child_random_state(model, rng)
        return model.fit(X, np.abs(residuals))

    def _numeric(self, X):
        try:
            return check_array(X, dtype=np.float64, input_name="X")
        except ValueError as exc:
            raise ValueError(
                f'{type(self).__name__}(normalizer="knn") computes neighbours on X '
                f"itself, and X must be numeric and finite ({exc}). Pass a "
                "regressor (e.g. a Pipeline with your preprocessing) as normalizer."
            ) from exc

    def _sigma(self, X):
        n = _num_samples(X)
        if self.normalizer_ is None:
            return np.ones(n)
        if isinstance(self.normalizer_, dict):
            Z = self.normalizer_["scaler"].transform(self._numeric(X))
            idx = self.normalizer_["knn"].kneighbors(Z, return_distance=False)
            sigma = self.normalizer_["residuals"][idx].mean(axis=1)
        else:
            sigma = np.maximum(
                np.asarray(self.normalizer_.predict(X), dtype=np.float64).ravel(), 0.0
            )
        sigma = sigma + self.beta
        if np.any(sigma <= 0) or not np.all(np.isfinite(sigma)):
            raise ValueError(
                "The normalizer gave a difficulty estimate that is not positive "
                "and finite; use beta > 0."
            )
        return sigma

    def _point(self, X):
        pred = np.asarray(self.estimator_.predict(X), dtype=np.float64)
        if pred.ndim == 2 and pred.shape[1] == 1:
            pred = pred[:, 0]
        if pred.shape != (_num_samples(X),):
            raise ValueError(
                f"The estimator predicts shape {pred.shape}; "
                f"{type(self).__name__} needs one prediction per row."
            )
        return pred

    def _bins(self, X):
        mondrian = self.mondrian
        if callable(mondrian):
            bins = mondrian(X)
        elif isinstance(mondrian, str):
            if not hasattr(X, "columns"):
                raise ValueError(
                    f"mondrian={mondrian!r} names a column, which needs a DataFrame "
                    "X; pass a column position (int) or a callable."
                )
            bins = X[mondrian]
        else:
            if hasattr(X, "iloc"):
                bins = X.iloc[:, mondrian]
            else:
                bins = _safe_indexing(X, mondrian, axis=1)
                if hasattr(bins, "toarray"):
                    bins = bins.toarray()
        bins = np.asarray(bins)
        if bins.ndim == 2 and bins.shape[1] == 1:
            bins = bins[:, 0]
        if bins.shape != (_num_samples(X),):
            raise ValueError(
                f"mondrian gave bins of shape {bins.shape} for {_num_samples(X)} "
                "rows; it must give one label per row."
            )
        if bins.dtype.kind == "f" and np.isnan(bins).any():
            raise ValueError("mondrian gave NaN bins.")
        return bins

    # ---------------------------------------------------------- internals
    def _row_bytes(self):
        return 8 * 4 * (getattr(self, "_max_bin", 1) + 4)

    def _groups(self, X):
        """``[(index, rows)]``: the rows of each bin of a batch.

        ``index`` is the bin's position in ``bins_`` (0 without ``mondrian``),
        ``-1`` for a bin that had no calibration rows.
        """
        if self.mondrian is None:
            return [(0, np.arange(_num_samples(X)))]
        position = {_bin_key(b): i for i, b in enumerate(self.bins_)}
        bins = self._bins(X)
        out = []
        unseen = []
        for b in np.unique(bins):
            key = position.get(_bin_key(b), -1)
            if key < 0:
                unseen.append(_bin_key(b))
            out.append((key, np.flatnonzero(bins == b)))
        if unseen:
            warn_user(
                f"Mondrian bins {unseen[:10]} have no calibration rows: their "
                "predictive distributions are uninformative (infinite bounds, CDF "
                "1 unsmoothed). Use more data or coarser bins."
            )
        return out

    def _scores_of(self, key, absolute=False):
        if key < 0:
            return np.empty(0)
        return (self._sorted_abs_scores if absolute else self._sorted_scores)[key]

    def _ranked(self, key, level, side):
        """Per-bin order statistic of the scores at a level (+-inf outside)."""
        s = self._scores_of(key)
        k = order_statistic_rank(level, s.shape[0], side=side)
        if k < 1:
            return -np.inf
        if k > s.shape[0]:
            return np.inf
        return s[k - 1]

    # --------------------------------------------------------- front-ends
    def predict(self, X):
        """Point predictions of the estimator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predictions.
        """
        check_is_fitted(self)
        X = self._check_X(X)
        return batched(self._point, X, row_bytes=64)

    def predict_sigma(self, X):
        """Difficulty estimates ``sigma(x)`` (ones without normalizer).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.

        Returns
        -------
        sigma : ndarray of shape (n_samples,)
            Positive scales of the residuals.
        """
        check_is_fitted(self)
        X = self._check_X(X)
        return batched(self._sigma, X, row_bytes=64 * (self.n_neighbors + 2))

    def predict_cdf(self, X, y, *, smoothed=False, random_state=None):
        """Value of each row's predictive CDF at ``y``.

        ``Q(y) = (#{i : yhat(x) + sigma(x) r_i <= y} + 1) / (n + 1)`` over
        the ``n`` calibration scores ``r_i`` of the row's bin (crepes'
        ``predict_p(..., smoothing=False)``). At the true ``y`` of a new
        exchangeable row it is a valid p-value (``P(Q(Y) <= t) <= t``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        y : float, array-like of shape (n_samples,) or (n_samples, m)
            Where to evaluate: one value for every row, one per row, or a
            grid of ``m`` values per row.
        smoothed : bool, default=False
            The smoothed CDF ``(#{<} + tau (#{=} + 1)) / (n + 1)``, one
            uniform ``tau`` per row (per row and grid point for a 2-D
            ``y``): exactly uniform at the true ``y`` (the PIT), but
            randomised (crepes' default ``smoothing=True``).
        random_state : int, RandomState instance or None, default=None
            The draws of ``tau`` (``smoothed=True`` only).

        Returns
        -------
        cdf : ndarray of shape (n_samples,) or (n_samples, m)
            Values in ``(0, 1]``.
        """
        check_is_fitted(self)
        X = self._check_X(X)
        n = _num_samples(X)
        y = np.asarray(y, dtype=np.float64)
        if y.ndim == 0:
            y = np.full(n, float(y))
        if y.ndim > 2 or y.shape[0] != n:
            raise ValueError(
                f"y must be a float or have one row per row of X ({n}), got shape "
                f"{y.shape}."
            )
        if np.isnan(y).any():
            raise ValueError("y contains NaN.")
        one_d = y.ndim == 1
        Y = y.reshape(n, -1)
        tau = (
            check_random_state(random_state).uniform(size=Y.shape) if smoothed else None
        )

        def cdf_of(Xb, Yb, taub):
            yhat, sigma = self._point(Xb), self._sigma(Xb)
            out = np.empty(Yb.shape)
            for key, rows in self._groups(Xb):
                s = self._scores_of(key)
                # the crepes form yhat + sigma r_i, computed as it computes it
                c = yhat[rows, None] + sigma[rows, None] * s[None, :]
                for j in range(Yb.shape[1]):
                    yj = Yb[rows, j, None]
                    le = np.sum(c <= yj, axis=1)
                    if taub is None:
                        out[rows, j] = (le + 1.0) / (s.shape[0] + 1.0)
                    else:
                        lt = np.sum(c < yj, axis=1)
                        out[rows, j] = (lt + taub[rows, j] * (le - lt + 1.0)) / (
                            s.shape[0] + 1.0
                        )
            return out

        out = batched(cdf_of, X, Y, tau, row_bytes=self._row_bytes() * (Y.shape[1] + 1))
        return out[:, 0] if one_d else out

    def predict_quantile(self, X, quantile, *, side="auto"):
        """Predict quantiles of each row's predictive distribution.

        The ``ceil(q (n + 1))``-th smallest of ``yhat(x) + sigma(x) r_i``
        (``side="higher"``, ``+inf`` past ``n``) or the ``floor(q (n +
        1))``-th (``side="lower"``, ``-inf`` at 0), as crepes'
        ``predict_percentiles`` with ``higher_percentiles`` and
        ``lower_percentiles``. ``"higher"`` gives ``P(Y <= Q) >= q``,
        ``"lower"`` ``P(Y >= Q) >= 1 - q`` (exchangeable rows).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        quantile : float or array-like of shape (k,)
            Levels in [0, 1].
        side : {"auto", "higher", "lower"}, default="auto"
            ``"auto"``: ``"lower"`` for levels below 0.5, ``"higher"``
            otherwise (the conservative side of each tail).

        Returns
        -------
        quantiles : ndarray of shape (n_samples,) or (n_samples, k)
            One column per level (1-D for a float ``quantile``).
        """
        check_is_fitted(self)
        if side not in ("auto", "higher", "lower"):
            raise ValueError(f'side must be "auto", "higher" or "lower", got {side!r}.')
        levels = np.asarray(quantile, dtype=np.float64)
        if levels.ndim > 1 or np.any(~((levels >= 0) & (levels <= 1))):
            raise ValueError(
                f"quantile must be a float or 1-D sequence in [0, 1], got {quantile!r}."
            )
        scalar = levels.ndim == 0
        levels = levels.reshape(-1)
        sides = [
            side if side != "auto" else ("lower" if q < 0.5 else "higher")
            for q in levels
        ]
        X = self._check_X(X)
        smallest = self._smallest_bin()
        for q in levels:
            tail = min(q, 1 - q)
            needed = math.ceil(1.0 / tail - 1.0 - 1e-9) if tail > 0 else 1
            if 0 < tail < 0.5 and smallest < needed:
                calibration_size_ok(smallest, 1 - tail, needed=needed)
                break
        return self._quantiles(X, levels, sides, scalar)

    def _smallest_bin(self):
        return min(s.shape[0] for s in self._sorted_scores)

    def _quantiles(self, X, levels, sides, scalar=False):
        def quantiles_of(Xb):
            yhat, sigma = self._point(Xb), self._sigma(Xb)
            out = np.empty((yhat.shape[0], levels.shape[0]))
            for key, rows in self._groups(Xb):
                for j, (q, sd) in enumerate(zip(levels, sides)):
                    r = self._ranked(key, q, sd)
                    out[rows, j] = yhat[rows] + sigma[rows] * r if np.isfinite(r) else r
            return out

        out = batched(quantiles_of, X, row_bytes=self._row_bytes())
        return out[:, 0] if scalar else out

    def predict_interval(self, X, confidence_level=None):
        """Prediction intervals ``[lower, upper]``.

        ``interval="equal_tailed"``: the ``(1 - level) / 2`` lower and
        ``(1 + level) / 2`` higher quantiles (:meth:`predict_quantile`);
        ``"symmetric"``: ``yhat +- sigma q`` with ``q`` the ``ceil(level (n
        + 1))``-th smallest ``|r_i|`` of the row's bin. Either covers a new
        exchangeable row with probability at least ``level`` (within each
        Mondrian bin). Too few calibration rows for the level (in a bin)
        give infinite bounds, with a warning.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Covariates.
        confidence_level : float, default=None
            Level in (0, 1); ``None`` uses the constructor's.

        Returns
        -------
        intervals : ndarray of shape (n_samples, 2)
            Lower (``[:, 0]``) and upper (``[:, 1]``) bounds.
        """
        check_is_fitted(self)
        level = check_confidence_level(
            self.confidence_level if confidence_level is None else confidence_level
        )
        X = self._check_X(X)
        smallest = self._smallest_bin()
        if self.interval == "equal_tailed":
            # each tail at (1 - level) / 2: 2 / (1 - level) - 1 rows needed
            needed = math.ceil(2.0 / (1 - level) - 1.0 - 1e-9)
            if smallest < needed:
                calibration_size_ok(smallest, level, needed=needed)
            levels = np.array([(1 - level) / 2, (1 + level) / 2])
            return self._quantiles(X, levels, ["lower", "higher"])
        if smallest < math.ceil(1.0 / (1 - level) - 1.0 - 1e-9):
            calibration_size_ok(smallest, level)

        def intervals_of(Xb):
            yhat, sigma = self._point(Xb), self._sigma(Xb)
            out = np.empty((yhat.shape[0], 2))
            for key, rows in self._groups(Xb):
                s = self._scores_of(key, absolute=True)
                k = order_statistic_rank(level, s.shape[0], side="higher")
                if k > s.shape[0]:
                    out[rows] = [-np.inf, np.inf]
                    continue
                out[rows, 0] = yhat[rows] - s[k - 1] * sigma[rows]
                out[rows, 1] = yhat[rows] + s[k - 1] * sigma[rows]
            return out

        return batched(intervals_of, X, row_bytes=self._row_bytes())

    def __sklearn_tags__(self):
        from sklearn.utils import get_tags

        tags = super().__sklearn_tags__()
        child = get_tags(self._get_estimator()).input_tags
        # the kNN normalizer and the Mondrian bins compute on X itself
        needs_numeric = isinstance(self.normalizer, str) or self.mondrian is not None
        tags.input_tags.allow_nan = child.allow_nan and not needs_numeric
        tags.input_tags.sparse = child.sparse and not needs_numeric
        return tags
