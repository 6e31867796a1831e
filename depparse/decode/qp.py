"""The quadratic subproblems of AD3, solved by the active-set method over a MAP oracle.

Martins, Figueiredo, Aguiar, Smith and Xing (2015, Sec. 6.2 and Algorithm 3): the subproblem of
a factor, ``max_{q in M} phi . q / eta - |q_vars - a|^2 / 2`` over its marginal polytope ``M``,
is solved over convex combinations ``beta`` of a few of the factor's structures (the active
set ``W``): solve the KKT system of the equality-constrained problem on ``W`` (the weights sum
to one); if a weight would turn negative, move as far as feasible and drop that structure;
otherwise ask the factor's MAP oracle for the structure with the largest gradient
``phi_s / eta + m_s . (a - M beta)``, and stop when it is no larger than the KKT multiplier
``tau`` (no structure improves), else add it.  The active set and its weights are kept by the
caller between calls (warm start), so that most calls need one KKT solve and one oracle call.

The steps of the method are written once (:func:`_as_step`, :func:`_make_room`,
:func:`_is_known`, :func:`_admit`); each factor adds its oracle and the inner products of its
structures.

Two factors: the TREE factor (structures: head arrays; oracle: Chu-Liu-Edmonds or Eisner) and a
HEAD AUTOMATON (structures: 0/1 vectors over the head's candidate modifiers and grandparent
slots, with their table score ``phi``; oracle: :func:`~depparse.decode.automata._decode_head`).
"""

from __future__ import annotations

from collections import namedtuple

import numba as nb
import numpy as np

from .automata import _decode_head
from .eisner import _eisner
from .mst import OK, _cle_workspace, _cle_ws
from .slices import put

NEG_INF = -np.inf
KMAX = 48  # active-set capacity per factor (Caratheodory allows more; rarely reached)
QP_ITERS = 20  # active-set iterations per subproblem and outer iteration

#: The active set of one factor, kept between calls (a warm start): the structures ``W[:k]``
#: (a tree's head array, or an automaton's 0/1 vector), their weights ``beta`` (on the
#: simplex), their Gram matrix ``G[s, t] = m_s . m_t``, the linear terms ``lin[s]`` of the
#: objective and each structure's own score ``phi[s]``.  ``k`` is kept by the caller.
ActiveSet = namedtuple("ActiveSet", ["W", "beta", "G", "lin", "phi"])

#: Work arrays of the TREE factor's subproblem: the KKT solution ``bhat``, the oracle's arc
#: weights ``w`` and tree ``heads``, and the work arrays ``cle`` of Chu-Liu-Edmonds
#: (:func:`~depparse.decode.mst._cle_workspace`).
TreeWork = namedtuple("TreeWork", ["bhat", "w", "heads", "cle"])

#: Work arrays of a HEAD AUTOMATON's subproblem: the oracle's modifier scores ``scores[h, m]``
#: (``-inf`` off the allowed arcs) and grandparent costs ``gcost[g, h]``, zero multipliers
#: ``zero``, the KKT solution ``bhat`` and the Viterbi work arrays
#: (:data:`~depparse.decode.automata.ViterbiWork`).
AutomatonWork = namedtuple("AutomatonWork", ["scores", "gcost", "zero", "bhat", "viterbi"])

# outcomes of one active-set step (:func:`_as_step`)
AT_KKT = 0  # the KKT point of the active set is feasible: ask the oracle
BLOCKED = 1  # a weight reached zero on the way: that structure left, step again
SINGULAR = 2  # the KKT system is singular: stop


@nb.njit(cache=True, no_cpython_wrapper=True)
def _kkt(G, lin, k, out):
    """Solve ``[G 1; 1' 0] [b; tau] = [lin; 1]`` (k active structures) by Gaussian elimination
    with partial pivoting.  Writes ``b`` into ``out``; returns ``(ok, tau)``."""
    n = k + 1
    A = np.empty((n, n + 1))
    for i in range(k):
        for j in range(k):
            A[i, j] = G[i, j]
        A[i, k] = 1.0
        A[i, n] = lin[i]
    for j in range(k):
        A[k, j] = 1.0
    A[k, k] = 0.0
    A[k, n] = 1.0
    for c in range(n):
        piv = c
        for r in range(c + 1, n):
            if abs(A[r, c]) > abs(A[piv, c]):
                piv = r
        if abs(A[piv, c]) < 1e-10:
            return False, 0.0
        if piv != c:
            for j in range(n + 1):
                t = A[c, j]
                A[c, j] = A[piv, j]
                A[piv, j] = t
        for r in range(c + 1, n):
            f = A[r, c] / A[c, c]
            if f != 0.0:
                for j in range(c, n + 1):
                    A[r, j] -= f * A[c, j]
    x = np.empty(n)
    for r in range(n - 1, -1, -1):
        s = A[r, n]
        for j in range(r + 1, n):
            s -= A[r, j] * x[j]
        x[r] = s / A[r, r]
    for i in range(k):
        out[i] = x[i]
    return True, x[k]


@nb.njit(cache=True, no_cpython_wrapper=True)
def _as_move(G, lin, beta, k, bhat):
    """One active-set step on the weights ``beta`` of ``k`` structures (Martins et al. 2015,
    Algorithm 3): solve the KKT system on the active set, then move towards its solution as far
    as ``beta >= 0`` allows.  Returns ``(status, tau, drop)``: status 0 = reached the KKT point
    (check optimality with the oracle), 1 = blocked (structure ``drop`` leaves), 2 = singular.
    """
    ok, tau = _kkt(G, lin, k, bhat)
    if not ok:
        return 2, 0.0, -1
    step = 1.0
    drop = -1
    for s in range(k):
        if bhat[s] < 0.0:
            t = beta[s] / (beta[s] - bhat[s])
            if t < step:
                step = t
                drop = s
    for s in range(k):
        beta[s] += step * (bhat[s] - beta[s])
    if drop >= 0:
        beta[drop] = 0.0
        return 1, tau, drop
    return 0, tau, -1


@nb.njit(cache=True, inline="always")
def _remove(A, k, s):
    """Remove structure ``s`` from an active set of size ``k`` (swap with the last)."""
    last = k - 1
    if s != last:
        G = A.G
        lin = A.lin
        beta = A.beta
        phi = A.phi
        W = A.W
        for j in range(k):
            G[s, j] = G[last, j]
        for j in range(k):
            G[j, s] = G[j, last]
        G[s, s] = G[last, last]
        lin[s] = lin[last]
        beta[s] = beta[last]
        phi[s] = phi[last]
        put(W[s], 0, W[last], W.shape[1])
    return last


@nb.njit(cache=True, inline="always")
def _as_step(A, k, bhat):
    """One step of the active-set method on ``A`` (``k`` structures): move the weights
    towards the KKT point (:func:`_as_move`), drop the structures whose weight fell to zero.
    Returns ``(k, outcome, tau)``: ``AT_KKT`` (the caller asks the oracle), ``BLOCKED``
    (step again) or ``SINGULAR`` (stop)."""
    beta = A.beta
    status, tau, drop = _as_move(A.G, A.lin, beta, k, bhat)
    if status == 2:
        return k, SINGULAR, tau
    if status == 1:
        return _remove(A, k, drop), BLOCKED, tau
    j = 0
    while j < k:  # weights that reached zero leave the active set
        if beta[j] <= 0.0:
            k = _remove(A, k, j)
        else:
            j += 1
    return k, AT_KKT, tau


@nb.njit(cache=True, inline="always")
def _no_gain(val, tau):
    """Is the oracle's structure, of gradient ``val``, no better than the active set (its KKT
    multiplier ``tau``, up to rounding)?  Then the subproblem is solved."""
    return val <= tau + 1e-9 * (1.0 + abs(tau))


@nb.njit(cache=True, inline="always")
def _make_room(A, k):
    """A full active set gives up its lightest structure, whose weight is shared out."""
    if k == A.W.shape[0]:
        beta = A.beta
        lo = 0
        for s in range(1, k):
            if beta[s] < beta[lo]:
                lo = s
        b = beta[lo]
        k = _remove(A, k, lo)
        for s in range(k):
            beta[s] /= 1.0 - b
    return k


@nb.njit(cache=True, inline="always")
def _is_known(A, k, x, lo, hi):
    """Is ``x[lo:hi]`` one of the active structures ``W[:k, lo:hi]``?"""
    W = A.W
    known = False
    for s in range(k):
        same = True
        for j in range(lo, hi):
            if W[s, j] != x[j]:
                same = False
                break
        if same:
            known = True
    return known


@nb.njit(cache=True, inline="always")
def _admit(A, k, norm2, lin, phi):
    """Add structure ``W[k]`` (the caller wrote it and the Gram entries ``G[s, k]``) with
    weight 0, squared norm ``norm2``, linear term ``lin`` and score ``phi``; returns ``k + 1``."""
    A.G[k, k] = norm2
    A.lin[k] = lin
    A.beta[k] = 0.0
    A.phi[k] = phi
    return k + 1


@nb.njit(cache=True, inline="always")
def tree_map(w, single_root, projective, heads, cle):
    """The TREE factor's MAP oracle: the best tree under ``w`` into ``heads`` (Eisner when
    ``projective``, else Chu-Liu-Edmonds with the work arrays ``cle``); returns a status."""
    if projective:
        return _eisner(w, single_root, heads)
    return _cle_ws(w, single_root, heads, cle.inn, cle.tin, cle.oh, cle.om)


@nb.njit(cache=True)
def tree_workspace(N):
    """:data:`TreeWork` for trees of ``N`` nodes."""
    return TreeWork(np.empty(KMAX), np.empty((N, N)), np.empty(N, dtype=np.int64),
                    _cle_workspace(N))


@nb.njit(cache=True, inline="always")
def _tree_marginals(A, k, q):
    """``q = M beta``: the arc marginals of the active trees."""
    N = q.shape[0]
    W = A.W
    beta = A.beta
    q[:, :] = 0.0
    for s in range(k):
        for m in range(1, N):
            q[W[s, m], m] += beta[s]


@nb.njit(cache=True)
def _tree_qp(a, allowed, single_root, projective, A, k, q, work):
    """Active-set solution of the TREE factor's subproblem ``min |M beta - a|^2 / 2`` over the
    trees ``A.W[:k]`` (head arrays) and ``beta`` on the simplex; CLE (Eisner) is the oracle
    (``work``: :data:`TreeWork`).  ``q`` receives the arc marginals ``M beta``.  Returns
    ``(k, oracle calls)``."""
    N = a.shape[0]
    W = A.W
    G = A.G
    lin = A.lin
    yh = work.heads
    w = work.w
    bhat = work.bhat
    cle = work.cle
    for s in range(k):  # a changed: refresh the linear terms
        t = 0.0
        for m in range(1, N):
            t += a[W[s, m], m]
        lin[s] = t
    calls = 0
    for _ in range(QP_ITERS):
        k, outcome, tau = _as_step(A, k, bhat)
        if outcome == SINGULAR:
            break
        if outcome == BLOCKED:
            continue
        # oracle: the tree maximising the gradient a - q
        _tree_marginals(A, k, q)
        for h in range(N):
            for m in range(N):
                w[h, m] = a[h, m] - q[h, m] if allowed[h, m] else NEG_INF
        calls += 1
        if tree_map(w, single_root, projective, yh, cle) != OK:
            break
        val = 0.0
        for m in range(1, N):
            val += w[yh[m], m]
        if _no_gain(val, tau) or _is_known(A, k, yh, 1, N):
            break
        k = _make_room(A, k)
        put(W[k], 0, yh, yh.shape[0])
        for s in range(k):
            c = 0.0
            for m in range(1, N):
                if W[s, m] == yh[m]:
                    c += 1.0
            G[s, k] = c
            G[k, s] = c
        t = 0.0
        for m in range(1, N):
            t += a[yh[m], m]
        k = _admit(A, k, N - 1.0, t, 0.0)
    _tree_marginals(A, k, q)
    return k, calls


@nb.njit(cache=True)
def _auto_phi(h, gi, bits, cand_off, cand_len, gp_off, tab, tab_off):
    """Score of the automaton structure ``(gi, bits)`` of head ``h``: its table transitions."""
    total = 0.0
    off = 0
    for d in range(2):
        L = cand_len[h, d]
        o = tab_off[gp_off[h] + gi, d]
        p = 0
        for i in range(L):
            if bits[off + i] == 1:
                total += tab[o + p * (L + 1) + i]
                p = i + 1
        total += tab[o + p * (L + 1) + L]
        off += L
    return total


@nb.njit(cache=True, inline="always")
def _auto_marginals(A, k, V, qloc):
    """``qloc = M beta`` over the ``V`` variables of an automaton."""
    W = A.W
    beta = A.beta
    for j in range(V):
        qloc[j] = 0.0
    for s in range(k):
        for j in range(V):
            if W[s, j] == 1:
                qloc[j] += beta[s]


@nb.njit(cache=True, no_cpython_wrapper=True)
def _auto_qp(h, parts, single_root, a, eta, A, k, qloc, work):
    """Active-set solution of head ``h``'s automaton subproblem.  Local variables: the left
    candidates, the right candidates, then (G+S, ``h >= 1``) the grandparent slots; ``A.W[s]``
    holds a structure's 0/1 vector over them, ``A.phi[s]`` its table score.  The linear input
    is ``a`` (``p + lambda / eta``); the objective ``phi / eta . beta - |M beta - a|^2 / 2``.
    The oracle is the automaton's Viterbi (``work``: :data:`AutomatonWork`).  ``qloc``
    receives ``M beta``.  Returns ``(k, oracle calls)``."""
    cand = parts.cand
    cand_off = parts.cand_off
    gp = parts.gp
    gp_off = parts.gp_off
    L0 = parts.cand_len[h, 0]
    L1 = parts.cand_len[h, 1]
    ng = parts.gp_len[h] if (parts.grandparents and h > 0) else 0
    V = L0 + L1 + ng
    W = A.W
    G = A.G
    lin = A.lin
    phi = A.phi
    scores = work.scores
    gcost = work.gcost
    zero = work.zero
    bhat = work.bhat
    viterbi = work.viterbi
    best_take = viterbi.best_take
    for s in range(k):
        t = phi[s] / eta
        for j in range(V):
            if W[s, j] == 1:
                t += a[j]
        lin[s] = t
    calls = 0
    for _ in range(QP_ITERS):
        k, outcome, tau = _as_step(A, k, bhat)
        if outcome == SINGULAR:
            break
        if outcome == BLOCKED:
            continue
        _auto_marginals(A, k, V, qloc)
        # oracle: Viterbi with modifier scores eta (a - q) and grandparent scores likewise
        for i in range(L0):
            scores[h, cand[cand_off[h, 0] + i]] = eta * (a[i] - qloc[i])
        for i in range(L1):
            scores[h, cand[cand_off[h, 1] + i]] = eta * (a[L0 + i] - qloc[L0 + i])
        for gi in range(ng):
            g = gp[gp_off[h] + gi]
            gcost[g, h] = -eta * (a[L0 + L1 + gi] - qloc[L0 + L1 + gi])
        calls += 1
        val, gi = _decode_head(h, parts, scores, 1.0, zero, gcost, single_root, viterbi)
        if gi < 0 or _no_gain(val / eta, tau):
            break
        # the new structure's 0/1 vector, in the first free row (so a full set gives up its
        # lightest structure before the duplicate test; the tree factor tests first)
        k = _make_room(A, k)
        for i in range(L0):
            W[k, i] = best_take[0, i]
        for i in range(L1):
            W[k, L0 + i] = best_take[1, i]
        for g2 in range(ng):
            W[k, L0 + L1 + g2] = 1 if g2 == gi else 0
        if _is_known(A, k, W[k], 0, V):
            break
        for s in range(k):
            c = 0.0
            for j in range(V):
                if W[s, j] == 1 and W[k, j] == 1:
                    c += 1.0
            G[s, k] = c
            G[k, s] = c
        c = 0.0
        for j in range(V):
            c += W[k, j]
        phi_k = _auto_phi(h, gi if ng > 0 else 0, W[k], cand_off, parts.cand_len, gp_off,
                          parts.tab, parts.tab_off)
        t = phi_k / eta
        for j in range(V):
            if W[k, j] == 1:
                t += a[j]
        k = _admit(A, k, c, t, phi_k)
    _auto_marginals(A, k, V, qloc)
    return k, calls
