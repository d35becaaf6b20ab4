"""The private skorch ``NeuralNet`` subclass behind :func:`train_module`.

Imported lazily (it imports skorch and torch); module level so that it pickles.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import time

import numpy as np
import torch
from skorch import NeuralNet
from skorch.callbacks import Callback
from skorch.utils import to_tensor

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


class GradientStepNet(NeuralNet):
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


class WeightedNet(NeuralNet):
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
