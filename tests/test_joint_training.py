"""Training for joint tagging and parsing (depparse.learn.joint, issue 30 item 2): the relaxed
decoding over Z with tags against brute force per head automaton, determinism for a seed, the
direction of an update, and the refusals where it cannot apply."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from fixtures_models import run_cli
from naive import automaton_value, brute_head_automaton

from depparse.conllu import read_conllu
from depparse.decode.joint import TagTable, decode_z_tags
from depparse.decode.parts import compile_dense
from depparse.errors import ConfigError
from depparse.features.parts import structure_features
from depparse.features.tag_arcs import tag_arc_table
from depparse.learn.joint import (
    JointTrainer,
    check_joint_training,
    joint_examples,
    train_joint,
)
from depparse.model import Model


def _dense_instance(rng, n, grandparents):
    N = n + 1
    arc = rng.standard_normal((N, N))
    sib = rng.standard_normal((N, N, N + 1))
    gr = rng.standard_normal((N, N, N)) if grandparents else None
    gs = rng.standard_normal((N, N, N, N + 1)) if grandparents else None
    k = [1] + list(rng.integers(1, 4, size=n))
    D = rng.standard_normal((N, N, 3, 3))
    D[0, :, 1:, :] = 0.0
    pt = compile_dense(arc, sib, gr, gs)
    # the D table's layout as decode/joint.py builds it (candidate indices as tag ids)
    cands = [[0]] + [list(range(c)) for c in k[1:]]
    tt = TagTable.dense(cands, [np.zeros(len(c)) for c in cands], np.zeros((3, 3)), D)
    return pt, tt.doff, tt.dtab, tt.ptr, k, (arc, sib, gr, gs, D)


@pytest.mark.parametrize("grandparents", [False, True])
def test_relaxed_decoding_vs_brute_force(grandparents):
    """Every head automaton's choice (modifiers, grandparent, own tag, modifier tags) scores
    the brute-force best over all its modifier sets, grandparents and tags: for each own tag
    ``a`` a modifier's best tag only shifts its arc (``max_b D(h, m, a, b)``)."""
    rng = np.random.default_rng(30)
    for trial in range(12):
        n = 3 + trial % 2
        pt, doff, dtab, cptr, k, (arc, sib, gr, gs, D) = _dense_instance(rng, n, grandparents)
        single = bool(trial % 3 == 0)
        mods, gpar, own, mtag = decode_z_tags(pt, doff, dtab, cptr, single)
        N = n + 1
        for h in range(N):
            best = -np.inf
            for a in range(k[h]):
                shifted = arc.copy()
                for m in range(1, N):
                    if m != h:
                        shifted[h, m] += D[h, m, a, :k[m]].max()
                _, _, val = brute_head_automaton(h, shifted, sib, gr, gs, single_root=single,
                                                 grandparents=grandparents)
                best = max(best, val)
            got = arc.copy()
            chosen = tuple(int(m) for m in np.flatnonzero(mods[h]))
            for m in chosen:
                assert 0 <= mtag[h, m] < k[m]
                got[h, m] += D[h, m, own[h], mtag[h, m]]
            g = int(gpar[h]) if grandparents and h > 0 else None
            val = automaton_value(h, chosen, g, got, sib, gr, gs)
            assert abs(val - best) <= 1e-9 * max(1.0, abs(best)), (trial, h)


@pytest.fixture(scope="module")
def tiny(syn):
    """The tiny model (sib, with a tagger) and 60 of its training sentences."""
    return Model.load(syn.model), read_conllu(syn.train)[:60]


def test_deterministic_for_a_seed(tiny):
    """Two runs with one seed give the same weights; the model given is not changed."""
    model, sents = tiny
    w0 = model.weights.copy()
    a = train_joint(model, sents, 1, folds=2, seed=3)
    b = train_joint(model, sents, 1, folds=2, seed=3)
    assert np.array_equal(a.weights, b.weights)
    assert np.array_equal(model.weights, w0)
    info = a.info["joint_training"]
    assert info["epochs"] == 1 and info["folds"] == 2 and info["sentences"] == 60
    assert not np.array_equal(a.weights, w0), "nothing learned"


def _z_score(trainer, ex, mods, gpar, own, mtag):
    """``w . phi`` of a structure over Z with tags, the arcs' tag terms read from the D table
    (:func:`~depparse.features.tag_arcs.tag_arc_table`), not from the update's features."""
    cfg = trainer.model.config
    mask = np.uint64((1 << cfg.bits) - 1)
    everyone = np.ones(ex.enc.n + 1, dtype=bool)
    idx = structure_features(*ex.enc.arrays(), mask, trainer.on, cfg.order, mods, gpar,
                             everyone)
    doff, dtab = tag_arc_table(ex.enc, ex.keep, trainer.w, cfg.bits, ex.cptr, ex.cand_upos,
                               trainer.on)
    total = float(trainer.w[idx].sum())
    for h, m in zip(*np.nonzero(mods), strict=True):
        km = ex.cptr[m + 1] - ex.cptr[m]
        total += dtab[doff[h, m] + (own[h] if h > 0 else 0) * km + mtag[h, m]]
    return total


def test_update_direction(tiny):
    """After one update on a sentence whose cost-augmented joint prediction has a wrong tag,
    its gold analysis scores higher relative to that prediction."""
    model, sents = tiny
    data = joint_examples(model, sents, folds=2, seed=0)
    tr = JointTrainer(model)
    found = False
    for ex in data:
        n = ex.enc.n
        # the prediction step() makes: decode with the cost-augmented tables
        from depparse.features.parts import build_parts
        cfg = model.config
        parts = build_parts(ex.enc, ex.keep, tr.w, cfg.bits, cfg.order, None, tr.on)
        parts.arc[ex.keep] += ex.fixed[ex.keep]
        doff, dtab = tag_arc_table(ex.enc, ex.keep, tr.w, cfg.bits, ex.cptr, ex.cand_upos,
                                   tr.on)
        parts.arc[np.isfinite(parts.arc)] += 1.0
        parts.arc[ex.heads[1:], np.arange(1, n + 1)] -= 1.0
        for h, m in zip(*np.nonzero(doff >= 0), strict=True):
            kh = 1 if h == 0 else ex.cptr[h + 1] - ex.cptr[h]
            km = ex.cptr[m + 1] - ex.cptr[m]
            blk = dtab[doff[h, m]:doff[h, m] + kh * km].reshape(kh, km)
            blk += 1.0
            blk[:, ex.gold[m]] -= 1.0
        pred = decode_z_tags(parts, doff, dtab, ex.cptr, True)
        mods, _, _, mtag = pred
        taken = np.nonzero(mods)
        if not (mtag[taken] != ex.gold[taken[1]]).any():
            continue
        gmods = np.zeros_like(mods)
        gmods[ex.heads[1:], np.arange(1, n + 1)] = True
        gold = (gmods, ex.heads, ex.gold, np.where(gmods, ex.gold[None, :], -1))
        before = _z_score(tr, ex, *gold) - _z_score(tr, ex, *pred)
        wrong, _, _ = tr.step(ex)
        assert wrong
        after = _z_score(tr, ex, *gold) - _z_score(tr, ex, *pred)
        assert after > before + 1e-9, (before, after)
        found = True
        break
    assert found, "no sentence with a wrong tag in the prediction"


def test_refused_where_it_cannot_apply(tiny, syn, tmp_path):
    """No tagger, head bigrams: a ConfigError (exit 2 and one line from the CLI, before any
    training)."""
    model, sents = tiny
    bare = dataclasses.replace(model, components={})
    with pytest.raises(ConfigError, match="no tagger"):
        check_joint_training(bare)
    gsh = dataclasses.replace(model, config=dataclasses.replace(model.config, model="gsh"))
    with pytest.raises(ConfigError, match="head bigrams"):
        check_joint_training(gsh)
    out = tmp_path / "m.npz"
    for extra, msg in ((["--no-tagger"], "--no-tagger"), (["--model", "gsh"], "head bigrams")):
        rc, _, err = run_cli(["train", "--recipe", "none",
                              "--train", syn.dev, "--bits", "12", "--epochs", "1",
                              "--joint-epochs", "1", "--out", out, *extra])
        assert rc == 2, err
        assert err.startswith("depparse: error:") and msg in err and "Traceback" not in err
        assert err.count("\n") <= 1
        assert not out.exists()


def test_train_option_fine_tunes(syn, tmp_path):
    """``depparse train --joint-epochs 1``: the model records the fine-tuning, and parses
    with ``--joint``."""
    out = tmp_path / "m.npz"
    rc, _, err = run_cli(["train", "--recipe", "none",
                          "--model", "sib", "--train", syn.train, "--bits", "14",
                          "--epochs", "1", "--joint-epochs", "1", "--no-tokenizer",
                          "--out", out, "-q"])
    assert rc == 0, err
    m = Model.load(out)
    info = m.info["joint_training"]
    assert info["epochs"] == 1 and info["folds"] == 5 and info["sentences"] == 200
    assert m.info["training"]["joint_epochs"] == 1
    parsed = tmp_path / "p.conllu"
    rc, _, err = run_cli(["parse", syn.test, "--model", out, "--retag", "--joint", "-o",
                          parsed])
    assert rc == 0, err
    assert "decoded jointly in 40 sentences" in err
