"""The part tables hash shared feature prefixes once (depparse.features.parts.fill_scores):
the same indices and the same scores, to the bit, as the features of each part on its own."""

from __future__ import annotations

import numpy as np
import pytest
from test_learning import HAND, _mix, _tmpl

from depparse.conllu import read_sentence
from depparse.encoding.ids import END, START
from depparse.encoding.vocab import Vocabularies
from depparse.features import templates as T
from depparse.features.parts import (
    ALL_TEMPLATES,
    WordArrays,
    all_arcs,
    build_parts,
    grand_features,
    gsib_features,
    parser_templates,
    sib_features,
    template_switches,
)

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
