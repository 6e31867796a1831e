"""Exact decoding (dual decomposition + branch and bound) against brute force, n <= 6.

Random N(0, 1) part tensors are hard for dual decomposition (about half of the G+S instances
do not certify, tests/test_decode.py), so with a tiny first-run budget most instances below go
through branch and bound; the tests check that they did (so that they can fail).
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
from naive import assert_tree, best_full, naive_score

from depparse.decode import NoSpanningTreeError
from depparse.decode.bnb import PROOFS, decode_exact
from depparse.decode.part_table import compile_dense

FAST = os.environ.get("DEPPARSE_FAST_TESTS", "") not in ("", "0")
NEG_INF = -np.inf


def count(k: int) -> int:
    return max(1, k // 10) if FAST else k


def tol_for(*arrays) -> float:
    """Rounding tolerance: 1e-9 of the largest finite magnitude, times the number of parts."""
    big = 1.0
    for a in arrays:
        if a is not None:
            f = np.abs(a[np.isfinite(a)])
            if f.size:
                big = max(big, float(f.max()))
    n = arrays[0].shape[0]
    return 1e-9 * big * 10 * n


def rand_parts(rng, n, grandparents, kind="normal", p_inf=0.0):
    """Dense ``(arc, sibling, grand, grandsib)``: N(0, 1), small integers (ties), all zero
    (every tree ties), or huge; arcs ``-inf`` with probability ``p_inf`` (root arcs kept)."""
    N = n + 1

    def draw(shape):
        if kind == "ties":
            return rng.integers(-1, 2, size=shape).astype(float)
        if kind == "zero":
            return np.zeros(shape)
        x = rng.standard_normal(shape)
        return x * 1e300 if kind == "huge" else x

    arc = draw((N, N))
    forbid = rng.random((N, N)) < p_inf
    forbid[0, :] = False
    arc[forbid] = NEG_INF
    sib = draw((N, N, N + 1))
    if not grandparents:
        return arc, sib, None, None
    return arc, sib, draw((N, N, N)), draw((N, N, N, N + 1))


def check_exact(parts, single_root, projective=False, **kw):
    """decode_exact against brute force; returns the result (None when there is no tree)."""
    arc, sib, gr, gs = parts
    N = arc.shape[0]
    pt = compile_dense(arc, sib, gr, gs)
    bh, bv = best_full(arc, sib, gr, gs, single_root=single_root, projective=projective)
    if bh is None:
        with pytest.raises(NoSpanningTreeError):
            decode_exact(pt, single_root=single_root, projective=projective, **kw)
        return None
    r = decode_exact(pt, single_root=single_root, projective=projective, **kw)
    assert_tree(r.heads, N, single_root, arc, projective)
    tol = tol_for(arc, sib, gr, gs)
    ctx = (N, single_root, projective, r.proof, r.nodes, r.score, bv)
    assert abs(r.score - naive_score(r.heads, arc, sib, gr, gs)) <= tol, ctx
    assert r.optimal and r.proof in PROOFS, ctx
    assert abs(r.score - bv) <= tol, ctx  # exact: the score of the brute-force optimum
    assert r.bound >= bv - tol and abs(r.bound - r.score) <= tol, ctx
    assert r.certificate == (r.proof == "dual")
    assert r.nodes >= 1 and r.iterations >= r.root_iterations >= 1
    return r


@pytest.mark.parametrize("grandparents", [False, True], ids=["sib", "gs"])
@pytest.mark.parametrize("projective", [False, True], ids=["nonproj", "proj"])
def test_exact_vs_brute_force(grandparents, projective):
    rng = np.random.default_rng(1300 + 2 * grandparents + projective)
    proofs = {p: 0 for p in PROOFS}
    for i in range(count(300 if not projective else 120)):
        n = 1 + i % 6
        kind = ("normal", "normal", "ties", "zero", "huge")[i % 5] if i % 7 else "normal"
        parts = rand_parts(rng, n, grandparents, kind, p_inf=0.3 if i % 4 == 3 else 0.0)
        r = check_exact(parts, bool(rng.integers(2)), projective,
                        budget=int(rng.choice([1, 3, 10])), split=("arc", "heads")[i % 2])
        if r is not None:
            proofs[r.proof] += 1
    print(proofs)
    # the brute-force comparison above must have exercised branch and bound
    assert proofs["branch-and-bound"] >= (1 if FAST else 20), proofs


def test_exact_one_candidate_head_per_word():
    # a single allowed tree: whatever the other scores, it is returned and proved
    rng = np.random.default_rng(7)
    for i in range(count(60)):
        n = 1 + i % 6
        N = n + 1
        heads = np.full(N, -1)
        order = rng.permutation(np.arange(1, N))
        for k, m in enumerate(order):  # each word hangs from the root or an earlier word
            heads[m] = 0 if k == 0 or (i % 2 and rng.random() < 0.3) else order[rng.integers(k)]
        arc, sib, gr, gs = rand_parts(rng, n, bool(i % 3), "normal")
        mask = np.full((N, N), NEG_INF)
        mask[heads[1:], np.arange(1, N)] = 0.0
        arc = arc + mask
        single = int((heads[1:] == 0).sum()) == 1
        r = check_exact((arc, sib, gr, gs), single, budget=1)
        assert r.heads.tolist() == heads.tolist()


def test_exact_n1_n2_all_tie_patterns():
    # n = 1 and 2 with scores in {-1, 0, 1}: many exactly equal trees
    rng = np.random.default_rng(8)
    for i in range(count(400)):
        n = 1 + i % 2
        parts = rand_parts(rng, n, bool(i % 2), "ties", p_inf=0.25 if i % 3 == 0 else 0.0)
        check_exact(parts, bool(i % 4 < 2), budget=1)


def test_exact_equal_score_trees():
    # every tree scores the same: the first tree is optimal, proved at once or by the gap
    for n in range(1, 7):
        N = n + 1
        for gp in (False, True):
            parts = (np.ones((N, N)), np.zeros((N, N, N + 1)),
                     np.zeros((N, N, N)) if gp else None,
                     np.zeros((N, N, N, N + 1)) if gp else None)
            r = check_exact(parts, True, budget=1)
            assert r.score == n


def test_exact_no_tree_raises():
    # word 2 has no allowed head
    arc = np.zeros((3, 3))
    arc[:, 2] = NEG_INF
    with pytest.raises(NoSpanningTreeError):
        decode_exact(compile_dense(arc, np.zeros((3, 3, 4))), budget=1)


def hard_instance(n=40, seed=3):
    """A G+S sentence on which dual decomposition is far from certifying (N(0, 1) parts on a
    sparse candidate set): branch and bound would need many nodes."""
    rng = np.random.default_rng(seed)
    N = n + 1
    arc, sib, gr, gs = rand_parts(rng, n, True, "normal")
    keep = rng.random((N, N)) < 0.25
    keep[0, :] = True
    arc[~keep] = NEG_INF
    return arc, compile_dense(arc, sib, gr, gs)


def test_time_limit_during_branch_and_bound():
    arc, pt = hard_instance()
    N = arc.shape[0]
    decode_exact(hard_instance(n=5)[1], budget=2)  # compile first: the limit is for decoding
    t0 = time.perf_counter()
    r = decode_exact(pt, single_root=True, budget=20, time_limit=0.5)
    elapsed = time.perf_counter() - t0
    assert_tree(r.heads, N, True, arc)
    assert r.nodes > 1 and r.seconds_bnb > 0  # the limit struck during branch and bound
    assert r.timed_out and not r.optimal and r.proof is None
    assert r.bound >= r.score
    assert elapsed < 0.5 + 2.0  # a child run overshoots by at most a chunk of iterations


def test_node_limit_returns_unproved_tree():
    arc, pt = hard_instance(seed=4)
    r = decode_exact(pt, single_root=False, budget=10, max_nodes=3)
    assert_tree(r.heads, arc.shape[0], False, arc)
    assert not r.optimal and r.proof is None and not r.timed_out
    assert r.nodes == 1 + 3 and r.bound > r.score
