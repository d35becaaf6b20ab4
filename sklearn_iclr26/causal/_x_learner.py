"""X-learner (Kuenzel et al., 2019): imputed effects regressed per arm."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from sklearn_iclr26.causal._base import BaseCATERegressor, _draw, fit_child
from sklearn_iclr26.causal._t_learner import fit_arm_models
from sklearn_iclr26.utils._sklearn_compat import _safe_indexing
from sklearn_iclr26.utils._verbose import log_progress

__all__ = ["XLearnerRegressor"]


class XLearnerRegressor(BaseCATERegressor):
    """X-learner for the conditional average treatment effect.

    Stage 1 is the T-learner (``mu0`` on controls, ``mu1`` on treated units).
    Stage 2 imputes individual effects, ``D1 = y - mu0(x)`` on the treated and
    ``D0 = mu1(x) - y`` on the controls, and regresses them with clones of
    ``estimator`` (``tau1``, ``tau0``). The estimate is the propensity blend
    ``tau(x) = e(x) tau0(x) + (1 - e(x)) tau1(x)`` (Kuenzel et al., PNAS 2019).

    Identification assumes ignorability and overlap, as for every learner of
    this family.

    Parameters
    ----------
    estimator : regressor, default=None
        Outcome and effect model, cloned four times and given ``X`` untouched.
        ``None``: ``HistGradientBoostingRegressor()``.
    propensity_estimator : classifier, default=None
        Propensity model ``e(x)``. ``None``: the preprocessing steps of an
        ``estimator`` Pipeline (cloned) followed by a standardised
        ``LogisticRegression``, or that regression alone.
    %(aipw_cv_parameter)s
    treatment_column : int or str, default=None
        The column of ``X`` holding the treatment (removed from the
        covariates). ``None``: pass ``treatment`` to ``fit``.
    %(cate_parameters)s
    random_state : int, RandomState instance or None, default=None
        Seeds the cloned child estimators.
    verbose : int, default=0
        Progress messages.

    Attributes
    ----------
    estimators_ : list of two regressors
        Stage-1 outcome models ``[mu0, mu1]``.
    effect_estimators_ : list of two regressors
        Stage-2 effect models ``[tau0, tau1]``.
    %(cate_attributes)s

    See Also
    --------
    TLearnerRegressor : Stage 1 alone.
    GeodesicCATERegressor : Adapts the outcome models along the geodesic.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_iclr26.causal import XLearnerRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(200, 3))
    >>> t = (rng.uniform(size=200) < 0.5).astype(int)
    >>> y = X[:, 0] + 2.0 * t + rng.normal(scale=0.1, size=200)
    >>> est = XLearnerRegressor(LinearRegression()).fit(X, y, treatment=t)
    >>> round(float(est.predict(X).mean()), 1)
    2.0
    """

    _parameter_constraints: dict = {
        **BaseCATERegressor._parameter_constraints,
        "aipw_cv": ["cv_object"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        propensity_estimator=None,
        aipw_cv=5,
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
        self.aipw_cv = aipw_cv

    def _fit_cate(self, X, y, t, rng, sample_weight=None):
        self.estimators_, _ = fit_arm_models(self, X, y, t, rng, sample_weight)
        rows0, rows1 = np.flatnonzero(t == 0), np.flatnonzero(t == 1)
        X0, X1 = _safe_indexing(X, rows0), _safe_indexing(X, rows1)
        d1 = (
            y[rows1]
            - np.asarray(self.estimators_[0].predict(X1), dtype=np.float64).ravel()
        )
        d0 = (
            np.asarray(self.estimators_[1].predict(X0), dtype=np.float64).ravel()
            - y[rows0]
        )
        self.effect_estimators_ = []
        for arm, (Xa, d) in enumerate([(X0, d0), (X1, d1)]):
            log_progress(self, f"fitting the effect model of arm {arm}")
            model = self._clone_child(self._get_estimator(), _draw(rng))
            rows = rows1 if arm else rows0
            w = None if sample_weight is None else sample_weight[rows]
            self.effect_estimators_.append(
                fit_child(model, Xa, d, w, role=f"effect model of arm {arm}")
            )

    def _fit_outcome_models(self, X, y, t, rng, sample_weight=None):
        # the cross-fitted AIPW needs stage 1 only
        self.estimators_, _ = fit_arm_models(self, X, y, t, rng, sample_weight)

    def _predict_outcomes(self, X, t):
        mu0 = np.asarray(self.estimators_[0].predict(X), dtype=np.float64).ravel()
        mu1 = np.asarray(self.estimators_[1].predict(X), dtype=np.float64).ravel()
        return mu0, mu1

    def _nuisance_effect(self, X, t):
        """X-learner CATE ``e(x) tau0(x) + (1 - e(x)) tau1(x)``."""
        tau0 = np.asarray(
            self.effect_estimators_[0].predict(X), dtype=np.float64
        ).ravel()
        tau1 = np.asarray(
            self.effect_estimators_[1].predict(X), dtype=np.float64
        ).ravel()
        e = self._propensity(X)
        return e * tau0 + (1 - e) * tau1
