"""Torch modules and solvers behind :class:`~sklearn_iclr26.conformal.CVQRRegressor`.

Imported lazily inside ``fit`` (this module imports torch at top level); the
classes live at module level so that fitted estimators pickle.

* :class:`PICNN` is the potential ``phi(u, x)``: convex in ``u`` (non-negative
  weights on the convex path, convex non-decreasing activations) and free in
  ``x``, plus a strongly-convex term ``0.5 * c(x) * ||u||^2`` whose
  x-dependent curvature ``c`` is learned (``CURVATURE_MODES``: free, with a
  floor, global, or with its logarithm bounded).
* :class:`CVQRModule` bundles the potential and the amortization network and,
  in training mode, returns the per-sample semi-dual OT loss (the criterion
  :class:`PassthroughLoss` only hands it to the skorch net).
* :func:`newton_conjugate` is the deterministic per-sample damped Newton solver
  of ``argmax_u <u, y> - phi(u, x)`` used for every rank computed after
  training (calibration and test alike).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import copy
import math
from functools import partial

import torch
from skorch.callbacks import Callback
from torch import nn
from torch.nn import functional as F

from sklearn_iclr26.conformal._base_regressor import log_unit_ball_volume
from sklearn_iclr26.utils._torch import _StopTraining
from sklearn_iclr26.utils._validation import store_params

__all__ = [
    "PICNN",
    "CVQRModule",
    "PassthroughLoss",
    "SemiDualEarlyStopping",
    "WarmupPhase",
    "newton_conjugate",
    "reference_log_density",
    "sample_reference",
]


# The curvature c(x) of the strongly-convex term 0.5 * c(x) * ||u||^2 (Y and
# U both have unit scale, so c is in units of the standardized response; a
# Gaussian Y | x with standard deviation sigma has c = sigma):
# "free": c = exp(s(x)), s affine in the context. Unbounded below: on bio it
#   underflowed to exactly 0 (float32) on whole x-regions of ordinary rows,
#   where the ranks of responses outside the range of the PICNN's bounded
#   gradient blew up to 1e8-1e11 (5 of 10 reproduction fits);
# "floor": c = c_min + exp(s(x)), c_min = 0.01;
# "global": one learned c, as the authors' PISCNN;
# "bounded" (the default): log c(x) = log c0 + B * tanh((s(x) - log c0) / B),
#   c within [c0 / 100, 100 c0] = [0.005, 50], so every rank obeys
#   ||R|| <= (||y - m(x)|| + sup ||grad PICNN||) / 0.005.
# benchmarks/cvqr_choose_curvature.py compares them (doc/cvqr.rst).
CURVATURE_MODES = ("free", "floor", "global", "bounded")
CURVATURE = "bounded"  # the default (doc/cvqr.rst, "The curvature term")
_CURVATURE_INIT = 0.5
_CURVATURE_MIN = 0.01
_CURVATURE_LOG_RANGE = math.log(100.0)


def sample_reference(n, d, reference, *, generator=None, dtype=torch.float64):
    """Draw ``n`` points of the reference law in dimension ``d``."""
    z = torch.randn(n, d, generator=generator, dtype=dtype)
    if reference == "gaussian":
        return z
    # uniform on the unit ball: uniform direction, radius ~ U^(1/d)
    direction = z / z.norm(dim=1, keepdim=True).clamp_min(1e-30)
    radius = torch.rand(n, 1, generator=generator, dtype=dtype) ** (1.0 / d)
    return direction * radius


def reference_log_density(u, reference):
    """Log-density of the reference law at the rows of ``u``."""
    d = u.shape[-1]
    if reference == "gaussian":
        return -0.5 * (u**2).sum(-1) - 0.5 * d * math.log(2 * math.pi)
    log_ball = log_unit_ball_volume(d)
    inside = u.norm(dim=-1) <= 1.0
    out = torch.full(u.shape[:-1], -log_ball, dtype=u.dtype, device=u.device)
    return torch.where(inside, out, torch.full_like(out, -math.inf))


class _PositiveLinear(nn.Module):
    """Linear map with weights ``softplus(raw) / fan_in`` (all >= 0), no bias."""

    def __init__(self, n_in, n_out, dtype):
        super().__init__()
        self.raw = nn.Parameter(torch.empty(n_out, n_in, dtype=dtype))
        nn.init.normal_(self.raw, mean=-1.0, std=0.3)
        self.n_in = n_in

    def forward(self, z):
        return z @ (F.softplus(self.raw) / self.n_in).T


class PICNN(nn.Module):
    """Partially input-convex network ``phi(u, x)``, convex in ``u``.

    Context path ``c_0 = x``, ``c_{l+1} = ELU(A_l c_l)``. Convex path::

        z_1     = softplus(B_0 (u * G_0 c_0) + C_0 c_0)
        z_{l+1} = softplus(W_l^+ (z_l * softplus(H_l c_l))
                           + B_l (u * G_l c_l) + C_l c_l)
        phi     = softplus(z_L) + 0.5 * c(x, c_L) ||u||^2 + <u, m(x, c_L)>

    where ``W_l^+ >= 0`` elementwise; every pre-activation is convex in ``u``
    (non-negative combinations of convex functions plus terms affine in ``u``),
    softplus is convex and non-decreasing, so ``phi`` is convex in ``u`` and,
    thanks to the quadratic term, strongly convex (the linear term ``<u, m>``
    gives a free conditional location): the conjugate
    ``sup_u <u, y> - phi(u, x)`` is attained at a unique point. The
    curvature ``c > 0`` is ``curvature`` of :data:`CURVATURE_MODES` (default
    :data:`CURVATURE`, ``"bounded"``: ``log c`` tanh-bounded within
    ``log 100`` of its initial ``0.5``, so the ranks stay bounded where the
    unbounded ``"free"`` ``c = exp(s(x))`` would vanish).
    """

    def __init__(
        self,
        n_features,
        n_outputs,
        hidden_layer_sizes=(32, 32),
        *,
        dtype,
        curvature=None,
    ):
        super().__init__()
        if curvature is None:
            curvature = CURVATURE
        p, d = n_features, n_outputs
        sizes = [int(h) for h in hidden_layer_sizes]
        n_layers = len(sizes)
        widths = [p, *sizes]  # the context path: c_l has widths[l] columns
        self.context = nn.ModuleList(
            [nn.Linear(widths[i], widths[i + 1], dtype=dtype) for i in range(n_layers)]
        )
        self.z_weight = nn.ModuleList()
        self.z_gate = nn.ModuleList()
        self.u_gate = nn.ModuleList()
        self.u_weight = nn.ModuleList()
        self.c_weight = nn.ModuleList()
        for layer in range(n_layers + 1):
            c_dim = widths[layer]
            out = sizes[layer] if layer < n_layers else 1
            if layer > 0:
                z_dim = sizes[layer - 1]
                self.z_weight.append(_PositiveLinear(z_dim, out, dtype))
                self.z_gate.append(nn.Linear(c_dim, z_dim, dtype=dtype))
            self.u_gate.append(nn.Linear(c_dim, d, dtype=dtype))
            self.u_weight.append(nn.Linear(d, out, bias=False, dtype=dtype))
            self.c_weight.append(nn.Linear(c_dim, out, dtype=dtype))
        for gate in self.u_gate:  # u * (1 + small): start close to linear in u
            nn.init.zeros_(gate.weight)
            nn.init.ones_(gate.bias)
        c_last = p if n_layers == 0 else sizes[-1] + p
        if curvature not in CURVATURE_MODES:
            raise ValueError(f"curvature must be one of {CURVATURE_MODES}")
        self.curvature_mode = curvature
        init = _CURVATURE_INIT
        if curvature == "floor":
            init = _CURVATURE_INIT - _CURVATURE_MIN
        if curvature == "global":
            self.log_curvature = nn.Parameter(
                torch.full((1,), math.log(init), dtype=dtype)
            )
        else:
            self.log_curvature = nn.Linear(c_last, 1, dtype=dtype)
            nn.init.zeros_(self.log_curvature.weight)
            nn.init.constant_(self.log_curvature.bias, math.log(init))
        # linear term <u, m(x)>: a free conditional location
        self.location = nn.Linear(c_last, d, dtype=dtype)
        nn.init.zeros_(self.location.weight)
        nn.init.zeros_(self.location.bias)

    def context_terms(self, x):
        """Everything of ``phi(., x)`` that does not depend on ``u``.

        The conjugate solvers evaluate ``phi(u, x)`` many times at a fixed
        ``x``: computing these terms once per solve (instead of at every
        Newton and line-search step) halves the kernels per step, which is
        what bounds small-batch speed on a GPU. Values are those of
        :meth:`forward`, operation for operation.
        """
        contexts = [x]
        for layer in self.context:
            contexts.append(F.elu(layer(contexts[-1])))
        n_layers = len(self.context)
        u_gates, c_terms, z_gates = [], [], []
        for layer in range(n_layers + 1):
            c = contexts[layer]
            u_gates.append(self.u_gate[layer](c))
            c_terms.append(self.c_weight[layer](c))
            if layer > 0:
                z_gates.append(F.softplus(self.z_gate[layer - 1](c)))
        last = contexts[-1] if n_layers == 0 else torch.cat([x, contexts[-1]], 1)
        return {
            "u_gates": u_gates,
            "c_terms": c_terms,
            "z_gates": z_gates,
            "curvature": self.curvature(last),
            "location": self.location(last),
        }

    def curvature(self, last):
        """The curvature ``c(x) > 0`` of the quadratic term, one per row."""
        mode = getattr(self, "curvature_mode", "free")  # older pickles
        if mode == "global":
            return torch.exp(self.log_curvature).expand(last.shape[0])
        s = self.log_curvature(last)[:, 0]
        if mode == "bounded":
            # log c(x) within +-_CURVATURE_LOG_RANGE of its initial value
            bound = _CURVATURE_LOG_RANGE
            s = math.log(_CURVATURE_INIT) + bound * torch.tanh(
                (s - math.log(_CURVATURE_INIT)) / bound
            )
        c = torch.exp(s)
        if mode == "floor":
            c = c + _CURVATURE_MIN
        return c

    def forward_u(self, u, terms):
        """``phi(u, x)`` from the ``context_terms(x)`` of the same rows."""
        n_layers = len(self.context)
        z = None
        for layer in range(n_layers + 1):
            pre = (
                self.u_weight[layer](u * terms["u_gates"][layer])
                + terms["c_terms"][layer]
            )
            if z is not None:
                pre = pre + self.z_weight[layer - 1](z * terms["z_gates"][layer - 1])
            z = F.softplus(pre) if layer < n_layers else pre
        return (
            F.softplus(z[:, 0])
            + 0.5 * terms["curvature"] * (u**2).sum(1)
            + (u * terms["location"]).sum(1)
        )

    def forward(self, u, x):
        return self.forward_u(u, self.context_terms(x))

    def derivatives_u(self, u, terms):
        """``phi``, ``grad_u phi`` and ``Hessian_u phi`` in closed form.

        Every pre-activation is affine in ``u`` and in the previous layer, so
        second derivatives come only from the softplus nonlinearities:
        ``Hessian = sum_l sum_k (d phi / d z_lk) softplus''(pre_lk) a_lk a_lk^T
        + c(x) I`` with ``a_lk = d pre_lk / du`` carried forward (n, h, d)
        and ``d phi / d z_lk`` carried backward. One forward and one backward
        sweep of small batched products replace the ``d`` backward passes of
        autograd (the Hessians were 68% of the rank time in d = 16). No graph
        is kept.
        """
        n_layers = len(self.context)
        z = jac = None
        pres, jacs, z_weights = [], [], []
        for layer in range(n_layers + 1):
            gate = terms["u_gates"][layer]
            w_u = self.u_weight[layer].weight
            pre = (u * gate) @ w_u.T + terms["c_terms"][layer]
            a = w_u.unsqueeze(0) * gate.unsqueeze(1)
            if z is not None:
                pos = self.z_weight[layer - 1]
                w_z = F.softplus(pos.raw) / pos.n_in
                z_gate = terms["z_gates"][layer - 1]
                z_weights.append(w_z)
                pre = pre + (z * z_gate) @ w_z.T
                a = a + torch.matmul(w_z, z_gate.unsqueeze(-1) * jac)
            pres.append(pre)
            jacs.append(a)
            if layer < n_layers:
                z = F.softplus(pre)
                jac = torch.sigmoid(pre).unsqueeze(-1) * a
        z_last = pres[-1][:, 0]
        curvature, location = terms["curvature"], terms["location"]
        s_last = torch.sigmoid(z_last)
        a_last = jacs[-1][:, 0, :]
        phi = (
            F.softplus(z_last) + 0.5 * curvature * (u**2).sum(1) + (u * location).sum(1)
        )
        grad = s_last[:, None] * a_last + curvature[:, None] * u + location
        # every weight d phi / d z * softplus'' is >= 0 (non-negative z
        # weights and gates, sigmoid factors), so the sum of weighted outer
        # products is B^T B with the rows sqrt(weight) a stacked in B
        rows = [(s_last * (1 - s_last)).sqrt()[:, None, None] * a_last[:, None, :]]
        adjoint = s_last[:, None]  # d phi / d pre of the current layer
        for layer in range(n_layers, 0, -1):
            d_z = (adjoint @ z_weights[layer - 1]) * terms["z_gates"][layer - 1]
            sig = torch.sigmoid(pres[layer - 1])
            weight = d_z * sig * (1 - sig)
            rows.append(weight.clamp_min(0).sqrt().unsqueeze(-1) * jacs[layer - 1])
            adjoint = d_z * sig
        b = torch.cat(rows, dim=1)
        hess = torch.matmul(b.transpose(1, 2), b)
        hess.diagonal(dim1=1, dim2=2).add_(curvature[:, None])
        return phi, grad, hess


def take_rows(terms, idx):
    """The ``context_terms`` of the rows ``idx``."""
    return {
        key: [v[idx] for v in value] if isinstance(value, list) else value[idx]
        for key, value in terms.items()
    }


class Amortizer(nn.Module):
    """Amortization network ``a(x, y) = MLP([x, y]) + L y`` guessing the rank.

    The MLP has the hidden layers ``hidden_layer_sizes`` (ELU); with none it
    is affine. Its output layer starts at zero, ``L`` at the identity.
    """

    def __init__(self, n_features, n_outputs, hidden_layer_sizes=(32, 32), *, dtype):
        super().__init__()
        layers, n_in = [], n_features + n_outputs
        for width in hidden_layer_sizes:
            layers += [nn.Linear(n_in, int(width), dtype=dtype), nn.ELU()]
            n_in = int(width)
        last = nn.Linear(n_in, n_outputs, dtype=dtype)
        nn.init.zeros_(last.weight)
        nn.init.zeros_(last.bias)
        self.mlp = nn.Sequential(*layers, last)
        self.linear = nn.Linear(n_outputs, n_outputs, bias=False, dtype=dtype)
        with torch.no_grad():
            self.linear.weight.copy_(torch.eye(n_outputs, dtype=dtype))

    def forward(self, x, y):
        return self.mlp(torch.cat([x, y], dim=1)) + self.linear(y)


def potential_grad(potential, u, x, *, create_graph=False):
    """``grad_u phi(u, x)`` for a batch (the problem is separable in rows)."""
    with torch.enable_grad():
        if not u.requires_grad:
            u = u.detach().requires_grad_(True)
        phi = potential(u, x)
        (grad,) = torch.autograd.grad(phi.sum(), u, create_graph=create_graph)
    return grad


def _derivatives(phi_of_u, u):
    """``phi``, ``grad_u phi`` and ``Hessian_u phi`` (n, d, d), detached."""
    d = u.shape[1]
    with torch.enable_grad():
        u = u.detach().requires_grad_(True)
        phi = phi_of_u(u)
        (grad,) = torch.autograd.grad(phi.sum(), u, create_graph=True)
        rows = []
        for j in range(d):
            (row,) = torch.autograd.grad(grad[:, j].sum(), u, retain_graph=j < d - 1)
            rows.append(row)
    return phi.detach(), grad.detach(), torch.stack(rows, dim=1).detach()


def potential_derivatives(potential, u, x):
    """``phi``, ``grad_u phi`` and ``Hessian_u phi`` (n, d, d), detached."""
    with torch.no_grad():
        terms = potential.context_terms(x)
        if hasattr(potential, "derivatives_u"):
            return potential.derivatives_u(u.detach(), terms)
    return _derivatives(partial(potential.forward_u, terms=terms), u)


def potential_hessian(potential, u, x):
    """Batched ``Hessian_u phi(u, x)`` of shape (n, d, d), no graph kept."""
    return potential_derivatives(potential, u, x)[2]


def newton_conjugate(potential, x, y, u0, *, max_iter=50, tol=1e-8):
    """Solve ``argmax_u <u, y> - phi(u, x)`` row by row with damped Newton.

    Each row is an independent strongly-convex problem; every row runs its own
    Armijo backtracking and stops on its own gradient norm, so the result is a
    deterministic function of ``(x, y, u0)`` that does not depend on the other
    rows of the batch. Returns the ranks (detached) and the number of Newton
    iterations run.

    The ``u``-free terms of ``phi(., x)`` are computed once
    (:meth:`PICNN.context_terms`), and the device is synchronised with the
    host once per Newton iteration (the active-row count) plus once per
    backtracking halving; no ``.item()`` or numpy round-trip in the loop.
    """
    u = u0.detach().clone()
    y = y.detach()
    with torch.no_grad():
        terms = potential.context_terms(x.detach())
    n_rows = u.shape[0]
    closed_form = hasattr(potential, "derivatives_u")
    idx = torch.arange(n_rows, device=u.device)
    n_iter = 0
    eye = torch.eye(u.shape[1], dtype=u.dtype, device=u.device)
    eps = torch.finfo(u.dtype).eps
    tol = max(tol, 100 * eps)
    for n_iter in range(1, max_iter + 1):
        if idx.numel() == 0:
            n_iter -= 1
            break
        all_rows = idx.numel() == n_rows
        ua, ya = (u, y) if all_rows else (u[idx], y[idx])
        ta = terms if all_rows else take_rows(terms, idx)
        if closed_form:
            with torch.no_grad():
                phi, grad_phi, hess = potential.derivatives_u(ua, ta)
        else:
            phi, grad_phi, hess = _derivatives(
                partial(potential.forward_u, terms=ta), ua
            )
        grad = grad_phi - ya
        gnorm = grad.norm(dim=1)
        done = gnorm <= tol
        # Newton direction. A ridge relative to the Hessian's scale guards
        # against round-off (in float32 a tiny curvature exp(s(x)) can leave
        # the Hessian numerically singular); a row whose system still fails
        # takes a gradient step instead (the line search then damps it). The
        # fixed point, grad phi(u) = y, is unchanged.
        scale = hess.diagonal(dim1=1, dim2=2).abs().amax(1).clamp_min(1.0)
        ridge = (100 * eps * scale)[:, None, None] * eye
        step, info = torch.linalg.solve_ex(hess + ridge, grad.unsqueeze(-1))
        step = -step[..., 0]
        bad = (info != 0) | ~torch.isfinite(step).all(1)
        step = torch.where(bad[:, None], -grad, step)
        f0 = phi - (ua * ya).sum(1)
        slope = (grad * step).sum(1)
        t = torch.ones_like(f0)
        accepted = done.clone()
        with torch.no_grad():
            for _ in range(30):
                cand = ua + t[:, None] * step
                f_new = potential.forward_u(cand, ta) - (cand * ya).sum(1)
                # Armijo, with slack for round-off near the optimum
                slack = 8 * eps * (1 + f0.abs())
                ok = (f_new <= f0 + 1e-4 * t * slope + slack) & ~accepted
                accepted = accepted | ok
                if bool(accepted.all()):
                    break
                t = torch.where(accepted, t, 0.5 * t)
        new_u = torch.where(done[:, None], ua, ua + t[:, None] * step)
        u[idx] = new_u.detach()
        idx = idx[~done]
    return u, n_iter


def lbfgs_conjugate(potential, x, y, u0, *, max_iter=100, tol=1e-10):
    """Cold-start L-BFGS (strong Wolfe) on the batch sum of conjugate problems.

    The rows share one line search, as in the authors' C-NQR solver; used
    during training with ``solver="lbfgs"`` and by the benchmark.
    """
    u = u0.detach().clone().requires_grad_(True)
    x = x.detach()
    y = y.detach()
    optimizer = torch.optim.LBFGS(
        [u],
        lr=1.0,
        max_iter=max_iter,
        tolerance_grad=tol,
        tolerance_change=1e-14,
        history_size=20,
        line_search_fn="strong_wolfe",
    )

    def closure():
        optimizer.zero_grad()
        loss = (potential(u, x) - (u * y).sum(1)).sum()
        loss.backward()
        return loss

    with torch.enable_grad():
        optimizer.step(closure)
    return u.detach()


class CVQRModule(nn.Module):
    """Potential ``phi`` + amortization network; forward returns the OT loss.

    In training (``forward(X, Y)``), for each row: draw ``u ~ F_U``, solve the
    conjugate ``u* = argmax_u <u, y> - phi(u, x)`` (detached) and return

        phi(u, x) + <u*, y> - phi(u*, x)  +  ||a(x, y) - u*||

    whose gradient in the parameters of ``phi`` is the semi-dual OT gradient
    (Danskin) and in those of ``a`` the amortization loss. During warm-up it
    returns ``||grad_u phi(u, x) - u||^2 + ||a(x, y) - y||^2`` instead.
    """

    def __init__(
        self,
        n_features,
        n_outputs,
        hidden_layer_sizes=(32, 32),
        solver="amortized",
        reference="gaussian",
        inner_max_iter=50,
        train_inner_iter=5,
        epsilon=1e-3,
        n_mc=512,
        *,
        dtype=torch.float64,
        curvature=CURVATURE,
    ):
        super().__init__()
        self.n_outputs = n_outputs
        self.solver = solver
        self.reference = reference
        self.inner_max_iter = inner_max_iter
        self.train_inner_iter = train_inner_iter
        self.epsilon = epsilon
        self.n_mc = n_mc
        self.potential = PICNN(
            n_features,
            n_outputs,
            hidden_layer_sizes,
            dtype=dtype,
            curvature=curvature,
        )
        self.amortizer = Amortizer(
            n_features, n_outputs, hidden_layer_sizes, dtype=dtype
        )
        self.in_warmup = False

    def forward(self, X, Y):
        n, d = Y.shape
        u = sample_reference(n, d, self.reference, dtype=Y.dtype).to(Y.device)
        if self.in_warmup:
            grad = potential_grad(self.potential, u, X, create_graph=True)
            guess = self.amortizer(X, Y)
            return ((grad - u) ** 2).sum(1) + ((guess - Y) ** 2).sum(1)
        phi_u = self.potential(u, X)
        if self.solver == "entropic":
            m = self.n_mc
            ref = sample_reference(m, d, self.reference, dtype=Y.dtype).to(Y.device)
            x_rep = X.repeat_interleave(m, dim=0)
            u_rep = ref.repeat(n, 1)
            phi_ref = self.potential(u_rep, x_rep).reshape(n, m)
            logits = (Y @ ref.T - phi_ref) / self.epsilon
            psi = self.epsilon * (torch.logsumexp(logits, dim=1) - math.log(m))
            return phi_u + psi
        if self.solver == "amortized":
            guess = self.amortizer(X, Y)
            u_star, _ = newton_conjugate(
                self.potential,
                X,
                Y,
                guess.detach(),
                max_iter=self.train_inner_iter,
                tol=1e-6,
            )
            amortization = torch.sqrt(((guess - u_star) ** 2).sum(1) + 1e-12)
        else:  # cold-start L-BFGS
            u_star = lbfgs_conjugate(
                self.potential, X, Y, torch.zeros_like(Y), max_iter=self.inner_max_iter
            )
            amortization = torch.zeros_like(phi_u)
        conj = (u_star * Y).sum(1) - self.potential(u_star, X)
        return phi_u + conj + amortization

    # -- inference helpers (no parameter gradients) -----------------------
    def quantile(self, x, u):
        return potential_grad(self.potential, u, x).detach()

    def initial_rank(self, x, y):
        """Warm start of the rank solver: deterministic in ``(x, y)``."""
        if self.solver == "amortized":
            with torch.no_grad():
                return self.amortizer(x, y)
        if self.solver == "entropic":
            # soft argmax over a fixed reference cloud (seeded once)
            gen = torch.Generator().manual_seed(0)
            ref = sample_reference(
                self.n_mc, y.shape[1], self.reference, generator=gen, dtype=y.dtype
            ).to(y.device)
            n, m = y.shape[0], ref.shape[0]
            with torch.no_grad():
                phi_ref = self.potential(
                    ref.repeat(n, 1), x.repeat_interleave(m, dim=0)
                ).reshape(n, m)
                weights = torch.softmax((y @ ref.T - phi_ref) / self.epsilon, dim=1)
            return weights @ ref
        return torch.zeros_like(y)

    def rank(self, x, y, *, max_iter=None, tol=1e-8):
        u0 = self.initial_rank(x, y)
        budget = self.inner_max_iter if max_iter is None else max_iter
        u, _ = newton_conjugate(self.potential, x, y, u0, max_iter=budget, tol=tol)
        return u

    def hessian(self, x, u):
        return potential_hessian(self.potential, u, x)


class PassthroughLoss(nn.Module):
    """Criterion returning the module's per-sample losses unchanged."""

    def forward(self, y_pred, y_true=None, **aux):
        return y_pred


class WarmupPhase(Callback):
    """skorch callback: switch the module's warm-up flag at each epoch."""

    def __init__(self, warmup_epochs):
        self.warmup_epochs = warmup_epochs

    def on_epoch_begin(self, net, **kwargs):
        net.module_.in_warmup = len(net.history) <= self.warmup_epochs

    def on_train_end(self, net, **kwargs):
        net.module_.in_warmup = False


def semi_dual_objective(module, X, Y, U):
    """Held-out semi-dual OT objective ``mean phi(U, X) + mean phi*(Y, X)``.

    ``phi*`` is the exact conjugate (the rank solver of inference, warm-started
    from the amortizer, to ``inner_max_iter`` Newton steps); ``U`` are fixed
    draws of the reference law. Lower is better; it is the quantity training
    minimises, evaluated on rows the parameters never saw.
    """
    return _held_out_objective(module, X, Y, U)[0]


def _held_out_objective(module, X, Y, U):
    """Semi-dual objective and rank ratio ``mean ||R||^2 / E||U||^2``."""
    u_star = module.rank(X, Y)
    with torch.no_grad():
        phi_u = module.potential(U, X)
        conj = (u_star * Y).sum(1) - module.potential(u_star, X)
        expected = float((U * U).sum(1).mean())
        ratio = float((u_star * u_star).sum(1).mean()) / expected
    return float((phi_u + conj).mean()), ratio


class SemiDualEarlyStopping(Callback):
    """skorch callback: early stopping on the held-out semi-dual objective.

    After each epoch past the warm-up, evaluates :func:`semi_dual_objective`
    on the validation rows and records it in the history as
    ``"valid_semi_dual"``. Training stops when it has not decreased by more
    than ``tol`` for ``n_iter_no_change`` epochs, and the parameters of the
    best epoch (the last that decreased it by more than ``tol``, as skorch's
    ``EarlyStopping``) are restored at the end of training.
    """

    def __init__(
        self,
        X_valid,
        Y_valid,
        U_valid,
        n_iter_no_change,
        tol,
        warmup,
        keep_rank_state=False,
    ):
        store_params(self, locals())

    def initialize(self):
        self.best_rank_gap_ = math.inf
        self.best_rank_epoch_ = 0
        self.best_rank_state_ = None
        self.best_score_ = math.inf
        self.best_epoch_ = 0
        self.best_state_ = None
        self._no_improvement = 0
        return self

    def _tensors(self, net):
        param = next(net.module_.parameters())
        return [
            torch.as_tensor(a).to(device=param.device, dtype=param.dtype)
            for a in (self.X_valid, self.Y_valid, self.U_valid)
        ]

    def on_epoch_end(self, net, **kwargs):
        epoch = len(net.history)
        if epoch <= self.warmup:
            return
        X, Y, U = self._tensors(net)
        score, ratio = _held_out_objective(net.module_, X, Y, U)
        net.history.record("valid_semi_dual", score)
        # the rank diagnostic on the same rows (recorded, not used to stop)
        net.history.record("valid_rank_ratio", ratio)
        if self.keep_rank_state and abs(math.log(ratio)) < self.best_rank_gap_:
            self.best_rank_gap_ = abs(math.log(ratio))
            self.best_rank_epoch_ = epoch
            self.best_rank_state_ = copy.deepcopy(net.module_.state_dict())
        # an improvement is a decrease by more than tol; the best epoch is the
        # last improvement (the rule of skorch's EarlyStopping, which the
        # torch base uses)
        if math.isfinite(score) and not score > self.best_score_ - self.tol:
            self._no_improvement = 0
            self.best_score_ = score
            self.best_epoch_ = epoch
            self.best_state_ = copy.deepcopy(net.module_.state_dict())
        else:
            self._no_improvement += 1
        if self._no_improvement >= self.n_iter_no_change:
            raise _StopTraining  # skorch ends the training loop cleanly

    def on_train_end(self, net, **kwargs):
        if self.best_state_ is not None:
            net.module_.load_state_dict(self.best_state_)
