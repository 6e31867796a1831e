"""Hashed features of head-bigram parts (the ``gsh`` model; :mod:`depparse.decode.head_bigrams`).

A head bigram ``(h1 -> m, h2 -> m+1)`` is scored by UPOS, XPOS, word and contextual-class
conjunctions of the two consecutive words and their heads (family ``HB`` of
:mod:`.templates`), each conjoined with the *shape* of the pair: the directions of the two
arcs, whether they share their head, and whether one word heads the other.  Those shapes are
what the arc and sibling parts cannot see together: a shared head on opposite sides, a chain
``h1 -> m -> m+1``, or a word attached to its right neighbour while the neighbour attaches far
away (Martins, Almeida and Smith 2013, Sec. 3, use head bigrams for the same reason).

As for the other families, one enumeration (:func:`hb_features`) serves scoring
(:func:`fill_bigrams`) and learning (:func:`chain_features`).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..decode.slices import put
from . import templates as T
from .hashing import CFINE, CSHIFT, dist_bucket, dot, emit

__all__ = ["chain_features", "fill_bigrams", "hb_features"]

MAX_HB_FEATS = 16  # (13 templates)


@nb.njit(cache=True)
def hb_features(h1, m, h2, form, upos, xpos, cluster, mask, on, buf):
    """Write the feature indices of the head bigram ``(h1 -> m, h2 -> m+1)`` into ``buf``;
    return their count."""
    m2 = m + 1
    shape = ((1 if h1 > m else 0) + (2 if h2 > m2 else 0) + (4 if h1 == h2 else 0)
             + (8 if h2 == m else 0) + (16 if h1 == m2 else 0))
    a = np.uint64(512 + shape)
    p1, mp, p2, mp2 = upos[h1], upos[m], upos[h2], upos[m2]
    k = 0
    k = emit(buf, k, on, T.HB_H1P_MP_H2P_M2P, (p1, mp, p2, mp2), a, mask)
    k = emit(buf, k, on, T.HB_MP_M2P, (mp, mp2), a, mask)
    k = emit(buf, k, on, T.HB_H1P_H2P, (p1, p2), a, mask)
    k = emit(buf, k, on, T.HB_H1P_MP_M2P, (p1, mp, mp2), a, mask)
    k = emit(buf, k, on, T.HB_H2P_MP_M2P, (p2, mp, mp2), a, mask)
    k = emit(buf, k, on, T.HB_H1P_H2P_MP_M2P_DIST, (p1, p2, mp, mp2, dist_bucket(abs(h1 - h2))),
            a, mask)
    k = emit(buf, k, on, T.HB_MW_M2P, (form[m], mp2), a, mask)
    k = emit(buf, k, on, T.HB_MP_M2W, (mp, form[m2]), a, mask)
    k = emit(buf, k, on, T.HB_MW_M2W, (form[m], form[m2]), a, mask)
    k = emit(buf, k, on, T.HB_H1X_MX_H2X_M2X, (xpos[h1], xpos[m], xpos[h2], xpos[m2]), a, mask)
    if cluster[0] != 0:
        mc, mc2 = cluster[m] & CFINE, cluster[m2] & CFINE
        k = emit(buf, k, on, T.HB_MC_M2C, (mc, mc2), a, mask)
        k = emit(buf, k, on, T.HB_H1P_MC_H2P_M2C, (p1, mc, p2, mc2), a, mask)
        k = emit(buf, k, on, T.HB_H1C_H2C, (cluster[h1] >> CSHIFT, cluster[h2] >> CSHIFT), a,
                mask)
    return k


@nb.njit(cache=True)
def fill_bigrams(form, lemma, upos, xpos, prefix, suffix, cluster, feat_ptr, feat_ids, w, mask,
                 on, hd, hd_off, hd_len, hb_off, hb):
    """Score every head bigram of the kept arcs into ``hb`` (layout of
    :mod:`depparse.decode.head_bigrams`).  Takes the encoded sentence's arrays like the other
    families' kernels (only the forms, tags and classes are used)."""
    N = form.shape[0]
    buf = np.empty(MAX_HB_FEATS, dtype=np.int64)
    for m in range(1, N - 1):
        K2 = hd_len[m + 1]
        o = hb_off[m]
        for i in range(hd_len[m]):
            h1 = hd[hd_off[m] + i]
            for j in range(K2):
                k = hb_features(h1, m, hd[hd_off[m + 1] + j], form, upos, xpos, cluster, mask,
                                on, buf)
                hb[o + i * K2 + j] = dot(w, buf, k)


@nb.njit(cache=True)
def chain_features(form, lemma, upos, xpos, prefix, suffix, cluster, feat_ptr, feat_ids, mask,
                   on, heads, only):
    """Feature indices (with repetitions) of the head bigrams ``(m, m+1)`` of the head
    sequence ``heads`` for which ``only[m]`` is set."""
    N = form.shape[0]
    buf = np.empty(MAX_HB_FEATS, dtype=np.int64)
    out = np.empty(MAX_HB_FEATS * max(N - 2, 1), dtype=np.int64)
    n = 0
    for m in range(1, N - 1):
        if only[m]:
            k = hb_features(heads[m], m, heads[m + 1], form, upos, xpos, cluster, mask, on, buf)
            put(out, n, buf, k)
            n += k
    return out[:n]
