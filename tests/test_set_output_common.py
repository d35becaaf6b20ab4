"""Outputs follow scikit-learn's output settings.

``set_output`` and ``get_feature_names_out`` on every transformer:

Every public estimator with ``transform`` (found by ``all_estimators``, so a
new transformer is covered by being exported) returns, once
``set_output(transform="pandas")`` is set or under the global
``transform_output="pandas"``, a DataFrame whose columns are
``get_feature_names_out()`` and whose index is the input's, from ``transform``
and from ``fit_transform``, alone and as the last step of a pandas-output
pipeline. The instances and data are those of
``tests/test_common_contracts.py``.

``sparse_interface`` (scikit-learn >= 1.9) on every sparse output: the
sparse prediction sets of every estimator whose ``predict_set`` takes
``output="sparse"`` and ``GeodesicCATERegressor.ot_plan_`` are ``csr_matrix``
under ``"spmatrix"`` (the default) and ``csr_array`` under ``"sparray"``, with
the same entries.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import inspect

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from sklearn import config_context
from sklearn.base import clone
from sklearn.datasets import make_blobs
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from sklearn_iclr26.utils._sklearn_compat import (
    _enforce_estimator_tags_X,
    _enforce_estimator_tags_y,
    align_sparse_interface,
)
from sklearn_iclr26.utils._test_common import _registries
from sklearn_iclr26.utils.discovery import all_estimators

pd = pytest.importorskip("pandas")

TRANSFORMERS = [name for name, _ in all_estimators(type_filter="transformer")]


def _first_instance(name):
    """The first test instance of ``tests/test_common.py``."""
    cls = dict(all_estimators())[name]
    return clone(cls(**_registries()[0].get(name, [{}])[0]))


def _data(estimator, n_samples=60):
    """The data of ``tests/test_common_contracts.py``."""
    rng = np.random.RandomState(0)
    if type(estimator).__name__ == "InteractionSequenceEncoder":
        log = pd.DataFrame(
            {
                "user": rng.randint(0, 5, n_samples),
                "item": rng.randint(0, 8, n_samples),
                "timestamp": np.arange(n_samples) * 600,
            }
        )
        return log, rng.randint(0, 2, n_samples)
    X, y = make_blobs(
        n_samples=n_samples,
        centers=[[0, 0, 0], [1, 1, 1]],
        random_state=0,
        n_features=2,
        cluster_std=0.3,
    )
    X = _enforce_estimator_tags_X(estimator, X, kernel=rbf_kernel)
    return X, _enforce_estimator_tags_y(estimator, y)


def test_every_transformer_is_discovered():
    # the named transformers of issue 32 are among those checked below
    assert {
        "TreeSlicedEmbedding",
        "SparseAutoencoder",
        "InteractionSequenceEncoder",
        "RandomLabelProbe",
    } <= set(TRANSFORMERS)
    # and every estimator with a transform method is one of them
    with_transform = {
        name for name, cls in all_estimators() if hasattr(cls, "transform")
    }
    assert with_transform == set(TRANSFORMERS)


def _frame(X):
    """`X` as a DataFrame with string column names and a non-default index."""
    if isinstance(X, pd.DataFrame):
        frame = X.copy()
    else:
        frame = pd.DataFrame(X, columns=[f"col_{j}" for j in range(X.shape[1])])
    frame.index = np.arange(len(frame)) * 3 + 7
    return frame


def _check_frame(Xt, estimator, index):
    names = estimator.get_feature_names_out()
    assert isinstance(Xt, pd.DataFrame), type(Xt)
    assert list(Xt.columns) == list(names)
    assert len(set(names)) == len(names)
    assert all(isinstance(name, str) for name in names)
    pd.testing.assert_index_equal(Xt.index, index)


@pytest.mark.parametrize("name", TRANSFORMERS)
def test_set_output_pandas_names_are_get_feature_names_out(name):
    estimator = _first_instance(name)
    X, y = _data(estimator)
    X = _frame(X)

    default = clone(estimator).fit(X, y)
    dense = default.transform(X)
    assert not isinstance(dense, pd.DataFrame)

    fitted = clone(estimator).set_output(transform="pandas").fit(X, y)
    Xt = fitted.transform(X)
    _check_frame(Xt, fitted, X.index)
    # the same numbers as the default output (set_output only wraps)
    np.testing.assert_array_equal(Xt.to_numpy(), np.asarray(dense))

    refit = clone(estimator).set_output(transform="pandas")
    _check_frame(refit.fit_transform(X, y), refit, X.index)


@pytest.mark.parametrize("name", TRANSFORMERS)
def test_global_transform_output_pandas(name):
    estimator = _first_instance(name)
    X, y = _data(estimator)
    X = _frame(X)
    with config_context(transform_output="pandas"):
        fitted = estimator.fit(X, y)
        _check_frame(fitted.transform(X), fitted, X.index)


@pytest.mark.parametrize("name", TRANSFORMERS)
def test_pandas_output_pipeline(name):
    # a preceding step that keeps the frame: the transformer is fed a
    # DataFrame by the pipeline and hands its named columns on
    estimator = _first_instance(name)
    X, y = _data(estimator)
    X = _frame(X)
    pipe = make_pipeline(
        FunctionTransformer(feature_names_out="one-to-one"), estimator
    ).set_output(transform="pandas")
    Xt = pipe.fit(X, y).transform(X)
    _check_frame(Xt, pipe[-1], X.index)
    assert list(pipe.get_feature_names_out()) == list(Xt.columns)


# ------------------------------------------------------------ sparse_interface
SPARSE_SET_ESTIMATORS = [
    name
    for name, cls in all_estimators()
    if hasattr(cls, "predict_set")
    and "output" in inspect.signature(cls.predict_set).parameters
]
INTERFACES = {"spmatrix": sp.csr_matrix, "sparray": sp.csr_array}

needs_sparse_interface = pytest.mark.skipif(
    "sparse_interface" not in sklearn.get_config(),
    reason="scikit-learn < 1.9 has no sparse_interface setting",
)


def test_the_sparse_set_estimators_are_discovered():
    assert {"SplitConformalClassifier", "SOCOPClassifier"} <= set(SPARSE_SET_ESTIMATORS)


@needs_sparse_interface
@pytest.mark.parametrize("interface", INTERFACES)
@pytest.mark.parametrize("name", SPARSE_SET_ESTIMATORS)
def test_sparse_sets_follow_sparse_interface(name, interface):
    from sklearn_iclr26.metrics import coverage_score, mean_set_size

    estimator = _first_instance(name)
    X, y = make_blobs(n_samples=90, centers=3, random_state=0, cluster_std=2.0)
    estimator.fit(X, y)
    dense = estimator.predict_set(X)
    dense_levels = estimator.predict_set(X, confidence_level=[0.8, 0.9])
    with config_context(sparse_interface=interface):
        sets = estimator.predict_set(X, output="sparse")
        levels = estimator.predict_set(X, confidence_level=[0.8, 0.9], output="sparse")
    expected = INTERFACES[interface]
    assert type(sets) is expected and sets.dtype == bool
    np.testing.assert_array_equal(sets.toarray(), dense)
    assert [type(s) for s in levels] == [expected, expected]
    for i, level_sets in enumerate(levels):
        np.testing.assert_array_equal(level_sets.toarray(), dense_levels[..., i])
    # the set metrics take either container and agree with the dense sets
    classes = estimator.classes_
    assert coverage_score(y, sets, classes=classes) == coverage_score(
        y, dense, classes=classes
    )
    assert mean_set_size(sets) == mean_set_size(dense)


@pytest.mark.parametrize("name", SPARSE_SET_ESTIMATORS)
def test_sparse_sets_default_to_csr_matrix(name):
    # scikit-learn's default is "spmatrix": so is the package's
    X, y = make_blobs(n_samples=90, centers=3, random_state=0, cluster_std=2.0)
    sets = _first_instance(name).fit(X, y).predict_set(X, output="sparse")
    assert type(sets) is sp.csr_matrix


@needs_sparse_interface
@pytest.mark.parametrize("interface", INTERFACES)
def test_ot_plan_follows_sparse_interface(interface):
    from sklearn.linear_model import LinearRegression

    from sklearn_iclr26.causal import GeodesicCATERegressor

    rng = np.random.RandomState(0)
    X = rng.normal(size=(80, 2))
    t = (X[:, 0] + rng.normal(size=80) > 0).astype(int)
    y = X.sum(axis=1) + t + rng.normal(scale=0.1, size=80)
    reference = GeodesicCATERegressor(LinearRegression(), n_steps=1, random_state=0)
    reference.fit(X, y, treatment=t)
    with config_context(sparse_interface=interface):
        est = GeodesicCATERegressor(LinearRegression(), n_steps=1, random_state=0)
        est.fit(X, y, treatment=t)
    assert type(est.ot_plan_) is INTERFACES[interface]
    np.testing.assert_array_equal(est.ot_plan_.toarray(), reference.ot_plan_.toarray())
    np.testing.assert_array_equal(est.predict(X), reference.predict(X))


@needs_sparse_interface
@pytest.mark.parametrize("interface", INTERFACES)
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_align_sparse_interface(interface, fmt):
    matrix = sp.random(5, 4, density=0.4, format=fmt, random_state=0)
    array = getattr(sp, f"{fmt}_array")(matrix)
    with config_context(sparse_interface=interface):
        for X in (matrix, array):
            out = align_sparse_interface(X)
            assert out.format == fmt
            assert sp.isspmatrix(out) == (interface == "spmatrix")
            np.testing.assert_array_equal(out.toarray(), X.toarray())
        dense = np.ones((2, 2))
        assert align_sparse_interface(dense) is dense
