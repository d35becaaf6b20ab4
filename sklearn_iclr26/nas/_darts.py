"""The search loop of the gradient-based searches: first-order DARTS on skorch.

The loop itself is the package's bilevel engine,
:func:`~sklearn_iclr26.utils._torch.train_bilevel` (a skorch ``NeuralNet`` with
a second optimizer for the architecture logits); this module supplies the
relaxed supernet (``nas/_supernet.py``), the hook that modifies the logit
gradient (:meth:`BaseGradientNASSearch._modify_arch_gradient`: the ConNAS rule
or the penalty) and records the search history, and the selection.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from abc import abstractmethod
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from sklearn_iclr26.nas._base_search import BaseNASSearch, history_record
from sklearn_iclr26.utils._torch import forward_module, train_bilevel
from sklearn_iclr26.utils._verbose import log_progress


class _SearchRecorder:
    """The logit-gradient hook of one search: modify, record, report."""

    def __init__(self, search, n_steps):
        self.search = search
        self.costs = search._costs
        self.n_steps = n_steps
        self.history = []
        self.n_modified = 0

    def __call__(self, grads, *, net, loss):
        import torch
        import torch.nn.functional as F

        logits = net.module_.arch_parameters()
        g = [gr.detach().cpu().numpy().astype(np.float64) for gr in grads]
        arch_idx = [int(torch.argmax(a)) for a in logits]
        arch = self.costs.to_ops(arch_idx)
        cost = self.costs.cost_of(arch)
        with torch.no_grad():
            probs = [
                F.softmax(a, dim=0).cpu().numpy().astype(np.float64) for a in logits
            ]
        g, modified = self.search._modify_arch_gradient(g, arch_idx, cost, probs)
        self.n_modified += bool(modified)
        epoch = len(net.history) - 1
        self.history.append(
            history_record(
                len(self.history),
                epoch,
                arch,
                cost,
                self.search._feasible(cost),
                loss.detach(),
                modified,
            )
        )
        if len(self.history) % self.n_steps == 0:
            last = self.history[-1]
            log_progress(
                self.search,
                f"epoch {epoch + 1}/{self.search.max_iter} "
                f"arch={self.costs.to_dict(arch)} cost={cost:.6g} "
                f"feasible={last['feasible']} val_loss={last['val_loss']:.4f} "
                f"modified={self.n_modified}/{self.n_steps}",
            )
            self.n_modified = 0
        return g


class BaseGradientNASSearch(BaseNASSearch):
    """First-order DARTS bilevel search; subclasses modify the logit gradient.

    Hooks: :meth:`_modify_arch_gradient` (abstract). ``select`` is a
    parameter of every subclass.
    """

    _parameter_constraints: dict = {
        **BaseNASSearch._parameter_constraints,
        "relaxation": [StrOptions({"softmax", "gumbel"})],
        "temperature": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
        "weight_decay": [Interval(Real, 0, None, closed="left")],
        "arch_lr": [Interval(Real, 0, None, closed="neither")],
        "arch_betas": [tuple],
        "arch_weight_decay": [Interval(Real, 0, None, closed="left")],
    }

    @abstractmethod
    def _modify_arch_gradient(self, grad, arch_idx, cost, probs):
        """Return ``(grad, modified)``: the gradient the logits descend.

        ``grad``: the validation-loss gradient, one float64 array per edge;
        ``arch_idx``: the derived architecture (argmax per edge); ``cost``:
        its cost; ``probs``: the softmax of the logits per edge.
        """

    def _discrete_val_losses(self, net, X_val, y_val, archs):
        """Validation loss of the supernet with one-hot weights, per architecture."""
        import torch.nn.functional as F

        regression = self.task == "regression"

        def loss_of(arch):
            arch_index = [ops.index(op) for ops, op in zip(self._costs.ops, arch)]

            def per_row(module, xb, y):
                out = module.one_hot_forward(xb, arch_index)
                if regression:
                    return ((out - y) ** 2).reshape(len(xb), -1).mean(dim=1)
                return F.cross_entropy(out, y, reduction="none")

            # an infinite loss only ranks the architecture last
            losses = forward_module(
                net,
                X_val,
                aux={"y": y_val},
                dtype=self.dtype,
                func=per_row,
                check_finite=False,
            )
            return float(losses.mean())

        return {arch: loss_of(arch) for arch in archs}

    def _search(self, data):
        import torch

        from sklearn_iclr26.nas._supernet import RelaxedSupernet

        X = np.asarray(data.X, dtype=np.float64)
        y_tr, y_val = data.y_search[data.train], data.y_search[data.val]
        if self.task == "regression":
            mean, std = y_tr.mean(), y_tr.std()
            std = std if std > 0 else 1.0
            y_tr = ((y_tr - mean) / std).reshape(-1, 1)
            y_val = ((y_val - mean) / std).reshape(-1, 1)
            criterion = torch.nn.MSELoss
        else:
            criterion = torch.nn.CrossEntropyLoss
        X_tr, X_val = X[data.train], X[data.val]
        n_train = len(X_tr)
        bs = n_train if self.batch_size is None else min(self.batch_size, n_train)
        recorder = _SearchRecorder(self, n_steps=-(-n_train // bs))
        supernet_class, supernet_params = self._costs.space.supernet(
            self._costs.n_features, self._costs.n_outputs
        )
        net = train_bilevel(
            RelaxedSupernet,
            X_tr,
            y_tr,
            X_val,
            y_val,
            criterion=criterion,
            module_params={
                "supernet_class": supernet_class,
                "supernet_params": supernet_params,
                "n_ops": [len(ops) for ops in self._costs.ops],
                "relaxation": self.relaxation,
                "temperature": self.temperature,
            },
            arch_gradient_hook=recorder,
            max_epochs=self.max_iter,
            batch_size=self.batch_size,
            learning_rate=self.learning_rate_init,
            weight_decay=self.weight_decay,
            arch_learning_rate=self.arch_lr,
            arch_betas=self.arch_betas,
            arch_weight_decay=self.arch_weight_decay,
            dtype=self.dtype,
            device=self.device,
            random_state=data.seed,
            n_jobs=self.n_jobs,
        )
        logits = net.module_.arch_parameters()
        self.arch_logits_ = [
            a.detach().cpu().numpy().astype(np.float64) for a in logits
        ]
        self.n_iter_ = len(net.history)
        # the architecture derived after the last step
        history = recorder.history
        arch = self._costs.to_ops([int(np.argmax(a)) for a in self.arch_logits_])
        cost = self._costs.cost_of(arch)
        final_loss = self._discrete_val_losses(net, X_val, y_val, [arch])[arch]
        history.append(
            history_record(
                len(history),
                self.max_iter,
                arch,
                cost,
                self._feasible(cost),
                final_loss,
            )
        )
        val_losses = None
        if self.select == "best_val_feasible":
            feasible = list(dict.fromkeys(h["arch"] for h in history if h["feasible"]))
            val_losses = self._discrete_val_losses(net, X_val, y_val, feasible)
        return history, val_losses

    def _select(self, history, val_losses):
        return self._select_by_rule(history, self.select, val_losses)
