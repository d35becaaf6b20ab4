"""The private skorch ``NeuralNet`` subclass behind :func:`train_module`.

Imported lazily (it imports skorch and torch); module level so that it pickles.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from skorch import NeuralNet


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
        if y_true is not None:
            y_true = y_true.to(self.device)
        aux = {k: v.to(self.device) for k, v in aux.items()}
        losses = self.criterion_(y_pred, y_true, **aux)
        if losses.ndim > 1:
            losses = losses.reshape(losses.shape[0], -1).sum(dim=1)
        if weight is None:
            return losses.mean()
        weight = weight.to(device=losses.device, dtype=losses.dtype)
        return (weight * losses).sum() / weight.sum().clamp_min(1e-300)
