"""The BERT encoder's forward pass in NumPy, shared by the two pretrained encoders.

Devlin et al. (2019), Vaswani et al. (2017): embeddings (word + position + token type,
LayerNorm), then per layer multi-head self-attention (``softmax(Q K^T / sqrt(d)) V``), its
output projection with a residual and LayerNorm, a GELU feed-forward block with a residual
and LayerNorm (post-LN, as BERT and XLM-R).  :class:`Transformer` runs the layers over
many windows of word pieces at once and pools each word's pieces into a vector per layer;
a subclass says how words become pieces and pieces become embeddings:

- :class:`~depparse.encoding.minilm.MiniLM` (all-MiniLM-L6-v2: uncased WordPiece, float32
  weights from safetensors; English);
- :class:`~depparse.encoding.e5.E5` (multilingual-e5-small: XLM-R's SentencePiece unigram
  vocabulary, 4-bit weights; about 100 languages).

Shapes: a pass stacks its windows' rows (``R`` pieces with each window's first and last
special piece) into ``x`` (R, dim); attention is computed per window; a word's vector is
the mean (or the first) of its pieces' rows.
"""

from __future__ import annotations

import numpy as np
from threadpoolctl import ThreadpoolController

__all__ = ["GELU_ROWS", "MAX_ROWS", "POOLINGS", "Transformer", "every_word_a_piece", "gelu",
           "one_blas_thread"]

# rows (pieces and the two special ones per window) per forward pass of a batch of
# sentences: on en_ewt test 5,590 words/CPU-s with MiniLM, against 5,290 for 512 and 2048
# rows, 4,780 for 256 (benchmarks/encoder_speed.py --grid)
MAX_ROWS = 1024
# rows of the feed-forward block per GELU call: 32 x 1536 float32 buffers stay in the cache
# (3.3 ms for 512 rows against 8.1 ms in one call)
GELU_ROWS = 32
#: How a word's vector is made from its pieces' rows: their mean (a word's first piece alone
#: was retired: benchmarks/experiments/patches/first-piece-pooling.patch).
POOLINGS = ("mean",)


def _erf(x):
    """erf by Abramowitz & Stegun 7.1.26 in float32 (NumPy has no erf).

    Measured: largest absolute error 6.7e-7 (at x = 0.0464) over every float32 in [0, 8]
    against SciPy's float64 erf (the formula's own bound is 1.5e-7, the rest is float32
    round-off; erf is odd, and beyond 8 both are 1).  An exact erf (``scipy.special.erf``,
    error 3e-8) was measured against it and not taken: against transformers' ``BertModel``
    (torch 2.13, one thread, 404 sentences) the largest hidden-state difference over
    MiniLM's layers 1-6 is 7.9e-6 with it and 8.0e-6 with this one, both float32 round-off;
    but its GELU is 3.4x slower, about a tenth of the encoder's time, and SciPy would be a
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


def gelu(x, out=None):
    """BERT's exact GELU, x * Phi(x) (not the tanh approximation), computed as
    0.5 * x * (1 + erf(x / sqrt(2))); ``out=x`` overwrites ``x``."""
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


def every_word_a_piece(ids, owner, n, unk) -> tuple[list[int], list[int]]:
    """``(ids, owner)`` of a tokenizer's pieces of ``n`` words (``owner[k]`` the word of piece
    ``k``), with ``unk`` for a word that got no piece (control or format characters only)."""
    ids, owner = list(ids), list(owner)
    if len(set(owner)) < n:
        by_word: list[list[int]] = [[] for _ in range(n)]
        for i, w in zip(ids, owner, strict=True):
            by_word[w].append(i)
        ids, owner = [], []
        for w, got in enumerate(by_word):
            ids.extend(got or [unk])
            owner.extend([w] * max(len(got), 1))
    return ids, owner


class Transformer:
    """The first :attr:`layers` layers of a BERT-architecture encoder, in NumPy.

    A subclass sets :attr:`layers`, :attr:`heads`, :attr:`dim`, :attr:`eps`, :attr:`cls` and
    :attr:`sep` (the ids of a window's first and last special piece), :attr:`max_pieces`
    (positions per window without those two), :attr:`emb_ln` (the embeddings' LayerNorm
    ``(weight, bias)``) and :attr:`blocks` (per layer a dict: ``q k v o ff1 ff2`` as
    ``(W (in, out) C-contiguous, b)``, ``ln1 ln2`` as ``(weight, bias)``), and implements
    :meth:`piece_ids` and :meth:`_embed`.
    """

    layers: int
    heads: int
    dim: int
    eps: float
    cls: int
    sep: int
    unk: int
    max_pieces: int
    emb_ln: tuple
    blocks: list

    def piece_ids(self, forms) -> tuple[list[int], list[int]]:
        """Piece ids of a sentence's words and, for each piece, the index of its word (every
        word at least one piece)."""
        raise NotImplementedError

    def _embed(self, flat, pos):
        """(R, dim) float32: the embeddings of pieces ``flat`` at positions ``pos`` (within
        their windows, from 0), before the embeddings' LayerNorm."""
        raise NotImplementedError

    def _ln(self, x, w, b):
        """LayerNorm over the last axis: (x - mean) / sqrt(var + eps) * w + b (a new array;
        the operations of that expression in its order)."""
        d = x - x.mean(-1, keepdims=True)
        v = np.square(d).mean(-1, keepdims=True)
        v += self.eps
        d /= np.sqrt(v, out=v)
        d *= w
        d += b
        return d

    @staticmethod
    def _dense(x, wb):
        """x @ W + b of a linear layer ``(W, b)``."""
        y = x @ wb[0]
        y += wb[1]
        return y

    def _forward(self, windows, keep=None):
        """Hidden states (R, dim) at the last computed layer of ``windows`` (lists of piece
        ids, each with its first and last special piece), their rows stacked in the order
        given; with ``keep`` (layer numbers, 0 the embeddings' output), a list of the states
        at those layers.

        The dense products (Q/K/V, attention output, feed-forward), LayerNorm and GELU work on
        all rows at once; attention is computed per window (consecutive windows of the same
        length together, as one stacked product), so that no window sees another.  A row's
        result does not depend on the other windows (see :meth:`iter_layer_vectors`).
        """
        lens = [len(ids) for ids in windows]
        flat = np.fromiter((i for ids in windows for i in ids), dtype=np.int64, count=sum(lens))
        pos = np.concatenate([np.arange(T) for T in lens])
        x = self._ln(self._embed(flat, pos), *self.emb_ln)
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
        kept = {0: x} if keep is not None and 0 in keep else {}
        last = max(keep) if keep is not None else self.layers
        for i in range(last):
            blk = self.blocks[i]
            q, k_, v = (self._dense(x, blk[n]) for n in ("q", "k", "v"))
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
            c = self._dense(c, blk["o"])
            c += x
            x = self._ln(c, *blk["ln1"])
            h = self._dense(x, blk["ff1"])
            for r in range(0, len(h), GELU_ROWS):  # blocks that stay in the cache
                gelu(h[r:r + GELU_ROWS], out=h[r:r + GELU_ROWS])
            o = self._dense(h, blk["ff2"])
            o += x
            x = self._ln(o, *blk["ln2"])
            if keep is not None and i + 1 in keep:
                kept[i + 1] = x
        return x if keep is None else [kept[k] for k in keep]

    def word_vectors(self, forms) -> np.ndarray:
        """(n, dim) float32: each word's mean piece vector at the last computed layer.

        Sentences longer than :attr:`max_pieces` pieces are encoded in consecutive windows.
        """
        return self.batch_layer_vectors([forms], (self.layers,))[0][0]

    def layer_vectors(self, forms, layers) -> list[np.ndarray]:
        """:meth:`word_vectors` at each of ``layers`` (at most :attr:`layers`), from one
        forward pass."""
        return self.batch_layer_vectors([forms], layers)[0]

    def batch_word_vectors(self, sentences, max_rows: int = MAX_ROWS) -> list[np.ndarray]:
        """:meth:`word_vectors` of each sentence (a list of forms), many at a time."""
        return [v[0] for v in self.iter_layer_vectors(sentences, (self.layers,), max_rows)]

    def batch_layer_vectors(self, sentences, layers, max_rows: int = MAX_ROWS,
                            pooling: str = "mean") -> list[list[np.ndarray]]:
        """Each sentence's (a list of forms) word vectors at each of ``layers`` (at most
        :attr:`layers`; 0 the embeddings), many sentences at a time: per sentence, a list of
        (n, dim) float32 arrays, one per layer of ``layers``, from one forward pass."""
        return list(self.iter_layer_vectors(sentences, layers, max_rows, pooling))

    def iter_layer_vectors(self, sentences, layers, max_rows: int = MAX_ROWS,
                           pooling: str = "mean"):
        """:meth:`batch_layer_vectors`, lazily: yields each sentence's list of arrays, a
        forward pass at a time (for a long input, only one pass's vectors are held).

        The windows of consecutive sentences, about ``max_rows`` rows in all, go through the
        encoder together (:meth:`_forward`; a sentence's windows are never split between two
        passes), sorted by length within a pass.  A sentence's vectors are bit for bit those
        it gets alone: every row of a dense product is its own dot products, and attention,
        pooling and the averages are per window or per sentence (``tests/test_encoder.py``
        checks it).  That needs a BLAS whose rows of a matrix product do not depend on the
        number of rows: OpenBLAS's ``sgemm`` (0.3.31, SkylakeX kernels) is; a
        matrix-vector product (one row) is not, but a window has at least 3 rows.  Its
        Haswell kernels (CPUs with AVX2 but not AVX-512) are not: there a row beyond a
        product's first full tiles of 24 rows may differ in its last bits, and a sentence's
        vectors equal those it gets alone to float32 round-off (1.9e-6 at most on values up
        to 6, measured: tests/blas_rows.py).  Batching is what makes the encoder fast: with
        MiniLM on en_ewt test, 2.7 times the words per CPU second of one sentence at a time
        (``benchmarks/encoder_speed.py``, one BLAS thread).

        ``pooling``: a word's vector is the mean of its pieces' rows (:data:`POOLINGS`).
        """
        layers = tuple(layers)
        if any(not 0 <= k <= self.layers for k in layers):
            raise ValueError(f"layers {layers}: this encoder computes 0-{self.layers}")
        if pooling not in POOLINGS:
            raise ValueError(f"pooling {pooling!r}: one of {POOLINGS}")
        return self._iter(sentences, layers, max_rows, pooling)

    def _iter(self, sentences, layers, max_rows, pooling="mean"):
        for got in self._passes(sentences, layers, max_rows, pooling):
            yield from got

    def _passes(self, sentences, layers, max_rows, pooling="mean"):
        """:meth:`iter_layer_vectors` a forward pass at a time: a list per pass."""
        todo, rows = [], 0
        M = self.max_pieces
        for forms in sentences:
            forms = list(forms)
            ids, owner = self.piece_ids(forms)
            need = len(ids) + 2 * -(-len(ids) // M)
            if todo and rows + need > max_rows:
                yield self._pass(todo, layers, pooling)
                todo, rows = [], 0
            todo.append((len(forms), ids, owner))
            rows += need
        if todo:
            yield self._pass(todo, layers, pooling)

    def _pass(self, todo, layers, pooling="mean") -> list[list[np.ndarray]]:
        """One forward pass over the windows of the sentences ``todo`` ((words, piece ids,
        piece owners) each): their pooled piece vectors at ``layers``."""
        M = self.max_pieces
        windows, where = [], []  # where: (window, sentence's first word, owners)
        words = 0
        for n, ids, owner in todo:
            for s in range(0, len(ids), M):
                where.append((len(windows), words, owner[s:s + M]))
                windows.append([self.cls] + ids[s:s + M] + [self.sep])
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
        # (dst is non-decreasing: a word's pieces are consecutive)
        first = np.flatnonzero(np.r_[True, dst[1:] != dst[:-1]])
        count = np.bincount(dst, minlength=words)[:, None]
        # each word's pieces summed in their order, as np.add.at sums them (bit for bit), a
        # rank at a time: the first piece of every word, then the second of those with two...
        rank = np.arange(len(dst)) - np.repeat(first, np.diff(np.r_[first, len(dst)]))
        by_rank = [np.flatnonzero(rank == r) for r in range(int(rank.max(initial=-1)) + 1)]
        pooled = []
        for x in xs:
            x = x[src]
            out = np.zeros((words, self.dim), dtype=np.float32)
            for rows in by_rank:
                out[dst[rows]] += x[rows]
            out /= count
            pooled.append(out)
        return self._split(pooled, bounds, len(todo))

    @staticmethod
    def _split(pooled, bounds, n):
        """Per sentence, its rows of each layer's (words, dim) array."""
        parts = [np.split(p, bounds) for p in pooled]
        return [[p[k] for p in parts] for k in range(n)]
