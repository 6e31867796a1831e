"""AD3: alternating directions dual decomposition for the head-automata models.

Martins, Figueiredo, Aguiar, Smith and Xing (2015), *AD3: Alternating Directions Dual
Decomposition for MAP Inference in Graphical Models* (JMLR 16), applied to the factor graph of
Koo et al. (2010): one binary variable per candidate arc ``(h, m)``; a TREE factor over all of
them (Chu-Liu-Edmonds, or Eisner when projective, is its MAP oracle) that carries the arc
scores; and one HEAD AUTOMATON factor per head ``h`` over its modifier arcs ``(h, m)`` and, in
the grandparent model, its incoming arcs ``(g, h)`` (the ``z'`` variables of Fig. 2), whose MAP
oracle is the head-automaton Viterbi of :mod:`depparse.decode.automata`.  Each arc thus has a
copy in the tree, in its head's automaton and (G+S) in its modifier's automaton.

One iteration (Martins et al. 2015, Algorithm 2; :func:`_ad3_run`, one small kernel per step):

1. every factor ``a`` solves its quadratic subproblem (Eq. 16)
   ``q_a = argmax_{q in M_a} theta_a . q + lambda_a . q_vars - eta/2 |q_vars - p|^2`` over its
   marginal polytope ``M_a``, by the active-set method (Sec. 6.2, Algorithm 3,
   :mod:`depparse.decode.qp`): a convex combination of a few MAP structures, grown by one
   oracle call at a time; the active set and its weights are kept from one iteration to the
   next (warm start) (:func:`_automata_subproblems`, :func:`_tree_subproblem`);
2. ``p`` = the average of the copies of each arc;
3. ``lambda_a -= eta (q_a - p)`` (the multipliers of each arc keep summing to zero)
   (2 and 3: :func:`_average_and_update`);
4. ``eta`` is adapted to balance the primal and dual residuals (Sec. 7.1; Boyd et al. 2011,
   Sec. 3.4.1) (:func:`_adapt_eta`).

Iteration 0 (:func:`_ad3_start`) makes every factor's MAP under ``theta`` alone its first
active structure.

Certificate (:func:`_ad3_certificate`): every ``dual_every`` iterations the dual
``L(lambda) = sum_a max_{y_a} (theta_a + lambda_a) . y_a`` (one MAP call per factor,
:func:`_ad3_dual`) is an upper bound on every tree (the multipliers of each arc sum to zero);
the tree of the TREE factor's MAP and the tree closest to ``p`` are scored with the full
model, and ``L <= f(best tree) + eps`` proves the best tree optimal (the gap certificate of
:mod:`depparse.decode.dual`).  The multipliers map to those of subgradient dual decomposition
(``u = (1 - alpha) theta - lambda_A``, ``v = -lambda_G``), so a run that has not certified
hands over to branch and bound (:mod:`depparse.decode.bnb`) like a subgradient run, with the
fractional copies ``q`` telling where to branch.

The state of a run is a named structure (:data:`Ad3State`: the factors' multipliers, copies
and active sets, the progress and the traces), and a time limit is enforced between chunks
of iterations by :func:`~depparse.decode.dual.run_anytime`, as for subgradient runs.
"""

from __future__ import annotations

from collections import namedtuple

import numba as nb
import numpy as np

from .automata import _decode_head, _viterbi_workspace
from .dual import (
    COUNT_Y,
    COUNT_Z,
    COUNT_ZG,
    GAP_TOL,
    DualResult,
    _gap_closed,
    _grandparent_slots,
    _primal_score,
    _score_scale,
    run_anytime,
)
from .mst import NO_TREE, OK
from .part_table import PartTable
from .qp import (
    KMAX,
    ActiveSet,
    AutomatonWork,
    _auto_phi,
    _auto_qp,
    _tree_qp,
    tree_map,
    tree_workspace,
)
from .slices import put, put2

__all__ = ["ad3_decompose"]

NEG_INF = -np.inf

# -- the state of a run, by name (named tuples; a changing scalar is an array of one) -----

#: The settings of a run (:func:`ad3_decompose`); ``eta0`` is the initial penalty.
Ad3Settings = namedtuple("Ad3Settings", ["single_root", "projective", "tol", "eta0",
                                         "max_iter", "dual_every"])

#: The TREE factor: its multipliers ``lam``, its copies ``q`` of the arcs, its active set
#: (:data:`~depparse.decode.qp.ActiveSet` of head arrays) and its size ``k[0]``.
TreeFactor = namedtuple("TreeFactor", ["lam", "q", "active", "k"])

#: The HEAD AUTOMATON factors: the multipliers of the modifier arcs ``lam[h, m]`` and of the
#: grandparent arcs ``lam_g[g, h]`` (and their values at the lowest dual value ``lam_best``,
#: ``lam_g_best``), the copies ``q`` and ``q_g``, the active sets (an
#: :data:`~depparse.decode.qp.ActiveSet` whose arrays have one row per head) and their sizes
#: ``k[h]``, and the oracle's modifier scores ``scores`` and grandparent costs ``gcost``.
AutomatonFactors = namedtuple("AutomatonFactors", [
    "lam", "lam_g", "q", "q_g", "active", "k", "scores", "gcost", "lam_best", "lam_g_best"])

#: Where the run stands: iterations ``k``, ``done``, ``certified``, MAP ``oracle_calls``,
#: the ``trees`` scored so far; the penalty ``eta``, the ``lowest`` dual value, the ``best``
#: tree's score and the last primal and dual residuals ``rp``, ``rd``.
Ad3Progress = namedtuple("Ad3Progress", ["k", "done", "certified", "oracle_calls", "trees",
                                         "eta", "lowest", "best", "rp", "rd"])

#: What the run reports: the best tree and the traces of the bound and of the best score
#: (NaN where no bound was computed).
Ad3Trace = namedtuple("Ad3Trace", ["best_heads", "dual", "primal"])

#: The whole state of a resumable run (:func:`_ad3_init`, :func:`_ad3_run`): the candidate
#: arcs ``allowed[h, m]``, the averages ``p`` of the copies, the factors, and ``scale``
#: (largest magnitude of a part score).
Ad3State = namedtuple("Ad3State", ["allowed", "p", "tree", "automata", "progress", "trace",
                                   "scale"])

#: Work arrays of one call of :func:`_ad3_run`: the TREE factor's (``tree``:
#: :data:`~depparse.decode.qp.TreeWork`, whose ``w`` and ``heads`` are also used by the dual
#: bound) and the automata's (``automaton``: :data:`~depparse.decode.qp.AutomatonWork`), the
#: second tree of the bound ``heads2``, the tree factor's input ``a``, an automaton's input
#: ``aloc`` and copies ``qloc``, ``gpos`` (:func:`~depparse.decode.dual._grandparent_slots`),
#: and the input of each factor's last subproblem (``alast``, ``alast_tree``, ``eta_last``:
#: a factor whose input is unchanged keeps its solution, no oracle call).  Made afresh by
#: every call (a resumed run recomputes those subproblems once).
Ad3Work = namedtuple("Ad3Work", ["tree", "automaton", "heads2", "a", "aloc", "qloc", "gpos",
                                 "alast", "alast_tree", "eta_last"])


@nb.njit(cache=True)
def _ad3_init(parts, max_iter):
    """Allocate the state of an AD3 run (:data:`Ad3State`, see :func:`_ad3_run`)."""
    N = parts.arc.shape[0]
    arc = parts.arc
    cand_len = parts.cand_len
    allowed = np.zeros((N, N), dtype=np.bool_)
    for h in range(N):
        for d in range(2):
            for i in range(cand_len[h, d]):
                m = parts.cand[parts.cand_off[h, d] + i]
                if arc[h, m] != NEG_INF:
                    allowed[h, m] = True
    Vmax = 1
    for h in range(N):
        V = cand_len[h, 0] + cand_len[h, 1] + (parts.gp_len[h]
                                                if (parts.grandparents and h > 0) else 0)
        if V > Vmax:
            Vmax = V
    tree = TreeFactor(np.zeros((N, N)), np.zeros((N, N)),
                      ActiveSet(np.zeros((KMAX, N), dtype=np.int64), np.zeros(KMAX),
                                np.zeros((KMAX, KMAX)), np.zeros(KMAX), np.zeros(KMAX)),
                      np.zeros(1, dtype=np.int64))
    automata = AutomatonFactors(
        np.zeros((N, N)), np.zeros((N, N)), np.zeros((N, N)), np.zeros((N, N)),
        ActiveSet(np.zeros((N, KMAX, Vmax), dtype=np.int64), np.zeros((N, KMAX)),
                  np.zeros((N, KMAX, KMAX)), np.zeros((N, KMAX)), np.zeros((N, KMAX))),
        np.zeros(N, dtype=np.int64), np.where(allowed, 0.0, NEG_INF), np.zeros((N, N)),
        np.zeros((N, N)), np.zeros((N, N)))
    i0 = np.zeros(1, dtype=np.int64)
    progress = Ad3Progress(i0, i0.copy(), i0.copy(), i0.copy(), i0.copy(), np.zeros(1),
                           np.full(1, np.inf), np.full(1, NEG_INF), np.zeros(1), np.zeros(1))
    trace = Ad3Trace(np.full(N, -1, dtype=np.int64), np.full(max_iter, np.nan),
                     np.full(max_iter, np.nan))
    return Ad3State(allowed, np.zeros((N, N)), tree, automata, progress, trace,
                    _score_scale(parts))


@nb.njit(cache=True, inline="always")
def _ad3_workspace(parts, state):
    """:data:`Ad3Work` for a call of :func:`_ad3_run`."""
    N = parts.arc.shape[0]
    Vmax = state.automata.active.W.shape[2]
    tree = tree_workspace(N)
    automaton = AutomatonWork(state.automata.scores, state.automata.gcost, np.zeros((N, N)),
                              tree.bhat, _viterbi_workspace(parts.cand_len))
    return Ad3Work(tree, automaton, np.empty(N, dtype=np.int64), np.empty((N, N)),
                   np.empty(Vmax), np.empty(Vmax), _grandparent_slots(parts),
                   np.full((N, Vmax), np.nan), np.full((N, N), np.nan), np.full(N + 1, np.nan))


@nb.njit(cache=True, inline="always")
def _head_set(active, h):
    """The active set of head ``h``'s automaton (views of the per-head rows of ``active``)."""
    return ActiveSet(active.W[h], active.beta[h], active.G[h], active.lin[h], active.phi[h])


@nb.njit(cache=True, inline="always")
def _n_vars(parts, h):
    """``(L0, L1, ng)``: the left and right candidates and the grandparent slots of ``h``'s
    automaton (its variables in this order)."""
    ng = parts.gp_len[h] if (parts.grandparents and h > 0) else 0
    return parts.cand_len[h, 0], parts.cand_len[h, 1], ng


@nb.njit(cache=True, inline="always")
def _copies_of(parts, h, x, qA, qG):
    """The copies of the arcs in ``h``'s automaton from its variables ``x`` (in the order of
    :func:`_n_vars`): ``qA[h, m]`` of its left then right candidates ``m``, ``qG[g, h]`` of its
    grandparent slots."""
    L0, L1, ng = _n_vars(parts, h)
    cand = parts.cand
    for i in range(L0):
        qA[h, cand[parts.cand_off[h, 0] + i]] = x[i]
    for i in range(L1):
        qA[h, cand[parts.cand_off[h, 1] + i]] = x[L0 + i]
    for gi in range(ng):
        qG[parts.gp[parts.gp_off[h] + gi], h] = x[L0 + L1 + gi]


@nb.njit(cache=True, inline="always")
def _ad3_start(parts, settings, state, work):
    """Iteration 0: every factor's MAP under ``theta`` alone is its first active structure;
    ``q`` and ``p`` follow from them.  Returns ``NO_TREE`` when there is no tree or an
    automaton has no feasible choice."""
    N = parts.arc.shape[0]
    use_g = parts.grandparents
    allowed = state.allowed
    tree, aut, progress = state.tree, state.automata, state.progress
    w = work.tree.w
    yh = work.tree.heads
    for h in range(N):
        for m in range(N):
            w[h, m] = parts.arc[h, m] if allowed[h, m] else NEG_INF
    if tree_map(w, settings.single_root, settings.projective, yh, work.tree.cle) != OK:
        return NO_TREE
    progress.best[0] = _primal_score(parts, yh, work.gpos)
    put(state.trace.best_heads, 0, yh, yh.shape[0])
    progress.trees[0] = 1
    T = tree.active
    put(T.W[0], 0, yh, yh.shape[0])
    tree.k[0] = 1
    T.beta[0] = 1.0
    T.G[0, 0] = N - 1.0
    viterbi = work.automaton.viterbi
    zero = work.automaton.zero
    best_take = viterbi.best_take
    scores = aut.scores
    WA = aut.active.W
    GA = aut.active.G
    phiA = aut.active.phi
    betaA = aut.active.beta
    kA = aut.k
    for h in range(N):
        val, gi = _decode_head(h, parts, scores, 1.0, zero, zero, settings.single_root, viterbi)
        if gi < 0:
            return NO_TREE
        L0, L1, ng = _n_vars(parts, h)
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
        phiA[h, 0] = _auto_phi(h, gi if ng > 0 else 0, WA[h, 0], parts.cand_off,
                               parts.cand_len, parts.gp_off, parts.tab, parts.tab_off)
        betaA[h, 0] = 1.0
        kA[h] = 1
    # q and p from these structures
    qT, qA, qG = tree.q, aut.q, aut.q_g
    for m in range(1, N):
        qT[T.W[0, m], m] = 1.0
    for h in range(N):
        _copies_of(parts, h, WA[h, 0], qA, qG)
    deg = 3.0 if use_g else 2.0
    for h in range(N):
        for m in range(N):
            if allowed[h, m]:
                state.p[h, m] = (qT[h, m] + qA[h, m] + (qG[h, m] if use_g else 0.0)) / deg
    return OK


@nb.njit(cache=True, inline="always")
def _automata_subproblems(parts, single_root, allowed, p, aut, work, eta):
    """Step 1 for the HEAD AUTOMATON factors ``aut``: each solves its quadratic subproblem
    (Eq. 16) against ``p + lambda / eta``, unless its input is that of its last solve.
    Returns the oracle calls."""
    N = parts.arc.shape[0]
    cand = parts.cand
    cand_off = parts.cand_off
    cand_len = parts.cand_len
    gp = parts.gp
    gp_off = parts.gp_off
    lam = aut.lam
    lam_g = aut.lam_g
    qA = aut.q
    qG = aut.q_g
    kA = aut.k
    active = aut.active
    aloc = work.aloc
    qloc = work.qloc
    alast = work.alast
    eta_last = work.eta_last
    automaton = work.automaton
    calls = 0
    for h in range(N):
        L0, L1, ng = _n_vars(parts, h)
        for d in range(2):
            off = 0 if d == 0 else L0
            for i in range(cand_len[h, d]):
                m = cand[cand_off[h, d] + i]
                aloc[off + i] = (p[h, m] + lam[h, m] / eta) if allowed[h, m] else NEG_INF
        for gi in range(ng):
            g = gp[gp_off[h] + gi]
            aloc[L0 + L1 + gi] = (p[g, h] + lam_g[g, h] / eta) if allowed[g, h] else NEG_INF
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
        put(alast[h], 0, aloc, V)
        kk, c = _auto_qp(h, parts, single_root, aloc, eta, _head_set(active, h), kA[h], qloc,
                         automaton)
        kA[h] = kk
        calls += c
        _copies_of(parts, h, qloc, qA, qG)
    return calls


@nb.njit(cache=True, inline="always")
def _tree_subproblem(parts, settings, allowed, p, tree, work, eta):
    """Step 1 for the TREE factor (it carries the arc scores): its quadratic subproblem
    against ``p + (theta + lambda) / eta``, unless its input is that of its last solve.
    Returns the oracle calls."""
    N = parts.arc.shape[0]
    arc = parts.arc
    lam = tree.lam
    a = work.a
    alast = work.alast_tree
    for h in range(N):
        for m in range(N):
            a[h, m] = p[h, m] + (arc[h, m] + lam[h, m]) / eta if allowed[h, m] else 0.0
    same = work.eta_last[N] == eta
    if same:
        for h in range(N):
            for m in range(N):
                if a[h, m] != alast[h, m]:
                    same = False
                    break
            if not same:
                break
    if same:
        return 0
    work.eta_last[N] = eta
    put2(alast, a)
    kk, calls = _tree_qp(a, allowed, settings.single_root, settings.projective, tree.active,
                         tree.k[0], tree.q, work.tree)
    tree.k[0] = kk
    return calls


@nb.njit(cache=True, inline="always")
def _average_and_update(use_g, allowed, p, tree, aut, eta):
    """Steps 2 and 3: ``p`` = the average of each arc's copies, ``lambda_a -= eta (q_a - p)``;
    returns the primal and dual residuals ``(rp, rd)``."""
    N = p.shape[0]
    deg = 3.0 if use_g else 2.0
    qT = tree.q
    qA = aut.q
    qG = aut.q_g
    lamT = tree.lam
    lamA = aut.lam
    lamG = aut.lam_g
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
    return rp, rd


@nb.njit(cache=True, inline="always")
def _adapt_eta(progress, eta, rp, rd):
    """Step 4: ``eta`` balances the primal and dual residuals (Sec. 7.1; Boyd et al. 2011,
    Sec. 3.4.1)."""
    progress.rp[0] = rp
    progress.rd[0] = rd
    if rp > 100.0 * rd:
        progress.eta[0] = min(eta * 2.0, 1e6)
    elif rd > 100.0 * rp:
        progress.eta[0] = max(eta * 0.5, 1e-6)


@nb.njit(cache=True, inline="always")
def _ad3_dual(parts, settings, state, work):
    """``L(lambda)`` (one MAP call per factor), and the two trees it suggests: the TREE
    factor's MAP (into ``work.tree.heads``) and the tree nearest to ``p`` (into
    ``work.heads2``).  Returns ``(status, L, f1, f2)`` with the trees' full-model scores."""
    N = parts.arc.shape[0]
    arc = parts.arc
    allowed = state.allowed
    p = state.p
    lamT = state.tree.lam
    aut = state.automata
    lamA = aut.lam
    lamG = aut.lam_g
    scores = aut.scores
    gcost = aut.gcost
    zero = work.automaton.zero
    viterbi = work.automaton.viterbi
    cle = work.tree.cle
    single_root = settings.single_root
    projective = settings.projective
    w = work.tree.w
    yh = work.tree.heads
    for h in range(N):
        for m in range(N):
            w[h, m] = arc[h, m] + lamT[h, m] if allowed[h, m] else NEG_INF
    if tree_map(w, single_root, projective, yh, cle) != OK:
        return NO_TREE, NEG_INF, NEG_INF, NEG_INF
    L = 0.0
    for m in range(1, N):
        L += w[yh[m], m]
    for h in range(N):
        for m in range(N):
            if allowed[h, m]:
                scores[h, m] = lamA[h, m]
                gcost[h, m] = -lamG[h, m]
    for h in range(N):
        val, gi = _decode_head(h, parts, scores, 1.0, zero, gcost, single_root, viterbi)
        L += val
    for h in range(N):
        for m in range(N):
            w[h, m] = p[h, m] if allowed[h, m] else NEG_INF
    tree_map(w, single_root, projective, work.heads2, cle)
    f1 = _primal_score(parts, yh, work.gpos)
    f2 = _primal_score(parts, work.heads2, work.gpos)
    return OK, L, f1, f2


@nb.njit(cache=True, inline="always")
def _ad3_certificate(parts, settings, state, work, k):
    """The certificate check of iteration ``k``: the dual bound, the best tree among those
    it suggests, and the gap test.  Returns a status (``NO_TREE``: no tree)."""
    N = parts.arc.shape[0]
    progress = state.progress
    trace = state.trace
    aut = state.automata
    lamT = state.tree.lam
    lamA = aut.lam
    lamG = aut.lam_g
    status, L, f1, f2 = _ad3_dual(parts, settings, state, work)
    if status != OK:
        return status
    trace.dual[k] = L
    if L < progress.lowest[0]:
        progress.lowest[0] = L
        put2(aut.lam_best, lamA)
        put2(aut.lam_g_best, lamG)
    for t in range(2):
        f = f1 if t == 0 else f2
        if f > progress.best[0] or progress.trees[0] == 0:
            progress.best[0] = f
            src = work.tree.heads if t == 0 else work.heads2
            put(trace.best_heads, 0, src, src.shape[0])
            progress.trees[0] += 1
    trace.primal[k] = max(f1, f2)
    # the tolerance of the gap certificate (depparse.decode.dual) also covers the rounding of
    # the multipliers, which sum to zero over each arc's copies
    lmax = 0.0
    allowed = state.allowed
    for h in range(N):
        for m in range(N):
            if allowed[h, m]:
                lmax = max(lmax, abs(lamT[h, m]), abs(lamA[h, m]), abs(lamG[h, m]))
    if _gap_closed(progress.lowest[0], progress.best[0], max(state.scale, lmax),
                   settings.tol):
        progress.certified[0] = 1
    return OK


@nb.njit(cache=True)
def _ad3_run(parts, settings, state, k_end):
    """AD3 iterations (module docstring) from ``progress.k`` to a certificate, ``max_iter``
    or ``k_end``.  Resumable.  Returns ``OK`` or ``NO_TREE``."""
    progress = state.progress
    allowed = state.allowed
    p = state.p
    tree = state.tree
    aut = state.automata
    work = _ad3_workspace(parts, state)
    k = progress.k[0]
    if k == 0:
        progress.eta[0] = settings.eta0
        if _ad3_start(parts, settings, state, work) != OK:
            progress.done[0] = 1
            return NO_TREE
    while k < settings.max_iter and k < k_end:
        progress.k[0] = k + 1
        eta = progress.eta[0]
        # 1. the subproblems, all against the same p
        calls = _automata_subproblems(parts, settings.single_root, allowed, p, aut, work, eta)
        progress.oracle_calls[0] += calls
        progress.oracle_calls[0] += _tree_subproblem(parts, settings, allowed, p, tree, work,
                                                     eta)
        # 2. p = average of the copies; 3. multipliers
        rp, rd = _average_and_update(parts.grandparents, allowed, p, tree, aut, eta)
        # 4. eta: balance the residuals
        _adapt_eta(progress, eta, rp, rd)
        # certificate check
        if k == 0 or (k + 1) % settings.dual_every == 0 or k + 1 == settings.max_iter:
            if _ad3_certificate(parts, settings, state, work, k) != OK:
                progress.done[0] = 1
                return NO_TREE
            if progress.certified[0]:
                progress.done[0] = 1
                return OK
        k += 1
    if k >= settings.max_iter:
        progress.done[0] = 1
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
    table = parts.part_arrays()
    settings = Ad3Settings(bool(single_root), bool(projective), float(tol), float(eta),
                           int(max_iter), int(dual_every))
    state = _ad3_init(table, int(max_iter))
    run_anytime(_ad3_run, table, settings, state, max_iter=max_iter, time_limit=time_limit,
                deadline=deadline, chunk=chunk)
    progress, trace, aut = state.progress, state.trace, state.automata
    iters = int(progress.k[0])
    allowed = state.allowed
    beta = 1.0 - float(alpha)
    u = np.where(allowed, beta * np.where(allowed, parts.arc, 0.0) - aut.lam_best, 0.0)
    v = np.where(allowed, -aut.lam_g_best, 0.0)
    dual, primal = _ffill(trace.dual[:iters]), _ffill(trace.primal[:iters])
    counts = np.empty((3,) + aut.q.shape)  # the copies q (AD3 has no chain factor)
    counts[COUNT_Y], counts[COUNT_Z] = state.tree.q, aut.q
    counts[COUNT_ZG] = aut.q_g if table.grandparents else aut.q
    return DualResult(np.asarray(trace.best_heads, dtype=np.int64).copy(),
                      bool(progress.certified[0]), iters, dual, primal, np.ones(iters),
                      float(progress.best[0]), [], not bool(progress.done[0]),
                      bound=float(progress.lowest[0]), pruned=False, u=u, v=v,
                      counts=counts,
                      oracle_calls=int(progress.oracle_calls[0]), counted=1)


def _ffill(a):
    """Each NaN (no bound computed at that iteration) replaced by the value before it."""
    out = a.copy()
    for i in range(1, out.size):
        if np.isnan(out[i]):
            out[i] = out[i - 1]
    return out
