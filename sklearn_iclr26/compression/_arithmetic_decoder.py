"""Decoder of :class:`ArithmeticEncoder` payloads."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.compression._base import (
    METHOD_CONSTRICTION,
    METHOD_PLAIN,
    _BaseDecoder,
)
from sklearn_iclr26.compression._kernels import MODE_PLAIN

__all__ = ["ArithmeticDecoder"]


class ArithmeticDecoder(_BaseDecoder):
    """Streaming decoder of plain arithmetic coding.

    Parameters
    ----------
    payload : bytes
        Written by :meth:`ArithmeticEncoder.finish`.
    backend : {"auto", "python", "numba"}, default="auto"
        Integer-coder backend (all give the same symbols). Payloads written
        with ``backend="constriction"`` are decoded by constriction whatever
        this says.

    Attributes
    ----------
    alphabet_size_ : int
        From the header.
    n_symbols_ : int
        Symbols in the payload.
    n_decoded_ : int
        Symbols decoded so far.
    precision_ : int
        Coder state bits, from the header.
    chunk_size_ : int or None
        Symbols per chunk, from the header.
    checksum_ : bool
        Whether chunks carry a CRC32 that is checked.
    chunk_ok_ : list of bool
        One entry per completed chunk: whether its CRC matched.
    code_length_ : int
        ``ceil(log2 alphabet_size_)``.
    header_bytes_ : int
        Bytes of the header and chunk table (52 + 8 per chunk); the rest of
        the payload is the coded symbols.
    backend_ : str
        The backend in use.

    See Also
    --------
    ArithmeticEncoder : The matching encoder.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.compression import ArithmeticEncoder, ArithmeticDecoder
    >>> P = np.tile([0.5, 0.25, 0.25], (4, 1))
    >>> payload = ArithmeticEncoder().encode(P, [2, 0, 1, 0]).finish()
    >>> ArithmeticDecoder.from_header(payload).decode(P).tolist()
    [2, 0, 1, 0]
    """

    _methods = (METHOD_PLAIN, METHOD_CONSTRICTION)

    def _mode_args(self):
        return MODE_PLAIN, 0, 0, 1 << (self.precision_ - 2)
