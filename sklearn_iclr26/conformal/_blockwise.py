"""Conformal calibration and prediction over dask collections, block by block.

With a model fitted elsewhere (a ``FrozenEstimator``, or ``calibrate``),
split-conformal calibration needs one number per calibration row: its
conformity score. Over a dask array or DataFrame the scores are computed on
the workers, block by block, and only they come back to the driver (8 bytes a
row; with ``conditional="class"`` also the row's class index); the rows never
do. The thresholds are then the in-memory ones, from the same scores. The
predict-like methods on a dask collection return lazy dask arrays, the
in-memory method applied to each block (sparse sets stay sparse per block).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.frozen import FrozenEstimator
from sklearn.utils import column_or_1d
from sklearn.utils.validation import check_is_fitted, check_random_state

from sklearn_iclr26.conformal._conformity_scores import conformal_quantile
from sklearn_iclr26.utils._blockwise import gather_rows, lazy_blocks
from sklearn_iclr26.utils._random import seed_from_random_state
from sklearn_iclr26.utils._sklearn_compat import (
    _check_feature_names,
    _check_n_features,
)
from sklearn_iclr26.utils._validation import calibration_size_ok, check_has_methods
from sklearn_iclr26.utils._verbose import log_progress

__all__ = [
    "calibrate_classifier_blocks",
    "calibrate_regressor_blocks",
    "predict_blocks",
]


def _empty_rows(X):
    """A zero-row in-memory stand-in of ``X`` (its columns, names, dtypes)."""
    if hasattr(X, "npartitions") and not hasattr(X, "chunks"):
        return X._meta
    if X.ndim != 2:
        raise ValueError(
            f"Expected a 2D dask array for X, got {X.ndim}D of shape {X.shape}."
        )
    return np.empty((0, X.shape[1]), dtype=X.dtype)


def _progress(estimator):
    def report(done, total):
        step = max(1, total // 10)
        if done == total or done % step == 0:
            log_progress(estimator, f"scored {done}/{total} blocks on the workers")

    return report


def _unsupported(estimator, what):
    raise ValueError(
        f"{type(estimator).__name__} calibrates a dask collection block by block "
        f"only without {what}; compute X (X.compute()) to use it in memory."
    )


def _check_no_shift(estimator, X_target):
    if X_target is not None or getattr(estimator, "shift", None) is not None:
        _unsupported(estimator, "shift or X_target (the weights need the rows)")


def calibrate_classifier_blocks(estimator, X, y, fit_params, bins, X_target=None):
    """``_fit_work`` of a conformal classifier over a dask collection."""
    name = type(estimator).__name__
    _check_no_shift(estimator, X_target)
    if getattr(estimator, "_cross", lambda: False)():
        _unsupported(estimator, "cross-conformal calibration (cv)")
    model = estimator._get_estimator()
    if not isinstance(model, FrozenEstimator):
        raise TypeError(
            f"{name}.fit on a dask collection calibrates a model fitted "
            "elsewhere and never gathers X: pass estimator=FrozenEstimator(model) "
            "or call calibrate(X, y). To train on a sample, fit the model on "
            "that sample first."
        )
    if fit_params:
        raise TypeError(
            f"{name}.fit got {sorted(fit_params)}, which nothing would use: the "
            "estimator is a FrozenEstimator, never refit."
        )
    if y is None:
        raise ValueError(f"{name} requires y to be passed, but the target y is None.")
    if bins is not None or estimator.conditional == "bins":
        _unsupported(estimator, 'conditional="bins"')
    if estimator.label_noise is not None:
        _unsupported(estimator, "label_noise")
    if estimator._needs_tuning():
        _unsupported(estimator, "a tuning split (e.g. SOCOP's lam='auto')")
    check_has_methods(model, ["predict_proba"])
    estimator._init_fit_state()
    empty = _empty_rows(X)
    _check_feature_names(estimator, empty, reset=True)
    _check_n_features(estimator, empty, reset=True)
    level = float(estimator.confidence_level)
    rng = check_random_state(estimator.random_state)
    estimator._seed = seed_from_random_state(rng)
    estimator.estimator_ = model
    estimator.classes_ = np.asarray(model.classes_)
    estimator.label_noise_matrix_ = None
    estimator.label_noise_thresholds_ = None
    by_class = estimator.conditional == "class"
    classes = estimator.classes_

    def block(X_block, y_block):
        y_block = column_or_1d(y_block)
        unseen = np.unique(y_block[~np.isin(y_block, classes)])
        if unseen.size:
            raise ValueError(
                f"The calibration data contains labels {unseen.tolist()} that the "
                f"estimator never saw in training (its classes are "
                f"{classes.tolist()})."
            )
        scores = estimator._true_label_scores(X_block, y_block)
        if not by_class:
            return scores
        return scores, estimator._label_index(y_block).astype(np.int32)

    outputs = gather_rows(block, X, y, progress=_progress(estimator))
    scores, groups = outputs if by_class else (outputs, None)
    del outputs
    estimator.n_calibration_samples_ = int(scores.shape[0])
    if not by_class:
        scores.sort()
        estimator.calibration_scores_ = scores
        if calibration_size_ok(estimator.n_calibration_samples_, level):
            estimator.threshold_ = conformal_quantile(scores, level)
        else:
            estimator.threshold_ = np.inf
    else:
        estimator.calibration_scores_ = np.sort(scores)
        n_groups = classes.shape[0]
        order = np.lexsort((scores, groups))
        counts = np.bincount(groups, minlength=n_groups)
        ends = np.cumsum(counts)
        ordered = scores[order]
        estimator.calibration_bin_scores_ = [
            ordered[end - count : end] for count, end in zip(counts, ends)
        ]
        estimator.n_calibration_per_bin_ = counts.astype(np.int64)
        estimator.threshold_ = estimator._group_thresholds(level)
    log_progress(
        estimator,
        f"calibrated on {estimator.n_calibration_samples_} samples (block-wise): "
        f"threshold_={np.array2string(np.asarray(estimator.threshold_), precision=6)}"
        f" at confidence_level={level}",
    )


def calibrate_regressor_blocks(estimator, X, y, fit_params, X_target=None):
    """``_fit_work`` of a conformal regressor over a dask collection."""
    name = type(estimator).__name__
    _check_no_shift(estimator, X_target)
    if fit_params:
        raise TypeError(
            f"{name}.fit got {sorted(fit_params)}: on a dask collection nothing "
            "is fitted (a frozen model is calibrated block by block)."
        )
    if getattr(estimator, "_cross_conformal", lambda: False)():
        _unsupported(estimator, "cross-conformal calibration (conformal_cv)")
    _, train = estimator._split(4, np.random.RandomState(0))
    if train.shape[0]:
        raise ValueError(
            f"{name}.fit on a dask collection calibrates a model fitted "
            "elsewhere and never gathers X: it needs frozen models with nothing "
            "left to learn (estimator=FrozenEstimator(model), or calibrate(X, y));"
            f" {name} here would train on part of the rows."
        )
    if y is None:
        raise ValueError(f"{name} requires y to be passed, but the target y is None.")
    empty = estimator._check_X(_empty_rows(X), reset=True)
    estimator._y_1d = y.ndim == 1
    estimator.n_outputs_ = 1 if y.ndim == 1 else int(y.shape[1])
    rng = check_random_state(estimator.random_state)
    estimator._split(1, rng)
    estimator._fit_model(
        empty, np.empty((0, estimator.n_outputs_)), random_state=rng, fit_params={}
    )

    def block(X_block, y_block):
        y_block = estimator._check_y(y_block, X_block.shape[0])
        return estimator._conformity_scores_batch(X_block, y_block)

    # one block at a time on the driver's side: only the scores come back
    scores = gather_rows(block, X, y, progress=_progress(estimator))
    estimator.calibration_scores_ = np.sort(scores, axis=0)
    estimator.n_calibration_samples_ = int(scores.shape[0])
    estimator.threshold_ = estimator._threshold(
        estimator.confidence_level, per_call=False
    )
    log_progress(
        estimator, f"threshold_ = {estimator.threshold_} (block-wise calibration)"
    )


def _levels_tail(confidence_level):
    if confidence_level is None or np.ndim(confidence_level) == 0:
        return ()
    return (len(np.ravel(np.asarray(confidence_level, dtype=object))),)


def predict_blocks(estimator, method, X, *others, **kwargs):
    """The lazy dask array of ``estimator.method`` over the blocks of ``X``.

    ``others`` are row-aligned arguments (``y`` of ``contains``); the
    method's own checks run on each block, so an error surfaces at compute.
    """
    check_is_fitted(estimator)
    name = type(estimator).__name__
    for key in ("bins",):
        if kwargs.get(key) is not None:
            raise ValueError(
                f"{name}.{method} on a dask collection does not take {key}; "
                "compute X to use it in memory."
            )
        kwargs.pop(key, None)
    if kwargs.get("smoothed"):
        raise ValueError(
            f"{name}.predict_p(smoothed=True) draws one uniform per row from one "
            "generator and has no block-wise form; use smoothed=False."
        )
    empty = _empty_rows(X)
    _check_feature_names(estimator, empty, reset=False)
    _check_n_features(estimator, empty, reset=False)
    levels = _levels_tail(kwargs.get("confidence_level"))
    bound = getattr(estimator, method)
    if hasattr(estimator, "classes_"):
        n_classes = len(estimator.classes_)
        if method == "predict_set":
            sparse = kwargs.get("output", "dense") == "sparse"
            if sparse and levels:
                return [
                    predict_blocks(
                        estimator, method, X, **{**kwargs, "confidence_level": level}
                    )
                    for level in kwargs["confidence_level"]
                ]
            return lazy_blocks(
                lambda Xb: bound(Xb, **kwargs),
                X,
                tail=(n_classes, *levels),
                dtype=bool,
                sparse=sparse,
            )
        if method == "predict":
            return lazy_blocks(
                lambda Xb: bound(Xb), X, tail=(), dtype=estimator.classes_.dtype
            )
        return lazy_blocks(lambda Xb: bound(Xb, **kwargs), X, tail=(n_classes,))
    d = estimator.n_outputs_
    one = () if estimator._y_1d else (d,)
    if method == "predict_interval":
        tail = (2, *levels)
    elif method == "contains":
        return lazy_blocks(
            lambda Xb, yb: bound(Xb, yb, **kwargs),
            X,
            *others,
            tail=levels,
            dtype=bool,
        )
    elif method == "predict":
        tail = one
    else:
        raise ValueError(f"{name}.{method} has no block-wise path.")
    return lazy_blocks(lambda Xb: bound(Xb, **kwargs), X, tail=tail)
