"""Shared machinery of the streaming encoders and decoders, and the payload.

Payload (version 2; ``uv`` is an unsigned LEB128 varint, fixed-width fields
little-endian)::

    magic "SKIC" | version u8 | method u8 | precision u8 | flags u8
    alphabet_size uv | n_symbols uv | chunk_size uv (0: one chunk) | n_chunks uv
    PMATIC only: delta f64 | n_bins uv | helper_numerator uv
        (the last absent when the helper probability is adaptive)
    chunk table: n_bytes uv of every chunk, then crc32 u32 of every chunk
        when checked
    chunk bodies, concatenated (trailing zero bytes of a binary-coder body
        are dropped: the decoder reads zeros past the end anyway)

``method`` is 0 (plain binary arithmetic coding), 1 (PMATIC) or 2 (plain,
constriction's range coder over whole symbols); ``flags`` bit 0 says whether
the per-chunk CRC32 of the chunk's symbols is checked, bit 1 whether PMATIC's
helper probability is adaptive, bit 2 whether its end bins are. Each chunk is
an independent coder stream (the adaptive counts restart with it), so a
desync stays inside its chunk and is detected by its CRC. A one-chunk PMATIC
payload of a few thousand symbols has a 28-byte header (version 1: 60 bytes).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import struct
import zlib

import numpy as np

from sklearn_iclr26.compression._kernels import (
    OUT_MARGIN,
    get_kernels,
    numba_available,
)
from sklearn_iclr26.compression._longform import (
    check_probability_rows,
    check_symbols,
    code_length,
    mass_tree,
    tree_row_bytes,
)
from sklearn_iclr26.utils._batching import batch_slices
from sklearn_iclr26.utils._sklearn_compat import (
    StrOptions,
    validate_parameter_constraints,
)

MAGIC = b"SKIC"
VERSION = 2
METHOD_PLAIN, METHOD_PMATIC, METHOD_CONSTRICTION = 0, 1, 2
METHOD_NAMES = {0: "plain", 1: "pmatic", 2: "plain (constriction)"}
FLAG_CHECKSUM, FLAG_ADAPTIVE, FLAG_ENDS = 1, 2, 4
_HEAD = struct.Struct("<4sBBBB")
_DELTA = struct.Struct("<d")
_CRC = struct.Struct("<I")


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
    Bytes of the header and chunk table (about 20, plus 13 for PMATIC,
    plus a varint length and a 4-byte CRC per chunk); the rest of the
    payload is the coded symbols.
backend_ : str
    The backend in use."""


def _cache_rows(coder):
    """Rows per batch whose mass trees fit in about 2 MiB (cache-friendly)."""
    return max(16, (1 << 21) // tree_row_bytes(coder.alphabet_size_))


def _row_batches(coder, n):
    """The row batches of one ``encode`` / ``decode`` call.

    Only the Python path materialises the rows' mass trees, so only it goes
    by ``working_memory``; the compiled kernels (which build each row's tree
    in a scratch row) and constriction hold no per-row memory and take the
    whole call in one go (chunk boundaries still split it).
    """
    if coder.backend_ != "python":
        return [slice(0, n)]
    return batch_slices(
        n, tree_row_bytes(coder.alphabet_size_), max_n_rows=_cache_rows(coder)
    )


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
    # zlib reads the array's buffer: one conversion, no bytes copy
    return zlib.crc32(np.ascontiguousarray(symbols, dtype="<u4"), crc)


def _uv(value):
    """Unsigned LEB128 varint."""
    value = int(value)
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


class _Reader:
    def __init__(self, payload):
        self.payload = payload
        self.pos = 0

    def _truncated(self, what):
        return ValueError(
            f"Truncated payload: {len(self.payload)} bytes end inside the {what}."
        )

    def fixed(self, st, what):
        if self.pos + st.size > len(self.payload):
            raise self._truncated(what)
        out = st.unpack_from(self.payload, self.pos)
        self.pos += st.size
        return out

    def uv(self, what):
        value, shift = 0, 0
        while True:
            if self.pos >= len(self.payload):
                raise self._truncated(what)
            byte = self.payload[self.pos]
            self.pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value
            if shift > 63:
                raise ValueError(f"Corrupt payload: the {what} is not a varint.")


def pack_payload(meta, chunks):
    pmatic = meta["method"] == METHOD_PMATIC
    adaptive = pmatic and meta["helper_numerator"] == 0
    flags = (
        (FLAG_CHECKSUM if meta["checksum"] else 0)
        | (FLAG_ADAPTIVE if adaptive else 0)
        | (FLAG_ENDS if pmatic and meta["adaptive_ends"] else 0)
    )
    parts = [
        _HEAD.pack(MAGIC, VERSION, meta["method"], meta["precision"], flags),
        _uv(meta["alphabet_size"]),
        _uv(meta["n_symbols"]),
        _uv(meta["chunk_size"]),
        _uv(len(chunks)),
    ]
    if pmatic:
        parts += [
            _DELTA.pack(meta["delta"]),
            _uv(meta["n_bins"]),
        ]
        if not adaptive:
            parts.append(_uv(meta["helper_numerator"]))
    parts += [_uv(len(body)) for body, _, _ in chunks]
    if meta["checksum"]:
        parts += [_CRC.pack(crc) for _, _, crc in chunks]
    parts += [body for body, _, _ in chunks]
    return b"".join(parts)


def unpack_payload(payload):
    """Parse a payload; return (meta, [(body, n_symbols, crc), ...])."""
    if not isinstance(payload, (bytes, bytearray, memoryview)):
        raise TypeError(f"payload must be bytes, got {type(payload).__name__}.")
    payload = bytes(payload)
    if len(payload) < _HEAD.size:
        raise ValueError(
            f"Truncated payload: {len(payload)} bytes, shorter than the "
            f"{_HEAD.size}-byte fixed header."
        )
    magic, version, method, precision, flags = _HEAD.unpack_from(payload)
    if magic != MAGIC:
        raise ValueError("Not a sklearn_iclr26.compression payload (bad magic).")
    if version != VERSION:
        raise ValueError(
            f"Payload format version {version} is not supported (this version "
            f"reads {VERSION})."
        )
    if method not in METHOD_NAMES:
        raise ValueError(f"Unknown coding method {method} in the header.")
    if not 16 <= precision <= 32:
        raise ValueError(f"Corrupt payload: precision {precision} in the header.")
    reader = _Reader(payload)
    reader.pos = _HEAD.size
    meta = {
        "method": method,
        "precision": precision,
        "checksum": bool(flags & FLAG_CHECKSUM),
        "alphabet_size": reader.uv("header"),
        "n_symbols": reader.uv("header"),
        "chunk_size": reader.uv("header"),
        "delta": 0.0,
        "n_bins": 0,
        "adaptive_ends": bool(flags & FLAG_ENDS),
        "helper_numerator": 0,
    }
    n_chunks = reader.uv("header")
    if method == METHOD_PMATIC:
        meta["delta"] = reader.fixed(_DELTA, "header")[0]
        meta["n_bins"] = reader.uv("header")
        if not flags & FLAG_ADAPTIVE:
            meta["helper_numerator"] = reader.uv("header")
        if meta["n_bins"] < 1 or 2 * meta["n_bins"] > 1 << (precision - 2):
            raise ValueError("Corrupt payload: bins do not fit the coder precision.")
    n_sym, chunk_size = meta["n_symbols"], meta["chunk_size"] or meta["n_symbols"]
    expected_chunks = 0 if n_sym == 0 else -(-n_sym // max(chunk_size, 1))
    if n_chunks != expected_chunks:
        raise ValueError("Corrupt payload: chunk table and symbol count disagree.")
    sizes = [reader.uv("chunk table") for _ in range(n_chunks)]
    crcs = [0] * n_chunks
    if meta["checksum"]:
        crcs = [reader.fixed(_CRC, "chunk table")[0] for _ in range(n_chunks)]
    offset = reader.pos
    expected = offset + sum(sizes)
    if len(payload) < expected:
        raise ValueError(
            f"Truncated payload: {len(payload)} bytes, the header announces {expected}."
        )
    if len(payload) > expected:
        raise ValueError(
            f"Payload has {len(payload) - expected} trailing bytes after the "
            "announced chunks."
        )
    chunks = []
    for i, n_bytes in enumerate(sizes):
        body = payload[offset : offset + n_bytes]
        offset += n_bytes
        chunks.append((body, min(chunk_size, n_sym - i * chunk_size), crcs[i]))
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
        state = [0, (1 << self.precision) - 1, 0, 0, 0, 0, 0, 0, 0]
        if compiled:
            self._state = np.array(state, dtype=np.int64)
            self._out = np.zeros(4096, dtype=np.uint8)
        else:
            self._state = state
            self._out = bytearray(4096)
        self._pos = 0
        self._chunk_n = 0
        self._chunk_crc = 0
        if self.backend_ == "constriction":  # one range coder per chunk
            self._cencoder = self._constriction.stream.queue.RangeEncoder()
            self._cfamily = self._constriction.stream.model.Categorical(perfect=False)

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
        P = check_probability_rows(
            probabilities, self.alphabet_size_, fast=self.backend_ != "python"
        )
        s = check_symbols(symbols, P.shape[1], P.shape[0])
        if self.alphabet_size_ is None:
            self.alphabet_size_ = int(P.shape[1])
            self.code_length_ = code_length(self.alphabet_size_)
        chunk = self.chunk_size
        for batch in _row_batches(self, len(s)):
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
        if self.backend_ == "constriction":  # streamed: no copy of the rows
            self._cencoder.encode(
                s.astype(np.int32), self._cfamily, np.ascontiguousarray(P)
            )
            return
        encode, _, compiled = self._kernels
        V = self.alphabet_size_
        ell = self.code_length_
        width = 2 << ell
        if compiled:  # the kernel builds each row's mass tree itself
            src, build = np.ascontiguousarray(P).ravel(), True
            sym = np.ascontiguousarray(s, dtype=np.int64)
        else:
            src, build = mass_tree(P).ravel().tolist(), False
            sym = s.tolist()
        mode, n_bins, tol, ad_helper, ad_ends, helper_num, den = self._mode_args()
        row, n = 0, len(s)
        while row < n:
            row, self._pos = encode(
                src,
                build,
                width,
                V,
                ell,
                sym,
                row,
                n,
                mode,
                n_bins,
                tol,
                ad_helper,
                ad_ends,
                helper_num,
                den,
                self._state,
                self._out,
                self._pos,
                self._half,
                self._quarter,
            )
            if row < n:
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
            # The decoder reads zeros past the end: trailing zero bytes are free.
            body = body.tobytes().rstrip(b"\0")
        self._chunks.append((body, self._chunk_n, self._chunk_crc))
        self._reset_chunk()

    def _constriction_body(self):
        return self._cencoder.get_compressed().astype("<u4").tobytes()

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
        state = [0, (1 << P) - 1, value, P, 0, 0, 0, 0, 0, 0]
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
        P = check_probability_rows(
            probabilities, self.alphabet_size_, fast=self.backend_ != "python"
        )
        n = P.shape[0]
        remaining = self.n_symbols_ - self.n_decoded_
        if n > remaining:
            raise ValueError(
                f"Asked to decode {n} symbols but only {remaining} of the "
                f"payload's {self.n_symbols_} remain."
            )
        out = np.zeros(n, dtype=np.int64)
        for batch in _row_batches(self, n):
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
                return np.asarray(
                    self._cdecoder.decode(family, np.ascontiguousarray(P)),
                    dtype=np.int64,
                )
            except (AssertionError, ValueError, RuntimeError) as exc:
                raise ValueError(
                    f"Desync detected: constriction cannot decode chunk "
                    f"{self._chunk_index} with these probabilities ({exc})."
                ) from exc
        _, decode, compiled = self._kernels
        ell = self.code_length_
        if compiled:  # the kernel builds each row's mass tree itself
            src, build = np.ascontiguousarray(P).ravel(), True
            out = np.zeros(n, dtype=np.int64)
        else:
            src, build = mass_tree(P).ravel().tolist(), False
            out = [0] * n
        mode, n_bins, _, ad_helper, ad_ends, helper_num, den = self._mode_args()
        decode(
            src,
            build,
            2 << ell,
            n,
            ell,
            self.alphabet_size_,
            mode,
            n_bins,
            ad_helper,
            ad_ends,
            helper_num,
            den,
            self._state,
            self._inbits,
            out,
            self._half,
            self._quarter,
        )
        return np.asarray(out, dtype=np.int64)
