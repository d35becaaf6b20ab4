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
import warnings
from numbers import Integral, Real

import numpy as np
from scipy.stats import norm
from sklearn import config_context
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.exceptions import DataConversionWarning
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import check_array, check_consistent_length, column_or_1d
from sklearn.utils.validation import (
    check_is_fitted,
    check_random_state,
    has_fit_parameter,
)

from sklearn_iclr26.causal._inference import (
    ATEInferenceResults,
    CATEInferenceResults,
    deprecated_alpha,
    miscoverage,
)
from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._batching import batched
from sklearn_iclr26.utils._blockwise import is_dask_collection, lazy_method
from sklearn_iclr26.utils._docstrings import substitute
from sklearn_iclr26.utils._random import set_child_random_state
from sklearn_iclr26.utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _check_feature_names,
    _check_n_features,
    _check_sample_weight,
    _check_y,
    _fit_context,
    _num_samples,
    _safe_indexing,
)
from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress
from sklearn_iclr26.utils._warnings import warn_user

__all__ = ["BaseCATERegressor"]

# estimated propensities outside [_OVERLAP, 1 - _OVERLAP] trigger a warning
_OVERLAP = 0.01
# propensities are clipped to this range in the doubly robust ATE
_CLIP = 1e-3
_AIPW_ATTRIBUTES = ("ate_aipw_", "att_aipw_", "ate_aipw_stderr_", "att_aipw_stderr_")


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


def check_covariates(estimator, X, *, reset):
    """``X`` as an array-like (untouched otherwise), its shape and names checked.

    Any dtype and missing values pass (the outcome models handle them);
    ``reset=True`` (``fit``) records ``n_features_in_`` and
    ``feature_names_in_`` and needs two rows, ``reset=False`` checks them.
    """
    X = _as_array_like(X)
    check_array(
        X,
        dtype=None,
        ensure_all_finite=False,
        ensure_min_samples=2 if reset else 1,
        input_name="X",
    )
    _check_feature_names(estimator, X, reset=reset)
    _check_n_features(estimator, X, reset=reset)
    return X


def check_arms(t):
    n1 = int(t.sum())
    n0 = len(t) - n1
    if min(n0, n1) < 2:
        raise ValueError(
            f"Each treatment arm needs at least 2 units; got {n0} control and "
            f"{n1} treated units (n_samples={len(t)})."
        )


def fit_child(estimator, X, y, sample_weight, *, role="child estimator"):
    """Fit ``estimator`` (already cloned) with the user's ``sample_weight``.

    ``None``: a plain fit. A ``Pipeline`` gets the weights at every step whose
    ``fit`` takes ``sample_weight`` (so a ``StandardScaler`` step is weighted
    too; metadata routing is switched off for this internal call). An
    estimator that takes no ``sample_weight`` raises an error naming it.
    """
    if sample_weight is None:
        return estimator.fit(X, y)
    if isinstance(estimator, Pipeline):
        kwargs = {
            f"{name}__sample_weight": sample_weight
            for name, step in estimator.steps
            if step not in (None, "passthrough")
            and has_fit_parameter(step, "sample_weight")
        }
        final = estimator.steps[-1][0]
        if f"{final}__sample_weight" not in kwargs:
            raise ValueError(_no_weights_message(estimator.steps[-1][1], role))
        with config_context(enable_metadata_routing=False):
            return estimator.fit(X, y, **kwargs)
    if not has_fit_parameter(estimator, "sample_weight"):
        raise ValueError(_no_weights_message(estimator, role))
    return estimator.fit(X, y, sample_weight=sample_weight)


def fit_transformer(transformer, X, sample_weight):
    """Fit a preprocessing ``transformer`` with ``sample_weight`` where it takes it.

    A ``Pipeline`` gets the weights at the steps that take them; a
    transformer that takes none (``ColumnTransformer``) is fitted unweighted.
    """
    if sample_weight is None:
        return transformer.fit(X)
    if isinstance(transformer, Pipeline):
        kwargs = {
            f"{name}__sample_weight": sample_weight
            for name, step in transformer.steps
            if step not in (None, "passthrough")
            and has_fit_parameter(step, "sample_weight")
        }
        with config_context(enable_metadata_routing=False):
            return transformer.fit(X, **kwargs)
    if has_fit_parameter(transformer, "sample_weight"):
        return transformer.fit(X, sample_weight=sample_weight)
    return transformer.fit(X)


def _no_weights_message(estimator, role):
    return (
        f"sample_weight was passed to fit, but the {role} "
        f"{type(estimator).__name__} does not accept sample_weight in its fit."
    )


def weighted_median(values, sample_weight=None):
    """``np.median`` of ``values`` repeated ``sample_weight`` times.

    Exact for integer weights (the median of the repeated sample); for real
    weights the same rule on the cumulative weights.
    """
    if sample_weight is None:
        return float(np.median(values))
    order = np.argsort(values, kind="stable")
    v, cw = values[order], np.cumsum(sample_weight[order])
    total = cw[-1]
    lo = v[
        min(np.searchsorted(cw, np.floor((total - 1) / 2), side="right"), len(v) - 1)
    ]
    hi = v[min(np.searchsorted(cw, np.floor(total / 2), side="right"), len(v) - 1)]
    return float((lo + hi) / 2)


def check_binary_arm(T, n, name):
    """``T0`` / ``T1``: a scalar or a per-row vector of 0/1, as floats."""
    T = np.asarray(T)
    if T.dtype == bool:
        T = T.astype(np.float64)
    try:
        T = T.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold 0 or 1, got dtype {T.dtype}.") from None
    if T.ndim == 0:
        T = np.full(n, float(T))
    T = T.ravel()
    if len(T) != n:
        raise ValueError(f"{name} has {len(T)} entries but X has {n} rows.")
    if not np.all((T == 0) | (T == 1)):
        raise ValueError(f"{name} must hold 0 or 1 (binary treatment), got {T!r}.")
    return T


def bootstrap_interval(point, draws, alpha, kind):
    """econml's ``BootstrapInference`` intervals at miscoverage ``alpha``.

    ``draws`` has the bootstrap replicates on axis 0. ``"pivot"``:
    ``(2 point - q(1 - alpha/2), 2 point - q(alpha/2))``; ``"percentile"``:
    ``(q(alpha/2), q(1 - alpha/2))``; ``"normal"``: ``point -/+ z sd`` with
    the replicates' standard deviation (``ddof=0``, as econml).
    """
    lower, upper = 100 * alpha / 2, 100 * (1 - alpha / 2)
    if kind == "percentile":
        return np.percentile(draws, lower, axis=0), np.percentile(draws, upper, axis=0)
    if kind == "pivot":
        return (
            2 * point - np.percentile(draws, upper, axis=0),
            2 * point - np.percentile(draws, lower, axis=0),
        )
    sd = np.std(draws, axis=0)
    return point - norm.ppf(upper / 100) * sd, point - norm.ppf(lower / 100) * sd


def _check_method(method):
    if method not in ("aipw", "bootstrap"):
        raise ValueError(f"method must be 'aipw' or 'bootstrap', got {method!r}.")


def append_controls(X, W):
    """``[X, W]``: what the nuisance models see when controls ``W`` are given."""
    if W is None:
        return X
    if hasattr(X, "columns"):
        import pandas as pd

        if not hasattr(W, "columns"):
            W = np.asarray(W)
            W = pd.DataFrame(
                W.reshape(len(W), -1),
                index=X.index,
                columns=[f"W{j}" for j in range(W.reshape(len(W), -1).shape[1])],
            )
        else:
            W = W.set_axis(X.index, axis=0)
        return pd.concat([X, W], axis=1)
    W = np.asarray(W)
    return np.hstack([np.asarray(X), W.reshape(len(W), -1)])


#: numpydoc entries shared by the meta-learners, put in their docstrings at
#: the placeholders ``cate_parameters`` (the treatment threshold and bootstrap
#: parameters) and ``cate_attributes`` (the fitted attributes of this base) by
#: the one docstring mechanism (:func:`~sklearn_iclr26.utils._docstrings.substitute`)
#: the ``aipw_cv`` entry of the learners that cross-fit their doubly robust
#: ATE on first use (T-, X- and G-learners), at ``aipw_cv_parameter``
_AIPW_CV_DOC = """
aipw_cv : int, cross-validation generator, iterable or None, default=5
    Folds of the cross-fitted doubly robust ``ate_aipw_`` / ``att_aipw_``
    (the default :meth:`ate_interval`): on each fold the outcome and
    propensity models are refitted on the training part and predict the
    held-out part. An int gives ``StratifiedKFold`` by treatment (at most
    the smaller arm's size); a splitter or ``(train, test)`` pairs are
    used as given. Computed on the first call that needs them, so
    ``fit`` does not pay for them; the training rows are kept (by
    reference) until then. ``None``: the in-sample AIPW of the
    fitted models, computed in ``fit`` (under-covers with flexible
    models, see :doc:`/causal`).
"""

_PARAMETERS_DOC = """
treatment_threshold : float or "median", default=None
    With ``treatment_column``: a unit is treated when its column value is
    above this threshold (an exposure recorded as a dose or a score;
    ``"median"``: above the training median, stored as
    ``treatment_threshold_``). ``None``: the column must be binary.
n_bootstrap : int, default=0
    Refits of the whole learner (all its nuisance and effect models) on
    bootstrap resamples stratified by arm, kept as
    ``bootstrap_estimators_``; they give :meth:`effect_interval`,
    :meth:`effect_inference`, :meth:`att_interval` and the bootstrap
    option of :meth:`ate_interval` (whose default, the doubly robust
    interval, needs no refits). ``0``: no bootstrap (and no extra cost).
bootstrap_type : {"pivot", "percentile", "normal"}, default="pivot"
    How the intervals are built from the refits, with the formulas (and
    the default) of econml's ``BootstrapInference``.
"""
_ATTRIBUTES_DOC = """
propensity_estimator_ : classifier
    Fitted propensity model.
ate_aipw_ : float
    Doubly robust (AIPW) average treatment effect on the training sample.
    T-, X- and G-learners: with nuisances (``mu0, mu1`` and the propensity)
    cross-fitted over ``aipw_cv`` folds, computed on first access (in-sample
    with ``aipw_cv=None``); DR-, R-learner and causal forest: from their
    out-of-fold nuisances.
ate_aipw_stderr_ : float
    Its influence-function standard error (see :meth:`ate_aipw_interval`).
att_aipw_ : float
    Doubly robust average effect on the treated of the training sample.
att_aipw_stderr_ : float
    Its influence-function standard error.
final_estimator_ : regressor or None
    The effect model on ``X`` alone. T-, X- and G-learners: with controls
    ``W``, ``estimator`` fitted on ``X`` to the learner's nuisance-level
    effect, ``None`` without ``W``; DR-, R-learner and causal forest: always
    their final stage.
bootstrap_estimators_ : list of estimators
    The ``n_bootstrap`` refits (empty when ``n_bootstrap=0``).
n_controls_in_ : int
    Number of columns of the controls ``W`` seen in ``fit`` (0 if none).
n_control_, n_treated_ : int
    Arm sizes.
n_features_in_ : int
    Number of features of ``X`` seen in ``fit``.
feature_names_in_ : ndarray of str
    Names of the features, when ``X`` has string column names.
"""


class BaseCATERegressor(RegressorMixin, BaseEstimator, metaclass=abc.ABCMeta):
    """Base class: binary-treatment CATE estimators with outcome models.

    Subclasses implement ``_fit_cate(X, y, t, rng, sample_weight)`` (``X``
    the untouched covariates, with the controls ``W`` appended when given) and
    ``_predict_outcomes(X, t)`` returning ``(mu0, mu1)``; ``t`` is the
    treatment column read from ``X`` when ``treatment_column`` is set, else
    ``None``. ``_nuisance_effect(X, t)`` (default ``mu1 - mu0``) is the
    learner's effect at the nuisance level; with controls ``W`` a clone of
    ``estimator`` regresses it on ``X`` alone (the effect model).
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.__doc__ = substitute(
            cls.__dict__.get("__doc__"),
            cls,
            cate_parameters=_PARAMETERS_DOC,
            cate_attributes=_ATTRIBUTES_DOC,
            aipw_cv_parameter=_AIPW_CV_DOC,
        )

    # ``treatment`` is requested by default in ``fit`` and ``score``: with
    # metadata routing enabled, GridSearchCV / cross_validate / Pipeline route
    # it without ``set_fit_request`` / ``set_score_request`` (setting them to
    # False still declines it)
    __metadata_request__fit = {"treatment": True}
    __metadata_request__score = {"treatment": True}

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"]), None],
        "propensity_estimator": [HasMethods(["fit", "predict_proba"]), None],
        "treatment_column": [Integral, str, None],
        "treatment_threshold": [Real, StrOptions({"median"}), None],
        "n_bootstrap": [Interval(Integral, 0, None, closed="left")],
        "bootstrap_type": [StrOptions({"pivot", "percentile", "normal"})],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # the default propensity model reuses the preprocessing steps of an
    # ``estimator`` Pipeline (the G-learner's propensity sees its
    # ``transformer`` space instead)
    _propensity_reuses_preprocessing = True

    def __init__(
        self,
        estimator=None,
        *,
        propensity_estimator=None,
        treatment_column=None,
        treatment_threshold=None,
        n_bootstrap=0,
        bootstrap_type="pivot",
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    # ------------------------------------------------------------------ input
    def _get_estimator(self):
        return default_outcome_estimator() if self.estimator is None else self.estimator

    def _get_propensity_estimator(self):
        if self.propensity_estimator is not None:
            return self.propensity_estimator
        transformer, _ = final_step(self._get_estimator())
        if transformer is None or not self._propensity_reuses_preprocessing:
            return default_propensity_estimator()
        # the outcome pipeline's preprocessing (e.g. a ColumnTransformer on a
        # raw DataFrame), then the standardised logistic regression; the scaler
        # does not centre, so sparse encodings pass
        return Pipeline(
            [
                *clone(transformer).steps,
                ("propensity_scaler", StandardScaler(with_mean=False)),
                ("propensity_logistic", LogisticRegression(max_iter=1000)),
            ]
        )

    def _split_treatment_column(self, X, *, reset=False, sample_weight=None):
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
                    weighted_median(values, sample_weight)
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

    def _validate_fit(self, X, y, treatment, sample_weight=None):
        X = check_covariates(self, X, reset=True)
        y = _check_y(y, y_numeric=True, estimator=self)
        y = column_or_1d(y, warn=True).astype(np.float64)
        check_consistent_length(X, y)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(
                sample_weight, X, dtype=np.float64, ensure_non_negative=True
            )
        covariates, column = self._split_treatment_column(
            X, reset=True, sample_weight=sample_weight
        )
        if column is not None and treatment is not None:
            raise ValueError(
                "Pass the treatment either as `treatment` or through "
                "`treatment_column`, not both."
            )
        n = _num_samples(covariates)
        t = check_treatment(column if column is not None else treatment, n)
        check_arms(t)
        return covariates, y, t, sample_weight

    @staticmethod
    def _check_controls(W, n):
        if W is None:
            return None
        if not hasattr(W, "columns"):
            W = check_array(W, ensure_2d=False, dtype=None, input_name="W")
            if W.ndim == 1:
                W = W.reshape(-1, 1)
        if _num_samples(W) != n:
            raise ValueError(f"W has {_num_samples(W)} rows but X has {n} samples.")
        return W

    def _validate_predict(self, X):
        check_is_fitted(self)
        return self._split_treatment_column(check_covariates(self, X, reset=False))

    def _clone_child(self, estimator, seed):
        child = clone(estimator)
        return set_child_random_state(child, seed)

    # ------------------------------------------------------------------ fit
    @abc.abstractmethod
    def _fit_cate(self, X, y, t, rng, sample_weight=None):
        """Fit the outcome (and effect) models on covariates ``X``."""

    @abc.abstractmethod
    def _predict_outcomes(self, X, t):
        """``(mu0, mu1)`` at covariates ``X`` (``t``: treatment column or None)."""

    def _nuisance_effect(self, X, t):
        """The learner's effect at the nuisance level (``X`` with ``W``)."""
        mu0, mu1 = self._predict_outcomes(X, t)
        return mu1 - mu0

    def _fit_propensity(self, X, t, seed, sample_weight=None):
        model = self._clone_child(self._get_propensity_estimator(), seed)
        try:
            fit_child(
                model,
                self._propensity_features(X),
                t.astype(int),
                sample_weight,
                role="propensity model",
            )
        except (TypeError, ValueError) as exc:
            if "sample_weight" in str(exc) or self.propensity_estimator is not None:
                raise
            raise type(exc)(
                f"{exc} The default propensity model (a standardised "
                "LogisticRegression, after the preprocessing steps of an "
                "`estimator` Pipeline when there are any) could not be fitted on "
                "these covariates: pass `propensity_estimator=` (a classifier "
                "that takes X as it is, e.g. a Pipeline that encodes it)."
            ) from exc
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

    def _fit_aipw(self, X, y, t, tcol, sample_weight):
        """Doubly robust (AIPW) ATE and ATT on the training sample.

        With ``aipw_cv`` (T-, X- and G-learners, default 5) the nuisances are
        cross-fitted, on first use (:meth:`_crossfit_aipw`): the training
        rows are kept until then. With ``aipw_cv=None`` they are the fitted
        models' in-sample values and the influence-function standard errors
        treat them as known (they were fitted on the same sample).
        """
        if getattr(self, "aipw_cv", None) is not None:
            # the seed is drawn at the end of ``fit`` (after the bootstrap), so
            # every other draw is the one of ``aipw_cv=None``
            self._aipw_data = [X, y, t, sample_weight, None]
            return
        mu0, mu1 = self._predict_outcomes(X, tcol)
        self._store_aipw(y, t, mu0, mu1, self._propensity(X), sample_weight)

    def _fit_outcome_models(self, X, y, t, rng, sample_weight=None):
        """The fit whose ``_predict_outcomes`` the cross-fitted AIPW uses."""
        self._fit_cate(X, y, t, rng, sample_weight)

    def __getattr__(self, name):
        # the cross-fitted AIPW attributes are computed on first access
        if name in _AIPW_ATTRIBUTES and "_aipw_data" in self.__dict__:
            self._crossfit_aipw()
            return self.__dict__[name]
        raise AttributeError(
            f"{type(self).__name__!r} object has no attribute {name!r}"
        )

    def _crossfit_aipw(self):
        """Cross-fitted AIPW ATE and ATT from the kept training rows.

        The folds come from ``aipw_cv`` (an int: ``StratifiedKFold`` by
        treatment, at most the size of the smaller arm); on each fold a clone
        of this learner fits its outcome models and its propensity model on
        the training part (the same code as ``fit``), and predicts ``mu0``,
        ``mu1`` and ``e`` on the held-out part. The training rows are then
        released.
        """
        from sklearn_iclr26.causal._crossfit import crossfit_folds

        X, y, t, sample_weight, seed = self._aipw_data
        rng = np.random.RandomState(seed)
        cv = self.aipw_cv
        if isinstance(cv, Integral):
            # ``fit`` checked that each arm has at least 2 units
            cv = min(cv, int(min(t.sum(), len(t) - t.sum())))
        folds = crossfit_folds(cv, t, rng)
        n = len(y)
        mu0, mu1, e = np.empty(n), np.empty(n), np.empty(n)
        for k, (train, test) in enumerate(folds):
            log_progress(self, f"cross-fitted AIPW, fold {k + 1}/{len(folds)}")
            fold = clone(self)
            X_train = _safe_indexing(X, train)
            w = None if sample_weight is None else sample_weight[train]
            with warnings.catch_warnings():
                # the main fit has already warned about overlap and the like
                warnings.simplefilter("ignore")
                fold._fit_outcome_models(X_train, y[train], t[train], rng, w)
                fold._fit_propensity(X_train, t[train], _draw(rng), w)
            X_test = _safe_indexing(X, test)
            mu0[test], mu1[test] = fold._predict_outcomes(X_test, t[test])
            e[test] = fold._propensity(X_test)
        self._store_aipw(y, t, mu0, mu1, e, sample_weight)
        del self._aipw_data

    def _store_aipw(self, y, t, mu0, mu1, e, sample_weight):
        """``ate_aipw_``, ``att_aipw_`` and their standard errors from the
        nuisance values ``mu0, mu1, e`` at the training rows (in-sample here,
        cross-fitted for the DR- and R-learners)."""
        e = np.clip(e, _CLIP, 1 - _CLIP)
        w = np.ones_like(y) if sample_weight is None else sample_weight
        sw = w.sum()
        psi = mu1 - mu0 + t * (y - mu1) / e - (1 - t) * (y - mu0) / (1 - e)
        ate = float(np.sum(w * psi) / sw)
        # ATT: E[t (y - mu0) - (1 - t) e / (1 - e) (y - mu0)] / P(T = 1)
        p = float(np.sum(w * t) / sw)
        num = t * (y - mu0) - (1 - t) * e / (1 - e) * (y - mu0)
        att = float(np.sum(w * num) / sw / p)
        phi_ate = psi - ate
        phi_att = (num - t * att) / p
        self.ate_aipw_ = ate
        self.att_aipw_ = att
        self.ate_aipw_stderr_ = _weighted_stderr(phi_ate, w)
        self.att_aipw_stderr_ = _weighted_stderr(phi_att, w)

    def _fit_final(self, X, XW, y, t, tcol, rng, sample_weight):
        """The effect model on ``X`` alone (``final_estimator_``), or ``None``.

        Here: with controls ``W``, a clone of ``estimator`` regressed on the
        learner's nuisance-level effect; without them, ``None``. The DR- and
        R-learners and the causal forest fit their final stage here.
        """
        if self.n_controls_in_ == 0:
            return None
        target = self._nuisance_effect(XW, tcol)
        model = self._clone_child(self._get_estimator(), _draw(rng))
        return fit_child(model, X, target, sample_weight, role="effect model")

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, *, treatment=None, W=None, sample_weight=None):
        """Fit the nuisance and effect models on the factual outcomes.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates (the effect modifiers), handed untouched to the
            outcome models.
        y : array-like of shape (n_samples,)
            Factual outcomes.
        treatment : array-like of shape (n_samples,), default=None
            Binary treatment (0/1 or bool). Required unless
            ``treatment_column`` names the column of ``X`` that holds it.
        W : {array-like, DataFrame} of shape (n_samples, n_controls), default=None
            Controls (econml's ``W``): confounders the nuisance models see
            (appended as columns to ``X`` for the outcome and propensity
            models) but the effect does not depend on. With ``W``, a clone of
            ``estimator`` regresses the learner's nuisance-level effect on
            ``X`` alone (``final_estimator_``, the effect model), so
            ``effect(X)`` needs no ``W``.
        sample_weight : array-like of shape (n_samples,), default=None
            Unit weights, passed to every nuisance and effect model (to every
            step of a ``Pipeline`` that takes them; a model without
            ``sample_weight`` raises an error), the AIPW means and, for the
            G-learner, the transport marginals.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X_in = X
        # econml's output axis: a y of shape (n, 1) gives (n, 1) effects
        y_2d = _is_column(y)
        X, y, t, sample_weight = self._validate_fit(X, y, treatment, sample_weight)
        n = len(y)
        W = self._check_controls(W, n)
        rng = check_random_state(self.random_state)
        self.n_treated_ = int(t.sum())
        self.n_control_ = int(len(t) - t.sum())
        self.n_controls_in_ = 0 if W is None else int(np.shape(W)[1])
        tcol = t if self.treatment_column is not None else None
        XW = append_controls(X, W)
        self._fit_cate(XW, y, t, rng, sample_weight)
        self._fit_propensity(XW, t, _draw(rng), sample_weight)
        self.final_estimator_ = self._fit_final(X, XW, y, t, tcol, rng, sample_weight)
        # the AIPW uses the known arms of the training units (the G-learner's
        # "adapted" pairing then takes the actual arm)
        self._fit_aipw(XW, y, t, t, sample_weight)
        self.bootstrap_estimators_ = self._fit_bootstrap(
            X_in, y, treatment, W, sample_weight, t, rng
        )
        if "_aipw_data" in self.__dict__:
            self._aipw_data[-1] = _draw(rng)
        self._y_2d = y_2d
        return self

    def _fit_bootstrap(self, X, y, treatment, W, sample_weight, t, rng):
        """``n_bootstrap`` refits of the whole learner on resamples stratified
        by arm (each arm resampled to its own size, as econml does for a
        discrete treatment); drawn after the main fit, so the main fit does
        not depend on ``n_bootstrap``."""
        if self.n_bootstrap == 0:
            return []
        X = _as_array_like(X)
        arms = [np.flatnonzero(t == 0), np.flatnonzero(t == 1)]
        fits = []
        for b in range(self.n_bootstrap):
            rows = np.concatenate([rng.choice(a, size=len(a)) for a in arms])
            seed = _draw(rng)
            log_progress(self, f"bootstrap fit {b + 1}/{self.n_bootstrap}")
            est = clone(self).set_params(n_bootstrap=0, random_state=seed, verbose=0)
            kwargs = {}
            if treatment is not None:
                kwargs["treatment"] = t[rows]
            if W is not None:
                kwargs["W"] = _safe_indexing(W, rows)
            if sample_weight is not None:
                kwargs["sample_weight"] = sample_weight[rows]
            with warnings.catch_warnings():
                # the main fit has already warned about overlap and the like
                warnings.simplefilter("ignore")
                est.fit(_safe_indexing(X, rows), y[rows], **kwargs)
            # a refit's AIPW is never read: release its kept rows
            est.__dict__.pop("_aipw_data", None)
            fits.append(est)
        return fits

    def fit_cate(self, Y, T, *, X, W=None, sample_weight=None):
        """EconML-style alias: ``fit(X, Y, treatment=T, W=W, sample_weight=...)``.

        Parameters
        ----------
        Y : array-like of shape (n_samples,) or (n_samples, 1)
            Factual outcomes; a column (econml's ``d_y = 1``) gives the
            effects econml's output axis, with no conversion warning.
        T : array-like of shape (n_samples,)
            Binary treatment.
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.
        W : {array-like, DataFrame} of shape (n_samples, n_controls), default=None
            Controls seen by the nuisance models only.
        sample_weight : array-like of shape (n_samples,), default=None
            Unit weights.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        with warnings.catch_warnings():
            # econml takes a column Y as its d_y = 1 outcome, without a warning
            warnings.simplefilter("ignore", DataConversionWarning)
            return self.fit(X, Y, treatment=T, W=W, sample_weight=sample_weight)

    # ------------------------------------------------------------- predict
    def _controls_for_predict(self, W, n):
        if self.n_controls_in_ == 0:
            if W is not None:
                raise ValueError("W was given but the learner was fitted without W.")
            return None
        if W is None:
            raise ValueError(
                "The learner was fitted with controls W: the potential outcomes "
                "need them (pass W=); the effect does not."
            )
        return self._check_controls(W, n)

    def predict_outcomes(self, X, *, W=None):
        """Predicted potential outcomes ``(mu0, mu1)``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates (with the treatment column when ``treatment_column``
            is set; its value is then used only where a method needs the arm).
        W : {array-like, DataFrame} of shape (n_samples, n_controls), default=None
            Controls, required when ``fit`` had them.

        Returns
        -------
        mu0, mu1 : ndarray of shape (n_samples,)
            Predicted outcomes under control and under treatment.
        """
        covariates, t = self._validate_predict(X)
        W = self._controls_for_predict(W, _num_samples(covariates))
        return batched(
            self._predict_outcomes,
            append_controls(covariates, W),
            t,
            row_bytes=8 * 16 * max(self.n_features_in_ + self.n_controls_in_, 1),
        )

    def _predict_effect(self, X, t):
        if self.final_estimator_ is not None:
            return np.asarray(
                self.final_estimator_.predict(X), dtype=np.float64
            ).ravel()
        return self._nuisance_effect(X, t)

    def predict(self, X):
        """Conditional average treatment effect ``tau(x)``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.

        Returns
        -------
        tau : ndarray of shape (n_samples,)
            Estimated effect of the treatment at each row.
        """
        covariates, t = self._validate_predict(X)
        return batched(
            self._predict_effect,
            covariates,
            t,
            row_bytes=8 * 16 * max(self.n_features_in_, 1),
        )

    # econml's shapes: with a vector ``y`` the effect is ``(n,)`` and the
    # constant marginal effect ``(n, 1)`` (one treatment); with ``y`` of shape
    # ``(n, 1)`` an output axis is added: ``(n, 1)`` and ``(n, 1, 1)``
    def _y_axis(self, values):
        """``values`` with econml's output axis when ``fit`` had a 2-D ``y``."""
        if getattr(self, "_y_2d", False):
            return np.expand_dims(values, -1)
        return values

    def _cme_shape(self, values):
        """``(n,) -> (n, 1)`` (a 1-D ``y``) or ``(n, 1, 1)`` (a 2-D ``y``)."""
        return self._y_axis(np.expand_dims(values, -1))

    def const_marginal_effect(self, X):
        """Return the constant marginal effect ``tau(x)`` (econml's, binary treatment).

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.

        Returns
        -------
        tau : ndarray of shape (n_samples, 1) or (n_samples, 1, 1)
            The estimated effect of the treatment at each row, with econml's
            treatment axis (and its output axis when ``y`` was 2-D in
            ``fit``). :meth:`predict` returns the same values as a vector.
        """
        return self._cme_shape(self.predict(X))

    def marginal_effect(self, T, X):
        """Return the marginal effect (econml's): ``tau(x)`` whatever ``T``.

        Parameters
        ----------
        T : {0, 1} or array-like of shape (n_samples,)
            Base treatment (checked, otherwise unused).
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.

        Returns
        -------
        tau : ndarray of shape (n_samples, 1) or (n_samples, 1, 1)
            The estimated effect at each row, shaped as
            :meth:`const_marginal_effect`.
        """
        tau = self.predict(X)
        check_binary_arm(T, len(tau), "T")
        return self._cme_shape(tau)

    def _effect_and_draws(self, X, T0, T1, what, *, draws=True):
        tau = self.predict(X)
        d = check_binary_arm(T1, len(tau), "T1") - check_binary_arm(T0, len(tau), "T0")
        if not draws:
            return d * tau, d, None
        return d * tau, d, d * self._bootstrap_draws(X, what)

    def effect(self, X, *, T0=0, T1=1):
        """Return econml's ``effect``: ``(T1 - T0) tau(x)`` row by row.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.
        T0, T1 : {0, 1} or array-like of shape (n_samples,), default=0, 1
            Base and target treatment, a scalar or one per row.

        Returns
        -------
        effect : ndarray of shape (n_samples,) or (n_samples, 1)
            ``(T1 - T0) * tau(x)`` at each row (with econml's output axis
            when ``y`` was 2-D in ``fit``); a lazy dask array for a dask
            ``X`` (the effect of each block, on the workers).
        """
        if is_dask_collection(X):
            check_is_fitted(self)
            tail = (1,) if getattr(self, "_y_2d", False) else ()
            return lazy_method(self, "effect", X, tail=tail, T0=T0, T1=T1)
        return self._y_axis(self._effect_and_draws(X, T0, T1, "", draws=False)[0])

    def _bootstrap_draws(self, X, what):
        check_is_fitted(self)
        if not self.bootstrap_estimators_:
            raise ValueError(
                f"{what} needs the bootstrap of the whole fit: set n_bootstrap "
                "(e.g. n_bootstrap=100) and fit again."
            )
        return np.stack([b.predict(X) for b in self.bootstrap_estimators_])

    @deprecated_alpha
    def effect_interval(self, X, *, T0=0, T1=1, confidence_level=0.95, alpha=None):
        """Bootstrap confidence interval of :meth:`effect`, econml's signature.

        Built from the ``n_bootstrap`` refits of the whole learner
        (``bootstrap_estimators_``) by ``bootstrap_type``, with econml's
        ``BootstrapInference`` formulas; ``confidence_level=0.95`` is
        econml's ``alpha=0.05``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.
        T0, T1 : {0, 1} or array-like of shape (n_samples,), default=0, 1
            Base and target treatment.
        confidence_level : float in (0, 1), default=0.95
            Level of the intervals.
        alpha : float in (0, 1), default=None
            Deprecated (removed in the next release): econml's miscoverage,
            ``1 - confidence_level``; a ``FutureWarning``.

        Returns
        -------
        lower, upper : ndarray of shape (n_samples,) or (n_samples, 1)
            The interval's bounds at each row, shaped as :meth:`effect`.
        """
        a = miscoverage(confidence_level)
        point, _, draws = self._effect_and_draws(X, T0, T1, "effect_interval")
        lower, upper = bootstrap_interval(point, draws, a, self.bootstrap_type)
        return self._y_axis(lower), self._y_axis(upper)

    @deprecated_alpha
    def const_marginal_effect_interval(self, X, *, confidence_level=0.95, alpha=None):
        """Bootstrap confidence interval of ``tau(x)`` (see :meth:`effect_interval`).

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
            The interval's bounds at each row, shaped as
            :meth:`const_marginal_effect`.
        """
        a = miscoverage(confidence_level)
        point, _, draws = self._effect_and_draws(X, 0, 1, "effect_interval")
        lower, upper = bootstrap_interval(point, draws, a, self.bootstrap_type)
        return self._cme_shape(lower), self._cme_shape(upper)

    @deprecated_alpha
    def marginal_effect_interval(self, T, X, *, confidence_level=0.95, alpha=None):
        """Bootstrap interval of :meth:`marginal_effect` (econml's).

        Parameters
        ----------
        T : {0, 1} or array-like of shape (n_samples,)
            Base treatment (checked, otherwise unused).
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
        lower, upper = self.const_marginal_effect_interval(
            X, confidence_level=confidence_level
        )
        check_binary_arm(T, lower.shape[0], "T")
        return lower, upper

    def effect_inference(self, X, *, T0=0, T1=1):
        """Inference on :meth:`effect` (econml's ``effect_inference``).

        From the ``n_bootstrap`` refits, read by ``bootstrap_type`` as
        econml's ``BootstrapInference`` reads them: ``"pivot"`` and
        ``"percentile"`` give empirical intervals and p-values, ``"normal"``
        normal ones; the standard error is the refits' standard deviation.

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
            ``conf_int()`` and ``summary_frame()`` (econml's columns).
        """
        point, _, draws = self._effect_and_draws(X, T0, T1, "effect_inference")
        return CATEInferenceResults(
            self._y_axis(point),
            draws=self._y_axis(draws),
            kind=self.bootstrap_type,
        )

    def const_marginal_effect_inference(self, X):
        """Inference on :meth:`const_marginal_effect` (see :meth:`effect_inference`).

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.

        Returns
        -------
        inference : CATEInferenceResults
            Shaped as :meth:`const_marginal_effect`.
        """
        point, _, draws = self._effect_and_draws(X, 0, 1, "effect_inference")
        return CATEInferenceResults(
            self._cme_shape(point),
            draws=self._cme_shape(draws),
            kind=self.bootstrap_type,
        )

    def ate(self, X, *, T0=0, T1=1):
        """Plug-in average treatment effect, ``mean(effect(X, T0, T1))`` (econml's).

        The doubly robust estimate of the training sample is ``ate_aipw_``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates the CATE is averaged over.
        T0, T1 : {0, 1} or array-like of shape (n_samples,), default=0, 1
            Base and target treatment.

        Returns
        -------
        ate : float or ndarray of shape (1,)
            The mean of ``effect(X, T0, T1)`` over the rows of ``X`` (shape
            ``(1,)`` when ``y`` was 2-D in ``fit``, as econml's).
        """
        point = float(np.mean(self._effect_and_draws(X, T0, T1, "", draws=False)[0]))
        return self._ate_shape(point)

    def _ate_shape(self, value):
        if getattr(self, "_y_2d", False):
            return np.asarray([value], dtype=np.float64)
        return value

    def _aipw_arm_difference(self, X, T0, T1):
        """The one ``T1 - T0`` of the doubly robust ATE (constant over rows)."""
        _, d, _ = self._effect_and_draws(X, T0, T1, "", draws=False)
        if len(d) and not np.all(d == d[0]):
            raise ValueError(
                "method='aipw' estimates the ATE of one contrast: T1 - T0 must be "
                "the same on every row; pass method='bootstrap' for per-row "
                "treatments."
            )
        return float(d[0]) if len(d) else 1.0

    @deprecated_alpha
    def ate_interval(
        self, X, *, T0=0, T1=1, confidence_level=0.95, method="aipw", alpha=None
    ):
        """Confidence interval of the average treatment effect (econml's name).

        ``method="aipw"`` (the default): the doubly robust interval
        ``ate_aipw_ -/+ z ate_aipw_stderr_`` (:meth:`ate_aipw_interval`, times
        ``T1 - T0``), the interval of the ATE of the population the training
        sample was drawn from; ``X`` and the treatments are only checked.
        ``method="bootstrap"``: the bootstrap interval of the plug-in
        :meth:`ate` over ``X`` (each refit's mean effect over ``X`` is a
        replicate, read by ``bootstrap_type``), which needs ``n_bootstrap``.
        The bootstrap interval does not see the outcome models' bias: with
        boosted outcome models it covered the true ATE in 0.13-0.69 of 200
        replications at 0.9. The doubly robust one uses nuisances
        cross-fitted over ``aipw_cv`` folds (T-, X- and G-learners; computed
        on the first call, which refits the nuisance models per fold): it
        covered 0.885 and 0.930 there (T-learner; X-learner 0.855 and 0.930),
        where the in-sample one (``aipw_cv=None``)
        covered 0.80-0.855 (``benchmarks/cate_ate_crossfit_coverage.py``;
        see :doc:`/causal`).

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.
        T0, T1 : {0, 1} or array-like of shape (n_samples,), default=0, 1
            Base and target treatment (one contrast for ``"aipw"``).
        confidence_level : float in (0, 1), default=0.95
            Level of the interval.
        method : {"aipw", "bootstrap"}, default="aipw"
            The doubly robust interval or the bootstrap one of the plug-in.
        alpha : float in (0, 1), default=None
            Deprecated: econml's miscoverage, ``1 - confidence_level``.

        Returns
        -------
        lower, upper : float or ndarray of shape (1,)
            The interval's bounds (shape ``(1,)`` when ``y`` was 2-D).
        """
        _check_method(method)
        if method == "aipw":
            d = self._aipw_arm_difference(X, T0, T1)
            low, high = self._aipw_interval("ate", confidence_level)
            low, high = (d * low, d * high) if d >= 0 else (d * high, d * low)
        else:
            a = miscoverage(confidence_level)
            point, _, draws = self._effect_and_draws(X, T0, T1, "ate_interval")
            low, high = bootstrap_interval(
                float(np.mean(point)), draws.mean(axis=1), a, self.bootstrap_type
            )
        return self._ate_shape(float(low)), self._ate_shape(float(high))

    def ate_inference(self, X, *, T0=0, T1=1, method="aipw"):
        """Inference on the average treatment effect (econml's ``ate_inference``).

        ``method="aipw"`` (the default): normal inference on the doubly
        robust ``ate_aipw_`` (times ``T1 - T0``) with its influence-function
        standard error; ``method="bootstrap"``: on the plug-in :meth:`ate`
        over ``X`` from the refits (see :meth:`ate_interval`). econml's
        ``ate_inference`` instead averages the per-row effect inferences, with
        a conservative standard error (the root mean square of the rows').

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.
        T0, T1 : {0, 1} or array-like of shape (n_samples,), default=0, 1
            Base and target treatment.
        method : {"aipw", "bootstrap"}, default="aipw"
            Which estimate and inference.

        Returns
        -------
        inference : ATEInferenceResults
            With ``point_estimate`` (alias ``mean_point``), ``stderr``
            (``stderr_mean``), ``zstat()``, ``pvalue()``, ``conf_int()``
            (``conf_int_mean()``) and ``summary_frame()``.
        """
        _check_method(method)
        if method == "aipw":
            d = self._aipw_arm_difference(X, T0, T1)
            check_is_fitted(self)
            return ATEInferenceResults(
                self._ate_shape(d * self.ate_aipw_),
                stderr=self._ate_shape(abs(d) * self.ate_aipw_stderr_),
                kind="normal",
                method="aipw",
            )
        point, _, draws = self._effect_and_draws(X, T0, T1, "ate_inference")
        return ATEInferenceResults(
            self._ate_shape(float(np.mean(point))),
            draws=self._y_axis(draws.mean(axis=1)),
            kind=self.bootstrap_type,
            method="bootstrap",
        )

    def _treated_rows(self, X, treatment):
        covariates, column = self._validate_predict(X)
        if column is not None and treatment is not None:
            raise ValueError(
                "Pass the treatment either as `treatment` or through "
                "`treatment_column`, not both."
            )
        t = check_treatment(
            column if column is not None else treatment, _num_samples(covariates)
        )
        if t.sum() == 0:
            raise ValueError("att needs at least one treated row in X.")
        return t == 1

    def att(self, X, *, treatment=None):
        """Plug-in average effect on the treated: ``tau`` averaged over treated rows.

        The doubly robust estimate of the training sample is ``att_aipw_``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.
        treatment : array-like of shape (n_samples,), default=None
            Binary treatment of the rows of ``X``; required unless
            ``treatment_column`` is set.

        Returns
        -------
        att : float
            The mean of ``tau`` over the treated rows of ``X``.
        """
        treated = self._treated_rows(X, treatment)
        return float(np.mean(self.predict(X)[treated]))

    @deprecated_alpha
    def att_interval(self, X, *, treatment=None, confidence_level=0.95, alpha=None):
        """Bootstrap interval of the plug-in :meth:`att`.

        Like the bootstrap option of :meth:`ate_interval`, it does not see
        the outcome models' bias (with boosted models at n = 500 it covered
        the true effect on the treated in 0.575 and 0.405 of 200
        replications at 0.9); :meth:`att_aipw_interval` is the doubly robust
        one, which holds its level there (:doc:`/causal`).

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Covariates.
        treatment : array-like of shape (n_samples,), default=None
            Binary treatment of the rows of ``X``.
        confidence_level : float in (0, 1), default=0.95
            Level of the interval.
        alpha : float in (0, 1), default=None
            Deprecated: econml's miscoverage, ``1 - confidence_level``.

        Returns
        -------
        lower, upper : float
            The interval's bounds.
        """
        a = miscoverage(confidence_level)
        treated = self._treated_rows(X, treatment)
        tau = self.predict(X)[treated]
        draws = self._bootstrap_draws(X, "att_interval")[:, treated].mean(axis=1)
        low, high = bootstrap_interval(float(tau.mean()), draws, a, self.bootstrap_type)
        return float(low), float(high)

    def _aipw_interval(self, name, confidence_level):
        check_is_fitted(self)
        z = norm.ppf(1 - miscoverage(confidence_level) / 2)
        value = getattr(self, f"{name}_aipw_")
        stderr = getattr(self, f"{name}_aipw_stderr_")
        return float(value - z * stderr), float(value + z * stderr)

    @deprecated_alpha
    def ate_aipw_interval(self, *, confidence_level=0.95, alpha=None):
        """Normal interval of the doubly robust ``ate_aipw_`` (training sample).

        ``ate_aipw_ -/+ z ate_aipw_stderr_`` with the influence-function
        standard error, from cross-fitted nuisances (``aipw_cv``; in-sample
        with ``aipw_cv=None``, which with flexible models is optimistic:
        with boosted models at n = 500 it covered the true ATE in
        0.80-0.855 of 200 replications at 0.9, the 5-fold cross-fitted one
        0.885 and 0.930; :doc:`/causal`). It is the default of
        :meth:`ate_interval`.

        Parameters
        ----------
        confidence_level : float in (0, 1), default=0.95
            Level of the interval.
        alpha : float in (0, 1), default=None
            Deprecated: econml's miscoverage, ``1 - confidence_level``.

        Returns
        -------
        lower, upper : float
            The interval's bounds.
        """
        return self._aipw_interval("ate", confidence_level)

    @deprecated_alpha
    def att_aipw_interval(self, *, confidence_level=0.95, alpha=None):
        """Normal interval of the doubly robust ``att_aipw_`` (training sample).

        ``att_aipw_ -/+ z att_aipw_stderr_``, with the nuisances of
        ``ate_aipw_`` (cross-fitted over ``aipw_cv`` folds for the T-, X- and
        G-learners). Coverage of the true effect on the treated with boosted
        models at n = 500, level 0.9: 0.905 and 0.935 of 200 replications
        for the T-learner (:doc:`/causal`).

        Parameters
        ----------
        confidence_level : float in (0, 1), default=0.95
            Level of the interval.
        alpha : float in (0, 1), default=None
            Deprecated: econml's miscoverage, ``1 - confidence_level``.

        Returns
        -------
        lower, upper : float
            The interval's bounds.
        """
        return self._aipw_interval("att", confidence_level)

    def score(self, X, y, *, treatment=None, W=None):
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
        W : {array-like, DataFrame} of shape (n_samples, n_controls), default=None
            Controls, required when ``fit`` had them.

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
        mu0, mu1 = self.predict_outcomes(X, W=W)
        y = column_or_1d(y).astype(np.float64)
        return float(r2_score(y, np.where(t == 1, mu1, mu0)))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        # predict is the CATE, not a prediction of y: no R^2 floor on y
        tags.regressor_tags.poor_score = True
        tags.target_tags.required = True
        return tags


def _is_column(y):
    """Whether ``y`` is 2-D (econml's ``d_y``); through ``__array__`` only."""
    shape = getattr(y, "shape", None)
    if shape is None:
        shape = np.asarray(y).shape
    return len(shape) == 2


def _weighted_stderr(phi, w):
    """Standard error of a weighted mean of centred influence values ``phi``."""
    sw = w.sum()
    n_eff = sw**2 / np.sum(w**2)
    if n_eff <= 1:
        return np.nan
    var = np.sum(w * phi**2) / sw * n_eff / (n_eff - 1)
    return float(np.sqrt(var / n_eff))


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
