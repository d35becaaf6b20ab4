"""R-learner (Nie and Wager, 2021): residual-on-residual effect regression."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from sklearn_iclr26.causal._base import BaseCATERegressor, _draw, fit_child
from sklearn_iclr26.causal._crossfit import (
    crossfit_folds,
    fit_propensity_fold,
    fit_regressor_fold,
    log_fold,
    predict_mean,
    predict_vector,
)
from sklearn_iclr26.utils._sklearn_compat import HasMethods, _safe_indexing

__all__ = ["RLearnerRegressor"]

# econml's NonParamDML: |t - e(x)| is clipped below at this value in the target
_MIN_T_RES = 1e-5


def r_target_and_weight(y_res, t_res, sample_weight):
    """econml's ``NonParamDML`` final-stage target and weights (same operations).

    Minimising ``sum w (y_res - t_res tau)^2`` over ``tau`` is the weighted
    regression of ``y_res / t_res`` with weights ``w t_res^2``.
    """
    sign = np.sign(t_res)
    sign[(sign < 1) & (sign > -1)] = 1
    clipped = sign * np.clip(np.abs(t_res), _MIN_T_RES, np.inf)
    target = y_res / clipped
    weight = t_res**2 if sample_weight is None else sample_weight * t_res**2
    return target, weight


class RLearnerRegressor(BaseCATERegressor):
    """R-learner (non-parametric double ML) for the conditional average effect.

    Cross-fits on ``cv`` folds the outcome model ``m(x) = E[y | x]`` (a clone
    of ``estimator``, on both arms) and the propensity ``e(x)``, and forms
    the out-of-fold residuals ``y - m(x)`` and ``t - e(x)``. The effect
    ``tau(x)`` minimises the R-loss ``sum ((y - m) - (t - e) tau(x))^2``
    (Nie and Wager, 2021): the final model (``final_estimator_``, which must
    take ``sample_weight``) regresses ``(y - m) / (t - e)`` on ``X`` with
    weights ``(t - e)^2``. With the same models and folds it is econml's
    ``NonParamDML`` with ``discrete_treatment=True``
    (``tests/test_causal_dr_r_forest.py`` checks the effects agree).

    The potential outcomes are ``mu0 = m - e tau`` and ``mu1 = m + (1 - e)
    tau``; ``ate_aipw_`` is the AIPW estimate from the out-of-fold ``m`` and
    ``e`` and the fitted ``tau``, with its influence-function standard
    error (the default interval of :meth:`ate_interval`). Identification
    assumes ignorability and overlap.

    Parameters
    ----------
    estimator : regressor, default=None
        Outcome model ``m(x)``, cloned per fold and given ``X`` untouched.
        ``None``: ``HistGradientBoostingRegressor()``.
    propensity_estimator : classifier, default=None
        Propensity model ``e(x)``, cloned per fold (and once on all rows,
        ``propensity_estimator_``, for the overlap warning and the potential
        outcomes at new rows). ``None``: the preprocessing steps of an
        ``estimator`` Pipeline (cloned) followed by a standardised
        ``LogisticRegression``, or that regression alone.
    final_estimator : regressor, default=None
        The effect model, fitted with ``sample_weight``. ``None``: a clone of
        ``estimator``.
    cv : int, cross-validation generator or iterable, default=2
        Cross-fitting folds: an int gives ``StratifiedKFold(cv,
        shuffle=True)`` stratified by the treatment and seeded from
        ``random_state`` (econml's rule); a splitter or a list of ``(train,
        test)`` index pairs is used as given.
    treatment_column : int or str, default=None
        The column of ``X`` holding the treatment (removed from the
        covariates). ``None``: pass ``treatment`` to ``fit``.
    %(cate_parameters)s
    random_state : int, RandomState instance or None, default=None
        Seeds the folds and the cloned child estimators.
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
    DRLearnerRegressor : Doubly robust pseudo-outcome regression.
    CausalForestRegressor : An honest causal forest on the same residuals.

    References
    ----------
    .. [1] X. Nie and S. Wager, "Quasi-oracle estimation of heterogeneous
       treatment effects", Biometrika, 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_iclr26.causal import RLearnerRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(300, 3))
    >>> t = (rng.uniform(size=300) < 0.5).astype(int)
    >>> y = X[:, 0] + t * (1.0 + X[:, 1]) + rng.normal(scale=0.1, size=300)
    >>> est = RLearnerRegressor(LinearRegression(), random_state=0)
    >>> est = est.fit(X, y, treatment=t)
    >>> error = est.predict(X) - (1.0 + X[:, 1])
    >>> bool(np.abs(error).max() < 0.1)
    True
    """

    _parameter_constraints: dict = {
        **BaseCATERegressor._parameter_constraints,
        "final_estimator": [HasMethods(["fit", "predict"]), None],
        "cv": ["cv_object"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        propensity_estimator=None,
        final_estimator=None,
        cv=2,
        treatment_column=None,
        treatment_threshold=None,
        n_bootstrap=0,
        bootstrap_type="pivot",
        random_state=None,
        verbose=0,
    ):
        super().__init__(
            estimator,
            propensity_estimator=propensity_estimator,
            treatment_column=treatment_column,
            treatment_threshold=treatment_threshold,
            n_bootstrap=n_bootstrap,
            bootstrap_type=bootstrap_type,
            random_state=random_state,
            verbose=verbose,
        )
        self.final_estimator = final_estimator
        self.cv = cv

    def _fit_cate(self, X, y, t, rng, sample_weight=None):
        folds = crossfit_folds(self.cv, t, rng)
        n = len(y)
        m, e = np.empty(n), np.empty(n)
        self.outcome_estimators_, self.propensity_estimators_ = [], []
        estimator = self._get_estimator()
        for k, (train, test) in enumerate(folds):
            log_fold(self, k, len(folds))
            model = fit_regressor_fold(
                self, estimator, X, y, train, rng, sample_weight, role="outcome model"
            )
            m[test] = predict_vector(model, _safe_indexing(X, test))
            self.outcome_estimators_.append(model)
            model, e[test] = fit_propensity_fold(
                self, X, t, train, test, rng, sample_weight
            )
            self.propensity_estimators_.append(model)
        # out-of-fold nuisances, used by _fit_final and _fit_aipw of this fit
        self._oof = (m, e)

    def _fit_final(self, X, XW, y, t, tcol, rng, sample_weight):
        m, e = self._oof
        target, weight = r_target_and_weight(y - m, t - e, sample_weight)
        final = self.final_estimator
        model = self._clone_child(
            self._get_estimator() if final is None else final, _draw(rng)
        )
        return fit_child(model, X, target, weight, role="final model")

    def _effect_at(self, XW):
        """``tau`` at rows of ``XW`` (the controls, if any, dropped)."""
        if self.n_controls_in_:
            k = XW.shape[1] - self.n_controls_in_
            XW = _safe_indexing(XW, np.arange(k), axis=1)
        return self._predict_effect(XW, None)

    def _fit_aipw(self, X, y, t, tcol, sample_weight):
        m, e = self._oof
        del self._oof
        tau = self._effect_at(X)
        self._store_aipw(y, t, m - e * tau, m + (1 - e) * tau, e, sample_weight)

    def _predict_outcomes(self, X, t):
        m = predict_mean(self.outcome_estimators_, X)
        e = self._propensity(X)
        tau = self._effect_at(X)
        return m - e * tau, m + (1 - e) * tau
