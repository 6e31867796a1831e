"""Subgradient dual decomposition for non-projective head automata (Koo et al. 2010).

Fig. 1 (sibling models) and Fig. 2 (grandparent+sibling models): ``y`` is a spanning tree found
by Chu-Liu-Edmonds on the kept arcs' lists (:func:`~depparse.decode.sparse_mst._cle_sparse`; in
projective mode, by Eisner's algorithm: Sec. 7.7, Table 3) under arc weights
``alpha * theta + u (+ v)``; ``z`` is the union of the independent head-automaton
solutions under ``(1 - alpha) * theta - u`` (and ``- v`` on the automaton's own head).  When
``y`` and ``z`` agree the tree is the exact argmax of the full model (Theorem 1): a certificate.
A table with head-bigram parts adds a third slave, the chain of :mod:`depparse.decode.bigrams`,
whose copies ``c`` of the arcs agree with ``y`` through multipliers ``r`` (``+ r`` in the tree's
weights, ``- r`` in the chain's); the certificate then needs ``y = z = c``.

Details, each from the paper:

* step sizes (Appendix A.1): ``delta = L(u^1) - f(y^1)`` and ``alpha_k = delta / (1 + eta_k)``
  where ``eta_k`` counts the iterations ``k' <= k`` at which the dual went up;
* the split of the arc scores (Appendix A.2), ``alpha = 0.001`` by default;
* lazy decoding (Sec. 7.4): automaton ``i`` is re-decoded only when some ``u(i, .)`` or
  ``v(., i)`` changed since its last decoding;
* an iteration cap ``K`` (5000 by default); without agreement the ``y^(k)`` with the best
  full-model score is returned, uncertified (Sec. 7.5).

For branch and bound (:mod:`depparse.decode.bnb`), a run can also start from given multipliers
(a warm start), forbid arcs (``-inf`` in the part table), stop as soon as its dual value falls
to a score known from elsewhere (the incumbent), take Polyak's steps
``lam (L(u) - f*) / |g|^2`` towards the best known score ``f*`` (Polyak 1969; halving ``lam``
when the dual stalls, Held and Karp 1971) instead of Appendix A.1's, and report its lowest dual
value with the multipliers that reached it and where ``y``, ``z`` and ``z'`` disagreed.
Lazy decoding is one level finer than Sec. 7.4: per automaton side and grandparent slot
(:func:`~depparse.decode.automata._decode_head_lazy`).

Besides agreement, a zero duality gap also certifies: ``L(u) <= f(y) + eps`` for a tree ``y``
means ``y`` is optimal (weak duality, Eq. 9); ``eps = tol * max(|L(u)|, max |part score|)``
only absorbs floating-point rounding (no absolute floor, so tiny scores are handled exactly).
This matters when ties make ``y`` and ``z`` differ at an optimum, where the subgradient step
would be zero forever.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numba as nb
import numpy as np

from .automata import _decode_head_lazy
from .bigrams import chain_viterbi, head_positions, tree_bigram_score
from .eisner import _eisner
from .mst import NO_TREE, OK, NoSpanningTreeError
from .parts import PartTable, compile_dense, table_width
from .sparse_mst import _cle_sparse, in_arcs

__all__ = ["DualResult", "dual_decompose", "dual_decompose_dense"]

NEG_INF = -np.inf
GAP_TOL = 1e-9


@dataclass
class DualResult:
    """Outcome of dual decomposition for one sentence.

    Attributes
    ----------
    heads : (n+1,) int64
        The returned tree, ``heads[0] = -1``.
    certificate : bool
        True when the tree is provably the exact argmax of the full model.
    iterations : int
        Iterations run (1-based count; 1 means the first ``y`` and ``z`` already agreed).
    dual : (iterations,) float64
        ``L(u^(k))`` per iteration.
    primal : (iterations,) float64
        Full-model score ``f(y^(k))`` of each iteration's tree.
    recomputed : (iterations,) float64
        Fraction of head automata re-decoded in each iteration (Fig. 3).
    score : float
        Full-model score of ``heads``.
    best_changes : list of (int, ndarray)
        ``(iteration, heads)`` each time the best primal tree improved (at most
        ``MAX_CHANGES``; the last entry is always the returned uncertified tree).  The tree
        returned under a cap ``K`` is that of the last change at an iteration ``<= K``.
    timed_out : bool
        True when ``time_limit`` stopped the run.
    bound : float
        The lowest dual value ``min_k L(u^(k))``: an upper bound on the score of every tree
        (weak duality, Eq. 9), ``+inf`` before the first iteration.
    pruned : bool
        True when the run stopped because ``bound`` fell to the ``incumbent`` given from
        outside (no tree here beats it; ``certificate`` is then False).
    u, v : (n+1, n+1) float64
        The multipliers at which ``bound`` was reached (a warm start for another run).
    r : (n+1, n+1) float64
        Likewise, the multipliers of the head-bigram chain (zeros without one).
    counts : (4, n+1, n+1) float64
        How often, over the iterations, ``y(h, m)``, ``z(h, m)``, ``z'(h, m)`` and the chain's
        ``c(h, m)`` were 1 (where the sides disagree: branch and bound branches there).
    oracle_calls : int
        MAP oracle calls of the factors (AD3 only; :mod:`depparse.decode.ad3`).
    """

    heads: np.ndarray
    certificate: bool
    iterations: int
    dual: np.ndarray
    primal: np.ndarray
    recomputed: np.ndarray
    score: float
    best_changes: list = field(default_factory=list)
    timed_out: bool = False
    bound: float = np.inf
    pruned: bool = False
    u: np.ndarray | None = None
    v: np.ndarray | None = None
    counts: np.ndarray | None = None
    oracle_calls: int = 0
    r: np.ndarray | None = None


@nb.njit(cache=True)
def _primal_score(yh, arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off, gpos,
                  use_g):
    """Full-model score f(y) of tree ``yh`` from the part tables."""
    N = yh.shape[0]
    total = 0.0
    for m in range(1, N):
        total += arc[yh[m], m]
    for h in range(N):
        gi = 0
        if use_g and h > 0:
            gi = gpos[h, yh[h]]
        slot = gp_off[h] + gi
        for d in range(2):
            L = cand_len[h, d]
            o = tab_off[slot, d]
            c0 = cand_off[h, d]
            p = 0
            for q in range(L):
                if yh[cand[c0 + q]] == h:
                    total += tab[o + p * (L + 1) + q]
                    p = q + 1
            total += tab[o + p * (L + 1) + L]
    return total


STEP_RULES = {"koo": 0, "polyak": 1}
MAX_CHANGES = 256  # best-tree history kept per sentence (for reports of UAS vs K)

# step-size rules of :func:`_dd_run`
RULE_KOO = STEP_RULES["koo"]  # Appendix A.1: delta / (1 + eta_k)
RULE_POLYAK = STEP_RULES["polyak"]  # Polyak, towards the incumbent; halved on stalls

# indices into the scalar state arrays
_F_BEST, _F_STEP0, _F_PREV, _F_SCALE, _F_INC, _F_LMIN, _F_LAM = 0, 1, 2, 3, 4, 5, 6
_I_K, _I_ETA, _I_NCHG, _I_CERT, _I_DONE, _I_PRUNED, _I_STALL, _I_HALVED = 0, 1, 2, 3, 4, 5, 6, 7
_NF, _NI = 7, 8


@nb.njit(cache=True)
def _dd_init(arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off, alpha, max_iter,
             u0, v0, incumbent, lam0, history, hd, hd_off, hd_len, hb, r0):
    """Allocate the state of a dual decomposition run (see :func:`_dd_run`), starting from the
    multipliers ``u0``, ``v0`` and ``r0`` (copied; zeros for a cold start)."""
    N = arc.shape[0]
    u = u0.copy()
    v = v0.copy()
    r = r0.copy()
    w = np.full((N, N), NEG_INF)  # MST weights alpha*theta + u + v + r on kept arcs
    for h in range(N):
        for d in range(2):
            for i in range(cand_len[h, d]):
                m = cand[cand_off[h, d] + i]
                if arc[h, m] != NEG_INF:
                    w[h, m] = alpha * arc[h, m] + u[h, m] + v[h, m] + r[h, m]
    gpos = np.full((N, N), -1, dtype=np.int64)  # slot of grandparent g for head h
    for h in range(N):
        for gi in range(gp_len[h]):
            g = gp[gp_off[h] + gi]
            if g >= 0:
                gpos[h, g] = gi
    Wmax = table_width(cand_len)
    # magnitude of the part scores: the gap tolerance is relative to it (no absolute floor)
    scale = 0.0
    for h in range(N):
        for m in range(N):
            a = arc[h, m]
            if a != NEG_INF and abs(a) > scale:
                scale = abs(a)
    for i in range(tab.shape[0]):
        a = tab[i]
        if a != NEG_INF and abs(a) > scale:
            scale = abs(a)
    for i in range(hb.shape[0]):
        if abs(hb[i]) > scale:
            scale = abs(hb[i])
    fs = np.zeros(_NF)
    fs[_F_BEST] = NEG_INF
    fs[_F_PREV] = np.inf
    fs[_F_SCALE] = scale
    fs[_F_INC] = incumbent
    fs[_F_LMIN] = np.inf
    fs[_F_LAM] = lam0
    si = np.zeros(_NI, dtype=np.int64)
    ncap = min(max_iter, MAX_CHANGES) if history else 1
    # per (grandparent slot, side): the last Viterbi value and choice (lazy decoding)
    nslot = tab_off.shape[0]
    soff = np.zeros((nslot, 2), dtype=np.int64)
    size = 0
    for h in range(N):
        for gi in range(gp_len[h]):
            for d in range(2):
                soff[gp_off[h] + gi, d] = size
                size += cand_len[h, d]
    return (u, v, w, gpos,
            np.zeros((N, 2, Wmax), dtype=np.int64),  # ztake: z(h, cand) per head and side
            np.full(N, -1, dtype=np.int64),  # zgi: chosen grandparent slot per head
            np.zeros(N),  # zval: automaton values
            np.ones((N, 3), dtype=np.bool_),  # dirty: u of the left/right side, v (Sec. 7.4)
            np.full(N, -1, dtype=np.int64),  # best_heads
            np.empty(max_iter), np.empty(max_iter), np.empty(max_iter),  # traces
            np.zeros(ncap, dtype=np.int64), np.zeros((ncap, N), dtype=np.int64),  # history
            fs, si,
            u0.copy(), v0.copy(),  # ubest, vbest: the multipliers of the lowest dual value
            np.zeros((4, N, N)),  # counts of y, z, z' and the chain's c over the iterations
            np.zeros((nslot, 2)), np.zeros(max(size, 1), dtype=np.int64), soff,
            # the head-bigram chain: its multipliers (and those of the lowest dual value), its
            # choice and value, whether some r changed, head positions and Viterbi work arrays
            r, r0.copy(), np.full(N, -1, dtype=np.int64), np.zeros(1), np.ones(1, dtype=np.bool_),
            head_positions(hd, hd_off, hd_len), np.empty(max(hd.shape[0], 1)),
            np.empty(max(hd.shape[0], 1), dtype=np.int64),
            *in_arcs(w))  # the kept arcs' in-lists, for the sparse Chu-Liu-Edmonds


@nb.njit(cache=True)
def _dd_run(arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off, use_g, alpha,
            max_iter, single_root, projective, tol, k_end, rule, patience, max_halvings,
            hd, hd_off, hd_len, hb, hb_off, use_hb,
            u, v, w, gpos, ztake, zgi, zval, dirty, best_heads, dual, primal, recomputed,
            chg_iter, chg_heads, fs, si, ubest, vbest, counts, sval, stake, soff,
            r, rbest, cz, cval, cdirty, hpos, cdelta, cback, in_ptr, in_src):
    """Run the dual decomposition loop (Fig. 1 / Fig. 2) from iteration ``si[_I_K]`` until
    agreement, a zero gap, ``max_iter`` or ``k_end`` iterations.  Resumable: all state lives
    in the arrays made by :func:`_dd_init`.

    The run stops early when ``L(u) <= max(f(best y), incumbent) + eps``: the upper bound
    ``L(u)`` (Eq. 9) then proves that no tree beats the best one known, which is this run's
    own best tree (a certificate) or the ``incumbent`` given from outside (branch and bound:
    the node is pruned, ``si[_I_PRUNED] = 1``).

    Returns a status: ``OK`` (stopped, see ``si[_I_DONE]``) or ``NO_TREE`` (no tree, or an
    automaton with no feasible choice, under the kept arcs: ``L = -inf``).
    """
    N = arc.shape[0]
    beta = 1.0 - alpha
    Wmax = ztake.shape[2]
    delta_w = np.empty(Wmax)
    back_w = np.empty(Wmax, dtype=np.int64)
    yh = np.empty(N, dtype=np.int64)
    ncap = chg_iter.shape[0]
    scale = fs[_F_SCALE]
    k = si[_I_K]
    while k < max_iter and k < k_end:
        si[_I_K] = k + 1
        # y-step: spanning tree under alpha*theta + u + v
        if projective:
            st = _eisner(w, single_root, yh)
        else:
            st = _cle_sparse(w, in_ptr, in_src, single_root, yh)
        if st != OK:
            si[_I_DONE] = 1
            return NO_TREE
        yval = 0.0
        for m in range(1, N):
            yval += w[yh[m], m]
        # z-step: head automata, lazily (Sec. 7.4)
        nrec = 0
        for h in range(N):
            if dirty[h, 0] or dirty[h, 1] or dirty[h, 2]:
                val, gi = _decode_head_lazy(h, arc, cand, cand_off, cand_len, gp, gp_off,
                                            gp_len, tab, tab_off, beta, u, v, single_root,
                                            delta_w, back_w, ztake[h], sval, stake, soff,
                                            dirty[h])
                zval[h] = val
                zgi[h] = gi
                dirty[h, 0] = False
                dirty[h, 1] = False
                dirty[h, 2] = False
                nrec += 1
        recomputed[k] = nrec / N
        L = yval
        for h in range(N):
            L += zval[h]
        if use_hb:  # the head-bigram chain, when some r(., .) changed
            if cdirty[0]:
                cval[0] = chain_viterbi(arc, hd, hd_off, hd_len, hb, hb_off, r, cdelta, cback,
                                        cz)
                cdirty[0] = False
            L += cval[0]
        dual[k] = L
        if L == NEG_INF:  # an automaton has no feasible choice: no tree either
            si[_I_DONE] = 1
            return NO_TREE
        if L < fs[_F_LMIN]:
            fs[_F_LMIN] = L
            ubest[:, :] = u
            vbest[:, :] = v
            rbest[:, :] = r
            si[_I_STALL] = 0
        else:
            si[_I_STALL] += 1
        f = _primal_score(yh, arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off,
                          gpos, use_g)
        if use_hb:
            f += tree_bigram_score(yh, hb, hb_off, hd_len, hpos)
        primal[k] = f
        if f > fs[_F_BEST] or si[_I_NCHG] == 0:  # (the first tree always counts: NaN-safe)
            fs[_F_BEST] = f
            best_heads[:] = yh
            c = si[_I_NCHG]
            if c >= ncap:
                c = ncap - 1  # history full: the last slot keeps the latest best tree
            chg_iter[c] = k + 1
            chg_heads[c, :] = yh
            si[_I_NCHG] = c + 1
        # agreement: y(h, m) = z(h, m) for all arcs, and z'(g, m) = y(g, m); the squared norm
        # of the subgradient counts the disagreements (each z' disagreement twice)
        nd = 0
        for m in range(1, N):
            counts[0, yh[m], m] += 1.0
        for h in range(N):
            for d in range(2):
                c0 = cand_off[h, d]
                for i in range(cand_len[h, d]):
                    m = cand[c0 + i]
                    if ztake[h, d, i] == 1:
                        counts[1, h, m] += 1.0
                        if yh[m] != h:
                            nd += 1
                    elif yh[m] == h:
                        nd += 1
            if use_g and h > 0:
                gz = gp[gp_off[h] + zgi[h]]
                counts[2, gz, h] += 1.0
                if gz != yh[h]:
                    nd += 2
        if use_hb:
            for m in range(1, N):
                counts[3, cz[m], m] += 1.0
                if cz[m] != yh[m]:
                    nd += 2
        if nd == 0:
            best_heads[:] = yh
            fs[_F_BEST] = f
            si[_I_CERT] = 1
            si[_I_DONE] = 1
            return OK
        inc = fs[_F_BEST]
        if fs[_F_INC] > inc:
            inc = fs[_F_INC]
        if L < np.inf and L - inc <= tol * max(scale, abs(L)):
            si[_I_CERT] = 1  # zero duality gap: the best known tree is optimal
            if fs[_F_INC] > fs[_F_BEST]:
                si[_I_PRUNED] = 1
            si[_I_DONE] = 1
            return OK
        # step size
        if rule == RULE_KOO:  # Appendix A.1
            if k == 0:
                fs[_F_STEP0] = L - f
            elif L > fs[_F_PREV]:
                si[_I_ETA] += 1
            fs[_F_PREV] = L
            step = fs[_F_STEP0] / (1.0 + si[_I_ETA])
        else:  # Polyak towards the incumbent; lambda halves after `patience` stalled steps
            if si[_I_STALL] >= patience:
                fs[_F_LAM] *= 0.5
                si[_I_HALVED] += 1
                si[_I_STALL] = 0
                if si[_I_HALVED] > max_halvings:  # stalled: the caller branches
                    si[_I_DONE] = 1
                    return OK
            step = fs[_F_LAM] * (L - inc) / nd
        # subgradient updates; lazy decoding marks the automata whose multipliers changed
        for h in range(N):
            for d in range(2):
                c0 = cand_off[h, d]
                for i in range(cand_len[h, d]):
                    m = cand[c0 + i]
                    zz = ztake[h, d, i]
                    yy = 1 if yh[m] == h else 0
                    if zz != yy:
                        du = step * (zz - yy)
                        u[h, m] += du
                        w[h, m] += du
                        dirty[h, d] = True
        if use_g:
            for m in range(1, N):
                gz = gp[gp_off[m] + zgi[m]]
                gy = yh[m]
                if gz != gy:
                    # z'(gz, m) = 1, y(gz, m) = 0 ; z'(gy, m) = 0, y(gy, m) = 1
                    v[gz, m] += step
                    w[gz, m] += step
                    v[gy, m] -= step
                    w[gy, m] -= step
                    dirty[m, 2] = True
        if use_hb:  # c(cz, m) = 1, y(cz, m) = 0 ; c(yh, m) = 0, y(yh, m) = 1
            for m in range(1, N):
                hc = cz[m]
                hy = yh[m]
                if hc != hy:
                    r[hc, m] += step
                    w[hc, m] += step
                    r[hy, m] -= step
                    w[hy, m] -= step
                    cdirty[0] = True
        k += 1
    if k >= max_iter:
        si[_I_DONE] = 1
    return OK


def dual_decompose(parts: PartTable, *, alpha=0.001, max_iter=5000, single_root=False,
                   projective=False, tol=GAP_TOL, time_limit=None, chunk=25, u0=None, v0=None,
                   incumbent=-np.inf, step_rule="koo", lam0=1.0, patience=10,
                   max_halvings=1 << 30, history=True, deadline=None, r0=None) -> DualResult:
    """Decode a sentence with dual decomposition (Koo et al. 2010, Fig. 1 or Fig. 2).

    Parameters
    ----------
    parts : PartTable
        Compiled part scores (:mod:`depparse.decode.parts`).  A sibling-only table gives
        Fig. 1; a table with grandparents gives Fig. 2.  Arcs with ``arc[h, m] = -inf`` are
        forbidden (branch and bound forbids arcs this way without rebuilding the tables).
    alpha : float, default 0.001
        Share of the arc scores given to the spanning-tree side (Appendix A.2).
    max_iter : int, default 5000
        The iteration cap ``K``.
    single_root : bool, default False
        Restrict ``Y`` (and the root automaton) to trees with exactly one root child.
    projective : bool, default False
        Use Eisner's projective decoder for ``Y`` (Table 3: P-Sib, P-G+S).
    tol : float
        Relative duality-gap tolerance for the gap certificate.
    time_limit : float, optional
        Anytime decoding: stop after about this many seconds and return the best tree found
        so far (uncertified unless a certificate was reached).  Checked every ``chunk``
        iterations.
    chunk : int
        Iterations between two clock checks when ``time_limit`` is set.
    u0, v0, r0 : (n+1, n+1) float64, optional
        Initial multipliers (warm start; zeros by default): ``r0`` those of the head-bigram
        chain, for a table with head bigrams.
    incumbent : float
        Score of the best tree known from elsewhere: the run stops as soon as its dual value
        proves that nothing here beats it (``pruned``), and Polyak steps aim at it.
    step_rule : {"koo", "polyak"}
        ``"koo"``: Appendix A.1.  ``"polyak"``: ``lam * (L(u) - f*) / |g|^2`` towards the best
        known score ``f*`` (Polyak 1969; Held and Karp 1971), ``lam`` starting at ``lam0`` and
        halved after ``patience`` iterations without a new lowest dual value; after
        ``max_halvings`` halvings the run stops (it has stalled).
    history : bool
        Keep the best-tree history (``best_changes``).
    deadline : float, optional
        ``time.perf_counter()`` value at which to stop (instead of ``time_limit``).

    Returns
    -------
    DualResult

    Raises
    ------
    NoSpanningTreeError
        If the kept arcs admit no tree.
    """
    if max_iter < 1:
        raise ValueError("max_iter must be >= 1")
    if step_rule not in STEP_RULES:
        raise ValueError(f"step_rule must be one of {sorted(STEP_RULES)}, got {step_rule!r}")
    arrays = parts.arrays()
    arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off = arrays
    N = arc.shape[0]
    u0 = np.zeros((N, N)) if u0 is None else np.ascontiguousarray(u0, dtype=np.float64)
    v0 = np.zeros((N, N)) if v0 is None else np.ascontiguousarray(v0, dtype=np.float64)
    r0 = np.zeros((N, N)) if r0 is None else np.ascontiguousarray(r0, dtype=np.float64)
    barrays = parts.bigram_arrays()
    state = _dd_init(arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off, float(alpha),
                     int(max_iter), u0, v0, float(incumbent), float(lam0), bool(history),
                     *barrays[:4], r0)
    fs, si = state[14], state[15]
    if deadline is None and time_limit is not None:
        deadline = time.perf_counter() + float(time_limit)
    k_end = int(max_iter) if deadline is None else 0
    while True:
        if deadline is not None:
            k_end = min(int(max_iter), k_end + chunk)
        status = _dd_run(*arrays, parts.grandparents, float(alpha), int(max_iter),
                         bool(single_root), bool(projective), float(tol), k_end,
                         STEP_RULES[step_rule], int(patience), int(max_halvings), *barrays,
                         parts.bigrams, *state)
        if status == NO_TREE:
            raise NoSpanningTreeError("no spanning tree rooted at 0 exists under the kept arcs")
        if si[_I_DONE] or (deadline is not None and time.perf_counter() >= deadline):
            break
    iters = int(si[_I_K])
    best_heads, dual, primal, rec = state[8], state[9], state[10], state[11]
    nchg = int(si[_I_NCHG])
    changes = [(int(state[12][c]), state[13][c].copy()) for c in range(nchg)] if history else []
    return DualResult(best_heads.copy(), bool(si[_I_CERT]) and not si[_I_PRUNED], iters,
                      dual[:iters].copy(), primal[:iters].copy(), rec[:iters].copy(),
                      float(fs[_F_BEST]), changes, not bool(si[_I_DONE]),
                      bound=float(fs[_F_LMIN]), pruned=bool(si[_I_PRUNED]),
                      u=state[16], v=state[17], counts=state[18], r=state[23])


def dual_decompose_dense(arc, sibling, grand=None, grandsib=None, bigram=None,
                         **kwargs) -> DualResult:
    """:func:`dual_decompose` on dense part tensors (encoding in :mod:`depparse.decode.parts`;
    ``bigram``: :mod:`depparse.decode.bigrams`).

    Meant for small sentences and tests; production decoding builds a pruned
    :class:`PartTable` directly and never needs the ``O(n^4)`` tensors.
    """
    return dual_decompose(compile_dense(arc, sibling, grand, grandsib, bigram), **kwargs)
