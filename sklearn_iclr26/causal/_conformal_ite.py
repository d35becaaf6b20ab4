"""Conformal intervals for counterfactual outcomes and individual treatment effects."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.utils import column_or_1d
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    check_random_state,
)

from sklearn_iclr26.causal._base import (
    check_arms,
    check_covariates,
    check_treatment,
    default_propensity_estimator,
)
from sklearn_iclr26.causal._t_learner import TLearnerRegressor
from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._random import seed_from_random_state, set_child_random_state
from sklearn_iclr26.utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _check_y,
    _fit_context,
    _num_samples,
    _safe_indexing,
)
from sklearn_iclr26.utils._split import split_indices
from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress
from sklearn_iclr26.utils._warnings import warn_user
from sklearn_iclr26.utils._weighted_quantile import weighted_conformal_quantile

__all__ = ["ConformalITERegressor"]


def _quantile_model(estimator, q, seed):
    """A clone of ``estimator`` predicting the ``q``-quantile."""
    model = set_child_random_state(clone(estimator), seed)
    params = model.get_params()
    if "quantile" in params:  # HistGradientBoostingRegressor, QuantileRegressor
        return model.set_params(quantile=q)
    if "objective" in params and "alpha" in params:  # LightGBM
        return model.set_params(objective="quantile", alpha=q)
    raise ValueError(
        "conformity_score='quantile' needs a `quantile_estimator` with a "
        "`quantile` parameter (HistGradientBoostingRegressor(loss='quantile'), "
        "QuantileRegressor) or LightGBM's `objective`/`alpha`; got "
        f"{type(estimator).__name__}."
    )


def _weights(e, arm, target):
    """Likelihood ratio of the ``target`` population to arm ``arm``'s, at ``e``.

    ``P(X | T = a)`` has density proportional to ``e(x)`` (``a = 1``) or
    ``1 - e(x)`` (``a = 0``) with respect to ``P(X)``.
    """
    p_arm = e if arm == 1 else 1.0 - e
    if target == "population":
        return 1.0 / p_arm
    p_target = e if target == 1 else 1.0 - e
    return p_target / p_arm


class ConformalITERegressor(RegressorMixin, BaseEstimator):
    """Conformal intervals for counterfactual outcomes and individual effects.

    Wraps a CATE learner (:class:`TLearnerRegressor` by default, or
    :class:`XLearnerRegressor`, :class:`GeodesicCATERegressor`) and turns its
    outcome models into intervals with finite-sample coverage under
    ignorability: weighted split conformal prediction of each potential
    outcome (Lei and Candès, JRSS-B 2021), the calibration rows of arm ``a``
    reweighted by the likelihood ratio of the target population to that arm's
    population, a function of a cross-fitted propensity ``e(x)``
    (Tibshirani, Barber, Candès and Ramdas, 2019), and intervals for the
    individual treatment effect ``Y(1) - Y(0)`` built from them.

    Guarantees, for i.i.d. units, ignorability (``Y(0), Y(1)`` independent of
    ``T`` given ``x``) and overlap:

    - ``predict_counterfactual_interval(X)``: ``P(Y(a) in C_a(X)) >= level``
      for a new unit of the population, each arm ``a``; with
      ``treatment=`` given, the interval of the unobserved arm of each unit
      covers at the level among the units of that unit's arm (the
      counterfactual). Exact with ``known_propensity`` (a randomised trial,
      where the intervals are the plain split-conformal ones); approximate
      with an estimated propensity, the error growing with the error of the
      likelihood ratio (Lei and Candès, Theorem 3).
    - ``predict_interval(X)``: ``P(Y(1) - Y(0) in C(X)) >= level``, a
      conservative guarantee: ``ite_method="bonferroni"`` subtracts two
      population intervals at level ``1 - (1 - level) / 2`` each,
      ``[lo_1 - hi_0, hi_1 - lo_0]`` (a union bound);
      ``ite_method="nested"`` computes unit-level effect intervals on held-out
      units (their observed outcome and the other arm's counterfactual
      interval at ``1 - (1 - level) / 2``), regresses their bounds on ``x`` and
      conformalizes the regressions at ``1 - (1 - level) / 2`` (the exact
      nested construction of Lei and Candès, Section 4.2).

    Neither promises coverage *conditional* on ``x``; with an estimated
    propensity near 0 or 1 (poor overlap) the weights are clipped at
    ``propensity_clip`` with a warning, and coverage can fall below the level
    there. The bootstrap intervals of the CATE learners answer another
    question: they cover the *average* effect at ``x``, not one unit's effect.

    Parameters
    ----------
    cate_estimator : CATE learner, default=None
        A learner of this package with ``predict_outcomes`` (T-, X- or
        G-learner), given ``X`` untouched; ``None``:
        ``TLearnerRegressor()``. When it names a ``treatment_column`` the
        treatment is read from ``X`` through it.
    confidence_level : float or array-like of float, default=0.9
        Target coverage in (0, 1); a sequence gives a trailing level axis.
    propensity_estimator : classifier, default=None
        Propensity model ``e(x) = P(T = 1 | x)``, cross-fitted (``cv`` folds)
        so calibration rows are weighted out of fold; ``None``: a
        standardised ``LogisticRegression``.
    known_propensity : float, default=None
        The propensity of a randomised trial, in (0, 1): no propensity model
        is fitted, and the weights are equal (plain split conformal).
    conformity_score : {"residual", "quantile"}, default="residual"
        ``"residual"``: ``|y - mu_a(x)|`` around the learner's outcome models;
        ``"quantile"``: conformalized quantile regression per arm
        (``max(q_lo(x) - y, y - q_hi(x))``), for heteroscedastic outcomes.
    quantile_estimator : regressor, default=None
        The quantile model of ``conformity_score="quantile"``, cloned per arm, bound and
        level; ``None``: ``HistGradientBoostingRegressor(loss="quantile")``.
    ite_method : {"bonferroni", "nested"}, default="bonferroni"
        How the effect interval is built (see above). ``"nested"`` needs good
        overlap: a unit whose propensity is extreme has an infinite
        counterfactual interval (its weight outweighs the calibration rows),
        and when more than ``(1 - level) / 2`` of the held-out units do, every
        effect interval is infinite (measured: all of them under a strong
        propensity, ``sigmoid(1.5 x0)``, at ``n = 2000``; see
        ``doc/causal.rst``).
    calibration_size : float, default=0.5
        Fraction of the rows held out from the outcome models. ``"bonferroni"``
        calibrates on all of them; ``"nested"`` splits them in three equal
        parts: counterfactual calibration, bound regression, bound
        calibration.
    propensity_clip : float, default=0.01
        Propensities are clipped to ``[propensity_clip, 1 - propensity_clip]``
        (a warning names the overlap problem when any is).
    cv : int, default=5
        Folds of the cross-fitted propensity.
    random_state : int, RandomState instance or None, default=None
        Seeds the splits, the folds and the cloned models.
    verbose : int, default=0
        Progress messages.

    Attributes
    ----------
    cate_estimator_ : CATE learner
        The learner fitted on the training rows.
    propensity_estimator_ : classifier or None
        The propensity model fitted on all rows (``None`` with
        ``known_propensity``).
    calibration_scores_ : list of two ndarray
        Conformity scores of the calibration rows of arm 0 and arm 1.
    calibration_propensity_ : list of two ndarray
        Their out-of-fold propensities (clipped).
    calibration_indices_ : list of two ndarray of int
        The rows of ``X`` that calibrate arm 0 and arm 1.
    bound_estimators_ : list of (regressor, regressor) or None
        ``"nested"``: the regressions of the lower and upper unit-level
        effect bounds, one pair per level.
    bound_thresholds_ : ndarray of shape (n_levels,) or None
        ``"nested"``: the conformal thresholds of the bound regressions.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    TLearnerRegressor : The default CATE learner.
    CATEDisplay : Effects with their intervals.

    References
    ----------
    .. [1] L. Lei and E. J. Candès, "Conformal inference of counterfactuals
       and individual treatment effects", JRSS-B 83(5), 2021.
    .. [2] R. J. Tibshirani, R. F. Barber, E. J. Candès and A. Ramdas,
       "Conformal prediction under covariate shift", NeurIPS 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_iclr26.causal import ConformalITERegressor, TLearnerRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(1000, 2))
    >>> t = (rng.uniform(size=1000) < 0.5).astype(int)
    >>> y = X[:, 0] + t * (1 + X[:, 1]) + rng.normal(scale=0.5, size=1000)
    >>> est = ConformalITERegressor(
    ...     TLearnerRegressor(LinearRegression()), known_propensity=0.5,
    ...     ite_method="bonferroni", random_state=0).fit(X, y, treatment=t)
    >>> est.predict_interval(X[:2]).shape
    (2, 2)
    >>> est.predict_counterfactual_interval(X[:2]).shape
    (2, 2, 2)
    """

    _parameter_constraints: dict = {
        "cate_estimator": [HasMethods(["fit", "predict", "predict_outcomes"]), None],
        "confidence_level": [Interval(Real, 0, 1, closed="neither"), "array-like"],
        "propensity_estimator": [HasMethods(["fit", "predict_proba"]), None],
        "known_propensity": [Interval(Real, 0, 1, closed="neither"), None],
        "conformity_score": [StrOptions({"residual", "quantile"})],
        "quantile_estimator": [HasMethods(["fit", "predict"]), None],
        "ite_method": [StrOptions({"nested", "bonferroni"})],
        "calibration_size": [Interval(Real, 0, 1, closed="neither")],
        "propensity_clip": [Interval(Real, 0, 0.5, closed="left")],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        cate_estimator=None,
        *,
        confidence_level=0.9,
        propensity_estimator=None,
        known_propensity=None,
        conformity_score="residual",
        quantile_estimator=None,
        ite_method="bonferroni",
        calibration_size=0.5,
        propensity_clip=0.01,
        cv=5,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    # ---------------------------------------------------------------- helpers
    def _levels(self):
        levels = np.atleast_1d(np.asarray(self.confidence_level, dtype=np.float64))
        if levels.ndim != 1 or not np.all((levels > 0) & (levels < 1)):
            raise ValueError(
                "confidence_level must be a float or a 1-D sequence of floats in "
                f"(0, 1), got {self.confidence_level!r}."
            )
        return levels

    def _shape_levels(self, out):
        """Drop the trailing level axis for a scalar ``confidence_level``."""
        return out[..., 0] if np.ndim(self.confidence_level) == 0 else out

    def _covariates_and_treatment(self, X, learner):
        """Covariates (``X`` without a treatment column) and that column."""
        if getattr(learner, "treatment_column", None) is None:
            return X, None
        return learner._split_treatment_column(X)

    def _clip(self, e):
        lo = self.propensity_clip
        clipped = (e < lo) | (e > 1 - lo)
        if np.any(clipped):
            warn_user(
                f"{np.mean(clipped):.1%} of the propensities are outside "
                f"[{lo}, {1 - lo}] and were clipped: overlap is poor there, the "
                "weights of those rows are bounded rather than infinite, and "
                "coverage can fall below the level in those regions."
            )
        return np.clip(e, lo, 1 - lo)

    def _propensity(self, covariates):
        n = _num_samples(covariates)
        if self.known_propensity is not None:
            return np.full(n, float(self.known_propensity))
        proba = self.propensity_estimator_.predict_proba(covariates)
        classes = list(self.propensity_estimator_.classes_)
        return np.clip(
            np.asarray(proba[:, classes.index(1)], dtype=np.float64),
            self.propensity_clip,
            1 - self.propensity_clip,
        )

    def _arm_predictions(self, X, arm):
        """Per level: ``(center_lo, center_hi)`` of arm ``arm``'s score model."""
        if self.conformity_score == "residual":
            mu = np.asarray(self.cate_estimator_.predict_outcomes(X)[arm], float)
            return [(mu, mu)] * len(self._level_list)
        out = []
        for lo_model, hi_model in self.quantile_estimators_[arm]:
            lo = np.asarray(lo_model.predict(X), dtype=np.float64).ravel()
            hi = np.asarray(hi_model.predict(X), dtype=np.float64).ravel()
            out.append((lo, hi))
        return out

    def _arm_scores(self, X, y, arm):
        """Conformity scores, per level, of rows of arm ``arm``."""
        return np.stack(
            [np.maximum(lo - y, y - hi) for lo, hi in self._arm_predictions(X, arm)],
            axis=1,
        )

    def _arm_interval(self, X, e, arm, target, indices):
        """``(n, 2, len(indices))`` weighted split-conformal interval of ``Y(arm)``.

        ``indices`` index the fitted levels (``_level_list``: the
        counterfactual levels, then the effect's arm levels).
        """
        cal_scores = self.calibration_scores_[arm]
        cal_w = _weights(self.calibration_propensity_[arm], arm, target)
        test_w = _weights(e, arm, target)
        preds = self._arm_predictions(X, arm)
        out = np.empty((len(e), 2, len(indices)))
        for j, k in enumerate(indices):
            q = weighted_conformal_quantile(
                cal_scores[:, k],
                self._level_list[k],
                sample_weight=cal_w,
                test_weight=test_w,
            )
            lo, hi = preds[k]
            out[:, 0, j] = lo - q
            out[:, 1, j] = hi + q
        return out

    # -------------------------------------------------------------------- fit
    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, *, treatment=None):
        """Fit the CATE learner, the propensity model and the calibration scores.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates, handed untouched to the CATE learner.
        y : array-like of shape (n_samples,)
            Factual outcomes.
        treatment : array-like of shape (n_samples,), default=None
            Binary treatment; required unless the CATE learner names a
            ``treatment_column`` of ``X``.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        levels = self._levels()
        learner = (
            TLearnerRegressor() if self.cate_estimator is None else self.cate_estimator
        )
        X = check_covariates(self, X, reset=True)
        y = _check_y(y, y_numeric=True, estimator=self)
        y = column_or_1d(y, warn=True).astype(np.float64)
        check_consistent_length(X, y)
        n = _num_samples(X)
        if treatment is None and getattr(learner, "treatment_column", None) is None:
            check_treatment(None, n)  # raises, naming `treatment`
        if treatment is not None:
            t_given = check_treatment(treatment, n)
            strata = t_given
        else:
            # the arms by the learner's rule (its treatment column, thresholded
            # on all rows), for the split, the propensity and the calibration
            _, strata = clone(learner)._split_treatment_column(X, reset=True)
            t_given = None
            strata = np.asarray(strata, dtype=np.float64)
        check_arms(strata)
        rng = check_random_state(self.random_state)

        nested = self.ite_method == "nested"
        fractions = [1.0 - self.calibration_size]
        if nested:
            third = self.calibration_size / 3.0
            fractions += [third, third]
        parts = split_indices(n, fractions, y=strata, random_state=rng)
        train = parts[0]

        # 1. the outcome models, on the training rows
        log_progress(self, f"fitting the CATE learner on {len(train)} rows")
        cate = set_child_random_state(clone(learner), seed_from_random_state(rng))
        kwargs = {} if t_given is None else {"treatment": t_given[train]}
        cate.fit(_safe_indexing(X, train), y[train], **kwargs)
        self.cate_estimator_ = cate
        covariates, _ = self._covariates_and_treatment(X, cate)
        t = strata

        # 2. the propensity, cross-fitted: calibration rows are scored out of fold
        if self.known_propensity is not None:
            self.propensity_estimator_ = None
            e_oof = np.full(n, float(self.known_propensity))
        else:
            model = (
                default_propensity_estimator()
                if self.propensity_estimator is None
                else self.propensity_estimator
            )
            model = set_child_random_state(clone(model), seed_from_random_state(rng))
            folds = StratifiedKFold(
                n_splits=min(self.cv, int(min(t.sum(), n - t.sum()))),
                shuffle=True,
                random_state=seed_from_random_state(rng),
            )
            log_progress(self, "cross-fitting the propensity model")
            e_oof = cross_val_predict(
                clone(model),
                covariates,
                t.astype(int),
                cv=folds,
                method="predict_proba",
            )[:, 1]
            self.propensity_estimator_ = model.fit(covariates, t.astype(int))
            e_oof = self._clip(np.asarray(e_oof, dtype=np.float64))

        # 3. the score models (quantile regressions per arm) on the training rows
        arm_levels = 1.0 - (1.0 - levels) / 2.0  # the effect intervals' arm level
        # the fitted levels: the counterfactual levels, then the arm levels
        self._level_list = [*levels, *arm_levels]
        if self.conformity_score == "quantile":
            base = (
                HistGradientBoostingRegressor(loss="quantile")
                if self.quantile_estimator is None
                else self.quantile_estimator
            )
            # one model pair per fitted level (2 * n_levels pairs per arm)
            self.quantile_estimators_ = []
            for arm in (0, 1):
                rows = train[t[train] == arm]
                pairs = []
                for level in self._level_list:
                    a = 1.0 - level
                    pair = tuple(
                        _quantile_model(base, q, seed_from_random_state(rng)).fit(
                            _safe_indexing(X, rows), y[rows]
                        )
                        for q in (a / 2.0, 1.0 - a / 2.0)
                    )
                    pairs.append(pair)
                self.quantile_estimators_.append(pairs)
        else:
            self.quantile_estimators_ = None

        # 4. calibration scores per arm
        calib = parts[1]
        self.calibration_scores_, self.calibration_propensity_ = [], []
        self.calibration_indices_ = []
        for arm in (0, 1):
            rows = calib[t[calib] == arm]
            self.calibration_indices_.append(rows)
            if len(rows) == 0:
                raise ValueError(
                    f"Arm {arm} has no calibration rows: too few to "
                    "calibrate. Pass more samples, a larger calibration_size or "
                    "ite_method='bonferroni' (which calibrates on all held-out rows)."
                )
            self.calibration_scores_.append(
                self._arm_scores(_safe_indexing(X, rows), y[rows], arm)
            )
            self.calibration_propensity_.append(e_oof[rows])

        # 5. nested: unit-level effect intervals on held-out units, their bounds
        # regressed on x and conformalized
        if nested:
            self.bound_estimators_, self.bound_thresholds_ = self._fit_nested(
                X, y, t, e_oof, parts[2], parts[3], levels, arm_levels, rng
            )
        else:
            self.bound_estimators_, self.bound_thresholds_ = None, None
        # even with equal weights, a level needs ceil(level / (1 - level)) rows
        need = int(np.ceil(max(self._level_list) / (1 - max(self._level_list)) - 1e-9))
        small = [len(r) for r in self.calibration_indices_ if len(r) < need]
        if small:
            warn_user(
                f"An arm has {min(small)} calibration rows, too few for the level "
                f"{max(self._level_list):.3g} (at least {need} are needed even with "
                "equal weights): its intervals are infinite. Pass more samples, a "
                "larger calibration_size or a lower confidence_level."
            )
        return self

    def _unit_effect_bounds(self, X, y, t, e, j_arm):
        """Lower and upper bounds of each unit's effect: its observed outcome and
        the other arm's counterfactual interval at the arm level ``j_arm``."""
        lower, upper = np.empty(len(y)), np.empty(len(y))
        for arm in (0, 1):
            rows = np.flatnonzero(t == arm)
            if len(rows) == 0:
                continue
            other = 1 - arm
            # the unobserved arm, weighted to the population of this arm
            interval = self._arm_interval(
                _safe_indexing(X, rows), e[rows], other, arm, [j_arm]
            )[:, :, 0]
            if arm == 0:  # effect = Y(1) - y
                lower[rows] = interval[:, 0] - y[rows]
                upper[rows] = interval[:, 1] - y[rows]
            else:  # effect = y - Y(0)
                lower[rows] = y[rows] - interval[:, 1]
                upper[rows] = y[rows] - interval[:, 0]
        return lower, upper

    def _fit_nested(self, X, y, t, e, fit_rows, cal_rows, levels, arm_levels, rng):
        estimators, thresholds = [], []
        n_levels = len(levels)
        for j, (level, arm_level) in enumerate(zip(levels, arm_levels)):
            j_arm = n_levels + j
            lo_fit, hi_fit = self._unit_effect_bounds(
                _safe_indexing(X, fit_rows),
                y[fit_rows],
                t[fit_rows],
                e[fit_rows],
                j_arm,
            )
            finite = np.isfinite(lo_fit) & np.isfinite(hi_fit)
            if not np.any(finite):
                raise ValueError(
                    "The counterfactual intervals of the nested step are infinite: "
                    "too few calibration rows for the level. Pass more samples or "
                    "ite_method='bonferroni'."
                )
            rows = fit_rows[finite]
            models = []
            for target in (lo_fit[finite], hi_fit[finite]):
                model = set_child_random_state(
                    HistGradientBoostingRegressor(), seed_from_random_state(rng)
                )
                models.append(model.fit(_safe_indexing(X, rows), target))
            lo_cal, hi_cal = self._unit_effect_bounds(
                _safe_indexing(X, cal_rows),
                y[cal_rows],
                t[cal_rows],
                e[cal_rows],
                j_arm,
            )
            X_cal = _safe_indexing(X, cal_rows)
            scores = np.maximum(
                models[0].predict(X_cal) - lo_cal, hi_cal - models[1].predict(X_cal)
            )
            scores = np.where(np.isnan(scores), np.inf, scores)
            thresholds.append(weighted_conformal_quantile(scores, arm_level))
            estimators.append(tuple(models))
        return estimators, np.asarray(thresholds)

    # ---------------------------------------------------------------- predict
    def _validate_predict(self, X):
        check_is_fitted(self)
        return check_covariates(self, X, reset=False)

    def predict(self, X):
        """Conditional average treatment effect ``tau(x)`` of the CATE learner.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.

        Returns
        -------
        tau : ndarray of shape (n_samples,)
            Estimated effects.
        """
        X = self._validate_predict(X)
        return np.asarray(self.cate_estimator_.predict(X), dtype=np.float64)

    def predict_counterfactual_interval(self, X, *, treatment=None):
        """Conformal intervals of both potential outcomes.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.
        treatment : array-like of shape (n_samples,), default=None
            The units' observed arms. Given, each unit's intervals are
            calibrated for the population of its own arm (the unobserved
            arm's interval is then the counterfactual interval of Lei and
            Candès); ``None``: for the whole population.

        Returns
        -------
        intervals : ndarray of shape (n_samples, 2, 2) or (n_samples, 2, 2, n_levels)
            ``intervals[:, a]`` is ``(lower, upper)`` of ``Y(a)``; a trailing
            level axis for a sequence ``confidence_level``.
        """
        X = self._validate_predict(X)
        covariates, _ = self._covariates_and_treatment(X, self.cate_estimator_)
        e = self._propensity(covariates)
        levels = self._levels()
        n = len(e)
        out = np.empty((n, 2, 2, len(levels)))
        if treatment is None:
            for arm in (0, 1):
                out[:, arm] = self._arm_interval(
                    X, e, arm, "population", range(len(levels))
                )
        else:
            t = check_treatment(treatment, n)
            for group in (0, 1):
                rows = np.flatnonzero(t == group)
                if len(rows) == 0:
                    continue
                Xg = _safe_indexing(X, rows)
                for arm in (0, 1):
                    out[rows, arm] = self._arm_interval(
                        Xg, e[rows], arm, group, range(len(levels))
                    )
        return self._shape_levels(out)

    def predict_interval(self, X):
        """Conformal intervals of the individual treatment effect ``Y(1) - Y(0)``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.

        Returns
        -------
        intervals : ndarray of shape (n_samples, 2) or (n_samples, 2, n_levels)
            ``(lower, upper)`` of each unit's effect.
        """
        X = self._validate_predict(X)
        levels = self._levels()
        n_levels = len(levels)
        if self.ite_method == "nested":
            out = np.empty((_num_samples(X), 2, n_levels))
            for j, (lo_model, hi_model) in enumerate(self.bound_estimators_):
                q = self.bound_thresholds_[j]
                out[:, 0, j] = lo_model.predict(X) - q
                out[:, 1, j] = hi_model.predict(X) + q
            return self._shape_levels(out)
        covariates, _ = self._covariates_and_treatment(X, self.cate_estimator_)
        e = self._propensity(covariates)
        arm_indices = [n_levels + j for j in range(n_levels)]
        c0 = self._arm_interval(X, e, 0, "population", arm_indices)
        c1 = self._arm_interval(X, e, 1, "population", arm_indices)
        out = np.stack([c1[:, 0] - c0[:, 1], c1[:, 1] - c0[:, 0]], axis=1)
        return self._shape_levels(out)

    def score(self, X, y, *, treatment=None):
        """R^2 of the learner's factual outcome predictions (its ``score``).

        The effect is unobservable; coverage and width of the intervals are
        measured on data with known potential outcomes (simulations, IHDP).

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.
        y : array-like of shape (n_samples,)
            Factual outcomes.
        treatment : array-like of shape (n_samples,), default=None
            Binary treatment; required unless the learner names a
            ``treatment_column``.

        Returns
        -------
        score : float
            R^2 of the factual outcome predictions.
        """
        X = self._validate_predict(X)
        kwargs = {} if treatment is None else {"treatment": treatment}
        return self.cate_estimator_.score(X, y, **kwargs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags
