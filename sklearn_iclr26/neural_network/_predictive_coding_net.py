"""The skorch net of predictive coding (the Meta-PCN estimators' engine step).

:class:`PredictiveCodingNet` is a ``NeuralNet`` subclass with its own
``train_step``; the estimators train it through the one engine set-up,
``train_module(net_class=PredictiveCodingNet, net_params=...)`` (see
``BaseMetaPCN._training_options``). Imported lazily (it imports skorch and
torch); module level so that it pickles.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import torch
from skorch.callbacks import Callback
from skorch.utils import to_tensor

from sklearn_iclr26.utils._skorch_net import GradientStepNet

__all__ = ["PredictiveCodingNet", "WeightSpectralNorms"]


class PredictiveCodingNet(GradientStepNet):
    """Predictive-coding training: inference on activities, then a local step.

    The skorch net the Meta-PCN estimators hand to the engine
    (``train_module(net_class=PredictiveCodingNet, net_params=...)``). The
    module is a predictive-coding network that exposes, besides
    ``forward(X)`` (the feed-forward pass used at predict time):

    * ``pc_init(X)``: the list of free (hidden) activities after a
      feed-forward pass;
    * ``pc_inference_objective(X, activities, y)``: the per-sample objective
      the activities descend (the energy ``F``, or a meta-prediction-error
      loss);
    * optionally ``pc_inference_grads(X, activities, y)``: its summed
      gradient in each activity (closed form where the module has one;
      otherwise the net takes ``torch.autograd.grad`` of the objective);
    * ``pc_energies(X, activities, y)``: per-sample, per-layer energies,
      shape ``(n_samples, n_layers)`` (their row sums are ``F``);
    * ``pc_weight_grads(X, activities, y, weight)``: a list of
      ``(parameter, gradient)`` pairs, the local (Hebbian) gradients of the
      weighted mean energy at fixed activities;
    * ``pc_after_step()``: constraints applied to the weights after every
      optimizer step (normalisation, clipping).

    One :meth:`train_step` on a batch:

    1. activities ``x`` from ``pc_init`` (detached);
    2. ``n_inference_steps`` steps of SGD with momentum on ``x``:
       ``v <- momentum * v + grad_x objective``,
       ``x <- x - inference_learning_rate * v``
       (``pc_inference_grads`` or ``torch.autograd.grad``; ``v`` starts at 0
       in every batch);
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
        n_inference_steps=7,
        inference_learning_rate=0.1,
        inference_momentum=0.0,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.n_inference_steps = n_inference_steps
        self.inference_learning_rate = inference_learning_rate
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
        lr = float(self.inference_learning_rate)
        momentum = float(self.inference_momentum)
        explicit = getattr(module, "pc_inference_grads", None)
        for _ in range(int(self.n_inference_steps)):
            if explicit is not None:
                grads = explicit(X, activities, y)
            else:
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
            finite = all(bool(torch.isfinite(g).all()) for _, g in pairs)
        if finite:
            self.apply_gradients(self.optimizer_, pairs)
            with torch.no_grad():
                module.pc_after_step()
        else:
            self.optimizer_.zero_grad()
        self.history.record_batch(
            "layer_energies", layer_energies.detach().cpu().tolist()
        )
        self.history.record_batch("pc_diverged", int(diverged or not finite))
        return {"loss": layer_energies.sum().detach(), "y_pred": None}

    def validation_step(self, batch, **fit_params):
        """Validation loss (``early_stopping``): the weighted mean energy at the
        feed-forward activities, i.e. the output energy of the prediction (the
        hidden errors are zero there); no inference, no weight step."""
        module = self.module_
        module.eval()
        X, y, weight = self._unpack(batch)
        with torch.no_grad():
            energies = module.pc_energies(X, module.pc_init(X), y).sum(dim=1)
            if weight is None:
                loss = energies.mean()
            else:
                loss = (weight * energies).sum() / weight.sum().clamp_min(1e-300)
        return {"loss": loss, "y_pred": None}


class WeightSpectralNorms(Callback):
    """Record the module's ``pc_spectral_norms()`` at the end of each epoch
    (history key ``weight_spectral_norms``)."""

    def on_epoch_end(self, net, **kwargs):
        with torch.no_grad():
            norms = [float(s) for s in net.module_.pc_spectral_norms()]
        net.history.record("weight_spectral_norms", norms)
