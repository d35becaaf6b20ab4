"""torch criteria of the label-noise estimators (imported lazily, inside ``fit``).

Module level so that fitted estimators pickle. They are used through the
package's training helper (:func:`sklearn_iclr26.utils._torch.train_module`):
called as ``criterion(y_pred, y_true, **aux)`` they return per-sample losses,
which the helper averages with the sample weights.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import torch
from skorch.callbacks import Callback
from torch import nn
from torch.nn import functional as F

from sklearn_iclr26.utils._validation import store_params

__all__ = ["EpochToCriterion", "ForwardCorrectedLoss", "NoiseCorrectedLoss"]


def _flip_rate(distance, beta, phi):
    z = beta * distance
    if phi == "logistic":
        return torch.sigmoid(-z)
    if phi == "exponential":
        return 0.5 * torch.exp(-z)
    if phi == "gaussian":
        return 0.5 * torch.erfc(z / math.sqrt(2.0))
    raise ValueError(f"Unknown phi {phi!r}.")


def binary_score(y_pred):
    """Raw binary score ``h``: the logit difference of a 2-output network."""
    if y_pred.ndim == 2 and y_pred.shape[1] == 2:
        return y_pred[:, 1] - y_pred[:, 0]
    return y_pred.reshape(-1)


class NoiseCorrectedLoss(nn.Module):
    """Per-sample regularized corrected loss (port of the authors' ``NDX_Loss``).

    The same quantity as ``NDX_Loss.forward`` before its batch mean, with the
    logistic base loss: ``u (1 - u - rho) l(h, y) - rho (1 - u) l(h, 1 - y) -
    lam (u (1 - u) - rho)`` where ``u`` is the probability of the observed
    label. During the first ``warmup`` epochs it is the plain logistic loss.
    The current 1-based epoch is written to ``epoch`` by :class:`EpochToCriterion`.

    Parameters
    ----------
    beta, lam, phi, detach_rho
        See :class:`~sklearn_iclr26.label_noise.InstanceNoiseCorrector`.
    warmup : int, default=0
        Number of plain-loss epochs.
    """

    def __init__(self, beta=2.0, lam=0.0, phi="logistic", warmup=0, detach_rho=True):
        super().__init__()
        store_params(self, locals())
        self.epoch = 1

    def forward(self, y_pred, y_true, rho=None):
        h = binary_score(y_pred)
        s = 2.0 * y_true.to(h.dtype) - 1.0
        t = s * h
        l_plus = F.softplus(-t)
        if self.epoch <= self.warmup:
            return l_plus
        l_minus = F.softplus(t)
        if rho is None:
            distance = h.detach().abs() if self.detach_rho else h.abs()
            rho = _flip_rate(distance, self.beta, self.phi)
        else:
            rho = rho.to(h.dtype).reshape(-1)
        u = torch.sigmoid(t)
        v = torch.sigmoid(-t)
        numerator = u * (v - rho) * l_plus - rho * v * l_minus
        return numerator - self.lam * (u * v - rho)


class ForwardCorrectedLoss(nn.Module):
    """Forward-corrected cross-entropy ``-log (softmax(z) @ T)[y_noisy]``.

    Parameters
    ----------
    transition_matrix : array-like of shape (n_classes, n_classes)
        ``T[i, j] = P(Y~ = j | Y = i)``.
    """

    def __init__(self, transition_matrix):
        super().__init__()
        self.transition_matrix = transition_matrix

    def forward(self, y_pred, y_true):
        T = torch.as_tensor(self.transition_matrix, dtype=y_pred.dtype)
        q = torch.softmax(y_pred, dim=1) @ T
        q = q.gather(1, y_true.long().reshape(-1, 1)).reshape(-1)
        return -torch.log(q.clamp_min(1e-12))


class EpochToCriterion(Callback):
    """skorch callback writing the current 1-based epoch to ``criterion_.epoch``."""

    def on_epoch_begin(self, net, **kwargs):
        net.criterion_.epoch = len(net.history)
