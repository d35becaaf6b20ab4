"""Huge but finite inputs give a clear error or sane outputs, never NaN.

``X[:, 0] *= 1e300`` is finite, so scikit-learn's input validation accepts
it, but it makes a network's training diverge. For every estimator instance
of the common checks, ``fit`` on such data either raises a ``ValueError``
(scikit-learn's ``MLPRegressor`` raises "Solver produced non-finite parameter
weights. The input data may contain large values and need to be
preprocessed.") or returns a model whose outputs on the same rows are finite
and, for a regressor, inside ``[min(y) - F * s, max(y) + F * s]`` with
``s = max(max(y) - min(y), max|y|)`` and ``F = 1e3`` (the torch engine's
``DIVERGENCE_FACTOR``): values a thousand times the target's scale away on
the training rows are the 1e299 of a diverged net, not a fit. A predict-like
method may also raise the clear ``ValueError`` itself.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.utils import get_tags

from sklearn_iclr26.utils._test_common import yield_test_instances
from sklearn_iclr26.utils._torch import DIVERGENCE_FACTOR

FACTOR = 1e3
METHODS = ("predict", "predict_proba", "decision_function", "transform")
ESTIMATORS = list(yield_test_instances())


def _id(estimator):
    return type(estimator).__name__


def _data(estimator):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(80, 3))
    if is_classifier(estimator):
        y = (X[:, 1] + 0.3 * rng.normal(size=80) > 0).astype(int)
    elif (
        get_tags(estimator).target_tags.multi_output
        and not get_tags(estimator).target_tags.single_output
    ):
        y = np.c_[X[:, 1] + rng.normal(size=80), X[:, 2] - rng.normal(size=80)]
    else:
        y = X[:, 1] + 0.3 * rng.normal(size=80)
    return X, y


def _call(method, X, y):
    params = list(inspect.signature(method).parameters)
    return method(X, y) if params[1:2] == ["y"] else method(X)


def test_the_stated_factor_is_the_engines():
    assert DIVERGENCE_FACTOR == FACTOR


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=_id)
def test_huge_finite_inputs_give_a_clear_error_or_finite_outputs(estimator):
    X, y = _data(estimator)
    X_huge = X.copy()
    X_huge[:, 0] *= 1e300
    assert np.isfinite(X_huge).all()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            clone(estimator).fit(X, y)
        except ValueError as exc:  # estimators needing another input
            pytest.skip(f"fit(X, y) is not enough: {exc}")
        try:
            fitted = clone(estimator).fit(X_huge, y)
        except ValueError:
            return  # the clear error
        checked = 0
        for name in METHODS:
            method = getattr(fitted, name, None)
            predictor = is_classifier(fitted) or is_regressor(fitted)
            if method is None or (name == "transform" and predictor):
                continue
            try:
                out = _call(method, X_huge, y)
            except ValueError:
                continue  # the clear error, at predict time
            if isinstance(out, tuple):
                out = out[0]
            out = out.toarray() if hasattr(out, "toarray") else np.asarray(out)
            checked += 1
            if out.dtype.kind not in "fc":
                continue  # labels
            assert np.isfinite(out).all(), f"{name} returned non-finite values"
            if name == "predict" and is_regressor(fitted):
                y_2d = np.asarray(y, dtype=float).reshape(len(y), -1)
                low, high = y_2d.min(axis=0), y_2d.max(axis=0)
                scale = np.maximum(high - low, np.maximum(abs(low), abs(high)))
                out_2d = out.reshape(len(out), -1)
                assert np.all(out_2d >= low - FACTOR * scale), out_2d.min()
                assert np.all(out_2d <= high + FACTOR * scale), out_2d.max()


def test_diverged_parameters_are_refused_at_fit_with_the_advice():
    # the parameter check names the cause at fit time, before any output is
    # read (the output checks alone would only fire at predict)
    import torch

    from sklearn_iclr26.neural_network import TorchMLPRegressor
    from sklearn_iclr26.utils._torch import _NonFiniteError, check_finite_module

    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=60)
    X[:, 0] *= 1e300
    with pytest.raises(ValueError, match="non-finite parameter weights") as info:
        TorchMLPRegressor((8,), max_iter=20, random_state=0).fit(X, y)
    assert "preprocessed" in str(info.value)

    module = torch.nn.Linear(2, 1)
    check_finite_module(module)  # finite: no error
    with torch.no_grad():
        module.bias.fill_(float("nan"))
    with pytest.raises(_NonFiniteError, match="'bias'"):
        check_finite_module(module)
