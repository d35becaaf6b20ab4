"""Uniform draws keyed by a seed and a row's content (randomized scores).

A randomized conformity score needs one uniform per row. Drawing them from a
stream seeded once per call gives row ``i`` of every call the same draw, so
that a caller predicting one row at a time reuses one uniform for every row
(and sets depend on how the rows were batched). Here row ``i``'s uniform is a
counter-based hash (splitmix64) of the seed and the row's content, as the
seeding contract of ``DiffusionInterestFusionClassifier`` (``row_noise``):
it does not depend on the other rows, their order, the batch or earlier
calls; identical rows get identical draws. The scores ``s(x, y, u(x))`` are
then one fixed function of ``(x, y)`` for calibration and test rows alike,
which keeps them exchangeable.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import hashlib

import numpy as np
import scipy.sparse as sp

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _splitmix64(z):
    """The splitmix64 finaliser, elementwise on a uint64 array (wraps mod 2^64)."""
    with np.errstate(over="ignore"):
        z = z + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _float_bits(values):
    """uint64 bits of float64 values, ``-0.0`` and every NaN made canonical."""
    values = np.asarray(values, dtype=np.float64) + 0.0
    values = np.where(np.isnan(values), np.nan, values)
    return np.ascontiguousarray(values).view(np.uint64)


def _dense_keys(X):
    bits = _float_bits(X).reshape(X.shape[0], -1)
    key = np.full(bits.shape[0], _GOLDEN, dtype=np.uint64)
    for j in range(bits.shape[1]):
        key = _splitmix64(key ^ bits[:, j])
    return key


def _sparse_keys(X):
    X = X.tocsr()
    n = X.shape[0]
    rows = np.repeat(np.arange(n), np.diff(X.indptr))
    keep = X.data != 0  # explicit zeros are zeros
    cols = X.indices[keep].astype(np.uint64)
    terms = _splitmix64(_splitmix64(cols) ^ _float_bits(X.data[keep]))
    key = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        np.add.at(key, rows[keep], terms)  # order-free, wraps mod 2^64
    return _splitmix64(key)


def _object_keys(rows):
    out = np.empty(len(rows), dtype=np.uint64)
    for i, row in enumerate(rows):
        digest = hashlib.blake2b(repr(list(row)).encode(), digest_size=8).digest()
        out[i] = np.frombuffer(digest, dtype=np.uint64)[0]
    return out


def row_keys(X):
    """One uint64 per row of ``X``, a function of that row's content only.

    ``X`` may be an ndarray, a list, a scipy sparse matrix or a DataFrame
    (a numeric one keyed as its ndarray; others hashed by
    ``pandas.util.hash_pandas_object``, so string and categorical columns
    work).
    """
    if sp.issparse(X):
        return _sparse_keys(X)
    if hasattr(X, "iloc") and hasattr(X, "columns"):
        kinds = {
            np.dtype(dtype).kind if isinstance(dtype, np.dtype) else "O"
            for dtype in X.dtypes
        }
        if kinds <= set("biuf"):  # numeric: the same draws as its ndarray
            return _dense_keys(X.to_numpy(dtype=np.float64))
        import pandas as pd

        return pd.util.hash_pandas_object(X, index=False).to_numpy(np.uint64)
    X = np.asarray(X)
    if X.ndim == 1:
        X = X[:, None]
    if X.dtype.kind in "biuf":
        return _dense_keys(X)
    return _object_keys(X)


def row_uniforms(X, seed):
    """Uniforms in ``(0, 1)``, shape ``(n_samples, 1)``, keyed by ``seed`` and row."""
    key = row_keys(X) ^ _splitmix64(np.uint64(int(seed) % 2**64))
    u = _splitmix64(key)
    return (((u >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53)[:, None]
