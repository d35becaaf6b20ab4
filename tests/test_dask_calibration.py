"""Block-wise conformal calibration and lazy prediction over dask collections.

On a ``LocalCluster`` with two worker *processes*: the rows are generated on
the workers by a function that refuses to run in the test's own (driver)
process, so a calibration that gathered ``X`` to the driver fails; the
thresholds, sorted scores, sets, p-values and intervals equal the in-memory
ones on the same rows. Skipped without dask and distributed.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import os

import numpy as np
import pandas as pd
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression, LogisticRegression, QuantileRegressor

from sklearn_iclr26.conformal import (
    BonferroniBoxRegressor,
    ConformalizedQuantileRegressor,
    SplitConformalClassifier,
)

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")

DRIVER = os.getpid()
N_FEATURES = 6
CHUNK = 250
N_BLOCKS = 6
COEF = np.linspace(-1.0, 1.0, N_FEATURES)


# ``client``: tests/conftest.py (two worker processes)


def _rows(block_id, driver_ok):
    """Block ``block_id`` of the rows (features and labels), from its seed."""
    if not driver_ok and os.getpid() == DRIVER:
        raise AssertionError("the rows were computed on the driver")
    rng = np.random.default_rng(block_id)
    X = rng.normal(size=(CHUNK, N_FEATURES))
    logits = np.column_stack([X @ COEF, -(X @ COEF), X[:, 0]])
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    y = (rng.uniform(size=(CHUNK, 1)) > np.cumsum(p, axis=1)).sum(axis=1)
    return X, y


def _X_block(block_info=None):
    return _rows(block_info[None]["chunk-location"][0], driver_ok=False)[0]


def _y_block(block_info=None):
    return _rows(block_info[None]["chunk-location"][0], driver_ok=False)[1]


def _dask_rows(target=_y_block):
    n = CHUNK * N_BLOCKS
    X = da.map_blocks(
        _X_block, chunks=((CHUNK,) * N_BLOCKS, (N_FEATURES,)), dtype=np.float64
    )
    y = da.map_blocks(target, chunks=((CHUNK,) * N_BLOCKS,), dtype=np.float64)
    assert X.shape == (n, N_FEATURES)
    return X, y


def _memory_rows(target=None):
    parts = [_rows(b, driver_ok=True) for b in range(N_BLOCKS)]
    X = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    return X, (y if target is None else target(X, y))


def _model():
    rng = np.random.default_rng(1000)
    X = rng.normal(size=(300, N_FEATURES))
    y = (X @ COEF > 0).astype(int) + (X[:, 0] > 1)
    return LogisticRegression(max_iter=1000).fit(X, y)


@pytest.mark.parametrize(
    "params",
    [{}, {"conditional": "class"}, {"conformity_score": "aps"}],
    ids=["marginal", "class", "aps"],
)
def test_classifier_calibrates_by_blocks_as_in_memory(client, params):
    model = _model()
    X_dask, y_dask = _dask_rows()
    X, y = _memory_rows()
    blockwise = SplitConformalClassifier(
        FrozenEstimator(model), random_state=0, **params
    ).fit(X_dask, y_dask)
    memory = SplitConformalClassifier(
        FrozenEstimator(model), random_state=0, **params
    ).fit(X, y)
    assert blockwise.n_calibration_samples_ == X.shape[0]
    np.testing.assert_array_equal(
        blockwise.calibration_scores_, memory.calibration_scores_
    )
    np.testing.assert_array_equal(blockwise.threshold_, memory.threshold_)

    sets = blockwise.predict_set(X_dask)
    assert isinstance(sets, da.Array)  # lazy: nothing computed yet
    np.testing.assert_array_equal(sets.compute(), memory.predict_set(X))
    levels = blockwise.predict_set(X_dask, confidence_level=[0.8, 0.95])
    np.testing.assert_array_equal(
        levels.compute(), memory.predict_set(X, confidence_level=[0.8, 0.95])
    )
    sparse = blockwise.predict_set(X_dask, output="sparse").compute()
    assert (sparse != memory.predict_set(X, output="sparse")).nnz == 0
    np.testing.assert_array_equal(
        blockwise.predict_p(X_dask).compute(), memory.predict_p(X)
    )


def test_calibrate_on_a_dask_dataframe_keeps_feature_names(client):
    dd = pytest.importorskip("dask.dataframe")
    X, y = _memory_rows()
    names = [f"f{j}" for j in range(N_FEATURES)]
    frame = pd.DataFrame(X, columns=names)
    model = LogisticRegression(max_iter=1000).fit(frame.iloc[:200], y[:200])
    ddf = dd.from_pandas(frame.iloc[200:], npartitions=3)
    labels = dd.from_pandas(pd.Series(y[200:]), npartitions=3)
    blockwise = SplitConformalClassifier(model).calibrate(ddf, labels)
    memory = SplitConformalClassifier(model).calibrate(frame.iloc[200:], y[200:])
    assert list(blockwise.feature_names_in_) == names
    np.testing.assert_array_equal(blockwise.threshold_, memory.threshold_)
    sets = blockwise.predict_set(ddf)
    assert isinstance(sets, da.Array)
    np.testing.assert_array_equal(sets.compute(), memory.predict_set(frame.iloc[200:]))


def _y_regression(X, y):
    return X @ COEF + 0.5 * np.sin(7 * X[:, 1])


def _y_regression_block(block_info=None):
    X = _X_block(block_info)
    return _y_regression(X, None)


def test_regressors_calibrate_by_blocks_as_in_memory(client):
    X_dask, y_dask = _dask_rows(_y_regression_block)
    X, y = _memory_rows(_y_regression)
    rng = np.random.default_rng(7)
    X_train = rng.normal(size=(200, N_FEATURES))
    y_train = _y_regression(X_train, None)
    point = LinearRegression().fit(X_train, y_train)
    pair = [
        QuantileRegressor(quantile=q, alpha=0.0).fit(X_train, y_train)
        for q in (0.1, 0.9)
    ]
    for blockwise, memory in [
        (
            BonferroniBoxRegressor(FrozenEstimator(point)).fit(X_dask, y_dask),
            BonferroniBoxRegressor(FrozenEstimator(point)).fit(X, y),
        ),
        (
            ConformalizedQuantileRegressor(pair).calibrate(X_dask, y_dask),
            ConformalizedQuantileRegressor(pair).calibrate(X, y),
        ),
    ]:
        np.testing.assert_array_equal(blockwise.threshold_, memory.threshold_)
        intervals = blockwise.predict_interval(X_dask, confidence_level=[0.8, 0.9])
        assert isinstance(intervals, da.Array)
        np.testing.assert_array_equal(
            intervals.compute(),
            memory.predict_interval(X, confidence_level=[0.8, 0.9]),
        )
        inside = blockwise.contains(X_dask, y_dask)
        assert isinstance(inside, da.Array)
        np.testing.assert_array_equal(inside.compute(), memory.contains(X, y))


def test_dask_calibration_needs_a_frozen_model(client):
    X_dask, y_dask = _dask_rows()
    with pytest.raises(TypeError, match="FrozenEstimator"):
        SplitConformalClassifier(LogisticRegression()).fit(X_dask, y_dask)
    with pytest.raises(ValueError, match="label_noise"):
        SplitConformalClassifier(FrozenEstimator(_model()), label_noise=0.1).fit(
            X_dask, y_dask
        )
    with pytest.raises(ValueError, match="would train"):
        BonferroniBoxRegressor().fit(X_dask, y_dask)
    # the shift weights and cross-conformal folds need the rows in memory
    frozen = FrozenEstimator(_model())
    for params in ({"shift": "covariate"}, {"shift": "label"}):
        with pytest.raises(ValueError, match="shift or X_target"):
            SplitConformalClassifier(frozen, **params).fit(X_dask, y_dask)
    with pytest.raises(ValueError, match="cross-conformal"):
        SplitConformalClassifier(frozen, cv=3).fit(X_dask, y_dask)
    box = BonferroniBoxRegressor(
        FrozenEstimator(LinearRegression().fit(*_memory_rows()))
    )
    with pytest.raises(ValueError, match="shift or X_target"):
        box.set_params(shift="covariate").fit(X_dask, y_dask)


@pytest.mark.filterwarnings("ignore:noise_rate_:UserWarning")
def test_noise_corrector_and_cate_effect_are_lazy_per_block(client):
    from lightgbm import LGBMClassifier

    from sklearn_iclr26.causal import TLearnerRegressor
    from sklearn_iclr26.label_noise import InstanceNoiseCorrector

    X, y = _memory_rows()
    X_dask = da.from_array(X, chunks=(CHUNK, N_FEATURES))
    corrector = InstanceNoiseCorrector(
        LGBMClassifier(n_estimators=5, verbose=-1), random_state=0
    ).fit(X[:500], y[:500])
    proba = corrector.predict_proba(X_dask)
    assert isinstance(proba, da.Array)
    np.testing.assert_array_equal(proba.compute(), corrector.predict_proba(X))
    np.testing.assert_array_equal(
        corrector.predict(X_dask).compute(), corrector.predict(X)
    )

    treated = np.column_stack([(X[:, 0] > 0).astype(float), X[:, 1:]])
    outcome = X[:, 1] + treated[:, 0] * (1 + X[:, 2])
    cate = TLearnerRegressor(
        LinearRegression(), treatment_column=0, treatment_threshold=0.5
    ).fit(treated[:600], outcome[:600])
    treated_dask = da.from_array(treated, chunks=(CHUNK, N_FEATURES))
    effect = cate.effect(treated_dask)
    assert isinstance(effect, da.Array)
    np.testing.assert_array_equal(effect.compute(), cate.effect(treated))
