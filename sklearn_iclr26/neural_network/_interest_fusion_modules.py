"""torch parts of :class:`DiffusionInterestFusionClassifier` (imported lazily).

Module level so that fitted estimators pickle. The forms below follow the
paper's notes where they are explicit and are our reconstruction where they
are not (``doc/ifusion.rst`` lists which is which):

* item encoders: an embedding table (row 0 = padding, the last row = unknown
  items) and masked mean pooling; pre-computed embeddings are projected by one
  linear map instead;
* ``fusion="diffusion"``: the long-term interest ``h_L`` is the diffusion
  start ``x_0``; each of the ``K`` sessions, oldest first, runs one denoising
  stage whose output starts the next stage (MARN). The denoiser predicts
  ``x_0`` in v-prediction form, ``f(x_t, t) = sqrt(abar_t) x_t +
  sqrt(1 - abar_t) F(x_t, t, g_cp, g_tf)`` (so ``f(x, 0) = x``, the
  consistency-model boundary condition);
  guidance is decoupled, ``f = f(x_t,t) + sum_j gamma_j (f(x_t,t,g_j) -
  f(x_t,t))``, with a core-preference vector ``g_cp`` (average pool of the
  sessions so far, "low-pass") and a transient vector ``g_tf`` (attention
  over the items of the current session, "high-pass"); an absent condition
  is a learned null vector. Each stage starts from the forward-process
  sample ``x_T = sqrt(abar_T) x + sqrt(1 - abar_T) eps`` (``eps`` standard
  normal: torch's generator in training, the ``noise`` argument at predict
  time; ``stage_start="mean"``, the ablation, drops the noise term) and takes
  one consistency step, or ``n_steps`` deterministic DDIM steps.
* ``fusion="concat"``: one linear map of ``[h_L, s_1, ..., s_K]``;
  ``"mlp"``: the same input through an MLP of the denoiser's depth and width
  (the capacity-matched concat); ``"attention"``: attention over the ``K +
  1`` interest vectors with the candidate as query; ``"din"``: DIN's target
  attention (the local activation unit of DeepCTR-Torch, an MLP (64, 32,
  sigmoid) on ``[q, k, q - k, q * k]``, unnormalised weights, padding masked)
  over every history item (long-term and session items) with the candidate
  as query.
* training loss per sample: binary cross-entropy of the click logit, plus
  ``evolution_weight`` times the interest-evolution loss of one stage drawn
  at random per batch (an unbiased estimate of its mean over the stages):
  ``evolution_loss="next_session"`` (the method's) is the cosine distance
  ``1 - cos(x_k, sg s_{k+1})`` of stage ``k``'s fused output to the pooled
  interest of the following session (stages ``1..K-1``; the last stage's
  following session is not in the row), ``"reconstruction"`` (the ablation)
  the DDPM ``x_0``-prediction loss of the stage input with conditions
  dropped with probability ``cond_dropout``; ``orthogonality_weight`` times
  ``(g_cp . g_tf)^2 / d`` of the same stage; and, at every stage,
  ``consistency_weight`` times the consistency loss ``||f(x_t, t) - sg c||^2
  / (sg ||c - x||^2 + 1e-3 d)``, ``c = f(x_T, T)``, at a random ``t < T`` on
  the deterministic DDIM path from ``x_T`` (the line of the one-step output,
  see ``IFusionModule._consistency``).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools
import math

import torch
from torch import nn
from torch.nn import functional as F

__all__ = [
    "IFusionLoss",
    "IFusionModule",
    "alpha_bar_schedule",
    "orthogonality_penalty",
]

# the schedule stops at abar_T = cos^2(0.4 pi) ~ 0.095 [reconstruction]: the
# start x_T = sqrt(abar_T) x_0 + sqrt(1 - abar_T) eps keeps a trace of the
# long-term interest (signal-to-noise ratio abar_T / (1 - abar_T) ~ 0.1)
_SCHEDULE_END = 0.8


def alpha_bar_schedule(n_steps):
    """Cumulative signal levels ``abar_t``, ``t = 0, ..., n_steps`` (cosine)."""
    t = torch.arange(n_steps + 1, dtype=torch.float64) / n_steps
    return torch.cos(0.5 * math.pi * _SCHEDULE_END * t) ** 2


def orthogonality_penalty(g_cp, g_tf):
    """Per-sample decorrelation term ``(g_cp . g_tf)^2 / d`` (0 if orthogonal)."""
    return (g_cp * g_tf).sum(dim=-1) ** 2 / g_cp.shape[-1]


def _masked_mean(emb, mask):
    # emb (..., S, d), mask (..., S) bool -> (..., d); all-padding rows give 0
    m = mask.unsqueeze(-1).to(emb.dtype)
    return (emb * m).sum(dim=-2) / m.sum(dim=-2).clamp_min(1.0)


def _masked_attention(query, keys, mask):
    # query (n, d), keys (n, S, d), mask (n, S) -> (n, d); all-padding gives 0
    scores = (keys @ query.unsqueeze(-1)).squeeze(-1) / math.sqrt(keys.shape[-1])
    scores = scores.masked_fill(~mask, -1e9)
    weights = torch.softmax(scores, dim=-1) * mask.to(keys.dtype)
    weights = weights / weights.sum(dim=-1, keepdim=True).clamp_min(1e-12)
    return (weights.unsqueeze(-1) * keys).sum(dim=-2)


class IFusionModule(nn.Module):
    """Interest encoders, the fusion (concat / attention / diffusion), CTR tower.

    ``forward(X, long, sessions, candidate=None)`` with ``X`` the (standardised)
    dense features ``(n, n_dense)``, ``long`` ``(n, L)`` item ids or ``(n, w)``
    embeddings, ``sessions`` ``(n, K, S)`` ids or ``(n, K, w)`` embeddings,
    ``candidate`` ``(n,)`` ids or ``(n, w)`` embeddings. Returns ``(logit,
    penalty)``, both ``(n,)``; ``penalty`` is the weighted sum of the
    auxiliary losses in training mode and zeros in eval mode.
    """

    def __init__(
        self,
        *,
        fusion,
        n_items,
        input_dim,
        embed_dim,
        n_sessions,
        has_candidate,
        n_dense,
        hidden_layer_sizes,
        n_diffusion_steps,
        guidance_scales,
        evolution_weight,
        evolution_loss="next_session",
        stage_start="noise",
        orthogonality_weight,
        consistency_weight,
        cond_dropout,
        dtype=None,
    ):
        super().__init__()
        d = int(embed_dim)
        self.fusion = fusion
        self.ids = n_items is not None
        self.embed_dim = d
        self.n_sessions = int(n_sessions)
        self.has_candidate = bool(has_candidate)
        self.n_diffusion_steps = int(n_diffusion_steps)
        self.guidance_scales = tuple(float(g) for g in guidance_scales)
        self.evolution_weight = float(evolution_weight)
        self.evolution_loss = evolution_loss
        self.stage_start = stage_start
        self.orthogonality_weight = float(orthogonality_weight)
        self.consistency_weight = float(consistency_weight)
        self.cond_dropout = float(cond_dropout)
        kw = {"dtype": dtype}
        if self.ids:
            # row 0: padding; row n_items: unknown items
            self.item_embedding = nn.Embedding(n_items + 1, d, padding_idx=0, **kw)
            nn.init.normal_(self.item_embedding.weight[1:], std=0.1)
        else:
            self.input_proj = nn.Linear(int(input_dim), d, **kw)
        self.long_proj = nn.Linear(d, d, **kw)
        self.session_proj = nn.Linear(d, d, **kw)
        K = self.n_sessions
        if fusion == "concat":
            self.concat_proj = nn.Linear((K + 1) * d, d, **kw)
        elif fusion == "mlp":
            # the denoiser's depth and width (3 layers, hidden 2d)
            self.concat_mlp = nn.Sequential(
                nn.Linear((K + 1) * d, 2 * d, **kw),
                nn.SiLU(),
                nn.Linear(2 * d, 2 * d, **kw),
                nn.SiLU(),
                nn.Linear(2 * d, d, **kw),
            )
        elif fusion == "din":
            # DIN's local activation unit: MLP on [q, k, q - k, q * k]
            self.din_unit = nn.Sequential(
                nn.Linear(4 * d, 64, **kw),
                nn.Sigmoid(),
                nn.Linear(64, 32, **kw),
                nn.Sigmoid(),
                nn.Linear(32, 1, **kw),
            )
        elif fusion == "attention":
            self.att_query = nn.Linear(d, d, **kw)
            self.att_out = nn.Linear(d, d, **kw)
        else:  # diffusion
            self.cp_encoder = nn.Sequential(
                nn.Linear(d, d, **kw), nn.SiLU(), nn.Linear(d, d, **kw)
            )
            self.tf_query = nn.Linear(d, d, **kw)
            self.tf_encoder = nn.Sequential(
                nn.Linear(d, d, **kw), nn.SiLU(), nn.Linear(d, d, **kw)
            )
            self.null_cp = nn.Parameter(torch.zeros(d, **kw))
            self.null_tf = nn.Parameter(torch.zeros(d, **kw))
            self.time_embedding = nn.Embedding(self.n_diffusion_steps + 1, d, **kw)
            h = 2 * d
            self.denoiser = nn.Sequential(
                nn.Linear(4 * d, h, **kw),
                nn.SiLU(),
                nn.Linear(h, h, **kw),
                nn.SiLU(),
                nn.Linear(h, d, **kw),
            )
            abar = alpha_bar_schedule(self.n_diffusion_steps)
            self.register_buffer("abar", abar.to(dtype or torch.float32))
        n_in = d + (2 * d if self.has_candidate else 0) + int(n_dense)
        layers = []
        for width in hidden_layer_sizes:
            layers += [nn.Linear(n_in, int(width), **kw), nn.ReLU()]
            n_in = int(width)
        layers.append(nn.Linear(n_in, 1, **kw))
        self.tower = nn.Sequential(*layers)

    # ------------------------------------------------------------ encoders

    def _embed(self, a):
        """Ids (..., S) -> (..., S, d) and mask; embeddings (..., w) -> (..., 1, d)."""
        if self.ids:
            a = a.long()
            return self.item_embedding(a), a > 0
        emb = self.input_proj(a).unsqueeze(-2)
        return emb, torch.ones(emb.shape[:-1], dtype=torch.bool, device=emb.device)

    def encode(self, long, sessions, candidate=None):
        """Long-term vector ``h_L``, session items and vectors, candidate vector."""
        long_emb, long_mask = self._embed(long)
        h_long = self.long_proj(_masked_mean(long_emb, long_mask))
        ses_emb, ses_mask = self._embed(sessions)  # (n, K, S, d), (n, K, S)
        s_vec = self.session_proj(_masked_mean(ses_emb, ses_mask))  # (n, K, d)
        cand = None
        if self.has_candidate and candidate is not None:
            if self.ids:
                cand = self.item_embedding(candidate.long().reshape(-1))
            else:
                cand = self.input_proj(candidate)
        return h_long, ses_emb, ses_mask, s_vec, cand

    def guidance(self, k, x_prev, ses_emb, ses_mask, s_vec):
        """Guidance vectors of stage ``k`` (0-based): core preference, transient."""
        g_cp = self.cp_encoder(s_vec[:, : k + 1].mean(dim=1))
        query = self.tf_query(x_prev)
        g_tf = self.tf_encoder(_masked_attention(query, ses_emb[:, k], ses_mask[:, k]))
        return g_cp, g_tf

    # ----------------------------------------------------------- denoiser

    def denoise(self, x_t, t, g_cp=None, g_tf=None):
        """``x_0`` prediction ``f(x_t, t, g_cp, g_tf)``; ``None`` = null condition."""
        n = x_t.shape[0]
        if g_cp is None:
            g_cp = self.null_cp.expand(n, -1)
        if g_tf is None:
            g_tf = self.null_tf.expand(n, -1)
        t = t.long()
        a_t = self.abar[t].unsqueeze(-1)
        h = torch.cat([x_t, self.time_embedding(t), g_cp, g_tf], dim=-1)
        # v-prediction form x_0 = sqrt(a_t) x_t - sqrt(1 - a_t) v_hat, v_hat =
        # -F: well conditioned from a noisy start (the skip coefficient
        # sqrt(a_t) <= 1 does not amplify the noise, unlike x_t / sqrt(a_t)),
        # and f(x, 0) = x
        return a_t.sqrt() * x_t + (1.0 - a_t).sqrt() * self.denoiser(h)

    def guided(self, x_t, t, g_cp, g_tf, scales=None):
        """Decoupled classifier-free guidance with the scales (gamma_cp, gamma_tf)."""
        gamma_cp, gamma_tf = self.guidance_scales if scales is None else scales
        f0 = self.denoise(x_t, t)
        out = f0
        if gamma_cp != 0.0:
            out = out + gamma_cp * (self.denoise(x_t, t, g_cp=g_cp) - f0)
        if gamma_tf != 0.0:
            out = out + gamma_tf * (self.denoise(x_t, t, g_tf=g_tf) - f0)
        return out

    def _sample_stage(self, x_T, g_cp, g_tf, n_steps, scales):
        """Fused output of one stage from its starting point ``x_T`` at ``t = T``."""
        T = self.n_diffusion_steps
        n = x_T.shape[0]
        x0 = x_T
        full = torch.full((n,), T, dtype=torch.long, device=x0.device)
        x_t = x_T
        if n_steps is None or n_steps <= 1:
            return self.guided(x_t, full, g_cp, g_tf, scales)
        # deterministic DDIM (eta = 0) over n_steps steps from T to 0
        times = torch.linspace(T, 0, n_steps + 1).round().long().tolist()
        x0_hat = x_t
        for t, s in itertools.pairwise(times):
            if t == s:
                continue
            tt = torch.full((n,), t, dtype=torch.long, device=x0.device)
            x0_hat = self.guided(x_t, tt, g_cp, g_tf, scales)
            a_t, a_s = self.abar[t], self.abar[s]
            eps = (x_t - a_t.sqrt() * x0_hat) / (1.0 - a_t).sqrt()
            x_t = a_s.sqrt() * x0_hat + (1.0 - a_s).sqrt() * eps
        return x0_hat

    # ---------------------------------------------------------------- fuse

    def fuse(
        self, long, sessions, candidate=None, noise=None, *, n_steps=None, scales=None
    ):
        """The fused interest vector ``(n, d)`` (and the training penalty).

        ``noise`` ``(n, K, d)``: the standard-normal draws of the stages'
        starting points (``fusion="diffusion"``); ``None`` draws them from
        torch's generator (training).
        """
        h_long, ses_emb, ses_mask, s_vec, cand = self.encode(long, sessions, candidate)
        n = h_long.shape[0]
        penalty = h_long.new_zeros(n)
        if self.fusion == "concat":
            fused = self.concat_proj(torch.cat([h_long, s_vec.reshape(n, -1)], dim=-1))
            return fused, penalty, cand
        if self.fusion == "mlp":
            fused = self.concat_mlp(torch.cat([h_long, s_vec.reshape(n, -1)], dim=-1))
            return fused, penalty, cand
        if self.fusion == "din":
            return self._din(long, ses_emb, ses_mask, cand), penalty, cand
        if self.fusion == "attention":
            keys = torch.cat([h_long.unsqueeze(1), s_vec], dim=1)
            query = self.att_query(cand if cand is not None else h_long)
            mask = torch.ones(keys.shape[:2], dtype=torch.bool, device=keys.device)
            fused = self.att_out(_masked_attention(query, keys, mask))
            return fused, penalty, cand
        x = h_long
        K = self.n_sessions
        # the evolution and decorrelation losses of one stage drawn per batch
        # (an unbiased estimate of their mean over the stages at a fraction of
        # the cost); the consistency loss at every stage, as one-step
        # inference runs every stage. The next-session loss exists for stages
        # 1..K-1 only (the last stage's following session is not in the row).
        n_aux = K - 1 if self.evolution_loss == "next_session" else K
        if self.evolution_weight == 0:
            n_aux = K
        aux_stage = (
            int(torch.randint(n_aux, (1,)).item())
            if self.training and n_aux > 0
            else -1
        )
        consistency = (
            self.training
            and self.consistency_weight > 0
            and self.n_diffusion_steps >= 2
        )
        for k in range(K):
            g_cp, g_tf = self.guidance(k, x, ses_emb, ses_mask, s_vec)
            if self.stage_start == "mean":
                x_T = self.abar[-1].sqrt() * x  # the ablation: noise-free
            else:
                eps = torch.randn_like(x) if noise is None else noise[:, k]
                x_T = self.abar[-1].sqrt() * x + (1.0 - self.abar[-1]).sqrt() * eps
            x_next = self._sample_stage(x_T, g_cp, g_tf, n_steps, scales)
            if k == aux_stage:
                target = s_vec[:, k + 1].detach() if k + 1 < K else None
                penalty = penalty + self._stage_penalty(
                    x.detach(), x_next, target, g_cp, g_tf
                )
            if consistency:
                penalty = penalty + self.consistency_weight * self._consistency(
                    x.detach(), x_T.detach(), x_next, g_cp, g_tf
                )
            x = x_next
        return x, penalty, cand

    def _stage_penalty(self, x0, out, target, g_cp, g_tf):
        """Evolution and decorrelation terms of one stage (per sample).

        ``x0`` the stage input (stopped gradient), ``out`` its fused output,
        ``target`` the pooled interest of the following session (stopped
        gradient; ``None`` for the last stage).
        """
        T = self.n_diffusion_steps
        n = x0.shape[0]
        device = x0.device
        total = x0.new_zeros(n)
        if self.evolution_weight > 0 and self.evolution_loss == "next_session":
            if target is not None:
                cos = F.cosine_similarity(out, target, dim=-1, eps=1e-8)
                total = total + self.evolution_weight * (1.0 - cos)
        elif self.evolution_weight > 0:
            t = torch.randint(1, T + 1, (n,), device=device)
            a = self.abar[t].unsqueeze(-1)
            x_t = a.sqrt() * x0 + (1.0 - a).sqrt() * torch.randn_like(x0)
            keep_cp = (torch.rand(n, 1, device=device) >= self.cond_dropout).to(
                x0.dtype
            )
            keep_tf = (torch.rand(n, 1, device=device) >= self.cond_dropout).to(
                x0.dtype
            )
            c_cp = keep_cp * g_cp + (1.0 - keep_cp) * self.null_cp
            c_tf = keep_tf * g_tf + (1.0 - keep_tf) * self.null_tf
            pred = self.denoise(x_t, t, c_cp, c_tf)
            total = total + self.evolution_weight * ((pred - x0) ** 2).mean(dim=-1)
        if self.orthogonality_weight > 0:
            total = total + self.orthogonality_weight * orthogonality_penalty(
                g_cp, g_tf
            )
        return total

    def _consistency(self, x0, x_T, c, g_cp, g_tf):
        """Consistency loss along the deterministic sampler's path (per sample).

        ``c = f(x_T, T)`` is the stage's one-step output from its start
        ``x_T = sqrt(abar_T) x0 + sqrt(1 - abar_T) eps``. When the model keeps
        predicting ``c``, the deterministic DDIM sampler from ``x_T`` moves on
        the line ``x_t = sqrt(abar_t) c + sqrt(1 - abar_t) eps_c``, with
        ``eps_c = (x_T - sqrt(abar_T) c) / sqrt(1 - abar_T)``, and returns
        ``c``: a model with ``f(x_t, t) = c`` on that line gives the same
        output with one step as with any
        number of DDIM steps. The loss is ``||f(x_t, t) - sg c||^2 / (sg ||c -
        x0||^2 + 1e-3 d)`` at ``t`` uniform in ``1..T-1``. The stop-gradient is
        on the one-step side because the one-step output is what the CTR loss
        trains and inference uses (there is no data sample to anchor ``t ->
        0``: ``x0`` is the stage input); the rest of the trajectory is
        distilled onto it.
        (Bootstrapping the other way, ``f(x_t, t) -> sg f(x_{t-1}, t-1)``,
        made the one-step output chase the sampler and diverge in our runs.)
        """
        T = self.n_diffusion_steps
        n = x0.shape[0]
        c = c.detach()
        a_T = self.abar[T]
        eps_c = (x_T - a_T.sqrt() * c) / (1.0 - a_T).sqrt()
        t = torch.randint(1, T, (n,), device=x0.device)
        a_t = self.abar[t].unsqueeze(-1)
        x_t = a_t.sqrt() * c + (1.0 - a_t).sqrt() * eps_c
        out = self.guided(x_t, t, g_cp, g_tf)
        # relative to the stage's displacement ||c - x0||^2 (stop-gradient):
        # the plain squared error grows with it and fed back into the shared
        # denoiser until training diverged (MovieLens, one seed in three)
        scale = ((c - x0) ** 2).mean(dim=-1) + 1e-3
        return ((out - c) ** 2).mean(dim=-1) / scale

    # ------------------------------------------------------------- forward

    def head(self, fused, cand, X):
        parts = [fused]
        if cand is not None:
            parts += [cand, fused * cand]
        if X is not None and X.shape[-1] > 0:
            parts.append(X)
        return self.tower(torch.cat(parts, dim=-1)).squeeze(-1)

    def _din(self, long, ses_emb, ses_mask, cand):
        """DIN target attention over every history item (long + sessions)."""
        long_emb, long_mask = self._embed(long)
        n, d = long_emb.shape[0], long_emb.shape[-1]
        keys = torch.cat([long_emb, ses_emb.reshape(n, -1, d)], dim=1)
        mask = torch.cat([long_mask, ses_mask.reshape(n, -1)], dim=1)
        q = cand.unsqueeze(1).expand_as(keys)
        w = self.din_unit(torch.cat([q, keys, q - keys, q * keys], dim=-1))
        w = w.squeeze(-1) * mask.to(keys.dtype)
        return (w.unsqueeze(-1) * keys).sum(dim=1)

    def forward(self, X, long, sessions, candidate=None):
        fused, penalty, cand = self.fuse(long, sessions, candidate)
        return self.head(fused, cand, X), penalty


class IFusionLoss(nn.Module):
    """Per-sample ``BCE(logit, y) + penalty`` from the module's ``(logit, penalty)``."""

    def forward(self, y_pred, y_true, **aux):
        logit, penalty = y_pred
        ce = F.binary_cross_entropy_with_logits(
            logit, y_true.to(logit.dtype), reduction="none"
        )
        return ce + penalty
