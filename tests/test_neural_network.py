"""Tests of the shared torch/skorch helper and the torch MLP estimators."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pytest
import torch
from sklearn.datasets import load_iris, make_classification, make_regression
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.neural_network import TorchMLPClassifier, TorchMLPRegressor
from sklearn_iclr26.utils._torch import forward_module, train_module

FAST = {"max_iter": 30}


def test_deterministic_and_another_seed_differs():
    # the global RNGs: tests/test_common_contracts.py
    X, y = make_regression(n_samples=80, n_features=5, random_state=0)
    p1 = TorchMLPRegressor(random_state=3, **FAST).fit(X, y).predict(X)
    p2 = TorchMLPRegressor(random_state=3, **FAST).fit(X, y).predict(X)
    p3 = TorchMLPRegressor(random_state=4, **FAST).fit(X, y).predict(X)
    np.testing.assert_array_equal(p1, p2)
    assert not np.allclose(p1, p3)


def test_minibatch_shuffling_is_seeded():
    X, y = make_classification(n_samples=120, random_state=0)
    a = TorchMLPClassifier(batch_size=16, random_state=1, **FAST).fit(X, y)
    b = TorchMLPClassifier(batch_size=16, random_state=1, **FAST).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert a.n_iter_ == 30


def test_thread_count_is_restored():
    before = torch.get_num_threads()
    X, y = make_classification(n_samples=50, random_state=0)
    TorchMLPClassifier(n_jobs=1, **FAST).fit(X, y).predict(X)
    assert torch.get_num_threads() == before


def test_verbose_prints_one_plain_line_per_epoch(capsys):
    X, y = load_iris(return_X_y=True)
    TorchMLPClassifier(max_iter=3, verbose=1, random_state=0).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    for epoch, line in enumerate(lines, start=1):
        assert line.startswith(f"[TorchMLPClassifier] epoch {epoch}/3: train_loss ")
    assert "\x1b" not in "".join(lines)  # no ANSI colour codes
    TorchMLPClassifier(max_iter=3, random_state=0).fit(X, y)
    assert capsys.readouterr().out == ""


def test_grid_search_in_pipeline_against_a_linear_model():
    # pickle and the GridSearch contract: tests/test_common_contracts.py
    X, y = make_classification(n_samples=120, random_state=0)
    pipe = make_pipeline(StandardScaler(), TorchMLPClassifier(random_state=0, **FAST))
    grid = GridSearchCV(
        pipe, {"torchmlpclassifier__hidden_layer_sizes": [(8,), (16, 8)]}, cv=3
    ).fit(X, y)
    linear = make_pipeline(StandardScaler(), LogisticRegression())
    assert grid.best_score_ >= cross_val_score(linear, X, y, cv=3).mean() - 0.1


def test_float32_multioutput_regression_fits_as_float64_does():
    # shape and float64 output: check_regressor_multioutput in test_common.py
    X, y = make_regression(n_samples=60, n_features=4, n_targets=3, random_state=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    reg32 = TorchMLPRegressor(dtype="float32", random_state=0, **FAST)
    reg64 = TorchMLPRegressor(random_state=0, **FAST)
    r2_32, r2_64 = (
        r2_score(
            y_test, r.fit(X_train, y_train).predict(X_test), multioutput="raw_values"
        )
        for r in (reg32, reg64)
    )
    mean = DummyRegressor().fit(X_train, y_train).predict(X_test)
    baseline = r2_score(y_test, mean, multioutput="raw_values")  # about 0
    assert np.all(r2_32 >= baseline + 0.8), r2_32  # 0.94, 0.98, 0.94
    np.testing.assert_allclose(r2_32, r2_64, atol=0.1)  # 0.96, 0.93, 0.96
    assert next(reg32.net_.module_.parameters()).dtype == torch.float32


class _Criterion(torch.nn.Module):
    """Per-sample squared error scaled by an extra per-sample input."""

    def forward(self, y_pred, y_true, scale):
        return scale * (y_pred.squeeze(1) - y_true) ** 2


def test_train_module_passes_aux_and_weights():
    from sklearn_iclr26.utils._mlp_modules import MLPModule

    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 3))
    y = X[:, 0]
    scale = np.where(np.arange(40) < 20, 1.0, 0.0)  # the loss ignores half the rows
    common = {
        "criterion": _Criterion,
        "module_params": {"n_features": 3, "n_outputs": 1, "hidden_layer_sizes": ()},
        "max_epochs": 200,
        "learning_rate": 0.05,
        "random_state": 0,
    }
    net = train_module(MLPModule, X, y, aux={"scale": scale}, **common)
    out = forward_module(net, X).ravel()
    np.testing.assert_allclose(out[:20], y[:20], atol=0.05)
    # zero weight on the first half is the same as scale 0 there
    weights = 1.0 - scale
    weighted = train_module(
        MLPModule, X, y, aux={"scale": np.ones(40)}, sample_weight=weights, **common
    )
    out = forward_module(weighted, X).ravel()
    np.testing.assert_allclose(out[20:], y[20:], atol=0.05)


def test_bad_parameters():
    X, y = make_classification(n_samples=30, random_state=0)
    with pytest.raises(ValueError, match="n_jobs"):
        TorchMLPClassifier(n_jobs=0, **FAST).fit(X, y)
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        TorchMLPClassifier(hidden_layer_sizes=(0,), **FAST).fit(X, y)
    with pytest.raises(ValueError, match="activation"):
        TorchMLPClassifier(activation="sigmoidish").fit(X, y)
    with pytest.raises(ValueError, match="only one class"):
        TorchMLPClassifier(**FAST).fit(X, np.zeros(30))
