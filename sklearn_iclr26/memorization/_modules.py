"""torch modules and losses of the memorization estimators.

Imported lazily (inside ``fit``) so that ``import sklearn_iclr26`` does not
import torch; defined at module level so that fitted estimators pickle.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import torch
from skorch.callbacks import Callback
from torch import nn
from torch.nn import functional as F

from sklearn_iclr26.utils._torch import forward_module
from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress

ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU}


class SGDMomentum(torch.optim.SGD):
    """SGD with momentum 0.9 by default (the CSG paper's optimizer)."""

    def __init__(self, params, lr=0.05, momentum=0.9, weight_decay=0.0, **kwargs):
        super().__init__(
            params, lr=lr, momentum=momentum, weight_decay=weight_decay, **kwargs
        )


_ACT_FUNCS = {"relu": F.relu, "tanh": torch.tanh, "gelu": F.gelu}


class FeatureMLP(nn.Module):
    """``Linear -> activation [-> dropout]`` layers returning every hidden layer.

    Activations and dropout are functional, so that the module tree stays
    small (switching train/eval mode walks it at every step).
    """

    def __init__(
        self, n_features, hidden_layer_sizes, activation="relu", dropout=0.0, dtype=None
    ):
        super().__init__()
        linears, n_in = [], n_features
        for n_hidden in hidden_layer_sizes:
            linears.append(nn.Linear(n_in, n_hidden, dtype=dtype))
            n_in = n_hidden
        self.linears = nn.ModuleList(linears)
        self.activation = activation
        self.dropout = float(dropout)
        self.n_out = n_in

    def forward(self, X):
        act = _ACT_FUNCS[self.activation]
        hidden = []
        h = X
        for linear in self.linears:
            h = act(linear(h))
            if self.dropout > 0:
                h = F.dropout(h, self.dropout, self.training)
            hidden.append(h)
        return h, hidden


class MLPNet(nn.Module):
    """Plain MLP classifier ``features -> Linear`` (the CSG network).

    ``forward`` ignores the extra keyword arguments (sample ids, weights) that
    ride along with the batch.
    """

    def __init__(
        self,
        n_features,
        n_outputs,
        hidden_layer_sizes=(64,),
        activation="relu",
        dtype=None,
    ):
        super().__init__()
        self.features = FeatureMLP(
            n_features, hidden_layer_sizes, activation, 0.0, dtype
        )
        self.classifier = nn.Linear(self.features.n_out, n_outputs, dtype=dtype)

    def forward(self, X, **aux):
        return self.classifier(self.features(X)[0])

    def representation(self, X):
        """The last hidden layer."""
        return self.features(X)[0]


class RLPHeads(nn.Module):
    """``n_label_sets`` independent heads on one layer, as batched parameters.

    ``head="linear"``: ``z = h W_s + b_s``; ``head="mlp"``: one hidden ReLU layer
    of the input's width. ``forward(h, detach_params=True)`` uses detached
    parameters (the heads are then frozen for that loss term).
    """

    def __init__(self, n_in, n_out, n_sets, head="linear", dtype=None):
        super().__init__()
        self.head = head
        shapes = [(n_in, n_out)] if head == "linear" else [(n_in, n_in), (n_in, n_out)]
        weights, biases = [], []
        for fan_in, fan_out in shapes:
            bound = 1.0 / fan_in**0.5  # nn.Linear's default initialisation
            weights.append(
                nn.Parameter(
                    torch.empty(n_sets, fan_in, fan_out, dtype=dtype).uniform_(
                        -bound, bound
                    )
                )
            )
            biases.append(
                nn.Parameter(
                    torch.empty(n_sets, fan_out, dtype=dtype).uniform_(-bound, bound)
                )
            )
        self.weights = nn.ParameterList(weights)
        self.biases = nn.ParameterList(biases)

    def forward(self, h, detach_params=False):
        # h: (B, d) -> (B, S, n_out)
        params = list(zip(self.weights, self.biases))
        if detach_params:
            params = [(w.detach(), b.detach()) for w, b in params]
        (w, b) = params[0]
        z = torch.einsum("bd,sdk->bsk", h, w) + b
        if len(params) > 1:
            w2, b2 = params[1]
            z = torch.einsum("bsd,sdk->bsk", F.relu(z), w2) + b2
        return z


class RLPNet(nn.Module):
    """MLP with random-label prediction (RLP) heads on chosen hidden layers.

    With ``random_labels`` given (training), ``forward`` returns
    ``(class_logits, rnd_logits, reg_logits)``: ``rnd_logits`` are the heads on
    the **detached** features (their loss trains the heads only), ``reg_logits``
    the heads with **detached parameters** on the live features (their loss
    trains the features only). Without ``random_labels`` it returns the class
    logits alone. Head logits have shape ``(B, n_layers, n_label_sets,
    n_random_labels)``.

    With ``n_label_groups > 1`` (the per-class variant) every head has one
    output block of ``n_random_labels`` per group (class), and row ``i`` is
    scored by the block of its group ``label_group[i]``: per-class heads, the
    random labels nested in the classes.
    """

    def __init__(
        self,
        n_features,
        n_outputs,
        hidden_layer_sizes=(64, 64),
        rlp_layers=(1,),
        n_random_labels=2,
        n_label_sets=1,
        head="linear",
        activation="relu",
        dropout=0.0,
        compute_reg=True,
        n_label_groups=1,
        dtype=None,
    ):
        super().__init__()
        self.features = FeatureMLP(
            n_features, hidden_layer_sizes, activation, dropout, dtype
        )
        self.classifier = nn.Linear(self.features.n_out, n_outputs, dtype=dtype)
        self.n_label_groups = int(n_label_groups)
        self.rlp_layers = tuple(int(layer) for layer in rlp_layers)
        self.n_label_sets = int(n_label_sets)
        self.n_random_labels = int(n_random_labels)
        self.compute_reg = bool(compute_reg)
        self.heads = nn.ModuleList(
            [
                RLPHeads(
                    hidden_layer_sizes[layer],
                    n_random_labels * self.n_label_groups,
                    self.n_label_sets,
                    head,
                    dtype,
                )
                for layer in self.rlp_layers
            ]
        )

    def _heads(self, hidden, label_group, *, detach_features, detach_params):
        out = []
        for layer, heads in zip(self.rlp_layers, self.heads):
            h = hidden[layer].detach() if detach_features else hidden[layer]
            out.append(heads(h, detach_params=detach_params))
        z = torch.stack(out, dim=1)  # (B, L, S, G * n)
        if self.n_label_groups == 1:
            return z
        if label_group is None:
            raise ValueError("Per-class RLP heads need each row's label_group.")
        B, L, S, _ = z.shape
        z = z.reshape(B, L, S, self.n_label_groups, self.n_random_labels)
        index = label_group.long().reshape(B, 1, 1, 1, 1)
        index = index.expand(B, L, S, 1, self.n_random_labels)
        return z.gather(3, index).squeeze(3)

    def forward(self, X, random_labels=None, label_group=None, **aux):
        last, hidden = self.features(X)
        logits = self.classifier(last)
        if random_labels is None:
            return logits
        rnd = self._heads(
            hidden, label_group, detach_features=True, detach_params=False
        )
        if not self.compute_reg:  # memorization_weight = 0: no L_reg
            return logits, rnd, None
        reg = self._heads(
            hidden, label_group, detach_features=False, detach_params=True
        )
        return logits, rnd, reg

    def head_logits(self, X, label_group=None):
        """Logits of every head on ``X`` (no gradient routing)."""
        _, hidden = self.features(X)
        return self._heads(
            hidden, label_group, detach_features=False, detach_params=False
        )

    def representation(self, X):
        """The last hidden layer."""
        return self.features(X)[0]


def complementary_cross_entropy(logits, labels):
    """``-log(1 - p_r)`` computed stably from logits (last axis), per element.

    ``1 - p_r = sum_{k != r} exp(z_k) / sum_k exp(z_k)``, so the loss is
    ``logsumexp(z) - logsumexp(z without r)``.
    """
    mask = F.one_hot(labels, logits.shape[-1]).bool()
    others = logits.masked_fill(mask, float("-inf"))
    return torch.logsumexp(logits, dim=-1) - torch.logsumexp(others, dim=-1)


def _head_ce(logits, labels):
    # logits (B, L, S, n), labels (B, S) -> (B, L, S)
    labels = labels.unsqueeze(1).expand(-1, logits.shape[1], -1)
    log_p = torch.log_softmax(logits, dim=-1)
    return -log_p.gather(-1, labels.unsqueeze(-1)).squeeze(-1)


def _head_cce(logits, labels):
    labels = labels.unsqueeze(1).expand(-1, logits.shape[1], -1)
    return complementary_cross_entropy(logits, labels)


class RLPLoss(nn.Module):
    """Per-sample ``L_class + L_rnd + memorization_weight * L_reg`` (RLP paper).

    ``L_rnd`` (cross-entropy of the heads on the random labels) and ``L_reg``
    (complementary cross-entropy ``-log(1 - p_r)``) are averaged over heads;
    the routing of their gradients is done by :class:`RLPNet`.
    """

    def __init__(self, memorization_weight=0.0):
        super().__init__()
        self.memorization_weight = float(memorization_weight)

    def components(self, y_pred, y_true, random_labels):
        logits, rnd, reg = y_pred
        loss_cls = F.cross_entropy(logits, y_true, reduction="none")
        loss_rnd = _head_ce(rnd, random_labels).mean(dim=(1, 2))
        loss_reg = (
            torch.zeros_like(loss_cls)
            if reg is None
            else _head_cce(reg, random_labels).mean(dim=(1, 2))
        )
        return loss_cls, loss_rnd, loss_reg

    def forward(self, y_pred, y_true, random_labels=None, **aux):
        if not isinstance(y_pred, tuple):  # no heads (e.g. a plain forward)
            return F.cross_entropy(y_pred, y_true, reduction="none")
        loss_cls, loss_rnd, loss_reg = self.components(y_pred, y_true, random_labels)
        loss = loss_cls + loss_rnd
        if self.memorization_weight > 0:
            loss = loss + self.memorization_weight * loss_reg
        return loss


class PerSampleCrossEntropy(nn.Module):
    """Cross-entropy with ``reduction="none"`` that ignores extra batch arrays."""

    def forward(self, y_pred, y_true, **aux):
        return F.cross_entropy(y_pred, y_true, reduction="none")


def _assigned_label_stats(module, xb, random_labels, label_group=None, **aux):
    """Per row, layer and label set: ``p_r`` and whether the head predicts ``r``."""
    logits = module.head_logits(xb, label_group)  # (B, L, S, n)
    labels = random_labels.long().unsqueeze(1).expand(-1, logits.shape[1], -1)
    proba = torch.softmax(logits, dim=-1)
    p_r = proba.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    correct = (logits.argmax(dim=-1) == labels).to(p_r.dtype)
    return torch.stack([p_r, correct], dim=-1)


class RLPMonitor(Callback):
    """Random-label accuracy and ``p_r`` of the RLP heads, per epoch.

    Evaluated on the net's training rows (the input dict's ``X``,
    ``random_labels``, ``sample_id`` and, for per-class heads,
    ``label_group``) in eval mode (no dropout) at initialisation and after
    every epoch, through ``forward_module`` (which forks torch's RNG, so
    monitoring does not change training). A continued
    (``warm_start``) run extends the record.

    Attributes
    ----------
    accuracy_ : list of ndarray of shape (n_rlp_layers,)
        Per epoch (the first entry at initialisation): accuracy of the heads
        on the random labels, mean over label sets.
    p_r_ : list of ndarray of shape (n_train,)
        Per epoch: the probability the heads of the last listed layer give to
        each row's random label, mean over label sets.
    sample_id_ : ndarray of int
        The rows (indices into the fit data) the record covers.
    """

    def __init__(self, owner=None, dtype="float64", n_jobs=None):
        store_params(self, locals())

    def initialize(self):
        self.accuracy_, self.p_r_, self.sample_id_ = [], [], None
        return self

    def _record(self, net):
        X, aux = self.inputs_
        stats = forward_module(
            net,
            X,
            aux=aux,
            dtype=self.dtype,
            n_jobs=self.n_jobs,
            func=_assigned_label_stats,
        )  # (n, L, S, 2)
        self.accuracy_.append(stats[..., 1].mean(axis=(0, 2)))
        self.p_r_.append(stats[:, -1, :, 0].mean(axis=1))
        return self.accuracy_[-1]

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        aux = {"random_labels": X["random_labels"]}
        if "label_group" in X:
            aux["label_group"] = X["label_group"]
        self.inputs_ = (X["X"], aux)
        ids = np.asarray(X["sample_id"])
        if self.sample_id_ is None or not np.array_equal(ids, self.sample_id_):
            # a fresh record (not a continuation on the same rows)
            self.accuracy_, self.p_r_, self.sample_id_ = [], [], ids
            self._record(net)

    def on_epoch_end(self, net, **kwargs):
        acc = self._record(net)
        log_progress(
            self.owner,
            f"epoch {len(net.history)}: random-label accuracy per layer "
            + ", ".join(f"{a:.3f}" for a in acc),
            level=2,
        )

    def on_train_end(self, net, **kwargs):
        # the fitted net keeps neither the data nor the estimator alive
        self.inputs_ = None
        self.owner = None
