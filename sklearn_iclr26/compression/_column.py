"""Compress a categorical column with a fitted classifier's ``predict_proba``."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils.validation import check_is_fitted

from sklearn_iclr26.compression._api import compress, decompress
from sklearn_iclr26.utils._batching import batched
from sklearn_iclr26.utils._sklearn_compat import (
    HasMethods,
    _num_samples,
    validate_params,
)

__all__ = ["column_probabilities", "compress_column", "decompress_column"]


def column_probabilities(estimator, X, dtype=np.float64):
    """``estimator.predict_proba(X)`` in working_memory batches, as float64.

    ``dtype`` casts each batch before renormalising rows (float32 gives the
    mismatched model of a float32 deployment).
    """
    check_is_fitted(estimator)
    n_classes = len(estimator.classes_)

    def predict(X_batch):
        P = np.asarray(estimator.predict_proba(X_batch)).astype(dtype)
        P = P.astype(np.float64)
        return P / P.sum(axis=1, keepdims=True)

    return batched(predict, X, row_bytes=8 * n_classes * 4)


def _encode_labels(estimator, y):
    classes = np.asarray(estimator.classes_)
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}.")
    idx = np.searchsorted(classes, y)
    idx = np.clip(idx, 0, len(classes) - 1)
    bad = classes[idx] != y
    if np.any(bad):
        raise ValueError(
            f"y has labels the estimator does not know (e.g. {y[bad][0]!r}); its "
            f"classes_ are {classes.tolist()}."
        )
    return idx


@validate_params(
    {
        "estimator": [HasMethods(["predict_proba"])],
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
    },
    prefer_skip_nested_validation=False,
)
def compress_column(estimator, X, y, **params):
    """Compress the labels ``y`` given ``X`` with a fitted classifier.

    Each label is coded with ``estimator.predict_proba`` of its row (computed
    in working_memory batches; rows are independent, the model is not
    autoregressive). Decode with :func:`decompress_column` on the same ``X``
    and the same fitted model, possibly on another machine whose floats
    differ slightly (PMATIC with a large enough ``delta``).

    Parameters
    ----------
    estimator : fitted classifier with ``predict_proba`` and ``classes_``
        The probability model.
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Passed untouched to ``predict_proba``.
    y : array-like of shape (n_samples,)
        Labels, each among ``estimator.classes_``.
    **params
        Passed to :func:`compress` (``method``, ``delta``, ``chunk_size``, ...).

    Returns
    -------
    payload : bytes
        The encoded column.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_iclr26.compression import compress_column, decompress_column
    >>> X, y = load_iris(return_X_y=True)
    >>> model = LogisticRegression(max_iter=1000).fit(X, y)
    >>> payload = compress_column(model, X, y, delta=1e-3)
    >>> len(payload) < 40 + len(y) * 2 / 8  # far below 2 bits per label
    True
    >>> (decompress_column(model, X, payload) == y).all()
    True
    """
    idx = _encode_labels(estimator, y)
    if _num_samples(X) != len(idx):
        raise ValueError(f"X has {_num_samples(X)} rows but y has {len(idx)}.")
    return compress(idx, column_probabilities(estimator, X), **params)


@validate_params(
    {
        "estimator": [HasMethods(["predict_proba"])],
        "X": ["array-like", "sparse matrix"],
        "payload": [bytes, bytearray],
    },
    prefer_skip_nested_validation=False,
)
def decompress_column(estimator, X, payload, **params):
    """Decode labels compressed by :func:`compress_column`.

    Parameters
    ----------
    estimator : fitted classifier with ``predict_proba`` and ``classes_``
        The decoder's copy of the model (its floats may differ from the
        encoder's within the payload's tolerance).
    X : array-like or sparse matrix of shape (n_samples, n_features)
        The same rows as at compression.
    payload : bytes
        From :func:`compress_column`.
    **params
        Passed to :func:`decompress` (``backend``, ``return_chunk_status``).

    Returns
    -------
    y : ndarray of shape (n_samples,)
        Labels from ``estimator.classes_`` (with ``return_chunk_status=True``,
        ``(y, chunk_ok)``).

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from sklearn_iclr26.compression import compress_column, decompress_column
    >>> X, y = load_wine(return_X_y=True)
    >>> model = RandomForestClassifier(random_state=0).fit(X, y)
    >>> payload = compress_column(model, X, y, delta=1e-2)
    >>> (decompress_column(model, X, payload) == y).all()
    True
    """
    result = decompress(payload, column_probabilities(estimator, X), **params)
    classes = np.asarray(estimator.classes_)
    if isinstance(result, tuple):
        return classes[result[0]], result[1]
    return classes[result]
