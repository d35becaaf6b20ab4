"""Fitted state that skops can audit: torch weights as arrays, no tuple keys.

``skops.io`` saves an object from its ``__getstate__`` and refuses, at load
time, every type the user has not trusted. Two kinds of fitted state defeat
that audit:

* a skorch ``NeuralNet``: its ``__getstate__`` hands skops one pickled byte
  string (module, criterion, optimizer), unpickled blindly on load, and its
  other attributes are skorch and torch types;
* dicts keyed by tuples, which skops's JSON format cannot hold.

:class:`SavedNet` replaces a fitted net in the state skops sees: the module's
class and constructor parameters, its ``state_dict`` as numpy arrays and the
training history as plain lists and dicts. Loading rebuilds the module from
those and nothing else, so a file's only types are the package's module
classes, numpy arrays and builtins; loading builds only a ``torch.nn.Module``
subclass. Pickle keeps the whole net (see
``BaseTorchEstimator.__reduce_ex__``), so a pickled estimator can still
continue training with ``warm_start``.

:func:`save` / :func:`load` wrap ``skops.io.dump`` / ``skops.io.load`` (skops
is optional) for the objects that save themselves (``ModuleHub``).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import sys

import numpy as np

__all__ = [
    "SavedNet",
    "dict_from_pairs",
    "load",
    "pairs_from_dict",
    "save",
    "with_saved_nets",
]


def _skops_io():
    try:
        import skops.io
    except ImportError as exc:
        raise ImportError(
            "Saving and loading with skops needs the optional dependency skops "
            "(pip install skops)."
        ) from exc
    return skops.io


def save(obj, path):
    """Write ``obj`` to ``path`` with ``skops.io.dump`` (see :ref:`persistence`).

    Parameters
    ----------
    obj : object
        What to save.
    path : str or path-like
        File to write.
    """
    _skops_io().dump(obj, path)


def load(path, *, trusted=None):
    """Read a file written by :func:`save` with ``skops.io.load``.

    Only the types skops trusts by default and those in ``trusted`` are
    built; a file naming any other raises skops's
    ``UntrustedTypesFoundException`` before anything is built.

    Parameters
    ----------
    path : str or path-like
        File to read.
    trusted : list of str, default=None
        The ``"module.Class"`` types to build besides skops's defaults.

    Returns
    -------
    obj : object
    """
    import zipfile

    sio = _skops_io()
    if not zipfile.is_zipfile(path):
        raise ValueError(
            f"{path} is not a skops file (a zip archive); nothing from it was "
            "read further. A pickle is not loaded here: unpickling runs code."
        )
    return sio.load(path, trusted=[] if trusted is None else list(trusted))


def _is_tensor(value):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _plain(value):
    """``value`` as builtins and numpy arrays (for a history record)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.copy()
    if _is_tensor(value):
        return value.detach().cpu().numpy().copy()
    return repr(value)


class SavedNet:
    """The fitted part of a skorch net, as a forward-only stand-in.

    Has what inference reads from a fitted net: ``module_`` (the torch
    module, same weights), ``device`` and ``history`` (skorch's ``History``
    of plain records). Its pickled and skops state is the module's class,
    its constructor parameters (the torch ``dtype`` by name), its
    ``state_dict`` as numpy arrays and the history; nothing is unpickled
    from bytes on load. The optimizer and the callbacks are not kept, so a
    loaded estimator cannot continue its training (``warm_start``).

    Parameters
    ----------
    net : skorch.NeuralNet
        A fitted net (``net.module_`` initialised).
    """

    def __init__(self, net):
        self.module_ = net.module_
        self.device = str(net.device)
        self.history = net.history
        self._module_params = dict(net.get_params_for("module"))

    def __getstate__(self):
        torch = sys.modules.get("torch")
        params, dtype_keys = dict(self._module_params), []
        for key, value in params.items():
            if torch is not None and isinstance(value, torch.dtype):
                params[key] = str(value).split(".")[-1]  # "float64"
                dtype_keys.append(key)
        return {
            "module_class": type(self.module_),
            "module_params": params,
            "dtype_params": dtype_keys,
            "training": bool(self.module_.training),
            "state_dict": {
                name: tensor.detach().cpu().numpy()
                for name, tensor in self.module_.state_dict().items()
            },
            "device": self.device,
            "history": _plain(list(self.history)),
        }

    def __setstate__(self, state):
        import torch
        from skorch.history import History

        module_class = state["module_class"]
        # a file names the class to call: only a torch module is built (a
        # tampered file naming a function, e.g. ``posix.system``, is refused
        # before anything is called)
        if not (
            isinstance(module_class, type) and issubclass(module_class, torch.nn.Module)
        ):
            raise TypeError(
                f"Refusing to load: the saved net's module class is {module_class!r}, "
                "not a torch.nn.Module subclass; the file may have been tampered "
                "with. Nothing from it was called."
            )
        params = dict(state["module_params"])
        if not all(isinstance(key, str) for key in params):
            raise TypeError("Refusing to load: module parameter names must be str.")
        for key in state["dtype_params"]:
            dtype = getattr(torch, str(params[key]), None)
            if not isinstance(dtype, torch.dtype):
                raise TypeError(f"{params[key]!r} is not a torch dtype.")
            params[key] = dtype
        module = module_class(**params)
        module.load_state_dict(
            {k: torch.as_tensor(v) for k, v in state["state_dict"].items()}
        )
        self.module_ = module.to(state["device"]).train(state["training"])
        self.device = state["device"]
        self.history = History(state["history"])
        self._module_params = params


def with_saved_nets(state):
    """A copy of an estimator's state with each skorch net a :class:`SavedNet`."""
    skorch = sys.modules.get("skorch")
    if skorch is None:  # no net was ever built in this process
        return state
    return {
        key: SavedNet(value) if isinstance(value, skorch.NeuralNet) else value
        for key, value in state.items()
    }


def pairs_from_dict(state, names):
    """A copy of ``state`` with the dicts ``names`` as lists of (key, value)
    pairs (skops's format holds no tuple keys); :func:`dict_from_pairs`
    undoes it."""
    state = dict(state)
    for name in names:
        if isinstance(state.get(name), dict):
            state[name] = [(key, value) for key, value in state[name].items()]
    return state


def dict_from_pairs(state, names):
    """Undo :func:`pairs_from_dict` (key order kept)."""
    state = dict(state)
    for name in names:
        if isinstance(state.get(name), list):
            state[name] = {
                (tuple(key) if isinstance(key, list) else key): value
                for key, value in state[name]
            }
    return state
