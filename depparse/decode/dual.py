"""Subgradient dual decomposition for non-projective head automata (Koo et al. 2010).

Fig. 1 (sibling models) and Fig. 2 (grandparent+sibling models): ``y`` is a spanning tree found
by Chu-Liu-Edmonds (or, in projective mode, by Eisner's algorithm: Sec. 7.7, Table 3) under arc
weights ``alpha * theta + u (+ v)``; ``z`` is the union of the independent head-automaton
solutions under ``(1 - alpha) * theta - u`` (and ``- v`` on the automaton's own head).  When
``y`` and ``z`` agree the tree is the exact argmax of the full model (Theorem 1): a certificate.

Details, each from the paper:

* step sizes (Appendix A.1): ``delta = L(u^1) - f(y^1)`` and ``alpha_k = delta / (1 + eta_k)``
  where ``eta_k`` counts the iterations ``k' <= k`` at which the dual went up;
* the split of the arc scores (Appendix A.2), ``alpha = 0.001`` by default;
* lazy decoding (Sec. 7.4): automaton ``i`` is re-decoded only when some ``u(i, .)`` or
  ``v(., i)`` changed since its last decoding;
* an iteration cap ``K`` (5000 by default); without agreement the ``y^(k)`` with the best
  full-model score is returned, uncertified (Sec. 7.5).

Besides agreement, a zero duality gap also certifies: ``L(u) <= f(y) + eps`` for a tree ``y``
means ``y`` is optimal (weak duality, Eq. 9); ``eps = tol * max(|L(u)|, max |part score|)``
only absorbs floating-point rounding (no absolute floor, so tiny scores are handled exactly).
This matters when ties make ``y`` and ``z`` differ at an optimum, where the subgradient step
would be zero forever.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from .automata import _decode_head
from .eisner import _eisner
from .mst import NO_TREE, OK, NoSpanningTreeError, _cle
from .parts import PartTable, compile_dense

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
    """

    heads: np.ndarray
    certificate: bool
    iterations: int
    dual: np.ndarray
    primal: np.ndarray
    recomputed: np.ndarray
    score: float


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


@nb.njit(cache=True)
def _dual_decompose(arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off, use_g,
                    alpha, max_iter, single_root, projective, tol):
    """The dual decomposition loop (Fig. 1 / Fig. 2).  See :func:`dual_decompose`.

    Returns ``(status, heads, cert, iters, dual, primal, recomputed, best_score)``.
    """
    N = arc.shape[0]
    beta = 1.0 - alpha
    u = np.zeros((N, N))
    v = np.zeros((N, N))
    w = np.full((N, N), NEG_INF)  # MST weights alpha*theta + u + v on kept arcs
    for h in range(N):
        for d in range(2):
            for i in range(cand_len[h, d]):
                m = cand[cand_off[h, d] + i]
                w[h, m] = alpha * arc[h, m]
    gpos = np.full((N, N), -1, dtype=np.int64)  # slot of grandparent g for head h
    for h in range(N):
        for gi in range(gp_len[h]):
            g = gp[gp_off[h] + gi]
            if g >= 0:
                gpos[h, g] = gi
    Wmax = 1
    for h in range(N):
        for d in range(2):
            if cand_len[h, d] + 1 > Wmax:
                Wmax = cand_len[h, d] + 1
    delta_w = np.empty(Wmax)
    back_w = np.empty(Wmax, dtype=np.int64)
    take_w = np.zeros((2, Wmax), dtype=np.int64)
    ztake = np.zeros((N, 2, Wmax), dtype=np.int64)  # z(h, cand) per head and side
    zgi = np.full(N, -1, dtype=np.int64)  # chosen grandparent slot per head
    zval = np.zeros(N)
    dirty = np.ones(N, dtype=np.bool_)
    yh = np.empty(N, dtype=np.int64)
    best_heads = np.full(N, -1, dtype=np.int64)
    best_score = NEG_INF
    dual = np.empty(max_iter)
    primal = np.empty(max_iter)
    recomputed = np.empty(max_iter)
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
    step0 = 0.0
    eta = 0
    prev_dual = np.inf
    iters = 0
    cert = False
    for k in range(max_iter):
        iters = k + 1
        # y-step: spanning tree under alpha*theta + u + v
        if projective:
            st = _eisner(w, single_root, yh)
        else:
            st = _cle(w, single_root, yh)
        if st != OK:
            return NO_TREE, best_heads, False, iters, dual[:0], primal[:0], recomputed[:0], \
                best_score
        yval = 0.0
        for m in range(1, N):
            yval += w[yh[m], m]
        # z-step: head automata, lazily
        nrec = 0
        for h in range(N):
            if dirty[h]:
                val, gi = _decode_head(h, arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab,
                                       tab_off, beta, u, v, single_root, delta_w, back_w,
                                       take_w, ztake[h])
                zval[h] = val
                zgi[h] = gi
                dirty[h] = False
                nrec += 1
        recomputed[k] = nrec / N
        L = yval
        for h in range(N):
            L += zval[h]
        dual[k] = L
        f = _primal_score(yh, arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off,
                          gpos, use_g)
        primal[k] = f
        if f > best_score:
            best_score = f
            best_heads[:] = yh
        # agreement: y(h, m) = z(h, m) for all arcs, and z'(g, m) = y(g, m)
        agree = True
        for h in range(N):
            if not agree:
                break
            for d in range(2):
                c0 = cand_off[h, d]
                for i in range(cand_len[h, d]):
                    if (ztake[h, d, i] == 1) != (yh[cand[c0 + i]] == h):
                        agree = False
                        break
            if use_g and h > 0 and agree:
                if gp[gp_off[h] + zgi[h]] != yh[h]:
                    agree = False
        if agree:
            cert = True
            best_heads[:] = yh
            best_score = f
            break
        if L < np.inf and L - best_score <= tol * max(scale, abs(L)):
            cert = True  # zero duality gap: best_heads is optimal
            break
        # step size (Appendix A.1)
        if k == 0:
            step0 = L - f
        elif L > prev_dual:
            eta += 1
        prev_dual = L
        step = step0 / (1.0 + eta)
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
                        dirty[h] = True
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
                    dirty[m] = True
    return OK, best_heads, cert, iters, dual[:iters], primal[:iters], recomputed[:iters], \
        best_score


def dual_decompose(parts: PartTable, *, alpha=0.001, max_iter=5000, single_root=False,
                   projective=False, tol=GAP_TOL) -> DualResult:
    """Decode a sentence with dual decomposition (Koo et al. 2010, Fig. 1 or Fig. 2).

    Parameters
    ----------
    parts : PartTable
        Compiled part scores (:mod:`depparse.decode.parts`).  A sibling-only table gives
        Fig. 1; a table with grandparents gives Fig. 2.
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
    status, heads, cert, iters, dual, primal, rec, score = _dual_decompose(
        *parts.arrays(), parts.grandparents, float(alpha), int(max_iter), bool(single_root),
        bool(projective), float(tol))
    if status == NO_TREE:
        raise NoSpanningTreeError("no spanning tree rooted at 0 exists under the kept arcs")
    return DualResult(heads.copy(), bool(cert), int(iters), dual.copy(), primal.copy(),
                      rec.copy(), float(score))


def dual_decompose_dense(arc, sibling, grand=None, grandsib=None, **kwargs) -> DualResult:
    """:func:`dual_decompose` on dense part tensors (encoding in :mod:`depparse.decode.parts`).

    Meant for small sentences and tests; production decoding builds a pruned
    :class:`PartTable` directly and never needs the ``O(n^4)`` tensors.
    """
    return dual_decompose(compile_dense(arc, sibling, grand, grandsib), **kwargs)
