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

Two factors: the TREE factor (structures: head arrays; oracle: Chu-Liu-Edmonds or Eisner) and a
HEAD AUTOMATON (structures: 0/1 vectors over the head's candidate modifiers and grandparent
slots, with their table score ``phi``; oracle: :func:`~depparse.decode.automata._decode_head`).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .automata import _decode_head
from .eisner import _eisner
from .mst import OK, _cle_ws

NEG_INF = -np.inf
KMAX = 48  # active-set capacity per factor (Caratheodory allows more; rarely reached)
QP_ITERS = 20  # active-set iterations per subproblem and outer iteration


@nb.njit(cache=True)
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


@nb.njit(cache=True)
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


@nb.njit(cache=True)
def _remove(k, s, G, lin, beta, phi, store):
    """Remove structure ``s`` from an active set of size ``k`` (swap with the last)."""
    last = k - 1
    if s != last:
        for j in range(k):
            G[s, j] = G[last, j]
        for j in range(k):
            G[j, s] = G[j, last]
        G[s, s] = G[last, last]
        lin[s] = lin[last]
        beta[s] = beta[last]
        phi[s] = phi[last]
        store[s, :] = store[last, :]
    return last


@nb.njit(cache=True)
def _tree_qp(a, allowed, single_root, projective, W, k, beta, G, lin, phi, bhat, q, yh, w,
             inn, tin, oh, om):
    """Active-set solution of the TREE factor's subproblem ``min |M beta - a|^2 / 2`` over the
    trees ``W[:k]`` (head arrays) and ``beta`` on the simplex; CLE (Eisner) is the oracle.
    ``q`` receives the arc marginals ``M beta``.  Returns ``(k, oracle calls)``."""
    N = a.shape[0]
    for s in range(k):  # a changed: refresh the linear terms
        t = 0.0
        for m in range(1, N):
            t += a[W[s, m], m]
        lin[s] = t
    calls = 0
    for _ in range(QP_ITERS):
        st, tau, drop = _as_move(G, lin, beta, k, bhat)
        if st == 2:
            break
        if st == 1:
            k = _remove(k, drop, G, lin, beta, phi, W)
            continue
        j = 0
        while j < k:  # weights that reached zero leave the active set
            if beta[j] <= 0.0:
                k = _remove(k, j, G, lin, beta, phi, W)
            else:
                j += 1
        # oracle: the tree maximising the gradient a - q
        q[:, :] = 0.0
        for s in range(k):
            for m in range(1, N):
                q[W[s, m], m] += beta[s]
        for h in range(N):
            for m in range(N):
                w[h, m] = a[h, m] - q[h, m] if allowed[h, m] else NEG_INF
        calls += 1
        if projective:
            ok = _eisner(w, single_root, yh)
        else:
            ok = _cle_ws(w, single_root, yh, inn, tin, oh, om)
        if ok != OK:
            break
        val = 0.0
        for m in range(1, N):
            val += w[yh[m], m]
        if val <= tau + 1e-9 * (1.0 + abs(tau)):
            break
        dup = False
        for s in range(k):
            same = True
            for m in range(1, N):
                if W[s, m] != yh[m]:
                    same = False
                    break
            if same:
                dup = True
        if dup:
            break
        if k == W.shape[0]:  # full: the lightest structure leaves, its weight is shared
            lo = 0
            for s in range(1, k):
                if beta[s] < beta[lo]:
                    lo = s
            b = beta[lo]
            k = _remove(k, lo, G, lin, beta, phi, W)
            for s in range(k):
                beta[s] /= 1.0 - b
        W[k, :] = yh
        for s in range(k):
            c = 0.0
            for m in range(1, N):
                if W[s, m] == yh[m]:
                    c += 1.0
            G[s, k] = c
            G[k, s] = c
        G[k, k] = N - 1.0
        t = 0.0
        for m in range(1, N):
            t += a[yh[m], m]
        lin[k] = t
        beta[k] = 0.0
        phi[k] = 0.0
        k += 1
    q[:, :] = 0.0
    for s in range(k):
        for m in range(1, N):
            q[W[s, m], m] += beta[s]
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


@nb.njit(cache=True)
def _auto_qp(h, a, eta, arc, lin_mat, vmat, zero, cand, cand_off, cand_len, gp, gp_off, gp_len,
             tab, tab_off, single_root, use_g, W, k, beta, G, lin, phi, bhat, qloc, delta,
             back, take, best_take):
    """Active-set solution of head ``h``'s automaton subproblem.  Local variables: the left
    candidates, the right candidates, then (G+S, ``h >= 1``) the grandparent slots; ``W[s]``
    holds a structure's 0/1 vector over them, ``phi[s]`` its table score.  The linear input is
    ``a`` (``p + lambda / eta``); the objective ``phi / eta . beta - |M beta - a|^2 / 2``.
    ``qloc`` receives ``M beta``.  Returns ``(k, oracle calls)``."""
    L0 = cand_len[h, 0]
    L1 = cand_len[h, 1]
    ng = gp_len[h] if (use_g and h > 0) else 0
    V = L0 + L1 + ng
    for s in range(k):
        t = phi[s] / eta
        for j in range(V):
            if W[s, j] == 1:
                t += a[j]
        lin[s] = t
    calls = 0
    for _ in range(QP_ITERS):
        st, tau, drop = _as_move(G, lin, beta, k, bhat)
        if st == 2:
            break
        if st == 1:
            k = _remove(k, drop, G, lin, beta, phi, W)
            continue
        j = 0
        while j < k:
            if beta[j] <= 0.0:
                k = _remove(k, j, G, lin, beta, phi, W)
            else:
                j += 1
        for j in range(V):
            qloc[j] = 0.0
        for s in range(k):
            for j in range(V):
                if W[s, j] == 1:
                    qloc[j] += beta[s]
        # oracle: Viterbi with modifier scores eta (a - q) and grandparent scores likewise
        for i in range(L0):
            lin_mat[h, cand[cand_off[h, 0] + i]] = eta * (a[i] - qloc[i])
        for i in range(L1):
            lin_mat[h, cand[cand_off[h, 1] + i]] = eta * (a[L0 + i] - qloc[L0 + i])
        for gi in range(ng):
            g = gp[gp_off[h] + gi]
            vmat[g, h] = -eta * (a[L0 + L1 + gi] - qloc[L0 + L1 + gi])
        calls += 1
        val, gi = _decode_head(h, lin_mat, cand, cand_off, cand_len, gp, gp_off, gp_len, tab,
                               tab_off, 1.0, zero, vmat, single_root, delta, back, take,
                               best_take)
        if gi < 0 or val / eta <= tau + 1e-9 * (1.0 + abs(tau)):
            break
        # the new structure's 0/1 vector
        kk = k
        if k == W.shape[0]:
            lo = 0
            for s in range(1, k):
                if beta[s] < beta[lo]:
                    lo = s
            b = beta[lo]
            k = _remove(k, lo, G, lin, beta, phi, W)
            for s in range(k):
                beta[s] /= 1.0 - b
            kk = k
        for i in range(L0):
            W[kk, i] = best_take[0, i]
        for i in range(L1):
            W[kk, L0 + i] = best_take[1, i]
        for g2 in range(ng):
            W[kk, L0 + L1 + g2] = 1 if g2 == gi else 0
        dup = False
        for s in range(k):
            same = True
            for j in range(V):
                if W[s, j] != W[kk, j]:
                    same = False
                    break
            if same:
                dup = True
        if dup:
            break
        for s in range(k):
            c = 0.0
            for j in range(V):
                if W[s, j] == 1 and W[kk, j] == 1:
                    c += 1.0
            G[s, kk] = c
            G[kk, s] = c
        c = 0.0
        for j in range(V):
            c += W[kk, j]
        G[kk, kk] = c
        phi[kk] = _auto_phi(h, gi if ng > 0 else 0, W[kk], cand_off, cand_len, gp_off, tab,
                            tab_off)
        t = phi[kk] / eta
        for j in range(V):
            if W[kk, j] == 1:
                t += a[j]
        lin[kk] = t
        beta[kk] = 0.0
        k += 1
    for j in range(V):
        qloc[j] = 0.0
    for s in range(k):
        for j in range(V):
            if W[s, j] == 1:
                qloc[j] += beta[s]
    return k, calls
