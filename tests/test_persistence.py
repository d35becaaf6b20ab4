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


# ---------------------------------------------------------------- skops


@pytest.fixture(scope="module")
def skops_mlp(tmp_path_factory):
    """A fitted TorchMLPClassifier, its skops file and the types it names."""
    sio = pytest.importorskip("skops.io")
    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 4))
    clf = TorchMLPClassifier((8,), max_iter=3, random_state=0).fit(X, X[:, 0] > 0)
    path = tmp_path_factory.mktemp("skops") / "mlp.skops"
    sio.dump(clf, path)
    return clf, X, path, sio.get_untrusted_types(file=path)


def test_skops_file_of_a_torch_estimator_names_only_the_package(skops_mlp):
    """The net is saved as its module class, parameters and weight arrays:
    no torch, skorch or builtins type to trust, no pickled bytes."""
    import zipfile

    clf, X, path, untrusted = skops_mlp
    assert untrusted == [
        "sklearn_iclr26.neural_network._mlp_classifier.TorchMLPClassifier",
        "sklearn_iclr26.neural_network._modules.MLPModule",
        "sklearn_iclr26.utils._persistence.SavedNet",
    ]
    with zipfile.ZipFile(path) as archive:
        schema = archive.read("schema.json").decode()
        arrays = [n for n in archive.namelist() if n.endswith(".npy")]
        for name in arrays:  # every array loads without pickle
            np.load(io.BytesIO(archive.read(name)), allow_pickle=False)
    assert "BytesNode" not in schema and "torch" not in schema
    import skops.io as sio

    loaded = sio.load(path, trusted=untrusted)
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    # a loaded net has the module and the history of the fitted one
    assert type(loaded.net_.module_) is type(clf.net_.module_)
    assert loaded.net_.history[:, "train_loss"] == clf.net_.history[:, "train_loss"]


def _rewrite(path, out, edit_schema=None, arrays=None):
    import json
    import zipfile

    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "schema.json" and edit_schema is not None:
                data = json.dumps(edit_schema(json.loads(data))).encode()
            if arrays is not None and name in arrays:
                data = arrays[name]
            dst.writestr(name, data)
    return out


def _retype(node, old, new):
    """Rename every reference to the class ``old`` (module, name) to ``new``."""
    if isinstance(node, dict):
        if (node.get("__module__"), node.get("__class__")) == old:
            node["__module__"], node["__class__"] = new
        for value in node.values():
            _retype(value, old, new)
    elif isinstance(node, list):
        for value in node:
            _retype(value, old, new)
    return node


def test_a_tampered_skops_file_is_refused(skops_mlp, tmp_path):
    """A file naming a callable the genuine file does not name lists it in
    ``get_untrusted_types`` and is refused with the genuine file's list."""
    import skops.io as sio

    _, _, path, untrusted = skops_mlp
    old = ("sklearn_iclr26.neural_network._modules", "MLPModule")
    tampered = _rewrite(
        path,
        tmp_path / "tampered.skops",
        edit_schema=lambda s: _retype(s, old, ("builtins", "exec")),
    )
    assert "builtins.exec" in sio.get_untrusted_types(file=tampered)
    with pytest.raises(sio.exceptions.UntrustedTypesFoundException, match="exec"):
        sio.load(tampered, trusted=untrusted)


def test_a_pickle_hidden_in_the_weights_is_refused(skops_mlp, tmp_path):
    """The weights are read with ``allow_pickle=False``: an object array
    carrying a payload in place of a weight raises, unrun."""
    import zipfile

    import skops.io as sio

    _, _, path, untrusted = skops_mlp
    marker = tmp_path / "ran"
    payload = io.BytesIO()
    np.save(payload, np.array([_Payload(marker)], dtype=object), allow_pickle=True)
    with zipfile.ZipFile(path) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".npy"))
    tampered = _rewrite(
        path, tmp_path / "tampered.skops", arrays={name: payload.getvalue()}
    )
    with pytest.raises(ValueError, match="allow_pickle"):
        sio.load(tampered, trusted=untrusted)
    assert not marker.exists()


def test_warm_start_continues_after_pickle_not_after_skops(tmp_path):
    """pickle keeps the optimizer: a warm refit of the reloaded model is the
    warm refit of the original; a skops file keeps the weights only, and a
    warm refit of it says so."""
    sio = pytest.importorskip("skops.io")
    rng = np.random.RandomState(0)
    X, y = rng.normal(size=(40, 3)), rng.normal(size=40)
    reg = TorchMLPRegressor((8,), max_iter=3, warm_start=True, random_state=0)
    reg.fit(X, y)
    unpickled = pickle.loads(pickle.dumps(reg))
    reg.fit(X, y)
    unpickled.fit(X, y)
    assert unpickled.n_iter_ == 6
    np.testing.assert_array_equal(unpickled.predict(X), reg.predict(X))
    assert unpickled.loss_curve_ == reg.loss_curve_
    data = sio.dumps(reg)
    loaded = sio.loads(data, trusted=sio.get_untrusted_types(data=data))
    np.testing.assert_array_equal(loaded.predict(X), reg.predict(X))
    with pytest.raises(ValueError, match="loaded from a skops file"):
        loaded.fit(X, y)
    np.testing.assert_array_equal(loaded.predict(X), reg.predict(X))  # unchanged
    # a cold refit of the loaded estimator is the cold fit
    cold = loaded.set_params(warm_start=False).fit(X, y)
    expected = TorchMLPRegressor((8,), max_iter=3, random_state=0).fit(X, y)
    np.testing.assert_array_equal(cold.predict(X), expected.predict(X))
