"""Tag-dependent arc scores of joint tagging and parsing (:mod:`depparse.decode.joint`).

The parser's arc features (:func:`~depparse.features.parts.arc_features`) read the UPOS of the
arc's two words, alone and in conjunctions (McDonald et al. 2005), and of their neighbours.
For joint decoding, each kept arc ``h -> m`` is scored once more for every pair of candidate
tags ``(a, b)`` of its head and modifier: the arc's features with ``upos[h] = a`` and
``upos[m] = b`` (every other word keeps the tagger's best tag, and so do the sibling,
grandparent and grand-sibling features), minus its score with the best tags.  The difference
``D(h, m, a, b)`` is the table of :class:`~depparse.decode.joint.TagTable` (``doff``,
``dtab``), zero at the best tags.  The same weights and the same enumeration as the part
table's arc scores, so a table entry is ``w . phi`` of the arc under those tags (a test holds
them equal).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .hashing import dot
from .parts import ALL_TEMPLATES, MAX_FEATS, Weights, WordArrays, arc_features

__all__ = ["tag_arc_layout", "tag_arc_scores", "tag_arc_table"]


@nb.njit(cache=True)
def tag_arc_layout(keep, ptr):
    """``doff[h, m]`` (``-1`` off the kept arcs) and the size of ``dtab``: the arc ``h -> m``
    holds a ``(K_h, K_m)`` matrix, ``K_i = ptr[i + 1] - ptr[i]``, ``K_0 = 1``."""
    N = keep.shape[0]
    doff = np.full((N, N), -1, dtype=np.int64)
    size = 0
    for h in range(N):
        kh = 1 if h == 0 else ptr[h + 1] - ptr[h]
        for m in range(1, N):
            if m != h and keep[h, m]:
                doff[h, m] = size
                size += kh * (ptr[m + 1] - ptr[m])
    return doff, size


@nb.njit(cache=True)
def tag_arc_scores(words, weights, keep, ptr, cand_upos, doff, dtab):
    """Fill ``dtab``: ``D(h, m, a, b) = w . phi(h, m | upos[h] = a, upos[m] = b) - w .
    phi(h, m)`` for every kept arc and candidate pair (``cand_upos``: the parser's UPOS id of
    every candidate; ``words.upos`` the best tags, restored on return)."""
    upos = words.upos
    N = upos.shape[0]
    buf = np.empty(MAX_FEATS, dtype=np.int64)
    for h in range(N):
        kh = 1 if h == 0 else ptr[h + 1] - ptr[h]
        for m in range(1, N):
            if m == h or not keep[h, m]:
                continue
            km = ptr[m + 1] - ptr[m]
            o = doff[h, m]
            if kh == 1 and km == 1 and (h == 0 or cand_upos[ptr[h]] == upos[h]) and \
                    cand_upos[ptr[m]] == upos[m]:
                dtab[o] = 0.0
                continue
            k = arc_features(h, m, words.form, words.lemma, upos, words.xpos, words.prefix,
                             words.suffix, words.cluster, words.feat_ptr, words.feat_ids,
                             weights.mask, weights.on, buf)
            base = dot(weights.w, buf, k)
            uh = upos[h]
            um = upos[m]
            for a in range(kh):
                if h > 0:
                    upos[h] = cand_upos[ptr[h] + a]
                for b in range(km):
                    upos[m] = cand_upos[ptr[m] + b]
                    k = arc_features(h, m, words.form, words.lemma, upos, words.xpos,
                                     words.prefix, words.suffix, words.cluster, words.feat_ptr,
                                     words.feat_ids, weights.mask, weights.on, buf)
                    dtab[o + a * km + b] = dot(weights.w, buf, k) - base
            upos[h] = uh
            upos[m] = um


def tag_arc_table(enc, keep, w, bits, ptr, cand_upos, on=None):
    """``(doff, dtab)`` of an encoded sentence (its UPOS the tagger's best tags) for the
    candidates ``ptr`` / ``cand_upos`` (parser UPOS ids), under weights ``w`` (``2**bits``)
    and template switches ``on`` (default: all)."""
    ptr = np.ascontiguousarray(ptr, dtype=np.int64)
    cand_upos = np.ascontiguousarray(cand_upos, dtype=np.int64)
    doff, size = tag_arc_layout(keep, ptr)
    dtab = np.zeros(size)
    words = WordArrays(*enc.arrays())
    words = words._replace(upos=words.upos.copy())
    tag_arc_scores(words, Weights(w, np.uint64((1 << bits) - 1),
                                  ALL_TEMPLATES if on is None else on),
                   keep, ptr, cand_upos, doff, dtab)
    return doff, dtab
