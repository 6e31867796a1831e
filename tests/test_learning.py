"""Features, pruner and averaged perceptron: hand-checked, synthetic and real-data tests."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import synthetic

from depparse.api import train
from depparse.config import ModelConfig
from depparse.conllu import read_conllu, read_sentence
from depparse.decode.dual import _primal_score
from depparse.decode.marginals import arc_marginals, prune_mask
from depparse.encoding.ids import END, ROOT, START, UNK
from depparse.encoding.vocab import Vocabularies
from depparse.features import templates as T
from depparse.features.parts import (
    ALL_TEMPLATES,
    arc_features,
    parser_templates,
    sib_features,
    structure_features,
    template_switches,
)
from depparse.features.scoring import build_parts
from depparse.inference.parser import Parser
from depparse.learn.perceptron import Trainer, gold_structure
from depparse.learn.updates import diff_stats, update

# ---------------------------------------------------------------------------------------
# features on a hand-checked sentence

M64 = (1 << 64) - 1


def _mix(hv, x):
    """Python twin of the splitmix64 step in depparse.features.hashing (written from its
    definition)."""
    z = ((int(hv) ^ (int(x) & M64)) * 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def _tmpl(t, *atoms):
    hv = _mix(_mix(t, atoms[0]), 7)
    for a in atoms[1:]:
        hv = _mix(hv, a)
    return hv


HAND = """# text = The old dog barked loudly .
1\tThe\tthe\tDET\t_\tDefinite=Def|PronType=Art\t3\tdet\t_\t_
2\told\told\tADJ\t_\tDegree=Pos\t3\tamod\t_\t_
3\tdog\tdog\tNOUN\t_\tNumber=Sing\t4\tnsubj\t_\t_
4\tbarked\tbark\tVERB\t_\tMood=Ind|Tense=Past\t0\troot\t_\t_
5\tloudly\tloudly\tADV\t_\t_\t4\tadvmod\t_\t_
6\t.\t.\tPUNCT\t_\t_\t4\tpunct\t_\t_

"""


@pytest.fixture(scope="module")
def hand():
    s = read_sentence(HAND)
    v = Vocabularies.build([s])
    return s, v, v.encode(s)


def test_encoding_of_hand_sentence(hand):
    s, v, e = hand
    assert e.n == 6
    assert e.form[0] == ROOT and e.upos[0] == ROOT
    assert [v.form.items[i] for i in e.form[1:]] == ["the", "old", "dog", "barked", "loudly", "."]
    assert [v.upos.items[i] for i in e.upos[1:]] == ["DET", "ADJ", "NOUN", "VERB", "ADV", "PUNCT"]
    assert v.lemma.items[e.lemma[4]] == "bark"
    assert v.suffix.items[e.suffix[4]] == "ked" and v.prefix.items[e.prefix[4]] == "bar"
    # morphological features in CSR form: word 1 has two, word 5 none
    assert e.feat_ptr[2] - e.feat_ptr[1] == 2 and e.feat_ptr[6] - e.feat_ptr[5] == 0
    unk = Vocabularies.build([s]).encode(read_sentence(HAND.replace("dog", "wug")))
    assert unk.form[3] == UNK


def _emitted(tids, kernel_args, h, m):
    """``{template name: count}`` of the arc features of ``h -> m`` (recorded template ids)."""
    from depparse.features.hashing import split_recorded

    buf = np.empty(1024, dtype=np.int64)
    k = arc_features(h, m, *kernel_args, template_switches(record=True), buf)
    names = {v: n for n, v in tids.items()}
    out = Counter(names[int(t)] for t in split_recorded(buf[:k])[1])
    assert sum(out.values()) == k
    return out


def test_arc_features_hand_checked(hand):
    _, v, e = hand
    bits = 24
    mask = (1 << bits) - 1
    buf = np.empty(1024, dtype=np.int64)
    k = arc_features(4, 3, *e.arrays(), np.uint64(mask), ALL_TEMPLATES, buf)  # barked -> dog
    feats = set(buf[:k].tolist())
    hp, mp = e.upos[4], e.upos[3]
    # direction 0 (left), distance 1: attachments a1 = 1 + 0 and a2 = 16 + 0 * 32 + 1
    assert (_mix(_tmpl(T.ARC_HP_MP, hp, mp), 1) & mask) in feats  # (hp, mp) with direction
    assert (_mix(_tmpl(T.ARC_HP_MP, hp, mp), 17) & mask) in feats  # ... direction, distance
    assert (_mix(_tmpl(T.ARC_HW_MW, e.form[4], e.form[3]), 17) & mask) in feats  # (hw, mw)
    assert (_mix(_tmpl(T.ARC_HL_ML, e.lemma[4], e.lemma[3]), 1) & mask) in feats  # lemmas
    # surrounding UPOS (hp-1 = NOUN, hp+1 = ADV; mp-1 = ADJ)
    assert (_mix(_tmpl(T.ARC_HP_HPR_MPL_MP, hp, e.upos[5], e.upos[2], mp), 1) & mask) in feats
    # sentence boundaries: neither word is first or last (flags 0, 0)
    assert (_mix(_tmpl(T.ARC_HP_MP_HB_MB, hp, mp, 0, 0), 1) & mask) in feats
    # how many features each template emits, by name from the registry: twice (direction;
    # direction and distance), but once for the boundary template with the modifier's word,
    # once per morphological feature of m and of h, none for the word classes (this model has
    # none) and, for adjacent words, none for the UPOS in between
    arc = parser_templates(("ARC",))
    args = (*e.arrays(), np.uint64(mask))
    got = _emitted(arc, args, 4, 3)
    between = {"ARC_HP_BETWEEN_MP", "ARC_HP_BETWEEN_MP_COUNT"}
    classes = {n for n in arc if any(a in n.split("_")[1:] for a in ("HC", "HCC", "MC", "MCC"))}
    morph = {"ARC_HP_MP_MFEAT": e.feat_ptr[4] - e.feat_ptr[3],
             "ARC_HP_HFEAT_MP": e.feat_ptr[5] - e.feat_ptr[4]}
    once = {"ARC_HP_MW_HB_MB"}
    expect = {n: 2 for n in arc if n not in between | classes | set(morph) | once}
    expect.update({n: 1 for n in once}, **{n: c for n, c in morph.items() if c})
    assert classes and morph["ARC_HP_HFEAT_MP"] == 2 and morph["ARC_HP_MP_MFEAT"] == 1
    assert got == expect
    # barked -> . (distance 2): exactly one in-between UPOS (ADV); "." is the last word
    k2 = arc_features(4, 6, *e.arrays(), np.uint64(mask), ALL_TEMPLATES, buf)
    f2 = set(buf[:k2].tolist())
    assert (_mix(_tmpl(T.ARC_HP_BETWEEN_MP, hp, e.upos[5], e.upos[6]), 2) & mask) in f2
    assert (_mix(_tmpl(T.ARC_HP_MP_HB_MB, hp, e.upos[6], 0, 2), 2) & mask) in f2
    got2 = _emitted(arc, args, 4, 6)
    expect2 = {n: c for n, c in expect.items() if n != "ARC_HP_MP_MFEAT"}  # "." has none
    expect2.update(ARC_HP_BETWEEN_MP=2, ARC_HP_BETWEEN_MP_COUNT=1)
    assert e.feat_ptr[7] == e.feat_ptr[6] and got2 == expect2
    # sibling START -> dog on the left of barked, and dog -> END
    ks = sib_features(4, -1, 3, 0, e.form, e.lemma, e.upos, e.xpos, e.cluster, np.uint64(mask),
                      ALL_TEMPLATES, buf)
    assert (_mix(_tmpl(T.SIB_HP_SP_MP, hp, START, mp), 64) & mask) in set(buf[:ks].tolist())
    ks = sib_features(4, 3, -1, 0, e.form, e.lemma, e.upos, e.xpos, e.cluster, np.uint64(mask),
                      ALL_TEMPLATES, buf)
    assert (_mix(_tmpl(T.SIB_SP_MP, mp, END), 64) & mask) in set(buf[:ks].tolist())
    # loudly -> . on the right of barked: no word between the siblings; START -> . has ADV
    # (loudly) between the head and "." (the UPOS between consecutive siblings)
    ks = sib_features(4, 5, 6, 1, e.form, e.lemma, e.upos, e.xpos, e.cluster, np.uint64(mask),
                      ALL_TEMPLATES, buf)
    sib = set(buf[:ks].tolist())
    assert not any((_mix(_tmpl(T.SIB_SP_MP_BETWEEN, e.upos[5], e.upos[6], t), 65) & mask) in sib
                   for t in range(len(v.upos)))
    ks = sib_features(4, -1, 6, 1, e.form, e.lemma, e.upos, e.xpos, e.cluster, np.uint64(mask),
                      ALL_TEMPLATES, buf)
    f = _mix(_tmpl(T.SIB_SP_MP_BETWEEN, START, e.upos[6], e.upos[5]), 65) & mask
    assert f in set(buf[:ks].tolist())


@pytest.mark.parametrize("order", [0, 1, 2])
def test_part_scores_equal_feature_dot_products(hand, order):
    """The score tables and the feature vectors used for updates describe the same model."""
    s, _, e = hand
    bits = 16
    w = np.random.default_rng(order).normal(size=1 << bits)
    N = e.n + 1
    keep = np.ones((N, N), dtype=bool)
    keep[:, 0] = False
    np.fill_diagonal(keep, False)
    pt = build_parts(e, keep, w, bits, order)
    heads = np.asarray(s.heads, dtype=np.int64)
    gpos = np.full((N, N), -1, dtype=np.int64)
    for h in range(N):
        for gi in range(pt.gp_len[h]):
            if pt.gp[pt.gp_off[h] + gi] >= 0:
                gpos[h, pt.gp[pt.gp_off[h] + gi]] = gi
    score = _primal_score(pt.part_arrays(), heads, gpos)
    phi = np.zeros(1 << bits)
    mods, gpar = gold_structure(heads)
    idx = structure_features(*e.arrays(), np.uint64((1 << bits) - 1), ALL_TEMPLATES, order, mods,
                             gpar, np.ones(N, dtype=bool))
    update(phi, np.zeros(1 << bits), 0.0, idx, 1.0)
    assert phi @ w == pytest.approx(score, abs=1e-9)


# ---------------------------------------------------------------------------------------
# pruner


def test_prune_mask_keeps_best_tree_and_caps_heads():
    rng = np.random.default_rng(3)
    s = rng.normal(size=(9, 9)) * 3
    mu = arc_marginals(s)
    keep = prune_mask(s, mu, threshold=0.05, max_heads=2)
    assert not keep[:, 0].any() and not keep.diagonal().any()
    assert (keep[:, 1:].sum(axis=0) <= 3).all()  # 2 + possibly the best tree's arc
    from depparse.decode.mst import chu_liu_edmonds

    heads = chu_liu_edmonds(s, single_root=True)
    assert keep[heads[1:], np.arange(1, 9)].all()
    # a head with marginal below threshold * best is never kept (unless in the best tree)
    for m in range(1, 9):
        for h in range(9):
            if keep[h, m] and heads[m] != h:
                assert mu[h, m] >= 0.05 * mu[:, m].max()


# ---------------------------------------------------------------------------------------
# perceptron


@pytest.mark.parametrize("model", ["mst", "sib", "gs"])
def test_perceptron_learns_synthetic_grammar_exactly(model):
    tr = synthetic.sentences(150, seed=1)
    te = synthetic.sentences(60, seed=2)
    m = train(tr, None, model=model, bits=18, pruner_bits=16, epochs=6, seed=0, progress=False,
              pruner_folds=2)
    p = Parser(m)
    for data in (tr, te):
        res = p.engine.parse_heads(data)
        wrong = sum(int((r.heads[1:] != np.asarray(s.heads)[1:]).sum())
                    for r, s in zip(res, data, strict=True))
        assert wrong == 0


def test_lazy_average_equals_eager_average():
    tr = synthetic.sentences(40, seed=5)
    cfg = ModelConfig(model="sib", bits=14, pruner_bits=14)
    vocab = Vocabularies.build(tr)
    trainer = Trainer(cfg, vocab, pruner=None)
    enc = [vocab.encode(s) for s in tr]
    heads = [np.asarray(s.heads, dtype=np.int64) for s in tr]
    keeps = []
    for e in enc:
        k = np.ones((e.n + 1, e.n + 1), dtype=bool)
        k[:, 0] = False
        np.fill_diagonal(k, False)
        keeps.append(k)
    total = np.zeros(1 << cfg.bits)
    steps = 0
    for _ in range(3):
        for i in np.random.default_rng([0, trainer.epoch]).permutation(len(tr)):
            trainer.step(enc[i], heads[i], keeps[i])
            total += trainer.w
            steps += 1
        trainer.epoch += 1
    assert np.abs(trainer.w).sum() > 0  # it did learn something
    np.testing.assert_allclose(trainer.averaged(), total / steps, rtol=0, atol=1e-9)


def test_resume_is_bit_identical(tmp_path):
    tr = synthetic.sentences(60, seed=7)
    kw = dict(model="gs", bits=16, pruner_bits=14, seed=4, progress=False, pruner_folds=2)
    full = train(tr, None, epochs=3, checkpoint=tmp_path / "a.ckpt.npz", **kw)
    train(tr, None, epochs=1, checkpoint=tmp_path / "b.ckpt.npz", **kw)
    resumed = train(tr, None, epochs=3, checkpoint=tmp_path / "b.ckpt.npz", resume=True, **kw)
    assert np.array_equal(full.weights, resumed.weights)
    assert np.array_equal(full.pruner, resumed.pruner)


@pytest.mark.slow  # trains on an en_ewt slice: 22 s, the slowest left in the fast suite (measured)
@pytest.mark.corpora
def test_learns_from_real_treebank_slice(corpora_dir):
    """300 en_ewt training sentences: UAS on 300 dev sentences far above a trivial baseline.

    The baseline is the better of two trivial parsers: every word attaches to its left
    neighbour (the first word to the root), or to its right neighbour (the last to the root).
    Measured when written: gs model 75.3 UAS after 4 epochs; baseline 7.8 (left) / 28.9
    (right).  We require a 30-point margin over the better baseline.
    """
    tr = read_conllu(corpora_dir / "en_ewt" / "en_ewt-ud-train.conllu")[:300]
    dev = read_conllu(corpora_dir / "en_ewt" / "en_ewt-ud-dev.conllu")[:300]
    m = train(tr, None, model="gs", bits=20, pruner_bits=18, epochs=4, seed=0, progress=False)
    res = Parser(m).engine.parse_heads(dev, max_iter=500)
    words = sum(s.n for s in dev)
    uas = sum(int((r.heads[1:] == np.asarray(s.heads)[1:]).sum())
              for r, s in zip(res, dev, strict=True)) / words
    left = sum(int((np.arange(0, s.n) == np.asarray(s.heads)[1:]).sum()) for s in dev) / words
    right = sum(int((np.r_[np.arange(2, s.n + 1), 0] == np.asarray(s.heads)[1:]).sum())
                for s in dev) / words
    base = max(left, right)
    print(f"300-sentence gs model: dev UAS {100 * uas:.2f}; baselines left {100 * left:.2f}, "
          f"right {100 * right:.2f}")
    assert uas >= base + 0.30


def test_difference_statistics_match_dense_vectors(hand):
    """PA-I needs w . (phi(gold) - phi(pred)) and ||phi(gold) - phi(pred)||^2."""
    s, _, e = hand
    bits = 12  # small, so that collisions (repeated indices) occur
    mask = np.uint64((1 << bits) - 1)
    N = e.n + 1
    gold = np.asarray(s.heads, dtype=np.int64)
    pred = gold.copy()
    pred[1], pred[5] = 2, 3  # two wrong heads
    gm, gg = gold_structure(gold)
    pm, pg = gold_structure(pred)
    only = np.ones(N, dtype=bool)
    a = structure_features(*e.arrays(), mask, ALL_TEMPLATES, 2, gm, gg, only)
    b = structure_features(*e.arrays(), mask, ALL_TEMPLATES, 2, pm, pg, only)
    w = np.random.default_rng(0).normal(size=1 << bits)
    dense = np.bincount(a, minlength=1 << bits) - np.bincount(b, minlength=1 << bits)
    dot, norm = diff_stats(w, a, b)
    assert dot == pytest.approx(float(dense @ w))
    assert norm == float(dense @ dense)
    assert norm > 0
