"""The private skorch ``NeuralNet`` subclass behind :func:`train_module`.

Imported lazily (it imports skorch and torch); module level so that it pickles.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import io
import pickle
import time

import numpy as np
import torch
from skorch import NeuralNet
from skorch.callbacks import Callback
from skorch.utils import get_map_location, to_tensor

from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress


class BatchIndexLoader:
    """Data loader that indexes the dataset once per batch.

    torch's ``DataLoader`` fetches samples one by one and collates them, which
    costs more than the training step itself for tabular data (measured: 90%
    of a full-batch epoch on 2,310 rows). skorch's ``Dataset`` accepts index
    arrays, so a batch is one fancy-indexing operation. Shuffling draws from
    torch's (forked, seeded) global RNG.
    """

    def __init__(self, dataset, batch_size=1, shuffle=False, **kwargs):
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle

    def __len__(self):
        n = len(self.dataset)
        return max(1, -(-n // self.batch_size))

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            order = torch.randperm(n).numpy()
        else:
            order = np.arange(n)
        data_X = getattr(self.dataset, "X", None)
        data_y = getattr(self.dataset, "y", None)
        for start in range(0, n, self.batch_size):
            index = order[start : start + self.batch_size]
            if hasattr(self.dataset, "transform") and isinstance(
                data_X, (dict, np.ndarray)
            ):
                # skorch's own indexing turns index arrays into lists and
                # indexes element by element: index the arrays directly
                yield self.dataset.transform(_take(data_X, index), _take(data_y, index))
            else:
                yield self.dataset[index]


def _take(data, index):
    if data is None:
        return None
    if isinstance(data, dict):
        return {key: _take(value, index) for key, value in data.items()}
    return data[index]


def check_safe_torch_load():
    """Raise unless this torch's ``weights_only=True`` loader is safe.

    Before torch 2.6 ``torch.load(weights_only=True)`` could still run code
    from a crafted file (CVE-2025-32434); the package needs torch >= 2.6.
    """
    major, minor = (int(p) for p in torch.__version__.split(".")[:2])
    if (major, minor) < (2, 6):
        raise RuntimeError(
            f"Refusing to load torch state with torch {torch.__version__}: its "
            "weights-only loader can run code from a crafted file; sklearn-iclr26 "
            "needs torch >= 2.6."
        )


class _WeightsOnlyUnpickler(pickle.Unpickler):
    """Reads tensors (``torch.storage._load_from_bytes``) with
    ``torch.load(weights_only=True)``, whatever the data asks for."""

    def __init__(self, file, map_location):
        super().__init__(file)
        self._map_location = map_location

    def find_class(self, module, name):
        if (module, name) == ("torch.storage", "_load_from_bytes"):
            return self._load_from_bytes
        return super().find_class(module, name)

    def _load_from_bytes(self, data):
        return torch.load(
            io.BytesIO(data), map_location=self._map_location, weights_only=True
        )


class _SafeStateNet(NeuralNet):
    """Base of the package's nets: the torch state pickles with no fallback.

    skorch keeps the module, criterion and optimizer in one nested byte string
    (its ``__getstate__``) and, when that string is not a pickle (a legacy
    ``torch.save`` archive), falls back to a plain ``torch.load``, which runs
    code unless torch defaults to ``weights_only=True``. Here the string is
    always a pickle whose tensors are read with ``weights_only=True``, and
    anything else is refused, on every skorch version.
    """

    def __getstate__(self):
        state = self.__dict__.copy()
        prefixes = tuple(self.cuda_dependent_attributes_)
        cuda_attrs = {
            key: state.pop(key)
            for key in list(state)
            if isinstance(key, str) and key.startswith(prefixes)
        }
        buffer = io.BytesIO()
        pickle.dump(cuda_attrs, buffer)
        state["__cuda_dependent_attributes__"] = buffer.getvalue()
        return state

    def __setstate__(self, state):
        check_safe_torch_load()
        map_location = get_map_location(state["device"])
        state["device"] = self._check_device(state["device"], map_location)
        blob = state.pop("__cuda_dependent_attributes__")
        try:
            cuda_attrs = _WeightsOnlyUnpickler(io.BytesIO(blob), map_location).load()
        except pickle.UnpicklingError as exc:
            raise pickle.UnpicklingError(
                "Refusing to load a net whose torch state is not a pickle (e.g. "
                "a legacy torch.save archive): reading it needs torch.load "
                "without weights_only, which can run code."
            ) from exc
        if not isinstance(cuda_attrs, dict):
            raise pickle.UnpicklingError("A net's torch state must be a dict.")
        state.update(cuda_attrs)
        self.__dict__.update(state)


class GradientStepNet(_SafeStateNet):
    """Base of the nets whose ``train_step`` is not one loss and one optimizer.

    A family's ``NeuralNet`` subclass (predictive coding, the bilevel
    architecture search) computes its gradients in its own ``train_step``
    (``torch.autograd.grad``, or local rules) and hands them to
    :meth:`apply_gradients`: the optimizer steps stay here, in the engine, and
    no family module calls ``.backward()`` or ``optimizer.step()``.
    """

    def apply_gradients(self, optimizer, pairs):
        """Write ``(parameter, gradient)`` pairs into ``.grad`` and step.

        ``optimizer.zero_grad()`` first (parameters without a gradient keep
        ``grad=None`` and are skipped by the optimizer, as after ``backward``),
        then each gradient (a tensor or array; ``None`` skips the parameter)
        in the parameter's dtype and device, then ``optimizer.step()``.
        """
        optimizer.zero_grad()
        for param, grad in pairs:
            if grad is not None:
                param.grad = (
                    torch.as_tensor(grad)
                    .detach()
                    .to(device=param.device, dtype=param.dtype)
                )
        optimizer.step()


class WeightedNet(_SafeStateNet):
    """Weighted mean of per-sample losses; extra inputs passed to the loss.

    With full batches, ``sum(w * l) / sum(w)`` equals the loss with sample
    ``i`` repeated ``w_i`` times. Keys of the input dict other than ``"X"`` and
    ``"sample_weight"`` reach the module's ``forward`` and the criterion as
    keyword arguments; ``sample_weight`` reaches only the loss.
    """

    def infer(self, x, **fit_params):
        if isinstance(x, dict):
            x = {k: v for k, v in x.items() if k != "sample_weight"}
        return super().infer(x, **fit_params)

    def get_loss(self, y_pred, y_true, X=None, training=False):
        aux = {}
        weight = None
        if isinstance(X, dict):
            aux = {k: v for k, v in X.items() if k not in ("X", "sample_weight")}
            weight = X.get("sample_weight")
            if weight is not None:
                weight = to_tensor(weight, device=self.device)
        if y_true is not None:
            y_true = to_tensor(y_true, device=self.device)
        aux = {k: to_tensor(v, device=self.device) for k, v in aux.items()}
        losses = self.criterion_(y_pred, y_true, **aux)
        if losses.ndim > 1:
            losses = losses.reshape(losses.shape[0], -1).sum(dim=1)
        if weight is None:
            return losses.mean()
        weight = weight.to(device=losses.device, dtype=losses.dtype)
        return (weight * losses).sum() / weight.sum().clamp_min(1e-300)


class EpochProgress(Callback):
    """Plain-text progress, one line per epoch, through ``log_progress``.

    Replaces skorch's ``PrintLog`` table, which colours its best values with
    raw ANSI escape codes (unreadable in log files). The line is printed as
    ``[OwnerClass] <prefix>epoch i/n: train_loss x (t s)`` when the owner's
    ``verbose`` is at least ``level``; every ``every``-th epoch and the last
    one are printed. The reference to the owner is dropped when training
    ends, so the fitted net does not keep the owner alive.

    Parameters
    ----------
    owner : estimator
        The estimator whose ``verbose`` and class name are used.
    total : int
        Number of epochs, for the ``i/n`` display.
    prefix : str, default=""
        Text before ``epoch`` (e.g. ``"sub-problem 1/3, "``).
    every : int, default=1
        Print every ``every``-th epoch.
    level : int, default=1
        Minimum ``verbose`` of the owner.
    name : str, default=None
        Without an owner (``owner=None``): the prefix of the lines, printed
        when ``level >= 1`` (the engine's own progress for ``train_module``).
    """

    def __init__(self, owner, total, *, prefix="", every=1, level=1, name=None):
        store_params(self, locals())

    def on_train_begin(self, net, **kwargs):
        self.start_ = time.perf_counter()
        # epochs of earlier fits (a warm start continues the history)
        self.first_epoch_ = len(net.history)

    def on_epoch_end(self, net, **kwargs):
        if self.owner is None and self.name is None:
            return
        epoch = len(net.history) - getattr(self, "first_epoch_", 0)
        if epoch % max(int(self.every), 1) and epoch != self.total:
            return
        loss = net.history[-1].get("train_loss")
        loss_text = "" if loss is None else f": train_loss {float(loss):.5g}"
        elapsed = time.perf_counter() - getattr(self, "start_", time.perf_counter())
        message = (
            f"{self.prefix}epoch {epoch}/{self.total}{loss_text} ({elapsed:.2f} s)"
        )
        if self.owner is None:
            print(f"[{self.name}] {message}", flush=True)
        else:
            log_progress(self.owner, message, level=self.level)

    def on_train_end(self, net, **kwargs):
        self.owner = None
        self.name = None
