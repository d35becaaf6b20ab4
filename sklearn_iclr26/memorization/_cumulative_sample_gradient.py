"""A skorch callback accumulating per-sample input gradients (CSG) and losses.

Imports skorch and torch: the package exports it lazily
(``sklearn_iclr26.memorization.__getattr__``).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from skorch.callbacks import Callback

from sklearn_iclr26.utils._torch import _StopTraining
from sklearn_iclr26.utils._validation import store_params

__all__ = ["CumulativeSampleGradient"]


def _weight_norm(module):
    import torch

    with torch.no_grad():
        total = sum(
            float(p.detach().double().pow(2).sum())
            for p in module.parameters()
            if p.requires_grad
        )
    return float(np.sqrt(total))


class CumulativeSampleGradient(Callback):
    """skorch callback: cumulative sample gradients, losses and the weight-norm peak.

    During training it accumulates, for every training row ``i``, the squared
    L2 norm of the loss gradient with respect to the **input**,
    ``CSG_i = sum_t ||d l(w_t; x_i, y_i) / d x_i||^2`` (Ravikumar et al., ICLR
    2026), and the cumulative sample loss ``CSL_i = sum_t l(w_t; x_i, y_i)``. It
    costs no extra backward pass: the input batch is made to require a gradient
    before the forward pass, so the training step's own ``backward`` fills
    ``X.grad``; with a mean (or weighted mean) loss, row ``i``'s gradient is that
    of its own loss times ``w_i / sum(w)``, which is undone here. After every
    epoch it records the weight norm ``sqrt(sum ||p||^2)`` and, with
    ``patience``, finds its peak (the paper's early-stopping point, no
    validation set needed): the first epoch whose norm stays the running
    maximum for ``patience`` further epochs. The scores up to the peak are kept
    (``csg_at_peak_``; ``csl_at_peak_`` is SGAL); with ``stop_at_peak`` training
    stops there and the weights of the peak epoch are restored. The weights
    of the running maximum are kept in a buffer allocated once per fit and
    overwritten in place (``Tensor.copy_``) only when the norm reaches a new
    maximum.

    A ``skorch.callbacks.Callback``, usable on any skorch net whose input
    ``X`` is a dict holding the features under ``input_key`` and the row ids
    under ``id_key`` (so that ids travel with shuffled batches); the module's
    ``forward`` must accept (and may ignore) the id keyword. Models that
    couple samples within a batch (BatchNorm in train mode) are refused:
    their input gradients are not per-sample.

    Parameters
    ----------
    input_key : str, default="X"
        Key of the features in the input dict.
    id_key : str, default="sample_id"
        Key of the integer row ids (``0 .. n_samples - 1``) in the input dict.
    weight_key : str, default="sample_weight"
        Key of the per-row loss weights, if present (a weighted mean loss
        ``sum(w l) / sum(w)``, as in the package's torch engine); otherwise the
        loss is taken to be the mean over the batch. Rows of zero weight get no
        gradient from the batch loss, so their CSG stays 0.
    patience : int or None, default=3
        Epochs the weight norm must stay below its running maximum to confirm
        the peak; ``None`` disables peak detection.
    stop_at_peak : bool, default=True
        Stop training once the peak is confirmed and restore the peak epoch's
        weights.
    min_epoch : int, default=1
        First (1-based) epoch that can be the peak: the running maximum of
        the weight norm (whose first threshold is the norm at
        initialisation, never itself a peak) skips the epochs before it. With
        mini-batch SGD the norm can dip right after the first epoch and a
        rule starting at epoch 1 then stops there, before the network has
        fit anything; a few epochs of warm-up avoid that.

    Attributes
    ----------
    csg_ : ndarray of shape (n_samples,)
        Cumulative squared input-gradient norm over all epochs run.
    csl_ : ndarray of shape (n_samples,)
        Cumulative sample loss over all epochs run.
    csg_at_peak_, csl_at_peak_ : ndarray of shape (n_samples,)
        The same, summed up to the peak epoch (all epochs when no peak was
        found); ``csl_at_peak_`` is SGAL.
    weight_norm_history_ : list of float
        Weight norm at initialisation and after every epoch.
    mean_input_grad_history_ : list of float
        Mean over rows of the squared input-gradient norm, per epoch.
    peak_epoch_ : int or None
        The (1-based) epoch of the confirmed weight-norm peak, ``None`` if none.

    See Also
    --------
    SampleGradientMemorization : The estimator built on this callback.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.memorization import CumulativeSampleGradient
    >>> cb = CumulativeSampleGradient(patience=None)
    >>> sorted(cb.get_params())
    ['id_key', 'input_key', 'min_epoch', 'patience', 'stop_at_peak', 'weight_key']

    Used with a skorch net whose input is ``{"X": X, "sample_id": ids}``::

        net = NeuralNetClassifier(Module, callbacks=[cb], ...)
        net.fit({"X": X, "sample_id": np.arange(len(X))}, y)
        cb.csg_
    """

    def __init__(
        self,
        *,
        input_key="X",
        id_key="sample_id",
        weight_key="sample_weight",
        patience=3,
        stop_at_peak=True,
        min_epoch=1,
    ):
        store_params(self, locals())

    def _get_param_names(self):
        # the constructor's parameters only (skorch's default lists every
        # attribute not ending in "_", the private accumulators included)
        return sorted(
            [
                "input_key",
                "id_key",
                "weight_key",
                "patience",
                "stop_at_peak",
                "min_epoch",
            ]
        )

    def initialize(self):
        """Reset the accumulated state."""
        self.csg_ = None
        self.csl_ = None
        self.csg_at_peak_ = None
        self.csl_at_peak_ = None
        self.weight_norm_history_ = []
        self.mean_input_grad_history_ = []
        self.peak_epoch_ = None
        self._batch = None
        return self

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        from torch import nn

        if not isinstance(X, dict) or self.input_key not in X or self.id_key not in X:
            raise ValueError(
                "CumulativeSampleGradient needs the net's input X as a dict with "
                f"the features under {self.input_key!r} and the row ids under "
                f"{self.id_key!r}, so that ids travel with shuffled batches."
            )
        module = net.module_
        for sub in module.modules():
            if isinstance(sub, nn.modules.batchnorm._BatchNorm):
                raise TypeError(
                    "CumulativeSampleGradient cannot compute per-sample input "
                    f"gradients through {type(sub).__name__}: in train mode it "
                    "couples the samples of a batch. Use a network without "
                    "BatchNorm (LayerNorm, or none)."
                )
        ids = np.asarray(X[self.id_key])
        if ids.ndim != 1 or ids.dtype.kind not in "iu" or (ids.size and ids.min() < 0):
            raise ValueError(f"{self.id_key!r} must be non-negative integer row ids.")
        if self.csg_ is None or getattr(self, "_n", None) != int(ids.max()) + 1:
            n = int(ids.max()) + 1 if ids.size else 0
            self._n = n
            self.csg_ = np.zeros(n)
            self.csl_ = np.zeros(n)
            self._epoch_grad = np.zeros(n)
            self._epoch_seen = np.zeros(n, dtype=bool)
            self.weight_norm_history_ = [_weight_norm(module)]
            self.mean_input_grad_history_ = []
            self.peak_epoch_ = None
            # the norm at initialisation is the first threshold, never a peak
            self._running_max = (self.weight_norm_history_[0], 0)
            self._peak_snapshot = None
            self._state_buffer = None
        self._stopped = False

    def on_epoch_begin(self, net, dataset_train=None, dataset_valid=None, **kwargs):
        self._epoch_grad[:] = 0.0
        self._epoch_seen[:] = False

    def on_batch_begin(self, net, batch=None, training=None, **kwargs):
        import torch

        self._batch = None
        if not training:
            return
        Xi = batch[0]
        x = Xi[self.input_key]
        x = torch.as_tensor(x).detach().clone()
        if not torch.is_floating_point(x):
            raise ValueError("CumulativeSampleGradient needs floating-point inputs.")
        x.requires_grad_(True)
        Xi[self.input_key] = x  # the forward pass now builds the graph to x
        self._batch = (x, Xi)

    def on_batch_end(self, net, batch=None, training=None, **kwargs):
        import torch
        from torch.nn import functional as F

        if not training or self._batch is None:
            return
        x, Xi = self._batch
        self._batch = None
        ids = np.asarray(
            Xi[self.id_key].cpu()
            if torch.is_tensor(Xi[self.id_key])
            else Xi[self.id_key]
        ).astype(np.int64)
        n_batch = ids.shape[0]
        if x.grad is None:
            raise RuntimeError(
                "The training step did not compute a gradient for the input; "
                "CumulativeSampleGradient needs the loss to depend on X."
            )
        grad = x.grad.detach().reshape(n_batch, -1).double()
        weight = Xi.get(self.weight_key) if isinstance(Xi, dict) else None
        if weight is not None:
            w = torch.as_tensor(weight).detach().double().cpu().reshape(-1)
            total = float(w.sum())
            scale = np.where(w.numpy() > 0, total / np.maximum(w.numpy(), 1e-300), 0.0)
        else:
            scale = np.full(n_batch, float(n_batch))
        sq = grad.pow(2).sum(dim=1).cpu().numpy() * scale**2
        np.add.at(self.csg_, ids, sq)
        np.add.at(self._epoch_grad, ids, sq)
        self._epoch_seen[ids] = True
        y_pred = kwargs.get("y_pred")
        y_true = batch[1]
        if y_pred is not None and y_true is not None:
            logits = y_pred[0] if isinstance(y_pred, tuple) else y_pred
            y_true = torch.as_tensor(y_true, device=logits.device).long()
            with torch.no_grad():
                loss = F.cross_entropy(logits.detach(), y_true, reduction="none")
            np.add.at(self.csl_, ids, loss.double().cpu().numpy())

    def on_epoch_end(self, net, dataset_train=None, dataset_valid=None, **kwargs):
        seen = self._epoch_seen
        self.mean_input_grad_history_.append(
            float(self._epoch_grad[seen].mean()) if seen.any() else 0.0
        )
        norm = _weight_norm(net.module_)
        self.weight_norm_history_.append(norm)
        epoch = len(self.weight_norm_history_) - 1
        if self.patience is None or self.peak_epoch_ is not None:
            return
        if epoch < self.min_epoch:
            return
        if norm > self._running_max[0]:
            self._running_max = (norm, epoch)
            self._snapshot(net.module_)
            return
        best_epoch = self._running_max[1]
        if best_epoch > 0 and epoch - best_epoch >= self.patience:
            self.peak_epoch_ = best_epoch
            self.csg_at_peak_, self.csl_at_peak_ = self._peak_snapshot
            self._peak_snapshot = None
            if self.stop_at_peak:
                net.module_.load_state_dict(self._state_buffer)
                self._stopped = True
                raise _StopTraining

    def _snapshot(self, module):
        """Keep the scores and weights of the running maximum (in place)."""
        import torch

        if self._peak_snapshot is None:
            self._peak_snapshot = (self.csg_.copy(), self.csl_.copy())
        else:
            np.copyto(self._peak_snapshot[0], self.csg_)
            np.copyto(self._peak_snapshot[1], self.csl_)
        with torch.no_grad():
            state = module.state_dict()
            if self._state_buffer is None:
                self._state_buffer = {k: v.detach().clone() for k, v in state.items()}
            else:
                for k, v in state.items():
                    self._state_buffer[k].copy_(v)

    def on_train_end(self, net, X=None, y=None, **kwargs):
        if self.peak_epoch_ is None:
            self.csg_at_peak_ = self.csg_.copy()
            self.csl_at_peak_ = self.csl_.copy()

    def peak_state_dict(self):
        """State dict of the module at the peak epoch (``None`` if no peak)."""
        if self.peak_epoch_ is None or self._state_buffer is None:
            return None
        return self._state_buffer
