"""Dense contextual scores for the labeler: the encoder's vectors in the label emissions.

Issue 14 item 1 asks for the dense term of the arcs (:mod:`.dense`) "the same for the
labeler".  Every arc ``h -> m`` of the tree gets, for each label ``y``, the score

``W[e, y] . f(h, m)``,  ``f(h, m) = k [z_m, z_h, sqrt(D) / s (z_h * z_m)]``

added to its sparse emission score, with ``z`` the standardised layer vectors of the
parser's dense arc term (:meth:`depparse.features.dense.DenseArcs.sentence`: norm about
``s``; ``z_0 = 0`` for the root), ``e`` the direction of the arc (0 left, 1 right; the root's
arcs are right) and ``k`` a fixed factor that sets the dense features' size against the
sparse ones'.  Linear in ``W`` (2 x labels x 3D), so the labeler's perceptron learns it with
its sparse weights (:mod:`depparse.learn.labeler`).  A model stores it as its component
``"label_dense"`` (float16 ``W`` and JSON meta with a format version).
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError, check_component
from .dense import BUCKETS, NDIST

__all__ = ["FORMAT", "VERSION", "LabelDense", "arc_bucket_of", "arc_label_features",
           "dense_label_scores"]

FORMAT = "depparse-label-dense"
VERSION = 1


def arc_bucket_of(heads, buckets):
    """Each arc's bucket: its direction (``buckets = 2``; the root's arcs are right) or the
    dense arc term's direction and distance buckets (``buckets = 11``,
    :func:`depparse.features.dense.arc_bucket`).  Entry 0 is 0."""
    heads = np.asarray(heads, dtype=np.int64)
    N = len(heads)
    m = np.arange(1, N)
    h = heads[1:]
    out = np.zeros(N, dtype=np.int64)
    if buckets == 2:
        out[1:] = m > h
        return out
    if buckets != BUCKETS:
        raise ValueError(f"{buckets} label buckets: 2 or {BUCKETS}")
    a = np.abs(m - h)
    db = np.select([a == 1, a == 2, a <= 4, a <= 8], [0, 1, 2, 3], 4)
    out[1:] = np.where(h == 0, 2 * NDIST, np.where(m > h, NDIST, 0) + db)
    return out


def arc_label_features(z, heads, pf, factor, buckets=2):
    """``(F, dirs)``: ``F[m] = f(heads[m], m)`` (row 0 zero) and the arcs' buckets
    (:func:`arc_bucket_of`).

    Parameters
    ----------
    z : (N, D) float
        Standardised vectors, row 0 the root's (zeros).
    heads : (N,) int
        The tree (``heads[0]`` is ignored).
    pf : float
        ``sqrt(D) / s`` of the dense arc term.
    factor : float
        ``k`` (module docstring).
    """
    heads = np.asarray(heads, dtype=np.int64)
    N, D = z.shape
    F = np.zeros((N, 3 * D), dtype=z.dtype)
    zh = z[heads[1:]]
    zm = z[1:]
    F[1:, :D] = zm
    F[1:, D:2 * D] = zh
    F[1:, 2 * D:] = pf * zh * zm
    F *= factor
    return F, arc_bucket_of(heads, buckets)


def dense_label_scores(F, dirs, W):
    """``(N, L)`` scores ``S[m, y] = W[dirs[m], y] . F[m]`` (row 0 zero)."""
    S = np.zeros((F.shape[0], W.shape[1]))
    for e in range(W.shape[0]):
        rows = np.flatnonzero(dirs == e)
        rows = rows[rows > 0]
        if len(rows):
            S[rows] = F[rows] @ W[e].T
    return S


class LabelDense:
    """The labeler's dense term of a model: weights ``W`` (2, labels, 3D), the factor ``k``,
    and the parser's dense arc term whose standardised vectors it reads."""

    def __init__(self, W, factor, term):
        self.W = np.asarray(W, dtype=np.float64)
        self.factor = float(factor)
        self.term = term
        D = term.layout.dim
        if self.W.ndim != 3 or self.W.shape[0] not in (2, BUCKETS) or self.W.shape[2] != 3 * D:
            raise ValueError(f"labeler dense weights of shape {self.W.shape} for {D}-dimension "
                             "vectors")

    def features(self, enc, heads):
        """:func:`arc_label_features` of a tree of an encoded sentence."""
        return arc_label_features(self.term.sentence(enc), heads, self.term.pf, self.factor,
                                  self.W.shape[0])

    def scores(self, enc, heads):
        """``(N, L)`` dense label scores of the arcs of ``heads``."""
        F, dirs = self.features(enc, heads)
        return dense_label_scores(F, dirs, self.W)

    def to_component(self):
        """``(meta, arrays)`` of the model component ``"label_dense"``."""
        meta = {"format": FORMAT, "version": VERSION, "factor": self.factor,
                "labels": int(self.W.shape[1]), "dim": int(self.W.shape[2] // 3)}
        return meta, {"W": self.W.astype(np.float16)}

    @classmethod
    def from_component(cls, component, term, nlabels):
        """Inverse of :meth:`to_component` (``term``: the model's dense arc term); raises
        :class:`~depparse.errors.ModelError` for a component that does not fit the model."""
        check_component(component.meta, FORMAT, VERSION, "labeler dense term")
        if term is None:
            raise ModelError("the model's labeler has dense scores but the model has no dense "
                             "arc term to standardise the vectors: corrupt model file")
        try:
            d = cls(component.arrays["W"], component.meta["factor"], term)
        except (KeyError, ValueError, TypeError) as e:
            raise ModelError(f"the model's labeler dense term is corrupt ({e})") from None
        if d.W.shape[1] != nlabels:
            raise ModelError(f"the labeler dense term has {d.W.shape[1]} labels, the model "
                             f"{nlabels}: corrupt model file")
        return d
