"""Causal forest (Athey, Tibshirani and Wager, 2019) on cross-fitted residuals.

The forest itself is econml's generalized random forest
(``econml.grf.CausalForest``, the final stage of econml's
``CausalForestDML``): econml is an optional dependency of this one estimator.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from scipy.stats import norm
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted

from sklearn_iclr26.causal._base import (
    _draw,
    _weighted_stderr,
    check_binary_arm,
)
from sklearn_iclr26.causal._inference import (
    CATEInferenceResults,
    deprecated_alpha,
    miscoverage,
)
from sklearn_iclr26.causal._r_learner import RLearnerRegressor
from sklearn_iclr26.utils._sklearn_compat import Interval, RealNotInt, StrOptions
from sklearn_iclr26.utils._validation import N_JOBS_CONSTRAINT, store_params
from sklearn_iclr26.utils._verbose import log_progress

__all__ = ["CausalForestRegressor"]


def _causal_forest_class():
    try:
        from econml.grf import CausalForest
    except ImportError as exc:
        raise ImportError(
            "CausalForestRegressor grows econml's generalized random forest "
            "(econml.grf.CausalForest), an optional dependency: install it with "
            "`pip install econml` (or `pip install 'sklearn-iclr26[causal]'`). "
            "DRLearnerRegressor and RLearnerRegressor need "
            "no extra package."
        ) from exc
    return CausalForest


def _forest_features(X):
    try:
        return check_array(X, dtype=np.float64, input_name="X")
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{exc} The causal forest splits on X itself: X must be numeric and "
            "finite (encode categorical columns and impute missing values "
            "first; the nuisance models alone may take X as it is)."
        ) from exc


class CausalForestRegressor(RLearnerRegressor):
    """Honest causal forest for the conditional average treatment effect.

    The nuisances are those of :class:`RLearnerRegressor`: ``m(x) = E[y |
    x]`` and ``e(x)`` cross-fitted on ``cv`` folds, giving the residuals
    ``y - m(x)`` and ``t - e(x)``. The effect ``tau(x)`` is a generalized
    random forest (Athey, Tibshirani and Wager, 2019) that solves the local
    residual-on-residual moment at each ``x``: econml's
    ``econml.grf.CausalForest``, the final stage of econml's
    ``CausalForestDML``; with the same models, folds and ``random_state``
    this estimator equals ``CausalForestDML(discrete_treatment=True)``
    (``tests/test_causal_dr_r_forest.py``). Trees are honest (one half of
    each subsample places the splits, the other estimates the leaves), and
    the forest's own variance (the bootstrap of little bags over subforests
    of ``subforest_size`` trees) gives the normal intervals of
    :meth:`effect_interval` and :meth:`effect_inference`, with no refits.

    ``ate_aipw_`` and ``att_aipw_`` are econml's doubly robust ``ate_`` and
    ``att_``: the out-of-bag forest effect plus the residual correction
    ``(y_res - tau t_res) t_res / max(e (1 - e), 0.01)``, averaged (their
    standard errors: the standard deviation over the square root of n);
    they give the default :meth:`ate_interval`. econml is an optional
    dependency: ``fit`` raises an ``ImportError`` saying so when it is
    missing.

    Parameters
    ----------
    estimator : regressor, default=None
        Outcome model ``m(x)``, cloned per fold and given ``X`` untouched.
        ``None``: ``HistGradientBoostingRegressor()``.
    propensity_estimator : classifier, default=None
        Propensity model ``e(x)``, cloned per fold. ``None``: the
        preprocessing steps of an ``estimator`` Pipeline (cloned) followed by
        a standardised ``LogisticRegression``, or that regression alone.
    cv : int, cross-validation generator or iterable, default=2
        Cross-fitting folds (see :class:`RLearnerRegressor`).
    n_estimators : int, default=100
        Number of trees (econml's default); a multiple of
        ``subforest_size``.
    criterion : {"mse", "het"}, default="mse"
        econml's splitting criterion.
    max_depth : int, default=None
        Maximum tree depth.
    min_samples_split : int, default=10
        Minimum number of rows to split a node.
    min_samples_leaf : int, default=5
        Minimum number of rows in a leaf (in each half of an honest tree).
    max_features : int, float, "auto", "sqrt", "log2" or None, default="auto"
        Features considered at each split (econml's meaning; ``"auto"``:
        all).
    max_samples : float in (0, 0.5], default=0.45
        Fraction of the rows subsampled (without replacement) per tree.
    min_balancedness_tol : float in [0, 0.5], default=0.45
        How unbalanced a split may be.
    honest : bool, default=True
        Honest trees (needed for the forest's intervals to be valid).
    subforest_size : int, default=4
        Trees per subforest of the bootstrap of little bags.
    treatment_column : int or str, default=None
        The column of ``X`` holding the treatment (removed from the
        covariates). ``None``: pass ``treatment`` to ``fit``.
    %(cate_parameters)s
    n_jobs : int, default=None
        Threads used by the forest (``None``: 1).
    random_state : int, RandomState instance or None, default=None
        Seeds the folds, the nuisance models and the forest.
    verbose : int, default=0
        Progress messages.

    Attributes
    ----------
    outcome_estimators_ : list of regressors
        The outcome model ``m`` of each fold.
    propensity_estimators_ : list of classifiers
        The propensity model of each fold.
    %(cate_attributes)s

    See Also
    --------
    RLearnerRegressor : The same residuals with any final regressor.
    DRLearnerRegressor : Doubly robust pseudo-outcome regression.

    References
    ----------
    .. [1] S. Athey, J. Tibshirani and S. Wager, "Generalized random
       forests", Annals of Statistics, 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_iclr26.causal import CausalForestRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(400, 2))
    >>> t = (rng.uniform(size=400) < 0.5).astype(int)
    >>> y = X[:, 0] + t * (X[:, 1] > 0) + rng.normal(scale=0.1, size=400)
    >>> est = CausalForestRegressor(LinearRegression(), random_state=0)
    >>> est = est.fit(X, y, treatment=t)
    >>> tau = est.predict([[0.0, -1.0], [0.0, 1.0]])
    >>> bool(abs(tau[0]) < 0.2 and abs(tau[1] - 1.0) < 0.2)
    True
    >>> lower, upper = est.effect_interval([[0.0, 1.0]], confidence_level=0.9)
    """

    # effect_interval needs no bootstrap refits (CATEDisplay draws it)
    _has_own_effect_intervals = True

    _parameter_constraints: dict = {
        **{
            k: v
            for k, v in RLearnerRegressor._parameter_constraints.items()
            if k != "final_estimator"
        },
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "criterion": [StrOptions({"mse", "het"})],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "min_samples_split": [Interval(Integral, 2, None, closed="left")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "max_features": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
            StrOptions({"auto", "sqrt", "log2"}),
            None,
        ],
        "max_samples": [Interval(Real, 0, 0.5, closed="right")],
        "min_balancedness_tol": [Interval(Real, 0, 0.5, closed="both")],
        "honest": ["boolean"],
        "subforest_size": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": N_JOBS_CONSTRAINT,
    }

    def __init__(
        self,
        estimator=None,
        *,
        propensity_estimator=None,
        cv=2,
        n_estimators=100,
        criterion="mse",
        max_depth=None,
        min_samples_split=10,
        min_samples_leaf=5,
        max_features="auto",
        max_samples=0.45,
        min_balancedness_tol=0.45,
        honest=True,
        subforest_size=4,
        treatment_column=None,
        treatment_threshold=None,
        n_bootstrap=0,
        bootstrap_type="pivot",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    def _fit_final(self, X, XW, y, t, tcol, rng, sample_weight):
        forest_class = _causal_forest_class()
        m, e = self._oof
        Xf = _forest_features(X)
        forest = forest_class(
            n_estimators=self.n_estimators,
            criterion=self.criterion,
            max_depth=self.max_depth,
            min_samples_split=self.min_samples_split,
            min_samples_leaf=self.min_samples_leaf,
            max_features=self.max_features,
            max_samples=self.max_samples,
            min_balancedness_tol=self.min_balancedness_tol,
            honest=self.honest,
            inference=True,
            fit_intercept=True,
            subforest_size=self.subforest_size,
            n_jobs=1 if self.n_jobs is None else self.n_jobs,
            random_state=_draw(rng),
            verbose=0,
        )
        log_progress(self, f"growing the causal forest ({self.n_estimators} trees)")
        forest.fit(
            Xf,
            (t - e).reshape(-1, 1),
            (y - m).reshape(-1, 1),
            sample_weight=sample_weight,
        )
        self._forest_X = Xf
        return forest

    def _fit_aipw(self, X, y, t, tcol, sample_weight):
        """econml's ``ate_`` and ``att_`` of ``CausalForestDML`` (drate)."""
        m, e = self._oof
        del self._oof
        Xf = self._forest_X
        del self._forest_X
        t_res, y_res = t - e, y - m
        oob = np.asarray(
            self.final_estimator_.oob_predict(Xf), dtype=np.float64
        ).reshape(-1)
        var_t = np.clip(e * (1 - e), 1e-2, np.inf)
        dr = oob + (y_res - oob * t_res) * t_res / var_t
        for name, rows in (("ate", np.ones(len(y), bool)), ("att", t == 1)):
            ok = rows & ~np.isnan(dr)
            if sample_weight is None:
                value = float(np.mean(dr[ok]))
                stderr = float(np.std(dr[ok]) / np.sqrt(ok.sum()))
            else:
                w = sample_weight[ok]
                value = float(np.sum(w * dr[ok]) / w.sum())
                stderr = _weighted_stderr(dr[ok] - value, w)
            setattr(self, f"{name}_aipw_", value)
            setattr(self, f"{name}_aipw_stderr_", stderr)

    def _predict_effect(self, X, t):
        return np.asarray(
            self.final_estimator_.predict(_forest_features(X)), dtype=np.float64
        ).ravel()

    def _effect_and_stderr(self, X, T0, T1):
        """``(T1 - T0) tau(x)`` and its standard error from the forest."""
        check_is_fitted(self)
        covariates, _ = self._validate_predict(X)
        point, var = self.final_estimator_.predict_and_var(_forest_features(covariates))
        tau = np.asarray(point, dtype=np.float64).ravel()
        se = np.sqrt(np.maximum(np.asarray(var, dtype=np.float64).ravel(), 0.0))
        d = check_binary_arm(T1, len(tau), "T1") - check_binary_arm(T0, len(tau), "T0")
        return d * tau, np.abs(d) * se

    @deprecated_alpha
    def effect_interval(self, X, *, T0=0, T1=1, confidence_level=0.95, alpha=None):
        """Normal interval of :meth:`effect` from the forest's own variance.

        ``effect -/+ z stderr``, the standard error from the bootstrap of
        little bags of the honest forest (econml's ``CausalForestDML``
        intervals); no refits are needed.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.
        T0, T1 : {0, 1} or array-like of shape (n_samples,), default=0, 1
            Base and target treatment.
        confidence_level : float in (0, 1), default=0.95
            Level of the intervals.
        alpha : float in (0, 1), default=None
            Deprecated: econml's miscoverage, ``1 - confidence_level``.

        Returns
        -------
        lower, upper : ndarray of shape (n_samples,) or (n_samples, 1)
            The interval's bounds at each row, shaped as :meth:`effect`.
        """
        point, se = self._effect_and_stderr(X, T0, T1)
        z = norm.ppf(1 - miscoverage(confidence_level) / 2)
        return self._y_axis(point - z * se), self._y_axis(point + z * se)

    @deprecated_alpha
    def const_marginal_effect_interval(self, X, *, confidence_level=0.95, alpha=None):
        """Normal interval of ``tau(x)`` (see :meth:`effect_interval`).

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.
        confidence_level : float in (0, 1), default=0.95
            Level of the intervals.
        alpha : float in (0, 1), default=None
            Deprecated: econml's miscoverage, ``1 - confidence_level``.

        Returns
        -------
        lower, upper : ndarray of shape (n_samples, 1) or (n_samples, 1, 1)
            The bounds, shaped as :meth:`const_marginal_effect`.
        """
        point, se = self._effect_and_stderr(X, 0, 1)
        z = norm.ppf(1 - miscoverage(confidence_level) / 2)
        return self._cme_shape(point - z * se), self._cme_shape(point + z * se)

    def effect_inference(self, X, *, T0=0, T1=1):
        """Normal inference on :meth:`effect` from the forest's own variance.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.
        T0, T1 : {0, 1} or array-like of shape (n_samples,), default=0, 1
            Base and target treatment.

        Returns
        -------
        inference : CATEInferenceResults
            With ``point_estimate``, ``stderr``, ``zstat()``, ``pvalue()``,
            ``conf_int()`` and ``summary_frame()``.
        """
        point, se = self._effect_and_stderr(X, T0, T1)
        return CATEInferenceResults(
            self._y_axis(point), stderr=self._y_axis(se), kind="normal"
        )

    def const_marginal_effect_inference(self, X):
        """Normal inference on :meth:`const_marginal_effect` (the forest's variance).

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.

        Returns
        -------
        inference : CATEInferenceResults
            Shaped as :meth:`const_marginal_effect`.
        """
        point, se = self._effect_and_stderr(X, 0, 1)
        return CATEInferenceResults(
            self._cme_shape(point), stderr=self._cme_shape(se), kind="normal"
        )
