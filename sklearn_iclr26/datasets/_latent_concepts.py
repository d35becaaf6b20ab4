"""The latent discrete-concept generator of Liu et al. (ICLR 2026)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools
from numbers import Integral, Real

import numpy as np
from scipy.special import logsumexp
from sklearn.utils import Bunch, check_random_state

from sklearn_iclr26.utils._sklearn_compat import Interval, validate_params

__all__ = ["make_latent_concepts"]


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_concepts": [Interval(Integral, 1, 12, closed="both")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "n_tokens": [Interval(Integral, 2, None, closed="left")],
        "noise": [Interval(Real, 0, None, closed="neither")],
        "concept_prob": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
        "counterfactuals": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def make_latent_concepts(
    n_samples=1000,
    *,
    n_concepts=3,
    n_features=16,
    n_tokens=32,
    noise=0.5,
    concept_prob=0.5,
    random_state=None,
    counterfactuals=False,
):
    """Generate contexts and next tokens from latent binary concepts.

    The generative model of Liu et al. ("I Predict Therefore I Am", ICLR
    2026), in a tabular form with exact posteriors:

    * concepts ``c`` in ``{0, 1}^n_concepts``, independent with probability
      ``concept_prob`` each;
    * a latent ``u = M c + noise * e`` (``e`` standard normal, ``M`` a fixed
      random ``n_features x n_concepts`` matrix), and the context
      ``x = g(Q u)`` with ``Q`` a random rotation and ``g(v) = v +
      0.5 tanh(v)`` (strictly increasing, so ``x`` and ``u`` carry the same
      information). The map from concepts to contexts is not invertible: the
      noise makes ``c`` uncertain given ``x`` (larger ``noise``, more
      uncertainty);
    * the next token ``y ~ softmax(W c + b)`` over ``n_tokens`` tokens.

    Because ``p(c | x) = p(c | u)`` is Gaussian-discrete, the log-posteriors
    of all ``2^n_concepts`` configurations are computed exactly.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows.
    n_concepts : int, default=3
        Number of binary concepts (at most 12: the posteriors enumerate
        ``2^n_concepts`` configurations).
    n_features : int, default=16
        Context dimension.
    n_tokens : int, default=32
        Vocabulary size of the next token.
    noise : float, default=0.5
        Standard deviation of the latent noise.
    concept_prob : float, default=0.5
        Prior probability that a concept is on.
    random_state : int, RandomState instance or None, default=None
        Seeds the model and the draws.
    counterfactuals : bool, default=False
        Also return, for every row and concept ``k``, the context generated
        with concept ``k`` flipped and everything else (the other concepts and
        the latent noise) unchanged: counterfactual pairs that differ in one
        concept only. Draws no extra random numbers (the other outputs are
        the same with or without it).

    Returns
    -------
    data : Bunch
        ``data`` (contexts, n_samples x n_features), ``target`` (next tokens),
        ``concepts`` (n_samples x n_concepts, 0/1), ``configurations``
        (2^n_concepts x n_concepts), ``log_posteriors`` (n_samples x
        2^n_concepts, ``log p(c = configuration | x)``), ``concept_log_odds``
        (n_samples x n_concepts, ``log p(c_k = 1 | x) - log p(c_k = 0 | x)``),
        ``token_log_proba`` (n_samples x n_tokens, ``log p(y | x)``). With
        ``counterfactuals``: ``counterfactual_data`` (n_concepts x n_samples x
        n_features, row ``i`` of block ``k`` the context of row ``i`` with
        concept ``k`` flipped) and ``counterfactual_concept_log_odds``
        (n_concepts x n_samples x n_concepts, its true concept log-odds).

    Examples
    --------
    >>> from sklearn_iclr26.datasets import make_latent_concepts
    >>> d = make_latent_concepts(200, n_concepts=3, random_state=0)
    >>> d.data.shape, d.log_posteriors.shape, d.concept_log_odds.shape
    ((200, 16), (200, 8), (200, 3))
    """
    rng = check_random_state(random_state)
    M = rng.normal(size=(n_features, n_concepts))
    Q, _ = np.linalg.qr(rng.normal(size=(n_features, n_features)))
    W = 2.0 * rng.normal(size=(n_tokens, n_concepts))
    b = rng.normal(size=n_tokens)
    C = (rng.uniform(size=(n_samples, n_concepts)) < concept_prob).astype(np.int64)
    E = noise * rng.normal(size=(n_samples, n_features))
    U = C @ M.T + E
    X = _context(U, Q)
    token_logits = C @ W.T + b
    token_proba = np.exp(token_logits - logsumexp(token_logits, axis=1, keepdims=True))
    y = np.array([rng.choice(n_tokens, p=p) for p in token_proba])

    configs = np.array(list(itertools.product([0, 1], repeat=n_concepts)))
    log_post, log_odds = _posteriors(U, M, configs, noise, concept_prob)
    cfg_token_logits = configs @ W.T + b
    cfg_token_logp = cfg_token_logits - logsumexp(
        cfg_token_logits, axis=1, keepdims=True
    )
    token_log_proba = logsumexp(
        log_post[:, :, None] + cfg_token_logp[None, :, :], axis=1
    )
    extra = {}
    if counterfactuals:
        cf_data = np.empty((n_concepts, n_samples, n_features))
        cf_log_odds = np.empty((n_concepts, n_samples, n_concepts))
        for k in range(n_concepts):
            C_k = C.copy()
            C_k[:, k] = 1 - C_k[:, k]
            U_k = C_k @ M.T + E
            cf_data[k] = _context(U_k, Q)
            cf_log_odds[k] = _posteriors(U_k, M, configs, noise, concept_prob)[1]
        extra = {
            "counterfactual_data": cf_data,
            "counterfactual_concept_log_odds": cf_log_odds,
        }
    return Bunch(
        data=X,
        target=y,
        concepts=C,
        configurations=configs,
        log_posteriors=log_post,
        concept_log_odds=log_odds,
        token_log_proba=token_log_proba,
        **extra,
    )


def _make_revealing_latent_concepts(
    n_samples=3000,
    *,
    n_concepts=4,
    n_features=16,
    noise=0.75,
    reveal=0.8,
    random_state=None,
):
    """Latent concepts behind a strongly non-linear context (private).

    The generator where next-token training is needed for linearity
    (``benchmarks/sae_reproduction.py``, setting ``"nonlinear"``): the latent
    ``u = M c + noise * e`` of :func:`make_latent_concepts` (12 of its 16
    directions are nuisance noise unrelated to ``c``), the context ``x =
    sinh(Q u)`` (invertible, but far from affine: heavy-tailed, so neither
    ``x`` nor random features of it are affine in the log-posteriors), and a
    next token that names the configuration of ``c`` (token ``sum_k c_k
    2^(K-1-k)`` among ``2^K``) with probability ``reveal + (1 - reveal) /
    2^K``, else one of the others uniformly. Then ``log p(y | x) = log(reveal
    p(c = y | x) + (1 - reveal) / 2^K)``: the next-token log-probabilities are
    close to the log-posteriors, the setting of Theorem 3.1 of Liu et al. A
    next-token network must recover them from ``x`` and may drop the
    nuisance; an untrained one keeps both the non-linearity and the nuisance.

    Returns a Bunch with ``data`` (``sinh(Q u)``, unscaled), ``target``,
    ``concepts``, ``configurations``, ``log_posteriors`` and
    ``concept_log_odds`` as for :func:`make_latent_concepts`.
    """
    rng = check_random_state(random_state)
    M = rng.normal(size=(n_features, n_concepts))
    Q, _ = np.linalg.qr(rng.normal(size=(n_features, n_features)))
    C = (rng.uniform(size=(n_samples, n_concepts)) < 0.5).astype(np.int64)
    U = C @ M.T + noise * rng.normal(size=(n_samples, n_features))
    X = np.sinh(U @ Q.T)
    n_tokens = 2**n_concepts
    index = C @ (2 ** np.arange(n_concepts)[::-1])
    proba = np.full((n_samples, n_tokens), (1 - reveal) / n_tokens)
    proba[np.arange(n_samples), index] += reveal
    y = (proba.cumsum(axis=1) > rng.uniform(size=(n_samples, 1))).argmax(axis=1)
    configs = np.array(list(itertools.product([0, 1], repeat=n_concepts)))
    log_post, log_odds = _posteriors(U, M, configs, noise, 0.5)
    return Bunch(
        data=X,
        target=y,
        concepts=C,
        configurations=configs,
        log_posteriors=log_post,
        concept_log_odds=log_odds,
    )


def _context(U, Q):
    """The observed context ``g(Q u)``, ``g(v) = v + 0.5 tanh(v)``."""
    V = U @ Q.T
    return V + 0.5 * np.tanh(V)


def _posteriors(U, M, configs, noise, concept_prob):
    """Exact log-posteriors of the configurations and per-concept log-odds."""
    n_concepts = configs.shape[1]
    log_prior = configs @ np.full(n_concepts, np.log(concept_prob)) + (
        1 - configs
    ) @ np.full(n_concepts, np.log1p(-concept_prob))
    means = configs @ M.T  # (n_configs, n_features)
    sq = ((U[:, None, :] - means[None, :, :]) ** 2).sum(axis=2)
    joint = log_prior[None, :] - sq / (2 * noise**2)
    log_post = joint - logsumexp(joint, axis=1, keepdims=True)
    log_odds = np.column_stack(
        [
            logsumexp(log_post[:, configs[:, k] == 1], axis=1)
            - logsumexp(log_post[:, configs[:, k] == 0], axis=1)
            for k in range(n_concepts)
        ]
    )
    return log_post, log_odds
