"""Dense contextual arc scores: the encoder's word vectors enter the arc scores directly.

The contextual classes (:mod:`depparse.encoding.context`) give the sparse templates a discrete
summary of each word's MiniLM vector.  This module adds to the score of every kept arc
``h -> m`` a term computed from the vectors themselves, after Lei, Xin, Zhang, Barzilay and
Jaakkola (2014), *Low-Rank Tensors for Scoring Dependency Structures* (ACL), with the word
vectors the encoder's and the arc features one bucket ``b`` of direction and distance (root
arcs their own):

``dense(h, m) = a_b . z_h + c_b . z_m + sqrt(D) / s * d_b . (z_h * z_m)``

with ``z_i = s (x_i - mean) / (std sqrt(D))`` the standardised layer vector of word ``i``
(``D`` = 384 dimensions, norm about ``s``; ``z_0 = 0`` for the root).  The terms are linear in
their parameters (per-bucket head and modifier vectors and a diagonal bilinear form), so the
passive-aggressive step of :mod:`depparse.learn.perceptron` applies to them exactly.  ``s``
sets the size of the dense features against the sparse ones' (each 1), and so how large a
share of every update they take.  (Lei et al.'s low-rank tensor ``sum_r (U z_h)_r (V z_m)_r
W_{b, r}`` and dense scores for the sibling and grandparent parts were tried and retired,
measured without a gain: ``benchmarks/experiments/patches/README.md``.)

The parameters are one flat float64 vector ``theta`` (sections :data:`SECTIONS`, laid out by
:class:`DenseLayout`), so that the trainer's lazy averaging treats them like the sparse
weights.  The scores are *added* to the part table's arc scores (:func:`add_dense_scores`,
called by :class:`depparse.features.scoring.DenseScorer`): the decoders see part scores exactly
as before.  A model stores them as its component ``"dense"`` (float16 arrays and JSON meta
with a format version; :meth:`DenseArcs.to_component`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from ..errors import PATCHES, ModelError, check_component

__all__ = ["BUCKETS", "DenseArcs", "DenseLayout", "FORMAT", "SECTIONS", "VERSION",
           "add_dense_scores", "arc_bucket", "dense_arc_gradient", "dense_arc_sum",
           "model_dense_term"]

FORMAT = "depparse-dense"
VERSION = 1  # the arc term alone
VERSION_HIGHER = 2  # with the sibling and grandparent sections (retired: refused on load)
NDIST = 5  # distance buckets per direction: 1, 2, 3-4, 5-8, 9+
BUCKETS = 2 * NDIST + 1  # and one for the arcs of the root
SECTIONS = ("head", "mod", "prod")
#: The retired tensor's sections, which files of format version 1 hold empty (rank 0)
TENSOR_SECTIONS = ("U", "V", "W")
#: Where the retired parts are (``benchmarks/experiments/patches/``)
PATCH = "dense-tensor-and-higher-parts.patch"


@nb.njit(cache=True, inline="always")
def arc_bucket(h, m):
    """Bucket of arc ``h -> m``: ``direction * 5 + distance bucket`` (1, 2, 3-4, 5-8, 9+),
    or 10 for the root's arcs."""
    if h == 0:
        return 2 * NDIST
    a = abs(m - h)
    if a == 1:
        db = 0
    elif a == 2:
        db = 1
    elif a <= 4:
        db = 2
    elif a <= 8:
        db = 3
    else:
        db = 4
    return (NDIST if m > h else 0) + db


@nb.njit(cache=True, inline="always")
def _arc_score(z, theta, B, pf, h, m):
    D = z.shape[1]
    b = arc_bucket(h, m)
    oh = b * D
    om = (B + b) * D
    op = (2 * B + b) * D
    s = 0.0
    for k in range(D):
        zh = z[h, k]
        zm = z[m, k]
        s += theta[oh + k] * zh + theta[om + k] * zm + pf * theta[op + k] * zh * zm
    return s


@nb.njit(cache=True)
def add_dense_scores(z, theta, B, pf, keep, arc):
    """``arc[h, m] += dense(h, m)`` for every kept arc (see the module docstring).

    Parameters
    ----------
    z : (N, D) float64
        Standardised word vectors, row 0 (the root) zero.
    theta : float64
        The parameters (layout :class:`DenseLayout`).
    B : int
        Buckets.
    pf : float
        Factor of the diagonal term, ``sqrt(D) / s``.
    keep : (N, N) bool
    arc : (N, N) float64
    """
    N = z.shape[0]
    for h in range(N):
        for m in range(1, N):
            if m != h and keep[h, m]:
                arc[h, m] += _arc_score(z, theta, B, pf, h, m)


@nb.njit(cache=True)
def dense_arc_sum(z, theta, B, pf, heads_of, mods_of, sign):
    """``sum_j sign[j] * dense(heads_of[j], mods_of[j])``."""
    t = 0.0
    for j in range(heads_of.shape[0]):
        t += sign[j] * _arc_score(z, theta, B, pf, heads_of[j], mods_of[j])
    return t


@nb.njit(cache=True)
def dense_arc_gradient(z, B, pf, heads_of, mods_of, sign, g):
    """``g += sum_j sign[j] * d dense(heads_of[j], mods_of[j]) / d theta`` (the term is
    linear: its features)."""
    D = z.shape[1]
    for j in range(heads_of.shape[0]):
        h = heads_of[j]
        m = mods_of[j]
        sg = sign[j]
        b = arc_bucket(h, m)
        oh = b * D
        om = (B + b) * D
        op = (2 * B + b) * D
        for k in range(D):
            zh = z[h, k]
            zm = z[m, k]
            g[oh + k] += sg * zh
            g[om + k] += sg * zm
            g[op + k] += sg * pf * zh * zm


@dataclass(frozen=True)
class DenseLayout:
    """Where each section of ``theta`` lies: ``head``, ``mod``, ``prod``, (B, D) each."""

    dim: int
    buckets: int = BUCKETS

    def shapes(self):
        B, D = self.buckets, self.dim
        return {"head": (B, D), "mod": (B, D), "prod": (B, D)}

    def offset(self, name) -> int:
        """Start of section ``name`` in ``theta``."""
        o = 0
        for k, shape in self.shapes().items():
            if k == name:
                return o
            o += int(np.prod(shape))
        raise KeyError(name)

    @property
    def size(self) -> int:
        return sum(int(np.prod(s)) for s in self.shapes().values())

    def split(self, theta) -> dict:
        """Views of ``theta``'s sections, by name."""
        out, o = {}, 0
        for name, shape in self.shapes().items():
            n = int(np.prod(shape))
            out[name] = theta[o:o + n].reshape(shape)
            o += n
        return out

    def join(self, arrays) -> np.ndarray:
        """The flat float64 ``theta`` of named sections (inverse of :meth:`split`)."""
        parts = []
        for name, shape in self.shapes().items():
            a = np.asarray(arrays[name], dtype=np.float64)
            if a.shape != shape:
                raise ValueError(f"dense section {name}: shape {a.shape}, expected {shape}")
            parts.append(a.ravel())
        return np.concatenate(parts)


class DenseArcs:
    """The dense arc term of one model: layer, normalisation, parameters (module docstring).

    Parameters
    ----------
    layer : int
        MiniLM layer of the word vectors (``Encoded.vectors``).
    mean, std : (D,) arrays
        Standardisation of the vectors (rounded to float16, as the model file keeps them).
    scale : float
        Norm ``s`` of the standardised vectors.
    layout : DenseLayout
    theta : float64 array of ``layout.size``
        Used as given (not copied): a trainer's live parameters.
    """

    def __init__(self, layer, mean, std, scale, layout: DenseLayout, theta):
        self.layer = int(layer)
        self.mean = np.asarray(mean, dtype=np.float16).astype(np.float64)
        std = np.maximum(np.asarray(std, dtype=np.float64), 1e-3)  # a dimension never constant
        self.std = std.astype(np.float16).astype(np.float64)
        self.scale = float(scale)
        self.layout = layout
        self.theta = theta
        D = layout.dim
        if self.mean.shape != (D,) or self.std.shape != (D,) or theta.shape != (layout.size,):
            raise ValueError("dense arc parameters do not fit their layout")
        self.pf = float(np.sqrt(D) / self.scale)
        self._mul = self.scale / (self.std * np.sqrt(D))

    def with_theta(self, theta) -> DenseArcs:
        """The same term with other parameters (e.g. the averaged ones)."""
        return DenseArcs(self.layer, self.mean, self.std, self.scale, self.layout, theta)

    def standardise(self, vectors) -> np.ndarray:
        """(n + 1, D) float64: a zero row for the root, then ``z_i`` of each word."""
        v = np.asarray(vectors, dtype=np.float64)
        if v.ndim != 2 or v.shape[1] != self.layout.dim:
            raise ValueError(f"word vectors of shape {v.shape}, expected (n, {self.layout.dim})")
        z = np.zeros((v.shape[0] + 1, v.shape[1]))
        z[1:] = (v - self.mean) * self._mul
        return z

    def sentence(self, enc) -> np.ndarray:
        """:meth:`standardise` of an encoded sentence's vectors (``Encoded.vectors``)."""
        if enc.vectors is None:
            raise ValueError(f"this model scores arcs with layer-{self.layer} encoder vectors, "
                             "but the encoded sentence has none (encode it with the model's "
                             "vocabularies)")
        return self.standardise(enc.vectors)

    def add_scores(self, enc, keep, arc, z=None) -> None:
        """``arc[h, m] += dense(h, m)`` for the kept arcs of an encoded sentence (``z``: its
        :meth:`sentence`, where the caller has it already)."""
        add_dense_scores(self.sentence(enc) if z is None else z, self.theta,
                         self.layout.buckets, self.pf, keep, arc)

    def scores(self, enc, keep) -> np.ndarray:
        """(N, N) dense scores of the kept arcs (0 elsewhere)."""
        N = enc.n + 1
        arc = np.zeros((N, N))
        self.add_scores(enc, keep, arc)
        return arc

    # -- storage ---------------------------------------------------------------------------
    def to_component(self):
        """``(meta, arrays)`` of the model component ``"dense"``: float16 sections and the
        standardisation."""
        meta = {"format": FORMAT, "version": VERSION, "layer": self.layer,
                "dim": self.layout.dim, "rank": 0, "buckets": self.layout.buckets,
                "scale": self.scale}
        arrays = {k: v.astype(np.float16) for k, v in self.layout.split(self.theta).items()}
        arrays["mean"] = self.mean.astype(np.float16)
        arrays["std"] = self.std.astype(np.float16)
        return meta, arrays

    @classmethod
    def from_component(cls, meta, arrays) -> DenseArcs:
        """Inverse of :meth:`to_component`; raises :class:`~depparse.errors.ModelError` for
        a component that is not a dense arc term of this format version, or one that holds a
        retired part (the low-rank tensor, rank > 0, or the sibling and grandparent sections,
        format version 2), naming the patch that brings it back."""
        if isinstance(meta, dict) and meta.get("format") == FORMAT and (
                meta.get("version") == VERSION_HIGHER or meta.get("rank", 0) != 0):
            raise ModelError("the model's dense arc term has a part that is retired from "
                             "depparse (the low-rank tensor or the sibling and grandparent "
                             f"sections): {PATCHES}/{PATCH} brings it back")
        check_component(meta, FORMAT, VERSION, "dense arc term")
        try:
            layout = DenseLayout(int(meta["dim"]), int(meta["buckets"]))
            if layout.buckets != BUCKETS:
                raise ValueError(f"{layout.buckets} buckets, this depparse has {BUCKETS}")
            # (files written before the tensor was retired hold its sections empty)
            arrays = {k: v for k, v in arrays.items()
                      if not (k in TENSOR_SECTIONS and np.size(v) == 0)}
            extra = set(arrays) - set(layout.shapes()) - {"mean", "std"}
            if extra:
                raise ValueError(f"sections {sorted(extra)} that format version "
                                 f"{meta['version']} does not have")
            return cls(meta["layer"], arrays["mean"], arrays["std"], meta["scale"], layout,
                       layout.join(arrays))
        except (KeyError, ValueError, TypeError) as e:
            raise ModelError(f"the model's dense arc term is corrupt ({e})") from None


def model_dense_term(component, dense_layer, vector_layer) -> DenseArcs | None:
    """The dense arc term of a model: its component ``"dense"`` (a ``Component`` or None),
    checked against the model's ``ModelConfig.dense_layer`` and its vocabularies'
    ``vector_layer``; raises :class:`~depparse.errors.ModelError` when they disagree."""
    if component is None:
        if dense_layer:
            raise ModelError(f"the model was trained with dense arc scores (layer "
                             f"{dense_layer}) but has no 'dense' component: corrupt model file")
        return None
    d = DenseArcs.from_component(component.meta, component.arrays)
    if d.layer != dense_layer or d.layer != vector_layer:
        raise ModelError(f"the model's dense arc term reads layer {d.layer}, its configuration "
                         f"says {dense_layer} and its vocabularies keep layer {vector_layer}: "
                         "corrupt model file")
    return d
