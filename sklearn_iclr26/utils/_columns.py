"""Resolve groups of columns given as column names or column indices.

The one resolver of the package: estimators that take groups of columns
(the causal feature groups, the Bayesian-augmentation one-hot blocks, the
interest-fusion layout) call :func:`resolve_columns` per group and
:func:`check_disjoint` over the groups, so a name is looked up, an index is
range-checked and a bad group is reported the same way everywhere.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np


def resolve_columns(columns, estimator, n_features, what, *, allow_empty=False):
    """Column indices of one group, from names or indices.

    Names (strings) need ``estimator.feature_names_in_`` (``X`` was a DataFrame
    with string column names at ``fit``); indices are non-negative integers
    below ``n_features``. A single name or index is a group of one. Unknown
    names, out-of-range indices, repeats, a mix of names and indices and (unless
    ``allow_empty``) an empty group raise a ``ValueError`` naming the group
    ``what``.

    Examples
    --------
    >>> from sklearn_iclr26.utils._columns import resolve_columns
    >>> class Fitted:
    ...     feature_names_in_ = ["age", "income", "city"]
    >>> resolve_columns(["city", "age"], Fitted(), 3, "demographics")
    [2, 0]
    >>> resolve_columns(1, Fitted(), 3, "money")
    [1]
    """
    if isinstance(columns, (str, Integral)):
        columns = [columns]
    columns = list(columns)
    if not columns:
        if allow_empty:
            return []
        raise ValueError(f"The feature group {what!r} is empty.")
    names = getattr(estimator, "feature_names_in_", None)
    if all(isinstance(c, str) for c in columns):
        if names is None:
            raise ValueError(
                f"The feature group {what!r} is given by column names "
                f"{columns!r}, but X has no string column names: pass a "
                "DataFrame or give column indices."
            )
        lookup = {name: i for i, name in enumerate(names)}
        unknown = [c for c in columns if c not in lookup]
        if unknown:
            raise ValueError(
                f"The feature group {what!r} names unknown columns {unknown!r}; "
                f"X has columns {list(names)!r}."
            )
        index = [lookup[c] for c in columns]
    elif all(
        isinstance(c, (Integral, np.integer)) and not isinstance(c, bool)
        for c in columns
    ):
        index = [int(c) for c in columns]
        bad = [c for c in index if not 0 <= c < n_features]
        if bad:
            raise ValueError(
                f"The feature group {what!r} has column indices {bad!r} outside "
                f"[0, {n_features - 1}]: X has {n_features} feature(s)."
            )
    else:
        raise ValueError(
            f"The feature group {what!r} must list column names (str) or column "
            f"indices (int), not a mix or other types; got {columns!r}."
        )
    if len(set(index)) != len(index):
        raise ValueError(f"The feature group {what!r} repeats a column: {columns!r}.")
    return index


def check_disjoint(groups):
    """Raise a ``ValueError`` when two resolved groups share a column.

    ``groups`` maps group names to lists of column indices.
    """
    seen = {}
    for name, index in groups.items():
        for column in index:
            if column in seen:
                raise ValueError(
                    f"The feature groups {seen[column]!r} and {name!r} overlap "
                    f"(column {column}); each column may belong to one group."
                )
            seen[column] = name
