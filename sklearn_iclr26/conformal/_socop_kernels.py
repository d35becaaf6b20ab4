"""SOCOP sets (``k0 = 1``) in one compiled kernel, when numba is installed.

The numpy path (``_conformity_scores._socop_sets``) makes about eight passes
over each cache block (validation, ``argmax``, the hinge sum, the cut, the
top-label write); the kernel here reads each row from memory once (the
validation sums, the sign bits and the hinge sum, in one vectorised loop)
and twice more from L1 (the arg-max, then the row's set). The sets are the
numpy path's bit for bit:

- the cell test ``p >= c`` and the top-label test are the same comparisons
  against the same float64 cut;
- the hinge sum is added in another order than numpy's mat-vec, so the margin
  may differ by a few ulps, but rows whose margin is within ``1e-9 (1 + 1/q)``
  of zero are settled by the exact ``tau*`` of the sorted path in both paths,
  and outside that band a few ulps cannot change the sign;
- the validation accepts a row only when its sum (in any order) is inside
  the tolerance by a margin far above any summation order's rounding and no
  entry has its sign bit set; otherwise (a NaN, an infinity, a negative
  entry, a ``-0.0``) the numpy path reruns and raises, or not, exactly as it
  always did.

``tests/test_socop_kernels.py`` checks the two paths equal on random,
tied and boundary rows. numba is an optional dependency (the
``compression`` extra); without it :func:`socop_sets_fused` returns None and
the numpy path runs.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = ["socop_sets_fused"]

#: ``check_probabilities``' row-sum test: ``np.allclose(sums, 1, atol=1e-6)``,
#: i.e. ``|sum - 1| <= 1e-6 + 1e-5``; the kernel accepts rows this much inside.
_SUM_BOUND = 1e-6 + 1e-5
_SUM_MARGIN = 1e-9

_COMPILED = {}


def _socop_rows(P, U, cut, inverse_q, tolerance, ratio_cut, validate, sum_low, sets):
    """Fill ``sets`` row by row; return ``(status, close)``.

    ``U`` is ``P``'s uint64 view (sign bits). ``status`` is 1 when
    ``validate`` is set and some row is not surely valid (the caller then
    runs the numpy path). ``close`` marks the rows whose margin is within
    ``tolerance`` of zero (settled exactly by the caller). The first loop
    (row sum, sign bits, hinge sum) vectorises: the sums reassociate, which
    the sum margin and the tolerance band absorb.
    """
    n, K = P.shape
    close = np.zeros(n, dtype=np.bool_)
    for i in range(n):
        total = 0.0
        hinge = 0.0
        bits = np.uint64(0)
        for j in range(K):
            x = P[i, j]
            total += x
            hinge += max(x - cut, 0.0)
            bits |= U[i, j]
        if validate and (
            not (abs(total - 1.0) <= sum_low) or (bits >> np.uint64(63)) != 0
        ):
            return 1, close
        top = 0
        top_p = P[i, 0]
        for j in range(1, K):  # the first maximum, as np.argmax
            if P[i, j] > top_p:
                top_p = P[i, j]
                top = j
        margin = hinge - max(top_p - cut, 0.0) - inverse_q
        tau_ok = margin >= 0.0
        if abs(margin) <= tolerance:
            close[i] = True
        for j in range(K):
            sets[i, j] = tau_ok and P[i, j] >= ratio_cut
        sets[i, top] = top_p >= ratio_cut
    return 0, close


def _kernel():
    if "socop" not in _COMPILED:
        try:
            import numba
        except ImportError:
            _COMPILED["socop"] = None
        else:
            _COMPILED["socop"] = numba.njit(
                cache=True, nogil=True, fastmath={"reassoc"}
            )(_socop_rows)
    return _COMPILED["socop"]


def socop_sets_fused(proba, lam, quantile, *, validate):
    """SOCOP sets (``k0 = 1``) of ``proba`` by the compiled kernel, or None.

    None when numba is missing or the input is outside the kernel's case (not
    a C-contiguous float64 2-D array with at least two columns and rows, a
    quantile that is not positive and finite, or, with ``validate``, a row
    the fast check cannot accept): the caller then runs the numpy path.
    """
    from sklearn_iclr26.conformal._conformity_scores import (
        _smallest_passing,
        _socop_bridge_k1,
    )

    kernel = _kernel()
    if kernel is None:
        return None
    P = np.asarray(proba, dtype=np.float64)
    if (
        P.ndim != 2
        or P.shape[0] == 0
        or P.shape[1] < 2
        or not P.flags.c_contiguous
        or not (0 < quantile < np.inf)
    ):
        return None
    if lam == 0:
        ratio_cut = -np.inf
    else:
        ratio_cut = _smallest_passing(lambda p: lam / p, quantile)
    inverse_q = 1.0 / quantile
    sets = np.empty(P.shape, dtype=bool)
    status, close = kernel(
        P,
        P.view(np.uint64),
        lam / quantile,
        inverse_q,
        1e-9 * (1.0 + inverse_q),
        float(ratio_cut),
        bool(validate),
        _SUM_BOUND - _SUM_MARGIN,
        sets,
    )
    if status:
        return None
    if close.any():  # the exact tau* of the sorted path, as the numpy path
        rows = P[close]
        tau, _ = _socop_bridge_k1(rows, lam)
        out = (rows >= ratio_cut) & (tau <= quantile)[:, None]
        top = np.argmax(rows, axis=1)
        out[np.arange(len(rows)), top] = rows[np.arange(len(rows)), top] >= ratio_cut
        sets[close] = out
    return sets
