"""The package's column resolver (utils/_columns.py), used by every estimator
that takes groups of columns by name or position."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pytest

from sklearn_iclr26.utils._columns import check_disjoint, resolve_columns


class _Named:
    feature_names_in_ = np.array(["age", "income", "city"], dtype=object)


class _Unnamed:
    pass


def test_names_and_positions_resolve_in_order():
    assert resolve_columns(["city", "age"], _Named(), 3, "g") == [2, 0]
    assert resolve_columns([2, np.int64(0)], _Unnamed(), 3, "g") == [2, 0]
    assert resolve_columns("income", _Named(), 3, "g") == [1]
    assert resolve_columns(np.array([1, 2]), _Named(), 3, "g") == [1, 2]
    assert resolve_columns([], _Named(), 3, "g", allow_empty=True) == []


@pytest.mark.parametrize(
    "columns, estimator, match",
    [
        ([], _Named(), "'g' is empty"),
        (["age", "zip"], _Named(), r"unknown columns \['zip'\]"),
        (["age"], _Unnamed(), "no string column names"),
        ([0, 3], _Unnamed(), r"indices \[3\] outside \[0, 2\]: X has 3 feature"),
        ([-1], _Unnamed(), "outside"),
        (["age", 1], _Named(), "not a mix"),
        ([True], _Unnamed(), "not a mix or other types"),
        ([0.0], _Unnamed(), "not a mix or other types"),
        (["age", "age"], _Named(), "repeats a column"),
    ],
)
def test_bad_groups_raise_naming_the_group(columns, estimator, match):
    with pytest.raises(ValueError, match=match):
        resolve_columns(columns, estimator, 3, "g")


def test_check_disjoint():
    check_disjoint({"a": [0, 1], "b": [2], "c": []})
    with pytest.raises(ValueError, match=r"'a' and 'b' overlap \(column 1\)"):
        check_disjoint({"a": [0, 1], "b": [1, 2]})
