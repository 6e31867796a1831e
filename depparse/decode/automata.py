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

Tables are in the layout of :mod:`depparse.decode.part_table`.
"""

from __future__ import annotations

from collections import namedtuple

import numba as nb
import numpy as np

from .part_table import compile_dense, table_width

__all__ = ["sibling_head_automaton", "grandparent_head_automaton"]

NEG_INF = -np.inf

#: Work arrays of one head automaton's Viterbi: ``delta`` and ``back`` (a slot per candidate
#: and the start state), the choices ``take`` of both sides for the slot being decoded and
#: ``best_take`` of the best slot.
ViterbiWork = namedtuple("ViterbiWork", ["delta", "back", "take", "best_take"])


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


@nb.njit(cache=True, inline="always")
def _slot_start(parts, scores, v, h, gi):
    """``(slot, open, value)`` of grandparent slot ``gi`` of head ``h`` before its two sides'
    Viterbi: its index into ``tab_off``, whether it may be chosen (not when the arc ``g -> h``
    of its grandparent is forbidden, ``scores[g, h] = -inf``: branch and bound) and the cost
    ``-v[g, h]`` of its grandparent (0 for the root's slot)."""
    slot = parts.gp_off[h] + gi
    g = parts.gp[slot]
    if g < 0:
        return slot, True, 0.0
    if scores[g, h] == NEG_INF:
        return slot, False, 0.0
    return slot, True, -v[g, h]


@nb.njit(cache=True, inline="always")
def _decode_head(h, parts, scores, beta, u, v, single_root, work):
    """Decode the automaton of head ``h`` (both sides, every grandparent slot).

    ``parts`` is a :class:`~depparse.decode.part_table.PartArrays`; the modifier ``m`` of ``h``
    scores ``beta * scores[h, m] - u[h, m]`` (``scores`` is the arc matrix, or another with the
    same pattern of ``-inf``), the grandparent ``g`` costs ``v[g, h]``.  ``work`` is a
    :data:`ViterbiWork`.  Writes the chosen modifiers of each side into ``work.best_take``
    (``best_take[d, i]`` for candidate ``i`` of side ``d``) and returns ``(value, gi)`` where
    ``gi`` is the chosen grandparent slot.
    """
    cand_len = parts.cand_len
    take = work.take
    best_val = NEG_INF
    best_gi = -1
    for gi in range(parts.gp_len[h]):
        slot, usable, val = _slot_start(parts, scores, v, h, gi)
        if not usable:
            continue  # a forbidden arc g -> h (branch and bound): no such grandparent
        for d in range(2):
            val += _viterbi_side(parts.tab, parts.tab_off[slot, d], cand_len[h, d], parts.cand,
                                 parts.cand_off[h, d], h, scores, beta, u,
                                 single_root and h == 0 and d == 1, work.delta, work.back,
                                 take[d])
        if val > best_val:
            best_val = val
            best_gi = gi
            for d in range(2):
                for i in range(cand_len[h, d]):
                    work.best_take[d, i] = take[d, i]
    return best_val, best_gi


@nb.njit(cache=True, no_cpython_wrapper=True)
def _decode_lazy(parts, beta, single_root, z):
    """Decode again every head automaton whose multipliers changed (lazy decoding, Koo et al.
    Sec. 7.4); returns how many were decoded.

    ``z`` is the state of the automata slave of dual decomposition
    (:data:`~depparse.decode.dual.AutomataSlave`): the multipliers ``z.u``, ``z.v``; what
    changed since automaton ``h`` was last decoded, ``z.dirty[h]``; the memory of every
    Viterbi result, ``z.side_value``, ``z.side_take`` at ``z.side_off``; the choices
    ``z.take``, ``z.slot`` and values ``z.value`` of the automata; work arrays.  Lazy decoding
    is one level finer than Sec. 7.4: ``dirty[h, d]`` says that some ``u(h, .)`` of side ``d``
    changed, so only that side's Viterbi is rerun (for every grandparent slot); a change of
    ``v(., h)`` alone (``dirty[h, 2]``) only shifts the slots' totals.  ``side_value[slot, d]``
    and ``side_take[side_off[slot, d]:][:L]`` hold the value and the chosen candidates of each
    slot and side.  Same result, same tie-breaking as :func:`_decode_head` under
    ``beta * arc - u`` and ``v``.
    """
    arc = parts.arc
    cand = parts.cand
    cand_off = parts.cand_off
    cand_len = parts.cand_len
    gp = parts.gp
    gp_off = parts.gp_off
    gp_len = parts.gp_len
    tab = parts.tab
    tab_off = parts.tab_off
    u = z.u
    v = z.v
    delta = z.delta
    back = z.back
    sval = z.side_value
    stake = z.side_take
    soff = z.side_off
    dirty = z.dirty
    take = z.take
    N = arc.shape[0]
    decoded = 0
    for h in range(N):
        if not (dirty[h, 0] or dirty[h, 1] or dirty[h, 2]):
            continue
        for gi in range(gp_len[h]):
            slot = gp_off[h] + gi
            g = gp[slot]
            if g >= 0 and arc[g, h] == NEG_INF:
                continue  # a forbidden arc g -> h: the slot is never used
            for d in range(2):
                if dirty[h, d]:
                    L = cand_len[h, d]
                    o = soff[slot, d]
                    sval[slot, d] = _viterbi_side(tab, tab_off[slot, d], L, cand, cand_off[h, d],
                                                  h, arc, beta, u,
                                                  single_root and h == 0 and d == 1, delta, back,
                                                  stake[o:o + L])
        best_val = NEG_INF
        best_gi = -1
        for gi in range(gp_len[h]):
            slot, usable, val = _slot_start(parts, arc, v, h, gi)
            if not usable:
                continue
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
                    take[h, d, i] = stake[o + i]
        z.value[h] = best_val
        z.slot[h] = best_gi
        dirty[h, 0] = False
        dirty[h, 1] = False
        dirty[h, 2] = False
        decoded += 1
    return decoded


def _decode_one(pt, h, u, v, single_root):
    N = pt.arc.shape[0]
    work = _viterbi_workspace(pt.cand_len)
    u = np.zeros((N, N)) if u is None else np.ascontiguousarray(u, dtype=np.float64)
    v = np.zeros((N, N)) if v is None else np.ascontiguousarray(v, dtype=np.float64)
    val, gi = _decode_head(h, pt.part_arrays(), pt.arc, 1.0, u, v, bool(single_root), work)
    mods = np.zeros(N, dtype=bool)
    for d in range(2):
        o, L = pt.cand_off[h, d], pt.cand_len[h, d]
        mods[pt.cand[o:o + L][work.best_take[d, :L] == 1]] = True
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
        Sibling scores with the START/END encoding of :mod:`depparse.decode.part_table`.
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
    candidate lists have the lengths ``cand_len`` (:data:`ViterbiWork`)."""
    Wm = table_width(cand_len)
    return ViterbiWork(np.empty(Wm), np.empty(Wm, dtype=np.int64),
                       np.zeros((2, Wm), dtype=np.int64), np.zeros((2, Wm), dtype=np.int64))


@nb.njit(cache=True)
def decode_z(parts, single_root):
    """``argmax_{z in Z} f(z)``: every head automaton decoded on its own (Koo et al. Eq. 3).

    This is the decoding step of training over Z (Sec. 6): no spanning-tree constraint.

    Parameters
    ----------
    parts : PartArrays
        The part table (:meth:`~depparse.decode.part_table.PartTable.part_arrays`).
    single_root : bool

    Returns
    -------
    mods : (N, N) bool
        ``mods[h, m]`` when automaton ``h`` takes ``m``.
    gpar : (N,) int64
        The grandparent chosen by each automaton (``-1`` for none).
    """
    N = parts.arc.shape[0]
    work = _viterbi_workspace(parts.cand_len)
    zero = np.zeros((N, N))
    mods = np.zeros((N, N), dtype=np.bool_)
    gpar = np.full(N, -1, dtype=np.int64)
    for h in range(N):
        _, gi = _decode_head(h, parts, parts.arc, 1.0, zero, zero, single_root, work)
        if gi < 0:
            continue
        gpar[h] = parts.gp[parts.gp_off[h] + gi]
        for d in range(2):
            c0 = parts.cand_off[h, d]
            for i in range(parts.cand_len[h, d]):
                if work.best_take[d, i] == 1:
                    mods[h, parts.cand[c0 + i]] = True
    return mods, gpar
