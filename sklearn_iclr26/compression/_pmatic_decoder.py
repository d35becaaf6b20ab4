"""Decoder of :class:`PMATICEncoder` payloads."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.compression._base import (
    DECODER_ATTRIBUTES_DOC,
    METHOD_PMATIC,
    _BaseDecoder,
)
from sklearn_iclr26.compression._kernels import MODE_PMATIC
from sklearn_iclr26.utils._docstrings import Substitution

__all__ = ["PMATICDecoder"]


@Substitution(decoder_attributes=DECODER_ATTRIBUTES_DOC)
class PMATICDecoder(_BaseDecoder):
    """Streaming PMATIC decoder, with its own (possibly mismatched) model.

    Every coding parameter (alphabet size, ``delta``, ``m``, the integer
    helper numerator, the symbol count, the chunking) is read from the
    versioned header. Decoding is exact as long as each conditional bit
    probability the decoder computes is within the header's ``delta`` of the
    encoder's; with ``checksum=True`` at the encoder a larger mismatch that
    breaks a chunk raises a ``ValueError`` (desync detected).

    Parameters
    ----------
    payload : bytes
        Written by :meth:`PMATICEncoder.finish`.
    backend : {"auto", "python", "numba"}, default="auto"
        Integer-coder backend (all give the same symbols).

    Attributes
    ----------
    delta_ : float
        Tolerance the payload was written for.
    n_bins_ : int
        ``m``.
    end_bins_ : str
        ``"adaptive"`` or ``"centre"``: how the end bins' data bits were
        coded (see :class:`PMATICEncoder`).
    helper_numerator_ : int
        Integer numerator of ``P(h = 1)`` over ``2 ** (precision_ - 2)``; 0
        when the helper probability is adaptive.
    %(decoder_attributes)s

    See Also
    --------
    PMATICEncoder : The matching encoder.
    decompress : One-call decompression.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.compression import PMATICEncoder, PMATICDecoder
    >>> P = np.tile([0.6, 0.3, 0.1], (3, 1))
    >>> payload = PMATICEncoder(delta=1e-3).encode(P, [1, 0, 2]).finish()
    >>> decoder = PMATICDecoder.from_header(payload, alphabet_size=3)
    >>> decoder.n_bins_, decoder.n_symbols_
    (10, 3)
    >>> Q = P + [1e-4, -1e-4, 0.0]  # a slightly different model
    >>> [decoder.decode_step(q) for q in Q]
    [1, 0, 2]
    """

    _methods = (METHOD_PMATIC,)

    def __init__(self, payload, *, backend="auto"):
        super().__init__(payload, backend=backend)
        self.delta_ = self._meta["delta"]
        self.n_bins_ = self._meta["n_bins"]
        self.end_bins_ = "adaptive" if self._meta["adaptive_ends"] else "centre"
        self.helper_numerator_ = self._meta["helper_numerator"]

    def _mode_args(self):
        return (
            MODE_PMATIC,
            self.n_bins_,
            0.0,
            self.helper_numerator_ == 0,
            self.end_bins_ == "adaptive",
            self.helper_numerator_,
            1 << (self.precision_ - 2),
        )
