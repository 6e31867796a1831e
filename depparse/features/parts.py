"""Hashed part features of the parser (Numba), close to McDonald et al. (2005) and
Carreras (2007).

Every feature is a tuple of small integers (a template id of :mod:`.templates` and the ids of
its atoms), hashed into ``[0, 2^bits)``, the index of its weight (:mod:`.hashing`).  Four part
families, as used by Koo et al. (2010, Sec. 6), and a fifth of our own:

* **arc** ``(h, m)``: lower-cased forms, UPOS, lemmas, 3-letter prefixes and suffixes, their
  conjunctions (McDonald et al. 2005 unigram and bigram templates), the UPOS of the words in
  between (each distinct tag once), the surrounding UPOS ``h-1, h+1, m-1, m+1`` and the UD
  morphological features (FEATS) of each word paired with both UPOS.  Every template is
  emitted twice: conjoined with the direction alone, and with direction and bucketed distance.
* **sibling** ``(h, s, m)`` on one side of ``h``: ``s`` is the previous modifier or START,
  ``m`` the next or END (Koo et al. Example 1); conjoined with the direction.
* **grandparent** ``(g, h, m)``, conjoined with both directions.
* **grand-sibling** ``(g, h, s, m)``, at UPOS level.
* **head bigram** ``(h1, m, h2, m+1)`` of the ``gsh`` model, in :mod:`.bigrams`.

Models with contextual word classes (:mod:`depparse.encoding.context`) add templates over the
fine and coarse classes of the words to the arc, sibling and grandparent families.

A single enumeration per family writes feature indices into a buffer; scoring (a dot product
with the weights: :func:`score_arcs` for the parser's and the pruner's arcs, :func:`fill_scores`
for all parts) and learning (adding to the weights: :func:`structure_features`) both use it,
so they cannot disagree.  Each family's enumeration is two steps: the hash states of its
templates after their leading atoms of the head (and of the grandparent, or the previous
sibling), then the atoms of the modifier (:func:`_arc_head` / :func:`_arc_emit`,
:func:`_sib_prev` / :func:`_sib_emit`, :func:`_grand_head` / :func:`_grand_emit`,
:func:`_gsib_head` / :func:`_gsib_sibling` / :func:`_gsib_emit`); the feature functions of
one part run both, the scoring kernels run the first once per head (or pair, or sibling) and
the second per part, about half the hashing of a part table (the same indices: the
atoms are folded in the same order).  Every kernel takes the switches ``on`` of the templates
(:func:`template_switches`): a model trained with a template budget leaves some out
(``ModelConfig.templates_off``; :mod:`depparse.learn.sparsity`), and its kernels skip them.
"""

from __future__ import annotations

from collections import namedtuple

import numba as nb
import numpy as np

from ..decode.part_table import table_width
from ..decode.slices import put
from ..encoding.ids import END, START
from . import templates as T
from .hashing import (
    CFINE,
    CSHIFT,
    RECORD,
    ctx,
    dist_bucket,
    dot,
    emit,
    emit_hashed,
    emit_pair,
    emit_pair_hashed,
    fold,
    start,
    tags_between,
)

__all__ = ["ALL_TEMPLATES", "ARC", "SIB", "GRAND", "GSIB", "HB", "FAMILY_NAMES", "FEATURE_SET",
           "MAX_FEATS", "Weights", "WordArrays", "all_arcs", "arc_features", "fill_scores",
           "grand_features", "gsib_features", "model_families", "parser_templates",
           "score_all_arcs", "score_arcs", "sib_features", "structure_features", "template_names",
           "template_switches"]

# Version of the feature templates.  Weights are only meaningful for the templates they were
# trained with: change this number whenever a template is added, removed or changed (model
# files record it and refuse to load under another one).
#   1: depparse 0.1 (first shipped model)
#   2: + sentence-boundary flags of arcs; UPOS between consecutive siblings, sibling
#      distance, (hp, sw, mw), (head lemma, sp, mp), distance of the last modifier to the
#      sentence edge; grandparent distances, lexicalised, contextual and morphological
#      grandparent templates, m beyond g; lexicalised and distance grand-sibling templates
# The templates of contextual word classes (depparse.encoding.context) are emitted only for models
# with ``context_layer > 0`` (``cluster[0] != 0``): for all other models the features are
# exactly those of set 2, so the number did not change when they were added.  Likewise the
# head-bigram family (HB, depparse.features.bigrams) is emitted only by ``gsh`` models.
FEATURE_SET = 2

# part families (head bigrams: :mod:`.bigrams`, ``gsh`` models only)
ARC, SIB, GRAND, GSIB, HB = 0, 1, 2, 3, 4
FAMILY_NAMES = ("ARC", "SIB", "GRAND", "GSIB", "HB")
N_TEMPLATE_IDS = 256  # the parser's template ids are below this
MAX_FEATS = 1024  # size of the index buffer; no part has more features than this
MAX_MORPH = 24  # morphological features of a word that are used

#: An encoded sentence as the scoring kernels take it (the arrays of
#: :meth:`depparse.encoding.vocab.Encoded.arrays`, by name).
WordArrays = namedtuple("WordArrays", ["form", "lemma", "upos", "xpos", "prefix", "suffix",
                                       "cluster", "feat_ptr", "feat_ids"])

#: The weights of a scorer as the kernels take them: ``w`` (``2**bits`` float64), the hash
#: ``mask`` (``np.uint64(2**bits - 1)``) and the template switches ``on``
#: (:func:`template_switches`).
Weights = namedtuple("Weights", ["w", "mask", "on"])


def parser_templates(families=FAMILY_NAMES) -> dict[str, int]:
    """The parser's feature templates, ``{name: id}`` (of the part ``families``)."""
    return {k: v for k, v in T.registry().items() if k.split("_")[0] in families}


def model_families(head_bigrams) -> tuple:
    """The part families whose templates a model emits (HB only with head bigrams)."""
    return FAMILY_NAMES if head_bigrams else FAMILY_NAMES[:HB]


def template_names(text) -> list[str]:
    """The template names of a comma-separated list (``ModelConfig.templates_off``);
    raises ValueError for a name that is not a parser template."""
    names = [t.strip() for t in (text or "").split(",") if t.strip()]
    known = parser_templates()
    bad = [t for t in names if t not in known]
    if bad:
        raise ValueError(f"not a parser feature template: {', '.join(bad)} (the names are "
                         f"those of depparse.features.templates, families "
                         f"{', '.join(FAMILY_NAMES)})")
    return names


def template_switches(off="", record=False) -> np.ndarray:
    """The switch of every template id for the kernels (:func:`~.hashing.emit`): 0 for the
    templates named in ``off`` (comma-separated), else 1, or ``RECORD`` with ``record``
    (each emitted index then carries its template id: group-lasso training)."""
    on = np.zeros(N_TEMPLATE_IDS, dtype=np.uint8)
    on[list(parser_templates().values())] = RECORD if record else 1
    for name in template_names(off):
        on[getattr(T, name)] = 0
    return on


ALL_TEMPLATES = template_switches()  # every template on (the pruner; models without a choice)


#: START / END of a sibling chain (``-1``) as an int64 value: a literal ``-1`` in a kernel's
#: call is a distinct type to Numba (``Literal[int](-1)``), and each callee would compile once
#: more for it.
NO_WORD = np.int64(-1)


#: The hash states of the arc templates after the atoms of the head that lead them
#: (:func:`_arc_head`), one per slot.
N_HEAD_STATES = 52


@nb.njit(cache=True)
def _arc_head(h, form, lemma, upos, xpos, prefix, suffix, cluster, hs):
    """Write into ``hs`` the hash states of the arc templates after their leading atoms of the
    head ``h`` (every atom when the template has only the head's), in the slots that
    :func:`_arc_emit` reads: shared by every modifier of ``h``."""
    hw = form[h]
    hp = upos[h]
    hl = lemma[h]
    hx = xpos[h]
    hs[0] = start(T.ARC_BIAS, 0)
    hs[1] = fold(start(T.ARC_HW_HP, hw), hp)
    hs[2] = start(T.ARC_HW, hw)
    hs[3] = start(T.ARC_HP, hp)
    hs[4] = fold(start(T.ARC_HW_HP_MW_MP, hw), hp)
    hs[5] = start(T.ARC_HP_MW_MP, hp)
    hs[6] = start(T.ARC_HW_MW_MP, hw)
    hs[7] = fold(start(T.ARC_HW_HP_MP, hw), hp)
    hs[8] = fold(start(T.ARC_HW_HP_MW, hw), hp)
    hs[9] = start(T.ARC_HW_MW, hw)
    hs[10] = start(T.ARC_HP_MP, hp)
    hs[11] = start(T.ARC_HL_ML, hl)
    hs[12] = start(T.ARC_HL_MP, hl)
    hs[13] = start(T.ARC_HP_ML, hp)
    hs[14] = fold(start(T.ARC_HL_HP, hl), hp)
    hs[15] = start(T.ARC_HSUF_MSUF, suffix[h])
    hs[16] = fold(start(T.ARC_HSUF_HP_MP, suffix[h]), hp)
    hs[17] = start(T.ARC_HP_MSUF_MP, hp)
    hs[18] = fold(start(T.ARC_HPRE_HP_MP, prefix[h]), hp)
    hs[19] = start(T.ARC_HP_MPRE_MP, hp)
    hs[20] = start(T.ARC_HX_MX, hx)
    hs[21] = fold(start(T.ARC_HW_HX_MX, hw), hx)
    hs[22] = start(T.ARC_HX_MW_MX, hx)
    hs[23] = start(T.ARC_HX_MX_HP, hx)
    hs[24] = fold(start(T.ARC_HX_HXR_MXL_MX, hx), ctx(xpos, h + 1))
    hs[25] = fold(start(T.ARC_HXL_HX_MX_MXR, ctx(xpos, h - 1)), hx)
    if cluster[0] != 0:
        hc = cluster[h] & CFINE
        hcc = cluster[h] >> CSHIFT
        hs[26] = start(T.ARC_HC_MC, hc)
        hs[27] = start(T.ARC_HCC_MCC, hcc)
        hs[28] = fold(start(T.ARC_HC_HP_MP, hc), hp)
        hs[29] = start(T.ARC_HP_MC_MP, hp)
        hs[30] = fold(start(T.ARC_HCC_HP_MCC_MP, hcc), hp)
        hs[31] = fold(start(T.ARC_HC_HP_MC_MP, hc), hp)
        hs[32] = start(T.ARC_HC_MW, hc)
        hs[33] = start(T.ARC_HW_MC, hw)
        hs[34] = fold(start(T.ARC_HCC_HP_MP, hcc), hp)
        hs[35] = start(T.ARC_HP_MCC_MP, hp)
        hs[36] = fold(start(T.ARC_HC_HP, hc), hp)
    hpl = ctx(upos, h - 1)
    hpr = ctx(upos, h + 1)
    hs[37] = fold(start(T.ARC_HP_HPR_MPL_MP, hp), hpr)
    hs[38] = fold(start(T.ARC_HPL_HP_MPL_MP, hpl), hp)
    hs[39] = fold(start(T.ARC_HP_HPR_MP_MPR, hp), hpr)
    hs[40] = fold(start(T.ARC_HPL_HP_MP_MPR, hpl), hp)
    hs[41] = fold(start(T.ARC_HP_HPR_MP, hp), hpr)
    hs[42] = start(T.ARC_HP_MPL_MP, hp)
    hs[43] = fold(start(T.ARC_HPL_HP_MP, hpl), hp)
    hs[44] = start(T.ARC_HP_MP_MPR, hp)
    hs[45] = start(T.ARC_HW_MPL_MP, hw)
    hs[46] = start(T.ARC_HW_MP_MPR, hw)
    hs[47] = fold(start(T.ARC_HPL_HP_MW, hpl), hp)
    hs[48] = fold(start(T.ARC_HP_HPR_MW, hp), hpr)
    hs[49] = start(T.ARC_HP_MP_HB_MB, hp)
    hs[50] = start(T.ARC_HP_MW_HB_MB, hp)
    hs[51] = start(T.ARC_HP_BETWEEN_MP, hp)


@nb.njit(cache=True)
def _arc_emit(h, m, hs, form, lemma, upos, xpos, prefix, suffix, cluster, feat_ptr, feat_ids,
              mask, on, buf):
    """The features of arc ``h -> m`` (:func:`arc_features`) from the head's hash states
    ``hs`` (:func:`_arc_head`): only the atoms of the modifier, the words between and the
    conjunctions are hashed here."""
    d = 1 if m > h else 0
    dist = abs(m - h)
    a1 = np.uint64(1 + d)  # direction
    a2 = np.uint64(16 + d * 32 + dist_bucket(dist))  # direction and distance
    hp = upos[h]
    mw = form[m]
    mp = upos[m]
    ml = lemma[m]
    k = 0
    k = emit_pair_hashed(buf, k, on, T.ARC_BIAS, hs[0], a1, a2, mask)  # bias
    k = emit_pair_hashed(buf, k, on, T.ARC_HW_HP, hs[1], a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HW, hs[2], a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HP, hs[3], a1, a2, mask)
    k = emit_pair(buf, k, on, T.ARC_MW_MP, (mw, mp), a1, a2, mask)
    k = emit_pair(buf, k, on, T.ARC_MW, (mw,), a1, a2, mask)
    k = emit_pair(buf, k, on, T.ARC_MP, (mp,), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HW_HP_MW_MP, fold(fold(hs[4], mw), mp), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HP_MW_MP, fold(fold(hs[5], mw), mp), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HW_MW_MP, fold(fold(hs[6], mw), mp), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HW_HP_MP, fold(hs[7], mp), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HW_HP_MW, fold(hs[8], mw), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HW_MW, fold(hs[9], mw), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HP_MP, fold(hs[10], mp), a1, a2, mask)
    # lemmas
    k = emit_pair_hashed(buf, k, on, T.ARC_HL_ML, fold(hs[11], ml), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HL_MP, fold(hs[12], mp), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HP_ML, fold(hs[13], ml), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HL_HP, hs[14], a1, a2, mask)
    k = emit_pair(buf, k, on, T.ARC_ML_MP, (ml, mp), a1, a2, mask)
    # affixes
    k = emit_pair_hashed(buf, k, on, T.ARC_HSUF_MSUF, fold(hs[15], suffix[m]), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HSUF_HP_MP, fold(hs[16], mp), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HP_MSUF_MP, fold(fold(hs[17], suffix[m]), mp), a1, a2,
                         mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HPRE_HP_MP, fold(hs[18], mp), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HP_MPRE_MP, fold(fold(hs[19], prefix[m]), mp), a1, a2,
                         mask)
    # XPOS (language-specific tags)
    mx = xpos[m]
    mxl = ctx(xpos, m - 1)
    mxr = ctx(xpos, m + 1)
    k = emit_pair_hashed(buf, k, on, T.ARC_HX_MX, fold(hs[20], mx), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HW_HX_MX, fold(hs[21], mx), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HX_MW_MX, fold(fold(hs[22], mw), mx), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HX_MX_HP, fold(fold(hs[23], mx), hp), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HX_HXR_MXL_MX, fold(fold(hs[24], mxl), mx), a1, a2,
                         mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HXL_HX_MX_MXR, fold(fold(hs[25], mx), mxr), a1, a2,
                         mask)
    # word clusters (Koo et al. 2008), when the model has them: fine and coarse classes
    if cluster[0] != 0:
        mc = cluster[m] & CFINE
        mcc = cluster[m] >> CSHIFT
        k = emit_pair_hashed(buf, k, on, T.ARC_HC_MC, fold(hs[26], mc), a1, a2, mask)
        k = emit_pair_hashed(buf, k, on, T.ARC_HCC_MCC, fold(hs[27], mcc), a1, a2, mask)
        k = emit_pair_hashed(buf, k, on, T.ARC_HC_HP_MP, fold(hs[28], mp), a1, a2, mask)
        k = emit_pair_hashed(buf, k, on, T.ARC_HP_MC_MP, fold(fold(hs[29], mc), mp), a1, a2, mask)
        k = emit_pair_hashed(buf, k, on, T.ARC_HCC_HP_MCC_MP, fold(fold(hs[30], mcc), mp), a1, a2,
                             mask)
        k = emit_pair_hashed(buf, k, on, T.ARC_HC_HP_MC_MP, fold(fold(hs[31], mc), mp), a1, a2,
                             mask)
        k = emit_pair_hashed(buf, k, on, T.ARC_HC_MW, fold(hs[32], mw), a1, a2, mask)
        k = emit_pair_hashed(buf, k, on, T.ARC_HW_MC, fold(hs[33], mc), a1, a2, mask)
        k = emit_pair_hashed(buf, k, on, T.ARC_HCC_HP_MP, fold(hs[34], mp), a1, a2, mask)
        k = emit_pair_hashed(buf, k, on, T.ARC_HP_MCC_MP, fold(fold(hs[35], mcc), mp), a1, a2,
                             mask)
        k = emit_pair_hashed(buf, k, on, T.ARC_HC_HP, hs[36], a1, a2, mask)
        k = emit_pair(buf, k, on, T.ARC_MC_MP, (mc, mp), a1, a2, mask)
    # surrounding UPOS
    mpl = ctx(upos, m - 1)
    mpr = ctx(upos, m + 1)
    k = emit_pair_hashed(buf, k, on, T.ARC_HP_HPR_MPL_MP, fold(fold(hs[37], mpl), mp), a1, a2,
                         mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HPL_HP_MPL_MP, fold(fold(hs[38], mpl), mp), a1, a2,
                         mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HP_HPR_MP_MPR, fold(fold(hs[39], mp), mpr), a1, a2,
                         mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HPL_HP_MP_MPR, fold(fold(hs[40], mp), mpr), a1, a2,
                         mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HP_HPR_MP, fold(hs[41], mp), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HP_MPL_MP, fold(fold(hs[42], mpl), mp), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HPL_HP_MP, fold(hs[43], mp), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HP_MP_MPR, fold(fold(hs[44], mp), mpr), a1, a2, mask)
    # lexical context
    k = emit_pair_hashed(buf, k, on, T.ARC_HW_MPL_MP, fold(fold(hs[45], mpl), mp), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HW_MP_MPR, fold(fold(hs[46], mp), mpr), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HPL_HP_MW, fold(hs[47], mw), a1, a2, mask)
    k = emit_pair_hashed(buf, k, on, T.ARC_HP_HPR_MW, fold(hs[48], mw), a1, a2, mask)
    # sentence boundaries: the first and the last word (final punctuation, fronted phrases)
    N = form.shape[0]
    hb = 0 if h == 0 else (1 if h == 1 else 0) + (2 if h == N - 1 else 0)
    mb = (1 if m == 1 else 0) + (2 if m == N - 1 else 0)
    k = emit_pair_hashed(buf, k, on, T.ARC_HP_MP_HB_MB, fold(fold(fold(hs[49], mp), hb), mb), a1,
                         a2, mask)
    k = emit_hashed(buf, k, on, T.ARC_HP_MW_HB_MB, fold(fold(fold(hs[50], mw), hb), mb), a1, mask)
    # UPOS in between (each distinct tag once), and how often each tag occurs (capped at 3)
    if dist > 1:
        tags = np.empty(64, dtype=np.int64)
        cnts = np.empty(64, dtype=np.int64)
        for j in range(tags_between(upos, h, m, tags, cnts, True)):
            bp = tags[j]
            k = emit_pair_hashed(buf, k, on, T.ARC_HP_BETWEEN_MP, fold(fold(hs[51], bp), mp), a1,
                                 a2, mask)
            k = emit(buf, k, on, T.ARC_HP_BETWEEN_MP_COUNT, (hp, bp, mp, min(cnts[j], 3)), a1, mask)
    # morphology
    for j in range(feat_ptr[m], min(feat_ptr[m + 1], feat_ptr[m] + MAX_MORPH)):
        k = emit(buf, k, on, T.ARC_HP_MP_MFEAT, (hp, mp, feat_ids[j]), a1, mask)
    for j in range(feat_ptr[h], min(feat_ptr[h + 1], feat_ptr[h] + MAX_MORPH)):
        k = emit(buf, k, on, T.ARC_HP_HFEAT_MP, (hp, feat_ids[j], mp), a1, mask)
    return k


@nb.njit(cache=True)
def arc_features(h, m, form, lemma, upos, xpos, prefix, suffix, cluster, feat_ptr, feat_ids,
                 mask, on, buf):
    """Write the indices of the features of arc ``h -> m`` into ``buf``; return their count.

    ``on``: the switch of every template id (:func:`template_switches`).  The templates (the
    module docstring) are hashed in two steps, the leading atoms of the head first
    (:func:`_arc_head`, then :func:`_arc_emit`): :func:`score_arcs` hashes the first step
    once per head rather than once per arc.
    """
    hs = np.empty(N_HEAD_STATES, dtype=np.uint64)
    _arc_head(h, form, lemma, upos, xpos, prefix, suffix, cluster, hs)
    return _arc_emit(h, m, hs, form, lemma, upos, xpos, prefix, suffix, cluster, feat_ptr,
                     feat_ids, mask, on, buf)


#: The hash states of the sibling templates after their atoms of ``h`` and ``s``
#: (:func:`_sib_prev`), one per slot.
N_SIB_STATES = 22


@nb.njit(cache=True)
def _sib_prev(h, s, form, lemma, upos, xpos, cluster, ss):
    """Write into ``ss`` the hash states of the sibling templates after their leading atoms
    of the head ``h`` and the previous modifier ``s`` (START as -1), in the slots that
    :func:`_sib_emit` reads: shared by every next modifier."""
    hp = upos[h]
    hw = form[h]
    sp = START if s < 0 else upos[s]
    sw = START if s < 0 else form[s]
    ss[0] = fold(start(T.SIB_HP_SP_MP, hp), sp)
    ss[1] = start(T.SIB_SP_MP, sp)
    ss[2] = start(T.SIB_SW_MW, sw)
    ss[3] = start(T.SIB_SW_MP, sw)
    ss[4] = start(T.SIB_SP_MW, sp)
    ss[5] = fold(start(T.SIB_HW_SP_MP, hw), sp)
    ss[6] = fold(start(T.SIB_HP_SW_MP, hp), sw)
    ss[7] = fold(start(T.SIB_HP_SP_MW, hp), sp)
    ss[8] = fold(start(T.SIB_HP_SP_MP_DIST_SM, hp), sp)
    ss[9] = fold(start(T.SIB_HX_SX_MX, xpos[h]), START if s < 0 else xpos[s])
    ss[10] = fold(start(T.SIB_HP_SW_MW, hp), sw)
    ss[11] = fold(start(T.SIB_HP_SP_EDGE_DIST, hp), sp)
    ss[12] = fold(start(T.SIB_HL_SP_MP, lemma[h]), sp)
    if cluster[0] != 0:
        sc = START if s < 0 else cluster[s] & CFINE
        scc = START if s < 0 else cluster[s] >> CSHIFT
        ss[13] = fold(start(T.SIB_HP_SC_MC, hp), sc)
        ss[14] = start(T.SIB_SC_MC, sc)
        ss[15] = fold(start(T.SIB_HP_SCC_MCC, hp), scc)
        ss[16] = fold(start(T.SIB_HC_SP_MP, cluster[h] & CFINE), sp)
        ss[17] = fold(start(T.SIB_HP_SP_MC, hp), sp)
        ss[18] = fold(start(T.SIB_HP_SC_MP, hp), sc)
    ss[19] = fold(start(T.SIB_HP_SP_MP_BETWEEN, hp), sp)
    ss[20] = start(T.SIB_SP_MP_BETWEEN, sp)
    ss[21] = start(T.SIB_SP_MP_DIST_SM, sp)


@nb.njit(cache=True)
def _sib_emit(h, s, m, d, ss, form, upos, xpos, cluster, mask, on, buf):
    """The features of the sibling transition ``s -> m`` (:func:`sib_features`) from the
    states ``ss`` of :func:`_sib_prev`: only the atoms of ``m`` (END as -1), the distances
    and the words between are hashed here."""
    a = np.uint64(64 + d)
    mp = END if m < 0 else upos[m]
    mw = END if m < 0 else form[m]
    k = 0
    k = emit_hashed(buf, k, on, T.SIB_HP_SP_MP, fold(ss[0], mp), a, mask)
    k = emit_hashed(buf, k, on, T.SIB_SP_MP, fold(ss[1], mp), a, mask)
    k = emit_hashed(buf, k, on, T.SIB_SW_MW, fold(ss[2], mw), a, mask)
    k = emit_hashed(buf, k, on, T.SIB_SW_MP, fold(ss[3], mp), a, mask)
    k = emit_hashed(buf, k, on, T.SIB_SP_MW, fold(ss[4], mw), a, mask)
    k = emit_hashed(buf, k, on, T.SIB_HW_SP_MP, fold(ss[5], mp), a, mask)
    k = emit_hashed(buf, k, on, T.SIB_HP_SW_MP, fold(ss[6], mp), a, mask)
    k = emit_hashed(buf, k, on, T.SIB_HP_SP_MW, fold(ss[7], mw), a, mask)
    if s >= 0 and m >= 0:
        k = emit_hashed(buf, k, on, T.SIB_HP_SP_MP_DIST_SM,
                        fold(fold(ss[8], mp), dist_bucket(abs(m - s))), a, mask)
    k = emit_hashed(buf, k, on, T.SIB_HX_SX_MX, fold(ss[9], END if m < 0 else xpos[m]), a, mask)
    k = emit_hashed(buf, k, on, T.SIB_HP_SW_MW, fold(ss[10], mw), a, mask)
    if m < 0:
        # how far the last modifier (or the head) is from the sentence edge on that side
        last = h if s < 0 else s
        rest = last - 1 if d == 0 else form.shape[0] - 1 - last
        k = emit_hashed(buf, k, on, T.SIB_HP_SP_EDGE_DIST,
                        fold(fold(ss[11], dist_bucket(rest)), 0), a, mask)
    k = emit_hashed(buf, k, on, T.SIB_HL_SP_MP, fold(ss[12], mp), a, mask)
    if cluster[0] != 0:
        mc = END if m < 0 else cluster[m] & CFINE
        mcc = END if m < 0 else cluster[m] >> CSHIFT
        k = emit_hashed(buf, k, on, T.SIB_HP_SC_MC, fold(ss[13], mc), a, mask)
        k = emit_hashed(buf, k, on, T.SIB_SC_MC, fold(ss[14], mc), a, mask)
        k = emit_hashed(buf, k, on, T.SIB_HP_SCC_MCC, fold(ss[15], mcc), a, mask)
        k = emit_hashed(buf, k, on, T.SIB_HC_SP_MP, fold(ss[16], mp), a, mask)
        k = emit_hashed(buf, k, on, T.SIB_HP_SP_MC, fold(ss[17], mc), a, mask)
        k = emit_hashed(buf, k, on, T.SIB_HP_SC_MP, fold(ss[18], mp), a, mask)
    if m >= 0:
        # the UPOS between the previous sibling (or the head) and m, each distinct tag once:
        # punctuation and conjunctions there are the evidence of coordination and clause
        # boundaries
        prev = h if s < 0 else s
        if abs(m - prev) > 1:
            tags = np.empty(64, dtype=np.int64)
            cnts = np.empty(64, dtype=np.int64)
            for j in range(tags_between(upos, prev, m, tags, cnts, False)):
                bp = tags[j]
                k = emit_hashed(buf, k, on, T.SIB_HP_SP_MP_BETWEEN, fold(fold(ss[19], mp), bp), a,
                                mask)
                k = emit_hashed(buf, k, on, T.SIB_SP_MP_BETWEEN, fold(fold(ss[20], mp), bp), a,
                                mask)
        if s >= 0:
            k = emit_hashed(buf, k, on, T.SIB_SP_MP_DIST_SM,
                            fold(fold(ss[21], mp), dist_bucket(abs(m - s))), a, mask)
    return k


@nb.njit(cache=True)
def sib_features(h, s, m, d, form, lemma, upos, xpos, cluster, mask, on, buf):
    """Features of the sibling transition ``s -> m`` of head ``h`` on side ``d``.

    ``s = -1`` is START, ``m = -1`` is END.  Hashed in two steps, the atoms of ``h`` and
    ``s`` first (:func:`_sib_prev`, then :func:`_sib_emit`): :func:`fill_scores` hashes the
    first once per head and previous modifier.
    """
    ss = np.empty(N_SIB_STATES, dtype=np.uint64)
    _sib_prev(h, s, form, lemma, upos, xpos, cluster, ss)
    return _sib_emit(h, s, m, d, ss, form, upos, xpos, cluster, mask, on, buf)


#: The hash states of the grandparent templates after their atoms of ``g`` and ``h``
#: (:func:`_grand_head`), one per slot.
N_GRAND_STATES = 24


@nb.njit(cache=True)
def _grand_head(g, h, form, upos, xpos, cluster, gs):
    """Write into ``gs`` the hash states of the grandparent templates after their leading
    atoms of ``g`` and ``h``, in the slots that :func:`_grand_emit` reads: shared by every
    modifier of ``h`` under the grandparent ``g``."""
    gp = upos[g]
    gw = form[g]
    hp = upos[h]
    hw = form[h]
    gs[0] = fold(start(T.GRAND_GP_HP_MP, gp), hp)
    gs[1] = start(T.GRAND_GP_MP, gp)
    gs[2] = start(T.GRAND_GW_MP, gw)
    gs[3] = start(T.GRAND_GP_MW, gp)
    gs[4] = fold(start(T.GRAND_GW_HP_MP, gw), hp)
    gs[5] = fold(start(T.GRAND_GP_HW_MP, gp), hw)
    gs[6] = fold(start(T.GRAND_GP_HP_MW, gp), hp)
    gs[7] = start(T.GRAND_GW_MW, gw)
    gs[8] = fold(start(T.GRAND_GX_HX_MX, xpos[g]), xpos[h])
    gs[9] = fold(start(T.GRAND_GP_HP_MP_DIST_HM, gp), hp)
    gs[10] = fold(start(T.GRAND_GP_HP_MP_DIST_GH, gp), hp)
    gs[11] = fold(start(T.GRAND_GW_HW_MP, gw), hw)
    gs[12] = fold(start(T.GRAND_GP_HW_MW, gp), hw)
    gs[13] = fold(start(T.GRAND_GW_HP_MW, gw), hp)
    gs[14] = fold(start(T.GRAND_GP_HP_MP_SAME_SIDE_OF_G, gp), hp)
    gs[15] = fold(start(T.GRAND_GP_HP_MP_MPL_MPR, gp), hp)
    gs[16] = fold(fold(fold(start(T.GRAND_GP_HPL_HP_HPR_MP, gp), ctx(upos, h - 1)), hp),
                 ctx(upos, h + 1))
    gs[17] = fold(start(T.GRAND_GW_HW_MW, gw), hw)
    if cluster[0] != 0:
        gc = cluster[g] & CFINE
        hc = cluster[h] & CFINE
        gs[18] = fold(start(T.GRAND_GC_HP_MC, gc), hp)
        gs[19] = fold(start(T.GRAND_GP_HC_MC, gp), hc)
        gs[20] = fold(start(T.GRAND_GC_HC_MP, gc), hc)
        gs[21] = fold(start(T.GRAND_GCC_HCC_MCC, cluster[g] >> CSHIFT), cluster[h] >> CSHIFT)
        gs[22] = start(T.GRAND_GC_MC, gc)
    gs[23] = fold(start(T.GRAND_GP_HP_MP_MFEAT, gp), hp)


@nb.njit(cache=True)
def _grand_emit(g, h, m, gs, form, upos, xpos, cluster, feat_ptr, feat_ids, mask, on, buf):
    """The features of the grandparent part ``g -> h -> m`` (:func:`grand_features`) from
    the states ``gs`` of :func:`_grand_head`: only the atoms of ``m`` (and the distances) are
    hashed here."""
    a = np.uint64(128 + (2 if h > g else 0) + (1 if m > h else 0))
    mp = upos[m]
    mw = form[m]
    k = 0
    k = emit_hashed(buf, k, on, T.GRAND_GP_HP_MP, fold(gs[0], mp), a, mask)
    k = emit_hashed(buf, k, on, T.GRAND_GP_MP, fold(gs[1], mp), a, mask)
    k = emit_hashed(buf, k, on, T.GRAND_GW_MP, fold(gs[2], mp), a, mask)
    k = emit_hashed(buf, k, on, T.GRAND_GP_MW, fold(gs[3], mw), a, mask)
    k = emit_hashed(buf, k, on, T.GRAND_GW_HP_MP, fold(gs[4], mp), a, mask)
    k = emit_hashed(buf, k, on, T.GRAND_GP_HW_MP, fold(gs[5], mp), a, mask)
    k = emit_hashed(buf, k, on, T.GRAND_GP_HP_MW, fold(gs[6], mw), a, mask)
    k = emit_hashed(buf, k, on, T.GRAND_GW_MW, fold(gs[7], mw), a, mask)
    k = emit_hashed(buf, k, on, T.GRAND_GX_HX_MX, fold(gs[8], xpos[m]), a, mask)
    k = emit_hashed(buf, k, on, T.GRAND_GP_HP_MP_DIST_HM,
                    fold(fold(gs[9], mp), dist_bucket(abs(h - m))), a, mask)
    k = emit_hashed(buf, k, on, T.GRAND_GP_HP_MP_DIST_GH,
                    fold(fold(gs[10], mp), dist_bucket(abs(g - h))), a, mask)
    k = emit_hashed(buf, k, on, T.GRAND_GW_HW_MP, fold(gs[11], mp), a, mask)
    k = emit_hashed(buf, k, on, T.GRAND_GP_HW_MW, fold(gs[12], mw), a, mask)
    k = emit_hashed(buf, k, on, T.GRAND_GW_HP_MW, fold(gs[13], mw), a, mask)
    # does m lie between g and h, or beyond g (the configuration non-projectivity needs)?
    k = emit_hashed(buf, k, on, T.GRAND_GP_HP_MP_SAME_SIDE_OF_G,
                    fold(fold(gs[14], mp), np.int64((m > g) == (h > g))), a, mask)
    k = emit_hashed(buf, k, on, T.GRAND_GP_HP_MP_MPL_MPR,
                    fold(fold(fold(gs[15], mp), ctx(upos, m - 1)), ctx(upos, m + 1)), a, mask)
    k = emit_hashed(buf, k, on, T.GRAND_GP_HPL_HP_HPR_MP, fold(gs[16], mp), a, mask)
    k = emit_hashed(buf, k, on, T.GRAND_GW_HW_MW, fold(gs[17], mw), a, mask)
    if cluster[0] != 0:
        mc = cluster[m] & CFINE
        k = emit_hashed(buf, k, on, T.GRAND_GC_HP_MC, fold(gs[18], mc), a, mask)
        k = emit_hashed(buf, k, on, T.GRAND_GP_HC_MC, fold(gs[19], mc), a, mask)
        k = emit_hashed(buf, k, on, T.GRAND_GC_HC_MP, fold(gs[20], mp), a, mask)
        k = emit_hashed(buf, k, on, T.GRAND_GCC_HCC_MCC, fold(gs[21], cluster[m] >> CSHIFT), a,
                        mask)
        k = emit_hashed(buf, k, on, T.GRAND_GC_MC, fold(gs[22], mc), a, mask)
    # morphology of m (VerbForm, PronType, Case ...) with the UPOS of g and h
    for j in range(feat_ptr[m], min(feat_ptr[m + 1], feat_ptr[m] + 6)):
        k = emit_hashed(buf, k, on, T.GRAND_GP_HP_MP_MFEAT, fold(fold(gs[23], mp), feat_ids[j]), a,
                        mask)
    return k


@nb.njit(cache=True)
def grand_features(g, h, m, form, upos, xpos, cluster, feat_ptr, feat_ids, mask, on, buf):
    """Features of the grandparent part ``g -> h -> m``.

    Hashed in two steps, the atoms of ``g`` and ``h`` first (:func:`_grand_head`, then
    :func:`_grand_emit`): :func:`fill_scores` hashes the first once per grandparent and head.
    """
    gs = np.empty(N_GRAND_STATES, dtype=np.uint64)
    _grand_head(g, h, form, upos, xpos, cluster, gs)
    return _grand_emit(g, h, m, gs, form, upos, xpos, cluster, feat_ptr, feat_ids, mask, on,
                       buf)


@nb.njit(cache=True)
def _gsib_head(g, h, form, upos):
    """The hash states of the grand-sibling templates after their atoms of ``g`` and ``h``
    (in the order of :func:`_gsib_emit`): shared by every sibling pair of the automaton."""
    gp = upos[g]
    hp = upos[h]
    return (fold(start(T.GSIB_GP_HP_SP_MP, gp), hp),
            start(T.GSIB_GP_SP_MP, gp),
            fold(start(T.GSIB_GW_HP_SP_MP, form[g]), hp),
            start(T.GSIB_GP_SP_MW, gp),
            start(T.GSIB_GP_SW_MP, gp),
            fold(start(T.GSIB_GP_HP_SW_MW, gp), hp),
            fold(start(T.GSIB_GP_HP_SP_MP_DIST_SM, gp), hp))


@nb.njit(cache=True)
def _gsib_sibling(P, s, form, upos):
    """The states of :func:`_gsib_head` with the atom of the previous sibling ``s`` (START
    as -1) folded in: shared by every next sibling ``m``."""
    sp = START if s < 0 else upos[s]
    sw = START if s < 0 else form[s]
    return (fold(P[0], sp), fold(P[1], sp), fold(P[2], sp), fold(P[3], sp), fold(P[4], sw),
            fold(P[5], sw), fold(P[6], sp))


@nb.njit(cache=True)
def _gsib_emit(Q, s, m, a, form, upos, mask, on, buf):
    """Finish the grand-sibling features from the states ``Q`` of :func:`_gsib_sibling`
    with the atoms of ``m`` (END as -1); write their indices into ``buf``, return the count."""
    mp = END if m < 0 else upos[m]
    mw = END if m < 0 else form[m]
    k = 0
    k = emit_hashed(buf, k, on, T.GSIB_GP_HP_SP_MP, fold(Q[0], mp), a, mask)
    k = emit_hashed(buf, k, on, T.GSIB_GP_SP_MP, fold(Q[1], mp), a, mask)
    k = emit_hashed(buf, k, on, T.GSIB_GW_HP_SP_MP, fold(Q[2], mp), a, mask)
    k = emit_hashed(buf, k, on, T.GSIB_GP_SP_MW, fold(Q[3], mw), a, mask)
    k = emit_hashed(buf, k, on, T.GSIB_GP_SW_MP, fold(Q[4], mp), a, mask)
    k = emit_hashed(buf, k, on, T.GSIB_GP_HP_SW_MW, fold(Q[5], mw), a, mask)
    if s >= 0 and m >= 0:
        k = emit_hashed(buf, k, on, T.GSIB_GP_HP_SP_MP_DIST_SM,
                        fold(fold(Q[6], mp), dist_bucket(abs(m - s))), a, mask)
    return k


@nb.njit(cache=True)
def _gsib_att(g, h, d):
    """The conjunction of the grand-sibling features: both directions."""
    return np.uint64(256 + (2 if h > g else 0) + d)


@nb.njit(cache=True)
def gsib_features(g, h, s, m, d, form, upos, mask, on, buf):
    """UPOS-level features of the grand-sibling part ``(g, h, s, m)`` (START/END as -1):
    ``(gp, hp, sp, mp)``, ``(gp, sp, mp)``, ``(gw, hp, sp, mp)``, ``(gp, sp, mw)``,
    ``(gp, sw, mp)``, ``(gp, hp, sw, mw)`` and ``(gp, hp, sp, mp, dist(s, m))``.

    Hashed in three steps (:func:`_gsib_head`, :func:`_gsib_sibling`, :func:`_gsib_emit`),
    the atoms of ``g`` and ``h`` first: :func:`fill_scores` hashes each step once per
    automaton and per previous sibling rather than once per part (a third of the mixing).
    """
    Q = _gsib_sibling(_gsib_head(g, h, form, upos), s, form, upos)
    return _gsib_emit(Q, s, m, _gsib_att(g, h, d), form, upos, mask, on, buf)


# nogil: the parse's helper thread runs meanwhile (Engine.iter_parsed)
@nb.njit(cache=True, nogil=True)
def score_arcs(words, weights, keep, arc):
    """``arc[h, m] = w . phi(h, m)`` for the kept arcs, ``-inf`` for the others (and for
    ``m = 0`` and ``h = m``).  Used for the parser's arcs and for the pruner's.

    ``words`` is a :data:`WordArrays`, ``weights`` a :data:`Weights`.
    """
    N = words.form.shape[0]
    buf = np.empty(MAX_FEATS, dtype=np.int64)
    hs = np.empty(N_HEAD_STATES, dtype=np.uint64)
    for h in range(N):
        _arc_head(h, words.form, words.lemma, words.upos, words.xpos, words.prefix,
                  words.suffix, words.cluster, hs)
        for m in range(N):
            if m != 0 and m != h and keep[h, m]:
                k = _arc_emit(h, m, hs, words.form, words.lemma, words.upos, words.xpos,
                              words.prefix, words.suffix, words.cluster, words.feat_ptr,
                              words.feat_ids, weights.mask, weights.on, buf)
                arc[h, m] = dot(weights.w, buf, k)
            else:
                arc[h, m] = -np.inf


# nogil: the parse's helper thread runs meanwhile (Engine.iter_parsed)
@nb.njit(cache=True, nogil=True)
def fill_scores(words, weights, order, keep, parts):
    """Score every kept part of a sentence into the part table ``parts``
    (:class:`~depparse.decode.part_table.PartArrays`): ``parts.arc`` (N, N) and the automaton
    tables ``parts.tab``.

    ``words`` is a :data:`WordArrays`, ``weights`` a :data:`Weights`; ``order`` is 0 (arcs
    only), 1 (+ siblings) or 2 (+ grandparents and grand-siblings).  Layout of the tables:
    :mod:`depparse.decode.part_table`.
    """
    form = words.form
    upos = words.upos
    cluster = words.cluster
    w = weights.w
    mask = weights.mask
    on = weights.on
    cand = parts.cand
    cand_len = parts.cand_len
    tab = parts.tab
    N = form.shape[0]
    buf = np.empty(MAX_FEATS, dtype=np.int64)
    score_arcs(words, weights, keep, parts.arc)
    if order == 0:
        return
    Wm = table_width(cand_len)
    S = np.empty((Wm, Wm))
    G = np.empty(Wm)
    gs = np.empty(N_GRAND_STATES, dtype=np.uint64)
    ss = np.empty(N_SIB_STATES, dtype=np.uint64)
    for h in range(N):
        for d in range(2):
            L = cand_len[h, d]
            c0 = parts.cand_off[h, d]
            W1 = L + 1
            if h == 0 and d == 0:
                for gi in range(parts.gp_len[h]):
                    tab[parts.tab_off[parts.gp_off[h] + gi, d]] = 0.0  # the root: no left side
                continue
            for p in range(W1):
                s = NO_WORD if p == 0 else cand[c0 + p - 1]
                _sib_prev(h, s, form, words.lemma, upos, words.xpos, cluster, ss)
                for q in range(p, W1):
                    m = NO_WORD if q == L else cand[c0 + q]
                    k = _sib_emit(h, s, m, d, ss, form, upos, words.xpos, cluster, mask, on, buf)
                    S[p, q] = dot(w, buf, k)
            for gi in range(parts.gp_len[h]):
                g = parts.gp[parts.gp_off[h] + gi]
                o = parts.tab_off[parts.gp_off[h] + gi, d]
                grand = order == 2 and g >= 0
                if grand:
                    _grand_head(g, h, form, upos, words.xpos, cluster, gs)
                    for q in range(L):
                        k = _grand_emit(g, h, cand[c0 + q], gs, form, upos, words.xpos, cluster,
                                        words.feat_ptr, words.feat_ids, mask, on, buf)
                        G[q] = dot(w, buf, k)
                    G[L] = 0.0
                # the grand-sibling hashes of (g, h), then of (g, h, s), once (gsib_features)
                P = _gsib_head(max(g, 0), h, form, upos)
                a = _gsib_att(g, h, d)
                for p in range(W1):
                    s = NO_WORD if p == 0 else cand[c0 + p - 1]
                    Q = _gsib_sibling(P, s, form, upos)
                    for q in range(W1):
                        if q < p:
                            tab[o + p * W1 + q] = -np.inf
                            continue
                        v = S[p, q]
                        if grand:
                            m = NO_WORD if q == L else cand[c0 + q]
                            k = _gsib_emit(Q, s, m, a, form, upos, mask, on, buf)
                            v += G[q] + dot(w, buf, k)
                        tab[o + p * W1 + q] = v


@nb.njit(cache=True, inline="always")
def _append(out, n, buf, k):
    if n + k > out.shape[0]:
        new = np.empty(max(2 * out.shape[0], n + k), dtype=np.int64)
        put(new, 0, out, n)
        out = new
    put(out, n, buf, k)
    return out, n + k


@nb.njit(cache=True)
def structure_features(form, lemma, upos, xpos, prefix, suffix, cluster, feat_ptr, feat_ids, mask,
                       on, order, mods, gpar, only):
    """Feature indices (with repetitions) of a structure in Z, for the automata ``only[h]``.

    The structure is given per head automaton: ``mods[h, m]`` (is ``m`` a modifier of ``h``)
    and ``gpar[h]`` (the grandparent chosen by automaton ``h``; ignored unless ``order == 2``).
    Its parts are those scored by :func:`fill_scores`: every chosen arc, the sibling
    transitions START -> m_1 -> ... -> END on each side, and the grandparent and
    grand-sibling parts.
    """
    N = form.shape[0]
    buf = np.empty(MAX_FEATS, dtype=np.int64)
    out = np.empty(4096, dtype=np.int64)
    n = 0
    for h in range(N):
        if not only[h]:
            continue
        g = gpar[h] if (order == 2 and h > 0) else -1
        for d in range(2):
            s = NO_WORD
            if d == 0:
                start, stop, step = h - 1, 0, -1
            else:
                start, stop, step = h + 1, N, 1
            for m in range(start, stop, step):
                if not mods[h, m]:
                    continue
                k = arc_features(h, m, form, lemma, upos, xpos, prefix, suffix, cluster, feat_ptr,
                                 feat_ids, mask, on, buf)
                out, n = _append(out, n, buf, k)
                if order >= 1:
                    k = sib_features(h, s, m, d, form, lemma, upos, xpos, cluster, mask, on,
                                     buf)
                    out, n = _append(out, n, buf, k)
                if g >= 0:
                    k = grand_features(g, h, m, form, upos, xpos, cluster, feat_ptr, feat_ids, mask,
                                       on, buf)
                    out, n = _append(out, n, buf, k)
                    k = gsib_features(g, h, s, m, d, form, upos, mask, on, buf)
                    out, n = _append(out, n, buf, k)
                s = m
            if order >= 1 and not (h == 0 and d == 0):
                k = sib_features(h, s, NO_WORD, d, form, lemma, upos, xpos, cluster, mask, on, buf)
                out, n = _append(out, n, buf, k)
                if g >= 0:
                    k = gsib_features(g, h, s, NO_WORD, d, form, upos, mask, on, buf)
                    out, n = _append(out, n, buf, k)
    return out[:n]


def all_arcs(N):
    """The keep mask of every possible arc of a sentence of ``N - 1`` words."""
    keep = np.ones((N, N), dtype=bool)
    keep[:, 0] = False
    np.fill_diagonal(keep, False)
    return keep


def score_all_arcs(enc, w, bits):
    """Scores ``(N, N)`` of every arc of an encoded sentence under weights ``w`` (2**bits)."""
    N = enc.n + 1
    arc = np.empty((N, N))
    score_arcs(WordArrays(*enc.arrays()), Weights(w, np.uint64((1 << bits) - 1), ALL_TEMPLATES),
               all_arcs(N), arc)
    return arc
