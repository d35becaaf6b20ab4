"""Batching by ``working_memory`` gives the results of one batch, for every method.

Every predict-like method of every estimator processes rows in batches sized
from ``sklearn.get_config()["working_memory"]``. With a tiny working memory
(many batches of a few rows) the results must equal those of the default
(one batch here): identical on per-row numpy/LightGBM paths, within
``rtol=1e-12`` on BLAS/torch paths; prediction sets and ``contains`` answers
identical except rows whose score lies within 1e-12 of the threshold.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import inspect
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.base import is_classifier, is_regressor
from sklearn.utils import get_tags

from sklearn_iclr26.utils._test_common import yield_test_instances

METHODS = [
    "predict",
    "predict_proba",
    "decision_function",
    "transform",
    "predict_set",
    "conformity_scores",
    "contains",
    "region_log_volume",
    "rank",
    "predict_allocation",
    "entity_scores",
    "predict_k",
    "mislabel_scores",
]
TINY = 1e-4  # MiB: a few rows per batch

ESTIMATORS = list(yield_test_instances())


def _data(estimator):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(150, 4))
    if is_classifier(estimator):
        y = (X[:, 0] + 0.5 * rng.normal(size=150) > 0).astype(int) + (X[:, 1] > 1)
    elif (
        get_tags(estimator).target_tags.multi_output
        and not get_tags(estimator).target_tags.single_output
    ):
        y = np.c_[X[:, 0] + rng.normal(size=150), X[:, 1] - rng.normal(size=150)]
    else:
        y = X[:, 0] + 0.3 * rng.normal(size=150)
    return X, y


def _call(method, X, y):
    params = list(inspect.signature(method).parameters)
    if len(params) >= 2 and params[1] in ("y", "Y"):
        return method(X, y)
    return method(X)


def _assert_same(a, b, name):
    if isinstance(a, tuple):
        for x, z in zip(a, b):
            _assert_same(x, z, name)
        return
    if sp.issparse(a):
        a, b = a.toarray(), b.toarray()
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "biuOU":
        mismatch = np.mean(a != b) if a.shape == b.shape else 1.0
        # rows at the threshold (within 1e-12) may flip; a handful at most
        assert mismatch <= 0.02, f"{name}: {mismatch:.3f} of the answers differ"
    else:
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_batched_methods_equal_one_batch(estimator):
    X, y = _data(estimator)
    X_fit, y_fit = X[:100], y[:100]
    X_test, y_test = X[100:], y[100:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            estimator.fit(X_fit, y_fit)
        except ValueError as exc:  # estimators needing another input
            pytest.skip(f"fit(X, y) is not enough: {exc}")
        checked = []
        for name in METHODS:
            method = getattr(estimator, name, None)
            if method is None or not callable(method):
                continue
            predictor = is_classifier(estimator) or is_regressor(estimator)
            if name == "transform" and predictor:
                continue
            with sklearn.config_context(working_memory=1024):
                full = _call(method, X_test, y_test)
            with sklearn.config_context(working_memory=TINY):
                small = _call(method, X_test, y_test)
            _assert_same(full, small, f"{type(estimator).__name__}.{name}")
            checked.append(name)
    if not checked:  # an estimator of a quantity (e.g. MultiPPIMeanEstimator)
        pytest.skip(f"{type(estimator).__name__} has no predict-like method")
