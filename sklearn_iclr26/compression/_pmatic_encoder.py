"""PMATIC encoder: arithmetic coding that survives bounded model mismatch."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

from sklearn_iclr26.compression._base import (
    ENCODER_ATTRIBUTES_DOC,
    METHOD_PMATIC,
    _BaseEncoder,
)
from sklearn_iclr26.compression._bounds import (
    EDGE_MARGIN,
    check_n_bins,
    helper_numerator,
)
from sklearn_iclr26.compression._kernels import MODE_PMATIC
from sklearn_iclr26.utils._docstrings import Substitution
from sklearn_iclr26.utils._sklearn_compat import (
    Interval,
    StrOptions,
    validate_parameter_constraints,
)

__all__ = ["PMATICEncoder"]

PMATIC_CONSTRAINTS = {
    "delta": [Interval(Real, 0, 0.25, closed="neither")],
    "n_bins": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
    "helper_prob": [
        StrOptions({"adaptive", "uniform"}),
        Interval(Real, 0, 1, closed="neither"),
    ],
    "end_bins": [StrOptions({"adaptive", "centre"})],
    "precision": [Interval(Integral, 16, 32, closed="both")],
    "bit_order": [StrOptions({"index"})],
    "chunk_size": [None, Interval(Integral, 1, None, closed="left")],
    "checksum": ["boolean"],
    "backend": [StrOptions({"auto", "python", "numba"})],
}


@Substitution(encoder_attributes=ENCODER_ATTRIBUTES_DOC)
class PMATICEncoder(_BaseEncoder):
    """Streaming PMATIC encoder (Adler and Tang, ICLR 2026).

    Probability Matching Interval Coding. Every conditional bit probability
    ``p`` of the longform is quantised to a multiple of ``r = 1/(2 m)``: the
    centre of its bin (helper bit 0) or, when ``p`` lies within ``delta`` of an
    internal bin edge, that edge (helper bit 1). The helper bit is coded at a
    fixed probability, then the data bit at the quantised ``k / (2m)``. A
    decoder whose own bit probabilities are within ``delta`` of the encoder's
    (guaranteed when logits differ by at most ``eps`` and
    ``delta >= tanh(eps/2)``, see :func:`delta_from_logit_bound`) recovers the
    very same integers and decodes exactly; the price is an overhead per coded
    bit of order ``sqrt(delta log(1/delta))`` (see
    :func:`expected_overhead_bits`).

    Parameters
    ----------
    delta : float, default=1e-3
        Tolerated mismatch of each conditional bit probability, in (0, 0.25).
        It must cover the real mismatch: the paper's cross-machine decode
        failed at 1e-3 and succeeded at 1e-2.
    n_bins : "auto" or int, default="auto"
        ``m``; ``"auto"`` uses :func:`optimal_n_bins`. An explicit value must
        give ``1/(2 n_bins) > 2 delta``.
    helper_prob : "adaptive", "uniform" or float, default="adaptive"
        ``P(h = 1)``. ``"adaptive"`` codes each helper bit at the count
        estimate ``(2 c1 + 1) / (2 n + 2)`` of the chunk's helper bits so far
        (integers, recomputed exactly by the decoder, which decodes the
        helper bits before using them): a column whose bit probabilities
        never come near an edge pays about ``0.5 log2(n)`` bits per chunk
        instead of ``-log2(1 - delta / r)`` per bit. ``"uniform"`` is the
        paper's fixed ``delta / r``; a float in (0, 1) fixes it. A fixed
        value is stored as an integer numerator in the header, so the
        decoder never recomputes it from floats.
    end_bins : {"adaptive", "centre"}, default="adaptive"
        How the data bit of a decision in the first or the last bin (helper
        bit 0, ``p < 1/m - delta`` or ``p > 1 - 1/m + delta``) is coded.
        ``"centre"``: at the bin centre ``r`` or ``1 - r`` (the paper's bins),
        so a bit the model is sure of still costs about ``1.44 r`` bits.
        ``"adaptive"``: at the running frequency ``(2 c1 + 1) / (2 n + 2)``
        of the chunk's earlier data bits in that bin, which both sides count
        exactly (the bin and the helper bit are what the decoder recovers),
        so a near-deterministic column costs about ``0.5 log2(n)`` bits per
        chunk there; the mismatch guarantee is unchanged.
    precision : int, default=32
        Bits of the coder's integer state, in [16, 32]; requires
        ``2 m <= 2 ** (precision - 2)``.
    bit_order : {"index"}, default="index"
        Longform: each symbol's index in binary, most significant bit first.
    chunk_size : int or None, default=None
        Symbols per independently coded chunk (``None``: one chunk).
    checksum : bool, default=True
        Store the CRC32 of each chunk's symbols; the decoder raises on a
        mismatch (a mismatch beyond ``delta`` is then detected).
    backend : {"auto", "python", "numba"}, default="auto"
        The integer coder compiled by numba when installed, else pure Python
        (identical payloads).

    Attributes
    ----------
    n_bins_ : int
        ``m`` in use.
    helper_numerator_ : int
        ``P(h = 1)`` times ``2 ** (precision - 2)``, as stored in the header;
        0 when ``helper_prob="adaptive"``.
    %(encoder_attributes)s

    See Also
    --------
    PMATICDecoder : The matching decoder.
    compress : One-call compression.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.compression import PMATICEncoder, PMATICDecoder
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(size=(20, 5))
    >>> P = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    >>> symbols = [int(rng.choice(5, p=p)) for p in P]
    >>> payload = PMATICEncoder(delta=1e-2).encode(P, symbols).finish()
    >>> noisy = logits + rng.uniform(-0.02, 0.02, size=logits.shape)  # eps = 2 delta
    >>> Q = np.exp(noisy) / np.exp(noisy).sum(1, keepdims=True)
    >>> PMATICDecoder.from_header(payload).decode(Q).tolist() == symbols
    True
    """

    _method = METHOD_PMATIC

    def __init__(
        self,
        *,
        delta=1e-3,
        n_bins="auto",
        helper_prob="adaptive",
        end_bins="adaptive",
        precision=32,
        bit_order="index",
        chunk_size=None,
        checksum=True,
        backend="auto",
    ):
        validate_parameter_constraints(
            PMATIC_CONSTRAINTS,
            {
                "delta": delta,
                "n_bins": n_bins,
                "helper_prob": helper_prob,
                "end_bins": end_bins,
                "precision": precision,
                "bit_order": bit_order,
                "chunk_size": chunk_size,
                "checksum": checksum,
                "backend": backend,
            },
            caller_name=type(self).__name__,
        )
        self.delta = float(delta)
        self.n_bins = n_bins
        self.helper_prob = helper_prob
        self.end_bins = end_bins
        self.bit_order = bit_order
        self.n_bins_ = check_n_bins(self.delta, n_bins)
        if 2 * self.n_bins_ > 1 << (precision - 2):
            raise ValueError(
                f"n_bins={self.n_bins_} needs 2 n_bins <= 2 ** (precision - 2) = "
                f"{1 << (precision - 2)}; raise precision."
            )
        self.helper_numerator_ = helper_numerator(
            self.delta, self.n_bins_, helper_prob, 1 << (precision - 2)
        )
        self._setup(precision, chunk_size, checksum, backend)

    def _mode_args(self):
        return (
            MODE_PMATIC,
            self.n_bins_,
            self.delta + EDGE_MARGIN,
            self.helper_prob == "adaptive",
            self.end_bins == "adaptive",
            self.helper_numerator_,
            1 << (self.precision - 2),
        )

    def _meta(self):
        return {
            "method": METHOD_PMATIC,
            "delta": self.delta,
            "n_bins": self.n_bins_,
            "adaptive_ends": self.end_bins == "adaptive",
            "helper_numerator": self.helper_numerator_,
        }
