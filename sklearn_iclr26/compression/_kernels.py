"""The sequential integer coder: one source, run as Python or compiled by numba.

A binary arithmetic coder with ``precision``-bit integer state and the
Witten-Neal-Cleary renormalisation (E1/E2/E3 with pending bits). Every coding
probability is an integer ratio ``num / den`` (the probability of bit 1), so
the encoder and the decoder split their intervals identically whatever the
platform. The same function bodies run as plain Python (the reference, used
when numba is absent) and, unchanged, under ``numba.njit``; the payloads are
bit-identical.

Both kernels walk the longform bit tree (see ``_longform``) and quantise each
conditional bit probability themselves; compiled, they also build each row's
mass tree, so that a whole batch of rows codes in one call with no
intermediate arrays.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np

__all__ = ["decode_rows", "encode_rows", "get_kernels"]

# Room left in the output buffer before each decision: one decision emits at
# most ``precision + 1`` bits (at most 33) plus the pending bits it flushes.
OUT_MARGIN = 72

MODE_PLAIN = 0
MODE_PMATIC = 1


#: Adaptive counts are halved when their number of events reaches this (or a
#: quarter of the coder's quarter range, for low ``precision``), so their
#: probability ``(2 c1 + 1) / (2 n + 2)`` keeps adapting and its denominator
#: stays far below ``2 ** (precision - 2)``.
COUNT_LIMIT = 1 << 16


def encode_rows(
    src,
    build,
    width,
    alphabet_size,
    ell,
    symbols,
    row,
    n_rows,
    mode,
    n_bins,
    tol,
    adaptive_helper,
    adaptive_ends,
    helper_num,
    den,
    state,
    out,
    pos,
    half,
    quarter,
):
    """Encode the symbols of rows ``row:n_rows``; stop early when ``out`` is full.

    ``src`` is flat: with ``build`` true the probability rows (``alphabet_size``
    per row), whose heap-layout mass tree the kernel builds per row (the same
    additions, in the same order, as :func:`~._longform.mass_tree`); with
    ``build`` false the mass trees themselves (``width = 2 ** (ell + 1)`` per
    row). ``mode`` is 0 (plain: the bit probability rounded to ``num / den``)
    or 1 (PMATIC, see :func:`~._bounds.quantize_encoder`: the helper bit, at
    ``helper_num / den`` or with ``adaptive_helper`` at the count estimate
    ``(2 c1 + 1) / (2 n + 2)`` of the chunk's helper bits so far; then the
    data bit at ``num / (2 n_bins)``, or, with ``adaptive_ends`` and a
    helper bit 0 in the first or the last bin, at the count estimate of the
    chunk's earlier data bits in that bin). ``state`` is ``[low, high,
    pending, helper c1, helper n, first-bin c1, n, last-bin c1, n]``, updated
    in place. Returns the next row to encode and the write position in
    ``out``.
    """
    low = state[0]
    high = state[1]
    pending = state[2]
    hc1 = state[3]
    hn = state[4]
    ac1 = state[5]
    an = state[6]
    bc1 = state[7]
    bn = state[8]
    cap = len(out)
    leaves = 1 << ell
    scratch = np.zeros(width)
    limit = min(COUNT_LIMIT, quarter >> 2)
    m = n_bins
    tolm = tol * m
    dshift = 0
    while (1 << dshift) < den:
        dshift += 1
    need = OUT_MARGIN * (2 * ell + 1)
    n_stages = 2 if mode == 1 else 1
    while row < n_rows:
        if pos + pending + need > cap:
            break
        if build:
            # the leaves stay in ``src`` (read there on the last level); the
            # lowest level sums them in place, the same additions as
            # ``mass_tree`` (an odd last leaf plus the 0.0 of its padding
            # sibling; padding-only nodes stay 0.0 from ``np.zeros``)
            base = 0
            off = row * alphabet_size
            if ell > 0:
                lo = leaves >> 1
                for i in range(alphabet_size >> 1):
                    scratch[lo + i] = src[off + 2 * i] + src[off + 2 * i + 1]
                if alphabet_size & 1:
                    scratch[lo + (alphabet_size >> 1)] = (
                        src[off + alphabet_size - 1] + 0.0
                    )
            for lev in range(ell - 2, -1, -1):  # level by level (vectorisable)
                for i in range(1 << lev, 2 << lev):
                    scratch[i] = scratch[2 * i] + scratch[2 * i + 1]
            tree = scratch
        else:
            base = row * width
            off = 0
            tree = src
        sym = symbols[row]
        node = 1
        for j in range(ell):
            bit = (sym >> (ell - j - 1)) & 1
            prefix = node - (1 << j)
            if ((2 * prefix + 1) << (ell - j - 1)) >= alphabet_size:
                node = 2 * node  # forced by the alphabet: no coding
                continue
            total = tree[base + node]
            if total > 0.0:
                if build and j == ell - 1:  # a leaf: the row itself
                    p = src[off + 2 * node + 1 - leaves] / total
                else:
                    p = tree[base + 2 * node + 1] / total
            else:
                p = 0.5
            h = 0
            num = 0
            end = 0  # 1: first bin, 2: last bin, both with h = 0
            if mode == 1:
                x = p * m
                k = math.floor(x)
                k = min(max(k, 0), m - 1)
                if k > 0 and x - k <= tolm:
                    h = 1
                    num = 2 * k
                elif k < m - 1 and (k + 1) - x <= tolm:
                    h = 1
                    num = 2 * (k + 1)
                else:
                    num = 2 * k + 1
                    if adaptive_ends and k == 0:
                        end = 1
                    elif adaptive_ends and k == m - 1:
                        end = 2
            for stage in range(n_stages):
                pow2 = False
                if mode == 1 and stage == 0:
                    b_i = h
                    if adaptive_helper:
                        n_i = 2 * hc1 + 1
                        d_i = 2 * hn + 2
                    else:
                        n_i = helper_num
                        d_i = den
                        pow2 = True
                elif mode == 1:
                    b_i = bit
                    if end == 1:
                        n_i = 2 * ac1 + 1
                        d_i = 2 * an + 2
                    elif end == 2:
                        n_i = 2 * bc1 + 1
                        d_i = 2 * bn + 2
                    else:
                        n_i = num
                        d_i = 2 * m
                else:
                    b_i = bit
                    d_i = den
                    pow2 = True
                    n_i = math.floor(p * den + 0.5)
                    n_i = min(max(n_i, 1), den - 1)
                if pow2:  # den = 2 ** dshift: the same integer, no division
                    split = low + (((high - low + 1) * (d_i - n_i)) >> dshift)
                else:
                    split = low + ((high - low + 1) * (d_i - n_i)) // d_i
                if b_i:
                    low = split
                else:
                    high = split - 1
                while True:
                    if high < half:
                        out[pos] = 0
                        pos += 1
                        for _ in range(pending):
                            out[pos] = 1
                            pos += 1
                        pending = 0
                    elif low >= half:
                        out[pos] = 1
                        pos += 1
                        for _ in range(pending):
                            out[pos] = 0
                            pos += 1
                        pending = 0
                        low -= half
                        high -= half
                    elif low >= quarter and high < half + quarter:
                        pending += 1
                        low -= quarter
                        high -= quarter
                    else:
                        break
                    low = 2 * low
                    high = 2 * high + 1
            if mode == 1:
                hc1 += h
                hn += 1
                if hn >= limit:
                    hc1 = (hc1 + 1) // 2
                    hn = hn // 2
                if end == 1:
                    ac1 += bit
                    an += 1
                    if an >= limit:
                        ac1 = (ac1 + 1) // 2
                        an = an // 2
                elif end == 2:
                    bc1 += bit
                    bn += 1
                    if bn >= limit:
                        bc1 = (bc1 + 1) // 2
                        bn = bn // 2
            node = 2 * node + bit
        row += 1
    state[0] = low
    state[1] = high
    state[2] = pending
    state[3] = hc1
    state[4] = hn
    state[5] = ac1
    state[6] = an
    state[7] = bc1
    state[8] = bn
    return row, pos


def decode_rows(
    src,
    build,
    width,
    n_rows,
    ell,
    alphabet_size,
    mode,
    n_bins,
    adaptive_helper,
    adaptive_ends,
    helper_num,
    den,
    state,
    inbits,
    out,
    half,
    quarter,
):
    """Decode ``n_rows`` symbols, one probability row (or mass tree) each.

    ``src``, ``build``, ``width``, ``mode``, ``n_bins``, the two adaptive
    flags, ``helper_num`` and ``den`` are as in :func:`encode_rows`; the
    data bit's numerator is recomputed from the decoder's own bit
    probability and the decoded helper bit (see
    :func:`~._bounds.quantize_decoder`), and the adaptive counts from the
    decoded bits. ``state`` is ``[low, high, value, read position, helper
    c1, helper n, first-bin c1, n, last-bin c1, n]``, updated in place.
    """
    low = state[0]
    high = state[1]
    value = state[2]
    ipos = state[3]
    hc1 = state[4]
    hn = state[5]
    ac1 = state[6]
    an = state[7]
    bc1 = state[8]
    bn = state[9]
    n_in = len(inbits)
    leaves = 1 << ell
    scratch = np.zeros(width)
    limit = min(COUNT_LIMIT, quarter >> 2)
    m = n_bins
    dshift = 0
    while (1 << dshift) < den:
        dshift += 1
    n_stages = 2 if mode == 1 else 1
    for r in range(n_rows):
        if build:
            # the leaves stay in ``src`` (read there on the last level); the
            # lowest level sums them in place, the same additions as
            # ``mass_tree`` (an odd last leaf plus the 0.0 of its padding
            # sibling; padding-only nodes stay 0.0 from ``np.zeros``)
            base = 0
            off = r * alphabet_size
            if ell > 0:
                lo = leaves >> 1
                for i in range(alphabet_size >> 1):
                    scratch[lo + i] = src[off + 2 * i] + src[off + 2 * i + 1]
                if alphabet_size & 1:
                    scratch[lo + (alphabet_size >> 1)] = (
                        src[off + alphabet_size - 1] + 0.0
                    )
            for lev in range(ell - 2, -1, -1):  # level by level (vectorisable)
                for i in range(1 << lev, 2 << lev):
                    scratch[i] = scratch[2 * i] + scratch[2 * i + 1]
            tree = scratch
        else:
            base = r * width
            off = 0
            tree = src
        node = 1
        for j in range(ell):
            prefix = node - (1 << j)
            if ((2 * prefix + 1) << (ell - j - 1)) >= alphabet_size:
                node = 2 * node  # forced by the alphabet: no coding
                continue
            total = tree[base + node]
            if total > 0.0:
                if build and j == ell - 1:  # a leaf: the row itself
                    p = src[off + 2 * node + 1 - leaves] / total
                else:
                    p = tree[base + 2 * node + 1] / total
            else:
                p = 0.5
            h = 0
            bit = 0
            end = 0
            for stage in range(n_stages):
                pow2 = False
                if mode == 1 and stage == 0:
                    if adaptive_helper:
                        num = 2 * hc1 + 1
                        d = 2 * hn + 2
                    else:
                        num = helper_num
                        d = den
                        pow2 = True
                elif mode == 1:
                    d = 2 * m
                    if h == 0:
                        k = math.floor(p * m)
                        k = min(max(k, 0), m - 1)
                        num = 2 * k + 1
                        if adaptive_ends and k == 0:
                            end = 1
                            num = 2 * ac1 + 1
                            d = 2 * an + 2
                        elif adaptive_ends and k == m - 1:
                            end = 2
                            num = 2 * bc1 + 1
                            d = 2 * bn + 2
                    else:
                        k = math.floor(p * m + 0.5)
                        k = min(max(k, 1), m - 1)
                        num = 2 * k
                else:
                    d = den
                    pow2 = True
                    num = math.floor(p * den + 0.5)
                    num = min(max(num, 1), den - 1)
                if pow2:  # den = 2 ** dshift: the same integer, no division
                    split = low + (((high - low + 1) * (d - num)) >> dshift)
                else:
                    split = low + ((high - low + 1) * (d - num)) // d
                if value >= split:
                    bit = 1
                    low = split
                else:
                    bit = 0
                    high = split - 1
                while True:
                    if high < half:
                        pass
                    elif low >= half:
                        low -= half
                        high -= half
                        value -= half
                    elif low >= quarter and high < half + quarter:
                        low -= quarter
                        high -= quarter
                        value -= quarter
                    else:
                        break
                    low = 2 * low
                    high = 2 * high + 1
                    nxt = 0
                    if ipos < n_in:
                        nxt = inbits[ipos]
                    value = 2 * value + nxt
                    ipos += 1
                if stage == 0 and mode == 1:
                    h = bit
            if mode == 1:
                hc1 += h
                hn += 1
                if hn >= limit:
                    hc1 = (hc1 + 1) // 2
                    hn = hn // 2
                if end == 1:
                    ac1 += bit
                    an += 1
                    if an >= limit:
                        ac1 = (ac1 + 1) // 2
                        an = an // 2
                elif end == 2:
                    bc1 += bit
                    bn += 1
                    if bn >= limit:
                        bc1 = (bc1 + 1) // 2
                        bn = bn // 2
            node = 2 * node + bit
        out[r] = node - (1 << ell)
    state[0] = low
    state[1] = high
    state[2] = value
    state[3] = ipos
    state[4] = hc1
    state[5] = hn
    state[6] = ac1
    state[7] = an
    state[8] = bc1
    state[9] = bn
    return 0


def _rows_flags(P, U, tol_low):
    """One pass over C-contiguous ``P`` (``U`` its uint64 view): 0 if no
    entry has its sign bit set and every row's |sum - 1| is at most
    ``tol_low`` (a NaN or an infinity makes its row's sum fail that), else 1.
    Both reductions vectorise (the sum reassociates; the sign bits are ORed)."""
    n, V = P.shape
    for i in range(n):
        total = 0.0
        bits = np.uint64(0)
        for t in range(V):
            total += P[i, t]
            bits |= U[i, t]
        if not (abs(total - 1.0) <= tol_low) or (bits >> np.uint64(63)):
            return 1
    return 0


#: The fast validation accepts a row only when its sequential sum is this far
#: inside the tolerance: summation orders differ by at most ``V * eps`` times
#: the row's mass (about 1e-13 for V = 1024), so the numpy check would accept
#: it too.
FAST_CHECK_MARGIN = 1e-9


def rows_surely_valid(P, tolerance):
    """Whether one compiled pass proves ``P``'s rows valid (False: unsure)."""
    if "rows" not in _COMPILED:
        try:
            import numba
        except ImportError:
            return False
        _COMPILED["rows"] = numba.njit(cache=True, nogil=True, fastmath={"reassoc"})(
            _rows_flags
        )
    U = P.view(np.uint64)  # -0.0 too counts as signed here: the numpy checks decide
    return _COMPILED["rows"](P, U, tolerance - FAST_CHECK_MARGIN) == 0


_COMPILED = {}


def numba_available():
    """Whether numba can be imported."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def get_kernels(backend):
    """``(encode, decode, compiled)`` for ``backend`` in {"python", "numba"}."""
    if backend == "python":
        return encode_rows, decode_rows, False
    if "numba" not in _COMPILED:
        try:
            import numba
        except ImportError as exc:
            raise ImportError(
                "backend='numba' needs numba: pip install 'sklearn-iclr26[compression]'"
                " (or pip install numba), or use backend='python'."
            ) from exc
        _COMPILED["numba"] = (
            numba.njit(cache=True, nogil=True)(encode_rows),
            numba.njit(cache=True, nogil=True)(decode_rows),
        )
    enc, dec = _COMPILED["numba"]
    return enc, dec, True
