"""Decoder of :class:`ArithmeticEncoder` payloads."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.compression._base import (
    DECODER_ATTRIBUTES_DOC,
    METHOD_CONSTRICTION,
    METHOD_PLAIN,
    _BaseDecoder,
)
from sklearn_iclr26.compression._kernels import MODE_PLAIN
from sklearn_iclr26.utils._docstrings import Substitution

__all__ = ["ArithmeticDecoder"]


@Substitution(decoder_attributes=DECODER_ATTRIBUTES_DOC)
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
    %(decoder_attributes)s

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
        return MODE_PLAIN, 0, 0.0, False, False, 0, 1 << (self.precision_ - 2)
