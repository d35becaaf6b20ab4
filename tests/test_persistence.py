"""Safe loading: skops files of estimators and hubs, the nets' torch state.

A tampered file is refused before its payload runs; each payload here only
creates a marker file, and each test asserts the marker is absent.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import io
import json
import os
import pickle
import re
import tarfile
import zipfile

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.ensemble import AdaptiveCompositionRegressor, ModuleHub
from sklearn_iclr26.ensemble._hub import _HUB_TYPES
from sklearn_iclr26.neural_network import TorchMLPClassifier, TorchMLPRegressor


class _Payload:
    """Unpickling this writes ``marker``: the stand-in for a malicious payload."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').close()",))


# ---------------------------------------------------------------- ModuleHub


@pytest.fixture(scope="module")
def hub():
    pytest.importorskip("skops.io")
    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 4))
    hub = ModuleHub(TorchMLPRegressor((8,), max_iter=3), random_state=0)
    hub.add_task("a", X, X[:, 0]).add_task("b", X, X[:, 1])
    hub.add_module("clf", TorchMLPClassifier((8,), max_iter=3).fit(X, X[:, 0] > 0))
    pca = PCA(2, svd_solver="randomized", random_state=np.random.RandomState(0))
    hub.add_module("pca", make_pipeline(StandardScaler(), pca).fit(X))
    return hub, X


@pytest.fixture(scope="module")
def hub_file(hub, tmp_path_factory):
    path = tmp_path_factory.mktemp("hub") / "hub.skops"
    hub[0].save(path)
    return path


def test_a_hub_file_is_skops_and_names_only_the_package_types(hub_file):
    """The hub saves like the estimators: a skops archive naming the hub, its
    torch MLPs, their module and the saved net (scikit-learn's transformers
    and numpy's random state are skops defaults), no bytes node."""
    import skops.io as sio

    assert sorted(sio.get_untrusted_types(file=hub_file)) == sorted(_HUB_TYPES)
    with zipfile.ZipFile(hub_file) as archive:
        schema = archive.read("schema.json").decode()
    assert "BytesNode" not in schema
    # no torch type is named (the package's own module paths may say torch)
    assert not re.search(r'"__module__": "torch\b|"torch\.', schema)


def test_a_genuine_hub_round_trips_and_composes_bit_identically(hub, hub_file):
    hub, X = hub
    loaded = ModuleHub.load(hub_file)
    assert loaded.names == hub.names
    for name in hub.names:
        np.testing.assert_array_equal(loaded.embed(name, X), hub.embed(name, X))
    y = X[:, 0] - 0.5 * X[:, 1]
    for names, merge in ((["a", "b"], "weights"), (hub.names, "predictions")):
        sub, sub_loaded = ModuleHub(), ModuleHub()
        for name in names:
            sub.add_module(name, hub[name])
            sub_loaded.add_module(name, loaded[name])
        kw = {"n_neighbors": 3, "max_iter": 3, "merge": merge, "random_state": 0}
        a = AdaptiveCompositionRegressor(sub, **kw).fit(X, y)
        b = AdaptiveCompositionRegressor(sub_loaded, **kw).fit(X, y)
        np.testing.assert_array_equal(a.module_weights_, b.module_weights_)
        np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_unknown_types_are_refused_unless_trusted(tmp_path):
    from collections import Counter  # a harmless type no hub file holds

    import skops.io as sio

    hub = ModuleHub()
    hub.modules["counts"] = Counter("abca")
    path = tmp_path / "hub.skops"
    hub.save(path)
    with pytest.raises(sio.exceptions.UntrustedTypesFoundException, match="Counter"):
        ModuleHub.load(path)
    loaded = ModuleHub.load(path, trusted=["collections.Counter"])
    assert loaded.modules["counts"] == Counter("abca")


def test_a_pickle_is_not_a_hub_file(tmp_path, monkeypatch):
    """A hub written by the pickle-based save of earlier versions (or any
    pickle) is refused unread, also when torch's weights-only default is
    switched off."""
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    marker = tmp_path / "ran"
    path = tmp_path / "hub.pkl"
    path.write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(ValueError, match="not a skops file"):
        ModuleHub.load(path)
    assert not marker.exists()


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
        "sklearn_iclr26.utils._mlp_modules.MLPModule",
        "sklearn_iclr26.utils._persistence.SavedNet",
        "sklearn_iclr26.utils._torch_mlp_classifier.TorchMLPClassifier",
    ]
    with zipfile.ZipFile(path) as archive:
        schema = archive.read("schema.json").decode()
        arrays = [n for n in archive.namelist() if n.endswith(".npy")]
        for name in arrays:  # every array loads without pickle
            np.load(io.BytesIO(archive.read(name)), allow_pickle=False)
    assert "BytesNode" not in schema
    # no torch type is named (the package's own module paths may say torch)
    assert not re.search(r'"__module__": "torch\b|"torch\.', schema)
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
    old = ("sklearn_iclr26.utils._mlp_modules", "MLPModule")
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


def _node(tree, class_name):
    """The first schema node of the class ``class_name``."""
    if isinstance(tree, dict):
        if tree.get("__class__") == class_name:
            return tree
        tree = list(tree.values())
    if isinstance(tree, list):
        for value in tree:
            found = _node(value, class_name)
            if found is not None:
                return found
    return None


def _shell_net(marker):
    """Edit a schema: the saved net's module class becomes ``os.system`` and its
    parameters ``command=`` a shell line that creates ``marker``."""

    def edit(schema):
        state = _node(schema, "SavedNet")["content"]["content"]
        state["module_class"]["__module__"] = os.system.__module__  # posix
        state["module_class"]["__class__"] = "system"
        params = state["module_params"]
        command = {
            "__class__": "str",
            "__module__": "builtins",
            "__loader__": "JsonNode",
            "content": json.dumps(f"echo x > {marker}"),
            "is_json": True,
            "__id__": 1,
        }
        params["content"] = {"command": command}
        params["key_types"]["content"] = params["key_types"]["content"][:1]
        state["dtype_params"]["content"] = []
        return schema

    return edit


@pytest.mark.parametrize("kind", ["estimator", "hub"])
def test_a_saved_net_naming_a_function_runs_nothing(
    skops_mlp, hub_file, tmp_path, kind
):
    """A crafted file whose saved net names ``os.system`` as its module class:
    refused by the fixed trusted list, and also when loaded with the file's own
    list (``SavedNet`` builds only a ``torch.nn.Module``)."""
    import skops.io as sio

    marker = tmp_path / "ran"
    path = skops_mlp[2] if kind == "estimator" else hub_file
    tampered = _rewrite(path, tmp_path / "t.skops", edit_schema=_shell_net(marker))
    own_list = sio.get_untrusted_types(file=tampered)
    assert f"{os.system.__module__}.system" in own_list
    fixed = skops_mlp[3] if kind == "estimator" else None
    with pytest.raises(sio.exceptions.UntrustedTypesFoundException, match="system"):
        if kind == "estimator":
            sio.load(tampered, trusted=fixed)
        else:
            ModuleHub.load(tampered)
    with pytest.raises(TypeError, match=r"not a torch\.nn\.Module subclass"):
        if kind == "estimator":
            sio.load(tampered, trusted=own_list)
        else:
            ModuleHub.load(tampered, trusted=own_list)
    assert not marker.exists()


def _legacy_tar(marker):
    """A torch legacy ``.tar`` archive whose first member is a payload pickle
    (``torch.load(weights_only=False)`` unpickles it)."""
    data = pickle.dumps(_Payload(marker))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("storages")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.mark.parametrize("force_no_weights_only", [False, True])
def test_a_legacy_torch_archive_in_a_net_runs_nothing(
    tmp_path, monkeypatch, force_no_weights_only
):
    """A net's torch state is a pickle read with ``torch.load(weights_only=True)``
    and nothing else: a legacy archive in its place is refused, with no
    fallback to a plain ``torch.load`` (which runs it when torch's
    weights-only default is off)."""
    if force_no_weights_only:
        monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    marker = tmp_path / "ran"
    rng = np.random.RandomState(0)
    X = rng.normal(size=(20, 3))
    net = TorchMLPRegressor((4,), max_iter=2, random_state=0).fit(X, X[:, 0]).net_
    state = net.__getstate__()
    state["__cuda_dependent_attributes__"] = _legacy_tar(marker)
    with pytest.raises(pickle.UnpicklingError, match="Refusing to load a net"):
        type(net).__new__(type(net)).__setstate__(state)
    assert not marker.exists()
    # the genuine state loads, tensors and all
    clone = type(net).__new__(type(net))
    clone.__setstate__(net.__getstate__())
    for key, value in net.module_.state_dict().items():
        np.testing.assert_array_equal(clone.module_.state_dict()[key], value)


def test_a_hub_holding_a_raw_skorch_net_is_refused(tmp_path):
    """A raw skorch net (whose torch state skops would hand over as bytes) is
    not a type a hub file holds."""
    import skops.io as sio

    rng = np.random.RandomState(0)
    X = rng.normal(size=(20, 3))
    hub = ModuleHub()
    hub.modules["raw"] = TorchMLPRegressor((4,), max_iter=2).fit(X, X[:, 0]).net_
    path = tmp_path / "hub.skops"
    hub.save(path)
    with pytest.raises(sio.exceptions.UntrustedTypesFoundException, match="Net"):
        ModuleHub.load(path)


def test_the_engine_builds_only_nets_with_the_weights_only_state():
    """A net class outside the package's safe-state base would bring back
    skorch's fallback to a plain ``torch.load``: ``train_module`` refuses it."""
    from skorch import NeuralNet
    from torch import nn

    from sklearn_iclr26.utils._torch import train_module

    X = np.zeros((4, 2))
    with pytest.raises(TypeError, match="net_class must subclass WeightedNet"):
        train_module(
            nn.Linear,
            X,
            X[:, :1],
            criterion=nn.MSELoss,
            module_params={"in_features": 2, "out_features": 1},
            net_class=NeuralNet,
        )


def test_a_net_refuses_to_load_on_a_torch_without_a_safe_weights_only_loader(
    monkeypatch,
):
    import torch

    rng = np.random.RandomState(0)
    X = rng.normal(size=(20, 3))
    reg = TorchMLPRegressor((4,), max_iter=2, random_state=0).fit(X, X[:, 0])
    data = pickle.dumps(reg)
    monkeypatch.setattr(torch, "__version__", "2.5.1")
    with pytest.raises(RuntimeError, match=r"needs torch >= 2\.6"):
        pickle.loads(data)
