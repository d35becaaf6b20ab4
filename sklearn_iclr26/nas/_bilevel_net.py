"""The skorch net of the architecture searches' bilevel loop (first-order DARTS).

:class:`_BilevelNet` is a ``NeuralNet`` subclass with a second optimizer and
its own ``train_step``; the torch base's template trains it through the one
engine set-up (``utils._torch.train_module(net_class=_BilevelNet, ...)``,
picked by :meth:`BaseGradientNASSearch._training_options
<sklearn_iclr26.nas._darts.BaseGradientNASSearch._training_options>`).
:class:`_BilevelLoader` pairs each training batch with a validation batch.

Imported lazily (it imports skorch and torch); module level so that it pickles.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import torch

from sklearn_iclr26.utils._skorch_net import GradientStepNet

__all__ = ["_BilevelLoader", "_BilevelNet"]


class _BilevelLoader:
    """Pairs each training batch with a validation batch (first-order DARTS).

    One epoch has ``ceil(n_train / batch_size)`` steps. At the start of the
    epoch the training rows are permuted (when mini-batching) and then the
    validation rows (when their batches are smaller than the validation set),
    both from torch's (forked, seeded) global RNG; step ``b`` takes training
    batch ``b`` and the validation rows from ``b * valid_batch_size`` (modulo
    ``n_valid``) on. Yields ``((X_train_b, y_train_b), (X_valid_b, y_valid_b))``.
    """

    def __init__(
        self,
        dataset,
        batch_size=1,
        shuffle=False,
        *,
        valid_X=None,
        valid_y=None,
        valid_batch_size=None,
        **kwargs,
    ):
        self.dataset = dataset
        self.batch_size = batch_size
        self.valid_X = valid_X
        self.valid_y = valid_y
        self.valid_batch_size = valid_batch_size

    def __len__(self):
        return max(1, -(-len(self.dataset) // self.batch_size))

    def __iter__(self):
        X, y = self.dataset.X, self.dataset.y
        if isinstance(X, dict):  # the engine's input dict: the inputs only
            X = X["X"]
        n, n_valid = len(X), len(self.valid_X)
        bs = min(self.batch_size, n)
        bs_valid = min(self.valid_batch_size or n_valid, n_valid)
        order = torch.randperm(n) if bs < n else torch.arange(n)
        order_valid = (
            torch.randperm(n_valid) if bs_valid < n_valid else torch.arange(n_valid)
        )
        order, order_valid = order.numpy(), order_valid.numpy()
        for b in range(len(self)):
            rows = order[b * bs : (b + 1) * bs]
            start = (b * bs_valid) % n_valid
            rows_valid = order_valid[start : start + bs_valid]
            if len(rows_valid) == 0:
                rows_valid = order_valid[:bs_valid]
            yield (
                (X[rows], y[rows]),
                (self.valid_X[rows_valid], self.valid_y[rows_valid]),
            )


class _BilevelNet(GradientStepNet):
    """First-order bilevel training with two optimizers (skorch's pattern).

    The module exposes ``weight_parameters()`` (inner variables, trained on
    the training batches by ``optimizer``) and ``arch_parameters()`` (outer
    variables, e.g. architecture logits, trained on the validation batches by
    ``arch_optimizer``), and its ``forward(X, detach_arch=False)`` treats the
    outer variables as constants when ``detach_arch`` is true. Each
    :meth:`train_step` (batches of :class:`_BilevelLoader`):

    1. a weight step: ``criterion(module(X_train, detach_arch=True), y_train)``,
       backward, ``optimizer`` step (skipped when the module has no weights);
    2. the outer gradient ``g`` of ``criterion(module(X_valid), y_valid)``
       (``torch.autograd.grad``, so the weights' gradients are untouched);
    3. ``g = arch_gradient_hook(g, net=self, loss=valid_loss)`` when a hook is
       given (any modification of the outer gradient: a constraint rule, a
       penalty; it may return numpy arrays);
    4. an ``arch_optimizer`` step on ``g``.

    The second optimizer follows skorch's documented recipe for several
    optimizers: it is created in :meth:`initialize_optimizer` as
    ``arch_optimizer_`` (so skorch registers it), from the class
    ``arch_optimizer`` and the keyword arguments ``arch_optimizer_params``.
    """

    def __init__(
        self,
        *args,
        arch_optimizer=torch.optim.Adam,
        arch_optimizer_params=None,
        arch_gradient_hook=None,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.arch_optimizer = arch_optimizer
        self.arch_optimizer_params = arch_optimizer_params
        self.arch_gradient_hook = arch_gradient_hook

    def initialize_optimizer(self, *args, **kwargs):
        weights = list(self.module_.weight_parameters())
        if weights:
            named = [(str(i), p) for i, p in enumerate(weights)]
            opt_args, opt_kwargs = self.get_params_for_optimizer("optimizer", named)
            self.optimizer_ = self.optimizer(*opt_args, **opt_kwargs)
        else:
            self.optimizer_ = None
        self.arch_optimizer_ = self.arch_optimizer(
            list(self.module_.arch_parameters()),
            **(self.arch_optimizer_params or {}),
        )
        return self

    def train_step(self, batch, **fit_params):
        (X, y), (X_valid, y_valid) = batch
        self.module_.train()
        if self.optimizer_ is not None:
            y_pred = self.infer(X, detach_arch=True)
            loss = self.get_loss(y_pred, y, X=X, training=True)
            weights = [
                p for group in self.optimizer_.param_groups for p in group["params"]
            ]
            grads = torch.autograd.grad(loss, weights, allow_unused=True)
            self.apply_gradients(self.optimizer_, zip(weights, grads))
        y_pred_valid = self.infer(X_valid)
        valid_loss = self.get_loss(y_pred_valid, y_valid, X=X_valid, training=True)
        params = list(self.module_.arch_parameters())
        grads = torch.autograd.grad(valid_loss, params)
        if self.arch_gradient_hook is not None:
            grads = self.arch_gradient_hook(grads, net=self, loss=valid_loss)
        self.apply_gradients(self.arch_optimizer_, zip(params, grads))
        return {"loss": valid_loss.detach(), "y_pred": y_pred_valid.detach()}
