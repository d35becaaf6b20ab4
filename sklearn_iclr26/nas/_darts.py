"""The search loop of the gradient-based searches: first-order DARTS on skorch.

:class:`BaseGradientNASSearch` is a :class:`BaseNASSearch` (the meta-estimator
template: split, search, select, refit) whose search step is a torch
estimator's training: it inherits
:class:`~sklearn_iclr26.utils._torch_estimator.BaseTorchEstimator`,
and the base's template trains the relaxed supernet (``nas/_supernet.py``,
the :meth:`~BaseGradientNASSearch._module_spec` hook) through the one engine
set-up with the bilevel skorch net (``nas/_bilevel_net.py``: a second
optimizer for the architecture logits, the
:meth:`~BaseGradientNASSearch._training_options` hook). This module supplies
the hook that modifies the logit gradient
(:meth:`BaseGradientNASSearch._modify_arch_gradient`: the ConNAS rule or the
penalty) and records the search history, and the selection.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import copy
import inspect
from abc import abstractmethod
from numbers import Real

import numpy as np

from sklearn_iclr26.nas._base_search import BaseNASSearch, history_record
from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions
from sklearn_iclr26.utils._torch import forward_module
from sklearn_iclr26.utils._torch_estimator import (
    TRAINING_CONSTRAINTS,
    BaseTorchEstimator,
)
from sklearn_iclr26.utils._verbose import log_progress

# numpydoc entries shared by the gradient searches' docstrings (the lines
# ``%(search_training_parameters)s`` / ``%(search_training_attributes)s``);
# ``{name}`` is the default read from the subclass's ``__init__``
_SEARCH_PARAMETERS = """\
alpha : float, default={alpha}
    L2 penalty of the supernet weights (their Adam ``weight_decay``).
batch_size : int or None, default={batch_size}
    Mini-batch size of both problems of the search, clipped to each
    part's size; ``None`` means full batches.
learning_rate_init : float, default={learning_rate_init}
    Adam learning rate of the supernet weights.
max_iter : int, default={max_iter}
    Epochs of the bilevel search (passes over the search-train part; one
    weight step and one logit step per mini-batch); the maximum when
    ``early_stopping=True``.
early_stopping : bool, default={early_stopping}
    Stop the search when the relaxed supernet's loss on the validation
    rows of the search (no further split) has not improved by ``tol``
    for ``n_iter_no_change`` epochs, and rewind it to its best epoch:
    the supernet, the logits and ``search_history_`` end there
    (skorch's ``EarlyStopping``). ``False`` runs ``max_iter`` epochs.
validation_fraction : float, default={validation_fraction}
    Fraction of the data used as the validation set of the search (the
    rows the logits descend, and early stopping's; stratified for
    classification).
n_iter_no_change : int, default={n_iter_no_change}
    Epochs without improvement before early stopping ends the search.
tol : float, default={tol}
    Minimum improvement of the validation loss (absolute).
warm_start : bool, default={warm_start}
    When ``fit`` is called again on data that gives the same supernet,
    continue the search (supernet weights, logits and their Adam states)
    for ``max_iter`` more epochs instead of starting anew; ``n_iter_`` and
    ``loss_curve_`` accumulate, ``search_history_`` holds the new steps.
callbacks : list of skorch callbacks or None, default={callbacks}
    Extra skorch callbacks of the supernet's net (copied in ``fit``); the
    refit network takes its own through ``final_estimator_params``.
%(training_parameters)s
random_state : int, RandomState instance or None, default={random_state}
    Seeds the split, the supernet, the logits and the refit.
verbose : int, default={verbose}
    If positive, print ``[ClassName] epoch i/n: train_loss ...`` after
    each search epoch and the selected architecture; 2 adds, per epoch,
    the derived architecture, its cost and feasibility."""

_SEARCH_ATTRIBUTES = """\
n_iter_ : int
    Number of search epochs run (``max_iter``, fewer with early stopping;
    accumulated over ``warm_start`` fits).
loss_curve_ : list of float
    Per search epoch, the mean over its steps of the relaxed supernet's
    loss on the step's validation batch (the loss the logits descend);
    ``len(loss_curve_) == n_iter_``.
validation_loss_curve_ : list of float or None
    With ``early_stopping=True``, per epoch, the relaxed supernet's loss
    on all the validation rows of the search; else None.
best_iter_ : int
    The epoch whose supernet and logits are kept (1-based): the best
    validation epoch with early stopping, else ``n_iter_``.
net_ : skorch.NeuralNet
    The supernet's trained bilevel net (``net_.module_``: the supernet
    and its logits; ``net_.history``: skorch's per-epoch record)."""


def _search_parameters_doc(cls):
    """The ``%(search_training_parameters)s`` text with ``cls``'s defaults."""
    defaults = {
        name: repr(param.default)
        for name, param in inspect.signature(cls.__init__).parameters.items()
    }
    return _SEARCH_PARAMETERS.format_map(defaults)


class _SearchRecorder:
    """The logit-gradient hook of one search: modify, record, report."""

    def __init__(self, search, n_steps):
        self.search = search
        self.costs = search._costs
        self.n_steps = n_steps
        self.history = []
        self.n_modified = 0

    def __deepcopy__(self, memo):
        # one recorder per fit: copies of the net (warm start) report to it
        return self

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
                level=2,
            )
            self.n_modified = 0
        return g


class BaseGradientNASSearch(BaseNASSearch, BaseTorchEstimator):
    """First-order DARTS bilevel search; subclasses modify the logit gradient.

    Hooks: :meth:`_modify_arch_gradient` (abstract). ``select`` is a
    parameter of every subclass. The supernet is trained by the torch base's
    template (``_train``), so the search has the base's training parameters
    (``alpha``, ``batch_size``, ``learning_rate_init``, ``max_iter``,
    ``callbacks``, ...), its ``[ClassName] epoch i/n`` progress and its
    training record (``n_iter_``, ``loss_curve_``, ``best_iter_``, ``net_``).
    Early stopping monitors the search's own validation rows (the logits'
    rows: no third split) and rewinds the search to its best epoch;
    ``warm_start`` continues the search (supernet, logits and their Adam
    states) on the next ``fit``.
    """

    _parameter_constraints: dict = {
        **BaseNASSearch._parameter_constraints,
        **{
            name: TRAINING_CONSTRAINTS[name]
            for name in (
                "alpha",
                "batch_size",
                "learning_rate_init",
                "max_iter",
                "early_stopping",
                "n_iter_no_change",
                "tol",
                "warm_start",
                "callbacks",
            )
        },
        "relaxation": [StrOptions({"softmax", "gumbel"})],
        "temperature": [Interval(Real, 0, None, closed="neither")],
        "arch_learning_rate": [Interval(Real, 0, None, closed="neither")],
        "arch_betas": [tuple],
        "arch_alpha": [Interval(Real, 0, None, closed="left")],
    }

    # the bilevel loss is the method: no other criterion replaces it
    _accepts_criterion = False

    #: shared docstring texts, filled by the torch base before its own
    _doc_texts = {
        "search_training_parameters": _search_parameters_doc,
        "search_training_attributes": _SEARCH_ATTRIBUTES,
    }

    @abstractmethod
    def _modify_arch_gradient(self, grad, arch_idx, cost, probs):
        """Return ``(grad, modified)``: the gradient the logits descend.

        ``grad``: the validation-loss gradient, one float64 array per edge;
        ``arch_idx``: the derived architecture (argmax per edge); ``cost``:
        its cost; ``probs``: the softmax of the logits per edge.
        """

    def _discrete_val_losses(self, X_val, y_val, archs):
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
                self.net_,
                X_val,
                aux={"y": y_val},
                dtype=self.dtype,
                func=per_row,
                check_finite=False,
            )
            return float(losses.mean())

        return {arch: loss_of(arch) for arch in archs}

    # -------------------------------------------- the torch base's hooks
    def _module_spec(self, X, n_outputs, sample_weight=None):
        """The relaxed supernet of the search space, with its logits."""
        from sklearn_iclr26.nas._supernet import RelaxedSupernet

        costs = self._costs
        supernet_class, supernet_params = costs.space.supernet(
            costs.n_features, costs.n_outputs
        )
        return RelaxedSupernet, {
            "supernet_class": supernet_class,
            "supernet_params": supernet_params,
            "n_ops": [len(ops) for ops in costs.ops],
            "relaxation": self.relaxation,
            "temperature": self.temperature,
        }

    def _criterion_spec(self, n_outputs):
        """The mean loss of both problems (the bilevel net's loss is skorch's)."""
        from torch import nn

        loss = nn.MSELoss if self.task == "regression" else nn.CrossEntropyLoss
        return loss, {}

    def _training_options(self, X, y):
        """The bilevel net: a logit optimizer, the gradient hook, paired batches."""
        import torch

        from sklearn_iclr26.nas._bilevel_net import _BilevelLoader, _BilevelNet

        X_val, y_val, recorder = self._bilevel_data
        n_val = len(X_val)
        batch_val = n_val if self.batch_size is None else min(self.batch_size, n_val)
        y_val = np.asarray(y_val)
        if y_val.dtype.kind == "f":
            y_val = np.require(y_val, dtype=self.dtype, requirements=["C", "W"])
        this_fit = {
            "arch_gradient_hook": recorder,
            "iterator_train__valid_X": np.require(
                X_val, dtype=self.dtype, requirements=["C", "W"]
            ),
            "iterator_train__valid_y": y_val,
            "iterator_train__valid_batch_size": batch_val,
        }
        if self.warm_start and hasattr(self, "net_"):
            # the base continues a copy of net_ where the spec is unchanged: that
            # copy pairs its batches with this fit's validation rows and reports
            # to this fit's recorder (a new object: the fitted net is untouched
            # if this fit fails)
            self.net_ = copy.copy(self.net_)
            for name, value in this_fit.items():
                setattr(self.net_, name, value)
        return {
            "net_class": _BilevelNet,
            "net_params": {
                "arch_optimizer": torch.optim.Adam,
                "arch_optimizer_params": {
                    "lr": self.arch_learning_rate,
                    "betas": tuple(self.arch_betas),
                    "weight_decay": self.arch_alpha,
                },
                "iterator_train": _BilevelLoader,
                **this_fit,
            },
        }

    def _validation_split(self, X, y):
        """Early stopping's rows: the search's validation rows, after the others."""
        n, n_val = len(X), len(self._bilevel_data[0])
        return np.arange(n - n_val), np.arange(n - n_val, n)

    def _after_training(self, X, y):
        # the fitted net does not keep this fit's recorder (and the search) alive
        self.net_.arch_gradient_hook = None
        self.arch_logits_ = [
            a.detach().cpu().numpy().astype(np.float64)
            for a in self.net_.module_.arch_parameters()
        ]

    def _raw_decision(self, X):
        """Raw output of the refitted network (``best_estimator_``)."""
        return self.best_estimator_._raw_decision(self._validate_for_predict(X))

    # ---------------------------------------------------------- the search
    def _search(self, data):
        X = np.asarray(data.X, dtype=np.float64)
        y_tr, y_val = data.y_search[data.train], data.y_search[data.val]
        if self.task == "regression":
            mean, std = y_tr.mean(), y_tr.std()
            std = std if std > 0 else 1.0
            y_tr = ((y_tr - mean) / std).reshape(-1, 1)
            y_val = ((y_val - mean) / std).reshape(-1, 1)
        X_tr, X_val = X[data.train], X[data.val]
        n_train = len(X_tr)
        bs = n_train if self.batch_size is None else min(self.batch_size, n_train)
        recorder = _SearchRecorder(self, n_steps=-(-n_train // bs))
        self._bilevel_data = (X_val, y_val, recorder)
        if self.early_stopping:  # the base holds out the rows of _validation_split
            self._train(
                np.concatenate([X_tr, X_val]),
                np.concatenate([y_tr, y_val]),
                self._costs.n_outputs,
            )
        else:
            self._train(X_tr, y_tr, self._costs.n_outputs)
        del self._bilevel_data
        # early stopping restored the best epoch's supernet and logits: the
        # search is rewound to it
        history = [h for h in recorder.history if h["epoch"] < self.best_iter_]
        # the architecture derived after the last step
        arch = self._costs.to_ops([int(np.argmax(a)) for a in self.arch_logits_])
        cost = self._costs.cost_of(arch)
        final_loss = self._discrete_val_losses(X_val, y_val, [arch])[arch]
        history.append(
            history_record(
                len(history),
                self.best_iter_,
                arch,
                cost,
                self._feasible(cost),
                final_loss,
            )
        )
        val_losses = None
        if self.select == "best_val_feasible":
            feasible = list(dict.fromkeys(h["arch"] for h in history if h["feasible"]))
            val_losses = self._discrete_val_losses(X_val, y_val, feasible)
        return history, val_losses

    def _select(self, history, val_losses):
        return self._select_by_rule(history, self.select, val_losses)
