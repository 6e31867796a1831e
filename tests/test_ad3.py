"""AD3 (depparse.decode.ad3, depparse.decode.qp): its subproblems against enumeration, its
certificates and bounds against brute force, AD3 + branch and bound against brute force, and
AD3 against subgradient dual decomposition on real sentences."""

from __future__ import annotations

import numpy as np
import pytest
from naive import all_trees, assert_tree, best_full, naive_score, table_score
from test_bnb import count, rand_parts, tol_for

from depparse.decode import NoSpanningTreeError, ad3_decompose, dual_decompose
from depparse.decode.bnb import decode_exact
from depparse.decode.part_table import compile_dense
from depparse.decode.qp import KMAX, ActiveSet, _tree_qp, tree_workspace

NEG_INF = -np.inf


def test_tree_subproblem_meets_its_optimality_conditions():
    """The active-set solution of the TREE factor's quadratic subproblem: no tree has a larger
    gradient ``m_s . (a - q)`` than the common value ``tau`` of the active trees (the KKT
    conditions of ``min |M beta - a|^2 / 2`` on the simplex), checked over every tree."""
    rng = np.random.default_rng(5)
    for i in range(count(60)):
        n = 1 + i % 5
        N = n + 1
        single = bool(i % 2)
        a = rng.standard_normal((N, N)) * (0.3 if i % 3 else 3.0)
        allowed = np.ones((N, N), dtype=bool)
        allowed[:, 0] = False
        np.fill_diagonal(allowed, False)
        trees = all_trees(n, single)
        W = np.zeros((KMAX, N), dtype=np.int64)
        W[0] = trees[0]
        beta = np.zeros(KMAX)
        beta[0] = 1.0
        G = np.zeros((KMAX, KMAX))
        G[0, 0] = n
        lin, phi = np.zeros(KMAX), np.zeros(KMAX)
        q = np.zeros((N, N))
        active = ActiveSet(W, beta, G, lin, phi)
        work = tree_workspace(N)
        k = 1
        for _ in range(20):  # warm-started calls continue the active-set iterations
            k, _ = _tree_qp(a, allowed, single, False, active, k, q, work)
        assert 1 <= k and np.all(beta[:k] >= 0) and abs(beta[:k].sum() - 1) < 1e-9
        q_want = np.zeros((N, N))
        for s in range(k):
            q_want[W[s, 1:], np.arange(1, N)] += beta[s]
        np.testing.assert_allclose(q, q_want, atol=1e-12)
        grad = np.array([sum((a - q)[t[m], m] for m in range(1, N)) for t in trees])
        act = np.array([sum((a - q)[W[s, m], m] for m in range(1, N)) for s in range(k)])
        tau = float(act @ beta[:k])
        assert np.all(np.abs(act[beta[:k] > 1e-9] - tau) <= 1e-7), (i, act, tau)
        assert grad.max() <= tau + 1e-7 * (1 + abs(tau)), (i, grad.max(), tau)


@pytest.mark.parametrize("grandparents", [False, True], ids=["sib", "gs"])
@pytest.mark.parametrize("projective", [False, True], ids=["nonproj", "proj"])
def test_ad3_bounds_and_certificates_vs_brute_force(grandparents, projective):
    rng = np.random.default_rng(1700 + 2 * grandparents + projective)
    certs = runs = 0
    for i in range(count(150 if not projective else 60)):
        n = 1 + i % 6
        kind = ("normal", "ties", "normal", "zero")[i % 4]
        arc, sib, gr, gs = rand_parts(rng, n, grandparents, kind, p_inf=0.3 if i % 5 == 4 else 0)
        single = bool(i % 2)
        pt = compile_dense(arc, sib, gr, gs)
        bh, bv = best_full(arc, sib, gr, gs, single_root=single, projective=projective)
        if bh is None:
            with pytest.raises(NoSpanningTreeError):
                ad3_decompose(pt, single_root=single, projective=projective, max_iter=50)
            continue
        r = ad3_decompose(pt, single_root=single, projective=projective, max_iter=200)
        runs += 1
        N = n + 1
        tol = tol_for(arc, sib, gr, gs)
        ctx = (i, n, single, r.certificate, r.iterations, r.score, bv, r.bound)
        assert_tree(r.heads, N, single, arc, projective)
        assert abs(r.score - naive_score(r.heads, arc, sib, gr, gs)) <= tol, ctx
        assert r.score <= bv + tol and r.bound >= bv - tol, ctx  # weak duality both ways
        assert np.all(np.isfinite(r.dual)) and np.all(r.dual >= bv - tol), ctx
        assert r.oracle_calls >= 1
        if r.certificate:
            certs += 1
            assert abs(r.score - bv) <= tol and r.bound - r.score <= tol, ctx
    print(f"AD3 certificates {certs}/{runs}")
    # measured at K = 200 when written: sib 132/149, G+S 59/150, projective sib 48/60,
    # projective G+S 26/60 (N(0, 1) parts are hard); a broken solver certifies far fewer
    assert runs > 0 and certs >= 0.25 * runs, (certs, runs)


@pytest.mark.parametrize("grandparents", [False, True], ids=["sib", "gs"])
def test_ad3_with_branch_and_bound_is_exact(grandparents):
    rng = np.random.default_rng(1800 + grandparents)
    bnb = 0
    for i in range(count(120)):
        n = 1 + i % 6
        arc, sib, gr, gs = rand_parts(rng, n, grandparents, ("normal", "ties")[i % 2])
        single = bool(i % 3)
        _, bv = best_full(arc, sib, gr, gs, single_root=single)
        r = decode_exact(compile_dense(arc, sib, gr, gs), single_root=single, solver="ad3",
                         budget=int(rng.choice([1, 5, 20])))
        assert_tree(r.heads, n + 1, single, arc)
        assert r.optimal and abs(r.score - bv) <= tol_for(arc, sib, gr, gs), (i, r.proof)
        bnb += r.proof == "branch-and-bound"
    assert bnb >= (1 if count(10) == 1 else 10), bnb


def test_ad3_time_limit_returns_a_tree():
    rng = np.random.default_rng(3)
    n = 30
    N = n + 1
    arc, sib, gr, gs = rand_parts(rng, n, True, "normal")
    ad3_decompose(compile_dense(*rand_parts(rng, 3, True)), max_iter=3)  # compile first
    pt = compile_dense(arc, sib, gr, gs)
    r = ad3_decompose(pt, single_root=True, max_iter=100000, time_limit=0.2)
    assert r.timed_out and not r.certificate and 1 <= r.iterations < 100000
    assert_tree(r.heads, N, True, arc)
    assert r.bound >= r.score


@pytest.mark.corpora
def test_ad3_and_subgradient_agree_on_certified_dev_sentences(shipped_dev):
    """Both certify: the same optimum (Koo et al. Theorem 1 makes each the exact argmax)."""
    p, dev = shipped_dev
    single = p.decoding.single_root
    both = 0
    for s in dev[:60]:
        parts = p.engine.part_table(p.model.vocab.encode(s))
        a = ad3_decompose(parts, single_root=single, max_iter=500)
        g = dual_decompose(parts, single_root=single, max_iter=5000)
        if a.certificate and g.certificate:
            both += 1
            arrays = parts.arrays()
            sa, sg = table_score(a.heads, *arrays), table_score(g.heads, *arrays)
            assert abs(sa - sg) <= 1e-9 * max(1.0, abs(sg)), (s.sent_id, sa, sg)
            if not np.array_equal(a.heads, g.heads):  # only an exact tie may differ
                assert sa == pytest.approx(sg, rel=1e-12)
    assert both >= 40, both
