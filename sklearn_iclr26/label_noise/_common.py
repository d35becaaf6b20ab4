"""Helpers shared by the label-noise meta-estimators."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings

import numpy as np
from scipy import sparse
from scipy.special import expit, logit
from sklearn.base import clone
from sklearn.utils.validation import has_fit_parameter, validate_data

__all__ = [
    "estimator_kind",
    "fit_lightgbm",
    "fit_stacked",
    "init_score",
    "raw_score",
    "torch_child",
    "warmup_count",
]


def estimator_kind(estimator):
    """``"lightgbm"``, ``"torch"``, ``"weights"`` or ``None`` (unsupported)."""
    names = {cls.__name__ for cls in type(estimator).__mro__}
    if "LGBMClassifier" in names:
        return "lightgbm"
    if hasattr(estimator, "_fit_net") and "TorchMLPClassifier" in names:
        return "torch"
    if has_fit_parameter(estimator, "sample_weight"):
        return "weights"
    return None


def warmup_count(warmup, n_total):
    """An int count, or a fraction of ``n_total`` rounds/epochs."""
    if isinstance(warmup, float):
        return round(warmup * n_total)
    return int(warmup)


def init_score(y, sample_weight):
    """``logit`` of the weighted positive rate (LightGBM's ``boost_from_average``)."""
    mean = np.average(y, weights=sample_weight)
    return float(logit(np.clip(mean, 1e-6, 1 - 1e-6)))


def fit_lightgbm(estimator, objective, X, y, sample_weight, init):
    """Clone a ``LGBMClassifier``, give it a callable objective and fit it.

    Returns the fitted clone and its raw-score offset. On data too small for
    LightGBM to keep any feature, a callable objective makes LightGBM abort
    ("num_features() > 0") where the built-in one returns a constant model;
    then the built-in binary objective is used (a constant model: there is
    nothing to correct), with a warning, and the offset is 0.
    """
    est = clone(estimator)
    current = est.get_params().get("objective")
    if current not in (None, "binary"):
        raise ValueError(
            "The LGBMClassifier must keep objective=None (or 'binary'): the "
            f"corrector sets its own objective, got objective={current!r}."
        )
    est.set_params(objective=objective)
    from lightgbm.basic import LightGBMError

    try:
        est.fit(X, y, sample_weight=sample_weight, init_score=np.full(X.shape[0], init))
    except LightGBMError as exc:
        if "num_features" not in str(exc):
            raise
        warnings.warn(
            "LightGBM found no usable feature (too few samples); fitting a "
            "constant model with the built-in objective instead.",
            UserWarning,
            stacklevel=3,
        )
        est = clone(estimator).fit(X, y, sample_weight=sample_weight)
        return est, 0.0
    return est, init


def torch_child(estimator, X, n_classes):
    """Clone a ``TorchMLPClassifier`` ready for ``_fit_net`` (validated params)."""
    est = clone(estimator)
    est._validate_params()
    validate_data(est, X, reset=True, dtype=[np.float64, np.float32])
    est.classes_ = np.arange(n_classes)
    return est


def raw_score(kind, estimator, X, init=0.0):
    """Binary raw score ``h(x)`` (logit of class 1) of a fitted child."""
    if kind == "lightgbm" and callable(estimator.get_params().get("objective")):
        return estimator.predict(X, raw_score=True) + init
    if kind == "torch":
        logits = estimator._forward(X)
        return logits[:, 1] - logits[:, 0]
    if hasattr(estimator, "decision_function") and kind != "lightgbm":
        scores = np.asarray(estimator.decision_function(X), dtype=np.float64)
        if scores.ndim == 1:
            return scores
    proba = np.asarray(estimator.predict_proba(X), dtype=np.float64)[:, 1]
    proba = np.clip(proba, 1e-15, 1 - 1e-15)
    return logit(proba)


def fit_stacked(estimator, X, labels, weights):
    """Fit a clone on ``len(labels)`` stacked copies of ``X`` with signed weights.

    ``labels`` and ``weights`` are lists (one entry per copy) of arrays of
    shape (n_samples,). Rows with weight exactly 0 are dropped.
    """
    y_all = np.concatenate(labels)
    w_all = np.concatenate(weights)
    X_all = sparse.vstack([X] * len(labels)) if sparse.issparse(X) else None
    if X_all is None:
        X_all = np.concatenate([X] * len(labels))
    keep = w_all != 0
    if not keep.all():
        X_all, y_all, w_all = X_all[keep], y_all[keep], w_all[keep]
    try:
        return clone(estimator).fit(X_all, y_all, sample_weight=w_all)
    except ValueError as exc:
        if "negative" in str(exc).lower():
            raise ValueError(
                f"{type(estimator).__name__} rejects negative sample weights, which "
                "the loss-correction stacking needs (rows with the other label "
                "get negative weights). Use an estimator that accepts them, such "
                "as LogisticRegression, or mode='objective' with LightGBM or "
                "TorchMLPClassifier."
            ) from exc
        raise


def proba_from_raw(raw):
    """``(n, 2)`` probabilities from a binary raw score."""
    p = expit(raw)
    return np.column_stack([1.0 - p, p])
