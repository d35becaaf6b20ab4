"""torch module, loss and callback of the sparse autoencoder.

Imported lazily (inside ``fit``); defined at module level so fitted
estimators pickle.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import torch
from skorch.callbacks import Callback
from torch import nn

from sklearn_iclr26.utils._torch import _PREPROCESS_ADVICE, _NonFiniteError

LP_EPS = 1e-3  # smoothing of the adaptive L_p weights (caps them at p eps^(p-1))


class SAEModule(nn.Module):
    """Sparse autoencoder: ``z = sparsify(W_enc (x - b_dec) + b_enc)``.

    The reconstruction is ``x_hat = z W_dec + b_dec``.

    ``W_dec`` has shape (n_components, n_features): its rows are the dictionary
    atoms (scikit-learn's ``components_`` convention), kept at unit norm by
    :class:`UnitNormDecoder`. The encoder starts as the decoder's transpose
    and ``b_dec`` at the data mean. With ``structured_rank`` a low-rank code
    ``R = (x - b_dec) A B`` (rank at most ``structured_rank``) is added to the
    sparse code before decoding; its batch matrix carries a nuclear-norm
    penalty.
    """

    def __init__(
        self,
        n_features,
        n_components,
        sparsity="topk",
        k=1,
        positive_codes=True,
        structured_rank=None,
        data_mean=None,
        lp_exponent=1.0,
        encoder="linear",
        record_codes=False,
        dtype=None,
    ):
        super().__init__()
        # the p-annealing callback reads the last training batch's sparse codes
        self.record_codes = record_codes
        self.last_codes = None
        W = torch.randn(n_components, n_features, dtype=dtype)
        W = W / W.norm(dim=1, keepdim=True).clamp_min(1e-12)
        self.W_dec = nn.Parameter(W)
        self.encoder = encoder
        if encoder == "linear":
            self.W_enc = nn.Parameter(W.T.clone())
            self.b_enc = nn.Parameter(torch.zeros(n_components, dtype=dtype))
        mean = torch.zeros(n_features, dtype=dtype)
        if data_mean is not None:
            # a copy: as_tensor would share (and training update) the array
            mean = torch.tensor(np.asarray(data_mean), dtype=dtype)
        self.b_dec = nn.Parameter(mean)
        self.sparsity = sparsity
        self.k = k
        self.positive_codes = positive_codes
        self.structured_rank = structured_rank
        self.lp_exponent = lp_exponent
        # inference threshold of BatchTopK (set after training)
        self.register_buffer("threshold", torch.zeros((), dtype=dtype))
        if structured_rank:
            scale = 1.0 / np.sqrt(n_features)
            self.A = nn.Parameter(
                scale * torch.randn(n_features, structured_rank, dtype=dtype)
            )
            self.B = nn.Parameter(
                0.01 * torch.randn(structured_rank, n_components, dtype=dtype)
            )

    def pre_activations(self, X):
        return (X - self.b_dec) @ self.W_enc + self.b_enc

    def matching_pursuit(self, X, return_residual=False):
        """``k`` matching-pursuit steps over the decoder atoms (MP-SAE).

        The encoder of Costa et al. (2025), "From Flat to Hierarchical:
        Extracting Sparse Representations with Matching Pursuit": from the
        residual ``r = x - b_dec``, each step selects the atom most correlated
        with the residual (``argmax_j <r, d_j>``, or ``argmax_j |<r, d_j>|``
        without ``positive_codes``), adds the correlation ``c`` to that code
        entry and removes ``c d_j`` from the residual. The atoms are unit norm,
        so each step is an exact projection and ``||r||`` never increases.
        With ``positive_codes`` a negative best correlation adds 0 (the code
        stays non-negative). The selection is not differentiable; the
        gradient flows, as in the paper's unrolled encoder, through the
        selected correlations and residual updates into ``W_dec`` and
        ``b_dec``.

        Vectorised over the batch: one ``(batch, n_features) x (n_features,
        n_components)`` product gives all correlations, then each step updates
        them by the selected rows of the Gram matrix ``W W^T``
        (``<r - c d_j, d_i> = <r, d_i> - c <d_j, d_i>``), an ``O(batch x
        n_components)`` gather instead of a product per step. These
        correlations only choose the atoms; the coefficient of each step is
        recomputed from the explicit residual, so the codes and the gradient
        are those of the plain loop.

        With ``return_residual`` it returns ``(Z, R)``: ``R`` is the final
        residual, so ``X - R = Z W_dec + b_dec`` (up to rounding), the
        reconstruction without the dense decoding product (training uses it:
        one ``(batch, n_components) x (n_components, n_features)`` product
        forward and two backward fewer per step).
        """
        W = self.W_dec
        R = X - self.b_dec
        n, m = R.shape[0], W.shape[0]
        with torch.no_grad():
            C = R @ W.T
            G = W @ W.T if self.k > 1 else None
        selected, coefs = [], []
        for step in range(self.k):
            with torch.no_grad():
                j = C.argmax(dim=1) if self.positive_codes else C.abs().argmax(dim=1)
            # index_select (not W[j]): several times faster on the CPU, and its
            # backward is one index_add
            atoms = W.index_select(0, j)
            c = (R * atoms).sum(dim=1)
            if self.positive_codes:
                c = torch.relu(c)
            selected.append(j)
            coefs.append(c)
            R = R - c[:, None] * atoms
            if step + 1 < self.k:
                with torch.no_grad():
                    C.addcmul_(c.detach()[:, None], G.index_select(0, j), value=-1)
        # the k (atom, coefficient) pairs of each row into its code, summed
        # where an atom was selected more than once, in one scatter
        Z = torch.zeros(n, m, dtype=R.dtype, device=X.device)
        Z = Z.scatter_add(1, torch.stack(selected, 1), torch.stack(coefs, 1))
        return (Z, R) if return_residual else Z

    def sparse_code(self, X, batch_topk=None):
        if self.encoder == "matching_pursuit":
            return self.matching_pursuit(X)
        pre = self.pre_activations(X)
        if self.sparsity in ("l1", "lp"):
            return torch.relu(pre)
        if self.sparsity == "batchtopk":
            act = torch.relu(pre)
            if batch_topk:  # training: keep the k * batch largest of the batch
                flat = act.flatten()
                n_keep = min(self.k * act.shape[0], flat.numel())
                idx = torch.topk(flat, n_keep).indices
                mask = torch.zeros_like(flat)
                mask[idx] = 1.0
                return act * mask.view_as(act)
            return act * (act > self.threshold)
        # topk: the k largest pre-activations of each row
        values, idx = torch.topk(pre, self.k, dim=1)
        if self.positive_codes:
            values = torch.relu(values)
        return torch.zeros_like(pre).scatter(1, idx, values)

    def low_rank_code(self, X):
        return (X - self.b_dec) @ self.A @ self.B

    def encode(self, X, **aux):
        z = self.sparse_code(X)
        if self.structured_rank:
            z = z + self.low_rank_code(X)
        return z

    def sparsity_penalty(self, s):
        """Per-row penalty of the sparse code: L1, or the adaptive L_p.

        ``"lp"``: iteratively reweighted L1, the majorisation-minimisation
        step of the L_p quasi-norm ``sum_j (s_j + eps)^p`` (``0 < p <= 1``):
        each entry is weighted by ``p (s_j + eps)^(p - 1)`` computed from the
        current codes and held fixed (detached) for the step, so small codes
        are pushed to zero harder than large ones (less shrinkage of the
        active features than L1). The gradient equals that of the smooth
        L_p surrogate; with ``p = 1`` every weight is exactly 1 (L1).
        """
        if self.sparsity != "lp":
            return s.abs().sum(dim=1)
        weights = self.lp_exponent * (s.detach().abs() + LP_EPS) ** (
            self.lp_exponent - 1.0
        )
        return (weights * s.abs()).sum(dim=1)

    def decode(self, Z):
        return Z @ self.W_dec + self.b_dec

    def forward(self, X, **aux):
        if self.encoder == "matching_pursuit":
            # x_hat = Z W_dec + b_dec = X - (final residual): the same value and
            # gradient, without the dense decoding product
            s, residual = self.matching_pursuit(X, return_residual=True)
            x_hat, low = X - residual, None
        else:
            # the training objective (also on validation batches): BatchTopK
            # over the batch, not the inference threshold
            s = self.sparse_code(X, batch_topk=True)
            if self.record_codes and self.training:
                self.last_codes = s.detach()
            z = s
            low = None
            if self.structured_rank:
                low = self.low_rank_code(X)
                if not bool(torch.isfinite(low).all()):
                    # svdvals would fail with a bare torch LinAlgError
                    raise _NonFiniteError(
                        "The low-rank code is not finite: training diverged. "
                        + _PREPROCESS_ADVICE
                    )
                z = s + low
            x_hat = self.decode(z)
        l1 = self.sparsity_penalty(s)
        nuclear = (
            torch.linalg.svdvals(low).sum() * torch.ones_like(l1) / X.shape[0]
            if low is not None
            else torch.zeros_like(l1)
        )
        return x_hat, l1, nuclear


class SAELoss(nn.Module):
    """Per-sample ``||x - x_hat||^2 + l1_weight * ||s||_1 + nuclear share``."""

    def __init__(self, l1_weight=0.0, nuclear_weight=0.0):
        super().__init__()
        self.l1_weight = l1_weight
        self.nuclear_weight = nuclear_weight

    def forward(self, y_pred, y_true, **aux):
        x_hat, l1, nuclear = y_pred
        loss = ((x_hat - y_true) ** 2).sum(dim=1)
        return loss + self.l1_weight * l1 + self.nuclear_weight * nuclear


class UnitNormDecoder(Callback):
    """Renormalise the decoder atoms to unit norm after every optimizer step.

    skorch calls ``on_batch_end`` after the training step (the optimizer's
    ``step``), so the constraint holds after every step. ``norms_`` records
    the largest deviation from 1 seen after a renormalisation (a check).
    """

    def initialize(self):
        self.max_deviation_ = 0.0
        return self

    def on_batch_end(self, net, batch=None, training=None, **kwargs):
        if not training:
            return
        with torch.no_grad():
            W = net.module_.W_dec
            W.div_(W.norm(dim=1, keepdim=True).clamp_min(1e-12))
            dev = float((W.norm(dim=1) - 1).abs().max())
        self.max_deviation_ = max(self.max_deviation_, dev)


class LpAnnealing(Callback):
    """p-annealing of the L_p penalty (dictionary_learning's ``PAnnealTrainer``).

    The exponent ``p`` of the module's adaptive L_p penalty goes linearly from
    1 to ``p_end`` in ``n_updates`` steps, at epochs spread evenly over the
    ``max_epochs`` of training (``anneal_start`` = the first epoch,
    ``anneal_end`` = the last: the schedule of ``PAnnealTrainer`` counted in
    epochs). At every change of ``p`` after the first, the penalty's
    coefficient (the criterion's ``l1_weight``) is multiplied by
    ``mean ||s||_p^p / mean ||s||_{p_next}^{p_next}`` over the last
    ``queue_length`` training batches' sparse codes (their ``Lp^p`` mode), so
    the penalty keeps its size as ``p`` falls. ``p_history_`` and
    ``coef_history_`` record ``(epoch, p, coefficient)`` at each change.
    """

    def __init__(self, p_end, l1_weight, max_epochs, n_updates=10, queue_length=10):
        self.p_end = p_end
        self.l1_weight = l1_weight
        self.max_epochs = max_epochs
        self.n_updates = n_updates
        self.queue_length = queue_length

    def initialize(self):
        n = max(1, min(self.n_updates, self.max_epochs))
        self.update_epochs_ = np.unique(
            np.linspace(0, self.max_epochs - 1, n).round().astype(int)
        )
        self.p_values_ = np.linspace(1.0, self.p_end, len(self.update_epochs_))
        return self

    def on_train_begin(self, net, **kwargs):
        self.epoch_ = 0
        self.step_ = 0
        self.next_p_ = None
        self.queue_ = []
        self.history_ = []
        net.module_.record_codes = True
        net.module_.lp_exponent = 1.0
        net.criterion_.l1_weight = float(self.l1_weight)

    def on_epoch_begin(self, net, **kwargs):
        if self.step_ < len(self.update_epochs_) and (
            self.epoch_ >= self.update_epochs_[self.step_]
        ):
            if self.next_p_ is not None and self.queue_:
                now, nxt = np.mean(self.queue_, axis=0)
                if nxt > 0:
                    net.criterion_.l1_weight *= float(now / nxt)
            p = float(self.p_values_[self.step_])
            net.module_.lp_exponent = p
            self.step_ += 1
            self.next_p_ = (
                float(self.p_values_[self.step_])
                if self.step_ < len(self.p_values_)
                else None
            )
            self.history_.append((self.epoch_, p, float(net.criterion_.l1_weight)))
        self.epoch_ += 1

    def on_batch_end(self, net, batch=None, training=None, **kwargs):
        codes = net.module_.last_codes
        if not training or self.next_p_ is None or codes is None:
            return
        codes = codes.abs()
        p = net.module_.lp_exponent
        self.queue_.append(
            [
                float(codes.pow(p).sum(dim=1).mean()),
                float(codes.pow(self.next_p_).sum(dim=1).mean()),
            ]
        )
        self.queue_ = self.queue_[-self.queue_length :]

    def on_train_end(self, net, **kwargs):
        net.module_.record_codes = False
        net.module_.last_codes = None
