"""The part tables hash shared feature prefixes once (depparse.features.parts.fill_scores):
the same indices and the same scores, to the bit, as the features of each part on its own."""

from __future__ import annotations

import numpy as np
import pytest
from test_learning import HAND, _mix, _tmpl

from depparse.conllu import read_sentence
from depparse.encoding.ids import BOS, END, EOS, START
from depparse.encoding.vocab import Vocabularies
from depparse.features import templates as T
from depparse.features.hashing import CFINE, CSHIFT, RECORD, TID_SHIFT
from depparse.features.parts import (
    ALL_TEMPLATES,
    MAX_FEATS,
    MAX_MORPH,
    Weights,
    WordArrays,
    all_arcs,
    arc_features,
    grand_features,
    gsib_features,
    parser_templates,
    score_arcs,
    sib_features,
    template_switches,
)
from depparse.features.scoring import build_parts

BITS = 16
MASK = (1 << BITS) - 1


@pytest.fixture(scope="module")
def enc():
    s = read_sentence(HAND)
    return Vocabularies.build([s]).encode(s)


def _dist(d):
    for hi, b in ((5, d), (7, 6), (10, 7), (14, 8), (20, 9), (30, 10)):
        if d <= hi:
            return b
    return 11


def _gsib_twin(e, g, h, s, m, d, off=()):
    """The grand-sibling feature indices of ``(g, h, s, m)``, written from the template list
    (atoms hashed in full for every part)."""
    a = 256 + (2 if h > g else 0) + d
    gp, hp = e.upos[g], e.upos[h]
    sp = START if s < 0 else e.upos[s]
    mp = END if m < 0 else e.upos[m]
    sw = START if s < 0 else e.form[s]
    mw = END if m < 0 else e.form[m]
    feats = [(T.GSIB_GP_HP_SP_MP, (gp, hp, sp, mp)), (T.GSIB_GP_SP_MP, (gp, sp, mp)),
             (T.GSIB_GW_HP_SP_MP, (e.form[g], hp, sp, mp)), (T.GSIB_GP_SP_MW, (gp, sp, mw)),
             (T.GSIB_GP_SW_MP, (gp, sw, mp)), (T.GSIB_GP_HP_SW_MW, (gp, hp, sw, mw))]
    if s >= 0 and m >= 0:
        feats.append((T.GSIB_GP_HP_SP_MP_DIST_SM, (gp, hp, sp, mp, _dist(abs(m - s)))))
    return [_mix(_tmpl(t, *atoms), a) & MASK for t, atoms in feats if t not in off]


@pytest.mark.parametrize("off", [(), ("GSIB_GP_SP_MP", "GSIB_GP_HP_SP_MP_DIST_SM")])
def test_gsib_features_equal_their_template_list(enc, off):
    on = template_switches(",".join(off))
    off_ids = {getattr(T, name) for name in off}
    N = enc.n + 1
    buf = np.empty(64, dtype=np.int64)
    seen = 0
    for g in range(N):
        for h in range(1, N):
            for s in range(-1, N):
                for m in range(-1, N):
                    for d in range(2):
                        k = gsib_features(g, h, s, m, d, enc.form, enc.upos, np.uint64(MASK),
                                          on, buf)
                        assert buf[:k].tolist() == _gsib_twin(enc, g, h, s, m, d, off_ids)
                        seen += k
    assert seen > 0


def _dot(w, idx):
    t = 0.0
    for i in idx:
        t += w[i]
    return t


def _table_twin(enc, keep, w, order):
    """The automaton tables of fill_scores, part by part with the feature kernels and the
    same order of additions: ``sib + (grand + grand-sibling)``."""
    table = build_parts(enc, keep, w, BITS, order)
    pa = table.part_arrays()
    words = WordArrays(*enc.arrays())
    mask = np.uint64(MASK)
    buf = np.empty(1024, dtype=np.int64)
    tab = np.full(pa.tab.shape, np.nan)
    for h in range(enc.n + 1):
        for d in range(2):
            L, c0 = pa.cand_len[h, d], pa.cand_off[h, d]
            W1 = L + 1
            mods = [-1] + [pa.cand[c0 + i] for i in range(L)]
            for gi in range(pa.gp_len[h]):
                g = pa.gp[pa.gp_off[h] + gi]
                o = pa.tab_off[pa.gp_off[h] + gi, d]
                if h == 0 and d == 0:
                    tab[o] = 0.0
                    continue
                for p in range(W1):
                    s = mods[p]
                    for q in range(W1):
                        if q < p:
                            tab[o + p * W1 + q] = -np.inf
                            continue
                        m = -1 if q == L else mods[q + 1]
                        k = sib_features(h, s, m, d, words.form, words.lemma, words.upos,
                                         words.xpos, words.cluster, mask, ALL_TEMPLATES, buf)
                        v = _dot(w, buf[:k])
                        if order == 2 and g >= 0:
                            gr = 0.0
                            if m >= 0:
                                k = grand_features(g, h, m, words.form, words.upos, words.xpos,
                                                   words.cluster, words.feat_ptr,
                                                   words.feat_ids, mask, ALL_TEMPLATES, buf)
                                gr = _dot(w, buf[:k])
                            k = gsib_features(g, h, s, m, d, words.form, words.upos, mask,
                                              ALL_TEMPLATES, buf)
                            v += gr + _dot(w, buf[:k])
                        tab[o + p * W1 + q] = v
    return table.tab, tab


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("pruned", [False, True])
def test_part_tables_equal_part_by_part_scores(enc, order, pruned):
    rng = np.random.default_rng(order)
    w = rng.normal(size=1 << BITS)
    keep = all_arcs(enc.n + 1)
    if pruned:
        keep &= rng.random(keep.shape) < 0.6
    got, want = _table_twin(enc, keep, w, order)
    assert not np.isnan(want).any()
    assert np.array_equal(got, want)  # bit for bit, -inf included
    assert len(parser_templates(("GSIB",))) == 7  # the twin's template list is complete


# ---------------------------------------------------------------------------------------
# arcs: the head's atoms hashed once per head (score_arcs), the rest per arc


def _ctx(tags, i):
    return BOS if i < 0 else EOS if i >= len(tags) else tags[i]


def _between(upos, h, m):
    """The distinct UPOS strictly between h and m in order of first occurrence, with counts
    (tags told apart modulo 64, as the kernel does)."""
    lo, hi = min(h, m), max(h, m)
    seen, out = set(), []
    for b in range(lo + 1, hi):
        if upos[b] % 64 not in seen:
            seen.add(upos[b] % 64)
            out.append((upos[b], sum(upos[b2] == upos[b] for b2 in range(b, hi))))
    return out


def _one(out, on, tid, atoms, att, mask):
    if on[tid]:
        v = _mix(_tmpl(tid, *atoms), att) & mask
        out.append(v | (tid << TID_SHIFT) if on[tid] == RECORD else v)


def _pair(out, on, tid, atoms, a1, a2, mask):
    _one(out, on, tid, atoms, a1, mask)
    _one(out, on, tid, atoms, a2, mask)


def _arc_twin(h, m, form, lemma, upos, xpos, prefix, suffix, cluster, feat_ptr, feat_ids,
              mask, on):
    """The feature indices of arc ``h -> m``: the kernel as it was before it hashed the
    head's atoms once per head, in plain Python (one emission per template, hashed in full)."""
    d = 1 if m > h else 0
    dist = abs(m - h)
    a1 = int(1 + d)  # direction
    a2 = int(16 + d * 32 + _dist(dist))  # direction and distance
    hw = form[h]
    hp = upos[h]
    hl = lemma[h]
    mw = form[m]
    mp = upos[m]
    ml = lemma[m]
    out = []
    _pair(out, on, T.ARC_BIAS, (0,), a1, a2, mask)  # bias
    _pair(out, on, T.ARC_HW_HP, (hw, hp), a1, a2, mask)
    _pair(out, on, T.ARC_HW, (hw,), a1, a2, mask)
    _pair(out, on, T.ARC_HP, (hp,), a1, a2, mask)
    _pair(out, on, T.ARC_MW_MP, (mw, mp), a1, a2, mask)
    _pair(out, on, T.ARC_MW, (mw,), a1, a2, mask)
    _pair(out, on, T.ARC_MP, (mp,), a1, a2, mask)
    _pair(out, on, T.ARC_HW_HP_MW_MP, (hw, hp, mw, mp), a1, a2, mask)
    _pair(out, on, T.ARC_HP_MW_MP, (hp, mw, mp), a1, a2, mask)
    _pair(out, on, T.ARC_HW_MW_MP, (hw, mw, mp), a1, a2, mask)
    _pair(out, on, T.ARC_HW_HP_MP, (hw, hp, mp), a1, a2, mask)
    _pair(out, on, T.ARC_HW_HP_MW, (hw, hp, mw), a1, a2, mask)
    _pair(out, on, T.ARC_HW_MW, (hw, mw), a1, a2, mask)
    _pair(out, on, T.ARC_HP_MP, (hp, mp), a1, a2, mask)
    # lemmas
    _pair(out, on, T.ARC_HL_ML, (hl, ml), a1, a2, mask)
    _pair(out, on, T.ARC_HL_MP, (hl, mp), a1, a2, mask)
    _pair(out, on, T.ARC_HP_ML, (hp, ml), a1, a2, mask)
    _pair(out, on, T.ARC_HL_HP, (hl, hp), a1, a2, mask)
    _pair(out, on, T.ARC_ML_MP, (ml, mp), a1, a2, mask)
    # affixes
    _pair(out, on, T.ARC_HSUF_MSUF, (suffix[h], suffix[m]), a1, a2, mask)
    _pair(out, on, T.ARC_HSUF_HP_MP, (suffix[h], hp, mp), a1, a2, mask)
    _pair(out, on, T.ARC_HP_MSUF_MP, (hp, suffix[m], mp), a1, a2, mask)
    _pair(out, on, T.ARC_HPRE_HP_MP, (prefix[h], hp, mp), a1, a2, mask)
    _pair(out, on, T.ARC_HP_MPRE_MP, (hp, prefix[m], mp), a1, a2, mask)
    # XPOS (language-specific tags)
    hx = xpos[h]
    mx = xpos[m]
    _pair(out, on, T.ARC_HX_MX, (hx, mx), a1, a2, mask)
    _pair(out, on, T.ARC_HW_HX_MX, (hw, hx, mx), a1, a2, mask)
    _pair(out, on, T.ARC_HX_MW_MX, (hx, mw, mx), a1, a2, mask)
    _pair(out, on, T.ARC_HX_MX_HP, (hx, mx, hp), a1, a2, mask)
    hxl = _ctx(xpos, h - 1)
    hxr = _ctx(xpos, h + 1)
    mxl = _ctx(xpos, m - 1)
    mxr = _ctx(xpos, m + 1)
    _pair(out, on, T.ARC_HX_HXR_MXL_MX, (hx, hxr, mxl, mx), a1, a2, mask)
    _pair(out, on, T.ARC_HXL_HX_MX_MXR, (hxl, hx, mx, mxr), a1, a2, mask)
    # word clusters (Koo et al. 2008), when the model has them: fine and coarse classes
    if cluster[0] != 0:
        hc = cluster[h] & CFINE
        mc = cluster[m] & CFINE
        hcc = cluster[h] >> CSHIFT
        mcc = cluster[m] >> CSHIFT
        _pair(out, on, T.ARC_HC_MC, (hc, mc), a1, a2, mask)
        _pair(out, on, T.ARC_HCC_MCC, (hcc, mcc), a1, a2, mask)
        _pair(out, on, T.ARC_HC_HP_MP, (hc, hp, mp), a1, a2, mask)
        _pair(out, on, T.ARC_HP_MC_MP, (hp, mc, mp), a1, a2, mask)
        _pair(out, on, T.ARC_HCC_HP_MCC_MP, (hcc, hp, mcc, mp), a1, a2, mask)
        _pair(out, on, T.ARC_HC_HP_MC_MP, (hc, hp, mc, mp), a1, a2, mask)
        _pair(out, on, T.ARC_HC_MW, (hc, mw), a1, a2, mask)
        _pair(out, on, T.ARC_HW_MC, (hw, mc), a1, a2, mask)
        _pair(out, on, T.ARC_HCC_HP_MP, (hcc, hp, mp), a1, a2, mask)
        _pair(out, on, T.ARC_HP_MCC_MP, (hp, mcc, mp), a1, a2, mask)
        _pair(out, on, T.ARC_HC_HP, (hc, hp), a1, a2, mask)
        _pair(out, on, T.ARC_MC_MP, (mc, mp), a1, a2, mask)
    # surrounding UPOS
    hpl = _ctx(upos, h - 1)
    hpr = _ctx(upos, h + 1)
    mpl = _ctx(upos, m - 1)
    mpr = _ctx(upos, m + 1)
    _pair(out, on, T.ARC_HP_HPR_MPL_MP, (hp, hpr, mpl, mp), a1, a2, mask)
    _pair(out, on, T.ARC_HPL_HP_MPL_MP, (hpl, hp, mpl, mp), a1, a2, mask)
    _pair(out, on, T.ARC_HP_HPR_MP_MPR, (hp, hpr, mp, mpr), a1, a2, mask)
    _pair(out, on, T.ARC_HPL_HP_MP_MPR, (hpl, hp, mp, mpr), a1, a2, mask)
    _pair(out, on, T.ARC_HP_HPR_MP, (hp, hpr, mp), a1, a2, mask)
    _pair(out, on, T.ARC_HP_MPL_MP, (hp, mpl, mp), a1, a2, mask)
    _pair(out, on, T.ARC_HPL_HP_MP, (hpl, hp, mp), a1, a2, mask)
    _pair(out, on, T.ARC_HP_MP_MPR, (hp, mp, mpr), a1, a2, mask)
    # lexical context
    _pair(out, on, T.ARC_HW_MPL_MP, (hw, mpl, mp), a1, a2, mask)
    _pair(out, on, T.ARC_HW_MP_MPR, (hw, mp, mpr), a1, a2, mask)
    _pair(out, on, T.ARC_HPL_HP_MW, (hpl, hp, mw), a1, a2, mask)
    _pair(out, on, T.ARC_HP_HPR_MW, (hp, hpr, mw), a1, a2, mask)
    # sentence boundaries: the first and the last word (final punctuation, fronted phrases)
    N = len(form)
    hb = 0 if h == 0 else (1 if h == 1 else 0) + (2 if h == N - 1 else 0)
    mb = (1 if m == 1 else 0) + (2 if m == N - 1 else 0)
    _pair(out, on, T.ARC_HP_MP_HB_MB, (hp, mp, hb, mb), a1, a2, mask)
    _one(out, on, T.ARC_HP_MW_HB_MB, (hp, mw, hb, mb), a1, mask)
    # UPOS in between (each distinct tag once), and how often each tag occurs (capped at 3)
    if dist > 1:
        for bp, cnt in _between(upos, h, m):
            _pair(out, on, T.ARC_HP_BETWEEN_MP, (hp, bp, mp), a1, a2, mask)
            _one(out, on, T.ARC_HP_BETWEEN_MP_COUNT, (hp, bp, mp, min(cnt, 3)), a1, mask)
    # morphology
    for j in range(feat_ptr[m], min(feat_ptr[m + 1], feat_ptr[m] + MAX_MORPH)):
        _one(out, on, T.ARC_HP_MP_MFEAT, (hp, mp, feat_ids[j]), a1, mask)
    for j in range(feat_ptr[h], min(feat_ptr[h + 1], feat_ptr[h] + MAX_MORPH)):
        _one(out, on, T.ARC_HP_HFEAT_MP, (hp, feat_ids[j], mp), a1, mask)
    return out



def _random_words(rng, n, clusters):
    """A random encoded sentence of ``n`` words (index 0 the root): every atom drawn, FEATS
    of 0-3 features per word, contextual classes or none."""
    N = n + 1
    ints = lambda hi: rng.integers(16, hi, size=N).astype(np.int64)  # noqa: E731
    nfeat = rng.integers(0, 4, size=N)
    feat_ptr = np.concatenate([[0], np.cumsum(nfeat)]).astype(np.int64)
    cluster = ((ints(40) << CSHIFT) | ints(60)) if clusters else np.zeros(N, dtype=np.int64)
    upos = rng.integers(6, 14, size=N).astype(np.int64)  # few tags: repeats in between
    feat_ids = rng.integers(16, 90, size=feat_ptr[-1]).astype(np.int64)
    return WordArrays(ints(10**6), ints(10**6), upos, ints(60), ints(500), ints(500), cluster,
                      feat_ptr, feat_ids)


def _case(seed, n, clusters, family, first, switches):
    """A random sentence (:func:`_random_words`), its atoms as Python lists and the template
    switches of one test case: every template on, a third of ``family``'s off (every third
    from ``first``), or every one recording."""
    words = _random_words(np.random.default_rng(seed), n, clusters)
    off = ",".join(sorted(parser_templates((family,)))[first::3])
    on = {"all": ALL_TEMPLATES, "off": template_switches(off),
          "record": template_switches(record=True)}[switches]
    return words, [[int(x) for x in a] for a in words], on


@pytest.mark.parametrize("clusters", [False, True])
@pytest.mark.parametrize("switches", ["all", "off", "record"])
def test_arc_features_equal_the_full_hash_of_every_template(clusters, switches):
    words, lists, on = _case(7 + clusters, 11, clusters, "ARC", 0, switches)
    N = len(words.form)
    buf = np.empty(MAX_FEATS, dtype=np.int64)
    for h in range(N):
        for m in range(1, N):
            if m == h:
                continue
            k = arc_features(h, m, *words, np.uint64(MASK), on, buf)
            assert buf[:k].tolist() == _arc_twin(h, m, *lists, MASK, on)
    assert clusters == bool(words.cluster[0])
    assert (words.cluster[1:] & CFINE).any() == clusters


def test_score_arcs_hashes_each_head_once_with_the_same_scores():
    """score_arcs (the head's states once per head) against arc_features arc by arc."""
    rng = np.random.default_rng(3)
    words = _random_words(rng, 14, True)
    w = rng.normal(size=1 << BITS)
    N = len(words.form)
    keep = all_arcs(N) & (rng.random((N, N)) < 0.7)
    arc = np.empty((N, N))
    score_arcs(words, Weights(w, np.uint64(MASK), ALL_TEMPLATES), keep, arc)
    buf = np.empty(MAX_FEATS, dtype=np.int64)
    want = np.full((N, N), -np.inf)
    for h, m in zip(*np.nonzero(keep), strict=True):
        want[h, m] = _dot(w, buf[:arc_features(h, m, *words, np.uint64(MASK), ALL_TEMPLATES,
                                                buf)])
    assert np.isfinite(want).sum() == keep.sum() > 0
    assert np.array_equal(arc, want)


# ---------------------------------------------------------------------------------------
# grandparents: the atoms of (g, h) hashed once per grandparent and head (fill_scores)


def _grand_twin(g, h, m, form, upos, xpos, cluster, feat_ptr, feat_ids, mask, on):
    """The grandparent feature indices of ``g -> h -> m``: the kernel as it was before it
    hashed the atoms of ``g`` and ``h`` once, in plain Python."""
    a = int(128 + (2 if h > g else 0) + (1 if m > h else 0))
    gp = upos[g]
    gw = form[g]
    hp = upos[h]
    hw = form[h]
    mp = upos[m]
    mw = form[m]
    out = []
    _one(out, on, T.GRAND_GP_HP_MP, (gp, hp, mp), a, mask)
    _one(out, on, T.GRAND_GP_MP, (gp, mp), a, mask)
    _one(out, on, T.GRAND_GW_MP, (gw, mp), a, mask)
    _one(out, on, T.GRAND_GP_MW, (gp, mw), a, mask)
    _one(out, on, T.GRAND_GW_HP_MP, (gw, hp, mp), a, mask)
    _one(out, on, T.GRAND_GP_HW_MP, (gp, hw, mp), a, mask)
    _one(out, on, T.GRAND_GP_HP_MW, (gp, hp, mw), a, mask)
    _one(out, on, T.GRAND_GW_MW, (gw, mw), a, mask)
    _one(out, on, T.GRAND_GX_HX_MX, (xpos[g], xpos[h], xpos[m]), a, mask)
    _one(out, on, T.GRAND_GP_HP_MP_DIST_HM, (gp, hp, mp, _dist(abs(h - m))), a, mask)
    _one(out, on, T.GRAND_GP_HP_MP_DIST_GH, (gp, hp, mp, _dist(abs(g - h))), a, mask)
    _one(out, on, T.GRAND_GW_HW_MP, (gw, hw, mp), a, mask)
    _one(out, on, T.GRAND_GP_HW_MW, (gp, hw, mw), a, mask)
    _one(out, on, T.GRAND_GW_HP_MW, (gw, hp, mw), a, mask)
    # does m lie between g and h, or beyond g (the configuration non-projectivity needs)?
    _one(out, on, T.GRAND_GP_HP_MP_SAME_SIDE_OF_G,
             (gp, hp, mp, int((m > g) == (h > g))), a, mask)
    mpl = _ctx(upos, m - 1)
    mpr = _ctx(upos, m + 1)
    hpl = _ctx(upos, h - 1)
    hpr = _ctx(upos, h + 1)
    _one(out, on, T.GRAND_GP_HP_MP_MPL_MPR, (gp, hp, mp, mpl, mpr), a, mask)
    _one(out, on, T.GRAND_GP_HPL_HP_HPR_MP, (gp, hpl, hp, hpr, mp), a, mask)
    _one(out, on, T.GRAND_GW_HW_MW, (gw, hw, mw), a, mask)
    if cluster[0] != 0:
        gc = cluster[g] & CFINE
        hc = cluster[h] & CFINE
        mc = cluster[m] & CFINE
        _one(out, on, T.GRAND_GC_HP_MC, (gc, hp, mc), a, mask)
        _one(out, on, T.GRAND_GP_HC_MC, (gp, hc, mc), a, mask)
        _one(out, on, T.GRAND_GC_HC_MP, (gc, hc, mp), a, mask)
        _one(out, on, T.GRAND_GCC_HCC_MCC,
                (cluster[g] >> CSHIFT, cluster[h] >> CSHIFT, cluster[m] >> CSHIFT), a, mask)
        _one(out, on, T.GRAND_GC_MC, (gc, mc), a, mask)
    # morphology of m (VerbForm, PronType, Case ...) with the UPOS of g and h
    for j in range(feat_ptr[m], min(feat_ptr[m + 1], feat_ptr[m] + 6)):
        _one(out, on, T.GRAND_GP_HP_MP_MFEAT, (gp, hp, mp, feat_ids[j]), a, mask)
    return out



@pytest.mark.parametrize("clusters", [False, True])
@pytest.mark.parametrize("switches", ["all", "off", "record"])
def test_grand_features_equal_the_full_hash_of_every_template(clusters, switches):
    words, lists, on = _case(11 + clusters, 9, clusters, "GRAND", 1, switches)
    N = len(words.form)
    buf = np.empty(MAX_FEATS, dtype=np.int64)
    seen = 0
    for g in range(N):
        for h in range(1, N):
            for m in range(1, N):
                if len({g, h, m}) < 3:
                    continue
                k = grand_features(g, h, m, words.form, words.upos, words.xpos, words.cluster,
                                   words.feat_ptr, words.feat_ids, np.uint64(MASK), on, buf)
                assert buf[:k].tolist() == _grand_twin(g, h, m, lists[0], lists[2], lists[3],
                                                       lists[6], lists[7], lists[8], MASK, on)
                seen += k
    assert seen > 0


# ---------------------------------------------------------------------------------------
# siblings: the atoms of (h, s) hashed once per head and previous modifier (fill_scores)


def _sib_twin(h, s, m, d, form, lemma, upos, xpos, cluster, mask, on):
    """The sibling feature indices of ``s -> m`` under ``h``: the kernel as it was before it
    hashed the atoms of ``h`` and ``s`` once, in plain Python."""
    a = int(64 + d)
    hp = upos[h]
    hw = form[h]
    sp = START if s < 0 else upos[s]
    sw = START if s < 0 else form[s]
    mp = END if m < 0 else upos[m]
    mw = END if m < 0 else form[m]
    out = []
    _one(out, on, T.SIB_HP_SP_MP, (hp, sp, mp), a, mask)
    _one(out, on, T.SIB_SP_MP, (sp, mp), a, mask)
    _one(out, on, T.SIB_SW_MW, (sw, mw), a, mask)
    _one(out, on, T.SIB_SW_MP, (sw, mp), a, mask)
    _one(out, on, T.SIB_SP_MW, (sp, mw), a, mask)
    _one(out, on, T.SIB_HW_SP_MP, (hw, sp, mp), a, mask)
    _one(out, on, T.SIB_HP_SW_MP, (hp, sw, mp), a, mask)
    _one(out, on, T.SIB_HP_SP_MW, (hp, sp, mw), a, mask)
    if s >= 0 and m >= 0:
        _one(out, on, T.SIB_HP_SP_MP_DIST_SM, (hp, sp, mp, _dist(abs(m - s))), a, mask)
    sx = START if s < 0 else xpos[s]
    mx = END if m < 0 else xpos[m]
    _one(out, on, T.SIB_HX_SX_MX, (xpos[h], sx, mx), a, mask)
    _one(out, on, T.SIB_HP_SW_MW, (hp, sw, mw), a, mask)
    if m < 0:
        # how far the last modifier (or the head) is from the sentence edge on that side
        last = h if s < 0 else s
        rest = last - 1 if d == 0 else len(form) - 1 - last
        _one(out, on, T.SIB_HP_SP_EDGE_DIST, (hp, sp, _dist(rest), 0), a, mask)
    _one(out, on, T.SIB_HL_SP_MP, (lemma[h], sp, mp), a, mask)
    if cluster[0] != 0:
        sc = START if s < 0 else cluster[s] & CFINE
        mc = END if m < 0 else cluster[m] & CFINE
        scc = START if s < 0 else cluster[s] >> CSHIFT
        mcc = END if m < 0 else cluster[m] >> CSHIFT
        _one(out, on, T.SIB_HP_SC_MC, (hp, sc, mc), a, mask)
        _one(out, on, T.SIB_SC_MC, (sc, mc), a, mask)
        _one(out, on, T.SIB_HP_SCC_MCC, (hp, scc, mcc), a, mask)
        _one(out, on, T.SIB_HC_SP_MP, (cluster[h] & CFINE, sp, mp), a, mask)
        _one(out, on, T.SIB_HP_SP_MC, (hp, sp, mc), a, mask)
        _one(out, on, T.SIB_HP_SC_MP, (hp, sc, mp), a, mask)
    if m >= 0:
        # the UPOS between the previous sibling (or the head) and m, each distinct tag once:
        # punctuation and conjunctions there are the evidence of coordination and clause
        # boundaries
        prev = h if s < 0 else s
        if abs(m - prev) > 1:
            for bp, _ in _between(upos, prev, m):
                _one(out, on, T.SIB_HP_SP_MP_BETWEEN, (hp, sp, mp, bp), a, mask)
                _one(out, on, T.SIB_SP_MP_BETWEEN, (sp, mp, bp), a, mask)
        if s >= 0:
            _one(out, on, T.SIB_SP_MP_DIST_SM, (sp, mp, _dist(abs(m - s))), a, mask)
    return out



@pytest.mark.parametrize("clusters", [False, True])
@pytest.mark.parametrize("switches", ["all", "off", "record"])
def test_sib_features_equal_the_full_hash_of_every_template(clusters, switches):
    words, lists, on = _case(13 + clusters, 9, clusters, "SIB", 2, switches)
    N = len(words.form)
    buf = np.empty(MAX_FEATS, dtype=np.int64)
    seen = 0
    for h in range(N):
        for s in range(-1, N):
            for m in range(-1, N):
                if h in (s, m) or (s == m and s >= 0):
                    continue
                for d in range(2):
                    k = sib_features(h, s, m, d, words.form, words.lemma, words.upos,
                                     words.xpos, words.cluster, np.uint64(MASK), on, buf)
                    assert buf[:k].tolist() == _sib_twin(h, s, m, d, *lists[:4], lists[6],
                                                         MASK, on)
                    seen += k
    assert seen > 0
