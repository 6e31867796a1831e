"""Encoding of sentences into integer arrays for the feature kernels.

A :class:`Vocab` maps the strings of one field (lower-cased forms, lemmas, UPOS, morphological
features, prefixes, suffixes) to dense ids; ids 0-5 are reserved in every vocabulary
(:mod:`depparse.encoding.ids`).

An :class:`Encoded` sentence holds, for ``N = n + 1`` positions, int64 arrays ``form``,
``lemma``, ``upos``, ``xpos`` (language-specific tag; ``_`` where a treebank has none),
``prefix``, ``suffix``, ``cluster`` and the morphological features in CSR form
(``feat_ptr``, ``feat_ids``); position 0 is the root.  ``cluster`` holds the contextual word
classes of models that have them (:mod:`depparse.encoding.context`; fine id | coarse id <<
``CLUSTER_SHIFT``, ``<ROOT>`` at position 0) and zeros otherwise, which switches their
templates off.  For models with dense contextual arc scores (:mod:`depparse.features.dense`)
it also keeps the words' encoder vectors of that layer (``vectors``, (n, 384) float32; the
encoder runs once per sentence for both uses).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from .ahead import run_ahead
from .context import ContextClasses
from .ids import ROOT, SPECIALS, UNK, cluster_code
from .minilm import iter_word_vector_passes, layer_vectors, word_vectors

__all__ = ["AFFIX", "Encoded", "Vocab", "Vocabularies"]

AFFIX = 3  # length of the prefix and suffix features


class Vocab:
    """String -> id map with the reserved ids of :data:`SPECIALS`."""

    def __init__(self, items=()):
        self.items: list[str] = list(SPECIALS)
        self.index: dict[str, int] = {s: i for i, s in enumerate(SPECIALS)}
        for it in items:
            self.add(it)

    def add(self, s: str) -> int:
        i = self.index.get(s)
        if i is None:
            i = len(self.items)
            self.items.append(s)
            self.index[s] = i
        return i

    def get(self, s: str) -> int:
        return self.index.get(s, UNK)

    def __len__(self) -> int:
        return len(self.items)

    def to_list(self) -> list[str]:
        return self.items[len(SPECIALS):]

    @classmethod
    def from_list(cls, items) -> Vocab:
        return cls(items)


def _feats(s: str) -> list[str]:
    return [] if s in ("", "_") else s.split("|")


def _lower(s: str) -> str:
    return s.lower()


@dataclass
class Encoded:
    """Integer arrays of one sentence (length ``N = n + 1``; index 0 is the root)."""

    form: np.ndarray
    lemma: np.ndarray
    upos: np.ndarray
    xpos: np.ndarray
    prefix: np.ndarray
    suffix: np.ndarray
    cluster: np.ndarray
    feat_ptr: np.ndarray
    feat_ids: np.ndarray
    vectors: np.ndarray | None = None  # (n, dim) encoder vectors (Vocabularies.vector_layer)
    # the forms themselves (root first), for the character representations of a learned
    # network (depparse.network.biaffine); set by Vocabularies.encode
    forms: np.ndarray | None = None
    # (n, K, 384) float16: the words' vectors at layers 0 .. K - 1 of multilingual-e5-small,
    # for a learned network with a mix of them (set by Network.attach_layers)
    layers: np.ndarray | None = None
    # a learned network's outputs for this sentence, computed with a batch of others: (arc
    # log-probabilities (N, N), UPOS log-probabilities (N, U) or None, representations
    # (N, 2H) or None); set by Network.attach, read by its views (None: computed alone)
    network: tuple | None = None

    @property
    def n(self) -> int:
        return self.form.shape[0] - 1

    def arrays(self):
        """The arrays in the order the feature kernels take them."""
        return (self.form, self.lemma, self.upos, self.xpos, self.prefix, self.suffix,
                self.cluster, self.feat_ptr, self.feat_ids)


class Vocabularies:
    """All vocabularies of a model, built from training sentences.

    Parameters
    ----------
    min_count : int
        Lower-cased forms seen fewer times than this in training are mapped to ``<UNK>``
        (so that the model learns weights for unknown words).
    """

    FIELDS = ("form", "lemma", "upos", "xpos", "feat", "prefix", "suffix", "deprel")

    def __init__(self, min_count: int = 1):
        self.min_count = min_count
        for f in self.FIELDS:
            setattr(self, f, Vocab())
        self.context = None  # ContextClasses, for models that use them
        # MiniLM layer whose word vectors encode() keeps in Encoded.vectors (0: none), for
        # models with dense contextual arc scores (ModelConfig.dense_layer)
        self.vector_layer = 0

    @classmethod
    def build(cls, sentences, min_count: int = 1) -> Vocabularies:
        v = cls(min_count)
        counts: Counter = Counter()
        for s in sentences:
            for i in range(1, s.n + 1):
                counts[_lower(s.forms[i])] += 1
                v.lemma.add(_lower(s.lemmas[i]))
                v.upos.add(s.upos[i])
                v.xpos.add(s.xpos[i])
                for f in _feats(s.feats[i]):
                    v.feat.add(f)
                w = _lower(s.forms[i])
                v.prefix.add(w[:AFFIX])
                v.suffix.add(w[-AFFIX:])
                v.deprel.add(s.rels[i])
        for w, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            if c >= min_count:
                v.form.add(w)
        return v

    def encode(self, s, vectors=None) -> Encoded:
        """Encode a :class:`depparse.conllu.Sentence`.

        For a model with contextual classes, ``vectors`` may give the sentence's encoder
        vectors of the classes' layer (computed from the forms when not given).  With
        :attr:`vector_layer`, the words' vectors of that layer are kept in
        ``Encoded.vectors`` (the same array when both layers are one, else both from one
        forward pass of the encoder).
        """
        N = s.n + 1
        cluster = np.zeros(N, dtype=np.int64)
        kept = None
        if self.vector_layer:
            kept, vectors = self._vectors(s.forms[1:], vectors)
        if self.context is not None:
            cluster[0] = cluster_code(ROOT, ROOT)
            cluster[1:] = self.context.codes(s.forms[1:], vectors)
        # one list per field (a comprehension each: a third of the time of a loop over words
        # that sets six array elements per word)
        low = [_lower(f) for f in s.forms[1:]]
        fget, lget, uget, xget, pget, sget = (v.index.get for v in (
            self.form, self.lemma, self.upos, self.xpos, self.prefix, self.suffix))
        form = np.array([ROOT] + [fget(w, UNK) for w in low], dtype=np.int64)
        lemma = np.array([ROOT] + [lget(_lower(x), UNK) for x in s.lemmas[1:]], dtype=np.int64)
        upos = np.array([ROOT] + [uget(x, UNK) for x in s.upos[1:]], dtype=np.int64)
        xpos = np.array([ROOT] + [xget(x, UNK) for x in s.xpos[1:]], dtype=np.int64)
        prefix = np.array([ROOT] + [pget(w[:AFFIX], UNK) for w in low], dtype=np.int64)
        suffix = np.array([ROOT] + [sget(w[-AFFIX:], UNK) for w in low], dtype=np.int64)
        feat_ptr = np.zeros(N + 1, dtype=np.int64)
        fl: list[int] = []
        feat = self.feat.index.get
        for i in range(1, N):
            for f in _feats(s.feats[i]):
                j = feat(f)
                if j is not None:
                    fl.append(j)
            feat_ptr[i + 1] = len(fl)
        return Encoded(form, lemma, upos, xpos, prefix, suffix, cluster, feat_ptr,
                       np.asarray(fl, dtype=np.int64), kept, s.forms)

    def iter_context_vectors(self, sentences, ahead: int = 0):
        """The ``vectors`` argument of :meth:`encode` for each of ``sentences``, in order:
        their words' encoder vectors of the contextual classes' layer, computed lazily for
        many sentences per forward pass (:func:`~depparse.encoding.minilm.iter_word_vectors`;
        each sentence's vectors are those it gets alone, bit for bit or, on CPUs whose BLAS
        computes rows otherwise, to float32 round-off, so the classes are the same, assigned a
        pass at a time, :meth:`ContextClasses.assign`); None for each sentence of a model
        without contextual classes.

        ``ahead`` > 0: the passes (and the reading of ``sentences`` they drive) run on a
        helper thread, up to that many passes ahead of the consumer
        (:func:`~depparse.encoding.ahead.run_ahead`); the same vectors.  Close the returned
        iterator when stopping early: that stops the thread."""
        if self.context is None:
            return (None for _ in sentences)
        passes = self._context_passes(sentences)
        if ahead:
            passes = run_ahead(passes, ahead, name="depparse-encoder")
        return _flat(passes)

    def _context_passes(self, sentences):
        for got in iter_word_vector_passes(self.context.layer,
                                           (s.forms[1:] for s in sentences)):
            self.context.assign(got)  # each pass's classes in one product (for encode)
            yield got

    def _vectors(self, forms, vectors):
        """``(kept, classes')``: the words' vectors of :attr:`vector_layer` and of the
        contextual classes' layer (``vectors`` when given), with one encoder pass."""
        layer = self.vector_layer
        if self.context is None:
            return word_vectors(layer, forms), vectors
        if self.context.layer == layer:
            if vectors is None:
                vectors = word_vectors(layer, forms)
            return vectors, vectors
        if vectors is None:
            kept, vectors = layer_vectors((layer, self.context.layer), forms)
            return kept, vectors
        return word_vectors(layer, forms), vectors

    def to_json(self) -> dict:
        d = {f: getattr(self, f).to_list() for f in self.FIELDS}
        d["min_count"] = self.min_count
        if self.vector_layer:
            d["vector_layer"] = self.vector_layer
        if self.context is not None:
            d["context"] = self.context.to_json()
        return d

    @classmethod
    def from_json(cls, d: dict) -> Vocabularies:
        v = cls(int(d.get("min_count", 1)))
        for f in cls.FIELDS:
            setattr(v, f, Vocab.from_list(d[f]))
        if d.get("context"):
            v.context = ContextClasses.from_json(d["context"])
        v.vector_layer = int(d.get("vector_layer", 0))
        return v


def _flat(passes):
    """The sentences' vectors of each pass of ``passes`` (lists), in order; closing this
    generator closes ``passes`` (and so stops a helper thread that runs it)."""
    try:
        for got in passes:
            yield from got
    finally:
        passes.close()
