"""An independent exact oracle: the G+S objective as an integer linear program (HiGHS).

``tests/naive.py: ilp_best`` writes the model from the documented part-table layout (arc
indicators, one path of transition variables per head automaton and grandparent slot, cycle
cuts); it is first checked against brute-force enumeration (n <= 5), then used on real
sentences: en_ewt dev with the shipped model's pruned part tables, the tables the decoder sees.
Every tree depparse calls optimal must score exactly the ILP's optimum.

The default test covers the first dev sentences (with the production budget, and with a budget
of 10 iterations so that many go through branch and bound); the ``slow`` one covers at least
300 dev sentences including every sentence that subgradient dual decomposition (Koo et al.'s
K = 5000) fails to certify.
"""

from __future__ import annotations

import numpy as np
import pytest
from naive import best_full, ilp_best, table_score

from depparse.decode import PROOFS, compile_dense, dual_decompose

highspy = pytest.importorskip("highspy", reason="the ILP oracle needs highspy (dev extra)")

REL = 1e-9  # rounding of two sums of the same ~100 part scores in another order


def test_ilp_oracle_equals_brute_force():
    """The oracle itself: on random dense G+S and sibling instances it finds the best tree."""
    rng = np.random.default_rng(21)
    for i in range(60):
        n = 1 + i % 5
        N = n + 1
        gpm = i % 3 != 0
        arc = rng.standard_normal((N, N))
        if i % 4 == 3:
            forbid = rng.random((N, N)) < 0.3
            forbid[0, :] = False
            arc[forbid] = -np.inf
        sib = rng.standard_normal((N, N, N + 1))
        gr = rng.standard_normal((N, N, N)) if gpm else None
        gs = rng.standard_normal((N, N, N, N + 1)) if gpm else None
        single = bool(i % 2)
        _, bv = best_full(arc, sib, gr, gs, single_root=single)
        arrays = compile_dense(arc, sib, gr, gs).arrays()
        heads, val, _ = ilp_best(*arrays, single)
        if bv == -np.inf:
            assert heads is None and val == -np.inf, i
            continue
        assert abs(val - bv) <= 1e-7 * max(1.0, abs(bv)), (i, val, bv)
        assert abs(table_score(heads, *arrays) - bv) <= 1e-7 * max(1.0, abs(bv)), i


def check_sentences(parser, sents, budgets):
    """Decode each sentence (each budget) and compare with the ILP; returns proof counts."""
    single = parser.decoding.single_root
    counts = {p: 0 for p in PROOFS}
    orig = parser.decoding
    try:
        for s in sents:
            enc = parser.model.vocab.encode(s)
            keep = parser.engine.keep_mask(enc)
            parts = parser.engine.part_table(enc, keep)
            arrays = parts.arrays()
            ih, val, _ = ilp_best(*arrays, single)
            tol = REL * max(1.0, abs(val))
            assert table_score(ih, *arrays) <= val + 1e-6 * max(1.0, abs(val))
            for b in budgets:
                if b is None:
                    parser.set_decoding(orig)
                else:
                    parser.set_decoding(orig, budget=b, budget_per_word=0)
                r = parser.engine.decode(enc, keep=keep)
                ctx = (s.sent_id, s.n, b, r.proof, r.nodes)
                assert r.optimal and r.proof in PROOFS, ctx
                score = table_score(r.heads, *arrays)
                assert abs(score - val) <= tol, (ctx, score, val)
                counts[r.proof] += 1
    finally:
        parser.set_decoding(orig)
    return counts


@pytest.mark.slow  # the shipped model on en_ewt dev against HiGHS: 12 s (measured)
@pytest.mark.corpora
def test_shipped_model_optimal_trees_equal_ilp(shipped_dev):
    parser, dev = shipped_dev
    counts = check_sentences(parser, dev[:40], budgets=(None, 10))
    print(counts)
    assert counts["branch-and-bound"] >= 5, counts  # the test exercised branch and bound


@pytest.mark.slow
@pytest.mark.corpora
def test_shipped_model_dev_300_and_every_uncertified_equal_ilp(shipped_dev):
    parser, dev = shipped_dev
    d = parser.decoding
    hard = []
    for i, s in enumerate(dev):
        parts = parser.engine.part_table(parser.model.vocab.encode(s))
        r = dual_decompose(parts, alpha=d.alpha, max_iter=5000, single_root=d.single_root)
        if not r.certificate:
            hard.append(i)
    chosen = sorted(set(range(300)) | set(hard))
    print(f"{len(hard)} of {len(dev)} dev sentences not certified at K = 5000; checking "
          f"{len(chosen)} sentences")
    assert len(chosen) >= 300 and hard
    counts = check_sentences(parser, [dev[i] for i in chosen], budgets=(None,))
    print(counts)
    assert sum(counts.values()) == len(chosen)


# ---------------------------------------------------------------------------------------------
# joint tagging and parsing (depparse.decode.joint): the ILP with tag variables


def _tag_tuple(tags):
    return (tags.ptr, tags.ids, tags.emit, tags.trans, tags.doff, tags.dtab, tags.ok)


def test_ilp_oracle_with_tags_equals_brute_force():
    """The oracle with tag variables against brute force over all (tags x trees)."""
    from test_joint import brute, instance

    rng = np.random.default_rng(22)
    for i in range(40):
        n = 1 + i % 5
        pt, tags, dense = instance(rng, n, grandparents=i % 3 != 0,
                                   p_inf=0.3 if i % 4 == 3 else 0.0)
        single = bool(i % 2)
        _, _, bv = brute(dense, single)
        heads, chosen, val, _ = ilp_best(*pt.arrays(), single, tags=_tag_tuple(tags))
        if bv == -np.inf:
            assert heads is None, i
            continue
        assert abs(val - bv) <= 1e-7 * max(1.0, abs(bv)), (i, val, bv)
        from depparse.decode.joint import joint_score
        assert abs(joint_score(pt, tags, heads, chosen) - bv) <= 1e-7 * max(1.0, abs(bv))


@pytest.mark.slow  # the shipped model's joint tables against HiGHS: 10 s (measured)
@pytest.mark.corpora
def test_shipped_model_joint_analyses_equal_ilp(shipped_dev):
    """Joint tagging and parsing of dev sentences with the shipped model (the parse path's
    part and tag tables): every analysis proved optimal scores the ILP's optimum, and no
    less than the pipeline's analysis (the tagger's tags, the parser's tree), which is one of
    the joint model's."""
    from depparse.decode.joint import decode_joint, joint_score

    parser, dev = shipped_dev
    single = parser.decoding.single_root
    counts = {p: 0 for p in PROOFS}
    changed = 0
    try:
        parser.set_joint(weight=0.05, k=3, margin=40.0)
        for s in dev[:30]:
            ji = parser.engine.joint_table(s, single_root=single)
            _, _, val, _ = ilp_best(*ji.parts.arrays(), single, tags=_tag_tuple(ji.tags))
            tol = REL * max(1.0, abs(val))
            pipe = parser.engine.decode(ji.enc, keep=ji.keep)
            zero = np.zeros(s.n + 1, dtype=np.int64)
            f_pipe = joint_score(ji.parts, ji.tags, pipe.heads, zero)
            assert f_pipe <= val + tol
            for b in (150, 3):
                r = decode_joint(ji.parts, ji.tags, budget=b, single_root=single,
                                 alpha=parser.decoding.alpha)
                ctx = (s.sent_id, s.n, b, r.proof, r.nodes)
                assert r.optimal and r.proof in PROOFS, ctx
                assert abs(r.score - val) <= tol, (ctx, r.score, val)
                assert abs(joint_score(ji.parts, ji.tags, r.heads, r.tags) - r.score) <= tol
                counts[r.proof] += 1
            changed += int((r.tags[1:] != 0).sum())
    finally:
        parser.set_joint(on=False)
    print(counts, changed)
    assert counts["branch-and-bound"] >= 3, counts  # the test exercised branch and bound
    assert changed > 0  # and tags other than the tagger's
