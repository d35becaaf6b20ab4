"""T-learner: one outcome model per treatment arm."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from sklearn_iclr26.causal._base import BaseCATERegressor, _draw, fit_child
from sklearn_iclr26.utils._sklearn_compat import _safe_indexing
from sklearn_iclr26.utils._verbose import log_progress

__all__ = ["TLearnerRegressor"]


def fit_arm_models(learner, X, y, t, rng, sample_weight=None):
    """Fit ``clone(estimator)`` on each arm's factual outcomes (X untouched).

    The seeds are drawn in a fixed order (control, then treated), shared by
    every learner of the family, so that learners with the same
    ``random_state`` fit identical arm models. Returns the models and their
    seeds.
    """
    models, seeds = [], []
    for arm in (0, 1):
        rows = np.flatnonzero(t == arm)
        seeds.append(_draw(rng))
        model = learner._clone_child(learner._get_estimator(), seeds[-1])
        log_progress(
            learner, f"fitting the outcome model of arm {arm} ({len(rows)} units)"
        )
        fit_child(
            model,
            _safe_indexing(X, rows),
            y[rows],
            None if sample_weight is None else sample_weight[rows],
            role=f"outcome model of arm {arm}",
        )
        models.append(model)
    return models, seeds


class TLearnerRegressor(BaseCATERegressor):
    """T-learner for the conditional average treatment effect.

    Fits ``mu0`` on the control units and ``mu1`` on the treated units, each a
    clone of ``estimator`` trained on its arm's factual outcomes, and
    estimates ``tau(x) = mu1(x) - mu0(x)``. It is the baseline the
    :class:`GeodesicCATERegressor` adapts (its ``combine="source"`` equals
    this learner with the same ``estimator`` and ``random_state``).

    Identification assumes ignorability (no unmeasured confounding given the
    covariates) and overlap (``0 < P(T=1 | x) < 1``); a warning is raised when
    estimated propensities come close to 0 or 1.

    Parameters
    ----------
    estimator : regressor, default=None
        Outcome model, cloned per arm and given ``X`` untouched. ``None``:
        ``HistGradientBoostingRegressor()``.
    propensity_estimator : classifier, default=None
        Propensity model ``e(x) = P(T=1 | x)``, used for the overlap warning
        and the doubly robust ``ate_aipw_``. ``None``: the preprocessing steps
        of an ``estimator`` Pipeline (cloned; e.g. a ``ColumnTransformer`` on
        a raw DataFrame) followed by a standardised ``LogisticRegression``,
        or that regression alone.
    %(aipw_cv_parameter)s
    treatment_column : int or str, default=None
        The column of ``X`` holding the treatment, for users whose treatment
        is stored with the covariates; it is removed from the covariates.
        ``None``: the treatment is passed to ``fit`` as ``treatment``.
    %(cate_parameters)s
    random_state : int, RandomState instance or None, default=None
        Seeds the cloned child estimators.
    verbose : int, default=0
        Progress messages.

    Attributes
    ----------
    estimators_ : list of two regressors
        ``[mu0, mu1]``.
    %(cate_attributes)s

    See Also
    --------
    GeodesicCATERegressor : Adapts both outcome models along the geodesic.
    XLearnerRegressor : Imputed-effect regression on top of the T-learner.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_iclr26.causal import TLearnerRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(200, 3))
    >>> t = (rng.uniform(size=200) < 0.5).astype(int)
    >>> y = X[:, 0] + 2.0 * t + rng.normal(scale=0.1, size=200)
    >>> est = TLearnerRegressor(LinearRegression()).fit(X, y, treatment=t)
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

    def _predict_outcomes(self, X, t):
        mu0 = np.asarray(self.estimators_[0].predict(X), dtype=np.float64).ravel()
        mu1 = np.asarray(self.estimators_[1].predict(X), dtype=np.float64).ravel()
        return mu0, mu1
