"""The sequential integer coder: one source, run as Python or compiled by numba.

A binary arithmetic coder with ``precision``-bit integer state and the
Witten-Neal-Cleary renormalisation (E1/E2/E3 with pending bits). Every coding
probability is an integer ratio ``num / den`` (the probability of bit 1), so
the encoder and the decoder split their intervals identically whatever the
platform. The same function bodies run as plain Python (the reference, used
when numba is absent) and, unchanged, under ``numba.njit``; the payloads are
bit-identical.

The decoder kernel also walks the longform bit tree (see ``_longform``) and
quantises each conditional bit probability itself, so that a whole batch of
rows decodes in one compiled call.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np

__all__ = ["decode_rows", "encode_decisions", "get_kernels"]

# Room left in the output buffer before each decision: one decision emits at
# most ``precision + 1`` bits (at most 33) plus the pending bits it flushes.
OUT_MARGIN = 72

MODE_PLAIN = 0
MODE_PMATIC = 1


def encode_decisions(bits, nums, dens, start, stop, state, out, pos, half, quarter):
    """Encode decisions ``start:stop``; stop early when ``out`` is nearly full.

    ``state`` is ``[low, high, pending]`` (updated in place); returns the index
    of the next decision to encode and the new write position in ``out``.
    """
    low = state[0]
    high = state[1]
    pending = state[2]
    cap = len(out)
    i = start
    while i < stop:
        if pos + pending + OUT_MARGIN > cap:
            break
        den = dens[i]
        split = low + ((high - low + 1) * (den - nums[i])) // den
        if bits[i]:
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
        i += 1
    state[0] = low
    state[1] = high
    state[2] = pending
    return i, pos


def decode_rows(
    tree,
    width,
    n_rows,
    ell,
    alphabet_size,
    mode,
    n_bins,
    helper_num,
    den,
    state,
    inbits,
    out,
    out_start,
    half,
    quarter,
):
    """Decode ``n_rows`` symbols whose mass trees are the rows of ``tree``.

    ``tree`` is flat, ``width = 2 ** (ell + 1)`` entries per row in heap
    layout (node ``i`` has children ``2 i`` and ``2 i + 1``, leaves at
    ``2 ** ell + symbol``). ``mode`` is 0 (plain: bit probability rounded to
    ``num / den``) or 1 (PMATIC: helper bit at ``helper_num / den``, then the
    data bit at the quantised ``k / (2 n_bins)``). ``state`` is
    ``[low, high, value, read position]``, updated in place.
    """
    low = state[0]
    high = state[1]
    value = state[2]
    ipos = state[3]
    n_in = len(inbits)
    n_stages = 2 if mode == 1 else 1
    for r in range(n_rows):
        base = r * width
        node = 1
        for j in range(ell):
            prefix = node - (1 << j)
            if ((2 * prefix + 1) << (ell - j - 1)) >= alphabet_size:
                node = 2 * node  # forced by the alphabet: no coding
                continue
            total = tree[base + node]
            if total > 0.0:
                p = tree[base + 2 * node + 1] / total
            else:
                p = 0.5
            h = 0
            bit = 0
            for stage in range(n_stages):
                if mode == 1 and stage == 0:
                    num = helper_num
                    d = den
                elif mode == 1:
                    d = 2 * n_bins
                    if h == 0:
                        k = math.floor(p * n_bins)
                        k = min(max(k, 0), n_bins - 1)
                        num = 2 * k + 1
                    else:
                        k = math.floor(p * n_bins + 0.5)
                        k = min(max(k, 1), n_bins - 1)
                        num = 2 * k
                else:
                    d = den
                    num = math.floor(p * den + 0.5)
                    num = min(max(num, 1), den - 1)
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
                if stage == 0:
                    h = bit
            node = 2 * node + bit
        out[out_start + r] = node - (1 << ell)
    state[0] = low
    state[1] = high
    state[2] = value
    state[3] = ipos
    return 0


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
        return encode_decisions, decode_rows, False
    if "numba" not in _COMPILED:
        try:
            import numba
        except ImportError as exc:
            raise ImportError(
                "backend='numba' needs numba: pip install 'sklearn-iclr26[compression]'"
                " (or pip install numba), or use backend='python'."
            ) from exc
        _COMPILED["numba"] = (
            numba.njit(cache=True, nogil=True)(encode_decisions),
            numba.njit(cache=True, nogil=True)(decode_rows),
        )
    enc, dec = _COMPILED["numba"]
    return enc, dec, True


def as_kernel_arrays(compiled, *arrays):
    """int64/float64 arrays for numba, Python lists for the Python kernel."""
    if compiled:
        return arrays
    return tuple(a.tolist() if isinstance(a, np.ndarray) else a for a in arrays)
