"""``block_function``: the per-block function other engines call (pandas only).

Spark's ``mapInPandas`` calls it on an iterator of pandas DataFrames, Ray's
``map_batches`` on one DataFrame at a time; both are imitated here on the
blocks of one DataFrame, and the stacked outputs equal the in-memory method.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import doctest

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris
from sklearn.linear_model import LinearRegression, LogisticRegression

from sklearn_iclr26.conformal import BonferroniBoxRegressor, SplitConformalClassifier
from sklearn_iclr26.utils import _blockwise, block_function


@pytest.fixture(scope="module")
def data():
    X, y = load_iris(return_X_y=True, as_frame=True)
    X.index = X.index + 1000  # an index that is not positions
    clf = SplitConformalClassifier(
        LogisticRegression(max_iter=1000), random_state=0
    ).fit(X, y)
    return X, y, clf


def _blocks(frame, size=40):
    return [frame.iloc[i : i + size] for i in range(0, len(frame), size)]


def test_map_in_pandas_form_equals_in_memory(data):
    X, _, clf = data
    names = [f"in_{c}" for c in clf.classes_]
    function = block_function(clf, "predict_set", columns=names, iterator=True)
    out = pd.concat(list(function(iter(_blocks(X)))))
    assert list(out.columns) == names
    pd.testing.assert_index_equal(out.index, X.index)
    np.testing.assert_array_equal(out.to_numpy(), clf.predict_set(X))


def test_map_batches_form_equals_in_memory(data):
    X, _, clf = data
    function = block_function(clf, "predict_p")
    out = pd.concat([function(block) for block in _blocks(X, 64)])
    assert list(out.columns) == [f"predict_p_{j}" for j in range(3)]
    np.testing.assert_array_equal(out.to_numpy(), clf.predict_p(X))
    labels = block_function(clf, "predict")(X.iloc[:5])
    assert list(labels.columns) == ["predict"]
    # a sequence of levels: the level axis flattened, level fastest
    levels = block_function(clf, "predict_set", confidence_level=[0.5, 0.9])(X)
    np.testing.assert_array_equal(
        levels.to_numpy(),
        clf.predict_set(X, confidence_level=[0.5, 0.9]).reshape(len(X), -1),
    )


def test_intervals_of_a_regressor_and_errors(data):
    X, _, _ = data
    target = X.iloc[:, 0].to_numpy()
    reg = BonferroniBoxRegressor(LinearRegression(), random_state=0).fit(
        X.iloc[:, 1:], target
    )
    function = block_function(reg, "predict_interval", columns=["lower", "upper"])
    out = pd.concat([function(block) for block in _blocks(X.iloc[:, 1:])])
    np.testing.assert_array_equal(out.to_numpy(), reg.predict_interval(X.iloc[:, 1:]))
    with pytest.raises(ValueError, match="3 names"):
        block_function(reg, "predict_interval", columns=["a", "b", "c"])(X.iloc[:, 1:])
    with pytest.raises(TypeError, match="no method"):
        block_function(reg, "transform")


def test_docstring_example_runs():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in finder.find(_blockwise.block_function, "block_function"):
        runner.run(test)
    assert runner.failures == 0
    assert runner.tries > 0


def test_docstring_is_valid_numpydoc():
    validate = pytest.importorskip("numpydoc.validate")
    result = validate.validate("sklearn_iclr26.utils._blockwise.block_function")
    # the codes tests/test_numpydoc_validation.py drops for every function
    errors = [
        (code, message)
        for code, message in result["errors"]
        if code not in ("RT02", "GL01", "GL02")
    ]
    assert not errors, errors
