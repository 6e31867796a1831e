"""The registry of feature templates: one id per template, unique across all families.

A feature's weight index is the hash of its template id and its atoms
(:mod:`depparse.features.hashing`), so two templates with the same id share weights whenever
their atoms coincide.  Every template id used by a feature kernel is a name from this table
(the kernels read them as ``T.NAME``); :func:`_check_unique`, run at import, refuses a table
in which two names have the same id.

Names spell the template: the part family, then its atoms in hashing order.  Atoms: ``H``
head, ``M`` modifier, ``S`` previous sibling, ``G`` grandparent (head bigrams: ``M`` and ``M2``
consecutive words, ``H1`` and ``H2`` their heads); ``W`` lower-cased form, ``L``
lemma, ``P`` UPOS, ``X`` XPOS, ``C`` / ``CC`` fine / coarse contextual class, ``SUF`` / ``PRE``
3-letter suffix / prefix, ``FEAT`` one morphological feature; ``PL`` / ``PR`` (``XL`` /
``XR``) the UPOS (XPOS) of the word to the left / right; ``B`` sentence-boundary flags;
``BETWEEN`` a UPOS strictly between the two words and ``COUNT`` how often it occurs;
``DIST_*`` bucketed distances; ``DIR`` / ``DIRDIST`` direction (and bucketed distance);
``NL`` / ``NR`` counts of left / right children; ``LSP`` / ``RSP`` the UPOS of the nearest
sibling to the left / right; ``PREV`` / ``LABEL`` consecutive labels.  Tagger and lemmatizer
(one word ``I``; ``L1``/``L2``/``R1``/``R2`` the words 1 or 2 to its left / right): ``W``
lower-cased form, ``FORM`` the form as written, ``SUFK`` / ``PREK`` the suffix / prefix of
length ``K`` (an atom), ``SHAPE`` the collapsed character classes, ``FLAG`` one orthographic
flag, ``LEN`` the length bucket, ``FIRST`` first word or not, ``P`` / ``X`` the predicted UPOS /
XPOS, ``FEATS`` the predicted FEATS bundle and ``FEAT`` one of its features.

Changing the templates changes what the weights mean: bump
:data:`depparse.features.parts.FEATURE_SET` (parser) or
:data:`depparse.features.labels.LABELER_KIND` (labeler), which model files record.

History: before depparse 0.2 the labeler's two label-bigram templates had the ids 140 and 141
of two contextual-class emission templates, and shared their weights (labeler kind ``seq``);
they are now 150 and 151 (labeler kind ``seq2``).
"""

from __future__ import annotations

__all__ = ["FAMILIES", "registry"]

#: Name prefixes of the template families.
FAMILIES = ("ARC", "SIB", "GRAND", "GSIB", "HB", "LABEL", "LTRANS", "TAG", "LEM")

# -- arc (h, m); conjoined with the direction, and (most of them) with direction and distance
ARC_BIAS = 1
ARC_HW_HP = 2
ARC_HW = 3
ARC_HP = 4
ARC_MW_MP = 5
ARC_MW = 6
ARC_MP = 7
ARC_HW_HP_MW_MP = 8
ARC_HP_MW_MP = 9
ARC_HW_MW_MP = 10
ARC_HW_HP_MP = 11
ARC_HW_HP_MW = 12
ARC_HW_MW = 13
ARC_HP_MP = 14
ARC_HL_ML = 15
ARC_HL_MP = 16
ARC_HP_ML = 17
ARC_HL_HP = 18
ARC_ML_MP = 19
ARC_HSUF_MSUF = 20
ARC_HSUF_HP_MP = 21
ARC_HP_MSUF_MP = 22
ARC_HPRE_HP_MP = 23
ARC_HP_MPRE_MP = 24
ARC_HP_HPR_MPL_MP = 25
ARC_HPL_HP_MPL_MP = 26
ARC_HP_HPR_MP_MPR = 27
ARC_HPL_HP_MP_MPR = 28
ARC_HP_HPR_MP = 29
ARC_HP_MPL_MP = 30
ARC_HPL_HP_MP = 31
ARC_HP_MP_MPR = 32
ARC_HP_BETWEEN_MP = 33
ARC_HP_MP_MFEAT = 34
ARC_HP_HFEAT_MP = 35
ARC_HP_BETWEEN_MP_COUNT = 36
ARC_HP_MP_HB_MB = 37
ARC_HP_MW_HB_MB = 38
ARC_HX_MX = 70
ARC_HW_HX_MX = 71
ARC_HX_MW_MX = 72
ARC_HX_MX_HP = 73
ARC_HX_HXR_MXL_MX = 74
ARC_HXL_HX_MX_MXR = 75
ARC_HW_MPL_MP = 76
ARC_HW_MP_MPR = 77
ARC_HPL_HP_MW = 78
ARC_HP_HPR_MW = 79
ARC_HC_MC = 200
ARC_HCC_MCC = 201
ARC_HC_HP_MP = 202
ARC_HP_MC_MP = 203
ARC_HCC_HP_MCC_MP = 204
ARC_HC_HP_MC_MP = 205
ARC_HC_MW = 206
ARC_HW_MC = 207
ARC_HCC_HP_MP = 208
ARC_HP_MCC_MP = 209
ARC_HC_HP = 210
ARC_MC_MP = 211

# -- sibling (h, s, m): s the previous modifier (or START), m the next (or END) on one side;
#    conjoined with the side
SIB_HP_SP_MP = 40
SIB_SP_MP = 41
SIB_SW_MW = 42
SIB_SW_MP = 43
SIB_SP_MW = 44
SIB_HW_SP_MP = 45
SIB_HP_SW_MP = 46
SIB_HP_SP_MW = 47
SIB_HP_SP_MP_DIST_SM = 48
SIB_HX_SX_MX = 49
SIB_HP_SP_MP_BETWEEN = 80
SIB_SP_MP_BETWEEN = 81
SIB_SP_MP_DIST_SM = 82
SIB_HP_SW_MW = 95
SIB_HL_SP_MP = 96
SIB_HP_SP_EDGE_DIST = 97
SIB_HP_SC_MC = 220
SIB_SC_MC = 221
SIB_HP_SCC_MCC = 222
SIB_HC_SP_MP = 223
SIB_HP_SP_MC = 224
SIB_HP_SC_MP = 225

# -- grandparent (g, h, m); conjoined with both directions
GRAND_GP_HP_MP = 50
GRAND_GP_MP = 51
GRAND_GW_MP = 52
GRAND_GP_MW = 53
GRAND_GW_HP_MP = 54
GRAND_GP_HW_MP = 55
GRAND_GP_HP_MW = 56
GRAND_GW_MW = 57
GRAND_GX_HX_MX = 58
GRAND_GP_HP_MP_DIST_HM = 84
GRAND_GP_HP_MP_DIST_GH = 85
GRAND_GW_HW_MP = 86
GRAND_GP_HW_MW = 87
GRAND_GW_HP_MW = 88
GRAND_GP_HP_MP_SAME_SIDE_OF_G = 89
GRAND_GP_HP_MP_MPL_MPR = 90
GRAND_GP_HPL_HP_HPR_MP = 91
GRAND_GW_HW_MW = 92
GRAND_GP_HP_MP_MFEAT = 93
GRAND_GC_HP_MC = 230
GRAND_GP_HC_MC = 231
GRAND_GC_HC_MP = 232
GRAND_GCC_HCC_MCC = 233
GRAND_GC_MC = 234

# -- grand-sibling (g, h, s, m); conjoined with the directions
GSIB_GP_HP_SP_MP = 60
GSIB_GP_SP_MP = 61
GSIB_GW_HP_SP_MP = 62
GSIB_GP_SP_MW = 63
GSIB_GP_SW_MP = 64
GSIB_GP_HP_SW_MW = 65
GSIB_GP_HP_SP_MP_DIST_SM = 66

# -- head bigram (h1 -> m, h2 -> m+1); conjoined with the shape of the two arcs (directions,
#    shared head, one word the head of the other).  ``H1``/``H2`` the heads of ``M``/``M2``.
HB_H1P_MP_H2P_M2P = 160
HB_MP_M2P = 161
HB_H1P_H2P = 162
HB_H1P_MP_M2P = 163
HB_H2P_MP_M2P = 164
HB_H1P_H2P_MP_M2P_DIST = 165
HB_MW_M2P = 166
HB_MP_M2W = 167
HB_MW_M2W = 168
HB_H1X_MX_H2X_M2X = 169
HB_MC_M2C = 170
HB_H1P_MC_H2P_M2C = 171
HB_H1C_H2C = 172

# -- labeler emissions (h, m); conjoined with the label
LABEL_DIRDIST = 100
LABEL_MW_DIR = 101
LABEL_MP_DIR = 102
LABEL_ML_DIR = 103
LABEL_MX_DIR = 104
LABEL_HP_MP_DIRDIST = 105
LABEL_HW_MP_DIR = 106
LABEL_HP_MW_DIR = 107
LABEL_HL_ML_DIR = 108
LABEL_HX_MX_DIR = 109
LABEL_HW_DIR = 110
LABEL_HP_DIR = 111
LABEL_MSUF_MP_DIR = 112
LABEL_GP_HP_MP_DIR = 113
LABEL_MPL_MP_MPR_DIR = 114
LABEL_HP_MPL_MP_DIR = 115
LABEL_HP_MP_MPR_DIR = 116
LABEL_HP_LSP_MP_DIR = 117
LABEL_HP_MP_RSP_DIR = 118
LABEL_MP_MNL_MNR = 119
LABEL_HP_HNL_HNR = 120
LABEL_HP_MP_HROOT = 121
LABEL_MP_CHILD_UPOS_DIR = 122
LABEL_HP_MP_CHILD_UPOS_DIR = 123
LABEL_LCHILDW_MP_HP = 124
LABEL_MFEAT_MP_DIR = 125
LABEL_HW_MW_DIR = 126
LABEL_MW_HP_DIRDIST = 127
LABEL_HL_ML_MP_DIR = 128
LABEL_RCHILDW_MP_HP = 129
LABEL_HFEAT_MP_DIR = 130
LABEL_HL_MP_DIR = 131
LABEL_HP_LSP_MP_RSP_DIR = 132
LABEL_HP_MP_RSP_RSP2_DIR = 133
LABEL_HL_MP_NEARESTLCHILDW_DIR = 134
LABEL_MC_DIR = 140
LABEL_MC_HP_DIR = 141
LABEL_HC_MP_DIR = 142
LABEL_HCC_MCC_DIR = 143
LABEL_MCC_MP_HP_DIRDIST = 144

# -- labeler label bigrams of consecutive children of one head; read as they are
LTRANS_PREV_LABEL_SIDE = 150
LTRANS_PREV_LABEL_SIDE_HP = 151

# -- tagger (word i); conjoined with the class of each task (UPOS, XPOS, FEATS ...)
#    stage 1: what the form and its neighbours show
TAG_BIAS = 300
TAG_W = 301
TAG_FORM = 302
TAG_SUFK = 303
TAG_PREK = 304
TAG_SHAPE = 305
TAG_FLAG = 306
TAG_LEN = 307
TAG_WL1 = 308
TAG_WL2 = 309
TAG_WR1 = 310
TAG_WR2 = 311
TAG_WL1_W = 312
TAG_W_WR1 = 313
TAG_WL1_WR1 = 314
TAG_SUF3L1 = 315
TAG_SUF3R1 = 316
TAG_SHAPEL1_SHAPE_SHAPER1 = 317
TAG_FIRST_SHAPE = 318
TAG_SUF3_WL1 = 319
TAG_SUF3_WR1 = 320
TAG_WL2_WL1 = 321
TAG_WR1_WR2 = 322
#    stage 2 (XPOS, FEATS): the same plus the predicted UPOS
TAG_P = 340
TAG_P_W = 341
TAG_P_SUFK = 342
TAG_PL1_P = 343
TAG_P_PR1 = 344
TAG_PL1_P_PR1 = 345
TAG_P_WL1 = 346
TAG_P_WR1 = 347
TAG_P_SHAPE = 348
TAG_P_FORM = 349
TAG_PL2_PL1_P = 350
TAG_P_PR1_PR2 = 351

# -- lemmatizer (word i); conjoined with the edit script
LEM_BIAS = 400
LEM_W = 401
LEM_FORM = 402
LEM_SUFK = 403
LEM_PREK = 404
LEM_SHAPE = 405
LEM_FIRST_SHAPE = 406
LEM_P = 407
LEM_P_SUFK = 408
LEM_P_W = 409
LEM_FEATS = 410
LEM_P_FEATS = 411
LEM_FEATS_SUF3 = 412
LEM_FEAT = 413
LEM_P_FEAT = 414
LEM_X = 415
LEM_X_SUF3 = 416
LEM_WL1 = 417
LEM_WR1 = 418
LEM_P_WR1 = 419
LEM_FEAT_SUF2 = 420


def registry() -> dict[str, int]:
    """Every template of the table: ``{name: id}``."""
    return {k: v for k, v in globals().items()
            if isinstance(v, int) and k.split("_")[0] in FAMILIES}


def _check_unique() -> None:
    seen: dict[int, str] = {}
    for name, tid in registry().items():
        if tid in seen:
            raise ImportError(f"feature templates {seen[tid]} and {name} have the same id {tid}")
        seen[tid] = name


_check_unique()
