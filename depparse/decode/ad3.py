"""AD3: alternating directions dual decomposition for the head-automata models.

Martins, Figueiredo, Aguiar, Smith and Xing (2015), *AD3: Alternating Directions Dual
Decomposition for MAP Inference in Graphical Models* (JMLR 16), applied to the factor graph of
Koo et al. (2010): one binary variable per candidate arc ``(h, m)``; a TREE factor over all of
them (Chu-Liu-Edmonds, or Eisner when projective, is its MAP oracle) that carries the arc
scores; and one HEAD AUTOMATON factor per head ``h`` over its modifier arcs ``(h, m)`` and, in
the grandparent model, its incoming arcs ``(g, h)`` (the ``z'`` variables of Fig. 2), whose MAP
oracle is the head-automaton Viterbi of :mod:`depparse.decode.automata`.  Each arc thus has a
copy in the tree, in its head's automaton and (G+S) in its modifier's automaton.

One iteration (Martins et al. 2015, Algorithm 2):

1. every factor ``a`` solves its quadratic subproblem (Eq. 16)
   ``q_a = argmax_{q in M_a} theta_a . q + lambda_a . q_vars - eta/2 |q_vars - p|^2`` over its
   marginal polytope ``M_a``, by the active-set method (Sec. 6.2, Algorithm 3): a convex
   combination of a few MAP structures, grown by one oracle call at a time; the active set and
   its weights are kept from one iteration to the next (warm start);
2. ``p`` = the average of the copies of each arc;
3. ``lambda_a -= eta (q_a - p)`` (the multipliers of each arc keep summing to zero);
4. ``eta`` is adapted to balance the primal and dual residuals (Sec. 7.1; Boyd et al. 2011,
   Sec. 3.4.1).

Certificate: every ``dual_every`` iterations the dual ``L(lambda) = sum_a max_{y_a} (theta_a +
lambda_a) . y_a`` (one MAP call per factor) is an upper bound on every tree (the multipliers of
each arc sum to zero); the tree of the TREE factor's MAP and the tree closest to ``p`` are
scored with the full model, and ``L <= f(best tree) + eps`` proves the best tree optimal (the
gap certificate of :mod:`depparse.decode.dual`).  The multipliers map to those of subgradient
dual decomposition (``u = (1 - alpha) theta - lambda_A``, ``v = -lambda_G``), so a run that has
not certified hands over to branch and bound (:mod:`depparse.decode.bnb`) like a subgradient
run, with the fractional copies ``q`` telling where to branch.
"""

from __future__ import annotations

import time

import numba as nb
import numpy as np

from .automata import _decode_head, _viterbi_workspace
from .dual import GAP_TOL, DualResult, _primal_score
from .eisner import _eisner
from .mst import NO_TREE, OK, NoSpanningTreeError, _cle_workspace, _cle_ws
from .parts import PartTable
from .qp import KMAX, _auto_phi, _auto_qp, _tree_qp

__all__ = ["ad3_decompose"]

NEG_INF = -np.inf

# scalar state
_F_ETA, _F_LMIN, _F_BEST, _F_SCALE, _F_RP, _F_RD = 0, 1, 2, 3, 4, 5
_I_K, _I_CERT, _I_DONE, _I_ORACLE, _I_NTREE = 0, 1, 2, 3, 4


@nb.njit(cache=True)
def _ad3_init(arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, use_g, max_iter):
    """Allocate the state of an AD3 run (see :func:`_ad3_run`)."""
    N = arc.shape[0]
    allowed = np.zeros((N, N), dtype=np.bool_)
    for h in range(N):
        for d in range(2):
            for i in range(cand_len[h, d]):
                m = cand[cand_off[h, d] + i]
                if arc[h, m] != NEG_INF:
                    allowed[h, m] = True
    Vmax = 1
    for h in range(N):
        V = cand_len[h, 0] + cand_len[h, 1] + (gp_len[h] if (use_g and h > 0) else 0)
        if V > Vmax:
            Vmax = V
    scale = 0.0
    for h in range(N):
        for m in range(N):
            if arc[h, m] != NEG_INF and abs(arc[h, m]) > scale:
                scale = abs(arc[h, m])
    for i in range(tab.shape[0]):
        if tab[i] != NEG_INF and abs(tab[i]) > scale:
            scale = abs(tab[i])
    fs = np.zeros(6)
    fs[_F_LMIN] = np.inf
    fs[_F_BEST] = NEG_INF
    fs[_F_SCALE] = scale
    si = np.zeros(5, dtype=np.int64)
    lin_mat = np.where(allowed, 0.0, NEG_INF)
    return (allowed, np.zeros((N, N)), np.zeros((N, N)), np.zeros((N, N)), np.zeros((N, N)),
            np.zeros((N, N)), np.zeros((N, N)), np.zeros((N, N)),  # p, lamT/A/G, qT/A/G
            np.zeros((KMAX, N), dtype=np.int64), np.zeros(1, dtype=np.int64),  # tree set
            np.zeros(KMAX), np.zeros((KMAX, KMAX)), np.zeros(KMAX), np.zeros(KMAX),
            np.zeros((N, KMAX, Vmax), dtype=np.int64), np.zeros(N, dtype=np.int64),  # automata
            np.zeros((N, KMAX)), np.zeros((N, KMAX, KMAX)), np.zeros((N, KMAX)),
            np.zeros((N, KMAX)),
            lin_mat, np.zeros((N, N)),  # oracle scores of the automata (rows) and grandparents
            np.full(N, -1, dtype=np.int64),  # best tree
            np.zeros((N, N)), np.zeros((N, N)),  # lamA, lamG at the lowest dual value
            np.full(max_iter, np.nan), np.full(max_iter, np.nan),  # dual and primal traces
            fs, si)


@nb.njit(cache=True)
def _ad3_dual(arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off, use_g,
              single_root, projective, allowed, p, lamT, lamA, lamG, lin_mat, vmat, zero, w, yh,
              inn, tin, oh, om, delta, back, take, best_take, gpos):
    """``L(lambda)`` (one MAP call per factor), and the two trees it suggests: the TREE
    factor's MAP and the tree nearest to ``p``.  Returns ``(L, f1, f2, status)``; the trees
    are left in ``yh[0]`` and ``yh[1]``."""
    N = arc.shape[0]
    for h in range(N):
        for m in range(N):
            w[h, m] = arc[h, m] + lamT[h, m] if allowed[h, m] else NEG_INF
    st = _eisner(w, single_root, yh[0]) if projective else _cle_ws(w, single_root, yh[0], inn,
                                                                    tin, oh, om)
    if st != OK:
        return NEG_INF, NEG_INF, NEG_INF, NO_TREE
    L = 0.0
    for m in range(1, N):
        L += w[yh[0, m], m]
    for h in range(N):
        for m in range(N):
            if allowed[h, m]:
                lin_mat[h, m] = lamA[h, m]
                vmat[h, m] = -lamG[h, m]
    for h in range(N):
        val, gi = _decode_head(h, lin_mat, cand, cand_off, cand_len, gp, gp_off, gp_len, tab,
                               tab_off, 1.0, zero, vmat, single_root, delta, back, take,
                               best_take)
        L += val
    for h in range(N):
        for m in range(N):
            w[h, m] = p[h, m] if allowed[h, m] else NEG_INF
    if projective:
        _eisner(w, single_root, yh[1])
    else:
        _cle_ws(w, single_root, yh[1], inn, tin, oh, om)
    f1 = _primal_score(yh[0], arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off,
                       gpos, use_g)
    f2 = _primal_score(yh[1], arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off,
                       gpos, use_g)
    return L, f1, f2, OK


@nb.njit(cache=True)
def _ad3_run(arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off, use_g,
             single_root, projective, tol, eta0, max_iter, k_end, dual_every,
             allowed, p, lamT, lamA, lamG, qT, qA, qG, WT, kT, betaT, GT, linT, phiT,
             WA, kA, betaA, GA, linA, phiA, lin_mat, vmat, best_heads, lamA_best, lamG_best,
             dual, primal, fs, si):
    """AD3 iterations (module docstring) from ``si[_I_K]`` to a certificate, ``max_iter`` or
    ``k_end``.  Resumable.  Returns ``OK`` or ``NO_TREE``."""
    N = arc.shape[0]
    Vmax = WA.shape[2]
    deg = 3.0 if use_g else 2.0
    zero = np.zeros((N, N))
    w = np.empty((N, N))
    a = np.empty((N, N))
    yh = np.empty((2, N), dtype=np.int64)
    inn, tin, oh, om = _cle_workspace(N)
    bhat = np.empty(KMAX)
    aloc = np.empty(Vmax)
    qloc = np.empty(Vmax)
    delta, back, take, best_take = _viterbi_workspace(cand_len)
    gpos = np.full((N, N), -1, dtype=np.int64)
    for h in range(N):
        for gi in range(gp_len[h]):
            g = gp[gp_off[h] + gi]
            if g >= 0:
                gpos[h, g] = gi
    scale = fs[_F_SCALE]
    # the input of each factor's last subproblem (a factor whose input is unchanged keeps its
    # solution: no oracle call); reset on resume, which only costs a recomputation
    alast = np.full((N, Vmax), np.nan)
    alastT = np.full((N, N), np.nan)
    eta_last = np.full(N + 1, np.nan)
    k = si[_I_K]
    if k == 0:
        fs[_F_ETA] = eta0
        # iteration 0: every factor's MAP under theta alone is its first active structure
        for h in range(N):
            for m in range(N):
                w[h, m] = arc[h, m] if allowed[h, m] else NEG_INF
        st = _eisner(w, single_root, yh[0]) if projective else _cle_ws(
            w, single_root, yh[0], inn, tin, oh, om)
        if st != OK:
            si[_I_DONE] = 1
            return NO_TREE
        fs[_F_BEST] = _primal_score(yh[0], arc, cand, cand_off, cand_len, gp, gp_off, gp_len,
                                    tab, tab_off, gpos, use_g)
        best_heads[:] = yh[0]
        si[_I_NTREE] = 1
        WT[0, :] = yh[0]
        kT[0] = 1
        betaT[0] = 1.0
        GT[0, 0] = N - 1.0
        for h in range(N):
            val, gi = _decode_head(h, lin_mat, cand, cand_off, cand_len, gp, gp_off, gp_len,
                                   tab, tab_off, 1.0, zero, zero, single_root, delta, back,
                                   take, best_take)
            if gi < 0:
                si[_I_DONE] = 1
                return NO_TREE
            L0 = cand_len[h, 0]
            L1 = cand_len[h, 1]
            ng = gp_len[h] if (use_g and h > 0) else 0
            for i in range(L0):
                WA[h, 0, i] = best_take[0, i]
            for i in range(L1):
                WA[h, 0, L0 + i] = best_take[1, i]
            for g2 in range(ng):
                WA[h, 0, L0 + L1 + g2] = 1 if g2 == gi else 0
            c = 0.0
            for j in range(L0 + L1 + ng):
                c += WA[h, 0, j]
            GA[h, 0, 0] = c
            phiA[h, 0] = _auto_phi(h, gi if ng > 0 else 0, WA[h, 0], cand_off, cand_len,
                                   gp_off, tab, tab_off)
            betaA[h, 0] = 1.0
            kA[h] = 1
        # q and p from these structures
        for m in range(1, N):
            qT[WT[0, m], m] = 1.0
        for h in range(N):
            L0 = cand_len[h, 0]
            L1 = cand_len[h, 1]
            for i in range(L0):
                qA[h, cand[cand_off[h, 0] + i]] = WA[h, 0, i]
            for i in range(L1):
                qA[h, cand[cand_off[h, 1] + i]] = WA[h, 0, L0 + i]
            if use_g and h > 0:
                for gi in range(gp_len[h]):
                    qG[gp[gp_off[h] + gi], h] = WA[h, 0, L0 + L1 + gi]
        for h in range(N):
            for m in range(N):
                if allowed[h, m]:
                    p[h, m] = (qT[h, m] + qA[h, m] + (qG[h, m] if use_g else 0.0)) / deg
    while k < max_iter and k < k_end:
        si[_I_K] = k + 1
        eta = fs[_F_ETA]
        # 1. the subproblems, all against the same p
        for h in range(N):
            L0 = cand_len[h, 0]
            L1 = cand_len[h, 1]
            ng = gp_len[h] if (use_g and h > 0) else 0
            for d in range(2):
                off = 0 if d == 0 else L0
                for i in range(cand_len[h, d]):
                    m = cand[cand_off[h, d] + i]
                    aloc[off + i] = (p[h, m] + lamA[h, m] / eta) if allowed[h, m] else NEG_INF
            for gi in range(ng):
                g = gp[gp_off[h] + gi]
                aloc[L0 + L1 + gi] = (p[g, h] + lamG[g, h] / eta) if allowed[g, h] else NEG_INF
            V = L0 + L1 + ng
            same = eta_last[h] == eta
            if same:
                for j in range(V):
                    if aloc[j] != alast[h, j]:
                        same = False
                        break
            if same:  # same input, same subproblem: its solution stands (no oracle call)
                continue
            eta_last[h] = eta
            alast[h, :V] = aloc[:V]
            kk, calls = _auto_qp(h, aloc, eta, arc, lin_mat, vmat, zero, cand, cand_off,
                                 cand_len, gp, gp_off, gp_len, tab, tab_off, single_root,
                                 use_g, WA[h], kA[h], betaA[h], GA[h], linA[h], phiA[h], bhat,
                                 qloc, delta, back, take, best_take)
            kA[h] = kk
            si[_I_ORACLE] += calls
            for d in range(2):
                off = 0 if d == 0 else L0
                for i in range(cand_len[h, d]):
                    qA[h, cand[cand_off[h, d] + i]] = qloc[off + i]
            for gi in range(ng):
                qG[gp[gp_off[h] + gi], h] = qloc[L0 + L1 + gi]
        for h in range(N):
            for m in range(N):
                a[h, m] = p[h, m] + (arc[h, m] + lamT[h, m]) / eta if allowed[h, m] else 0.0
        same = eta_last[N] == eta
        if same:
            for h in range(N):
                for m in range(N):
                    if a[h, m] != alastT[h, m]:
                        same = False
                        break
                if not same:
                    break
        if not same:
            eta_last[N] = eta
            alastT[:, :] = a
            kk, calls = _tree_qp(a, allowed, single_root, projective, WT, kT[0], betaT, GT,
                                 linT, phiT, bhat, qT, yh[0], w, inn, tin, oh, om)
            kT[0] = kk
            si[_I_ORACLE] += calls
        # 2. p = average of the copies; 3. multipliers; residuals
        rp = 0.0
        rd = 0.0
        for h in range(N):
            for m in range(N):
                if not allowed[h, m]:
                    continue
                qg = qG[h, m] if use_g else 0.0
                pn = (qT[h, m] + qA[h, m] + qg) / deg
                rd += deg * (pn - p[h, m]) ** 2
                dT = qT[h, m] - pn
                dA = qA[h, m] - pn
                rp += dT * dT + dA * dA
                lamT[h, m] -= eta * dT
                lamA[h, m] -= eta * dA
                if use_g:
                    dG = qg - pn
                    rp += dG * dG
                    lamG[h, m] -= eta * dG
                p[h, m] = pn
        fs[_F_RP] = rp
        fs[_F_RD] = rd
        # 4. eta: balance the residuals
        if rp > 100.0 * rd:
            fs[_F_ETA] = min(eta * 2.0, 1e6)
        elif rd > 100.0 * rp:
            fs[_F_ETA] = max(eta * 0.5, 1e-6)
        # certificate check
        if k == 0 or (k + 1) % dual_every == 0 or k + 1 == max_iter:
            L, f1, f2, st = _ad3_dual(arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab,
                                      tab_off, use_g, single_root, projective, allowed, p,
                                      lamT, lamA, lamG, lin_mat, vmat, zero, w, yh, inn, tin,
                                      oh, om, delta, back, take, best_take, gpos)
            if st != OK:
                si[_I_DONE] = 1
                return NO_TREE
            dual[k] = L
            if L < fs[_F_LMIN]:
                fs[_F_LMIN] = L
                lamA_best[:, :] = lamA
                lamG_best[:, :] = lamG
            for t in range(2):
                f = f1 if t == 0 else f2
                if f > fs[_F_BEST] or si[_I_NTREE] == 0:
                    fs[_F_BEST] = f
                    best_heads[:] = yh[t]
                    si[_I_NTREE] += 1
            primal[k] = max(f1, f2)
            # the tolerance of the gap certificate (depparse.decode.dual) also covers the
            # rounding of the multipliers, which sum to zero over each arc's copies
            lmax = 0.0
            for h in range(N):
                for m in range(N):
                    if allowed[h, m]:
                        lmax = max(lmax, abs(lamT[h, m]), abs(lamA[h, m]), abs(lamG[h, m]))
            Lm = fs[_F_LMIN]
            if Lm < np.inf and Lm - fs[_F_BEST] <= tol * max(scale, abs(Lm), lmax):
                si[_I_CERT] = 1
                si[_I_DONE] = 1
                return OK
        k += 1
    if k >= max_iter:
        si[_I_DONE] = 1
    return OK


def ad3_decompose(parts: PartTable, *, alpha=0.001, max_iter=1000, single_root=False,
                  projective=False, tol=GAP_TOL, time_limit=None, deadline=None, chunk=10,
                  eta=0.03, dual_every=5) -> DualResult:
    """Decode a sentence with AD3 (module docstring).

    Parameters
    ----------
    parts : PartTable
        As for :func:`~depparse.decode.dual.dual_decompose` (``-inf`` arcs are forbidden).
    alpha : float
        Only used to express the multipliers as those of subgradient dual decomposition
        (``u``, ``v`` of the result, a warm start for branch and bound).
    max_iter : int
        Iteration cap.
    eta : float
        Initial penalty ``eta`` (adapted during the run).
    dual_every : int
        Iterations between two dual bounds (each costs one MAP call per factor).
    time_limit, deadline, chunk
        As for :func:`~depparse.decode.dual.dual_decompose`.

    Returns
    -------
    DualResult
        ``dual``/``primal`` hold the bound and the best tree score at the iterations where the
        bound was computed (NaN elsewhere); ``recomputed`` is all ones (no lazy decoding);
        ``counts`` holds the copies ``q`` of the tree, the automata and the grandparent arcs
        (fractions; ``iterations`` normalises them for branch and bound as 1).

    Raises
    ------
    NoSpanningTreeError
        If the kept arcs admit no tree.
    ValueError
        For a table with head-bigram parts (AD3 here has no chain factor: decode those with
        the subgradient solver).
    """
    if max_iter < 1:
        raise ValueError("max_iter must be >= 1")
    if parts.bigrams:
        raise ValueError("AD3 has no head-bigram factor: decode models with head bigrams "
                         "with solver='subgradient'")
    arrays = parts.arrays()
    use_g = bool(parts.grandparents)
    state = _ad3_init(*arrays[:8], use_g, int(max_iter))
    fs, si = state[-2], state[-1]
    if deadline is None and time_limit is not None:
        deadline = time.perf_counter() + float(time_limit)
    k_end = int(max_iter) if deadline is None else 0
    while True:
        if deadline is not None:
            k_end = min(int(max_iter), k_end + chunk)
        st = _ad3_run(*arrays, use_g, bool(single_root), bool(projective), float(tol),
                      float(eta), int(max_iter), k_end, int(dual_every), *state)
        if st == NO_TREE:
            raise NoSpanningTreeError("no spanning tree rooted at 0 exists under the kept arcs")
        if si[_I_DONE] or (deadline is not None and time.perf_counter() >= deadline):
            break
    iters = int(si[_I_K])
    (allowed, p, lamT, lamA, lamG, qT, qA, qG) = state[:8]
    best_heads, lamA_best, lamG_best, dual, primal = state[22:27]
    arc = parts.arc
    beta = 1.0 - float(alpha)
    u = np.where(allowed, beta * np.where(allowed, arc, 0.0) - lamA_best, 0.0)
    v = np.where(allowed, -lamG_best, 0.0)
    score = float(fs[_F_BEST])
    dual, primal = _ffill(dual[:iters]), _ffill(primal[:iters])
    res = DualResult(np.asarray(best_heads, dtype=np.int64).copy(), bool(si[_I_CERT]), iters,
                     dual, primal, np.ones(iters), score, [],
                     not bool(si[_I_DONE]), bound=float(fs[_F_LMIN]), pruned=False, u=u, v=v,
                     counts=np.stack([qT, qA, qG if use_g else qA]),
                     oracle_calls=int(si[_I_ORACLE]))
    return res


def _ffill(a):
    """Each NaN (no bound computed at that iteration) replaced by the value before it."""
    out = a.copy()
    for i in range(1, out.size):
        if np.isnan(out[i]):
            out[i] = out[i - 1]
    return out
