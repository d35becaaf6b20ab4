"""torch module of the predictive-coding estimators (imported lazily).

The network has layers ``x_0`` (the input, clamped), hidden activities
``x_1, ..., x_{L-1}`` (free during inference) and an output layer clamped to
the target. Layer ``l`` predicts ``mu_l = W_l phi_l(x_{l-1}) + b_l`` with
``phi_1`` the identity (the input is not passed through the non-linearity) and
``phi_l`` the activation otherwise. Energies, per sample:

* hidden layers: ``E_l = 1/2 ||eps_l||^2`` with ``eps_l = x_l - mu_l``;
* output layer: ``E_L = CE(mu_L, y)`` (``output_energy="ce"``) or
  ``1/2 ||t - mu_L||^2`` with ``t`` the one-hot labels or the (standardised)
  regression targets (``"se"``).

``F = sum_l E_l``. Three inference rules (``meta_pe``):

* ``None`` (vanilla PCN): the activities descend ``F`` at the current
  predictions; the weights learn at the inferred activities.
* ``"paper"`` (Meta-PCN, Ha et al. 2026, as the paper's summary gives it):
  the predictions are frozen at the feed-forward pass, ``c_l = x_l^(0)``,
  and the free activities ``z_l`` carry the errors ``d_l = z_l - c_l``.
  Inference descends ``J = 1/2 sum_l ||d_l - g_l||^2`` with the bootstrapped,
  stop-gradient target ``g_l = phi'(x_l^(0)) * (d_{l+1} W_{l+1})`` (``d_{l+1}``
  detached; at the top ``d_L = -dE_L/dmu_L`` at the feed-forward output), so
  ``dJ/dz_l = d_l - g_l``: each layer chases the error projected down from
  the layer above. The weights learn the prediction loss at the
  feed-forward inputs, ``1/2 sum_l ||z_l - W_l phi(x_{l-1}^(0)) - b_l||^2 +
  E_L(mu_L^(0))``. With step 1 and no momentum the inference is a Jacobi
  sweep that reaches ``d_l = -dE_L/dx_l`` (backprop's deltas) after as
  many steps as hidden layers, and the weight gradient is backprop's
  (tested).
* ``"gauss_newton"`` (this package's earlier reconstruction): inference
  descends ``F + meta_pe_weight * M`` with ``M = 1/2 sum_l ||delta_l||^2``
  and ``delta_l = eps_l - phi'_{l+1}(x_l) * (e_{l+1} W_{l+1}) = dF/dx_l``
  (``e_{l+1} = eps_{l+1}`` for a hidden layer above and ``e_L =
  -dE_L/dmu_L`` at the top; tested) at the current activities, ``phi'``
  held constant (a Gauss-Newton-like term); the weights learn at the
  inferred activities.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools
import math

import torch
from torch import nn
from torch.nn import functional as F

from sklearn_iclr26.utils._mlp_modules import ACTIVATIONS


def normalise_weight_(W, gain=1.0, target="fan_in"):
    """Rescale the weight matrix ``W`` (``n_out x n_in``) in place.

    ``"fan_in"``: ``n_in * Var(W) = gain ** 2``; ``"spectral"``: ``W <- gain
    * W / ((sqrt(n_out) + sqrt(n_in)) std(W))``, which puts the spectral norm
    of a random matrix near ``gain``. A constant matrix is left as is.
    """
    std = W.std(unbiased=False)
    if float(std) > 0:
        if target == "spectral":
            scale = math.sqrt(W.shape[0]) + math.sqrt(W.shape[1])
        else:
            scale = math.sqrt(W.shape[1])
        W.mul_(gain / (std * scale))
    return W


class PCNModule(nn.Module):
    """Discriminative predictive-coding network with optional Meta-PCN parts.

    Parameters
    ----------
    n_features, n_outputs : int
        Input and output widths.
    hidden_layer_sizes : tuple of int
        Hidden widths.
    activation : {"relu", "tanh", "gelu"}
        Non-linearity ``phi`` applied to hidden activities.
    output_energy : {"ce", "se"}
        Energy of the output layer (``"ce"`` needs integer labels).
    meta_pe : {None, "paper", "gauss_newton"} or bool
        Inference rule (see the module docstring); ``True`` is ``"paper"``,
        ``False`` is ``None`` (vanilla PCN).
    meta_pe_weight : float
        Weight of the meta-loss of ``"gauss_newton"`` (unused otherwise).
    weight_norm : bool
        After every step (and at initialisation), rescale each weight matrix
        to the ``norm_target``.
    norm_gain : float
        Target gain of the normalisation.
    norm_target : {"fan_in", "spectral"}
        ``"fan_in"``: ``fan_in * Var(W_l) = norm_gain ** 2``; ``"spectral"``:
        ``W_l <- norm_gain * W_l / ((sqrt(m) + sqrt(n)) std(W_l))`` for an
        ``m x n`` matrix (the paper's form; spectral norm about
        ``norm_gain`` for a random matrix).
    weight_clip : float or None
        Element-wise clipping ``|W| <= weight_clip`` after every step.
    spectral_clip : float or None
        Rescale each weight matrix whose spectral norm exceeds
        ``spectral_clip`` down to it, after every step (exact norms).
    dtype : torch.dtype
        Parameter dtype.
    """

    def __init__(
        self,
        n_features,
        n_outputs,
        hidden_layer_sizes=(64,),
        activation="gelu",
        output_energy="ce",
        meta_pe="paper",
        meta_pe_weight=1.0,
        weight_norm=True,
        norm_gain=1.0,
        norm_target="fan_in",
        weight_clip=None,
        spectral_clip=None,
        dtype=None,
    ):
        super().__init__()
        sizes = [n_features, *hidden_layer_sizes, n_outputs]
        self.layers = nn.ModuleList(
            nn.Linear(a, b, dtype=dtype) for a, b in itertools.pairwise(sizes)
        )
        self.act = ACTIVATIONS[activation]()
        self.output_energy = output_energy
        if meta_pe is True:
            meta_pe = "paper"
        self.meta_pe = meta_pe or None
        self.meta_pe_weight = meta_pe_weight
        self.weight_norm = weight_norm
        self.norm_gain = norm_gain
        self.norm_target = norm_target
        self.weight_clip = weight_clip
        self._frozen_cache = None
        self.spectral_clip = spectral_clip
        with torch.no_grad():
            self.pc_after_step()

    def __getstate__(self):
        # the feed-forward cache of the paper's meta-PE holds a batch
        state = self.__dict__.copy()
        state["_frozen_cache"] = None
        return state

    # ----------------------------------------------------------- pieces

    def _phi(self, k, x):
        # input of layer k (0-based): the raw input for k == 0
        return x if k == 0 else self.act(x)

    def _phi_prime(self, x):
        """Slope of the activation, closed form, detached."""
        x = x.detach()
        if isinstance(self.act, nn.ReLU):
            return (x > 0).to(x.dtype)
        if isinstance(self.act, nn.Tanh):
            return 1 - torch.tanh(x) ** 2
        # exact GELU: Phi(x) + x phi(x)
        cdf = 0.5 * (1 + torch.erf(x / math.sqrt(2)))
        pdf = torch.exp(-0.5 * x**2) / math.sqrt(2 * math.pi)
        return cdf + x * pdf

    def forward(self, X, **aux):
        x = X
        for k, layer in enumerate(self.layers):
            x = layer(self._phi(k, x))
        return x

    def _target(self, y, mu):
        if self.output_energy == "ce" or y.dtype in (torch.int64, torch.int32):
            return F.one_hot(y.long(), mu.shape[1]).to(mu.dtype)
        return y.reshape(mu.shape).to(mu.dtype)

    def _output_energy(self, mu, y):
        if self.output_energy == "ce":
            return F.cross_entropy(mu, y.long(), reduction="none")
        return 0.5 * ((self._target(y, mu) - mu) ** 2).sum(dim=1)

    def _output_grad(self, mu, y):
        """``dE_L / dmu_L`` per sample."""
        if self.output_energy == "ce":
            return torch.softmax(mu, dim=1) - self._target(y, mu)
        return mu - self._target(y, mu)

    def _errors(self, X, activities):
        xs = [X, *activities]
        errors = [
            xs[k + 1] - self.layers[k](self._phi(k, xs[k]))
            for k in range(len(activities))
        ]
        mu = self.layers[-1](self._phi(len(activities), xs[-1]))
        return xs, errors, mu

    def _frozen(self, X, y):
        """Feed-forward values of the paper's meta-PE (no gradient), cached.

        ``(xs0, mu0, slopes, top)``: the feed-forward activities ``[X, x_1^(0),
        ...]``, output ``mu_L^(0)``, slopes ``phi'(x_l^(0))`` of the hidden
        layers and the output error ``-dE_L/dmu_L`` at ``mu_L^(0)``. The cache
        holds the batch and the weights' versions, so it is recomputed for a
        new batch or after a weight step.
        """
        versions = tuple(p._version for p in self.parameters())
        cache = self._frozen_cache
        if (
            cache is not None
            and cache[0] is X
            and cache[1] is y
            and cache[2] == versions
        ):
            return cache[3]
        with torch.no_grad():
            hidden = self.pc_init(X)
            xs0 = [X, *hidden]
            mu0 = self.layers[-1](self._phi(len(hidden), xs0[-1]))
            slopes = [self._phi_prime(x) for x in hidden]
            top = -self._output_grad(mu0, y) if y is not None else None
        values = (xs0, mu0, slopes, top)
        self._frozen_cache = (X, y, versions, values)
        return values

    def _paper_errors(self, X, activities, y):
        xs0, mu0, _, _ = self._frozen(X, y)
        return xs0, [a - x0 for a, x0 in zip(activities, xs0[1:])], mu0

    def _paper_objective(self, X, activities, y):
        """``J = 1/2 sum_l ||d_l - g_l(stop_grad(d_{l+1}))||^2`` per sample."""
        _, slopes, top = self._frozen(X, y)[1:]
        _, errors, _ = self._paper_errors(X, activities, y)
        above = [*(e.detach() for e in errors[1:]), top]
        objective = 0
        for k, (e, e_up, slope) in enumerate(zip(errors, above, slopes)):
            target = slope * (e_up @ self.layers[k + 1].weight.detach())
            objective = objective + 0.5 * ((e - target) ** 2).sum(dim=1)
        return objective

    # ------------------------------------------- engine interface (pc_*)

    def pc_init(self, X):
        """Hidden activities of the feed-forward pass (all errors 0)."""
        activities, x = [], X
        for k, layer in enumerate(self.layers[:-1]):
            x = layer(self._phi(k, x))
            activities.append(x)
        return activities

    def _energy_columns(self, errors, mu, y):
        columns = [0.5 * (e**2).sum(dim=1) for e in errors]
        columns.append(self._output_energy(mu, y))
        return torch.stack(columns, dim=1)

    def _deltas(self, activities, errors, mu, y, detach_jacobian=True):
        above = [*errors[1:], -self._output_grad(mu, y)]
        deltas = []
        for k, (x, e, e_up) in enumerate(zip(activities, errors, above)):
            if detach_jacobian:
                slope = self._phi_prime(x)
            else:
                with torch.enable_grad():
                    (slope,) = torch.autograd.grad(
                        self.act(x).sum(), x, create_graph=True
                    )
            deltas.append(e - slope * (e_up @ self.layers[k + 1].weight))
        return deltas

    def pc_energies(self, X, activities, y):
        """Per-sample, per-layer energies, shape (n_samples, n_layers).

        With the paper's meta-PE the predictions are the frozen feed-forward
        ones (the energies are the terms of the learning loss).
        """
        if self.meta_pe == "paper":
            _, errors, mu = self._paper_errors(X, activities, y)
        else:
            _, errors, mu = self._errors(X, activities)
        return self._energy_columns(errors, mu, y)

    def pc_meta_errors(self, X, activities, y, *, detach_jacobian=True):
        """Meta-prediction errors ``delta_l`` of the hidden layers (= dF/dx_l).

        ``detach_jacobian=False`` keeps the activation slope in the graph
        (for tests; inference holds it constant).
        """
        _, errors, mu = self._errors(X, activities)
        return self._deltas(activities, errors, mu, y, detach_jacobian)

    def pc_inference_objective(self, X, activities, y):
        """Per sample: ``J`` (``"paper"``), ``F + meta_pe_weight * M``
        (``"gauss_newton"``) or ``F`` (vanilla)."""
        if self.meta_pe == "paper":
            return self._paper_objective(X, activities, y)
        _, errors, mu = self._errors(X, activities)
        objective = self._energy_columns(errors, mu, y).sum(dim=1)
        if self.meta_pe == "gauss_newton":
            deltas = self._deltas(activities, errors, mu, y)
            meta = 0.5 * sum((d**2).sum(dim=1) for d in deltas)
            objective = objective + self.meta_pe_weight * meta
        return objective

    def pc_inference_grads(self, X, activities, y):
        """Gradient of the summed inference objective in each activity.

        The paper's rule in closed form, ``dJ/dz_l = d_l - phi'(x_l^(0)) *
        (d_{l+1} W_{l+1})`` (what autograd gives for ``J``, tested; no graph
        is built); the other rules by ``torch.autograd.grad``.
        """
        if self.meta_pe == "paper":
            with torch.no_grad():
                _, slopes, top = self._frozen(X, y)[1:]
                _, errors, _ = self._paper_errors(X, activities, y)
                above = [*errors[1:], top]
                return [
                    e - slope * (e_up @ self.layers[k + 1].weight)
                    for k, (e, e_up, slope) in enumerate(zip(errors, above, slopes))
                ]
        activities = [a.detach().requires_grad_(True) for a in activities]
        objective = self.pc_inference_objective(X, activities, y).sum()
        return list(torch.autograd.grad(objective, activities))

    def pc_weight_grads(self, X, activities, y, weight=None):
        """Local (Hebbian) gradients of the weighted mean energy.

        For layer ``l``: ``dW_l = sum_i w_i g_{l,i} phi_l(x_{l-1,i})^T`` and
        ``db_l = sum_i w_i g_{l,i}``, with ``g_l = -eps_l`` for a hidden
        layer, ``g_L = dE_L/dmu_L`` at the output, and normalised weights
        ``w`` (``1/n`` without sample weights). Each uses only the layer's
        own error and its input. With the paper's meta-PE the errors are
        ``d_l = z_l - x_l^(0)`` and the inputs the feed-forward ones
        (``phi(x_{l-1}^(0))``, output gradient at ``mu_L^(0)``).
        """
        if self.meta_pe == "paper":
            xs, errors, mu = self._paper_errors(X, activities, y)
        else:
            xs, errors, mu = self._errors(X, activities)
        n = X.shape[0]
        if weight is None:
            w = torch.full((n, 1), 1.0 / n, dtype=X.dtype, device=X.device)
        else:
            w = (weight / weight.sum().clamp_min(1e-300)).reshape(-1, 1).to(X.dtype)
        signals = [-e for e in errors] + [self._output_grad(mu, y)]
        pairs = []
        for k, (layer, g) in enumerate(zip(self.layers, signals)):
            pre = self._phi(k, xs[k])
            wg = w * g
            pairs.append((layer.weight, wg.T @ pre))
            pairs.append((layer.bias, wg.sum(dim=0)))
        return pairs

    def pc_after_step(self):
        """Weight normalisation, then element-wise and spectral clipping."""
        self._frozen_cache = None
        for layer in self.layers:
            W = layer.weight
            if self.weight_norm:
                normalise_weight_(W, self.norm_gain, self.norm_target)
            if self.weight_clip is not None:
                W.clamp_(-self.weight_clip, self.weight_clip)
            if self.spectral_clip is not None:
                sigma = torch.linalg.matrix_norm(W, ord=2)
                if float(sigma) > self.spectral_clip:
                    W.mul_(self.spectral_clip / sigma)

    def pc_spectral_norms(self):
        """Spectral norm of each weight matrix."""
        return [torch.linalg.matrix_norm(layer.weight, ord=2) for layer in self.layers]
