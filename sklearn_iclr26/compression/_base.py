"""Shared machinery of the streaming encoders and decoders, and the payload.

Payload (little-endian, version 1)::

    magic "SKIC" | version u8 | method u8 | precision u8 | flags u8
    alphabet_size u32 | n_symbols u64 | chunk_size u64 | n_chunks u32
    delta f64 | n_bins u32 | helper_numerator u64
    per chunk: n_bytes u32, crc32 u32
    chunk bodies, concatenated

``method`` is 0 (plain binary arithmetic coding), 1 (PMATIC) or 2 (plain,
constriction's range coder over whole symbols); ``flags`` bit 0 says whether
the per-chunk CRC32 of the chunk's symbols is checked. Each chunk is an
independent coder stream, so a desync stays inside its chunk and is detected
by its CRC.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import struct
import zlib

import numpy as np

from sklearn_iclr26.compression._kernels import (
    OUT_MARGIN,
    as_kernel_arrays,
    get_kernels,
    numba_available,
)
from sklearn_iclr26.compression._longform import (
    check_probability_rows,
    check_symbols,
    code_length,
    mass_tree,
    symbol_decisions,
    tree_row_bytes,
)
from sklearn_iclr26.utils._batching import batch_slices
from sklearn_iclr26.utils._sklearn_compat import (
    StrOptions,
    validate_parameter_constraints,
)

MAGIC = b"SKIC"
VERSION = 1
METHOD_PLAIN, METHOD_PMATIC, METHOD_CONSTRICTION = 0, 1, 2
METHOD_NAMES = {0: "plain", 1: "pmatic", 2: "plain (constriction)"}
_HEAD = struct.Struct("<4sBBBBIQQIdIQ")
_CHUNK = struct.Struct("<II")


#: Attributes shared by the encoders (class docstrings).
ENCODER_ATTRIBUTES_DOC = """alphabet_size_ : int
        Set by the first call.
    code_length_ : int
        ``ceil(log2 alphabet_size_)``, bits per symbol before coding.
    n_symbols_ : int
        Symbols encoded so far.
    backend_ : str
        The backend in use.
    payload_ : bytes
        Set by :meth:`finish`."""

#: Attributes shared by the decoders (class docstrings).
DECODER_ATTRIBUTES_DOC = """alphabet_size_ : int
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
        The backend in use."""


def _cache_rows(coder):
    """Rows per batch whose mass trees fit in about 2 MiB (cache-friendly)."""
    return max(16, (1 << 21) // tree_row_bytes(coder.alphabet_size_))


def resolve_backend(backend):
    if backend == "auto":
        return "numba" if numba_available() else "python"
    return backend


def import_constriction():
    try:
        import constriction
    except ImportError as exc:
        raise ImportError(
            "backend='constriction' needs the constriction package: pip install "
            "'sklearn-iclr26[compression]' (or pip install constriction), or use "
            "backend='auto'."
        ) from exc
    return constriction


def symbols_crc(symbols, crc=0):
    return zlib.crc32(np.asarray(symbols, dtype="<u4").tobytes(), crc)


def pack_payload(meta, chunks):
    head = _HEAD.pack(
        MAGIC,
        VERSION,
        meta["method"],
        meta["precision"],
        int(meta["checksum"]),
        meta["alphabet_size"],
        meta["n_symbols"],
        meta["chunk_size"],
        len(chunks),
        meta["delta"],
        meta["n_bins"],
        meta["helper_numerator"],
    )
    table = b"".join(_CHUNK.pack(len(body), crc) for body, _, crc in chunks)
    return head + table + b"".join(body for body, _, _ in chunks)


def unpack_payload(payload):
    """Parse a payload; return (meta, [(body, n_symbols, crc), ...])."""
    if not isinstance(payload, (bytes, bytearray, memoryview)):
        raise TypeError(f"payload must be bytes, got {type(payload).__name__}.")
    payload = bytes(payload)
    if len(payload) < _HEAD.size:
        raise ValueError(
            f"Truncated payload: {len(payload)} bytes, shorter than the "
            f"{_HEAD.size}-byte header."
        )
    fields = _HEAD.unpack_from(payload)
    magic, version = fields[0], fields[1]
    if magic != MAGIC:
        raise ValueError("Not a sklearn_iclr26.compression payload (bad magic).")
    if version != VERSION:
        raise ValueError(
            f"Payload format version {version} is not supported (this version "
            f"reads {VERSION})."
        )
    meta = {
        "method": fields[2],
        "precision": fields[3],
        "checksum": bool(fields[4] & 1),
        "alphabet_size": fields[5],
        "n_symbols": fields[6],
        "chunk_size": fields[7],
        "delta": fields[9],
        "n_bins": fields[10],
        "helper_numerator": fields[11],
    }
    n_chunks = fields[8]
    if meta["method"] not in METHOD_NAMES:
        raise ValueError(f"Unknown coding method {meta['method']} in the header.")
    offset = _HEAD.size
    if len(payload) < offset + n_chunks * _CHUNK.size:
        raise ValueError("Truncated payload: the chunk table is incomplete.")
    table = [
        _CHUNK.unpack_from(payload, offset + i * _CHUNK.size) for i in range(n_chunks)
    ]
    offset += n_chunks * _CHUNK.size
    expected = offset + sum(n for n, _ in table)
    if len(payload) < expected:
        raise ValueError(
            f"Truncated payload: {len(payload)} bytes, the header announces {expected}."
        )
    if len(payload) > expected:
        raise ValueError(
            f"Payload has {len(payload) - expected} trailing bytes after the "
            "announced chunks."
        )
    chunk_size = meta["chunk_size"] or meta["n_symbols"]
    chunks = []
    for i, (n_bytes, crc) in enumerate(table):
        body = payload[offset : offset + n_bytes]
        offset += n_bytes
        n_sym = min(chunk_size, meta["n_symbols"] - i * chunk_size)
        chunks.append((body, n_sym, crc))
    if sum(c[1] for c in chunks) != meta["n_symbols"]:
        raise ValueError("Corrupt payload: chunk table and symbol count disagree.")
    return meta, chunks


class _BaseEncoder:
    """Streaming encoder: ``encode`` / ``encode_step`` rows, then ``finish``."""

    _method = METHOD_PLAIN

    def _setup(self, precision, chunk_size, checksum, backend):
        self.precision = precision
        self.chunk_size = chunk_size
        self.checksum = checksum
        self.backend = backend
        if chunk_size is not None and int(chunk_size) < 1:
            raise ValueError(f"chunk_size must be None or >= 1, got {chunk_size}.")
        self.backend_ = resolve_backend(backend)
        if self.backend_ == "constriction":
            self._constriction = import_constriction()
            self._kernels = None
        else:
            self._kernels = get_kernels(self.backend_)
        self._half = 1 << (precision - 1)
        self._quarter = 1 << (precision - 2)
        self.alphabet_size_ = None
        self.n_symbols_ = 0
        self._chunks = []
        self._finished = False
        self._reset_chunk()

    def _reset_chunk(self):
        compiled = self._kernels is not None and self._kernels[2]
        state = [0, (1 << self.precision) - 1, 0]
        if compiled:
            self._state = np.array(state, dtype=np.int64)
            self._out = np.zeros(4096, dtype=np.uint8)
        else:
            self._state = state
            self._out = bytearray(4096)
        self._pos = 0
        self._chunk_n = 0
        self._chunk_crc = 0
        self._pending_rows = []  # constriction: (P, symbols) of this chunk

    def _grow(self):
        if isinstance(self._out, bytearray):
            self._out.extend(bytearray(len(self._out)))
        else:
            self._out = np.concatenate([self._out, np.zeros_like(self._out)])

    def encode_step(self, probabilities, symbol):
        """Encode one symbol with its probability vector.

        Parameters
        ----------
        probabilities : array-like of shape (alphabet_size,)
            The encoder's distribution of this symbol.
        symbol : int
            Index of the symbol, in ``[0, alphabet_size)``.

        Returns
        -------
        self
        """
        P = np.asarray(probabilities)
        if P.ndim != 1:
            raise ValueError(
                f"probabilities must be 1-D for encode_step, got shape {P.shape}."
            )
        return self.encode(P[None, :], [symbol])

    def encode(self, probabilities, symbols):
        """Encode a batch of symbols, one probability row each.

        Rows are processed in batches sized by scikit-learn's
        ``working_memory``; the result equals that of one ``encode_step`` per
        row.

        Parameters
        ----------
        probabilities : array-like of shape (n_symbols, alphabet_size)
            The encoder's distribution of each symbol.
        symbols : array-like of shape (n_symbols,)
            Symbol indices.

        Returns
        -------
        self
        """
        if self._finished:
            raise RuntimeError("finish() was called; start a new encoder.")
        P = check_probability_rows(probabilities, self.alphabet_size_)
        s = check_symbols(symbols, P.shape[1], P.shape[0])
        if self.alphabet_size_ is None:
            self.alphabet_size_ = int(P.shape[1])
            self.code_length_ = code_length(self.alphabet_size_)
        chunk = self.chunk_size
        for batch in batch_slices(
            len(s), tree_row_bytes(self.alphabet_size_), max_n_rows=_cache_rows(self)
        ):
            start = batch.start
            while start < batch.stop:
                stop = batch.stop
                if chunk is not None:
                    stop = min(stop, start + chunk - self._chunk_n)
                self._encode_rows(P[start:stop], s[start:stop])
                self._chunk_crc = symbols_crc(s[start:stop], self._chunk_crc)
                self._chunk_n += stop - start
                self.n_symbols_ += stop - start
                if chunk is not None and self._chunk_n == chunk:
                    self._close_chunk()
                start = stop
        return self

    def _encode_rows(self, P, s):
        if self.backend_ == "constriction":
            self._pending_rows.append((P.copy(), s.copy()))
            return
        T = mass_tree(P)
        bits, p, coded = symbol_decisions(T, s, self.alphabet_size_)
        bits, nums, dens = self._decisions(bits[coded], p[coded])
        encode, _, compiled = self._kernels
        bits, nums, dens = as_kernel_arrays(compiled, bits, nums, dens)
        i, n = 0, len(bits)
        while i < n:
            i, self._pos = encode(
                bits,
                nums,
                dens,
                i,
                n,
                self._state,
                self._out,
                self._pos,
                self._half,
                self._quarter,
            )
            if i < n:
                self._grow()

    def _close_chunk(self):
        if self._chunk_n == 0:
            return
        if self.backend_ == "constriction":
            body = self._constriction_body()
        else:
            while self._pos + int(self._state[2]) + OUT_MARGIN > len(self._out):
                self._grow()
            pending = int(self._state[2]) + 1
            first = 0 if int(self._state[0]) < self._quarter else 1
            out, pos = self._out, self._pos
            out[pos] = first
            pos += 1
            for _ in range(pending):
                out[pos] = 1 - first
                pos += 1
            body = np.packbits(np.frombuffer(bytes(out[:pos]), dtype=np.uint8))
            body = body.tobytes()
        self._chunks.append((body, self._chunk_n, self._chunk_crc))
        self._reset_chunk()

    def _constriction_body(self):
        constriction = self._constriction
        P = np.concatenate([p for p, _ in self._pending_rows])
        s = np.concatenate([s for _, s in self._pending_rows]).astype(np.int32)
        encoder = constriction.stream.queue.RangeEncoder()
        family = constriction.stream.model.Categorical(perfect=False)
        encoder.encode(s, family, P)
        return encoder.get_compressed().astype("<u4").tobytes()

    def finish(self):
        """Flush the coder and return the payload (header + chunks).

        Returns
        -------
        payload : bytes
        """
        if self._finished:
            raise RuntimeError("finish() was already called.")
        self._close_chunk()
        self._finished = True
        meta = self._meta()
        meta.update(
            precision=self.precision,
            checksum=self.checksum,
            alphabet_size=self.alphabet_size_ or 0,
            n_symbols=self.n_symbols_,
            chunk_size=self.chunk_size or 0,
        )
        self.payload_ = pack_payload(meta, self._chunks)
        return self.payload_


class _BaseDecoder:
    """Streaming decoder of a payload written by the matching encoder."""

    _methods = (METHOD_PLAIN,)

    def __init__(self, payload, *, backend="auto"):
        validate_parameter_constraints(
            {"backend": [StrOptions({"auto", "python", "numba"})]},
            {"backend": backend},
            caller_name=type(self).__name__,
        )
        self._setup(payload, backend)

    @classmethod
    def from_header(cls, payload, *, alphabet_size=None, backend="auto"):
        """Build a decoder from a payload, checking the alphabet size.

        Parameters
        ----------
        payload : bytes
            The encoder's output; its header gives every coding parameter.
        alphabet_size : int, default=None
            If given, raise when the header's alphabet size differs.
        backend : {"auto", "python", "numba"}, default="auto"
            Integer-coder backend.

        Returns
        -------
        decoder : object
            A decoder of the class this is called on.
        """
        decoder = cls(payload, backend=backend)
        if alphabet_size is not None and alphabet_size != decoder.alphabet_size_:
            raise ValueError(
                f"The payload's alphabet size is {decoder.alphabet_size_}, not "
                f"{alphabet_size}."
            )
        return decoder

    def _setup(self, payload, backend):
        meta, chunks = unpack_payload(payload)
        if meta["method"] not in self._methods:
            other = (
                "PMATICDecoder"
                if meta["method"] == METHOD_PMATIC
                else ("ArithmeticDecoder")
            )
            raise ValueError(
                f"This payload was written by the {METHOD_NAMES[meta['method']]} "
                f"coder; decode it with {other} (or decompress)."
            )
        self.backend = backend
        self._meta = meta
        self._chunks = chunks
        self.alphabet_size_ = meta["alphabet_size"]
        self.n_symbols_ = meta["n_symbols"]
        self.precision_ = meta["precision"]
        self.chunk_size_ = meta["chunk_size"] or None
        self.checksum_ = meta["checksum"]
        self.code_length_ = code_length(self.alphabet_size_)
        self.n_decoded_ = 0
        self.chunk_ok_ = []
        self.header_bytes_ = len(payload) - sum(len(c[0]) for c in chunks)
        if meta["method"] == METHOD_CONSTRICTION:
            self.backend_ = "constriction"
            self._constriction = import_constriction()
            self._kernels = None
        else:
            b = resolve_backend(backend)
            if b == "constriction":
                raise ValueError(
                    "This payload was not written by constriction; use "
                    "backend='auto', 'numba' or 'python'."
                )
            self.backend_ = b
            self._kernels = get_kernels(b)
        self._half = 1 << (self.precision_ - 1)
        self._quarter = 1 << (self.precision_ - 2)
        self._chunk_index = -1
        self._open_next_chunk()

    def _open_next_chunk(self):
        self._chunk_index += 1
        self._chunk_n = 0
        self._chunk_crc = 0
        if self._chunk_index >= len(self._chunks):
            return
        body = self._chunks[self._chunk_index][0]
        if self.backend_ == "constriction":
            words = np.frombuffer(body, dtype="<u4").astype(np.uint32)
            self._cdecoder = self._constriction.stream.queue.RangeDecoder(words)
            return
        bits = np.unpackbits(np.frombuffer(body, dtype=np.uint8))
        P = self.precision_
        head = np.zeros(P, dtype=np.int64)
        head[: min(P, len(bits))] = bits[:P]
        value = int(sum(int(b) << (P - 1 - i) for i, b in enumerate(head)))
        compiled = self._kernels[2]
        state = [0, (1 << P) - 1, value, P]
        if compiled:
            self._state = np.array(state, dtype=np.int64)
            self._inbits = bits.astype(np.int64)
        else:
            self._state = state
            self._inbits = bits.tolist()

    def decode_step(self, probabilities):
        """Decode the next symbol with the decoder's own probability vector.

        Parameters
        ----------
        probabilities : array-like of shape (alphabet_size,)
            The decoder's distribution of this symbol (it may differ from the
            encoder's within the coder's tolerance).

        Returns
        -------
        symbol : int
        """
        P = np.asarray(probabilities)
        if P.ndim != 1:
            raise ValueError(
                f"probabilities must be 1-D for decode_step, got shape {P.shape}."
            )
        return int(self.decode(P[None, :])[0])

    def decode(self, probabilities):
        """Decode the next ``len(probabilities)`` symbols.

        Parameters
        ----------
        probabilities : array-like of shape (n, alphabet_size)
            The decoder's distribution of each of the next ``n`` symbols.

        Returns
        -------
        symbols : ndarray of shape (n,), dtype int64
        """
        P = check_probability_rows(probabilities, self.alphabet_size_)
        n = P.shape[0]
        remaining = self.n_symbols_ - self.n_decoded_
        if n > remaining:
            raise ValueError(
                f"Asked to decode {n} symbols but only {remaining} of the "
                f"payload's {self.n_symbols_} remain."
            )
        out = np.zeros(n, dtype=np.int64)
        for batch in batch_slices(
            n, tree_row_bytes(self.alphabet_size_), max_n_rows=_cache_rows(self)
        ):
            start = batch.start
            while start < batch.stop:
                chunk_n = self._chunks[self._chunk_index][1]
                stop = min(batch.stop, start + chunk_n - self._chunk_n)
                out[start:stop] = self._decode_rows(P[start:stop])
                self._chunk_crc = symbols_crc(out[start:stop], self._chunk_crc)
                self._chunk_n += stop - start
                self.n_decoded_ += stop - start
                if self._chunk_n == chunk_n:
                    self._check_chunk()
                    self._open_next_chunk()
                start = stop
        return out

    def _check_chunk(self):
        crc = self._chunks[self._chunk_index][2]
        ok = (not self.checksum_) or crc == self._chunk_crc
        self.chunk_ok_.append(bool(ok))
        if not ok and getattr(self, "_raise_on_desync", True):
            raise ValueError(
                f"Desync detected: the CRC32 of chunk {self._chunk_index} (symbols "
                f"{self._chunk_index * (self.chunk_size_ or self.n_symbols_)} on) "
                "does not match. The decoder's probabilities differ from the "
                "encoder's by more than the coder tolerates (raise delta, or use "
                "PMATIC instead of plain arithmetic coding)."
            )

    def _decode_rows(self, P):
        n = P.shape[0]
        if self.backend_ == "constriction":
            family = self._constriction.stream.model.Categorical(perfect=False)
            try:
                return np.asarray(self._cdecoder.decode(family, P), dtype=np.int64)
            except (AssertionError, ValueError, RuntimeError) as exc:
                raise ValueError(
                    f"Desync detected: constriction cannot decode chunk "
                    f"{self._chunk_index} with these probabilities ({exc})."
                ) from exc
        T = mass_tree(P)
        _, decode, compiled = self._kernels
        out = np.zeros(n, dtype=np.int64)
        tree = T.ravel()
        if not compiled:
            tree = tree.tolist()
            out = out.tolist()
        mode, n_bins, helper_num, den = self._mode_args()
        decode(
            tree,
            T.shape[1],
            n,
            self.code_length_,
            self.alphabet_size_,
            mode,
            n_bins,
            helper_num,
            den,
            self._state,
            self._inbits,
            out,
            0,
            self._half,
            self._quarter,
        )
        return np.asarray(out, dtype=np.int64)
