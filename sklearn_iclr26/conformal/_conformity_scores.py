"""Conformity scores for classification, on a probability matrix.

Every score function maps ``proba`` of shape (n_samples, n_classes) to a score
matrix of the same shape; a label ``y`` enters the prediction set of ``x`` when
its score is at most the conformal quantile ``q``: ``C(x) = {y : s(x, y) <= q}``.
Lower scores mean "more conforming". The functions are pure (no estimator
needed), vectorised over samples, and selectable by name through
:func:`conformity_scores`.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import functools
import math
import struct
from numbers import Integral, Real

import numpy as np
from sklearn.utils.validation import check_random_state

from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, validate_params
from sklearn_iclr26.utils._validation import check_probabilities

__all__ = [
    "SCORE_NAMES",
    "aps_scores",
    "conformal_quantile",
    "conformity_scores",
    "lac_scores",
    "lac_sets",
    "margin_scores",
    "raps_scores",
    "socop_scores",
    "socop_sets",
]


@validate_params(
    {"proba": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def lac_scores(proba):
    """Least-ambiguous-set-valued (LAC / THR / LAS) scores ``1 - p(y | x)``.

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_classes)
        Class probabilities; rows sum to one.

    Returns
    -------
    scores : ndarray of shape (n_samples, n_classes)
        ``1 - proba``.

    References
    ----------
    Sadinle, Lei and Wasserman, "Least ambiguous set-valued classifiers with
    bounded error levels", JASA 2019.

    Examples
    --------
    >>> from sklearn_iclr26.conformal import lac_scores
    >>> lac_scores([[0.7, 0.2, 0.1]])
    array([[0.3, 0.8, 0.9]])
    """
    return 1.0 - check_probabilities(proba)


def _smallest_passing(score, quantile, hi=2.0):
    """Smallest float64 ``p`` in ``[0, hi]`` with ``score(p) <= quantile``.

    ``score`` is non-increasing in ``p`` as evaluated in float64 (``1 - p``,
    ``lam / p``: rounding is monotone), so ``{p : score(p) <= quantile}`` is
    ``[cut, hi]`` and ``score(p) <= quantile`` holds exactly when ``p >=
    cut``: one comparison per cell instead of the score matrix, with the
    same result bit for bit. Bisection on the bit patterns of the
    non-negative doubles (their order is that of the integers), elementwise
    for an array of quantiles. The cut is ``-inf`` where ``p = 0`` passes
    (every entry passes) and ``+inf`` where ``p = hi`` does not (none does,
    for ``p <= hi``). A float for a scalar ``quantile``.
    """
    if np.ndim(quantile) == 0:
        return _smallest_passing_scalar(score, float(quantile), float(hi))
    q = np.asarray(quantile, dtype=np.float64)

    def passes(bits):
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            return score(bits.view(np.float64)) <= q

    lo = np.zeros(q.shape, dtype=np.int64)
    hi = np.full(q.shape, np.array(hi, dtype=np.float64).view(np.int64))
    passes_zero, passes_hi = passes(lo), passes(hi)
    while True:  # passes(lo) is False, passes(hi) True (where it matters)
        mid = lo + (hi - lo) // 2
        if not np.any(mid > lo):
            break
        ok = passes(mid)
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    cut = hi.view(np.float64).copy()
    cut[passes_zero] = -np.inf
    cut[~passes_hi] = np.inf
    return float(cut) if cut.ndim == 0 else cut


def _smallest_passing_scalar(score, quantile, hi):
    """:func:`_smallest_passing` for one quantile, in Python floats.

    Python's float arithmetic is IEEE double, as numpy's float64, so the cut
    is the same; about 10 microseconds instead of 63 numpy calls.
    """

    def value(bits):
        return struct.unpack("<d", struct.pack("<q", bits))[0]

    def passes(bits):
        try:
            return score(value(bits)) <= quantile
        except ZeroDivisionError:  # lam / 0 = inf, as in numpy
            return math.inf <= quantile

    lo, hi_bits = 0, struct.unpack("<q", struct.pack("<d", hi))[0]
    if passes(lo):
        return -math.inf
    if not passes(hi_bits):
        return math.inf
    while hi_bits - lo > 1:
        mid = (lo + hi_bits) // 2
        if passes(mid):
            hi_bits = mid
        else:
            lo = mid
    return value(hi_bits)


def _lac_cut(quantile):
    """``1 - p <= quantile`` exactly when ``p >= _lac_cut(quantile)``."""
    return _smallest_passing(lambda p: 1.0 - p, quantile)


#: Cells per row block of the set builders (4 MiB of float64: a block and its
#: working copy stay in the last-level cache while they are reused).
_BLOCK_CELLS = 2**19


def _row_blocks(n_samples, n_classes):
    """Row slices of about ``_BLOCK_CELLS`` cells each."""
    step = max(1, _BLOCK_CELLS // max(n_classes, 1))
    return [slice(start, start + step) for start in range(0, n_samples, step)]


def _checked_blocks(proba):
    """``proba`` as float64 and its row blocks, each validated as it comes.

    :func:`check_probabilities` on every block is the check of the whole
    matrix (NaN, infinite and negative entries, row sums), made while the
    block is in cache for the set rule that reads it next: one read of
    ``proba`` from memory instead of three.
    """
    proba = np.asarray(proba, dtype=np.float64)
    if proba.ndim != 2 or proba.size == 0:
        proba = check_probabilities(proba)
        return proba, _row_blocks(*proba.shape)
    blocks = _row_blocks(*proba.shape)

    def checked():
        for rows in blocks:
            check_probabilities(proba[rows])
            yield rows

    return proba, checked()


def _lac_sets(proba, quantile):
    """LAC sets of validated ``proba``; ``quantile`` a float or an array
    broadcasting against ``proba`` (one per column, or ``(n, 1)`` per row)."""
    return proba >= _lac_cut(quantile)


@validate_params(
    {"proba": ["array-like"], "quantile": [Real]},
    prefer_skip_nested_validation=True,
)
def lac_sets(proba, quantile):
    """LAC prediction sets ``{y : 1 - p(y | x) <= quantile}``, directly.

    Equal to ``lac_scores(proba) <= quantile`` bit for bit, without the
    score matrix: the threshold is turned once into the smallest probability
    ``c`` whose float64 score ``1 - c`` passes, and each cell is one
    comparison ``p >= c`` (no sort, no float copy of ``proba``).

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_classes)
        Class probabilities; rows sum to one.
    quantile : float
        Conformal threshold, e.g. from :func:`conformal_quantile`.

    Returns
    -------
    sets : ndarray of bool, shape (n_samples, n_classes)
        The prediction sets.

    Examples
    --------
    >>> from sklearn_iclr26.conformal import lac_sets
    >>> lac_sets([[0.7, 0.2, 0.1]], quantile=0.8)
    array([[ True,  True, False]])
    """
    proba, blocks = _checked_blocks(proba)
    cut = _lac_cut(float(quantile))
    sets = np.empty(proba.shape, dtype=bool)
    for rows in blocks:
        np.greater_equal(proba[rows], cut, out=sets[rows])
    return sets


def _uniforms(random_state, n_samples):
    return check_random_state(random_state).uniform(size=(n_samples, 1))


def _cumulative_mass(proba, uniforms=None):
    """APS score: probability mass of the labels ranked at or above ``y``.

    ``uniforms`` (shape (n_samples, 1)) randomizes the score; ``None`` does not.
    """
    order = np.argsort(-proba, axis=1, kind="stable")
    sorted_proba = np.take_along_axis(proba, order, axis=1)
    mass = np.cumsum(sorted_proba, axis=1)
    if uniforms is not None:
        mass -= uniforms * sorted_proba
    scores = np.empty_like(proba)
    np.put_along_axis(scores, order, mass, axis=1)
    return scores, order


@validate_params(
    {
        "proba": ["array-like"],
        "randomized": ["boolean"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def aps_scores(proba, *, randomized=False, random_state=None):
    """Adaptive prediction sets (APS) scores: cumulative sorted mass.

    The score of ``y`` is the total probability of the labels ranked before it
    (stable order, ties by column index) plus ``p(y | x)``; the randomized
    version subtracts ``U * p(y | x)`` with ``U ~ Uniform(0, 1)`` per sample,
    which gives exact (not conservative) coverage.

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_classes)
        Class probabilities.
    randomized : bool, default=False
        Use the randomized score.
    random_state : int, RandomState instance or None, default=None
        Draws ``U`` when ``randomized=True``.

    Returns
    -------
    scores : ndarray of shape (n_samples, n_classes)
        APS scores.

    References
    ----------
    Romano, Sesia and Candès, "Classification with valid and adaptive
    coverage", NeurIPS 2020.

    Examples
    --------
    >>> from sklearn_iclr26.conformal import aps_scores
    >>> aps_scores([[0.5, 0.2, 0.3]])
    array([[0.5, 1. , 0.8]])
    """
    proba = check_probabilities(proba)
    uniforms = _uniforms(random_state, proba.shape[0]) if randomized else None
    return _cumulative_mass(proba, uniforms)[0]


@validate_params(
    {
        "proba": ["array-like"],
        "lam_reg": [Interval(Real, 0, None, closed="left")],
        "k_reg": [Interval(Integral, 0, None, closed="left")],
        "randomized": ["boolean"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def raps_scores(proba, *, lam_reg=0.01, k_reg=1, randomized=False, random_state=None):
    """Regularized adaptive prediction sets (RAPS) scores.

    The APS score plus ``lam_reg * max(0, rank(y) - k_reg)`` with 1-based
    ranks, which discourages large sets.

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_classes)
        Class probabilities.
    lam_reg : float, default=0.01
        Weight of the rank penalty.
    k_reg : int, default=1
        Ranks up to ``k_reg`` are not penalised.
    randomized : bool, default=False
        Use the randomized APS part.
    random_state : int, RandomState instance or None, default=None
        Draws ``U`` when ``randomized=True``.

    Returns
    -------
    scores : ndarray of shape (n_samples, n_classes)
        RAPS scores.

    References
    ----------
    Angelopoulos, Bates, Malik and Jordan, "Uncertainty sets for image
    classifiers using conformal prediction", ICLR 2021.

    Examples
    --------
    >>> from sklearn_iclr26.conformal import raps_scores
    >>> raps_scores([[0.5, 0.2, 0.3]], lam_reg=0.1, k_reg=1)
    array([[0.5, 1.2, 0.9]])
    """
    proba = check_probabilities(proba)
    uniforms = _uniforms(random_state, proba.shape[0]) if randomized else None
    return _raps_with_uniforms(proba, lam_reg, k_reg, uniforms)


def _raps_with_uniforms(proba, lam_reg=0.01, k_reg=1, uniforms=None):
    """RAPS scores of validated ``proba`` with given uniform draws (or none)."""
    scores, order = _cumulative_mass(proba, uniforms)
    n_classes = proba.shape[1]
    penalty_sorted = lam_reg * np.maximum(0, np.arange(1, n_classes + 1) - k_reg)
    penalty = np.empty_like(proba)
    np.put_along_axis(
        penalty, order, np.broadcast_to(penalty_sorted, proba.shape), axis=1
    )
    scores += penalty
    return scores


def _label_ranks(proba):
    """0-based rank of every label by decreasing probability.

    MAPIE's order (``fliplr`` of numpy's default ``argsort``), so that ties
    rank as MAPIE ranks them.
    """
    return np.argsort(np.fliplr(np.argsort(proba, axis=1)), axis=1).astype(np.float64)


@validate_params(
    {"proba": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def top_k_scores(proba):
    """Top-k scores: the 0-based rank of each label by decreasing probability.

    The conformal quantile ``k`` of the true labels' ranks makes sets of
    the ``k + 1`` most probable labels, the same size for every row (plus
    the labels tied with the last one), as MAPIE's ``"top_k"`` score
    (Angelopoulos et al., 2021, the non-adaptive baseline of RAPS).

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_classes)
        Class probabilities.

    Returns
    -------
    scores : ndarray of shape (n_samples, n_classes)
        Ranks ``0, ..., n_classes - 1`` as floats.

    Examples
    --------
    >>> from sklearn_iclr26.conformal import top_k_scores
    >>> top_k_scores([[0.5, 0.2, 0.3]])
    array([[0., 2., 1.]])
    """
    return _label_ranks(check_probabilities(proba))


@validate_params(
    {"proba": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def margin_scores(proba):
    """Margin scores ``max_{y' != y} p(y' | x) - p(y | x)``.

    Known to favour singletons over a small average size (Aleksandrova and
    Chertov, COPA 2021): the natural "cheap singleton" baseline for SOCOP.

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_classes)
        Class probabilities (at least two classes).

    Returns
    -------
    scores : ndarray of shape (n_samples, n_classes)
        Margin scores, in [-1, 1].

    Examples
    --------
    >>> from sklearn_iclr26.conformal import margin_scores
    >>> margin_scores([[0.5, 0.2, 0.3]])
    array([[-0.2,  0.3,  0.2]])
    """
    proba = check_probabilities(proba)
    if proba.shape[1] < 2:
        raise ValueError("margin scores need at least two classes.")
    # the best competitor of every label is the top probability, except for
    # the (first) top label itself, whose competitor is the runner-up (equal
    # to the top probability under a tie)
    top2 = -np.partition(-proba, 1, axis=1)[:, :2]
    best_other = np.repeat(top2[:, [0]], proba.shape[1], axis=1)
    best_other[np.arange(proba.shape[0]), np.argmax(proba, axis=1)] = top2[:, 1]
    return best_other - proba


def _row_min(a):
    """Row minimum; a column loop is faster than ``min(axis=1)`` for few columns."""
    if a.shape[1] == 0:
        return np.full(a.shape[0], np.inf)
    if a.shape[1] <= 32:
        return functools.reduce(np.minimum, a.T)
    return a.min(axis=1)


def _socop_bridge_k1(proba, lam):
    """tau*(x) = min_{k >= 2} (1 + lam (k - 1)) / (Gamma_k - gamma_1).

    Returns tau* and the top probability gamma_1.
    """
    ascending = np.sort(proba, axis=1)
    # Gamma_k - gamma_1 as a direct cumulative sum over ranks 2..k (no
    # cancellation), read from the ascending sort backwards
    tail_mass = np.cumsum(ascending[:, -2::-1], axis=1)
    numerators = 1.0 + lam * np.arange(1, proba.shape[1])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        slopes = numerators / tail_mass
    slopes[tail_mass <= 0] = np.inf
    return _row_min(slopes), ascending[:, -1]


def _inverse_proba_ratio(lam, proba):
    """lam / p with lam / 0 = +inf for lam > 0 and 0 / p = 0 (p = 0 included)."""
    if lam == 0:
        return np.zeros_like(proba)
    with np.errstate(divide="ignore", over="ignore"):
        return lam / proba


def _socop_eta_general(sorted_desc, lam, k0):
    """eta* = max_{a <= k0} min_{b > k0} (1 + lam (b - a)) / (Gamma_b - Gamma_a)."""
    n_samples, n_classes = sorted_desc.shape
    cum = np.zeros((n_samples, n_classes + 1))
    np.cumsum(sorted_desc, axis=1, out=cum[:, 1:])
    b = np.arange(k0 + 1, n_classes + 1)
    eta = np.full(n_samples, -np.inf)
    for a in range(k0 + 1):
        # Gamma_b - Gamma_a summed directly over ranks a+1..b
        mass = np.cumsum(sorted_desc[:, a:], axis=1)[:, b - a - 1]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            slopes = (1.0 + lam * (b - a)) / mass
        slopes[mass <= 0] = np.inf
        eta = np.maximum(eta, np.min(slopes, axis=1, initial=np.inf))
    return eta


@validate_params(
    {
        "proba": ["array-like"],
        "lam": [Interval(Real, 0, None, closed="left")],
        "k0": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def socop_scores(proba, lam, k0=1):
    """Singleton-optimized conformal prediction (SOCOP) scores.

    The score of a label is the smallest Lagrange price ``eta >= 0`` at which
    it enters the minimiser of the per-instance loss
    ``1{|S| > k0} + lam |S| - eta * sum_{y in S} p(y | x)`` over sets ``S``
    (Wang, Sun and Dobriban, ICLR 2026). The minimisers are top-``j`` sets at
    the vertices of the lower convex hull of the points
    ``(Gamma_k, 1{k > k0} + lam k)``, ``Gamma_k`` the mass of the ``k`` most
    probable labels; this function evaluates the hull's closed form in
    ``O(K)`` per sample after one sort (``O(K k0)`` for ``k0 > 1``).

    For ``k0 = 1``, with ``gamma_1 >= gamma_2 >= ...`` the sorted
    probabilities and ``tau* = min_{k >= 2} (1 + lam (k - 1)) / (Gamma_k -
    gamma_1)``: the top label scores ``lam / gamma_1`` and every other label
    ``max(lam / p(y | x), tau*)``. For general ``k0``, with ``eta* = max_{a <=
    k0} min_{b > k0} (1 + lam (b - a)) / (Gamma_b - Gamma_a)``, the labels of
    rank ``j <= k0`` score ``min(lam / gamma_j, eta*)`` and the others
    ``max(lam / gamma_j, eta*)``.

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_classes)
        Class probabilities (any model: a classifier's ``predict_proba``, an
        LLM's multiple-choice probabilities...).
    lam : float
        Weight of the expected set size against the non-singleton indicator.
        ``lam -> inf`` orders labels as LAC (``1 / p``); ``lam = 0`` gives
        "pure singleton" sets: either the top label or every label.
    k0 : int, default=1
        Penalise sets larger than ``k0`` instead of non-singletons.

    Returns
    -------
    scores : ndarray of shape (n_samples, n_classes)
        SOCOP scores in ``[0, +inf]``; ``+inf`` for labels of probability 0
        when ``lam > 0`` (they never enter a set).

    Notes
    -----
    Ties are broken by column index (a stable sort): among labels of equal
    probability the first column ranks first. Only the rank of the top
    ``k0`` labels matters, so ties change a score only when they straddle
    rank ``k0``.

    References
    ----------
    Wang, Sun and Dobriban, "Singleton-Optimized Conformal Prediction",
    ICLR 2026, arXiv:2509.24095.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.conformal import socop_scores
    >>> proba = np.array([[0.6, 0.3, 0.1]])
    >>> socop_scores(proba, lam=0.1).round(3)
    array([[0.167, 3.   , 3.   ]])
    """
    proba = check_probabilities(proba)
    lam = float(lam)
    n_samples, n_classes = proba.shape
    if n_classes <= k0:
        # no set can exceed k0 labels: the loss is lam |S| - eta p(S), the
        # LAC ordering lam / p
        return _inverse_proba_ratio(lam, proba)
    if k0 == 1:
        tau, top_proba = _socop_bridge_k1(proba, lam)
        scores = np.maximum(_inverse_proba_ratio(lam, proba), tau[:, None])
        rows = np.arange(n_samples)
        top = np.argmax(proba, axis=1)  # first maximum: the stable order's rank 1
        scores[rows, top] = _inverse_proba_ratio(lam, top_proba)
        return scores
    order = np.argsort(-proba, axis=1, kind="stable")
    sorted_desc = np.take_along_axis(proba, order, axis=1)
    eta = _socop_eta_general(sorted_desc, lam, k0)[:, None]
    ratio = _inverse_proba_ratio(lam, sorted_desc)
    sorted_scores = np.maximum(ratio, eta)
    sorted_scores[:, :k0] = np.minimum(ratio[:, :k0], eta)
    scores = np.empty_like(proba)
    np.put_along_axis(scores, order, sorted_scores, axis=1)
    return scores


@validate_params(
    {
        "proba": ["array-like"],
        "lam": [Interval(Real, 0, None, closed="left")],
        "quantile": [Real],
        "k0": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def socop_sets(proba, lam, quantile, k0=1):
    """SOCOP prediction sets ``{y : socop_score(x, y) <= quantile}``, directly.

    Equal to ``socop_scores(proba, lam, k0) <= quantile`` but, for ``k0 = 1``,
    without the score matrix and without sorting: the top label is in the set
    when ``lam / gamma_1 <= quantile``, and another label when ``tau* <=
    quantile`` and ``lam / p(y | x) <= quantile``, where ``tau* <= q`` holds
    exactly when the probabilities of the other labels above ``lam / q``
    exceed it by at least ``1 / q`` in total. The rows are processed in
    cache-sized blocks, with one block-sized float working copy (plus the
    boolean output), so that ``proba`` is read from memory once; ``lam /
    p(y | x) <= quantile`` is tested as ``p(y | x) >= c`` with ``c`` the
    smallest probability whose float64 ratio passes, which gives the same
    sets bit for bit.

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_classes)
        Class probabilities.
    lam : float
        SOCOP's ``lam`` (>= 0).
    quantile : float
        Conformal threshold, e.g. from :func:`conformal_quantile`.
    k0 : int, default=1
        Size threshold, as in :func:`socop_scores`.

    Returns
    -------
    sets : ndarray of bool, shape (n_samples, n_classes)
        The prediction sets.

    Examples
    --------
    >>> from sklearn_iclr26.conformal import socop_sets
    >>> socop_sets([[0.6, 0.3, 0.1]], lam=0.1, quantile=1.0)
    array([[ True, False, False]])
    """
    if k0 != 1:
        return socop_scores(proba, lam=lam, k0=k0) <= quantile
    from sklearn_iclr26.conformal._socop_kernels import socop_sets_fused

    sets = socop_sets_fused(proba, float(lam), float(quantile), validate=True)
    if sets is not None:  # numba: one compiled pass, the same sets
        return sets
    proba, blocks = _checked_blocks(proba)
    return _socop_sets(proba, float(lam), float(quantile), blocks)


def _socop_sets(proba, lam, quantile, blocks=None):
    """SOCOP sets (``k0 = 1``) of validated ``proba``, by cache-sized row blocks.

    Main memory is read once: each block of rows is compared, hinge-summed
    and arg-maxed while it is in cache, in one block-sized float working
    copy. ``lam / p <= q`` is evaluated as ``p >= c`` with ``c`` the smallest
    probability whose float64 ratio passes (:func:`_smallest_passing`), so
    the sets equal ``socop_scores(proba, lam) <= quantile`` exactly.
    ``blocks``: the row slices (by default :func:`_row_blocks`), e.g. from
    :func:`_checked_blocks`, which validates each block as it comes.
    """
    n_samples, n_classes = proba.shape
    if blocks is None:
        blocks = _row_blocks(n_samples, n_classes)
    if n_classes <= 1 or quantile <= 0 or not np.isfinite(quantile):
        for _ in blocks:  # validate every block first
            pass
        return _socop_sets_reference(proba, lam, quantile)
    if lam == 0:
        ratio_cut = -np.inf  # lam / p is 0 for every p (0 included)
    else:
        ratio_cut = _smallest_passing(lambda p: lam / p, quantile)
    # tau* <= q  <=>  some k: Gamma_k - gamma_1 >= (1 + lam (k - 1)) / q
    #            <=>  max_m (top-m sum of the other labels - m lam / q) >= 1 / q,
    # and the maximum takes every other label with p > lam / q: a hinge sum,
    # no sort. Rows within rounding of the boundary are settled by the exact
    # tau* of the sorted path, so the sets equal the thresholded scores.
    cut = lam / quantile
    inverse_q = 1.0 / quantile
    tolerance = 1e-9 * (1.0 + inverse_q)
    ones = np.ones(n_classes)
    sets = np.empty(proba.shape, dtype=bool)
    work = None
    for block_rows in blocks:
        block = proba[block_rows]
        rows = np.arange(block.shape[0])
        if work is None:
            work = np.empty_like(block)
        w = work[: block.shape[0]]
        top = np.argmax(block, axis=1)
        top_proba = block[rows, top]
        np.subtract(block, cut, out=w)
        np.maximum(w, 0.0, out=w)
        margin = w @ ones
        margin -= np.maximum(top_proba - cut, 0.0)
        margin -= inverse_q
        tau_ok = margin >= 0
        close = np.abs(margin) <= tolerance
        if close.any():
            tau, _ = _socop_bridge_k1(block[close], lam)
            tau_ok[close] = tau <= quantile
        out = sets[block_rows]
        np.greater_equal(block, ratio_cut, out=out)
        out &= tau_ok[:, None]
        out[rows, top] = top_proba >= ratio_cut
    return sets


def _socop_sets_reference(proba, lam, quantile):
    """SOCOP sets of validated ``proba`` in whole-matrix passes (any ``q``)."""
    n_samples = proba.shape[0]
    if proba.shape[1] <= 1:
        return _inverse_proba_ratio(lam, proba) <= quantile
    rows = np.arange(n_samples)
    top = np.argmax(proba, axis=1)
    top_proba = proba[rows, top]
    # the one float working copy of proba, reused below
    work = np.empty_like(proba)
    if quantile <= 0 or not np.isfinite(quantile):
        # tau* > 0 always; with q = inf every finite score passes
        tau_ok = np.full(n_samples, quantile > 0)
        if np.isinf(quantile) and quantile > 0:
            tau, _ = _socop_bridge_k1(proba, lam)
            tau_ok = tau <= quantile
    else:
        cut = lam / quantile
        np.subtract(proba, cut, out=work)
        np.maximum(work, 0.0, out=work)
        hinge = work @ np.ones(proba.shape[1])
        hinge -= np.maximum(top_proba - cut, 0.0)
        margin = hinge - 1.0 / quantile
        tau_ok = margin >= 0
        close = np.abs(margin) <= 1e-9 * (1.0 + 1.0 / quantile)
        if close.any():
            tau, _ = _socop_bridge_k1(proba[close], lam)
            tau_ok[close] = tau <= quantile
    # lam / p <= q, compared exactly as the scores are (not p >= lam / q,
    # which can differ by one rounding)
    if lam == 0:
        work.fill(0.0)
    else:
        with np.errstate(divide="ignore", over="ignore"):
            np.divide(lam, proba, out=work)
    sets = np.less_equal(work, quantile)
    del work
    sets &= tau_ok[:, None]
    sets[rows, top] = _inverse_proba_ratio(lam, top_proba) <= quantile
    return sets


_SCORE_FUNCTIONS = {
    "lac": lac_scores,
    "aps": aps_scores,
    "raps": raps_scores,
    "margin": margin_scores,
    "socop": socop_scores,
    "top_k": top_k_scores,
}

#: Names accepted by :func:`conformity_scores`; all but ``"socop"`` (which
#: needs ``lam``: use ``SOCOPClassifier``) are the ``conformity_score``
#: options of ``SplitConformalClassifier``.
SCORE_NAMES = tuple(sorted(_SCORE_FUNCTIONS))


@validate_params(
    {
        "proba": ["array-like"],
        "score": [StrOptions(set(_SCORE_FUNCTIONS))],
    },
    prefer_skip_nested_validation=True,
)
def conformity_scores(proba, score="lac", **params):
    """Conformity scores selected by name.

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_classes)
        Class probabilities.
    score : {"lac", "aps", "raps", "margin", "socop", "top_k"}, default="lac"
        Which score.
    **params : dict
        Parameters of the score function (e.g. ``lam`` for ``"socop"``,
        ``randomized`` for ``"aps"``).

    Returns
    -------
    scores : ndarray of shape (n_samples, n_classes)
        The scores; a label is in the set when its score is at most the
        conformal quantile.

    Examples
    --------
    >>> from sklearn_iclr26.conformal import conformity_scores
    >>> conformity_scores([[0.7, 0.3]], "socop", lam=0.5).round(3)
    array([[0.714, 5.   ]])
    """
    return _SCORE_FUNCTIONS[score](proba, **params)


@validate_params(
    {
        "scores": ["array-like"],
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def conformal_quantile(scores, confidence_level):
    """Split-conformal threshold of calibration scores.

    The ``ceil((n + 1) * confidence_level)``-th smallest score, or ``+inf``
    when that rank exceeds ``n`` (too few calibration points for the level).
    With exchangeable data, ``P(s(X, Y) <= q) >= confidence_level``.

    Parameters
    ----------
    scores : array-like of shape (n_calibration,)
        Scores of the true labels of the calibration points.
    confidence_level : float
        Target coverage in (0, 1), e.g. 0.9.

    Returns
    -------
    threshold : float
        The conformal threshold.

    Examples
    --------
    >>> from sklearn_iclr26.conformal import conformal_quantile
    >>> conformal_quantile([0.1, 0.2, 0.3, 0.4], confidence_level=0.6)
    0.3
    """
    level = float(confidence_level)
    scores = np.asarray(scores, dtype=np.float64).ravel()
    if np.isnan(scores).any():
        raise ValueError("scores contain NaN.")
    n = scores.shape[0]
    rank = math.ceil((n + 1) * level - 1e-12)
    if rank > n or n == 0:
        return math.inf
    return float(np.partition(scores, rank - 1)[rank - 1])
