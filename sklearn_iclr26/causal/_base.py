"""Shared machinery of the CATE meta-learners: treatment input, effects, ATE.

``fit(X, y, *, treatment)`` takes the binary treatment as metadata (routed by
``Pipeline`` and ``GridSearchCV`` once ``sklearn.set_config(
enable_metadata_routing=True)`` and ``set_fit_request(treatment=True)``), or
reads it from a column of ``X`` the user names with ``treatment_column``. The
covariates are handed to the child estimators untouched (rows selected with
scikit-learn's safe indexing), so a ``Pipeline`` with a ``ColumnTransformer``
on a raw DataFrame can be the outcome model.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import abc
from numbers import Integral, Real

import numpy as np
from scipy.stats import norm
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context, clone
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import check_array, check_consistent_length, column_or_1d
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.validation import (
    _check_feature_names,
    _check_n_features,
    _check_y,
    _num_samples,
    check_is_fitted,
    check_random_state,
)

from sklearn_iclr26.utils._batching import batched
from sklearn_iclr26.utils._random import set_child_random_state
from sklearn_iclr26.utils._validation import check_confidence_level
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["BaseCATERegressor"]

# estimated propensities outside [_OVERLAP, 1 - _OVERLAP] trigger a warning
_OVERLAP = 0.01
# propensities are clipped to this range in the doubly robust ATE
_CLIP = 1e-3


def default_outcome_estimator():
    return HistGradientBoostingRegressor()


def default_propensity_estimator():
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))


def check_treatment(treatment, n_samples):
    """A binary treatment vector of 0/1 floats, with at least 2 units per arm."""
    if treatment is None:
        raise ValueError(
            "fit needs a binary `treatment` vector: pass fit(X, y, treatment=t) "
            "(with metadata routing enabled inside Pipeline or GridSearchCV), or "
            "name the column of X that holds it with `treatment_column`."
        )
    t = column_or_1d(
        check_array(treatment, ensure_2d=False, dtype=None, input_name="treatment")
    )
    if t.dtype == bool:
        t = t.astype(np.float64)
    try:
        t = t.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"`treatment` must be binary (0/1 or bool), got values of dtype {t.dtype}."
        ) from None
    if not np.all(np.isfinite(t)):
        raise ValueError("`treatment` contains NaN or infinity.")
    if len(t) != n_samples:
        raise ValueError(
            f"`treatment` has {len(t)} entries but X has {n_samples} samples."
        )
    values = np.unique(t)
    if not set(values) <= {0.0, 1.0}:
        raise ValueError(
            f"`treatment` must be binary (0/1 or bool), got the values {values[:10]}."
        )
    return t


def check_arms(t):
    n1 = int(t.sum())
    n0 = len(t) - n1
    if min(n0, n1) < 2:
        raise ValueError(
            f"Each treatment arm needs at least 2 units; got {n0} control and "
            f"{n1} treated units (n_samples={len(t)})."
        )


class BaseCATERegressor(RegressorMixin, BaseEstimator, metaclass=abc.ABCMeta):
    """Base class: binary-treatment CATE estimators with outcome models.

    Subclasses implement ``_fit_cate(X, y, t)`` (``X`` the untouched
    covariates) and ``_predict_outcomes(X, t)`` returning ``(mu0, mu1)``;
    ``t`` is the treatment column read from ``X`` when ``treatment_column`` is
    set, else ``None``.
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"]), None],
        "propensity_estimator": [HasMethods(["fit", "predict_proba"]), None],
        "treatment_column": [Integral, str, None],
        "treatment_threshold": [Real, StrOptions({"median"}), None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        propensity_estimator=None,
        treatment_column=None,
        treatment_threshold=None,
        random_state=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.propensity_estimator = propensity_estimator
        self.treatment_column = treatment_column
        self.treatment_threshold = treatment_threshold
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ input
    def _get_estimator(self):
        return default_outcome_estimator() if self.estimator is None else self.estimator

    def _get_propensity_estimator(self):
        if self.propensity_estimator is None:
            return default_propensity_estimator()
        return self.propensity_estimator

    def _split_treatment_column(self, X, *, reset=False):
        """``(covariates, treatment column or None)``; ``X`` itself is untouched."""
        X = _as_array_like(X)
        check_array(
            X, dtype=None, ensure_all_finite=False, ensure_min_samples=1, input_name="X"
        )
        if self.treatment_column is None:
            if self.treatment_threshold is not None:
                raise ValueError("`treatment_threshold` needs `treatment_column`.")
            return X, None
        column = self.treatment_column
        n_features = X.shape[1]
        if hasattr(X, "columns"):
            if isinstance(column, str):
                if column not in X.columns:
                    raise ValueError(
                        f"treatment_column={column!r} is not a column of X."
                    )
                values = np.asarray(X[column])
                covariates = X.drop(columns=[column])
            else:
                self._check_column_index(column, n_features)
                values = np.asarray(X.iloc[:, column])
                covariates = X.drop(columns=[X.columns[column]])
        else:
            if isinstance(column, str):
                raise ValueError(
                    f"treatment_column={column!r} names a column, but X has no "
                    "column names (pass a DataFrame or an integer index)."
                )
            self._check_column_index(column, n_features)
            values = np.asarray(X[:, column])
            covariates = np.delete(np.asarray(X), column, axis=1)
        if self.treatment_threshold is not None:
            values = np.asarray(values, dtype=np.float64)
            if not np.all(np.isfinite(values)):
                raise ValueError("The treatment column contains NaN or infinity.")
            if reset:
                self.treatment_threshold_ = (
                    float(np.median(values))
                    if self.treatment_threshold == "median"
                    else float(self.treatment_threshold)
                )
            values = (values > self.treatment_threshold_).astype(np.float64)
        return covariates, values

    @staticmethod
    def _check_column_index(column, n_features):
        if n_features < 2:
            raise ValueError(
                f"X has {n_features} feature(s): with treatment_column set it needs "
                "the treatment column and at least one covariate."
            )
        if not -n_features <= column < n_features:
            raise ValueError(
                f"treatment_column={column} is out of range for X with "
                f"{n_features} features."
            )

    def _validate_fit(self, X, y, treatment):
        X = _as_array_like(X)
        _check_feature_names(self, X, reset=True)
        _check_n_features(self, X, reset=True)
        check_array(
            X, dtype=None, ensure_all_finite=False, ensure_min_samples=2, input_name="X"
        )
        y = _check_y(y, y_numeric=True, estimator=self)
        y = column_or_1d(y, warn=True).astype(np.float64)
        check_consistent_length(X, y)
        covariates, column = self._split_treatment_column(X, reset=True)
        if column is not None and treatment is not None:
            raise ValueError(
                "Pass the treatment either as `treatment` or through "
                "`treatment_column`, not both."
            )
        n = _num_samples(covariates)
        t = check_treatment(column if column is not None else treatment, n)
        check_arms(t)
        return covariates, y, t

    def _validate_predict(self, X):
        check_is_fitted(self)
        X = _as_array_like(X)
        check_array(
            X, dtype=None, ensure_all_finite=False, ensure_min_samples=1, input_name="X"
        )
        _check_feature_names(self, X, reset=False)
        _check_n_features(self, X, reset=False)
        return self._split_treatment_column(X)

    def _clone_child(self, estimator, seed):
        child = clone(estimator)
        return set_child_random_state(child, seed)

    # ------------------------------------------------------------------ fit
    @abc.abstractmethod
    def _fit_cate(self, X, y, t, rng):
        """Fit the outcome (and effect) models on covariates ``X``."""

    @abc.abstractmethod
    def _predict_outcomes(self, X, t):
        """``(mu0, mu1)`` at covariates ``X`` (``t``: treatment column or None)."""

    def _fit_propensity(self, X, t, seed):
        model = self._clone_child(self._get_propensity_estimator(), seed)
        model.fit(self._propensity_features(X), t.astype(int))
        self.propensity_estimator_ = model
        e = self._propensity(X)
        outside = np.mean((e < _OVERLAP) | (e > 1 - _OVERLAP))
        if outside > 0:
            warn_user(
                f"{outside:.1%} of the estimated propensities are outside "
                f"[{_OVERLAP}, {1 - _OVERLAP}]: the overlap assumption is in doubt "
                "there, and effects are extrapolated by the outcome models."
            )
        return e

    def _propensity_features(self, X):
        """What the propensity model sees: the raw covariates here."""
        return X

    def _propensity(self, X):
        proba = self.propensity_estimator_.predict_proba(self._propensity_features(X))
        classes = list(self.propensity_estimator_.classes_)
        return np.asarray(proba[:, classes.index(1)], dtype=np.float64)

    def _fit_ate(self, X, y, t):
        """Doubly robust (AIPW) ATE on the training sample, with its stderr."""
        mu0, mu1 = self._predict_outcomes(X, t)
        e = np.clip(self._propensity(X), _CLIP, 1 - _CLIP)
        psi = mu1 - mu0 + t * (y - mu1) / e - (1 - t) * (y - mu0) / (1 - e)
        self.ate_ = float(psi.mean())
        self.ate_stderr_ = float(psi.std(ddof=1) / np.sqrt(len(psi)))

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, *, treatment=None):
        """Fit the outcome models on the factual outcomes of both arms.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates, handed untouched to the outcome models.
        y : array-like of shape (n_samples,)
            Factual outcomes.
        treatment : array-like of shape (n_samples,), default=None
            Binary treatment (0/1 or bool). Required unless
            ``treatment_column`` names the column of ``X`` that holds it.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X, y, t = self._validate_fit(X, y, treatment)
        rng = check_random_state(self.random_state)
        self.n_treated_ = int(t.sum())
        self.n_control_ = int(len(t) - t.sum())
        self._fit_cate(X, y, t, rng)
        self._fit_propensity(X, t, _draw(rng))
        self._fit_ate(X, y, t)
        return self

    def fit_cate(self, Y, T, *, X):
        """EconML-style alias: ``fit(X, Y, treatment=T)``.

        Parameters
        ----------
        Y : array-like of shape (n_samples,)
            Factual outcomes.
        T : array-like of shape (n_samples,)
            Binary treatment.
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self.fit(X, Y, treatment=T)

    # ------------------------------------------------------------- predict
    def predict_outcomes(self, X):
        """Predicted potential outcomes ``(mu0, mu1)``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates (with the treatment column when ``treatment_column``
            is set; its value is then used only where a method needs the arm).

        Returns
        -------
        mu0, mu1 : ndarray of shape (n_samples,)
            Predicted outcomes under control and under treatment.
        """
        covariates, t = self._validate_predict(X)
        return batched(
            self._predict_outcomes,
            covariates,
            t,
            row_bytes=8 * 16 * max(self.n_features_in_, 1),
        )

    def predict(self, X):
        """Conditional average treatment effect ``tau(x) = mu1(x) - mu0(x)``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.

        Returns
        -------
        tau : ndarray of shape (n_samples,)
            Estimated effect of the treatment at each row.
        """
        mu0, mu1 = self.predict_outcomes(X)
        return mu1 - mu0

    def effect(self, X, T0=0, T1=1):
        """EconML-style effect of moving from treatment ``T0`` to ``T1``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.
        T0, T1 : {0, 1}, default=0, 1
            Base and target treatment.

        Returns
        -------
        effect : ndarray of shape (n_samples,)
            ``(T1 - T0) * tau(x)`` at each row.
        """
        if T0 not in (0, 1) or T1 not in (0, 1):
            raise ValueError(f"T0 and T1 must be 0 or 1, got {T0!r} and {T1!r}.")
        return (T1 - T0) * self.predict(X)

    def ate(self, X=None, *, confidence_level=None):
        """Average treatment effect, optionally with a normal confidence interval.

        With ``X=None``: the doubly robust (AIPW) estimate on the training
        sample, ``ate_``, and its influence-function interval (the fitted
        outcome and propensity models are treated as known; they were fitted
        on the same sample, so with flexible models the interval can be
        optimistic). With ``X``: the mean of :meth:`predict` over ``X``, with
        an interval for the mean of the fitted CATE function over the
        population ``X`` was drawn from (sampling of ``X`` only, the fitted
        models held fixed).

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features), default=None
            Covariates; ``None`` uses the training sample.
        confidence_level : float in (0, 1), default=None
            When given, also return the interval.

        Returns
        -------
        ate : float
            Estimated average treatment effect.
        interval : tuple of float
            ``(low, high)``, only when ``confidence_level`` is given.
        """
        check_is_fitted(self)
        if X is None:
            estimate, stderr = self.ate_, self.ate_stderr_
        else:
            tau = self.predict(X)
            estimate = float(tau.mean())
            stderr = (
                float(tau.std(ddof=1) / np.sqrt(len(tau))) if len(tau) > 1 else np.nan
            )
        if confidence_level is None:
            return estimate
        check_confidence_level(confidence_level)
        z = norm.ppf(0.5 + confidence_level / 2)
        return estimate, (float(estimate - z * stderr), float(estimate + z * stderr))

    def score(self, X, y, *, treatment=None):
        """R^2 of the factual outcome predictions ``mu_T(x)`` against ``y``.

        This measures the fit of the outcome models on observed outcomes, not
        the accuracy of the effect (which is unobservable); to tune for the
        effect use :func:`~sklearn_iclr26.causal.make_cate_scorer`.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.
        y : array-like of shape (n_samples,)
            Factual outcomes.
        treatment : array-like of shape (n_samples,), default=None
            Binary treatment; required unless ``treatment_column`` is set.

        Returns
        -------
        score : float
            R^2 of the factual outcome predictions.
        """
        from sklearn.metrics import r2_score

        covariates, column = self._validate_predict(X)
        if column is not None and treatment is not None:
            raise ValueError(
                "Pass the treatment either as `treatment` or through "
                "`treatment_column`, not both."
            )
        t = check_treatment(
            column if column is not None else treatment, _num_samples(covariates)
        )
        mu0, mu1 = self.predict_outcomes(X)
        y = column_or_1d(y).astype(np.float64)
        return float(r2_score(y, np.where(t == 1, mu1, mu0)))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        # predict is the CATE, not a prediction of y: no R^2 floor on y
        tags.regressor_tags.poor_score = True
        tags.target_tags.required = True
        return tags


def _draw(rng):
    return int(rng.randint(np.iinfo(np.int32).max))


def _as_array_like(X):
    """Lists and other sequences become arrays; arrays and DataFrames pass."""
    if hasattr(X, "shape") and hasattr(X, "ndim"):
        return X
    return np.asarray(X, dtype=object if _has_strings(X) else None)


def _has_strings(X):
    try:
        np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        return True
    return False


def final_step(estimator):
    """``(transformer, final step)`` of a Pipeline, else ``(None, estimator)``."""
    if isinstance(estimator, Pipeline) and len(estimator.steps) > 1:
        return Pipeline(estimator.steps[:-1]), estimator.steps[-1][1]
    return None, estimator
