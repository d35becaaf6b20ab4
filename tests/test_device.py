"""Every torch estimator honours ``device=``: a CPU-only check.

The device is given as ``"cpu:0"``, a spelling of the CPU that no code writes
by itself. ``torch.Tensor.to`` and ``torch.nn.Module.to`` are patched to
record every move that names a device by string: each must target
``"cpu:0"`` (a hard-coded ``"cpu"`` or ``"cuda"`` fails), and at least one
module and one tensor move must happen (a device argument that never reaches
torch fails). Moves to another tensor's ``.device`` (a ``torch.device``
object) are allowed. Estimators are discovered: every public estimator with
a ``device`` parameter, directly or in a nested torch child (test instances
of ``<family>/_test_instances.py``).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings

import numpy as np
import pytest
import torch
from sklearn.base import is_classifier

from sklearn_iclr26.utils._test_common import yield_test_instances

DEVICE = "cpu:0"


def _device_params(estimator):
    return sorted(
        key
        for key in estimator.get_params(deep=True)
        if key == "device" or key.endswith("__device")
    )


ESTIMATORS = [e for e in yield_test_instances() if _device_params(e)]


def _target(args, kwargs):
    if "device" in kwargs:
        return kwargs["device"]
    for arg in args:
        if isinstance(arg, (str, torch.device)):
            return arg
    return None


@pytest.fixture
def recorded_moves(monkeypatch):
    moves = {"tensor": [], "module": []}
    tensor_to, module_to = torch.Tensor.to, torch.nn.Module.to

    def record_tensor(self, *args, **kwargs):
        moves["tensor"].append(_target(args, kwargs))
        return tensor_to(self, *args, **kwargs)

    def record_module(self, *args, **kwargs):
        moves["module"].append(_target(args, kwargs))
        return module_to(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "to", record_tensor)
    monkeypatch.setattr(torch.nn.Module, "to", record_module)
    return moves


def _data(estimator):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 3))
    if is_classifier(estimator):
        return X, (X[:, 0] > 0).astype(int)
    return X, X[:, 0] + 0.1 * rng.normal(size=60)


@pytest.mark.parametrize(
    "estimator", ESTIMATORS, ids=lambda e: f"{type(e).__name__}-{_device_params(e)}"
)
def test_device_is_honoured(estimator, recorded_moves):
    estimator.set_params(**dict.fromkeys(_device_params(estimator), DEVICE))
    X, y = _data(estimator)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            estimator.fit(X, y)
        except ValueError as exc:  # estimators needing another input
            pytest.skip(f"fit(X, y) is not enough: {exc}")
        if hasattr(estimator, "predict"):
            estimator.predict(X)
        else:
            estimator.transform(X)
    if not recorded_moves["module"] and not recorded_moves["tensor"]:
        # skorch moves every module it builds to net.device, so an instance
        # that moved nothing ran no torch code (e.g. a composition of
        # scikit-learn modules): its device parameter is unused here
        pytest.skip("this instance trains no torch module")
    named = [
        str(t)
        for kind in ("tensor", "module")
        for t in recorded_moves[kind]
        if isinstance(t, str)
    ]
    assert recorded_moves["module"], "no module was moved to the device"
    assert named, "no tensor or module was moved to the device by name"
    assert set(named) == {DEVICE}, f"moves to other devices: {set(named)}"
    objects = [
        t
        for kind in ("tensor", "module")
        for t in recorded_moves[kind]
        if isinstance(t, torch.device)
    ]
    assert all(t.type == "cpu" for t in objects), objects


def test_estimators_with_a_device_are_discovered():
    names = {type(e).__name__ for e in ESTIMATORS}
    assert {"TorchMLPClassifier", "TorchMLPRegressor"} <= names
