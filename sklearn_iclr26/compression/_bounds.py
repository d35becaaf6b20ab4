"""PMATIC's tolerance, bins and overhead (Adler and Tang, ICLR 2026).

The quantiser splits [0, 1] into ``m`` bins of width ``2 r`` (``r = 1/(2m)``).
A conditional bit probability ``p`` in the ``delta``-interior of bin ``k``
(more than ``delta`` from every *internal* bin edge) is quantised to the bin
centre ``(2k+1)/(2m)`` with helper bit 0; otherwise to the nearest internal
edge ``2k'/(2m)`` with helper bit 1. A decoder whose own ``q`` satisfies
``|p - q| <= delta`` recovers the same numerator from ``(h, q)`` when
``r > 2 delta``: with ``h = 0``, ``q`` lies in the same bin; with ``h = 1``,
``q`` is within ``2 delta < r`` of the right edge and farther from every other.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from numbers import Integral, Real

import numpy as np

from sklearn_iclr26.compression._longform import (
    check_probability_rows,
    forced_mask,
    mass_tree,
    tree_row_bytes,
)
from sklearn_iclr26.utils._batching import batch_slices
from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, validate_params

__all__ = ["delta_from_logit_bound", "expected_overhead_bits", "optimal_n_bins"]

#: The encoder sends h = 1 also within this absolute margin beyond ``delta``,
#: so that float rounding of ``p * m`` can never move a decoder's ``q`` with
#: ``|p - q| <= delta`` across a bin edge.
EDGE_MARGIN = 1e-12

_LADDER = (1, 2, 4)  # m rounded up to 1, 2, 4, 10, 20, 40, 100, ...


def check_n_bins(delta, n_bins):
    """Resolve ``n_bins`` ("auto" or int) and check ``1/(2 m) > 2 delta``."""
    if isinstance(n_bins, str):
        return optimal_n_bins(delta)
    m = int(n_bins)
    r = 1.0 / (2 * m)
    if not r > 2 * delta + 4 * EDGE_MARGIN:
        raise ValueError(
            f"n_bins={m} gives a bin half-width r = 1/(2 n_bins) = {r:.6g}, which "
            f"must exceed 2 * delta = {2 * delta:.6g} for the decoder to recover "
            f"the encoder's bins; use n_bins < {1.0 / (4 * delta):.6g} or "
            "n_bins='auto'."
        )
    return m


def helper_numerator(delta, n_bins, helper_prob, den):
    """Integer numerator of P(h = 1) over ``den``, in [1, den - 1] (0: adaptive)."""
    if helper_prob == "adaptive":
        return 0
    if isinstance(helper_prob, str):  # "uniform": delta / r
        prob = delta * 2 * n_bins
    else:
        prob = float(helper_prob)
    return int(min(max(round(prob * den), 1), den - 1))


def quantize_encoder(p, delta, n_bins):
    """Encoder side, vectorised: helper bits ``h`` and numerators over ``2 m``."""
    p = np.asarray(p, dtype=np.float64)
    m = n_bins
    x = p * m
    k = np.clip(np.floor(x), 0, m - 1).astype(np.int64)
    tolm = (delta + EDGE_MARGIN) * m  # distances to the edges in units of 1/m
    near_lo = (k > 0) & (x - k <= tolm)
    near_hi = (k < m - 1) & ((k + 1) - x <= tolm)
    h = (near_lo | near_hi).astype(np.int64)
    num = np.where(near_lo, 2 * k, np.where(near_hi, 2 * (k + 1), 2 * k + 1))
    return h, num.astype(np.int64)


def quantize_decoder(h, q, n_bins):
    """Decoder side, vectorised (the coder kernel computes the same per bit)."""
    q = np.asarray(q, dtype=np.float64)
    m = n_bins
    centre = 2 * np.clip(np.floor(q * m), 0, m - 1).astype(np.int64) + 1
    edge = 2 * np.clip(np.floor(q * m + 0.5), 1, m - 1).astype(np.int64)
    return np.where(np.asarray(h) == 1, edge, centre)


def end_contexts(h, num, n_bins):
    """Adaptive end-bin context of each decision: 0 none, 1 first bin, 2 last.

    With ``end_bins="adaptive"`` a decision with helper bit 0 in the first bin
    ``[0, 1/m)`` (numerator 1) or the last one (numerator ``2 m - 1``) codes
    its data bit at the running frequency of the chunk's earlier data bits in
    that bin instead of at the bin centre ``r`` or ``1 - r``. With ``m = 1``
    the single bin is the first.
    """
    h, num = np.asarray(h), np.asarray(num)
    first = (h == 0) & (num == 1)
    last = (h == 0) & (num == 2 * n_bins - 1) & ~first
    return np.where(first, 1, np.where(last, 2, 0))


@validate_params(
    {"logit_bound": [Interval(Real, 0, None, closed="neither")]},
    prefer_skip_nested_validation=True,
)
def delta_from_logit_bound(logit_bound):
    """Tolerance ``delta`` that covers logits differing by at most ``logit_bound``.

    Proposition 1 of the paper: if the encoder's and decoder's logits satisfy
    ``max |u - v| <= eps``, every conditional probability of a subset of the
    alphabet (so every bit probability of the longform) moves by at most
    ``tanh(eps / 2) <= eps / 2``.

    Parameters
    ----------
    logit_bound : float
        ``eps > 0``, the largest absolute logit difference to tolerate.

    Returns
    -------
    delta : float
        ``tanh(eps / 2)``.

    Examples
    --------
    >>> from sklearn_iclr26.compression import delta_from_logit_bound
    >>> round(delta_from_logit_bound(2e-3), 6)
    0.001
    """
    return float(math.tanh(logit_bound / 2.0))


@validate_params(
    {
        "delta": [Interval(Real, 0, 0.25, closed="neither")],
        "rounding": [StrOptions({"paper", "nearest"})],
    },
    prefer_skip_nested_validation=True,
)
def optimal_n_bins(delta, *, rounding="paper"):
    """Number of bins ``m`` balancing helper-bit cost and quantisation loss.

    The helper bit costs about ``(delta/r) log2(r/delta)`` bits per decision
    and the quantisation at most ``2 log2(e) r``; balancing them gives
    ``r* = sqrt(delta log2(1/delta) / (2 log2 e))`` and ``m* = 1/(2 r*)``
    (a reconstruction of the paper's choice). ``m`` is then lowered if needed
    so that ``r = 1/(2m) > 2 delta``.

    Parameters
    ----------
    delta : float
        Tolerated conditional-TV mismatch, in (0, 0.25).
    rounding : {"paper", "nearest"}, default="paper"
        ``"paper"`` rounds ``m*`` up to the next of 1, 2, 4, 10, 20, 40, 100,
        ... which gives the paper's m = 100, 10, 4 at delta = 1e-5, 1e-3, 1e-2
        (the paper states those values, not the rounding rule: this ladder is
        our reconstruction). ``"nearest"`` rounds ``m*`` to the nearest integer.

    Returns
    -------
    n_bins : int
        The number of bins.

    Examples
    --------
    >>> from sklearn_iclr26.compression import optimal_n_bins
    >>> [optimal_n_bins(d) for d in (1e-5, 1e-3, 1e-2)]
    [100, 10, 4]
    """
    r_star = math.sqrt(delta * math.log2(1.0 / delta) / (2.0 * math.log2(math.e)))
    m_star = 1.0 / (2.0 * r_star)
    if rounding == "nearest":
        m = max(round(m_star), 1)
    else:
        decade = 1
        m = None
        while m is None:
            for step in _LADDER:
                if step * decade >= m_star - 1e-9:
                    m = step * decade
                    break
            decade *= 10
    while m > 1 and not 1.0 / (2 * m) > 2 * delta + 4 * EDGE_MARGIN:
        m -= 1
    return int(m)


@validate_params(
    {
        "probabilities": ["array-like"],
        "delta": [Interval(Real, 0, 0.25, closed="neither")],
        "n_bins": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "helper_prob": [
            StrOptions({"adaptive", "uniform"}),
            Interval(Real, 0, 1, closed="neither"),
        ],
        "end_bins": [StrOptions({"adaptive", "centre"})],
        "precision": [Interval(Integral, 16, 32, closed="both")],
        "chunk_size": [None, Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def expected_overhead_bits(
    probabilities,
    *,
    delta=1e-3,
    n_bins="auto",
    helper_prob="adaptive",
    end_bins="adaptive",
    precision=32,
    chunk_size=None,
):
    """Expected PMATIC overhead over the ideal code length, in bits per symbol.

    For every symbol the expectation over ``t ~ probabilities[i]`` of the
    PMATIC code length minus ``-log2 p(t)``: the sum over the coded nodes of
    the longform tree, weighted by the probability of reaching them, of the
    Kullback-Leibler loss ``KL(p || p_hat)`` of the quantised bit
    probability, plus the helper bits' cost. With a fixed helper probability
    ``pi`` and ``end_bins="centre"`` it is exact. An adaptive part (the helper
    bit with ``helper_prob="adaptive"``, the end bins' data bits with
    ``end_bins="adaptive"``) is costed at the binary entropy of its expected
    rate plus the count's learning regret, ``0.5 log2(n)`` bits for ``n``
    expected events of the context in each chunk (the counts restart with
    every chunk). (The arithmetic coder adds about 2 bits per chunk on top.)

    Parameters
    ----------
    probabilities : array-like of shape (n_symbols, alphabet_size)
        Rows of the encoder's next-symbol distributions.
    delta : float, default=1e-3
        Tolerated conditional-TV mismatch.
    n_bins : "auto" or int, default="auto"
        ``m``; ``"auto"`` uses :func:`optimal_n_bins`.
    helper_prob : "adaptive", "uniform" or float, default="adaptive"
        ``P(h = 1)``: learnt from the helper bits so far, ``delta / r`` (the
        paper's), or a fixed value.
    end_bins : {"adaptive", "centre"}, default="adaptive"
        Data bits in the first and last bins coded at their running
        frequency, or at the bin centre (the paper's); see
        :class:`PMATICEncoder`.
    precision : int, default=32
        Coder state bits; a fixed helper probability is an integer over
        ``2 ** (precision - 2)``, as in the coder.
    chunk_size : int or None, default=None
        Symbols per chunk of the payload (``None``: one chunk); it only
        changes the adaptive parts' learning regret.

    Returns
    -------
    overhead : float
        Mean expected overhead in bits per symbol.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.compression import expected_overhead_bits
    >>> P = np.tile([0.62, 0.27, 0.11], (4, 1))
    >>> round(expected_overhead_bits(P, delta=1e-3, helper_prob="uniform"), 4)
    0.0712

    A bit probability lying exactly on an internal bin edge always pays the
    helper bit: with the paper's even ``m`` and fixed ``P(h = 1) = delta / r``,
    ``p = 1/2`` is such an edge, so a uniform distribution over 8 symbols
    costs ``3 * -log2(0.02)`` bits more than its 3 ideal bits:

    >>> round(expected_overhead_bits(
    ...     np.full((1, 8), 1 / 8), delta=1e-3, helper_prob="uniform"), 2)
    16.93
    """
    P = check_probability_rows(probabilities)
    n, V = P.shape
    m = check_n_bins(delta, n_bins)
    den = 1 << (precision - 2)
    adaptive = helper_prob == "adaptive"
    if not adaptive:
        pi = helper_numerator(delta, m, helper_prob, den) / den
        cost_h = (-math.log2(1 - pi), -math.log2(pi))
    if n == 0 or V == 1:
        return 0.0
    leaves = 1 << (V - 1).bit_length()
    coded = ~forced_mask(V)[1:leaves]
    total = 0.0
    n_dec = n_help = 0.0
    ends = np.zeros((3, 3))  # per end context: decisions, expected 1s, entropy
    for batch in batch_slices(n, tree_row_bytes(V)):
        T = mass_tree(P[batch])
        node_mass = T[:, 1:leaves]
        ones = T[:, 3 : 2 * leaves : 2]
        reach = node_mass / T[:, [1]]
        ok = (node_mass > 0) & coded[None, :]
        p = np.where(ok, ones / np.where(ok, node_mass, 1.0), 0.5)
        h, num = quantize_encoder(p, delta, m)
        q = num / (2.0 * m)
        with np.errstate(divide="ignore", invalid="ignore"):
            kl = np.where(p > 0, p * np.log2(p / q), 0.0) + np.where(
                p < 1, (1 - p) * np.log2((1 - p) / (1 - q)), 0.0
            )
        w = np.where(ok, reach, 0.0)
        if end_bins == "adaptive":
            ctx = end_contexts(h, num, m)
            for c in (1, 2):
                wc = np.where(ctx == c, w, 0.0)
                ends[c] += [wc.sum(), np.sum(wc * p), np.sum(wc * _h2(p))]
            kl = np.where(ctx > 0, 0.0, kl)
        if adaptive:
            cost = kl
            n_dec += float(w.sum())
            n_help += float(np.sum(w * h))
        else:
            cost = kl + np.where(h == 1, cost_h[1], cost_h[0])
        total += float(np.sum(w * cost))
    n_chunks = 1 if chunk_size is None else -(-n // chunk_size)
    if adaptive and n_dec > 0:
        total += n_dec * float(_h2(n_help / n_dec)) + _regret(n_dec, n_chunks)
    for c in (1, 2):  # rate-matched coding of the end bins, minus the ideal
        if ends[c, 0] > 0:
            total += ends[c, 0] * float(_h2(ends[c, 1] / ends[c, 0])) - ends[c, 2]
            total += _regret(ends[c, 0], n_chunks)
    return total / n


def _regret(n_events, n_chunks=1):
    """Learning regret of a count estimate restarted in each of ``n_chunks``
    chunks that share ``n_events`` events, in bits."""
    return n_chunks * 0.5 * math.log2(max(n_events / n_chunks, 1.0))


def _h2(x):
    """Binary entropy in bits (0 at 0 and 1)."""
    x = np.clip(np.asarray(x, dtype=np.float64), 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = -(x * np.log2(x) + (1 - x) * np.log2(1 - x))
    return np.where((x > 0) & (x < 1), out, 0.0)
