"""torch module, loss and loss-term callback of the backdoor-adjusted estimators.

The method is Prism (ICLR 2026). Imported lazily (inside ``fit``); module
level so that fitted estimators pickle.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import torch
from skorch.callbacks import Callback
from torch import nn
from torch.nn import functional as F

from sklearn_iclr26.utils._validation import store_params
from sklearn_iclr26.utils._verbose import log_progress

#: the three loss terms, as recorded per epoch in the net's history
TERMS = ("factual", "adjusted", "uniformity")


def uniformity_loss(weights, t=2.0):
    """Per-sample uniformity loss of the confounder weights.

    ``log sum_{i,j} exp(2 t <a_i, a_j> - 2 t)`` over the L2-normalised weight
    vectors ``a_i`` (diagonal terms included, as in the official code), for
    ``weights`` of shape (batch, n_confounders, embed_dim). Equals
    ``log(n ** 2)`` when all ``a_i`` are identical; lower when they diverge.
    """
    normed = weights / (weights.norm(dim=-1, keepdim=True) + 1e-8)
    gram = normed @ normed.transpose(1, 2)
    return torch.logsumexp((2 * t * gram - 2 * t).flatten(1), dim=1)


class PrismNet(nn.Module):
    """Primary/context embeddings, learned background states, shared MLP.

    ``z_0 = E_p(x_p) + E_c(x_c)`` (factual copy) and ``z_i = E_p(x_p) +
    E_c(x_c) * a_i(x_c)`` for ``i = 1..n`` (adjusted copies), where ``a_i`` are
    the ``n_confounders`` weight vectors the confounder encoder gives each
    row. All copies go through one backbone ``f`` (the first hidden layer)
    and head ``g`` (the other hidden layers and the output layer). The factual
    output is ``g(f(z_0))``; the adjusted output is ``g(mean_i f(z_i))``
    (``adjust_in="hidden"``, official code) or ``mean_i g(f(z_i))``
    (``"output"``, paper formula; for classifiers the mean of the copies'
    class probabilities, returned as log-probabilities).

    Parameters are created in a fixed order, the confounder encoder last, so
    a model with ``n_confounders=0`` draws the same initial weights for every
    other part as one with ``n_confounders > 0`` under the same seed.
    """

    def __init__(
        self,
        primary,
        context,
        n_outputs,
        embed_dim=16,
        hidden_layer_sizes=(32, 32),
        n_confounders=2,
        confounder_hidden_size=16,
        weight_activation="sigmoid",
        adjust_in="hidden",
        task="regression",
        dtype=None,
        background_states="learned",
    ):
        super().__init__()
        self.background_states = background_states
        self.primary = tuple(int(i) for i in primary)
        self.context = tuple(int(i) for i in context)
        self.n_confounders = int(n_confounders)
        self.embed_dim = int(embed_dim)
        self.weight_activation = weight_activation
        self.adjust_in = adjust_in
        self.task = task
        self.register_buffer(
            "primary_index", torch.as_tensor(self.primary, dtype=torch.long)
        )
        self.register_buffer(
            "context_index", torch.as_tensor(self.context, dtype=torch.long)
        )
        self.embed_primary = (
            nn.Linear(len(self.primary), embed_dim, dtype=dtype)
            if self.primary
            else None
        )
        self.embed_context = nn.Linear(len(self.context), embed_dim, dtype=dtype)
        # backbone f: the first hidden layer; head g: the other hidden layers
        # and the output layer (a non-linear head, as the official pToExpr, so
        # that averaging in hidden space differs from averaging outputs)
        sizes = tuple(hidden_layer_sizes)
        self.backbone = nn.Sequential(
            nn.Linear(embed_dim, sizes[0], dtype=dtype), nn.ReLU()
        )
        layers, n_in = [], sizes[0]
        for n_hidden in sizes[1:]:
            layers += [nn.Linear(n_in, n_hidden, dtype=dtype), nn.ReLU()]
            n_in = n_hidden
        layers.append(nn.Linear(n_in, n_outputs, dtype=dtype))
        self.head = nn.Sequential(*layers)
        if self.n_confounders > 0:
            self.confounder_encoder = nn.Sequential(
                nn.Linear(len(self.context), confounder_hidden_size, dtype=dtype),
                nn.ReLU(),
                nn.Linear(
                    confounder_hidden_size, embed_dim * self.n_confounders, dtype=dtype
                ),
            )
        else:
            self.confounder_encoder = None

    def _embeddings(self, X):
        ec = self.embed_context(X[:, self.context_index])
        if self.embed_primary is None:
            return torch.zeros_like(ec), ec
        return self.embed_primary(X[:, self.primary_index]), ec

    def confounder_weights(self, X):
        """Weights ``a_i`` of shape (batch, n_confounders, embed_dim).

        ``background_states="learned"``: the encoder's output; ``"constant"``:
        0.5 everywhere (no encoder signal, no diversity); ``"random"``:
        ``sigmoid(N(0, 1))`` drawn fresh on every training pass (torch's
        global generator), their mean 0.5 in evaluation mode.
        """
        states = getattr(self, "background_states", "learned")
        if states != "learned":
            shape = (X.shape[0], self.n_confounders, self.embed_dim)
            if states == "random" and self.training:
                return torch.sigmoid(torch.randn(shape, dtype=X.dtype, device=X.device))
            return torch.full(shape, 0.5, dtype=X.dtype, device=X.device)
        raw = self.confounder_encoder(X[:, self.context_index])
        raw = raw.view(-1, self.n_confounders, self.embed_dim)
        if self.weight_activation == "softmax":
            return torch.softmax(raw, dim=-1)
        return torch.sigmoid(raw)

    def factual(self, X):
        ep, ec = self._embeddings(X)
        return self.head(self.backbone(ep + ec))

    def copy_outputs(self, X):
        """Head outputs of every adjusted copy: (batch, n_confounders, n_outputs)."""
        ep, ec = self._embeddings(X)
        a = self.confounder_weights(X)
        hidden = self.backbone(ep[:, None, :] + ec[:, None, :] * a)
        return self.head(hidden)

    def forward(self, X, with_adjusted=True):
        """Factual output, adjusted output (or ``None``) and confounder weights."""
        ep, ec = self._embeddings(X)
        if self.confounder_encoder is None or not with_adjusted:
            return self.head(self.backbone(ep + ec)), None, None
        # the factual copy runs alone (same shapes as the plain model, so the
        # reduction to n_confounders=0 is bit-exact)
        y_fact = self.head(self.backbone(ep + ec))
        a = self.confounder_weights(X)
        hidden = self.backbone(ep[:, None, :] + ec[:, None, :] * a)
        if self.adjust_in == "hidden":
            y_adj = self.head(hidden.mean(1))
        else:
            copies = self.head(hidden)
            if self.task == "classification":
                # log of the mean of the copies' class probabilities
                y_adj = torch.logsumexp(
                    F.log_softmax(copies, dim=-1), dim=1
                ) - math.log(self.n_confounders)
            else:
                y_adj = copies.mean(1)
        return y_fact, y_adj, a


class PrismLoss(nn.Module):
    """Per-sample ``L1 + adjusted_weight * L2 + uniformity_weight * L3``.

    ``L1``/``L2``: the ``loss`` of the factual/adjusted outputs: Huber
    (``SmoothL1``, ``beta=1``) or squared error summed over the outputs
    (regression), or cross-entropy (``"log_loss"``, classification; for
    ``adjust_in="output"`` the adjusted output is already a log-probability).
    ``L3``: :func:`uniformity_loss`. Terms whose weight is 0 are left out of
    the loss (so they add no gradient at all) but still recorded. ``terms_``
    collects, per training batch, the batch size and the batch means of the
    three terms (read by :class:`LossTermHistory`).
    """

    def __init__(
        self,
        adjusted_weight=1.0,
        uniformity_weight=1.0,
        uniformity_t=2.0,
        loss="huber",
        adjusted_is_log_proba=False,
    ):
        super().__init__()
        store_params(self, locals())
        self.terms_ = []

    def _base(self, y_pred, y_true, log_proba=False):
        if self.loss == "log_loss":
            if log_proba:
                return F.nll_loss(y_pred, y_true.long(), reduction="none")
            return F.cross_entropy(y_pred, y_true.long(), reduction="none")
        if self.loss == "huber":
            losses = F.smooth_l1_loss(y_pred, y_true, reduction="none", beta=1.0)
        else:
            losses = F.mse_loss(y_pred, y_true, reduction="none")
        return losses.sum(dim=1)

    def forward(self, outputs, y_true, **aux):
        y_fact, y_adj, a = outputs
        l1 = self._base(y_fact, y_true)
        total = l1
        nan = torch.full_like(l1, float("nan"))
        l2 = l3 = nan
        if y_adj is not None:
            l2 = self._base(y_adj, y_true, log_proba=self.adjusted_is_log_proba)
            l3 = uniformity_loss(a, self.uniformity_t)
            if self.adjusted_weight != 0:
                total = total + self.adjusted_weight * l2
            if self.uniformity_weight != 0:
                total = total + self.uniformity_weight * l3
        if torch.is_grad_enabled():
            self.terms_.append(
                (
                    len(l1),
                    float(l1.detach().mean()),
                    float(l2.detach().mean()),
                    float(l3.detach().mean()),
                )
            )
        return total


class LossTermHistory(Callback):
    """skorch callback: the per-epoch means of the three loss terms.

    At the end of each epoch, reads the training-batch records of
    :class:`PrismLoss` (``criterion_.terms_``), writes their
    batch-size-weighted means to the net's history as ``factual_loss``,
    ``adjusted_loss`` and ``uniformity_loss`` (``nan`` without an adjusted
    branch), and empties the records. When ``owner`` is given, prints the
    three values through its ``verbose`` printer at level 2; the reference
    to the owner is dropped when training ends.
    """

    def __init__(self, owner=None):
        self.owner = owner

    def on_epoch_begin(self, net, **kwargs):
        net.criterion_.terms_ = []

    def on_epoch_end(self, net, **kwargs):
        terms = net.criterion_.terms_
        total = max(sum(t[0] for t in terms), 1)
        means = [sum(t[0] * t[k] for t in terms) / total for k in (1, 2, 3)]
        for term, value in zip(TERMS, means):
            net.history.record(f"{term}_loss", value)
        net.criterion_.terms_ = []
        if self.owner is not None:
            log_progress(
                self.owner,
                f"epoch {len(net.history)} loss terms: factual {means[0]:.4g}, "
                f"adjusted {means[1]:.4g}, uniformity {means[2]:.4g}",
                level=2,
            )

    def on_train_end(self, net, **kwargs):
        self.owner = None
