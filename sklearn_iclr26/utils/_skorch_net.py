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
        self.owner = owner
        self.name = name
        self.total = total
        self.prefix = prefix
        self.every = every
        self.level = level

    def on_train_begin(self, net, **kwargs):
        self.start_ = time.perf_counter()

    def on_epoch_end(self, net, **kwargs):
        if self.owner is None and self.name is None:
            return
        epoch = len(net.history)
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


class PredictiveCodingNet(NeuralNet):
    """Predictive-coding training: inference on activities, then a local step.

    The skorch net behind :func:`~sklearn_iclr26.utils._torch.
    train_predictive_coding`. The module is a predictive-coding network that
    exposes, besides ``forward(X)`` (the feed-forward pass used at predict
    time):

    * ``pc_init(X)``: the list of free (hidden) activities after a
      feed-forward pass;
    * ``pc_inference_objective(X, activities, y)``: the per-sample objective
      the activities descend (the energy ``F``, plus any meta-loss);
    * ``pc_energies(X, activities, y)``: per-sample, per-layer energies,
      shape ``(n_samples, n_layers)`` (their row sums are ``F``);
    * ``pc_weight_grads(X, activities, y, weight)``: a list of
      ``(parameter, gradient)`` pairs, the local (Hebbian) gradients of the
      weighted mean energy at fixed activities;
    * ``pc_after_step()``: constraints applied to the weights after every
      optimizer step (normalisation, clipping).

    One :meth:`train_step` on a batch:

    1. activities ``x`` from ``pc_init`` (detached);
    2. ``inference_steps`` steps of SGD with momentum on ``x``:
       ``v <- momentum * v + grad_x objective``, ``x <- x - inference_lr * v``
       (``torch.autograd.grad``; ``v`` starts at 0 in every batch);
    3. if an energy or an activity is not finite after inference, the
       activities are reset to the feed-forward ones (the batch is counted in
       the history key ``pc_diverged``);
    4. the local gradients are written into ``.grad`` and the optimizer steps
       (skipped if a gradient is not finite), then ``pc_after_step()``.

    Per batch, the history records ``layer_energies`` (the weighted mean
    energy of each layer at the end of inference) and ``pc_diverged``; the
    reported loss is the weighted mean total energy.
    """

    def __init__(
        self,
        *args,
        inference_steps=7,
        inference_lr=0.1,
        inference_momentum=0.0,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.inference_steps = inference_steps
        self.inference_lr = inference_lr
        self.inference_momentum = inference_momentum

    def _unpack(self, batch):
        Xi, yi = batch
        weight = None
        if isinstance(Xi, dict):
            weight = Xi.get("sample_weight")
            Xi = Xi["X"]
        X = to_tensor(Xi, device=self.device)
        y = None if yi is None else to_tensor(yi, device=self.device)
        if weight is not None:
            weight = to_tensor(weight, device=self.device).to(X.dtype)
        return X, y, weight

    def infer(self, x, **fit_params):
        if isinstance(x, dict):
            x = x["X"]
        return super().infer(x, **fit_params)

    def train_step(self, batch, **fit_params):
        module = self.module_
        module.train()
        X, y, weight = self._unpack(batch)
        with torch.no_grad():
            start = [a.detach() for a in module.pc_init(X)]
        activities = [a.clone() for a in start]
        velocities = [torch.zeros_like(a) for a in activities]
        lr, momentum = float(self.inference_lr), float(self.inference_momentum)
        for _ in range(int(self.inference_steps)):
            activities = [a.detach().requires_grad_(True) for a in activities]
            objective = module.pc_inference_objective(X, activities, y).sum()
            grads = torch.autograd.grad(objective, activities)
            with torch.no_grad():
                new = []
                for a, g, v in zip(activities, grads, velocities):
                    v.mul_(momentum).add_(g)
                    new.append(a - lr * v)
            activities = new
        activities = [a.detach() for a in activities]
        with torch.no_grad():
            energies = module.pc_energies(X, activities, y)
            diverged = not (
                bool(torch.isfinite(energies).all())
                and all(bool(torch.isfinite(a).all()) for a in activities)
            )
            if diverged:
                activities = start
                energies = module.pc_energies(X, activities, y)
            if weight is None:
                w = torch.full(
                    (X.shape[0],), 1.0 / X.shape[0], dtype=X.dtype, device=X.device
                )
            else:
                w = weight / weight.sum().clamp_min(1e-300)
            layer_energies = (w[:, None] * energies).sum(dim=0)
            pairs = module.pc_weight_grads(X, activities, y, weight)
            self.optimizer_.zero_grad()
            finite = all(bool(torch.isfinite(g).all()) for _, g in pairs)
            if finite:
                for param, grad in pairs:
                    param.grad = grad.detach().to(param.dtype)
        if finite:
            self.optimizer_.step()
            with torch.no_grad():
                module.pc_after_step()
        self.history.record_batch(
            "layer_energies", layer_energies.detach().cpu().tolist()
        )
        self.history.record_batch("pc_diverged", int(diverged or not finite))
        return {"loss": layer_energies.sum().detach(), "y_pred": None}


class WeightSpectralNorms(Callback):
    """Record the module's ``pc_spectral_norms()`` at the end of each epoch
    (history key ``weight_spectral_norms``)."""

    def on_epoch_end(self, net, **kwargs):
        with torch.no_grad():
            norms = [float(s) for s in net.module_.pc_spectral_norms()]
        net.history.record("weight_spectral_norms", norms)
