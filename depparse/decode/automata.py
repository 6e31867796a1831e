"""Head-automata Viterbi decoders (Koo et al. 2010, Sec. 3 Example 1 and Sec. 5 Example 3).

For one head ``h``, the bigram-sibling automaton reads the left and the right modifiers of
``h`` outwards, from a START state to an END state; the score of a modifier sequence
``l_1 .. l_p`` is ``sum_k g(h, l_{k-1}, l_k)`` with ``l_0 = START`` and ``l_{p+1} = END``.
The Viterbi search over one side with ``L`` candidates is ``O(L^2)``.  The grandparent+sibling
automaton also chooses the head ``g`` of ``h`` (the variables ``z'(g, h)`` of Sec. 5): it runs
the sibling Viterbi once per candidate grandparent and keeps the best, ``O(n^3)`` per head.

Dual decomposition enters through the adjustments: the decoder for head ``h`` maximises

    f_h(z|h) + sum_m (beta * theta(h, m) - u(h, m)) z(h, m) - sum_g v(g, h) z'(g, h)

(Fig. 1 and Fig. 2, with the arc scores split as in Appendix A.2, ``beta = 1 - alpha``).

Tables are in the layout of :mod:`depparse.decode.parts`.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .parts import compile_dense, table_width

__all__ = ["sibling_head_automaton", "grandparent_head_automaton"]

NEG_INF = -np.inf


@nb.njit(cache=True)
def _viterbi_side(tab, o, L, cand, c0, h, arc, beta, u, exactly_one, delta, back, take):
    """Best modifier sequence of one side of head ``h``; returns its score.

    ``best[q+1] = max_{p <= q} best[p] + T[p, q] + beta*arc[h, c_q] - u[h, c_q]`` and the
    value is ``max_p best[p] + T[p, L]`` (END).  With ``exactly_one`` the side takes exactly one
    modifier (the root under the single-root constraint).  ``take[i]`` is set to 1 for the
    chosen candidates ``i`` (and 0 otherwise).  ``delta`` and ``back`` are work arrays of size
    ``>= L + 1``.
    """
    W = L + 1
    delta[0] = 0.0
    for q in range(L):
        m = cand[c0 + q]
        a = beta * arc[h, m] - u[h, m]
        b = NEG_INF
        bp = -1
        pmax = 0 if exactly_one else q
        for p in range(pmax + 1):
            v = delta[p] + tab[o + p * W + q]
            if v > b:
                b = v
                bp = p
        delta[q + 1] = b + a if bp >= 0 else NEG_INF
        back[q + 1] = bp
    b = NEG_INF
    bp = -1
    for p in range(1 if exactly_one else 0, L + 1):
        v = delta[p] + tab[o + p * W + L]
        if v > b:
            b = v
            bp = p
    for i in range(L):
        take[i] = 0
    p = bp
    while p > 0:
        take[p - 1] = 1
        p = back[p]
    return b


@nb.njit(cache=True)
def _decode_head(h, arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off, beta, u,
                 v, single_root, delta, back, take, best_take):
    """Decode the automaton of head ``h`` (both sides, every grandparent slot).

    Writes the chosen modifiers of each side into ``best_take`` (``best_take[d, i]`` for candidate
    ``i`` of side ``d``) and returns ``(value, gi)`` where ``gi`` is the chosen grandparent slot.
    """
    best_val = NEG_INF
    best_gi = -1
    for gi in range(gp_len[h]):
        g = gp[gp_off[h] + gi]
        val = 0.0
        if g >= 0:
            if arc[g, h] == NEG_INF:
                continue  # a forbidden arc g -> h (branch and bound): no such grandparent
            val = -v[g, h]
        for d in range(2):
            L = cand_len[h, d]
            val += _viterbi_side(tab, tab_off[gp_off[h] + gi, d], L, cand, cand_off[h, d], h, arc,
                                 beta, u, single_root and h == 0 and d == 1, delta, back,
                                 take[d])
        if val > best_val:
            best_val = val
            best_gi = gi
            for d in range(2):
                for i in range(cand_len[h, d]):
                    best_take[d, i] = take[d, i]
    return best_val, best_gi


@nb.njit(cache=True)
def _decode_head_lazy(h, arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off, beta,
                      u, v, single_root, delta, back, best_take, sval, stake, soff, dirty):
    """:func:`_decode_head` with the Viterbi result of every (grandparent slot, side) kept.

    Lazy decoding (Koo et al. Sec. 7.4) one level finer: ``dirty[d]`` says that some
    ``u(h, .)`` of side ``d`` changed, so only that side's Viterbi is rerun (for every slot);
    a change of ``v(., h)`` alone (``dirty[2]``) only shifts the slots' totals.  ``sval[slot,
    d]`` and ``stake[soff[slot, d]:][:L]`` hold the value and the chosen candidates of each slot
    and side.  Same result, same tie-breaking as :func:`_decode_head`.
    """
    for gi in range(gp_len[h]):
        slot = gp_off[h] + gi
        g = gp[slot]
        if g >= 0 and arc[g, h] == NEG_INF:
            continue  # a forbidden arc g -> h: the slot is never used
        for d in range(2):
            if dirty[d]:
                L = cand_len[h, d]
                o = soff[slot, d]
                sval[slot, d] = _viterbi_side(tab, tab_off[slot, d], L, cand, cand_off[h, d], h,
                                              arc, beta, u, single_root and h == 0 and d == 1,
                                              delta, back, stake[o:o + L])
    best_val = NEG_INF
    best_gi = -1
    for gi in range(gp_len[h]):
        slot = gp_off[h] + gi
        g = gp[slot]
        val = 0.0
        if g >= 0:
            if arc[g, h] == NEG_INF:
                continue
            val = -v[g, h]
        val += sval[slot, 0]  # (summed in the order of _decode_head: the same rounding)
        val += sval[slot, 1]
        if val > best_val:
            best_val = val
            best_gi = gi
    if best_gi >= 0:
        slot = gp_off[h] + best_gi
        for d in range(2):
            o = soff[slot, d]
            for i in range(cand_len[h, d]):
                best_take[d, i] = stake[o + i]
    return best_val, best_gi


def _decode_one(pt, h, u, v, single_root):
    N = pt.arc.shape[0]
    W = int(pt.cand_len.max(initial=0)) + 1
    delta = np.empty(W)
    back = np.empty(W, dtype=np.int64)
    take = np.zeros((2, W), dtype=np.int64)
    best_take = np.zeros((2, W), dtype=np.int64)
    u = np.zeros((N, N)) if u is None else np.ascontiguousarray(u, dtype=np.float64)
    v = np.zeros((N, N)) if v is None else np.ascontiguousarray(v, dtype=np.float64)
    val, gi = _decode_head(h, *pt.arrays(), 1.0, u, v, bool(single_root), delta, back, take,
                           best_take)
    mods = np.zeros(N, dtype=bool)
    for d in range(2):
        o, L = pt.cand_off[h, d], pt.cand_len[h, d]
        mods[pt.cand[o:o + L][best_take[d, :L] == 1]] = True
    g = int(pt.gp[pt.gp_off[h] + gi]) if gi >= 0 else -1
    return mods, g, float(val)


def sibling_head_automaton(h, arc, sibling, u=None, single_root=False):
    """Best modifier set of head ``h`` under the bigram-sibling model (Koo et al. Example 1).

    Maximises ``f_h(z|h) + sum_m (arc[h, m] - u[h, m]) z(h, m)``.

    Parameters
    ----------
    h : int
        The head, ``0 <= h <= n``.
    arc : (N, N) float64
        Arc scores; ``-inf`` arcs are never taken.
    sibling : (N, N, N+1) float64
        Sibling scores with the START/END encoding of :mod:`depparse.decode.parts`.
    u : (N, N) float64, optional
        Lagrange multipliers ``u(h, m)``, subtracted from the arc scores.
    single_root : bool
        For ``h = 0``: take exactly one modifier.

    Returns
    -------
    mods : (N,) bool
        ``mods[m]`` is true when ``m`` modifies ``h``.
    value : float
        The maximum.
    """
    pt = compile_dense(arc, sibling)
    mods, _, val = _decode_one(pt, h, u, None, single_root)
    return mods, val


def grandparent_head_automaton(h, arc, sibling, grand, grandsib, u=None, v=None,
                               single_root=False):
    """Best (grandparent, modifier set) of head ``h`` under the G+S model (Koo et al. Example 3).

    Maximises ``f_h(z|h) + sum_m (arc[h, m] - u[h, m]) z(h, m) - sum_g v[g, h] z'(g, h)`` over
    the modifiers of ``h`` and its head ``g`` (``g`` ranges over the words with a finite
    ``arc[g, h]``; the root ``h = 0`` has no grandparent and returns ``g = -1``).

    Returns
    -------
    mods : (N,) bool
    g : int
    value : float
    """
    pt = compile_dense(arc, sibling, grand, grandsib)
    return _decode_one(pt, h, u, v, single_root)



@nb.njit(cache=True)
def _viterbi_workspace(cand_len):
    """Work arrays of the head-automaton Viterbi (:func:`_decode_head`) for a part table whose
    candidate lists have the lengths ``cand_len``: ``delta`` and ``back`` (a slot per
    candidate and the start state) and the choices ``take`` / ``best_take`` of both sides."""
    Wm = table_width(cand_len)
    return (np.empty(Wm), np.empty(Wm, dtype=np.int64), np.zeros((2, Wm), dtype=np.int64),
            np.zeros((2, Wm), dtype=np.int64))

@nb.njit(cache=True)
def decode_z(arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off, single_root):
    """``argmax_{z in Z} f(z)``: every head automaton decoded on its own (Koo et al. Eq. 3).

    This is the decoding step of training over Z (Sec. 6): no spanning-tree constraint.

    Returns
    -------
    mods : (N, N) bool
        ``mods[h, m]`` when automaton ``h`` takes ``m``.
    gpar : (N,) int64
        The grandparent chosen by each automaton (``-1`` for none).
    """
    N = arc.shape[0]
    delta, back, take, best_take = _viterbi_workspace(cand_len)
    zero = np.zeros((N, N))
    mods = np.zeros((N, N), dtype=np.bool_)
    gpar = np.full(N, -1, dtype=np.int64)
    for h in range(N):
        _, gi = _decode_head(h, arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off,
                             1.0, zero, zero, single_root, delta, back, take, best_take)
        if gi < 0:
            continue
        gpar[h] = gp[gp_off[h] + gi]
        for d in range(2):
            c0 = cand_off[h, d]
            for i in range(cand_len[h, d]):
                if best_take[d, i] == 1:
                    mods[h, cand[c0 + i]] = True
    return mods, gpar
