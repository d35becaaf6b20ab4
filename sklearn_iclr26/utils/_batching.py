"""Bounded-memory row batches sized by scikit-learn's ``working_memory``.

Every predict-like method of the package processes its rows through
:func:`batched`: the batch size is the number of rows whose working set fits in
``sklearn.get_config()["working_memory"]`` MiB (as in
``sklearn.metrics.pairwise_distances_chunked``), so peak memory is the output
plus a bounded working set, at any number of rows.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import scipy.sparse as sp
from sklearn.utils import gen_batches

from sklearn_iclr26.utils._sklearn_compat import (
    _num_samples,
    _safe_indexing,
    get_chunk_n_rows,
)

__all__ = ["batch_slices", "batched"]


def batch_slices(n_samples, row_bytes, *, working_memory=None, max_n_rows=None):
    """Slices of ``range(n_samples)`` whose working sets fit in memory.

    Parameters
    ----------
    n_samples : int
        Number of rows.
    row_bytes : int
        Bytes of working memory one row needs (e.g. ``8 * n_classes * 3`` for
        three float64 copies of a probability row).
    working_memory : float, default=None
        MiB per batch; ``None`` reads ``sklearn.get_config()["working_memory"]``.
    max_n_rows : int, default=None
        Upper bound on the batch size.

    Returns
    -------
    slices : generator of slice
    """
    n_rows = get_chunk_n_rows(
        row_bytes=max(int(row_bytes), 1),
        max_n_rows=max_n_rows,
        working_memory=working_memory,
    )
    return gen_batches(n_samples, max(int(n_rows), 1))


def _concat(parts):
    first = parts[0]
    if isinstance(first, tuple):
        return tuple(_concat([p[i] for p in parts]) for i in range(len(first)))
    if sp.issparse(first):
        return sp.vstack(parts, format=first.format)
    return np.concatenate([np.asarray(p) for p in parts], axis=0)


def batched(func, X, *args, row_bytes, working_memory=None, combine=True):
    """Apply ``func(X_batch, *args_batch)`` to row batches and join the results.

    ``X`` and the array ``args`` (e.g. ``y``) are indexed with scikit-learn's
    safe indexing, so DataFrames, sparse matrices and lists pass through
    untouched (a preprocessing pipeline inside a meta-estimator sees the raw
    rows); ``None`` args are passed as ``None``.

    Parameters
    ----------
    func : callable
        Row-wise function returning an array (or sparse matrix, or a tuple of
        those) with one leading row per input row.
    X : array-like, sparse matrix or DataFrame
        Input rows.
    *args : array-like or None
        Further row-aligned inputs.
    row_bytes : int
        Working bytes per row, for the batch size.
    working_memory : float, default=None
        MiB per batch; ``None`` reads the scikit-learn configuration.
    combine : bool, default=True
        Concatenate the batch results (dense arrays along axis 0, sparse
        matrices with ``scipy.sparse.vstack``, tuples elementwise); ``False``
        returns a generator of the batch results.
    """
    n_samples = _num_samples(X)
    slices = batch_slices(n_samples, row_bytes, working_memory=working_memory)

    def run():
        for batch in slices:
            if batch.start == 0 and batch.stop >= n_samples:
                yield func(X, *args)
                return
            rows = np.arange(batch.start, batch.stop)
            yield func(
                _safe_indexing(X, rows),
                *(a if a is None else _safe_indexing(a, rows) for a in args),
            )

    if not combine:
        return run()
    if n_samples == 0:
        return func(X, *args)
    return _concat(list(run()))
