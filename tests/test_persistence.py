"""Safe loading of ModuleHub files: a tampered file is refused unrun."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import io
import pickle

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.ensemble import ModuleHub, _hub
from sklearn_iclr26.neural_network import TorchMLPClassifier, TorchMLPRegressor


class _Payload:
    """Unpickling this writes ``marker``: the stand-in for a malicious payload."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').close()",))


@pytest.fixture(scope="module")
def hub():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 4))
    hub = ModuleHub(TorchMLPRegressor((8,), max_iter=3), random_state=0)
    hub.add_task("a", X, X[:, 0]).add_task("b", X, X[:, 1])
    hub.add_module("clf", TorchMLPClassifier((8,), max_iter=3).fit(X, X[:, 0] > 0))
    pca = PCA(2, svd_solver="randomized", random_state=np.random.RandomState(0))
    hub.add_module("pca", make_pipeline(StandardScaler(), pca).fit(X))
    return hub, X


def test_a_genuine_hub_round_trips(hub, tmp_path):
    hub, X = hub
    path = tmp_path / "hub.pkl"
    hub.save(path)
    loaded = ModuleHub.load(path)
    assert loaded.names == hub.names
    for name in hub.names:
        np.testing.assert_array_equal(loaded.embed(name, X), hub.embed(name, X))


def _tampered(hub, tmp_path, where, marker):
    """A copy of ``hub``'s file with a payload in the hub itself ("outer") or
    inside a skorch net's nested torch state ("nested")."""
    hub = pickle.loads(pickle.dumps(hub))
    if where == "outer":
        hub.modules["evil"] = _Payload(marker)
    else:  # skorch pickles attributes named module_* into a nested blob
        hub.modules["a"].net_.module_evil = _Payload(marker)
    path = tmp_path / f"{where}.pkl"
    hub.save(path)
    return path


@pytest.mark.parametrize("where", ["outer", "nested"])
def test_a_tampered_hub_is_refused_without_running_the_payload(hub, tmp_path, where):
    marker = tmp_path / "ran"
    path = _tampered(hub[0], tmp_path, where, marker)
    with pytest.raises(ValueError, match=r"Refusing to load builtins\.exec"):
        ModuleHub.load(path)
    assert not marker.exists()
    # the file is live: plain unpickling runs the payload
    with open(path, "rb") as f:
        pickle.load(f)
    assert marker.exists()


@pytest.mark.parametrize("where", ["outer", "nested"])
def test_the_unpickler_itself_refuses_without_the_static_check(
    hub, tmp_path, where, monkeypatch
):
    """Second line of defence: with the static check switched off, the
    restricted unpicklers (the hub's and the one skorch uses for its nested
    state) refuse the payload's global before it is called."""
    marker = tmp_path / "ran"
    path = _tampered(hub[0], tmp_path, where, marker)
    monkeypatch.setattr(_hub, "_check_pickle", lambda *args: None)
    with pytest.raises(ValueError, match=r"Refusing to load builtins\.exec"):
        ModuleHub.load(path)
    assert not marker.exists()


def test_torch_bytes_are_read_with_weights_only(tmp_path, monkeypatch):
    """A torch archive reached through ``torch.storage._load_from_bytes`` is
    read with ``weights_only=True``, whatever the file asks for."""
    import torch

    marker = tmp_path / "ran"
    buffer = io.BytesIO()
    torch.save(_Payload(marker), buffer)

    class _Archive:
        def __reduce__(self):
            return (torch.storage._load_from_bytes, (buffer.getvalue(),))

    hub = ModuleHub()
    hub.modules["evil"] = _Archive()
    path = tmp_path / "hub.pkl"
    hub.save(path)
    with pytest.raises(ValueError, match=r"Refusing to load builtins\.exec"):
        ModuleHub.load(path)  # the static check looks inside the archive
    monkeypatch.setattr(_hub, "_check_pickle", lambda *args: None)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        ModuleHub.load(path)
    assert not marker.exists()


def test_unknown_types_are_refused_unless_trusted(tmp_path):
    from collections import Counter  # a harmless type no hub file holds

    hub = ModuleHub()
    hub.modules["counts"] = Counter("abca")
    path = tmp_path / "hub.pkl"
    hub.save(path)
    with pytest.raises(ValueError, match=r"collections\.Counter.*trusted="):
        ModuleHub.load(path)
    loaded = ModuleHub.load(path, trusted=["collections.Counter"])
    assert loaded.modules["counts"] == Counter("abca")
