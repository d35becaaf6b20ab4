"""Engine-agnostic row blocks: calibration and prediction over dask collections.

The package's estimators compute everything row by row (scores, sets,
intervals), so a dataset that does not fit one process is handled block by
block: a function of one block of rows runs where the block lives (a dask
worker, a Spark executor, a Ray task) and only its output comes back.

* :func:`block_function` is the public seam: the per-block function of a
  fitted estimator's method, in the form Spark's ``mapInPandas`` and Ray's
  ``map_batches`` call (pandas in, pandas out).
* :func:`is_dask_collection`, :func:`gather_blocks` and :func:`lazy_blocks`
  are what the estimators use on dask collections: ``gather_blocks`` runs a
  function on every block on the workers and brings back its (small) output,
  in block order; ``lazy_blocks`` builds the lazy dask array of a per-block
  function. dask is imported only when a dask collection is passed.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import sys

import numpy as np
import scipy.sparse as sp

__all__ = [
    "block_function",
    "check_no_dask",
    "gather_blocks",
    "gather_rows",
    "is_dask_collection",
    "lazy_blocks",
    "lazy_method",
]


def is_dask_collection(X):
    """Whether ``X`` is a dask collection (array, DataFrame, Series).

    dask is not imported: a collection can only exist once dask is.
    """
    if "dask" not in sys.modules:
        return False
    import dask

    return dask.is_dask_collection(X)


def check_no_dask(owner, where, **arguments):
    """Raise where a dask collection reaches an argument without a block path."""
    for name, value in arguments.items():
        if is_dask_collection(value):
            raise TypeError(
                f"{type(owner).__name__}.{where} got a dask collection as {name}, "
                "which has no block-wise path: pass it in memory (e.g. "
                f"{name}.compute()), or leave it out."
            )


def _is_dataframe_like(X):
    return hasattr(X, "npartitions") and not hasattr(X, "chunks")


def _row_blocks(X):
    """Delayed row blocks of a dask collection, and their lengths (or None)."""
    if _is_dataframe_like(X):
        return list(X.to_delayed()), None
    if X.ndim == 2 and len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    blocks = X.to_delayed()
    blocks = list(blocks.reshape(blocks.shape[0], -1)[:, 0])
    return blocks, tuple(X.chunks[0])


def _aligned_blocks(X, others):
    """Row blocks of ``X`` and of every other argument, aligned with them.

    An argument other than ``X`` is a dask collection with the same row
    partition (a dask array with unknown or different chunks is rechunked
    to ``X``'s when those are known), an in-memory array sliced by ``X``'s
    known chunks, or ``None``.
    """
    x_blocks, lengths = _row_blocks(X)
    n_blocks = len(x_blocks)
    columns = [x_blocks]
    for other in others:
        if other is None:
            columns.append([None] * n_blocks)
            continue
        if is_dask_collection(other):
            if lengths is not None and hasattr(other, "chunks"):
                if any(np.isnan(c) for c in other.chunks[0]):
                    other = other.compute_chunk_sizes()
                other = other.rechunk({0: lengths})
            blocks, _ = _row_blocks(other)
        else:
            if lengths is None:
                raise ValueError(
                    "X is a dask DataFrame: pass the other row-aligned arguments "
                    "as dask collections of the same partitions (e.g. a column "
                    "of the same DataFrame), not in memory."
                )
            ends = np.cumsum(lengths)
            blocks = [other[end - n : end] for n, end in zip(lengths, ends)]
        if len(blocks) != n_blocks:
            raise ValueError(
                f"X has {n_blocks} row blocks and a row-aligned argument has "
                f"{len(blocks)}: give them the same partitions (e.g. columns of "
                "one DataFrame, or arrays with the same row chunks)."
            )
        columns.append(blocks)
    return list(zip(*columns))


def _checked(func):
    def run(X, *others):
        n = X.shape[0]
        for other in others:
            if other is not None and np.shape(other)[0] != n:
                raise ValueError(
                    f"A block of X has {n} rows and the row-aligned block beside "
                    f"it has {np.shape(other)[0]}: the collections are not "
                    "partitioned alike."
                )
        return func(X, *others)

    return run


def _client():
    try:
        from distributed import get_client

        return get_client()
    except (ImportError, ValueError):
        return None


def gather_blocks(func, X, *others, progress=None, consume=None):
    """``func`` on every row block, run on the workers; the outputs in order.

    Parameters
    ----------
    func : callable
        ``func(X_block, *other_blocks)``; its output comes back to the caller,
        so it should be small (one score per row, not the rows).
    X : dask array or dask DataFrame
        The rows.
    *others : dask collection, ndarray or None
        Row-aligned arguments (labels), block by block beside ``X``.
    progress : callable, default=None
        ``progress(n_done, n_blocks)`` after each block arrives (in the order
        they complete, on a ``distributed`` client; at the end otherwise).
    consume : callable, default=None
        ``consume(block_index, output)`` for each block's output as it
        arrives, which is then not kept (the driver holds one block's
        output at a time beside what ``consume`` keeps).

    Returns
    -------
    outputs : list
        ``func``'s output for each block, in row order (``None`` entries
        with ``consume``).
    """
    from dask import delayed

    run = _checked(func)
    tasks = [delayed(run)(*parts) for parts in _aligned_blocks(X, others)]
    client = _client()
    if client is None:
        import dask

        outputs = list(dask.compute(*tasks))
        if consume is not None:
            for i in range(len(outputs)):
                consume(i, outputs[i])
                outputs[i] = None
        if progress is not None:
            progress(len(outputs), len(outputs))
        return outputs
    from distributed import as_completed

    futures = client.compute(tasks)
    position = {future.key: i for i, future in enumerate(futures)}
    outputs = [None] * len(futures)
    for done, future in enumerate(as_completed(futures), start=1):
        i = position[future.key]
        if consume is None:
            outputs[i] = future.result()
        else:
            consume(i, future.result())
        future.release()
        if progress is not None:
            progress(done, len(futures))
    return outputs


def gather_rows(func, X, *others, progress=None):
    """:func:`gather_blocks` of a per-row output, concatenated along rows.

    ``func`` returns an array with one entry per row of its block, or a
    tuple of such arrays. Where ``X``'s row chunks are known (a dask array),
    the result is allocated once and each block's output copied in as it
    arrives, so the driver holds the result and one block's output at a
    time; otherwise (a DataFrame) the outputs are concatenated at the end.

    Returns
    -------
    result : ndarray or tuple of ndarray
        One entry per row of ``X``, in row order.
    """
    _, lengths = _row_blocks(X)
    if lengths is None:
        outputs = gather_blocks(func, X, *others, progress=progress)
        if outputs and isinstance(outputs[0], tuple):
            return tuple(np.concatenate(parts) for parts in zip(*outputs))
        return np.concatenate(outputs)
    starts = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
    state = {}

    def consume(i, output):
        state["tuple"] = isinstance(output, tuple)
        parts = output if state["tuple"] else (output,)
        if "out" not in state:
            state["out"] = [
                np.empty((starts[-1], *np.shape(part)[1:]), np.asarray(part).dtype)
                for part in parts
            ]
        for dest, part in zip(state["out"], parts):
            dest[starts[i] : starts[i + 1]] = part

    gather_blocks(func, X, *others, progress=progress, consume=consume)
    if "out" not in state:
        raise ValueError("X has no row blocks: nothing to calibrate on.")
    return tuple(state["out"]) if state["tuple"] else state["out"][0]


def lazy_blocks(func, X, *others, tail=(), dtype=np.float64, sparse=False):
    """The lazy dask array of ``func`` applied to every row block.

    Parameters
    ----------
    func : callable
        ``func(X_block, *other_blocks)``, returning an array of shape
        ``(n_block_rows, *tail)`` (a ``scipy.sparse`` matrix with
        ``sparse=True``).
    X : dask array or dask DataFrame
        The rows.
    *others : dask collection, ndarray or None
        Row-aligned arguments.
    tail : tuple of int, default=()
        The output's shape after the row axis.
    dtype : dtype, default=np.float64
        The output's dtype.
    sparse : bool, default=False
        Whether the blocks are ``scipy.sparse`` matrices (they stay sparse,
        block by block; ``compute`` stacks them).

    Returns
    -------
    result : dask array of shape (n_samples, *tail)
        Nothing is computed; the row chunks are ``X``'s (unknown for a
        DataFrame).
    """
    import dask.array as da
    from dask import delayed

    run = _checked(func)
    parts = _aligned_blocks(X, others)
    _, lengths = _row_blocks(X)
    if sparse:
        meta = sp.csr_matrix((0, *tail), dtype=dtype)
    else:
        meta = np.empty((0, *tail), dtype=dtype)
    arrays = [
        da.from_delayed(
            delayed(run)(*blocks),
            shape=(np.nan if lengths is None else lengths[i], *tail),
            dtype=dtype,
            meta=meta,
        )
        for i, blocks in enumerate(parts)
    ]
    return da.concatenate(arrays, axis=0)


def lazy_method(estimator, method, X, *, tail=(), dtype=np.float64, **kwargs):
    """The lazy dask array of ``estimator.method(X_block, **kwargs)`` by blocks.

    The method's in-memory form runs on each block (its checks too, at
    compute); a keyword argument that is itself a dask collection has no
    block alignment here and raises.
    """
    check_no_dask(estimator, method, **kwargs)
    bound = getattr(estimator, method)
    return lazy_blocks(lambda Xb: bound(Xb, **kwargs), X, tail=tail, dtype=dtype)


def block_function(estimator, method, *, columns=None, iterator=False, **kwargs):
    """The per-block function of a fitted estimator's method, for any engine.

    Spark's ``DataFrame.mapInPandas``, Ray's ``Dataset.map_batches`` (with
    ``batch_format="pandas"``) and dask's ``map_partitions`` all call a
    function on one block of rows at a time. This returns that function for
    ``getattr(estimator, method)``: it takes one block (a pandas DataFrame,
    handed to the estimator untouched, or an array) and returns a pandas
    DataFrame of the method's output with the block's index, one column per
    output column. The estimator travels with the function (Spark broadcasts
    it, Ray and dask pickle it once per task); nothing else is shared, so
    the blocks can run anywhere, in any order.

    Parameters
    ----------
    estimator : fitted estimator
        The model, e.g. a calibrated conformal classifier.
    method : str
        The method to run on each block: ``"predict"``, ``"predict_proba"``,
        ``"predict_set"``, ``"predict_p"``, ``"predict_interval"``,
        ``"conformity_scores"``... (one array per call).
    columns : list of str, default=None
        Output column names. ``None``: ``method`` for a one-column output,
        ``f"{method}_{j}"`` for column ``j`` otherwise (a trailing level
        axis is flattened, level fastest).
    iterator : bool, default=False
        Return a function of an iterator of blocks that yields one output
        per block, the form ``mapInPandas`` calls.
    **kwargs : dict
        Keyword arguments of the method (``confidence_level=...``).

    Returns
    -------
    function : callable
        ``function(block) -> pandas.DataFrame`` (or, with ``iterator=True``,
        ``function(blocks) -> iterator of pandas.DataFrame``).

    See Also
    --------
    sklearn_iclr26.conformal.SplitConformalClassifier.predict_set : On a dask
        collection, returns the lazy dask array of the same per-block sets.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_iclr26.conformal import SplitConformalClassifier
    >>> from sklearn_iclr26.utils import block_function
    >>> X, y = load_iris(return_X_y=True, as_frame=True)
    >>> clf = SplitConformalClassifier(
    ...     LogisticRegression(max_iter=1000), random_state=0).fit(X, y)
    >>> sets = block_function(clf, "predict_set", columns=["s0", "s1", "s2"])
    >>> sets(X.iloc[:2]).columns.tolist()
    ['s0', 's1', 's2']
    >>> # Spark: df.mapInPandas(block_function(clf, "predict_set",
    >>> #     iterator=True), schema="s0 boolean, s1 boolean, s2 boolean")
    >>> # Ray:   ds.map_batches(sets, batch_format="pandas")
    """
    bound = getattr(estimator, method, None)
    if not callable(bound):
        raise TypeError(
            f"{type(estimator).__name__} has no method {method!r} to run by blocks."
        )

    def one(block):
        import pandas as pd

        out = bound(block, **kwargs)
        if sp.issparse(out):
            out = out.toarray()
        out = np.asarray(out)
        out = out.reshape(out.shape[0], -1)
        names = columns
        if names is None:
            names = (
                [method]
                if out.shape[1] == 1
                else [f"{method}_{j}" for j in range(out.shape[1])]
            )
        if len(names) != out.shape[1]:
            raise ValueError(
                f"{method} gives {out.shape[1]} columns per row; columns has "
                f"{len(names)} names."
            )
        index = block.index if isinstance(block, pd.DataFrame) else None
        return pd.DataFrame(
            {name: out[:, j] for j, name in enumerate(names)}, index=index
        )

    if not iterator:
        return one

    def each(blocks):
        for block in blocks:
            yield one(block)

    return each
