"""Plain (non-robust) binary arithmetic coding of model probabilities."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

from sklearn_iclr26.compression._base import (
    ENCODER_ATTRIBUTES_DOC,
    METHOD_CONSTRICTION,
    METHOD_PLAIN,
    _BaseEncoder,
)
from sklearn_iclr26.compression._kernels import MODE_PLAIN
from sklearn_iclr26.utils._docstrings import Substitution
from sklearn_iclr26.utils._sklearn_compat import (
    Interval,
    StrOptions,
    validate_parameter_constraints,
)

__all__ = ["ArithmeticEncoder"]

PLAIN_CONSTRAINTS = {
    "precision": [Interval(Integral, 16, 32, closed="both")],
    "chunk_size": [None, Interval(Integral, 1, None, closed="left")],
    "checksum": ["boolean"],
    "backend": [StrOptions({"auto", "python", "numba", "constriction"})],
}


@Substitution(encoder_attributes=ENCODER_ATTRIBUTES_DOC)
class ArithmeticEncoder(_BaseEncoder):
    """Streaming encoder: exact integer arithmetic coding, no robustness.

    Each symbol is written as its ``ceil(log2 V)``-bit index (forced bits of a
    non power-of-two alphabet skipped) and each bit is coded with its
    conditional probability under the given distribution, rounded to an
    integer over ``2 ** (precision - 2)``. The code length is within a few
    thousandths of a bit per symbol of ``-log2 p``. The decoder must see the
    *same* floats: any mismatch (another BLAS, float32, GPU) can desynchronise
    it; use :class:`PMATICEncoder` when it may.

    Parameters
    ----------
    precision : int, default=32
        Bits of the coder's integer state, in [16, 32].
    chunk_size : int or None, default=None
        Symbols per independently coded chunk (``None``: one chunk). A desync
        then stays inside its chunk.
    checksum : bool, default=True
        Store the CRC32 of each chunk's symbols; the decoder raises on a
        mismatch (a detected desync).
    backend : {"auto", "python", "numba", "constriction"}, default="auto"
        ``"auto"`` runs the integer coder compiled by numba when it is
        installed and in pure Python otherwise (identical payloads).
        ``"constriction"`` codes whole symbols with constriction's range
        coder instead (optional dependency, ``pip install constriction``).

    Attributes
    ----------
    %(encoder_attributes)s

    See Also
    --------
    ArithmeticDecoder : The matching decoder.
    PMATICEncoder : The mismatch-tolerant coder.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.compression import ArithmeticEncoder, ArithmeticDecoder
    >>> P = np.array([[0.7, 0.2, 0.1]] * 5)
    >>> symbols = [0, 0, 1, 0, 2]
    >>> encoder = ArithmeticEncoder()
    >>> for p, s in zip(P, symbols):
    ...     _ = encoder.encode_step(p, s)
    >>> payload = encoder.finish()
    >>> decoder = ArithmeticDecoder(payload)
    >>> [decoder.decode_step(p) for p in P]
    [0, 0, 1, 0, 2]
    """

    def __init__(self, *, precision=32, chunk_size=None, checksum=True, backend="auto"):
        validate_parameter_constraints(
            PLAIN_CONSTRAINTS,
            {
                "precision": precision,
                "chunk_size": chunk_size,
                "checksum": checksum,
                "backend": backend,
            },
            caller_name=type(self).__name__,
        )
        self._method = (
            METHOD_CONSTRICTION if backend == "constriction" else (METHOD_PLAIN)
        )
        self._setup(precision, chunk_size, checksum, backend)

    def _mode_args(self):
        return MODE_PLAIN, 0, 0.0, False, False, 0, 1 << (self.precision - 2)

    def _meta(self):
        return {
            "method": self._method,
            "delta": 0.0,
            "n_bins": 0,
            "adaptive_ends": False,
            "helper_numerator": 0,
        }
