"""Dense contextual arc scores: the encoder's word vectors enter the arc scores directly.

The contextual classes (:mod:`depparse.encoding.context`) give the sparse templates a discrete
summary of each word's MiniLM vector.  This module adds to the score of every kept arc
``h -> m`` a term computed from the vectors themselves, after Lei, Xin, Zhang, Barzilay and
Jaakkola (2014), *Low-Rank Tensors for Scoring Dependency Structures* (ACL), whose arc score
is ``sum_r [U phi_h]_r [V phi_m]_r [W phi_{h,m}]_r`` for word feature vectors ``phi_h``,
``phi_m`` and arc features ``phi_{h,m}``.  Here the word vectors are the encoder's and the
arc features are one bucket ``b`` of direction and distance (root arcs their own):

``dense(h, m) = a_b . z_h + c_b . z_m + sqrt(D) / s * d_b . (z_h * z_m)
+ sum_r (U z_h)_r (V z_m)_r W_{b, r}``

with ``z_i = s (x_i - mean) / (std sqrt(D))`` the standardised layer vector of word ``i``
(``D`` = 384 dimensions, norm about ``s``; ``z_0 = 0`` for the root).  The first three terms
are linear in their parameters (per-bucket head and modifier vectors and a diagonal
bilinear form), so the passive-aggressive step of :mod:`depparse.learn.perceptron` applies to
them exactly; the last is Lei et al.'s rank-``R`` tensor with a one-hot arc feature vector
(``R = 0``: none), learned by linearised steps (:mod:`depparse.learn.dense_training`).
``s`` sets the size of the dense features against the sparse ones' (each 1), and so how large
a share of every update they take.

With ``higher`` (``ModelConfig.dense_parts = "all"``) the second-order parts get dense scores
too, diagonal bilinear forms like ``d_b`` above: every pair of consecutive modifiers ``s, m``
on side ``e`` of a head adds ``sqrt(D) / s * e_e . (z_s * z_m)`` and every grandparent part
``g -> h -> m`` adds ``sqrt(D) / s * k_c . (z_g * z_m)``, ``c`` the pair of directions of
``g -> h`` and ``h -> m`` (the root as grandparent adds nothing: ``z_0 = 0``).  They are
added to the head automata's transition tables (:func:`add_dense_tables`), again leaving the
decoders untouched.

The parameters are one flat float64 vector ``theta`` (sections :data:`SECTIONS`, laid out by
:class:`DenseLayout`), so that the trainer's lazy averaging treats them like the sparse
weights.  The scores are *added* to the part table's arc scores (:func:`add_dense_scores`,
called by :func:`depparse.features.parts.build_parts`): the decoders see part scores exactly
as before.  A model stores them as its component ``"dense"`` (float16 arrays and JSON meta
with a format version; :meth:`DenseArcs.to_component`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from ..decode.part_table import table_width
from ..errors import ModelError, check_component

__all__ = ["BUCKETS", "DenseArcs", "DenseLayout", "FORMAT", "SECTIONS", "VERSION",
           "add_dense_scores", "add_dense_tables", "arc_bucket", "dense_arc_gradient",
           "dense_arc_sum", "dense_structure_gradient", "model_dense_term"]

FORMAT = "depparse-dense"
VERSION = 1  # the arc term alone
VERSION_HIGHER = 2  # with the sibling and grandparent sections
NDIST = 5  # distance buckets per direction: 1, 2, 3-4, 5-8, 9+
BUCKETS = 2 * NDIST + 1  # and one for the arcs of the root
SECTIONS = ("head", "mod", "prod", "U", "V", "W", "sib", "grand")
SIB_BUCKETS = 2  # sides of the head
GRAND_BUCKETS = 4  # direction of g -> h, times direction of h -> m


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


@nb.njit(cache=True)
def _projections(z, theta, R, ou, ov):
    """``(U z, V z)``: (N, R) each."""
    N, D = z.shape
    P = np.zeros((N, R))
    Q = np.zeros((N, R))
    for i in range(N):
        for r in range(R):
            p = 0.0
            q = 0.0
            for k in range(D):
                p += theta[ou + r * D + k] * z[i, k]
                q += theta[ov + r * D + k] * z[i, k]
            P[i, r] = p
            Q[i, r] = q
    return P, Q


@nb.njit(cache=True, inline="always")
def _arc_score(z, theta, B, R, pf, P, Q, h, m):
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
    ow = 3 * B * D + 2 * R * D + b * R
    for r in range(R):
        s += P[h, r] * Q[m, r] * theta[ow + r]
    return s


@nb.njit(cache=True)
def add_dense_scores(z, theta, B, R, pf, keep, arc):
    """``arc[h, m] += dense(h, m)`` for every kept arc (see the module docstring).

    Parameters
    ----------
    z : (N, D) float64
        Standardised word vectors, row 0 (the root) zero.
    theta : float64
        The parameters (layout :class:`DenseLayout`).
    B, R : int
        Buckets and rank.
    pf : float
        Factor of the diagonal term, ``sqrt(D) / s``.
    keep : (N, N) bool
    arc : (N, N) float64
    """
    N, D = z.shape
    ou = 3 * B * D
    P, Q = _projections(z, theta, R, ou, ou + R * D)
    for h in range(N):
        for m in range(1, N):
            if m != h and keep[h, m]:
                arc[h, m] += _arc_score(z, theta, B, R, pf, P, Q, h, m)


@nb.njit(cache=True)
def dense_arc_sum(z, theta, B, R, pf, heads_of, mods_of, sign):
    """``sum_j sign[j] * dense(heads_of[j], mods_of[j])``."""
    D = z.shape[1]
    ou = 3 * B * D
    P, Q = _projections(z, theta, R, ou, ou + R * D)
    t = 0.0
    for j in range(heads_of.shape[0]):
        t += sign[j] * _arc_score(z, theta, B, R, pf, P, Q, heads_of[j], mods_of[j])
    return t


@nb.njit(cache=True)
def dense_arc_gradient(z, theta, B, R, pf, heads_of, mods_of, sign, g):
    """``g += sum_j sign[j] * d dense(heads_of[j], mods_of[j]) / d theta`` (at ``theta``)."""
    D = z.shape[1]
    ou = 3 * B * D
    ov = ou + R * D
    ow = ov + R * D
    P, Q = _projections(z, theta, R, ou, ov)
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
        for r in range(R):
            wr = theta[ow + b * R + r]
            g[ow + b * R + r] += sg * P[h, r] * Q[m, r]
            if wr != 0.0:
                a = sg * wr * Q[m, r]
                c = sg * wr * P[h, r]
                for k in range(D):
                    g[ou + r * D + k] += a * z[h, k]
                    g[ov + r * D + k] += c * z[m, k]


@nb.njit(cache=True, inline="always")
def _pair(z, theta, o, a, b):
    """``theta[o:o+D] . (z_a * z_b)``."""
    s = 0.0
    for k in range(z.shape[1]):
        s += theta[o + k] * z[a, k] * z[b, k]
    return s


@nb.njit(cache=True, inline="always")
def _grand_bucket(g, h, d):
    """Bucket of the grandparent part ``g -> h -> m`` with ``m`` on side ``d`` of ``h``."""
    return 2 * (1 if g < h else 0) + d


@nb.njit(cache=True)
def add_dense_tables(z, theta, osib, ogr, pf, order, cand, cand_off, cand_len, gp, gp_off,
                     gp_len, tab_off, tab):
    """Add the sibling and (``order == 2``) grandparent dense scores (module docstring) to the
    head automata's transition tables (layout: :mod:`depparse.decode.part_table`); ``osib``,
    ``ogr``: offsets of those sections in ``theta``."""
    N, D = z.shape
    Wm = table_width(cand_len)
    S = np.zeros((Wm, Wm))
    G = np.zeros(Wm)
    for h in range(N):
        for d in range(2):
            L = cand_len[h, d]
            if L == 0 or (h == 0 and d == 0):
                continue
            c0 = cand_off[h, d]
            W1 = L + 1
            for p in range(1, L):  # after candidate p - 1, take candidate q
                for q in range(p, L):
                    S[p, q] = pf * _pair(z, theta, osib + d * D, cand[c0 + p - 1], cand[c0 + q])
            for gi in range(gp_len[h]):
                g = gp[gp_off[h] + gi]
                o = tab_off[gp_off[h] + gi, d]
                hasg = order == 2 and g > 0
                if hasg:
                    og = ogr + _grand_bucket(g, h, d) * D
                    for q in range(L):
                        G[q] = pf * _pair(z, theta, og, g, cand[c0 + q])
                for p in range(L):
                    for q in range(p, L):
                        v = S[p, q] if p > 0 else 0.0
                        if hasg:
                            v += G[q]
                        tab[o + p * W1 + q] += v


@nb.njit(cache=True)
def dense_structure_gradient(z, theta, osib, ogr, pf, order, mods, gpar, only, sign, g):
    """``g += sign * d higher(y) / d theta`` for the sibling and grandparent sections, where
    ``higher(y)`` is the sum of those dense scores over the structure ``y`` in Z (``mods[h, m]``,
    ``gpar[h]``, the automata ``only[h]``; as
    :func:`depparse.features.parts.structure_features`).  Returns ``sign * higher(y)``."""
    N, D = z.shape
    t = 0.0
    for h in range(N):
        if not only[h]:
            continue
        gg = gpar[h] if (order == 2 and h > 0) else -1
        for d in range(2):
            if d == 0:
                start, stop, step = h - 1, 0, -1
            else:
                start, stop, step = h + 1, N, 1
            s = -1
            for m in range(start, stop, step):
                if not mods[h, m]:
                    continue
                if s >= 0:
                    o = osib + d * D
                    for k in range(D):
                        f = sign * pf * z[s, k] * z[m, k]
                        g[o + k] += f
                        t += theta[o + k] * f
                if gg > 0:
                    o = ogr + _grand_bucket(gg, h, d) * D
                    for k in range(D):
                        f = sign * pf * z[gg, k] * z[m, k]
                        g[o + k] += f
                        t += theta[o + k] * f
                s = m
    return t


@dataclass(frozen=True)
class DenseLayout:
    """Where each section of ``theta`` lies: ``head``, ``mod``, ``prod`` (B, D) each, ``U``,
    ``V`` (R, D) each, ``W`` (B, R); with ``higher``, ``sib`` (2, D) and ``grand`` (4, D)."""

    dim: int
    rank: int
    buckets: int = BUCKETS
    higher: bool = False

    def shapes(self):
        B, D, R = self.buckets, self.dim, self.rank
        out = {"head": (B, D), "mod": (B, D), "prod": (B, D), "U": (R, D), "V": (R, D),
               "W": (B, R)}
        if self.higher:
            out.update(sib=(SIB_BUCKETS, D), grand=(GRAND_BUCKETS, D))
        return out

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
                         self.layout.buckets, self.layout.rank, self.pf, keep, arc)

    def add_tables(self, enc, parts, order) -> None:
        """Add the sibling and grandparent dense scores to the transition tables of a
        :class:`~depparse.decode.part_table.PartTable` (models with ``layout.higher``)."""
        if not self.layout.higher or order == 0:
            return
        add_dense_tables(self.sentence(enc), self.theta, self.layout.offset("sib"),
                         self.layout.offset("grand"), self.pf, order, parts.cand,
                         parts.cand_off, parts.cand_len, parts.gp, parts.gp_off, parts.gp_len,
                         parts.tab_off, parts.tab)

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
        meta = {"format": FORMAT, "version": VERSION_HIGHER if self.layout.higher else VERSION,
                "layer": self.layer, "dim": self.layout.dim, "rank": self.layout.rank,
                "buckets": self.layout.buckets, "scale": self.scale}
        arrays = {k: v.astype(np.float16) for k, v in self.layout.split(self.theta).items()}
        arrays["mean"] = self.mean.astype(np.float16)
        arrays["std"] = self.std.astype(np.float16)
        return meta, arrays

    @classmethod
    def from_component(cls, meta, arrays) -> DenseArcs:
        """Inverse of :meth:`to_component`; raises :class:`~depparse.errors.ModelError` for
        a component that is not a dense arc term of this format version."""
        higher = isinstance(meta, dict) and meta.get("version") == VERSION_HIGHER
        check_component(meta, FORMAT, VERSION_HIGHER if higher else VERSION, "dense arc term")
        try:
            layout = DenseLayout(int(meta["dim"]), int(meta["rank"]), int(meta["buckets"]),
                                 higher)
            if layout.buckets != BUCKETS:
                raise ValueError(f"{layout.buckets} buckets, this depparse has {BUCKETS}")
            extra = set(arrays) - set(layout.shapes()) - {"mean", "std"}
            if extra:
                raise ValueError(f"sections {sorted(extra)} that format version "
                                 f"{meta['version']} does not have")
            return cls(meta["layer"], arrays["mean"], arrays["std"], meta["scale"], layout,
                       layout.join(arrays))
        except (KeyError, ValueError, TypeError) as e:
            raise ModelError(f"the model's dense arc term is corrupt ({e})") from None


def model_dense_term(component, dense_layer, vector_layer, dense_parts="arc") -> DenseArcs | None:
    """The dense arc term of a model: its component ``"dense"`` (a ``Component`` or None),
    checked against the model's ``ModelConfig.dense_layer`` and ``dense_parts`` and its
    vocabularies' ``vector_layer``; raises :class:`~depparse.errors.ModelError` when they
    disagree."""
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
    if d.layout.higher != (dense_parts == "all"):
        raise ModelError(f"the model's configuration says dense_parts={dense_parts!r} but its "
                         f"dense term {'has' if d.layout.higher else 'lacks'} the sibling and "
                         "grandparent sections: corrupt model file")
    return d
