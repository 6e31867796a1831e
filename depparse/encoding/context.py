"""Contextual word classes: each word's MiniLM vector mapped to the nearest of K centroids.

A word's vector at a middle layer of the encoder (:mod:`depparse.encoding.minilm`), averaged
over its word pieces, is mapped to the nearest of ``K`` centroids (spherical k-means over the
training words) and to a coarse class (k-means over the centroids).  The classes enter the
arc, sibling and grandparent templates like Koo et al.'s (2008) word clusters do, and the
labeler's templates as well (:mod:`depparse.features.parts`, ``labels``).  The centroids are
stored in the model (float16), so a model's classes never depend on anything but the
encoder's weights, which are checked by their SHA-256.
"""

from __future__ import annotations

import base64
import weakref

import numpy as np

from ..errors import ModelError
from .ids import SPECIALS, cluster_code
from .minilm import ENCODER_NAME, WEIGHTS_SHA256, MiniLM, get_encoder, one_blas_thread, word_vectors

__all__ = ["ContextClasses", "spherical_kmeans"]

#: Below this gap between a word's best and second-best centroid similarity, a class assigned
#: in a product over many sentences is assigned again over its sentence alone
#: (:meth:`ContextClasses.assign`): BLAS round-off differs between products of different
#: shapes by about 1e-6 here (unit vectors of 384 dimensions), so a wider gap decides alike.
TIE_GAP = 1e-4


def _normalise(x):
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def _nearest(x, c, chunk=16384):
    out = np.empty(x.shape[0], dtype=np.int64)
    for s in range(0, x.shape[0], chunk):
        out[s:s + chunk] = (x[s:s + chunk] @ c.T).argmax(1)
    return out


def spherical_kmeans(x, k, iters=20, seed=0):
    """Unit-norm centroids (k, dim) of the rows of ``x`` under cosine similarity."""
    rng = np.random.default_rng(seed)
    x = _normalise(np.asarray(x, dtype=np.float32))
    if x.shape[0] < k:
        raise ValueError(f"{k} classes need at least {k} words, got {x.shape[0]}")
    # k-means++ seeding (Arthur & Vassilvitskii 2007): each new centre is drawn with
    # probability proportional to the squared distance to the nearest centre so far
    c = np.empty((k, x.shape[1]), dtype=np.float32)
    c[0] = x[rng.integers(x.shape[0])]
    best = x @ c[0]
    for j in range(1, k):
        d2 = np.maximum(2.0 - 2.0 * best, 0.0).astype(np.float64)  # |a - b|^2 of unit vectors
        total = d2.sum()
        i = rng.choice(x.shape[0], p=d2 / total) if total > 0 else rng.integers(x.shape[0])
        c[j] = x[i]
        np.maximum(best, x @ c[j], out=best)
    for _ in range(iters):
        a = _nearest(x, c)
        sums = np.zeros_like(c)
        np.add.at(sums, a, x)
        empty = np.bincount(a, minlength=k) == 0
        sums[empty] = x[rng.choice(x.shape[0], int(empty.sum()), replace=False)]
        c = _normalise(sums)
    return c


class ContextClasses:
    """Fine and coarse contextual classes of the words of a sentence (see module doc)."""

    def __init__(self, layer: int, centroids, coarse):
        self.layer = int(layer)
        # float16 in the model file; assignment always uses these rounded values
        self.centroids = np.asarray(centroids, dtype=np.float16).astype(np.float32)
        self.coarse = np.asarray(coarse, dtype=np.int64)
        # id(vectors) -> (weak reference to the array, its codes): assign()'s classes
        self._memo: dict = {}

    def __getstate__(self):  # a process pool's copy: without the look-ups (weak references)
        return {k: v for k, v in self.__dict__.items() if k != "_memo"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._memo = {}

    @classmethod
    def train(cls, vectors, layer: int, k: int = 1024, k_coarse: int = 64, seed: int = 0):
        """Cluster training-word vectors (rows) into ``k`` classes and ``k_coarse`` groups."""
        c = spherical_kmeans(vectors, k, seed=seed)
        cc = spherical_kmeans(c, k_coarse, iters=40, seed=seed)
        c16 = c.astype(np.float16).astype(np.float32)
        return cls(layer, c16, _nearest(c16, cc))

    @property
    def encoder(self) -> MiniLM:
        return get_encoder(self.layer)

    def codes(self, forms=None, vectors=None) -> np.ndarray:
        """int64 :func:`~depparse.encoding.ids.cluster_code` of the words' fine and coarse classes
        (offset by the vocabularies' reserved ids).  ``vectors`` given to :meth:`assign`
        before (the same array object) are looked up, not assigned again."""
        if vectors is None:
            vectors = word_vectors(self.layer, forms)
        else:
            hit = self._memo.get(id(vectors))
            if hit is not None and hit[0]() is vectors:
                return hit[1].copy()
        return self._codes(vectors)

    def _codes(self, vectors):
        if len(vectors) == 0:
            return np.zeros(0, dtype=np.int64)
        with one_blas_thread():
            a = _nearest(_normalise(np.asarray(vectors, dtype=np.float32)), self.centroids)
        return cluster_code(len(SPECIALS) + a, len(SPECIALS) + self.coarse[a])

    def assign(self, vector_list) -> None:
        """Assign the classes of many sentences' words (a list of (n, dim) arrays) in one
        product, for :meth:`codes` to look up while the arrays live: the same classes as
        :meth:`codes` of each sentence alone (a word whose best two centroids are within
        :data:`TIE_GAP` is assigned over its sentence alone).

        The parser calls :meth:`codes` twice per sentence (for the network's batch and after
        tagging); one product over a forward pass's sentences takes about a fifth of the
        time of a product per sentence, and the second call is a look-up."""
        vector_list = [v for v in vector_list if len(v)]
        if not vector_list:
            return
        with one_blas_thread():
            x = _normalise(np.concatenate(vector_list).astype(np.float32, copy=False))
            sim = x @ self.centroids.T
        rows = np.arange(len(sim))
        best = sim.argmax(1)
        top = sim[rows, best]
        sim[rows, best] = -np.inf
        close = top - sim.max(1) < TIE_GAP
        bounds = np.cumsum([len(v) for v in vector_list])[:-1]
        for v, a, c in zip(vector_list, np.split(best, bounds), np.split(close, bounds),
                           strict=True):
            if c.any():
                codes = self._codes(v)
            else:
                codes = cluster_code(len(SPECIALS) + a, len(SPECIALS) + self.coarse[a])
            self._remember(v, codes)

    def _remember(self, vectors, codes):
        key = id(vectors)
        memo = self._memo

        def gone(ref, key=key):  # the array is freed: its id may be reused
            if memo.get(key, (None,))[0] is ref:
                del memo[key]

        memo[key] = (weakref.ref(vectors, gone), codes)

    def to_json(self) -> dict:
        return {"encoder": ENCODER_NAME, "sha256": WEIGHTS_SHA256, "layer": self.layer,
                "shape": list(self.centroids.shape),
                "centroids": base64.b64encode(self.centroids.astype("<f2").tobytes()).decode(),
                "coarse": self.coarse.tolist()}

    @classmethod
    def from_json(cls, d: dict) -> ContextClasses:
        if d.get("encoder") != ENCODER_NAME or d.get("sha256") != WEIGHTS_SHA256:
            raise ModelError(f"the model's contextual classes need the encoder "
                             f"{d.get('encoder')!r}, which this depparse does not know")
        c = np.frombuffer(base64.b64decode(d["centroids"]), dtype="<f2").reshape(d["shape"])
        return cls(d["layer"], c, d["coarse"])
