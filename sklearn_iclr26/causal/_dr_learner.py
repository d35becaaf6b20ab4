"""DR-learner (Kennedy, 2023): cross-fitted doubly robust pseudo-outcomes."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Real

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
from sklearn_iclr26.utils._sklearn_compat import HasMethods, Interval, _safe_indexing

__all__ = ["DRLearnerRegressor"]


def dr_pseudo_outcome(y, t, mu0, mu1, e, min_propensity):
    """econml's ``DRLearner`` pseudo-outcome ``Y1 - Y0`` (same operations).

    ``Y_a = mu_a + (y - mu_a) 1[T = a] / P(T = a | x)`` with the propensities
    clipped to ``[min_propensity, 1 - min_propensity]``.
    """
    p1 = np.clip(e, min_propensity, 1 - min_propensity)
    p0 = np.clip(1 - e, min_propensity, 1 - min_propensity)
    y0 = mu0 + (y - mu0) * (t == 0) / p0
    y1 = mu1 + (y - mu1) * (t == 1) / p1
    return y1 - y0


class DRLearnerRegressor(BaseCATERegressor):
    """DR-learner for the conditional average treatment effect.

    Cross-fits the nuisance models on ``cv`` folds: on each fold's training
    part, ``mu0`` and ``mu1`` (clones of ``estimator``, one per arm) and the
    propensity ``e(x)``; on its held-out part, the doubly robust
    pseudo-outcome

    ``psi = mu1 - mu0 + t (y - mu1) / e - (1 - t) (y - mu0) / (1 - e)``

    (propensities clipped to ``[min_propensity, 1 - min_propensity]``). The
    effect ``tau(x)`` is the final model (``final_estimator_``) regressed on
    ``psi`` over ``X`` (Kennedy, 2023). With the same models and folds it is
    econml's ``DRLearner`` whose ``model_regression`` fits one model per arm
    (econml appends the treatment as a column of one regression instead):
    ``tests/test_causal_dr_r_forest.py`` checks the effects agree.

    ``ate_aipw_`` is the mean of the cross-fitted pseudo-outcomes (the AIPW
    estimate with out-of-fold nuisances; propensities clipped to
    ``[0.001, 0.999]``) and its standard error the influence-function one,
    the default interval of :meth:`ate_interval`. Identification assumes
    ignorability and overlap.

    Parameters
    ----------
    estimator : regressor, default=None
        Outcome model, cloned per arm and fold and given ``X`` untouched.
        ``None``: ``HistGradientBoostingRegressor()``.
    propensity_estimator : classifier, default=None
        Propensity model ``e(x)``, cloned per fold (and once on all rows,
        ``propensity_estimator_``, for the overlap warning). ``None``: the
        preprocessing steps of an ``estimator`` Pipeline (cloned) followed by
        a standardised ``LogisticRegression``, or that regression alone.
    final_estimator : regressor, default=None
        The effect model regressed on the pseudo-outcomes over ``X`` (it must
        take ``sample_weight`` when ``fit`` gets weights). ``None``: a clone of
        ``estimator``.
    cv : int, cross-validation generator or iterable, default=2
        Cross-fitting folds: an int gives ``StratifiedKFold(cv,
        shuffle=True)`` stratified by the treatment and seeded from
        ``random_state`` (econml's rule); a splitter or a list of ``(train,
        test)`` index pairs is used as given. The held-out parts must cover
        every row once, and every training part must hold both arms.
    min_propensity : float in [0, 0.5), default=1e-6
        Clipping of the propensities in the pseudo-outcome (econml's
        default).
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
    outcome_estimators_ : list of lists of two regressors
        ``[mu0, mu1]`` of each fold.
    propensity_estimators_ : list of classifiers
        The propensity model of each fold.
    %(cate_attributes)s

    See Also
    --------
    RLearnerRegressor : Residual-on-residual (R-loss) effect regression.
    CausalForestRegressor : An honest causal forest on the R-learner's residuals.
    XLearnerRegressor : Imputed-effect regression per arm.

    References
    ----------
    .. [1] E. H. Kennedy, "Towards optimal doubly robust estimation of
       heterogeneous causal effects", Electronic Journal of Statistics, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_iclr26.causal import DRLearnerRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(300, 3))
    >>> t = (rng.uniform(size=300) < 0.5).astype(int)
    >>> y = X[:, 0] + t * (1.0 + X[:, 1]) + rng.normal(scale=0.1, size=300)
    >>> est = DRLearnerRegressor(LinearRegression(), random_state=0)
    >>> est = est.fit(X, y, treatment=t)
    >>> error = est.predict(X) - (1.0 + X[:, 1])
    >>> bool(np.abs(error).max() < 0.1)
    True
    """

    _parameter_constraints: dict = {
        **BaseCATERegressor._parameter_constraints,
        "final_estimator": [HasMethods(["fit", "predict"]), None],
        "cv": ["cv_object"],
        "min_propensity": [Interval(Real, 0, 0.5, closed="left")],
    }

    def __init__(
        self,
        estimator=None,
        *,
        propensity_estimator=None,
        final_estimator=None,
        cv=2,
        min_propensity=1e-6,
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
        self.min_propensity = min_propensity

    def _fit_cate(self, X, y, t, rng, sample_weight=None):
        folds = crossfit_folds(self.cv, t, rng)
        n = len(y)
        mu0, mu1, e = np.empty(n), np.empty(n), np.empty(n)
        self.outcome_estimators_, self.propensity_estimators_ = [], []
        estimator = self._get_estimator()
        for k, (train, test) in enumerate(folds):
            log_fold(self, k, len(folds))
            X_test = _safe_indexing(X, test)
            arm_models = []
            for arm, mu in ((0, mu0), (1, mu1)):
                rows = train[t[train] == arm]
                model = fit_regressor_fold(
                    self,
                    estimator,
                    X,
                    y,
                    rows,
                    rng,
                    sample_weight,
                    role=f"outcome model of arm {arm}",
                )
                mu[test] = predict_vector(model, X_test)
                arm_models.append(model)
            model, e[test] = fit_propensity_fold(
                self, X, t, train, test, rng, sample_weight
            )
            self.outcome_estimators_.append(arm_models)
            self.propensity_estimators_.append(model)
        # out-of-fold nuisances, used by _fit_final and _fit_aipw of this fit
        self._oof = (mu0, mu1, e)

    def _fit_final(self, X, XW, y, t, tcol, rng, sample_weight):
        mu0, mu1, e = self._oof
        pseudo = dr_pseudo_outcome(y, t, mu0, mu1, e, self.min_propensity)
        final = self.final_estimator
        model = self._clone_child(
            self._get_estimator() if final is None else final, _draw(rng)
        )
        return fit_child(model, X, pseudo, sample_weight, role="final model")

    def _fit_aipw(self, X, y, t, tcol, sample_weight):
        mu0, mu1, e = self._oof
        del self._oof
        self._store_aipw(y, t, mu0, mu1, e, sample_weight)

    def _predict_outcomes(self, X, t):
        mu0 = predict_mean([m[0] for m in self.outcome_estimators_], X)
        mu1 = predict_mean([m[1] for m in self.outcome_estimators_], X)
        return mu0, mu1
