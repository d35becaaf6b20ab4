"""One-call compression and decompression of a symbol sequence."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np

from sklearn_iclr26.compression._arithmetic_decoder import ArithmeticDecoder
from sklearn_iclr26.compression._arithmetic_encoder import ArithmeticEncoder
from sklearn_iclr26.compression._base import METHOD_PMATIC, unpack_payload
from sklearn_iclr26.compression._pmatic_decoder import PMATICDecoder
from sklearn_iclr26.compression._pmatic_encoder import PMATICEncoder
from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, validate_params

__all__ = ["compress", "decompress"]


def _make_encoder(
    method,
    delta,
    n_bins,
    helper_prob,
    end_bins,
    precision,
    chunk_size,
    checksum,
    backend,
):
    common = {
        "precision": precision,
        "chunk_size": chunk_size,
        "checksum": checksum,
        "backend": backend,
    }
    if method == "plain":
        return ArithmeticEncoder(**common)
    return PMATICEncoder(
        delta=delta,
        n_bins=n_bins,
        helper_prob=helper_prob,
        end_bins=end_bins,
        **common,
    )


@validate_params(
    {
        "symbols": ["array-like"],
        "probabilities": ["array-like", callable],
        "method": [StrOptions({"pmatic", "plain"})],
        "delta": [Interval(Real, 0, 0.25, closed="neither")],
        "n_bins": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "helper_prob": [
            StrOptions({"adaptive", "uniform"}),
            Interval(Real, 0, 1, closed="neither"),
        ],
        "end_bins": [StrOptions({"adaptive", "centre"})],
        "precision": [Interval(Integral, 16, 32, closed="both")],
        "chunk_size": [None, Interval(Integral, 1, None, closed="left")],
        "checksum": ["boolean"],
        "backend": [StrOptions({"auto", "python", "numba", "constriction"})],
    },
    prefer_skip_nested_validation=True,
)
def compress(
    symbols,
    probabilities,
    *,
    method="pmatic",
    delta=1e-3,
    n_bins="auto",
    helper_prob="adaptive",
    end_bins="adaptive",
    precision=32,
    chunk_size=None,
    checksum=True,
    backend="auto",
):
    """Compress integer symbols with a model's probabilities.

    Parameters
    ----------
    symbols : array-like of shape (n_symbols,)
        Symbol indices in ``[0, alphabet_size)``.
    probabilities : array-like of shape (n_symbols, alphabet_size) or callable
        The encoder's distribution of each symbol, or
        ``probability_fn(i, symbols[:i]) -> (alphabet_size,)`` for an
        autoregressive model.
    method : {"pmatic", "plain"}, default="pmatic"
        :class:`PMATICEncoder` (tolerates a decoder mismatch up to ``delta``)
        or :class:`ArithmeticEncoder` (needs identical floats).
    delta, n_bins, helper_prob, end_bins : see :class:`PMATICEncoder`
        Ignored when ``method="plain"``.
    precision : int, default=32
        Coder state bits.
    chunk_size : int or None, default=None
        Symbols per independently coded chunk.
    checksum : bool, default=True
        CRC32 per chunk, checked by the decoder.
    backend : {"auto", "python", "numba", "constriction"}, default="auto"
        ``"constriction"`` only with ``method="plain"``.

    Returns
    -------
    payload : bytes
        The encoded message.

    See Also
    --------
    decompress : The inverse.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.compression import compress, decompress
    >>> P = np.tile([0.8, 0.1, 0.1], (6, 1))
    >>> payload = compress([0, 0, 1, 0, 0, 2], P, delta=1e-2)
    >>> decompress(payload, P).tolist()
    [0, 0, 1, 0, 0, 2]
    """
    if method == "pmatic" and backend == "constriction":
        raise ValueError(
            "backend='constriction' codes the plain path only; use method='plain' "
            "or another backend."
        )
    encoder = _make_encoder(
        method,
        delta,
        n_bins,
        helper_prob,
        end_bins,
        precision,
        chunk_size,
        checksum,
        backend,
    )
    s = np.asarray(symbols)
    if callable(probabilities):
        if s.ndim != 1:
            raise ValueError(f"symbols must be 1-D, got shape {s.shape}.")
        for i in range(len(s)):
            encoder.encode_step(probabilities(i, s[:i].copy()), s[i])
    else:
        encoder.encode(probabilities, s)
    return encoder.finish()


@validate_params(
    {
        "payload": [bytes, bytearray],
        "probabilities": ["array-like", callable],
        "backend": [StrOptions({"auto", "python", "numba"})],
        "return_chunk_status": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def decompress(payload, probabilities, *, backend="auto", return_chunk_status=False):
    """Decompress a payload of :func:`compress` with the decoder's own model.

    Parameters
    ----------
    payload : bytes
        From :func:`compress` or an encoder's ``finish``.
    probabilities : array-like of shape (n_symbols, alphabet_size) or callable
        The decoder's distributions, or ``probability_fn(i, decoded_so_far)``
        for an autoregressive model (it may differ from the encoder's within
        the payload's tolerance).
    backend : {"auto", "python", "numba"}, default="auto"
        Integer-coder backend.
    return_chunk_status : bool, default=False
        If True, do not raise on a CRC mismatch; return ``(symbols, ok)`` with
        one bool per chunk instead.

    Returns
    -------
    symbols : ndarray of shape (n_symbols,)
        The decoded symbols.
    chunk_ok : ndarray of bool
        Only when ``return_chunk_status=True``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.compression import compress, decompress
    >>> def model(i, prefix):  # a first-order Markov model
    ...     previous = prefix[-1] if len(prefix) else 0
    ...     return np.roll([0.7, 0.2, 0.1], previous)
    >>> payload = compress([0, 0, 1, 2, 2, 0], model)
    >>> decompress(payload, model).tolist()
    [0, 0, 1, 2, 2, 0]
    """
    meta, _ = unpack_payload(payload)
    cls = PMATICDecoder if meta["method"] == METHOD_PMATIC else ArithmeticDecoder
    decoder = cls(payload, backend=backend)
    decoder._raise_on_desync = not return_chunk_status
    n = decoder.n_symbols_
    if callable(probabilities):
        out = np.zeros(n, dtype=np.int64)
        for i in range(n):
            out[i] = decoder.decode_step(probabilities(i, out[:i].copy()))
    else:
        P = np.asarray(probabilities)
        if P.ndim != 2 or P.shape[0] != n:
            raise ValueError(
                f"probabilities must have shape ({n}, {decoder.alphabet_size_}) "
                f"(the payload's symbols and alphabet), got {P.shape}."
            )
        out = decoder.decode(P)
    if return_chunk_status:
        return out, np.asarray(decoder.chunk_ok_, dtype=bool)
    return out
