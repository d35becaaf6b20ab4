"""Helpers shared by the label-noise meta-estimators.

Meta-estimators hand ``X`` to the inner estimator untouched (a ``Pipeline``
with a name-based ``ColumnTransformer`` may sit inside and see the raw
DataFrame); these helpers validate only what the correctors read themselves.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numbers

import numpy as np
from scipy import sparse
from scipy.special import expit, log_expit, logit, softmax
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold, check_cv, cross_val_predict
from sklearn.pipeline import Pipeline
from sklearn.utils import check_array, column_or_1d
from sklearn.utils.validation import (
    check_consistent_length,
    validate_data,
)

from sklearn_iclr26.utils._random import seed_from_random_state
from sklearn_iclr26.utils._validation import encode_classifier_targets

__all__ = [
    "init_score",
    "numeric_features",
    "out_of_fold_proba",
    "ovr_proba",
    "proba_from_raw",
    "split_pipeline",
    "validate_meta_X",
    "validate_meta_fit",
    "warmup_count",
]


def split_pipeline(estimator):
    """``(head, final_name, final)`` of an estimator.

    For a :class:`~sklearn.pipeline.Pipeline`, ``head`` is the pipeline of the
    steps before the final estimator (``None`` when there is none),
    ``final_name`` the name of the final step and ``final`` the final step;
    for any other estimator ``(None, None, estimator)``.
    """
    if isinstance(estimator, Pipeline):
        name, final = estimator.steps[-1]
        head = estimator[:-1] if len(estimator.steps) > 1 else None
        return head, name, final
    return None, None, estimator


def validate_meta_X(estimator, X, *, reset):
    """Record or check ``n_features_in_``/``feature_names_in_``; return ``X``.

    ``X`` is returned untouched, except an object that numpy can convert but
    that cannot be indexed by rows (only ``__array__``), which becomes an
    array, and a sparse matrix in a format without row indexing, which
    becomes CSR. A numeric 1-D array raises scikit-learn's "Reshape your data"
    error (a 1-D array of strings or objects passes: a text pipeline may sit
    inside).
    """
    if not hasattr(X, "__getitem__") and hasattr(X, "__array__"):
        X = np.asarray(X)
    if sparse.issparse(X) and X.format not in ("csr", "csc"):
        X = X.tocsr()  # DIA/COO/BSR cannot be indexed by rows
    if isinstance(X, np.ndarray) and X.ndim == 1 and X.dtype.kind in "biufc":
        raise ValueError(
            f"Expected 2D array, got 1D array instead:\narray={X}.\nReshape your "
            "data either using array.reshape(-1, 1) if your data has a single "
            "feature or array.reshape(1, -1) if it contains a single sample."
        )
    validate_data(estimator, X, reset=reset, skip_check_array=True)
    return X


def validate_meta_fit(estimator, X, y, sample_weight=None):
    """Validate a corrector's ``fit`` inputs without converting ``X``.

    Sets ``n_features_in_``/``feature_names_in_`` (when ``X`` has them) and
    ``classes_``; returns ``X`` (see :func:`validate_meta_X`), the labels,
    their codes ``0, ..., n_classes - 1`` and the validated weights. ``X``
    itself is validated by the inner estimator.
    """
    if y is None:
        raise ValueError(
            f"{type(estimator).__name__} requires y to be passed, but the target y "
            "is None."
        )
    X = validate_meta_X(estimator, X, reset=True)
    y = column_or_1d(y, warn=True)
    check_consistent_length(X, y)
    return encode_classifier_targets(estimator, X, y, sample_weight)


def numeric_features(X, transformer, estimator, *, y=None, fitted=None, what):
    """The numeric matrix a noise model computes on, and the fitted transformer.

    ``transformer`` (cloned and fitted here unless ``fitted`` is given) maps
    ``X`` to numbers; ``None`` uses the steps of ``estimator`` before its final
    step when ``estimator`` is a ``Pipeline``, and ``X`` itself otherwise,
    which must then be numeric (a clear error names ``transformer=``).
    """
    if fitted is None:
        if transformer is None:
            head, _, _ = split_pipeline(estimator)
            transformer = head
        if transformer is not None:
            # fit then transform: a FrozenEstimator disables fit_transform
            fitted = clone(transformer).fit(X, y)
            Z = fitted.transform(X)
        else:
            Z = X
    else:
        Z = X if fitted == "passthrough" else fitted.transform(X)
    try:
        Z = check_array(
            Z,
            accept_sparse=["csr", "csc"],
            ensure_all_finite="allow-nan",
            dtype=[np.float64, np.float32],
        )
    except (ValueError, TypeError) as exc:
        raise ValueError(
            f"{what} computes on X itself, but X is not numeric ({exc}). Pass "
            "transformer= (a transformer mapping X to numbers, e.g. your "
            "ColumnTransformer, or FrozenEstimator(fitted_preprocessor)), or use "
            "a Pipeline as estimator: its steps before the final estimator are "
            "the default transformer."
        ) from exc
    return Z, ("passthrough" if fitted is None else fitted)


def warmup_count(warmup, n_total):
    """An int count, or a fraction of ``n_total`` rounds/epochs."""
    if isinstance(warmup, float):
        return round(warmup * n_total)
    return int(warmup)


def init_score(y, sample_weight):
    """``logit`` of the weighted positive rate (LightGBM's ``boost_from_average``)."""
    mean = np.average(y, weights=sample_weight)
    return float(logit(np.clip(mean, 1e-6, 1 - 1e-6)))


def proba_from_raw(raw):
    """``(n, 2)`` probabilities from a binary raw score."""
    p = expit(raw)
    return np.column_stack([1.0 - p, p])


def out_of_fold_proba(backend, X, y, sample_weight, cv, rng):
    """``(proba, n_splits)``: out-of-fold probabilities of the plain estimator.

    ``cv`` an int: stratified folds (fewer when the smallest class is
    smaller), shuffled with a seed drawn from ``rng``; in-sample probabilities
    of one fit when no two folds are possible. Otherwise a splitter or an
    iterable of splits, used as given. Columns in label-code order.
    """
    params = backend._route(sample_weight=sample_weight)
    if isinstance(cv, numbers.Integral):
        n_splits = min(cv, int(np.bincount(y).min()))
        folds = None
        if n_splits >= 2:
            folds = StratifiedKFold(
                n_splits, shuffle=True, random_state=seed_from_random_state(rng)
            )
    else:  # a splitter or an iterable of (train, test) splits, used as given
        folds = check_cv(cv, y, classifier=True)
        n_splits = folds.get_n_splits(X, y)
    if folds is not None:
        proba = cross_val_predict(
            clone(backend.estimator),
            X,
            y,
            cv=folds,
            method="predict_proba",
            params=params,
        )
    else:
        proba = backend.fit_weighted(X, y, sample_weight).predict_proba(X)
    return np.asarray(proba, dtype=np.float64), n_splits


def ovr_proba(raw):
    """Normalized one-vs-rest probabilities ``expit(raw) / sum(expit(raw))``.

    Computed in log space (``softmax(log_expit(raw))``), so that rows whose
    every logit is far below 0 (inputs far outside the training scale) stay on
    the simplex instead of underflowing to all-zero rows.
    """
    return softmax(log_expit(np.asarray(raw, dtype=np.float64)), axis=1)
