"""Joint tagging and parsing (depparse.decode.joint) against brute force over all (tags x trees)
for short sentences (n <= 5, K <= 3): the proved analyses are optimal, the certificate is never
claimed wrongly, and with one candidate per word the joint decoder is the parser's."""

from __future__ import annotations

import itertools
import json
import os

import numpy as np
import pytest
from naive import all_trees, chain_value, joint_best, tree_scores_full
from test_bigrams import rand_instance

from depparse.decode import NoSpanningTreeError
from depparse.decode.bnb import PROOFS, decode_exact
from depparse.decode.joint import TagTable, decode_joint, joint_decompose, joint_score
from depparse.decode.part_table import compile_dense
from depparse.decode.tag_chain import max_marginals, viterbi

FAST = os.environ.get("DEPPARSE_FAST_TESTS", "") not in ("", "0")
NEG_INF = -np.inf
S = 4  # tag ids of the synthetic chains


def count(k: int) -> int:
    return max(1, k // 10) if FAST else k


def close(a, b, tol=1e-8):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def instance(rng, n, kmax=3, grandparents=True, p_inf=0.0, ties=False, dscale=1.0,
             factor=1.0):
    """A random sentence: dense parts, candidate tags, chain and tag-arc scores, every score
    times ``factor`` (1e300: huge scores, whose sums come near overflow).

    Returns ``(pt, tags, dense)`` with ``dense = (arc, sib, gr, gs, emit, trans, D)`` for the
    brute force (``emit[i] = [(id, score), ...]``)."""
    N = n + 1

    def draw(shape):
        if ties:
            return rng.integers(-1, 2, size=shape).astype(float)
        return rng.standard_normal(shape)

    arc, sib, gr, gs, _ = rand_instance(rng, n, grandparents, p_inf,
                                        "ties" if ties else "normal", bigram=False)
    cands = [[]] + [list(rng.choice(S, size=rng.integers(1, kmax + 1), replace=False))
                    for _ in range(n)]
    escore = [[]] + [list(draw(len(c))) for c in cands[1:]]
    trans = draw((S + 1, S + 1))
    D = draw((N, N, 3, 3)) * dscale
    D[0, :, 1:, :] = 0.0  # (the root has one "candidate")
    if factor != 1.0:
        arc, sib, trans, D = arc * factor, sib * factor, trans * factor, D * factor
        gr, gs = (None, None) if gr is None else (gr * factor, gs * factor)
        escore = [[x * factor for x in e] for e in escore]
    tags = TagTable.dense(cands, escore, trans, D)
    emit = [[]] + [list(zip(c, e, strict=True)) for c, e in zip(cands[1:], escore[1:],
                                                                strict=True)]
    return compile_dense(arc, sib, gr, gs), tags, (arc, sib, gr, gs, emit, trans, D)


def brute(dense, single_root=False, allowed=None):
    arc, sib, gr, gs, emit, trans, D = dense
    return joint_best(arc, sib, gr, gs, emit, trans, D, single_root, allowed)


def test_joint_score_matches_naive():
    """``joint_score`` of every analysis equals the brute force's sum of the three terms."""
    rng = np.random.default_rng(1)
    for n in range(1, 5):
        pt, tags, dense = instance(rng, n)
        arc, sib, gr, gs, emit, trans, D = dense
        trees = all_trees(n)
        tscore = tree_scores_full(trees, arc, sib, gr, gs)
        for t in range(min(len(trees), 20)):
            heads = trees[t].copy()  # writable, as the parser's own (one compiled signature)
            ks = np.array([-1] + [rng.integers(len(emit[i])) for i in range(1, n + 1)])
            want = tscore[t] + chain_value(ks, emit, trans)
            want += sum(D[heads[m], m, 0 if heads[m] == 0 else ks[heads[m]], ks[m]]
                        for m in range(1, n + 1))
            assert close(joint_score(pt, tags, heads, ks), want)


@pytest.mark.parametrize("kind", ["normal", "ties", "forbidden", "single_root", "sibling",
                                  "huge"])
def test_decode_joint_vs_brute_force(kind):
    """Every joint analysis is proved optimal: its score is the brute-force optimum over all
    (tags x trees), and its own score is what it claims; huge scores (1e300) too, which
    decode_joint scales down as decode_exact does."""
    rng = np.random.default_rng({"normal": 2, "ties": 3, "forbidden": 4, "single_root": 5,
                                 "sibling": 6, "huge": 7}[kind])
    proofs = {p: 0 for p in PROOFS}
    for i in range(count(60)):
        n = 1 + i % 5
        pt, tags, dense = instance(rng, n, ties=kind == "ties",
                                   p_inf=0.3 if kind == "forbidden" else 0.0,
                                   grandparents=kind != "sibling",
                                   dscale=3.0 if i % 2 else 1.0,
                                   factor=1e300 if kind == "huge" else 1.0)
        single = kind == "single_root"
        heads, ks, value = brute(dense, single)
        if heads is None or value == NEG_INF:
            with pytest.raises(NoSpanningTreeError):
                decode_joint(pt, tags, single_root=single)
            continue
        r = decode_joint(pt, tags, single_root=single, budget=1 + i % 30)
        assert r.optimal and r.proof in PROOFS, (kind, i)
        proofs[r.proof] += 1
        assert close(r.score, value), (kind, i, r.score, value)
        assert close(joint_score(pt, tags, r.heads, r.tags), r.score)
        if single:
            assert (r.heads[1:] == 0).sum() == 1
    assert proofs["dual"] > 0 and (proofs["branch-and-bound"] > 0 or FAST), proofs


def test_certificate_never_claimed_wrongly():
    """Plain joint dual decomposition (Koo et al. Appendix A.1 steps) at several caps: whenever it
    certifies, its analysis is the brute-force optimum; its bound is never below it."""
    rng = np.random.default_rng(7)
    certified = 0
    for i in range(count(80)):
        n = 2 + i % 4
        pt, tags, dense = instance(rng, n, ties=i % 3 == 0)
        _, _, value = brute(dense)
        for K in (1, 5, 50):
            r = joint_decompose(pt, tags, max_iter=K)
            assert r.bound >= value - 1e-9 * max(1.0, abs(value))
            assert r.score <= value + 1e-9 * max(1.0, abs(value))
            if r.certificate:
                certified += 1
                assert close(r.score, value), (i, K)
    assert certified > 0


def test_branch_and_bound_on_forbidden_candidates():
    """A table with some candidates forbidden (``ok``) is decoded over the others only."""
    rng = np.random.default_rng(8)
    for i in range(count(30)):
        n = 2 + i % 4
        pt, tags, dense = instance(rng, n)
        K = tags.sizes()
        ok = np.ones(tags.ids.shape[0], dtype=bool)
        allowed = [[0]]
        for w in range(1, n + 1):
            keep = [k for k in range(K[w]) if k == 0 or rng.random() < 0.5]
            allowed.append(keep)
            for k in range(K[w]):
                ok[tags.ptr[w] + k] = k in keep
        tags.ok = ok
        _, _, value = brute(dense, allowed=allowed)
        r = decode_joint(pt, tags, budget=5)
        assert r.optimal and close(r.score, value)
        assert all(r.tags[w] in allowed[w] for w in range(1, n + 1))


def test_one_candidate_per_word_is_the_parser():
    """With one candidate per word the joint decoder returns the parser's best tree (score
    plus the chain's constant), proved."""
    rng = np.random.default_rng(9)
    for i in range(count(30)):
        n = 1 + i % 6
        pt, tags, dense = instance(rng, n, kmax=1)
        r = decode_joint(pt, tags)
        p = decode_exact(pt)
        const = chain_value([-1] + [0] * n, dense[4], dense[5])
        arcD = dense[6][:, :, 0, 0]
        assert r.optimal and p.optimal
        # D with one candidate is an arc score: compare against the parser on arc + D
        q = decode_exact(compile_dense(dense[0] + arcD, *dense[1:4]))
        assert close(r.score, q.score + const), (i, r.score, q.score, const)


def test_max_marginals_vs_enumeration():
    """``max_marginals[c]`` is the best chain score with candidate ``c`` fixed; its maximum is
    Viterbi's score."""
    rng = np.random.default_rng(10)
    for i in range(count(60)):
        n = 1 + i % 5
        N = n + 1
        k = [0] + [int(rng.integers(1, 4)) for _ in range(n)]
        ptr = np.concatenate([[0], np.cumsum(k)]).astype(np.int64)
        ids = np.concatenate([rng.choice(S, size=kk, replace=False) for kk in k[1:]])
        ids = ids.astype(np.int64)
        E = rng.standard_normal(ids.shape[0])
        trans = rng.standard_normal((S + 1, S + 1))
        mm = max_marginals(E, ptr, ids, trans)
        want = np.full(ids.shape[0], NEG_INF)
        for ks in itertools.product(*[range(kk) for kk in k[1:]]):
            c = [ptr[w] + ks[w - 1] for w in range(1, N)]
            v = trans[S, ids[c[0]]] + sum(E[x] for x in c) + trans[ids[c[-1]], S]
            v += sum(trans[ids[c[j - 1]], ids[c[j]]] for j in range(1, n))
            for x in c:
                want[x] = max(want[x], v)
        assert np.allclose(mm, want)
        best = viterbi(E, ptr, ids, trans)
        vb = max(want)
        cb = [ptr[w] + list(ids[ptr[w]:ptr[w + 1]]).index(best[w]) for w in range(1, N)]
        assert all(close(mm[x], vb) for x in cb)


# ---------------------------------------------------------------------------------------------
# the tag-dependent arc scores and the parse path


def test_tag_arc_table_is_w_phi_under_the_candidate_tags():
    """Every ``D(h, m, a, b)`` is ``w . phi(h, m)`` with the arc's two words given those tags
    minus ``w . phi(h, m)`` with the best tags (``score_arcs`` on a re-tagged copy)."""
    from depparse.encoding.vocab import Encoded
    from depparse.features.parts import Weights, WordArrays, all_arcs, score_arcs
    from depparse.features.tag_arcs import tag_arc_table

    rng = np.random.default_rng(11)
    bits = 12
    w = rng.standard_normal(1 << bits)
    for n in (1, 3, 6):
        N = n + 1

        def ids(hi, N=N):
            a = rng.integers(4, hi, size=N).astype(np.int64)
            a[0] = 1
            return a

        enc = Encoded(ids(50), ids(50), ids(12), ids(20), ids(30), ids(30),
                      np.zeros(N, dtype=np.int64), np.zeros(N + 1, dtype=np.int64),
                      np.zeros(0, dtype=np.int64))
        keep = all_arcs(N) & (rng.random((N, N)) < 0.8)
        keep[0, 1:] = True
        k = [0] + [int(rng.integers(1, 4)) for _ in range(n)]
        ptr = np.concatenate([[0], np.cumsum(k)]).astype(np.int64)
        cand = np.concatenate([[enc.upos[i]] + list(rng.integers(4, 12, size=k[i] - 1))
                               for i in range(1, N)]).astype(np.int64)
        upos0 = enc.upos.copy()
        doff, dtab = tag_arc_table(enc, keep, w, bits, ptr, cand)
        assert (enc.upos == upos0).all()  # (the caller's arrays are left alone)
        weights = Weights(w, np.uint64((1 << bits) - 1), np.ones(256, dtype=np.uint8))
        base = np.empty((N, N))
        score_arcs(WordArrays(*enc.arrays()), weights, keep, base)
        for h in range(N):
            for m in range(1, N):
                if not keep[h, m]:
                    assert doff[h, m] == -1
                    continue
                kh = 1 if h == 0 else k[h]
                for a in range(kh):
                    for b in range(k[m]):
                        up = enc.upos.copy()
                        if h:
                            up[h] = cand[ptr[h] + a]
                        up[m] = cand[ptr[m] + b]
                        got = np.empty((N, N))
                        arrays = list(enc.arrays())
                        arrays[2] = up
                        score_arcs(WordArrays(*arrays), weights, keep, got)
                        want = got[h, m] - base[h, m]
                        assert close(dtab[doff[h, m] + a * k[m] + b], want)
                        if a == 0 and b == 0:
                            assert dtab[doff[h, m]] == 0.0


def test_tag_candidates_best_first_within_margin():
    from depparse.inference.joint_tagging import tag_candidates

    rng = np.random.default_rng(12)
    for i in range(count(40)):
        n = 1 + i % 6
        N = n + 1
        ptr = np.concatenate([[0, 0], np.arange(1, N) * S]).astype(np.int64)
        ids = np.tile(np.arange(S, dtype=np.int64), n)
        E = rng.standard_normal(ids.shape[0]) * 3
        trans = rng.standard_normal((S + 1, S + 1))
        best = viterbi(E, ptr, ids, trans)
        mm = max_marginals(E, ptr, ids, trans)
        for k, margin in ((1, 10.0), (3, 0.5), (3, 100.0), (2, 2.0)):
            cptr, sel = tag_candidates(E, ptr, ids, trans, best, k, margin)
            for w in range(1, N):
                got = sel[cptr[w]:cptr[w + 1]]
                assert ids[got[0]] == best[w] and 1 <= len(got) <= k
                top = mm[ptr[w]:ptr[w + 1]].max()
                want = [c for c in range(ptr[w], ptr[w + 1]) if mm[c] >= top - margin]
                assert set(got) <= set(want)
                assert len(got) == min(k, len(want))


@pytest.fixture(scope="module")
def shipped(shipped_dev):
    parser, dev = shipped_dev
    return parser, dev[:30]


@pytest.mark.corpora
def test_joint_with_one_candidate_is_the_pipeline(shipped):
    """``set_joint(k=1)``: the same trees, labels and tags as the pipeline, every one proved."""
    parser, dev = shipped
    try:
        pipe = parser.parse_results(dev, retag=True, trace=False)
        parser.set_joint(k=1)
        joint = parser.parse_results(dev, retag=True, trace=False)
    finally:
        parser.set_joint(on=False)
    for (s, _), (t, q) in zip(pipe, joint, strict=True):
        assert q.joint and q.optimal and q.tags_changed == 0
        assert (s.heads == t.heads).all() and list(s.rels) == list(t.rels)
        assert list(s.upos) == list(t.upos) and list(s.xpos) == list(t.xpos)
        assert list(s.lemmas) == list(t.lemmas)


@pytest.mark.corpora
def test_joint_parse_counts_changed_tags_and_proves_all(shipped):
    parser, dev = shipped
    try:
        pipe = parser.parse_results(dev, retag=True, trace=False)
        # loose enough to change some tags of these 30 sentences: 3 with en_ewt_gs version 13,
        # whose tagger is sharper (the network's UPOS view times 4); at 0.1, none (version 12:
        # some at 0.1)
        parser.set_joint(weight=0.03, k=3, margin=30.0)
        joint = parser.parse_results(dev, retag=True, trace=False)
        gold_tags = parser.parse_results(dev, retag=False, trace=False)  # input has UPOS
    finally:
        parser.set_joint(on=False)
    changed = 0
    for (s, _), (t, q) in zip(pipe, joint, strict=True):
        assert q.joint and q.optimal and q.proof in PROOFS
        diff = sum(a != b for a, b in zip(s.upos[1:], t.upos[1:], strict=True))
        assert q.tags_changed == diff
        assert q.tag_candidates >= s.n
        changed += diff
    assert changed > 0
    assert not any(q.joint for _, q in gold_tags)  # given UPOS are never decoded jointly


@pytest.mark.corpora
def test_cli_parse_joint(shipped, tmp_path):
    from fixtures_models import run_cli

    from depparse.conllu import write_conllu
    from depparse.report.stats import summarize_report

    parser, dev = shipped
    src = tmp_path / "in.conllu"
    with open(src, "w", encoding="utf-8") as f:
        write_conllu(dev[:3], f)
    rep = tmp_path / "run.json"
    rc, out, err = run_cli(["parse", src, "--joint", "--retag", "--joint-weight", "0.05",
                            "--joint-margin", "60", "--report", rep])
    assert rc == 0, err
    assert "decoded jointly in 3 sentences" in err and "proved optimal 3/3" in err
    report = json.loads(rep.read_text(encoding="utf-8"))
    assert all(e["joint"] for e in report["sentences"])
    changed = sum(e["tags_changed"] for e in report["sentences"])
    assert f"{changed} UPOS changed from the tagger's" in err
    summary = summarize_report(report)  # (what `depparse report` renders)
    assert sum(r["joint"] for r in summary["proofs"]) == 3
    assert sum(r["tags_changed"] for r in summary["proofs"]) == changed
    rc, out, err = run_cli(["parse", src, "--joint"])
    assert rc == 0 and "give --retag" in err
    rc, _, err = run_cli(["parse", src, "--joint", "--joint-weight", "0"])
    assert rc == 2 and "depparse: error: --joint-weight: must be a positive number" in err
    rc, _, err = run_cli(["parse", src, "--joint-margin", "3"])
    assert rc == 2 and "only with --joint" in err


@pytest.mark.corpora
def test_joint_no_proof_and_jobs(shipped, tmp_path):
    """``--no-proof`` decodes jointly with plain dual decomposition (a proof only where it
    certifies); ``--jobs 2`` writes the same output as one process."""

    from fixtures_models import run_cli

    from depparse.conllu import write_conllu

    parser, dev = shipped
    orig = parser.decoding
    try:
        parser.set_decoding(orig, proof=False, max_iter=30)
        parser.set_joint()
        res = parser.parse_results(dev[:10], retag=True, trace=False)
    finally:
        parser.set_decoding(orig)
        parser.set_joint(on=False)
    assert all(r.joint and r.proof in ("dual", None) and r.nodes == 1 for _, r in res)
    assert all(r.optimal == r.certificate for _, r in res)
    src = tmp_path / "in.conllu"
    with open(src, "w", encoding="utf-8") as f:
        write_conllu(dev[:12], f)
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}.conllu"
        rc, _, err = run_cli(["parse", src, "--joint", "--retag", "--joint-weight", "0.05",
                              "--jobs", jobs, "-o", out])
        assert rc == 0, err
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
