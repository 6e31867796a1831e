"""Features of the dependency labeler (Numba): arc emissions and label bigrams.

Given a tree, the children ``c_1 < ... < c_k`` of every head ``h`` are labelled jointly:
the labels maximise ``sum_i w . phi(h, c_i, l_i) + sum_i w . psi(l_{i-1}, l_i)``, found by
Viterbi over the label chain (McDonald et al. 2006 label the children of a head as a
sequence in the same way), so that, e.g., the first of two objects of a verb becomes
``iobj`` and a clause gets at most one subject.  The arc features ``phi(h, m, l)`` conjoin
``l`` with atoms of the head and the modifier (forms, lemmas, UPOS, XPOS, morphological
features, suffixes), direction and distance, the surrounding UPOS, the grandparent, the
nearest siblings of ``m`` on each side, and the UPOS and forms of ``m``'s own children (a
``case`` child tells ``obl`` from ``obj``) — information the first-order label models of
MSTParser lack, available here because the whole tree is known.  ``psi`` conjoins the two
labels with the head's UPOS and with whether the two children lie on the same side of it.

The emission features of an arc are hashed once per tree without the label
(:func:`sentence_bases`) and conjoined with each label when scored (:func:`emissions`); the
bigram scores of a model are tabulated once per head UPOS (:func:`transition_tables`).  The
Viterbi over the chain is :func:`depparse.decode.label_chain.label_chain`, the labeler of a model
:class:`depparse.inference.labeling.Labeler`, and its training
:func:`depparse.learn.labeler.train_labeler`.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..encoding.ids import END, START
from . import templates as T
from .hashing import CFINE, CSHIFT, ctx, dist_bucket, fold, mix, start, template

__all__ = ["LABELER_KIND", "MAX_BASE", "N_SPECIAL", "base_features", "emissions", "head_emissions",
           "fill_transitions", "sentence_bases", "trans_features", "transition_tables",
           "tree_context"]

# What the labeler's weights mean.  "seq2": the children of each head are labelled jointly
# (first-order label chain), label bigrams with their own template ids; "seq" (depparse 0.1,
# second model): the same, but the bigram templates shared ids 140/141 with two emission
# templates (:mod:`depparse.features.templates`); "arc" (first model): every arc on its own
LABELER_KIND = "seq2"
MAX_BASE = 256
N_SPECIAL = 6  # label ids below this are the vocabulary's reserved ids


@nb.njit(cache=True)
def tree_context(heads, upos):
    """Per word: nearest left/right sibling, left/right child counts, child-UPOS bitmask."""
    N = heads.shape[0]
    lsib = np.full(N, -1, dtype=np.int64)
    rsib = np.full(N, -1, dtype=np.int64)
    nl = np.zeros(N, dtype=np.int64)
    nr = np.zeros(N, dtype=np.int64)
    cmask = np.zeros(N, dtype=np.uint64)
    one = np.uint64(1)
    for m in range(1, N):
        h = heads[m]
        if m < h:
            nl[h] += 1
        else:
            nr[h] += 1
        cmask[h] |= one << np.uint64(upos[m] & 63)
        # nearest sibling on each side of m (same head)
        for s in range(m - 1, 0, -1):
            if heads[s] == h:
                lsib[m] = s
                break
        for s in range(m + 1, N):
            if heads[s] == h:
                rsib[m] = s
                break
    return lsib, rsib, nl, nr, cmask


@nb.njit(cache=True)
def base_features(h, m, heads, lsib, rsib, nl, nr, cmask, form, lemma, upos, xpos, suffix,
                   cluster, feat_ptr, feat_ids, buf):
    """Label-independent feature hashes of arc ``h -> m`` (conjoined with the label later)."""
    N = heads.shape[0]
    d = 1 if m > h else 0
    db = np.uint64(d * 16 + dist_bucket(abs(m - h)))
    hw = form[h]
    hp = upos[h]
    mw = form[m]
    mp = upos[m]
    g = heads[h] if h > 0 else -1
    gp = END if g < 0 else upos[g]
    k = 0
    buf[k] = start(T.LABEL_DIRDIST, db)
    k += 1
    buf[k] = fold(start(T.LABEL_MW_DIR, mw), d)
    k += 1
    buf[k] = fold(start(T.LABEL_MP_DIR, mp), d)
    k += 1
    buf[k] = fold(start(T.LABEL_ML_DIR, lemma[m]), d)
    k += 1
    buf[k] = fold(start(T.LABEL_MX_DIR, xpos[m]), d)
    k += 1
    buf[k] = fold(fold(start(T.LABEL_HP_MP_DIRDIST, hp), mp), db)
    k += 1
    buf[k] = fold(fold(start(T.LABEL_HW_MP_DIR, hw), mp), d)
    k += 1
    buf[k] = fold(fold(start(T.LABEL_HP_MW_DIR, hp), mw), d)
    k += 1
    buf[k] = fold(fold(start(T.LABEL_HL_ML_DIR, lemma[h]), lemma[m]), d)
    k += 1
    buf[k] = fold(fold(start(T.LABEL_HX_MX_DIR, xpos[h]), xpos[m]), d)
    k += 1
    buf[k] = fold(start(T.LABEL_HW_DIR, hw), d)
    k += 1
    buf[k] = fold(start(T.LABEL_HP_DIR, hp), d)
    k += 1
    buf[k] = fold(fold(start(T.LABEL_MSUF_MP_DIR, suffix[m]), mp), d)
    k += 1
    buf[k] = fold(fold(fold(start(T.LABEL_GP_HP_MP_DIR, gp), hp), mp), d)
    k += 1
    buf[k] = fold(fold(fold(start(T.LABEL_MPL_MP_MPR_DIR, ctx(upos, m - 1)), mp), ctx(upos,
                                                                                      m + 1)), d)
    k += 1
    buf[k] = fold(fold(fold(start(T.LABEL_HP_MPL_MP_DIR, hp), ctx(upos, m - 1)), mp), d)
    k += 1
    buf[k] = fold(fold(fold(start(T.LABEL_HP_MP_MPR_DIR, hp), mp), ctx(upos, m + 1)), d)
    k += 1
    ls = lsib[m]
    rs = rsib[m]
    buf[k] = fold(fold(fold(start(T.LABEL_HP_LSP_MP_DIR, hp), START if ls < 0 else upos[ls]), mp),
                 d)
    k += 1
    buf[k] = fold(fold(fold(start(T.LABEL_HP_MP_RSP_DIR, hp), mp), END if rs < 0 else upos[rs]), d)
    k += 1
    buf[k] = fold(fold(start(T.LABEL_MP_MNL_MNR, mp), min(nl[m], 3)), min(nr[m], 3))
    k += 1
    buf[k] = fold(fold(start(T.LABEL_HP_HNL_HNR, hp), min(nl[h], 4)), min(nr[h], 4))
    k += 1
    buf[k] = fold(fold(start(T.LABEL_HP_MP_HROOT, hp), mp), h == 0)
    k += 1
    # UPOS of m's children, each once
    cm = cmask[m]
    for b in range(64):
        if cm & (np.uint64(1) << np.uint64(b)):
            buf[k] = fold(fold(start(T.LABEL_MP_CHILD_UPOS_DIR, mp), b), d)
            k += 1
            buf[k] = fold(fold(fold(start(T.LABEL_HP_MP_CHILD_UPOS_DIR, hp), mp), b), d)
            k += 1
    # the forms of m's closest left children matter for case marking (e.g. "of", "to")
    for c in range(m - 1, max(0, m - 4), -1):
        if heads[c] == m:
            buf[k] = fold(fold(start(T.LABEL_LCHILDW_MP_HP, form[c]), mp), hp)
            k += 1
    for c in range(m + 1, min(N, m + 4)):
        if heads[c] == m:
            buf[k] = fold(fold(start(T.LABEL_RCHILDW_MP_HP, form[c]), mp), hp)
            k += 1
    for j in range(feat_ptr[m], min(feat_ptr[m + 1], feat_ptr[m] + 16)):
        buf[k] = fold(fold(start(T.LABEL_MFEAT_MP_DIR, feat_ids[j]), mp), d)
        k += 1
    for j in range(feat_ptr[h], min(feat_ptr[h + 1], feat_ptr[h] + 8)):
        buf[k] = fold(fold(start(T.LABEL_HFEAT_MP_DIR, feat_ids[j]), mp), d)
        k += 1
    buf[k] = fold(fold(start(T.LABEL_HW_MW_DIR, hw), mw), d)
    k += 1
    buf[k] = fold(fold(start(T.LABEL_MW_HP_DIRDIST, mw), hp), db)
    k += 1
    buf[k] = fold(fold(fold(start(T.LABEL_HL_ML_MP_DIR, lemma[h]), lemma[m]), mp), d)
    k += 1
    buf[k] = fold(fold(start(T.LABEL_HL_MP_DIR, lemma[h]), mp), d)
    k += 1
    lsp = START if ls < 0 else upos[ls]
    rsp = END if rs < 0 else upos[rs]
    buf[k] = fold(fold(fold(fold(start(T.LABEL_HP_LSP_MP_RSP_DIR, hp), lsp), mp), rsp), d)
    k += 1
    rs2 = END if rs < 0 or rsib[rs] < 0 else upos[rsib[rs]]
    buf[k] = fold(fold(fold(fold(start(T.LABEL_HP_MP_RSP_RSP2_DIR, hp), mp), rsp), rs2), d)
    k += 1
    # the closest child of m on its left (a marker: "that", "if", "to", "of")
    for c in range(m - 1, 0, -1):
        if heads[c] == m:
            buf[k] = fold(fold(fold(start(T.LABEL_HL_MP_NEARESTLCHILDW_DIR, lemma[h]), mp),
                             form[c]), d)
            k += 1
            break
    # contextual word classes (depparse.encoding.context), when the model has them
    if cluster[0] != 0:
        mc = cluster[m] & CFINE
        hc = cluster[h] & CFINE
        buf[k] = fold(start(T.LABEL_MC_DIR, mc), d)
        k += 1
        buf[k] = fold(fold(start(T.LABEL_MC_HP_DIR, mc), hp), d)
        k += 1
        buf[k] = fold(fold(start(T.LABEL_HC_MP_DIR, hc), mp), d)
        k += 1
        buf[k] = fold(fold(start(T.LABEL_HCC_MCC_DIR, cluster[h] >> CSHIFT),
                         cluster[m] >> CSHIFT), d)
        k += 1
        buf[k] = fold(fold(fold(start(T.LABEL_MCC_MP_HP_DIRDIST, cluster[m] >> CSHIFT), mp), hp),
                     db)
        k += 1
    return k


@nb.njit(cache=True)
def sentence_bases(heads, form, lemma, upos, xpos, suffix, cluster, feat_ptr, feat_ids):
    """Base feature hashes of every arc of the tree: (N, MAX_BASE) uint64 and counts."""
    N = heads.shape[0]
    lsib, rsib, nl, nr, cmask = tree_context(heads, upos)
    bases = np.zeros((N, MAX_BASE), dtype=np.uint64)
    counts = np.zeros(N, dtype=np.int64)
    for m in range(1, N):
        counts[m] = base_features(heads[m], m, heads, lsib, rsib, nl, nr, cmask, form, lemma,
                                   upos, xpos, suffix, cluster, feat_ptr, feat_ids, bases[m])
    return bases, counts


@nb.njit(cache=True)
def emissions(base, k, w, mask, nlabels, out):
    """``out[l] = w . phi(arc, l)`` for every label ``l`` (reserved ids get -inf)."""
    for lab in range(nlabels):
        if lab < N_SPECIAL:
            out[lab] = -np.inf
            continue
        t = 0.0
        ul = np.uint64(lab)
        for i in range(k):
            t += w[np.int64(mix(base[i], ul) & mask)]
        out[lab] = t


@nb.njit(cache=True, inline="always")
def trans_features(yp, y, hp, side, mask, buf):
    """Indices of the label-bigram features of two consecutive children of one head.

    ``yp`` is the previous child's label (``START`` for the first child), ``side`` tells
    whether the two children are on the same side of the head (0: both left, 1: around the
    head, 2: both right; 3 for the first child).
    """
    buf[0] = np.int64(mix(mix(template(T.LTRANS_PREV_LABEL_SIDE, yp), y), side) & mask)
    buf[1] = np.int64(mix(mix(mix(template(T.LTRANS_PREV_LABEL_SIDE_HP, yp), y), side), hp) & mask)
    return 2


@nb.njit(cache=True)
def fill_transitions(hp, side, w, mask, nlabels, trans):
    """``trans[side, yp, y]``: score of the label bigram ``yp -> y`` of a head with UPOS ``hp``
    (for ``side == 3``, the first child, only the row ``yp = START``)."""
    buf = np.empty(2, dtype=np.int64)
    lo = START if side == 3 else N_SPECIAL
    hi = START + 1 if side == 3 else nlabels
    for yp in range(lo, hi):
        for y in range(N_SPECIAL, nlabels):
            trans_features(yp, y, hp, side, mask, buf)
            trans[side, yp, y] = w[buf[0]] + w[buf[1]]


@nb.njit(cache=True)
def transition_tables(w, mask, nlabels, n_upos):
    """Transition tables of every head UPOS: ``(n_upos, 4, nlabels, nlabels)``.

    The weights are fixed at prediction time, so the label bigram scores are computed once
    per model instead of once per head.
    """
    tables = np.zeros((n_upos, 4, nlabels, nlabels))
    for hp in range(n_upos):
        for side in range(4):
            fill_transitions(hp, side, w, mask, nlabels, tables[hp])
    return tables


@nb.njit(cache=True)
def head_emissions(children, bases, counts, w, mask, nlabels):
    """``E[i, y]``: score of label ``y`` on the arc to ``children[i]`` (:func:`emissions`)."""
    k = children.shape[0]
    E = np.empty((k, nlabels))
    for i in range(k):
        c = children[i]
        emissions(bases[c], counts[c], w, mask, nlabels, E[i])
    return E
