"""The longform: tokens as fixed-length binary codes, with bit probabilities.

Token ``t`` of an alphabet of size ``V`` is coded as its ``ell = ceil(log2 V)``
bit index, most significant bit first ("index" bit order). The probability
of bit ``j`` is the conditional ``P(bit_j = 1 | bits_<j)``: the mass under the
"1" child of the prefix node over the mass under the node. Node masses are
sums of non-negative numbers built bottom-up in a fixed pairwise order (the
heap-layout mass tree), so each conditional is accurate to a few ulps even
when the node mass is tiny (no cancellation as with differences of cumulative
sums). A bit whose "1" child holds no valid token (``V`` not a power of two)
is *forced*: it is skipped on both sides, decided by the alphabet alone.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np

__all__ = [
    "SUM_TOLERANCE",
    "check_probability_rows",
    "code_length",
    "mass_tree",
    "symbol_decisions",
]

#: Rows of probabilities must sum to 1 within this absolute tolerance.
SUM_TOLERANCE = 1e-4


def code_length(alphabet_size):
    """``ell = ceil(log2 V)``: the number of bits of the longform (0 for V=1)."""
    return max(int(alphabet_size) - 1, 0).bit_length()


def check_probability_rows(
    probabilities, alphabet_size=None, *, name="probabilities", fast=False
):
    """Validate a (n, V) array of probability rows; return it as float64.

    With ``fast`` (numba installed), one compiled pass over ``P`` accepts
    the rows that surely pass (finite, non-negative, row sums within the
    tolerance by a margin far above the rounding of any summation order);
    anything else goes through the numpy checks, so the accepted inputs and
    the errors are exactly those of the numpy checks.
    """
    P = np.asarray(probabilities)
    if P.dtype == object or not (
        np.issubdtype(P.dtype, np.floating) or np.issubdtype(P.dtype, np.integer)
    ):
        raise ValueError(f"{name} must be a numeric array, got dtype {P.dtype}.")
    P = P.astype(np.float64, copy=False)
    if P.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D (n_symbols, alphabet_size), got shape {P.shape}."
        )
    if alphabet_size is not None and P.shape[1] != alphabet_size:
        raise ValueError(
            f"{name} has {P.shape[1]} columns but the alphabet size is "
            f"{alphabet_size} (from the first call or the payload header)."
        )
    if P.shape[1] < 1:
        raise ValueError(f"{name} must have at least one column (the alphabet).")
    if fast and P.size and P.flags.c_contiguous:
        from sklearn_iclr26.compression._kernels import rows_surely_valid

        if rows_surely_valid(P, SUM_TOLERANCE):
            return P
        # a doubt (or an error): the exact checks below decide, as always
    if P.size and not np.all(np.isfinite(P)):
        raise ValueError(f"{name} contains NaN or infinite values.")
    if P.size and P.min() < 0:
        raise ValueError(f"{name} contains negative values.")
    if P.size:
        dev = np.abs(P.sum(axis=1) - 1.0)
        worst = int(np.argmax(dev))
        if dev[worst] > SUM_TOLERANCE:
            raise ValueError(
                f"Each row of {name} must sum to 1 within {SUM_TOLERANCE}; row "
                f"{worst} sums to {P[worst].sum():.6g}."
            )
    return P


def check_symbols(symbols, alphabet_size, n_rows):
    """Validate integer symbols in ``[0, alphabet_size)`` aligned with the rows."""
    s = np.asarray(symbols)
    if s.ndim != 1:
        raise ValueError(f"symbols must be 1-D, got shape {s.shape}.")
    if (
        s.size
        and not np.issubdtype(s.dtype, np.integer)
        and (not np.issubdtype(s.dtype, np.floating) or not np.all(s == np.round(s)))
    ):
        raise ValueError("symbols must be integers (alphabet indices).")
    s = s.astype(np.int64)
    if s.shape[0] != n_rows:
        raise ValueError(
            f"symbols has {s.shape[0]} entries but probabilities has {n_rows} rows."
        )
    if s.size and (s.min() < 0 or s.max() >= alphabet_size):
        raise ValueError(
            f"symbols must lie in [0, {alphabet_size}) (the alphabet size); got "
            f"values in [{s.min()}, {s.max()}]."
        )
    return s


def mass_tree(P):
    """Heap-layout mass tree of each row: shape (n, 2 ** (ell + 1)).

    Entry ``2 ** ell + t`` is ``P[:, t]`` (zero past the alphabet); entry
    ``i < 2 ** ell`` is the sum of its children ``2 i`` and ``2 i + 1``;
    entry 0 is unused.
    """
    n, V = P.shape
    ell = code_length(V)
    leaves = 1 << ell
    T = np.zeros((n, 2 * leaves), dtype=np.float64)
    T[:, leaves : leaves + V] = P
    for j in range(ell - 1, -1, -1):
        lo, hi = 1 << j, 1 << (j + 1)
        T[:, lo:hi] = T[:, 2 * lo : 2 * hi : 2] + T[:, 2 * lo + 1 : 2 * hi : 2]
    return T


def forced_mask(alphabet_size):
    """Boolean array over heap nodes: True where the node's bit is forced to 0."""
    ell = code_length(alphabet_size)
    nodes = np.arange(1 << ell)
    forced = np.zeros(1 << ell, dtype=bool)
    for j in range(ell):
        lo, hi = 1 << j, 1 << (j + 1)
        prefix = nodes[lo:hi] - lo
        forced[lo:hi] = ((2 * prefix + 1) << (ell - j - 1)) >= alphabet_size
    return forced


def symbol_decisions(T, symbols, alphabet_size):
    """The coded binary decisions of each symbol, in coding order.

    Returns ``bits``, ``p`` (conditional probability of 1) and ``coded`` (False
    for forced bits), each (n, ell). Flattened row-major they are the order in
    which the coder sees the decisions.
    """
    n = T.shape[0]
    ell = code_length(alphabet_size)
    forced = forced_mask(alphabet_size)
    bits = np.zeros((n, ell), dtype=np.int64)
    p = np.full((n, ell), 0.5)
    coded = np.zeros((n, ell), dtype=bool)
    rows = np.arange(n)
    for j in range(ell):
        node = (symbols >> (ell - j)) + (1 << j)
        bits[:, j] = (symbols >> (ell - j - 1)) & 1
        total = T[rows, node]
        ones = T[rows, 2 * node + 1]
        with np.errstate(invalid="ignore", divide="ignore"):
            p[:, j] = np.where(total > 0.0, ones / np.where(total > 0, total, 1), 0.5)
        coded[:, j] = ~forced[node]
    return bits, p, coded


def ideal_bits(P, symbols):
    """``-sum log2 p(symbol)``: the ideal code length in bits."""
    with np.errstate(divide="ignore"):
        return float(-np.sum(np.log2(P[np.arange(len(symbols)), symbols])))


def tree_row_bytes(alphabet_size):
    """Working bytes per row of the mass tree (for working_memory batches)."""
    return 8 * 2 * (1 << code_length(alphabet_size)) * 2 + 64


def log2_or_zero(x):
    return math.log2(x) if x > 0 else 0.0
