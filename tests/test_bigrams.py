"""Head bigrams (the ``gsh`` model): the chain slave, dual decomposition and branch and bound
with it, its features and its training, each against brute force or a hand computation."""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest
import synthetic
from naive import all_projective_trees, all_trees, assert_tree, tree_scores_full

from depparse import train
from depparse.cli import main as cli_main
from depparse.config import ModelConfig, TrainConfig
from depparse.conllu import read_conllu, read_sentence
from depparse.decode import NoSpanningTreeError
from depparse.decode.ad3 import ad3_decompose
from depparse.decode.bnb import PROOFS, decode_exact
from depparse.decode.dual import dual_decompose, dual_decompose_dense
from depparse.decode.head_bigrams import bigram_layout, chain_viterbi, head_positions
from depparse.decode.part_table import compile_dense, score_tree
from depparse.encoding.vocab import Vocabularies
from depparse.errors import ConfigError
from depparse.features import templates as T
from depparse.features.bigrams import chain_features, hb_features
from depparse.features.hashing import dot
from depparse.features.parts import ALL_TEMPLATES, all_arcs, template_switches
from depparse.features.scoring import SparseScorer, build_parts, score
from depparse.inference.parser import Parser
from depparse.learn.perceptron import Trainer
from depparse.learn.updates import update, weighted_stats

FAST = os.environ.get("DEPPARSE_FAST_TESTS", "") not in ("", "0")
NEG_INF = -np.inf


def count(k: int) -> int:
    return max(1, k // 10) if FAST else k


def rand_instance(rng, n, grandparents=True, p_inf=0.0, kind="normal", bigram=True):
    """Dense ``(arc, sibling, grand, grandsib, bigram)`` (N(0, 1) or small-integer ties);
    arcs ``-inf`` with probability ``p_inf`` (root arcs kept); ``bigram`` None (and not
    drawn) when ``bigram`` is False (test_joint's instances)."""
    N = n + 1

    def draw(shape):
        if kind == "ties":
            return rng.integers(-1, 2, size=shape).astype(float)
        return rng.standard_normal(shape)

    arc = draw((N, N))
    forbid = rng.random((N, N)) < p_inf
    forbid[0, :] = False
    arc[forbid] = NEG_INF
    sib = draw((N, N, N + 1))
    gr = draw((N, N, N)) if grandparents else None
    gs = draw((N, N, N, N + 1)) if grandparents else None
    return arc, sib, gr, gs, draw((N, N, N)) if bigram else None


def brute_best(arc, sib, gr, gs, bg, single_root, projective=False):
    """Brute-force best tree under the full model with head bigrams: ``(heads, value)``."""
    n = arc.shape[0] - 1
    trees = (all_projective_trees if projective else all_trees)(n, single_root)
    if len(trees) == 0:
        return None, NEG_INF
    scores = tree_scores_full(trees, arc, sib, gr, gs)
    for m in range(1, n):
        scores = scores + bg[trees[:, m], m, trees[:, m + 1]]
    k = int(np.argmax(scores))
    if scores[k] == NEG_INF:
        return None, NEG_INF
    return trees[k], float(scores[k])


def close(a, b, tol=1e-8):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


# ---------------------------------------------------------------------------------------------
# the chain


def test_chain_viterbi_vs_enumeration():
    """Value and choice of the chain against every head assignment of the allowed heads."""
    rng = np.random.default_rng(11)
    for i in range(count(400)):
        n = 1 + i % 6
        N = n + 1
        keep = rng.random((N, N)) < 0.7
        keep[:, 0] = False
        np.fill_diagonal(keep, False)
        if i % 5 == 0:
            keep[0, 1] = False  # sometimes a word loses its last kept head below
        hd, hd_off, hd_len, hb_off, size = bigram_layout(keep)
        for m in range(N):
            assert list(hd[hd_off[m]:hd_off[m] + hd_len[m]]) == list(np.flatnonzero(keep[:, m]))
        hb = rng.integers(-2, 3, size=size).astype(float) if i % 3 == 0 else rng.normal(size=size)
        arc = np.where(keep, 0.0, NEG_INF)
        arc[rng.random((N, N)) < 0.1] = NEG_INF  # forbidden (branch and bound)
        r = rng.normal(size=(N, N))
        out = np.empty(N, dtype=np.int64)
        k = max(hd.shape[0], 1)
        val = chain_viterbi(arc, hd, hd_off, hd_len, hb, hb_off, r, np.empty(k),
                            np.empty(k, dtype=np.int64), out)
        pos = head_positions(hd, hd_off, hd_len)
        allowed = [[h for h in hd[hd_off[m]:hd_off[m] + hd_len[m]] if arc[h, m] != NEG_INF]
                   for m in range(1, N)]
        best = NEG_INF
        for hs in itertools.product(*allowed):
            c = (-1,) + hs
            v = -sum(r[c[m], m] for m in range(1, N))
            v += sum(hb[hb_off[m] + pos[c[m], m] * hd_len[m + 1] + pos[c[m + 1], m + 1]]
                     for m in range(1, N - 1))
            best = max(best, v)
        if best == NEG_INF:
            assert val == NEG_INF
            continue
        assert close(val, best), (i, val, best)
        got = -sum(r[out[m], m] for m in range(1, N))
        got += sum(hb[hb_off[m] + pos[out[m], m] * hd_len[m + 1] + pos[out[m + 1], m + 1]]
                   for m in range(1, N - 1))
        assert close(got, val)
        assert all(arc[out[m], m] != NEG_INF for m in range(1, N))


def test_score_tree_and_table_score_with_bigrams():
    rng = np.random.default_rng(12)
    for n in range(1, 6):
        arc, sib, gr, gs, bg = rand_instance(rng, n)
        pt = compile_dense(arc, sib, gr, gs, bg)
        for heads in all_trees(n)[:50].copy():  # writable rows (all_trees' are read-only)
            want = float(tree_scores_full(heads[None], arc, sib, gr, gs)[0])
            want += sum(bg[heads[m], m, heads[m + 1]] for m in range(1, n))
            assert close(score_tree(heads, arc, sib, gr, gs, bg), want)
            # the same tree, one iteration of dual decomposition restricted to it
            only = np.full_like(arc, NEG_INF)
            only[heads[1:], np.arange(1, n + 1)] = arc[heads[1:], np.arange(1, n + 1)]
            r = dual_decompose(compile_dense(only, sib, gr, gs, bg), max_iter=1)
            assert close(r.score, want) and (r.heads == heads).all()
    assert pt.bigrams and not compile_dense(arc, sib, gr, gs).bigrams


# ---------------------------------------------------------------------------------------------
# dual decomposition and branch and bound with the chain


@pytest.mark.parametrize("grandparents", [False, True], ids=["sib", "gs"])
@pytest.mark.parametrize("projective", [False, True], ids=["nonproj", "proj"])
def test_dual_decomposition_with_bigrams_vs_brute_force(grandparents, projective):
    rng = np.random.default_rng(21 + 2 * grandparents + projective)
    certs = runs = 0
    for i in range(count(240)):
        n = 1 + i % 6
        sr = bool(rng.integers(2))
        arc, sib, gr, gs, bg = rand_instance(rng, n, grandparents, 0.3 if i % 4 == 3 else 0.0,
                                             "ties" if i % 9 == 8 else "normal")
        bh, bv = brute_best(arc, sib, gr, gs, bg, sr, projective)
        kw = dict(max_iter=300, single_root=sr, projective=projective)
        if bh is None:
            with pytest.raises(NoSpanningTreeError):
                dual_decompose_dense(arc, sib, gr, gs, bg, **kw)
            continue
        r = dual_decompose_dense(arc, sib, gr, gs, bg, **kw)
        runs += 1
        certs += r.certificate
        assert_tree(r.heads, n + 1, sr, arc, projective)
        assert close(r.score, score_tree(r.heads, arc, sib, gr, gs, bg)), i
        assert np.all(r.dual >= bv - 1e-9 * max(1.0, abs(bv))), i  # weak duality
        assert np.all(r.primal <= bv + 1e-9 * max(1.0, abs(bv))), i
        if r.certificate:
            assert close(r.score, bv), i
        assert r.counts.shape == (4, n + 1, n + 1)
        assert (r.counts[3, :, 1:].sum(axis=0) == r.iterations).all()  # one head per word
    print(f"certificates {certs}/{runs}")
    # measured with DEPPARSE_FAST_TESTS=1 (K = 300): 13, 8, 16 and 7 of 24 (29% to 67%)
    assert certs >= 0.2 * runs


@pytest.mark.parametrize("projective", [False, True], ids=["nonproj", "proj"])
def test_exact_with_bigrams_vs_brute_force(projective):
    """Every tree proved optimal, and its score is the brute-force optimum; the budget of the
    first run is tiny, so branch and bound (warm-started with the chain's multipliers) does
    most of the work."""
    rng = np.random.default_rng(31 + projective)
    proofs = {p: 0 for p in PROOFS}
    for i in range(count(200 if not projective else 80)):
        n = 1 + i % 6
        sr = bool(rng.integers(2))
        parts = rand_instance(rng, n, bool(i % 3), 0.3 if i % 4 == 3 else 0.0,
                              "ties" if i % 5 == 4 else "normal")
        bh, bv = brute_best(*parts, sr, projective)
        pt = compile_dense(*parts)
        if bh is None:
            with pytest.raises(NoSpanningTreeError):
                decode_exact(pt, single_root=sr, projective=projective)
            continue
        r = decode_exact(pt, single_root=sr, projective=projective,
                         budget=int(rng.choice([1, 3, 10])), split=("arc", "heads")[i % 2])
        assert_tree(r.heads, n + 1, sr, parts[0], projective)
        assert r.optimal and r.proof in PROOFS
        assert close(r.score, bv, 1e-7), (i, r.score, bv, r.proof)
        assert close(r.score, score_tree(r.heads, *parts), 1e-7)
        proofs[r.proof] += 1
    print(proofs)
    # measured with DEPPARSE_FAST_TESTS=1: 16 of 20 (non-projective) and 6 of 8 (projective)
    # instances need branch and bound; the tiny first budget makes it do most of the work
    assert proofs["branch-and-bound"] >= (3 if FAST else 20), proofs


def test_ad3_refuses_head_bigrams():
    rng = np.random.default_rng(5)
    pt = compile_dense(*rand_instance(rng, 4))
    with pytest.raises(ValueError, match="head-bigram"):
        ad3_decompose(pt)
    with pytest.raises(ValueError, match="head-bigram"):
        decode_exact(pt, solver="ad3")


# ---------------------------------------------------------------------------------------------
# features


HAND = """# text = The old dog barked loudly .
1\tThe\tthe\tDET\tDT\t_\t3\tdet\t_\t_
2\told\told\tADJ\tJJ\t_\t3\tamod\t_\t_
3\tdog\tdog\tNOUN\tNN\t_\t4\tnsubj\t_\t_
4\tbarked\tbark\tVERB\tVBD\t_\t0\troot\t_\t_
5\tloudly\tloudly\tADV\tRB\t_\t4\tadvmod\t_\t_
6\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_

"""


@pytest.fixture(scope="module")
def hand():
    s = read_sentence(HAND)
    v = Vocabularies.build([s])
    return s, v.encode(s)


def test_bigram_table_and_chain_features_describe_the_same_model(hand):
    """The scored bigram table (build_parts) and the update features (chain_features) agree:
    every table entry is its features times the weights, and the head bigrams add to a tree's
    full score exactly its chain features times the weights."""
    s, e = hand
    bits = 16
    mask = np.uint64((1 << bits) - 1)
    w = np.random.default_rng(3).normal(size=1 << bits)
    N = e.n + 1
    keep = np.ones((N, N), dtype=bool)
    keep[:, 0] = False
    np.fill_diagonal(keep, False)
    pt = build_parts(e, keep, w, bits, 2, bigrams=True)
    assert pt.bigrams and pt.hb.shape == ((N - 2) * (N - 1) * (N - 1),)

    class Nothing:  # a scorer that adds nothing, so that the sparse one adds instead of fills
        def add(self, batch, tables):
            pass

    added = score([(e, keep)], [Nothing(), SparseScorer(w, bits, 2)], 2, bigrams=True)[0]
    for a, b in ((added.arc, pt.arc), (added.tab, pt.tab), (added.hb, pt.hb)):
        assert np.array_equal(a, b)  # 0 + x: the very bits of filling in place
    buf = np.empty(64, dtype=np.int64)
    pos = head_positions(pt.hd, pt.hd_off, pt.hd_len)
    checked = 0
    for m in range(1, N - 1):
        for h1 in np.flatnonzero(keep[:, m]):
            for h2 in np.flatnonzero(keep[:, m + 1]):
                k = hb_features(h1, m, h2, e.form, e.upos, e.xpos, e.cluster, mask,
                                ALL_TEMPLATES, buf)
                got = pt.hb[pt.hb_off[m] + pos[h1, m] * pt.hd_len[m + 1] + pos[h2, m + 1]]
                assert got == pytest.approx(dot(w, buf, k), abs=1e-12)
                checked += 1
    assert checked == pt.hb.shape[0]
    heads = np.asarray(s.heads, dtype=np.int64)
    idx = chain_features(*e.arrays(), mask, ALL_TEMPLATES, heads, np.ones(N, dtype=bool))
    assert idx.shape[0] == 10 * (N - 2)  # 10 templates per pair (no contextual classes)
    phi = np.zeros(1 << bits)
    update(phi, np.zeros(1 << bits), 0.0, idx, 1.0)
    only = _tree_keep(heads)  # the gold tree is the only tree: one iteration scores it
    with_hb = dual_decompose(build_parts(e, only, w, bits, 2, bigrams=True), max_iter=1)
    without = dual_decompose(build_parts(e, only, w, bits, 2), max_iter=1)
    assert (with_hb.heads == heads).all()
    assert with_hb.score == pytest.approx(without.score + phi @ w, abs=1e-9)


def _tree_keep(heads):
    N = heads.shape[0]
    keep = np.zeros((N, N), dtype=bool)
    keep[heads[1:], np.arange(1, N)] = True
    return keep


def test_bigram_shapes_and_switches(hand):
    """The shape atom separates the configurations of two consecutive arcs; switching the HB
    templates off leaves no feature; the hand count of templates (10 without contextual
    classes)."""
    _, e = hand
    mask = np.uint64((1 << 20) - 1)
    buf = np.empty(64, dtype=np.int64)

    def feats(h1, m, h2, on=ALL_TEMPLATES):
        k = hb_features(h1, m, h2, e.form, e.upos, e.xpos, e.cluster, mask, on, buf)
        return set(buf[:k].tolist())

    assert len(feats(3, 1, 3, ALL_TEMPLATES)) == 10  # no contextual classes here
    # m = 1, m + 1 = 2 both under 3 (shared head) vs 1 under 3 and 2 under 1 (a chain)
    assert not feats(3, 1, 3) & feats(3, 1, 1)
    off = ",".join(k for k in T.registry() if k.startswith("HB_"))
    assert feats(3, 1, 3, template_switches(off)) == set()


# ---------------------------------------------------------------------------------------------
# training and parsing


def test_gsh_learns_synthetic_grammar_and_round_trips(tmp_path):
    tr = synthetic.sentences(150, seed=1)
    te = synthetic.sentences(60, seed=2)
    m = train(tr, None, model="gsh", bits=18, pruner_bits=16, epochs=6, seed=0, progress=False,
              pruner_folds=2)
    assert m.config.model == "gsh" and m.config.head_bigrams and m.config.order == 2
    p = Parser(m)
    for data in (tr, te):
        res = p.engine.parse_heads(data)
        assert all(r.optimal for r in res)
        wrong = sum(int((r.heads[1:] != np.asarray(s.heads)[1:]).sum())
                    for r, s in zip(res, data, strict=True))
        assert wrong == 0
    # the head-bigram weights are part of the model: without them the parts differ
    e = m.vocab.encode(te[0])
    keep = p.engine.keep_mask(e)
    pt = p.engine.part_table(e, keep)
    assert pt.bigrams and np.abs(pt.hb).sum() > 0
    path = tmp_path / "gsh.npz"
    m.save(path)
    from depparse import load

    q = load(path)
    assert q.config.model == "gsh"
    assert [list(r.heads) for r in q.engine.parse_heads(te)] == [list(r.heads) for r in res]
    # the command line refuses AD3 for it: exit 2, no output written
    src = tmp_path / "in.conllu"
    src.write_text(synthetic.conllu_text(3, seed=2))
    out = tmp_path / "out.conllu"
    assert cli_main(["parse", str(src), "-m", str(path), "--solver", "ad3", "-o", str(out)]) == 2
    assert not out.exists()
    # so does the parser itself, keeping its settings (the CLI's one way to change them)
    before = q.decoding
    with pytest.raises(ConfigError, match="head-bigram"):
        q.set_decoding(solver="ad3", budget=30)
    assert q.decoding is before
    q.set_decoding(budget=30)
    assert q.decoding.budget == 30 and q.decoding.solver == before.solver


def test_gsh_refuses_ad3():
    tr = synthetic.sentences(20, seed=1)
    with pytest.raises(ConfigError, match="head-bigram"):
        train(tr, None, model="gsh", solver="ad3", bits=14, pruner_bits=14, epochs=1,
              progress=False, pruner_folds=2)


def test_weighted_stats_match_dense_vectors():
    """PA-I over the split relaxation needs w . phi and ||phi||^2 of a weighted sum of feature
    lists (repeated indices, cancelling terms)."""
    rng = np.random.default_rng(8)
    w = rng.normal(size=64)
    for _ in range(50):
        idx = rng.integers(0, 64, size=int(rng.integers(0, 40)))
        coef = rng.choice([1.0, -1.0, 0.25, -0.25], size=idx.size)
        phi = np.zeros(64)
        np.add.at(phi, idx, coef)
        dot, norm = weighted_stats(w, idx, coef)
        assert dot == pytest.approx(phi @ w, abs=1e-12)
        assert norm == pytest.approx(phi @ phi, abs=1e-12)


@pytest.mark.parametrize("share", [0.0, 0.5])
def test_lazy_average_with_the_chain(share):
    """The chain's updates (and the arc-share terms) go through the lazy average exactly."""
    tr = synthetic.sentences(40, seed=5)
    cfg = ModelConfig(model="gsh", bits=14, pruner_bits=14)
    vocab = Vocabularies.build(tr)
    trainer = Trainer(cfg, vocab, pruner=None, training=TrainConfig(chain_share=share))
    enc = [vocab.encode(s) for s in tr]
    heads = [np.asarray(s.heads, dtype=np.int64) for s in tr]
    total = np.zeros(1 << cfg.bits)
    steps = 0
    for _ in range(3):
        for i in np.random.default_rng([0, trainer.epoch]).permutation(len(tr)):
            trainer.step(enc[i], heads[i], all_arcs(enc[i].n + 1))
            total += trainer.w
            steps += 1
        trainer.epoch += 1
    assert np.abs(trainer.w).sum() > 0
    np.testing.assert_allclose(trainer.averaged(), total / steps, rtol=0, atol=1e-9)


@pytest.mark.corpora
@pytest.mark.slow  # trains on en_ewt slices: 27-32 s, the slowest of the fast suite (measured)
def test_gsh_learns_from_real_treebank_slice(corpora_dir):
    """300 en_ewt training sentences, 4 epochs, gs and gsh alike: the head-bigram model parses
    300 dev sentences about as well as the gs model (measured when written: gs 78.17, gsh
    77.68 UAS; 77.87 with ``chain_share=0.5``), every tree proved optimal.  A broken
    relaxation (wrong signs or shares in the update) leaves it far below."""
    tr = read_conllu(corpora_dir / "en_ewt" / "en_ewt-ud-train.conllu")[:300]
    dev = read_conllu(corpora_dir / "en_ewt" / "en_ewt-ud-dev.conllu")[:300]
    uas = {}
    for model in ("gs", "gsh"):
        m = train(tr, None, model=model, bits=20, pruner_bits=18, epochs=4, seed=0,
                  progress=False)
        res = Parser(m).engine.parse_heads(dev)
        assert all(r.optimal for r in res)
        uas[model] = sum(int((r.heads[1:] == np.asarray(s.heads)[1:]).sum())
                         for r, s in zip(res, dev, strict=True)) / sum(s.n for s in dev)
    print(uas)
    # measured: gsh 0.49 points below gs (docstring); the slack is four times that, so seed
    # noise passes and a broken relaxation (tens of points lower) does not
    assert uas["gsh"] >= uas["gs"] - 4 * 0.0049
