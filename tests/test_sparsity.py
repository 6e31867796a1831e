"""Structured sparsity over the parser's templates (train --template-budget): template
switches in the feature kernels, recorded template ids, the budget-driven group-lasso step
and the lazy average through it, and training that leaves templates out."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import synthetic
from test_learning import HAND, _mix, _tmpl

from depparse import train
from depparse.config import ModelConfig
from depparse.conllu import read_conllu, read_sentence
from depparse.encoding.vocab import Vocabularies
from depparse.errors import ConfigError
from depparse.features import templates as T
from depparse.features.hashing import split_recorded
from depparse.features.parts import (
    ALL_TEMPLATES,
    all_arcs,
    arc_features,
    model_families,
    parser_templates,
    structure_features,
    template_switches,
)
from depparse.inference.parser import Parser
from depparse.learn.perceptron import Trainer, gold_structure
from depparse.learn.sparsity import TemplateGroups, budget_threshold, family_budgets
from depparse.model import Model

BITS = 20
MASK = np.uint64((1 << BITS) - 1)


@pytest.fixture(scope="module")
def hand():
    s = read_sentence(HAND)
    v = Vocabularies.build([s])
    return s, v, v.encode(s)


def _arc(e, on, h=4, m=3):
    buf = np.empty(1024, dtype=np.int64)
    k = arc_features(h, m, *e.arrays(), MASK, on, buf)
    return buf[:k].copy()


def test_switched_off_template_emits_nothing(hand):
    _, _, e = hand
    full = _arc(e, ALL_TEMPLATES)
    less = _arc(e, template_switches("ARC_HW_MW, ARC_HP_MP"))
    assert full.size - less.size == 4  # each emitted twice: direction; direction+distance
    gone = {_mix(_tmpl(T.ARC_HW_MW, e.form[4], e.form[3]), a) & int(MASK) for a in (1, 17)}
    gone |= {_mix(_tmpl(T.ARC_HP_MP, e.upos[4], e.upos[3]), a) & int(MASK) for a in (1, 17)}
    assert gone <= set(full.tolist()) and not gone & set(less.tolist())
    assert sorted(less.tolist() + sorted(gone)) == sorted(full.tolist())


def test_recorded_ids_name_the_template_of_every_index(hand):
    s, _, e = hand
    rec = template_switches(record=True)
    idx, tid = split_recorded(_arc(e, rec))
    assert np.array_equal(idx, _arc(e, ALL_TEMPLATES))
    hw_mw = _mix(_tmpl(T.ARC_HW_MW, e.form[4], e.form[3]), 17) & int(MASK)
    assert tid[list(idx).index(hw_mw)] == T.ARC_HW_MW
    assert set(tid.tolist()) <= set(parser_templates().values())
    # a whole structure: the recorded indices are the plain ones, template by template
    mods, gpar = gold_structure(np.asarray(s.heads, dtype=np.int64))
    only = np.ones(e.n + 1, dtype=bool)
    raw = structure_features(*e.arrays(), MASK, rec, 2, mods, gpar, only)
    plain = structure_features(*e.arrays(), MASK, ALL_TEMPLATES, 2, mods, gpar, only)
    idx, tid = split_recorded(raw)
    assert np.array_equal(idx, plain)
    for name in ("SIB_SP_MP", "GRAND_GP_HP_MP", "GSIB_GP_SP_MP"):  # each family is there
        off = structure_features(*e.arrays(), MASK, template_switches(name), 2, mods, gpar,
                                 only)
        assert sorted(off.tolist()) == sorted(idx[tid != getattr(T, name)].tolist())


def test_template_names_are_checked():
    assert ModelConfig(templates_off=" ARC_HW_MW ,SIB_SP_MP").templates_off == \
        "ARC_HW_MW,SIB_SP_MP"
    with pytest.raises(ConfigError, match="not a parser feature template: ARC_NOPE"):
        ModelConfig(templates_off="ARC_NOPE")
    with pytest.raises(ConfigError, match="LABEL"):  # a labeler template is not the parser's
        ModelConfig(templates_off="LABEL_MW")
    assert len(parser_templates()) == int((ALL_TEMPLATES > 0).sum())


def test_budget_threshold():
    r = np.array([0.0, 5.0, 1.0, 4.0, 3.0, 2.0])
    assert budget_threshold(r, 2) == pytest.approx(3.5)  # between the 2nd (4) and 3rd (3)
    assert budget_threshold(r, 5) == 0.0  # five positive ratios: nothing to shrink
    assert budget_threshold(r, 4) == pytest.approx(1.5)


@pytest.mark.parametrize("head_bigrams", [False, True], ids=["gs", "gsh"])
def test_family_budgets_share_the_budget(head_bigrams):
    families = model_families(head_bigrams)
    fams = family_budgets(60, families)
    names = parser_templates(families)
    assert sorted(t for ids, _ in fams for t in ids) == sorted(names.values())
    assert len(names) == (113 + 13 if head_bigrams else 113)
    for ids, bj in fams:  # in proportion to the family's size
        assert abs(bj - 60 * ids.size / len(names)) <= 0.5
    assert [bj for _, bj in family_budgets(1, families)] == [1] * len(families)


def test_prox_keeps_each_familys_budget_and_shrinks_by_the_group_lasso_step():
    """Four arc templates and three sibling templates of different sizes, budget 8: the arc
    family may keep round(8 * 60 / 113) = 4 (all of its four), the sibling family
    round(8 * 22 / 113) = 2 (of its three).  Expected weights from the definition."""
    rng = np.random.default_rng(3)
    sizes = {T.ARC_HW: 4, T.ARC_HP: 8, T.ARC_MW: 2, T.ARC_MP: 5, T.SIB_SP_MP: 16,
             T.SIB_SW_MW: 3, T.SIB_SP_MW: 6}
    g = TemplateGroups(64, budget=8, every=1)
    w = np.zeros(64)
    start = 0
    for tid, n in sizes.items():
        g.owner[start:start + n] = tid
        w[start:start + n] = rng.normal(size=n)
        start += n
    w0 = w.copy()
    norm = {t: np.linalg.norm(w0[g.owner == t]) for t in sizes}
    d = {t: max(np.log2(n), 1.0) for t, n in sizes.items()}
    sibs = {T.SIB_SP_MP, T.SIB_SW_MW, T.SIB_SP_MW}
    sib = sorted((norm[t] / d[t] for t in sibs), reverse=True)
    tau = {t: (sib[1] + sib[2]) / 2 if t in sibs else 0.0 for t in sizes}
    acc = np.zeros(64)
    assert g.prox(w, acc, c=7.0) == 6
    for t in sizes:
        want = max(0.0, 1 - tau[t] * d[t] / norm[t]) * w0[g.owner == t]
        np.testing.assert_allclose(w[g.owner == t], want, atol=1e-12)
    np.testing.assert_allclose(acc, 7.0 * (w - w0), atol=1e-12)
    assert not w[g.owner < 0].any()
    w1 = w.copy()  # a second call after the same examples (an epoch's end) shrinks no further
    assert g.prox(w, acc, c=7.0) == 6 and np.array_equal(w, w1) and g.steps == 1
    kept = {r["template"] for r in g.report(w) if r["kept"]}
    assert len(kept) == 6 and {"ARC_HW", "ARC_HP", "ARC_MW", "ARC_MP"} <= kept


def test_lazy_average_through_proximal_steps():
    """Group-lasso steps between examples: the lazy average still equals the eager one."""
    tr = synthetic.sentences(40, seed=5)
    cfg = ModelConfig(model="gs", bits=14, pruner_bits=14)
    vocab = Vocabularies.build(tr)
    trainer = Trainer(cfg, vocab, pruner=None)
    trainer.group_lasso(budget=10, every=7)
    enc = [vocab.encode(s) for s in tr]
    heads = [np.asarray(s.heads, dtype=np.int64) for s in tr]
    keep = [all_arcs(e.n + 1) for e in enc]
    total = np.zeros(1 << cfg.bits)
    steps = 0
    for _ in range(3):
        for i in np.random.default_rng([0, trainer.epoch]).permutation(len(tr)):
            trainer.step(enc[i], heads[i], keep[i])
            total += trainer.w  # the weights after each example ...
            steps += 1
            if trainer.c % trainer.groups.every == 0:  # ... a step acts from the next one on
                trainer.groups.prox(trainer.w, trainer.acc, trainer.c)
        trainer.epoch += 1
    assert trainer.groups.steps == steps // 7
    np.testing.assert_allclose(trainer.averaged(), total / steps, rtol=0, atol=1e-9)
    norm, _ = trainer.groups.norms(trainer.w)
    assert (norm > 0).sum() > 10  # updates since the last step brought templates back
    shares = sum(bj for _, bj in family_budgets(10, model_families(False)))
    assert 0 < trainer.groups.prox(trainer.w, trainer.acc, trainer.c) <= shares


@pytest.mark.corpora
@pytest.mark.slow  # trains on en_ewt slices: 27-32 s, the slowest of the fast suite (measured)
def test_template_budget_on_a_real_treebank(corpora_dir, tmp_path):
    """500 en_ewt sentences, budget 30: the model keeps at most 30 templates, its file says
    which it left out and parses as the model in memory, and its kernels never emit them."""
    tr = read_conllu(corpora_dir / "en_ewt" / "en_ewt-ud-train.conllu")[:500]
    dev = read_conllu(corpora_dir / "en_ewt" / "en_ewt-ud-dev.conllu")[:100]
    kw = dict(model="gs", bits=20, pruner_bits=18, epochs=2, seed=0, progress=False,
              tokenizer=False, tagger=False, labeler_epochs=0)
    m = train(tr, dev, template_budget=30, template_epochs=2, **kw)
    off = m.config.templates_off.split(",")
    sel = [h["template_selection"] for h in m.info["history"] if "template_selection" in h][0]
    assert sel["left_out"] == off
    assert sel["kept"] == len(parser_templates(model_families(False))) - len(off)
    shares = sum(bj for _, bj in family_budgets(30, model_families(False)))
    assert 0 < sel["kept"] <= shares
    assert all(e["templates"] <= shares for e in sel["epochs"])
    p = Parser(m)
    assert all(p.engine.templates_on[getattr(T, t)] == 0 for t in off)
    m.save(tmp_path / "m.npz")
    loaded = Model.load(tmp_path / "m.npz")
    assert loaded.config.templates_off == m.config.templates_off
    # the file's 8-bit weights in the model in memory: the same parses iff the file restores
    # which templates the kernels leave out
    m.weights, m.pruner = loaded.weights, loaded.pruner
    a = [r.heads for r in Parser(m).engine.parse_heads(dev)]
    b = [r.heads for r in Parser(loaded).engine.parse_heads(dev)]
    every = dataclasses.replace(loaded.config, templates_off="")
    c = [r.heads for r in Parser(dataclasses.replace(loaded, config=every)).engine.parse_heads(dev)]
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    # with every template on, the left-out templates' hashed indices read weights that other
    # templates wrote (collisions at 2**20): other scores, other trees somewhere
    assert not all(np.array_equal(x, y) for x, y in zip(a, c, strict=True))
    full = train(tr, dev, **kw)
    assert np.count_nonzero(m.weights) < np.count_nonzero(full.weights)
    print(f"kept {sel['kept']} templates; non-zero weights {np.count_nonzero(m.weights):,} vs "
          f"{np.count_nonzero(full.weights):,}; dev UAS {m.info['final_dev']['uas']:.2f} vs "
          f"{full.info['final_dev']['uas']:.2f}")


def test_resume_after_choosing_templates_is_bit_identical(tmp_path):
    """The choice is made once, before the first epoch: a run resumed from its checkpoint
    keeps it (the checkpoint's configuration) and ends with the same weights."""
    tr = synthetic.sentences(60, seed=7)
    kw = dict(model="gs", bits=16, pruner_bits=14, seed=4, progress=False, pruner_folds=2,
              template_budget=8, template_epochs=1, labeler_epochs=0)
    full = train(tr, None, epochs=3, checkpoint=tmp_path / "a.ckpt.npz", **kw)
    train(tr, None, epochs=1, checkpoint=tmp_path / "b.ckpt.npz", **kw)
    resumed = train(tr, None, epochs=3, checkpoint=tmp_path / "b.ckpt.npz", resume=True, **kw)
    assert full.config.templates_off and resumed.config.templates_off == full.config.templates_off
    assert np.array_equal(full.weights, resumed.weights)
    assert sum("template_selection" in h for h in resumed.info["history"]) == 1


def test_template_budget_is_refused_by_parameter_mixing():
    from depparse.config import TrainConfig
    from depparse.distributed import train_distributed

    with pytest.raises(ConfigError, match="template_budget"):
        train_distributed(synthetic.sentences(5, seed=1), None, ModelConfig(), None,
                          TrainConfig(template_budget=10), None, shards=1, progress=False)
