"""torch modules of the Bayesian-augmentation estimators (imported lazily).

``AugmentedMLPModule = Augmenter -> MLP``. The augmenter's parameters phi
live in an unconstrained space ``rho`` with a Gaussian variational posterior
``q(rho) = N(m, s^2)`` (per dimension) and a Gaussian prior ``p(rho) =
N(m_0, prior_scale^2)`` centred on the initial strength; the strength is
``softplus(rho)`` (noise scale, mixup's Beta concentration) or
``sigmoid(rho)`` (dropout rate). Samples are reparameterised (``m + s *
xi``; ``Beta.rsample``; relaxed Bernoulli masks), so the data term sends
gradients to ``m`` and ``s``.

``SwapAugmenter`` adds relaxed categorical swap noise on one-hot column
blocks: per block a swap probability ``sigmoid(rho_b)`` with the same
Gaussian posterior and prior on ``rho_b``; each row's block is redrawn from
``(1 - p_b) x_block + p_b pi_b`` (keep the category, or swap in one drawn
from the training frequencies ``pi_b``) by Gumbel-softmax, so the draw is a
relaxed one-hot (sums to 1; one-hot as the temperature goes to 0) and the
data term sends gradients to ``rho_b``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import functools
import math

import torch
from torch import nn
from torch.autograd.function import once_differentiable
from torch.nn import functional as F

from sklearn_iclr26.utils._mlp_modules import MLPModule

AUGMENTERS = ("none", "gaussian", "mixup", "dropout")
_RELAXED_TEMPERATURE = 0.1


def _standard_normal(shape, like):
    """Standard normal draws in ``like``'s dtype and device.

    Drawn in float32 and cast: torch's float64 normal sampler on the CPU is
    about 6x slower than its float32 one, and the draws feed only the
    augmentation noise and the reparameterised posterior samples, where
    float32 resolution (24-bit mantissa) is ample.
    """
    draws = torch.randn(shape, dtype=torch.float32, device=like.device)
    return draws.to(like.dtype)


def _kl_value(q_log_std, s2, diff, tau):
    """``sum_j log(tau / s_j) + (s_j^2 + diff_j^2) / (2 tau^2) - 1/2``."""
    quadratic = torch.addcmul(s2, diff, diff).sum() * (0.5 / tau**2)
    return quadratic - q_log_std.sum() + q_log_std.numel() * (math.log(tau) - 0.5)


class _GaussianKL(torch.autograd.Function):
    """``KL(N(m, s^2) || N(m0, tau^2))`` summed, with its closed-form gradient.

    One autograd node instead of about fifteen: the forward runs without
    recording, the backward is ``dKL/dm = (m - m0) / tau^2`` and ``dKL/d log
    s = s^2 / tau^2 - 1`` (a per-step saving for the tiny networks where the
    augmentation's fixed per-step cost matters).
    """

    @staticmethod
    def forward(ctx, q_mean, q_log_std, prior_mean, prior_scale):
        tau = float(prior_scale)
        s2 = q_log_std.exp() ** 2
        diff = q_mean - prior_mean
        ctx.save_for_backward(diff, s2)
        ctx.tau2 = tau**2
        return _kl_value(q_log_std, s2, diff, tau)

    @staticmethod
    @once_differentiable  # no second derivatives (an error, not a wrong value)
    def backward(ctx, grad):
        diff, s2 = ctx.saved_tensors
        grad_mean = grad_log_std = None
        if ctx.needs_input_grad[0]:
            grad_mean = diff * (grad / ctx.tau2)
        if ctx.needs_input_grad[1]:
            grad_log_std = (s2 / ctx.tau2 - 1) * grad
        return grad_mean, grad_log_std, None, None


def _gaussian_kl(q_mean, q_log_std, prior_mean, prior_scale):
    """``KL(N(m, s^2) || N(m0, tau^2))`` summed over dimensions."""
    return _GaussianKL.apply(q_mean, q_log_std, prior_mean, prior_scale)


class _ReparameterizedGaussianNoise(torch.autograd.Function):
    """``X + softplus(m + s * eps) * noise`` and the posterior's KL, one node.

    ``eps`` (the posterior draws, one row per example) and ``noise`` (the
    augmentation noise, already multiplied by the feature scales) have the
    shape of ``X``; ``m`` and ``log s`` are per feature. Returns ``(X_aug,
    kl)`` with ``kl = KL(N(m, s^2) || N(m0, tau^2))`` summed over features.

    The per-cell arithmetic (``m + s eps``, its softplus and sigmoid, the
    product with the noise) runs in the dtype of ``eps`` and ``noise``; with
    draws in ``X``'s dtype the forward runs the same ops as the unfused
    expressions (same values to the last bit). The training forward passes
    float32 draws (:meth:`AugmentedMLPModule._augment_kl`), so for a float64
    network the noise perturbation and the per-cell gradient terms have
    float32 resolution (relative 6e-8, far below the Monte-Carlo noise of the
    one-sample gradient; the row sums accumulate in the parameters' dtype):
    it halves the cost of the transcendental functions and removes the casts.
    The forward does not record its ops; the backward is written out: with
    ``g = dL/dX_aug``, ``g_kl = dL/dkl`` and ``rho = m + s eps``,
    ``dL/drho = g * noise * sigmoid(rho)``, ``dL/dm = sum_rows dL/drho +
    g_kl (m - m0) / tau^2`` and ``dL/d log s = s * sum_rows(dL/drho * eps) +
    g_kl (s^2 / tau^2 - 1)``. One node instead of about twenty small ones
    per step (the augmentation's fixed per-step cost is what matters for
    tiny networks).
    """

    @staticmethod
    def forward(ctx, X, q_mean, q_log_std, eps, noise, prior_mean, prior_scale):
        ctx.set_materialize_grads(False)
        s = q_log_std.exp()
        # the per-cell arithmetic runs in the draws' dtype (float32 in
        # training: see the class docstring); the perturbation is added to X
        # in X's dtype
        rho = torch.addcmul(q_mean.to(eps.dtype), eps, s.to(eps.dtype))
        X_aug = torch.addcmul(X, F.softplus(rho), noise)
        tau = float(prior_scale)
        s2 = s**2
        diff = q_mean - prior_mean
        kl = _kl_value(q_log_std, s2, diff, tau)
        ctx.save_for_backward(rho, eps, noise, s, s2, diff)
        ctx.tau2 = tau**2
        return X_aug, kl

    @staticmethod
    @once_differentiable  # no second derivatives (an error, not a wrong value)
    def backward(ctx, grad, grad_kl):
        rho, eps, noise, s, s2, diff = ctx.saved_tensors
        need_X, need_mean, need_log_std = ctx.needs_input_grad[:3]
        grad_X = grad if need_X else None
        grad_mean = grad_log_std = None
        if grad is not None and (need_mean or need_log_std):
            grad_rho = torch.sigmoid(rho).mul_(grad.to(rho.dtype)).mul_(noise)
            # sums over rows accumulate in the parameters' dtype
            if need_mean:
                grad_mean = grad_rho.sum(dim=0, dtype=s.dtype)
            if need_log_std:
                grad_log_std = grad_rho.mul_(eps).sum(dim=0, dtype=s.dtype).mul_(s)
        if grad_kl is not None:
            # + grad_kl * dKL/dm and + grad_kl * dKL/dlog s, in place
            if need_mean:
                if grad_mean is None:
                    grad_mean = torch.zeros_like(diff)
                grad_mean.addcmul_(diff, grad_kl, value=1 / ctx.tau2)
            if need_log_std:
                if grad_log_std is None:
                    grad_log_std = torch.zeros_like(s2)
                grad_log_std.addcmul_(s2, grad_kl, value=1 / ctx.tau2).sub_(grad_kl)
        return grad_X, grad_mean, grad_log_std, None, None, None, None


def _inverse_transform(kind, strength):
    if kind in ("dropout", "swap"):
        return math.log(strength / (1 - strength))
    # softplus^{-1}(s) = log(expm1(s))
    return strength + math.log(-math.expm1(-strength))


class _RhoPosterior(nn.Module):
    """A Gaussian posterior ``q(rho) = N(m, s^2)`` over unconstrained
    augmentation parameters, its prior ``N(m0, tau^2)`` and the map
    ``transform`` from ``rho`` to a strength.

    Subclasses call :meth:`_init_posterior` (or set ``q_mean = q_log_std =
    None`` for a fixed strength) and define :meth:`transform`; ``fixed``
    (a buffer of the fixed strengths) is what :meth:`_at_mean` and
    :meth:`_sample` return without a posterior.
    """

    def _init_posterior(self, dim, m0, q_init_std, learn, prior_scale, dtype):
        self.register_buffer("prior_mean", torch.full((dim,), m0, dtype=dtype))
        self.prior_scale = float(prior_scale)
        self.q_mean = nn.Parameter(
            torch.full((dim,), m0, dtype=dtype), requires_grad=bool(learn)
        )
        if q_init_std > 0:
            self.q_log_std = nn.Parameter(
                torch.full((dim,), math.log(q_init_std), dtype=dtype),
                requires_grad=bool(learn),
            )
        else:
            self.q_log_std = None

    def _at_mean(self, fixed):
        """Strengths at the posterior mean (``fixed`` without a posterior)."""
        if self.q_mean is None:
            return fixed
        return self.transform(self.q_mean)

    def _sample(self, n, eps, fixed):
        """``n`` reparameterised strengths ``transform(m + s * eps)``, (n, dim)."""
        if self.q_mean is None:
            return fixed.expand(n, -1)
        if self.q_log_std is None:
            return self.transform(self.q_mean.expand(n, -1))
        if eps is None:
            eps = _standard_normal((n, self.q_mean.shape[0]), self.q_mean)
        # m + s * eps in one op (broadcast over rows)
        return self.transform(torch.addcmul(self.q_mean, eps, self.q_log_std.exp()))

    def kl(self):
        """``KL(q(rho) || p(rho))`` summed over dimensions (``None`` without q)."""
        if self.q_mean is None or self.q_log_std is None:
            return None
        return _gaussian_kl(
            self.q_mean, self.q_log_std, self.prior_mean, self.prior_scale
        )


class Augmenter(_RhoPosterior):
    """Learnable augmentation with a Gaussian posterior over its parameters.

    Parameters
    ----------
    kind : {"none", "gaussian", "mixup", "dropout"}
    n_features : int
    init_strength : float
        Initial strength (also the prior's centre).
    q_init_std : float
        Initial posterior std of ``rho``; 0 makes ``rho`` a point estimate.
    learn : bool
        Learn ``m`` (and ``s``); otherwise they stay at their initial values.
    prior_scale : float
        Std of the Gaussian prior on ``rho``.
    feature_scale : sequence of float or None
        Per-feature scale of the Gaussian noise (training-set std).
    dtype : torch.dtype
    mixup_draw : {"rsample", "sample"}
        Mixup's Beta weight reparameterised, or drawn without a gradient
        (the authors' script: ``alpha`` moves only through the KL).
    """

    def __init__(
        self,
        kind,
        n_features,
        init_strength,
        q_init_std,
        learn,
        prior_scale,
        feature_scale=None,
        dtype=None,
        mixup_draw="rsample",
    ):
        super().__init__()
        self.kind = kind
        self.mixup_draw = mixup_draw
        self.fixed = not learn and q_init_std == 0
        dim = n_features if kind == "gaussian" else 1
        scale = torch.ones(n_features) if feature_scale is None else feature_scale
        self.register_buffer("feature_scale", torch.as_tensor(scale, dtype=dtype))
        self.register_buffer(
            "fixed_strength", torch.full((dim,), float(init_strength), dtype=dtype)
        )
        if kind == "none" or self.fixed:
            self.q_mean = None
            self.q_log_std = None
            return
        m0 = _inverse_transform(kind, float(init_strength))
        self._init_posterior(dim, m0, q_init_std, learn, prior_scale, dtype)

    def transform(self, rho):
        return torch.sigmoid(rho) if self.kind == "dropout" else F.softplus(rho)

    def strength(self):
        """Strength at the posterior mean."""
        return self._at_mean(self.fixed_strength)

    def sample_strength(self, n, eps=None):
        """``n`` reparameterised strengths, shape (n, dim)."""
        return self._sample(n, eps, self.fixed_strength)

    def gaussian_noise(self, X, eps, noise):
        """``(X + softplus(m + s * eps) * scale * noise, kl())`` in one node.

        For the Gaussian augmenter with a posterior std: with draws in
        ``X``'s dtype, the same values as ``apply(X, sample_strength(n, eps),
        noise)[0]`` and ``kl()``, through one fused autograd node
        (:class:`_ReparameterizedGaussianNoise`); with float32 draws (as in
        training) its per-cell arithmetic runs in float32.
        """
        return _ReparameterizedGaussianNoise.apply(
            X,
            self.q_mean,
            self.q_log_std,
            eps,
            self.feature_scale.to(noise.dtype) * noise,
            self.prior_mean,
            self.prior_scale,
        )

    def apply(self, X, strength, noise=None):
        """Augment rows ``X`` with per-row strengths; returns ``(X_aug, mix)``.

        ``mix`` is ``(lam, perm)`` for mixup, else ``None``. ``noise`` (same
        shape as ``X``, optional) replaces the draws of the Gaussian noise
        (standard normal) or of the dropout mask (uniform).
        """
        if self.kind == "none":
            return X, None
        if self.kind == "gaussian":
            if noise is None:
                noise = _standard_normal(X.shape, X)
            return torch.addcmul(X, strength, self.feature_scale * noise), None
        if self.kind == "dropout":
            rate = strength.clamp(1e-6, 1 - 1e-6)
            keep = 1 - rate
            if noise is None:
                noise = torch.rand_like(X)
            u = noise.clamp(1e-12, 1 - 1e-12)
            # relaxed Bernoulli(keep) mask, reparameterised
            logits = torch.log(keep) - torch.log(rate) + torch.log(u) - torch.log1p(-u)
            mask = torch.sigmoid(logits / _RELAXED_TEMPERATURE)
            return X * mask / keep, None
        # mixup
        alpha = strength.clamp_min(1e-3).reshape(-1)
        beta = torch.distributions.Beta(alpha, alpha)
        # "sample" (the authors' script): no data gradient reaches alpha
        lam = beta.sample() if self.mixup_draw == "sample" else beta.rsample()
        perm = torch.randperm(X.shape[0], device=X.device)
        lam_col = lam.reshape(-1, 1).to(X.dtype)
        return lam_col * X + (1 - lam_col) * X[perm], (lam, perm)


class SwapAugmenter(_RhoPosterior):
    """Relaxed categorical swap noise on one-hot column blocks.

    Per block ``b`` a swap probability ``p_b = sigmoid(rho_b)`` with
    ``q(rho_b) = N(m_b, s_b^2)`` and prior ``N(logit(p_0), prior_scale^2)``.
    A row's block ``x_b`` (one-hot) is replaced by a Gumbel-softmax draw of
    the categorical ``(1 - p_b) x_b + p_b pi_b``: with probability ``1 -
    p_b`` it keeps its category, otherwise it takes one drawn from the
    training frequencies ``pi_b`` (as swapping in the value of a random
    training row does). The relaxed draw sums to 1 over the block and is
    one-hot as ``temperature -> 0``.

    Parameters
    ----------
    blocks : list of sequence of int
        Column indices of each block (disjoint).
    frequencies : list of sequence of float
        Training frequency of each block's categories.
    init_proba : float
        Initial swap probability (also the prior's centre).
    q_init_std, learn, prior_scale : as for :class:`Augmenter`
    temperature : float
        Gumbel-softmax temperature.
    dtype : torch.dtype
    """

    def __init__(
        self,
        blocks,
        frequencies,
        init_proba,
        q_init_std,
        learn,
        prior_scale,
        temperature=0.5,
        dtype=None,
    ):
        super().__init__()
        dtype = dtype or torch.get_default_dtype()
        self.sizes = [len(b) for b in blocks]
        n_blocks = len(blocks)
        self.temperature = float(temperature)
        self.fixed = not learn and q_init_std == 0
        self.register_buffer(
            "columns", torch.as_tensor([c for b in blocks for c in b]).long()
        )
        self.register_buffer(
            "block_of_column",
            torch.as_tensor([i for i, b in enumerate(blocks) for _ in b]).long(),
        )
        freq = torch.as_tensor(
            [f for fb in frequencies for f in fb], dtype=torch.float64
        )
        self.register_buffer("frequencies", freq.to(dtype))
        self.register_buffer(
            "fixed_proba", torch.full((n_blocks,), float(init_proba), dtype=dtype)
        )
        if self.fixed:
            self.q_mean = self.q_log_std = None
            return
        m0 = _inverse_transform("swap", float(init_proba))
        self._init_posterior(n_blocks, m0, q_init_std, learn, prior_scale, dtype)

    @property
    def n_blocks(self):
        return len(self.sizes)

    def transform(self, rho):
        return torch.sigmoid(rho)

    def proba(self):
        """Swap probabilities at the posterior mean, shape (n_blocks,)."""
        return self._at_mean(self.fixed_proba)

    def sample_proba(self, n, eps=None):
        """``n`` reparameterised swap probabilities, shape (n, n_blocks)."""
        return self._sample(n, eps, self.fixed_proba)

    def apply(self, X, proba, uniform=None):
        """Swap-augment the blocks of ``X`` with per-row probabilities.

        ``proba`` has shape (n, n_blocks); ``uniform`` (n, n_block_columns)
        optionally replaces the uniform draws of the Gumbel noise.
        """
        x = X[:, self.columns]
        p = proba[:, self.block_of_column]
        mixture = (1 - p) * x + p * self.frequencies
        if uniform is None:
            uniform = torch.rand_like(x)
        u = uniform.clamp(1e-12, 1 - 1e-12)
        gumbel = -torch.log(-torch.log(u))
        logits = (torch.log(mixture.clamp_min(1e-30)) + gumbel) / self.temperature
        relaxed = torch.cat(
            [torch.softmax(z, dim=1) for z in torch.split(logits, self.sizes, 1)],
            dim=1,
        )
        return X.index_copy(1, self.columns, relaxed.to(X.dtype))


class AugmentedMLPModule(nn.Module):
    """``Augmenter -> MLPModule``; augmentation only in training mode.

    In training mode ``forward`` repeats the batch ``n_aug_samples`` times,
    augments each copy with its own posterior sample and returns ``(output,
    extras)`` with ``output`` of shape ``(n_aug_samples * batch, n_outputs)``
    (copy-major) and ``extras = {"mix": (lam, perm) or None, "kl": tensor or
    callable, "strength": callable}`` (the KL of the augmenters, or a
    callable returning it or ``None``; a callable returning the strengths at
    the posterior mean: both computed on demand by the loss); in eval mode it
    is the plain MLP.

    With ``categorical_blocks`` (lists of column indices of one-hot blocks) a
    :class:`SwapAugmenter` first swap-augments the blocks; the Gaussian and
    dropout augmenters then act on the other columns only (mixup on all).
    """

    def __init__(
        self,
        n_features,
        n_outputs,
        hidden_layer_sizes=(32,),
        activation="relu",
        augmenter="gaussian",
        init_strength=0.1,
        q_init_std=0.1,
        learn_augmentation=True,
        prior_scale=2.0,
        n_aug_samples=1,
        feature_scale=None,
        categorical_blocks=None,
        category_frequencies=None,
        init_swap_proba=0.1,
        swap_temperature=0.5,
        dtype=None,
        mixup_draw="rsample",
    ):
        super().__init__()
        continuous = None
        n_aug_features = n_features
        if categorical_blocks and augmenter in ("gaussian", "dropout"):
            in_block = {c for b in categorical_blocks for c in b}
            kept = [j for j in range(n_features) if j not in in_block]
            continuous = torch.as_tensor(kept, dtype=torch.long)
            n_aug_features = len(kept)
            if feature_scale is not None:
                feature_scale = torch.as_tensor(feature_scale)[continuous]
        self.register_buffer("continuous", continuous)
        self.augmenter = Augmenter(
            augmenter,
            n_aug_features,
            init_strength,
            q_init_std,
            learn_augmentation,
            prior_scale,
            feature_scale,
            dtype,
            mixup_draw,
        )
        self.swap = None
        if categorical_blocks:
            self.swap = SwapAugmenter(
                categorical_blocks,
                category_frequencies,
                init_swap_proba,
                q_init_std,
                learn_augmentation,
                prior_scale,
                swap_temperature,
                dtype,
            )
        self.mlp = MLPModule(
            n_features, n_outputs, hidden_layer_sizes, activation, dtype=dtype
        )
        self.n_aug_samples = int(n_aug_samples)

    def _augment(self, Xk, eps=None, noise=None, eps_swap=None, uniform=None):
        """``(X_aug, mix)``: augmented rows and mixup's ``(lam, perm)``."""
        return self._augment_kl(Xk, eps, noise, eps_swap, uniform)[:2]

    def _augment_kl(self, Xk, eps=None, noise=None, eps_swap=None, uniform=None):
        """``(X_aug, mix, kl)``: ``kl`` is the augmenter's KL when the fused
        Gaussian path computed it, else ``None``."""
        aug = self.augmenter
        if self.swap is not None:
            proba = self.swap.sample_proba(Xk.shape[0], eps_swap)
            Xk = self.swap.apply(Xk, proba, uniform)
        cols = self.continuous
        sub = Xk if cols is None else Xk[:, cols]
        if aug.kind == "gaussian" and aug.q_log_std is not None:
            if eps is None:
                # posterior and noise draws in one call, kept in float32 (the
                # node's per-cell arithmetic runs in their dtype)
                eps, noise = torch.randn(
                    (2, *sub.shape), dtype=torch.float32, device=sub.device
                ).unbind(0)
            (sub_aug, kl), mix = aug.gaussian_noise(sub, eps, noise), None
        else:
            strength = aug.sample_strength(sub.shape[0], eps)
            (sub_aug, mix), kl = aug.apply(sub, strength, noise), None
        X_aug = sub_aug if cols is None else Xk.index_copy(1, cols, sub_aug)
        return X_aug, mix, kl

    def _kl(self, augmenter_kl=None):
        """Summed KL of the augmenters (``augmenter_kl``: the augmenter's,
        already computed)."""
        kls = [self.augmenter.kl() if augmenter_kl is None else augmenter_kl]
        if self.swap is not None:
            kls.append(self.swap.kl())
        kls = [k for k in kls if k is not None]
        return sum(kls) if kls else None

    def _strength(self):
        strength = self.augmenter.strength()
        if self.swap is None:
            return strength
        return torch.cat([strength, self.swap.proba()])

    def forward(self, X, **aux):
        if not self.training:
            return self.mlp(X)
        k = self.n_aug_samples
        Xk = X.repeat(k, 1) if k > 1 else X
        X_aug, mix, kl = self._augment_kl(Xk)
        # the KL and the strength are left to the loss, computed only when its
        # settings use them (no work when kl_weight=0 or strength_reward=0);
        # the fused Gaussian path has the augmenter's KL already
        if kl is None:
            kl = self._kl
        elif self.swap is not None:
            kl = functools.partial(self._kl, kl)
        extras = {"mix": mix, "kl": kl, "strength": self._strength}
        return self.mlp(X_aug), extras

    def predict_augmented(
        self, X, eps_rho, noise, eps_swap=None, uniform=None, classification=True
    ):
        """Average over pre-drawn augmentations (``aug_at_predict``).

        ``eps_rho`` has shape (n, K, dim) and ``noise`` (n, K, n_aug_features):
        the posterior and augmentation draws of K copies per row; with swap
        noise, ``eps_swap`` (n, K, n_blocks) and ``uniform`` (n, K,
        n_block_columns) are those of the swaps. Returns the log of the mean
        class probabilities (classification) or the mean output.
        """
        n, k = X.shape[0], eps_rho.shape[1]
        Xk = X.unsqueeze(1).expand(n, k, X.shape[1]).reshape(n * k, -1)
        if eps_swap is not None:
            eps_swap = eps_swap.reshape(n * k, -1)
            uniform = uniform.reshape(n * k, -1)
        X_aug, _ = self._augment(
            Xk,
            eps_rho.reshape(n * k, -1),
            noise.reshape(n * k, -1),
            eps_swap,
            uniform,
        )
        out = self.mlp(X_aug).reshape(n, k, -1)
        if classification:
            return torch.logsumexp(torch.log_softmax(out, dim=2), dim=1) - math.log(k)
        return out.mean(dim=1)


class AugmentedLoss(nn.Module):
    """Per-sample negative ELBO terms of the augmented likelihood.

    ``forward((output, extras), y)`` returns, per sample ``i``, the data term
    (the mean over the K copies of ``-log p(y_i | x~_ik)`` for
    ``likelihood="avg_loglik"``; ``-log mean_k p(y_i | x~_ik)`` for
    ``"avg_func"``) plus the shares of the batch-level terms, so that their
    (weighted) mean is ``data + kl_weight * KL / scale - strength_reward *
    ||strength||``, with ``scale = n_train`` (``kl_scale="n_samples"``) or
    the batch size (``"batch"``). Classification: cross-entropy; regression:
    ``1/2 ||y - f||^2`` (unit-variance Gaussian on standardised targets,
    constant dropped); mixup mixes the losses (classification) or the targets
    (regression).
    """

    def __init__(
        self,
        classification=True,
        likelihood="avg_loglik",
        n_aug_samples=1,
        kl_weight=1.0,
        kl_scale="n_samples",
        n_train=1,
        strength_reward=0.0,
    ):
        super().__init__()
        self.classification = classification
        self.likelihood = likelihood
        self.n_aug_samples = int(n_aug_samples)
        self.kl_weight = float(kl_weight)
        self.kl_scale = kl_scale
        self.n_train = int(n_train)
        self.strength_reward = float(strength_reward)

    def _nll(self, out, y):
        if self.classification:
            return F.cross_entropy(out, y.long(), reduction="none")
        return 0.5 * ((out - y.reshape(out.shape)) ** 2).sum(dim=1)

    def forward(self, y_pred, y_true, **aux):
        if not isinstance(y_pred, tuple):  # eval mode: plain data term
            return self._nll(y_pred, y_true)
        out, extras = y_pred
        k = self.n_aug_samples
        batch = out.shape[0] // k
        if k == 1:
            y = y_true
        else:
            y = y_true.repeat(k) if y_true.ndim == 1 else y_true.repeat(k, 1)
        mix = extras["mix"]
        if mix is None:
            nll = self._nll(out, y)
        else:
            lam, perm = mix
            lam = lam.to(out.dtype)
            if self.classification:
                nll = lam * self._nll(out, y) + (1 - lam) * self._nll(out, y[perm])
            else:
                y2 = y.reshape(out.shape)
                lam_col = lam.reshape(-1, 1)
                nll = self._nll(out, lam_col * y2 + (1 - lam_col) * y2[perm])
        if k == 1:  # both likelihoods reduce to the copy's own term
            data = nll
        elif self.likelihood == "avg_loglik":
            data = nll.reshape(k, batch).mean(dim=0)
        else:
            data = -(torch.logsumexp(-nll.reshape(k, batch), dim=0) - math.log(k))
        kl = _extra(extras, "kl") if self.kl_weight > 0 else None
        if kl is not None:
            scale = self.n_train if self.kl_scale == "n_samples" else batch
            data = data + kl * (self.kl_weight / scale)
        if self.strength_reward > 0:
            data = data - self.strength_reward * _extra(extras, "strength").norm()
        return data


def _extra(extras, key):
    """``extras[key]``, calling it when the module passed a callable."""
    value = extras[key]
    return value() if callable(value) else value
