"""The tag slave of joint tagging and parsing (Rush et al. 2010, Sec. 4.1, Fig. 1).

The kernels that :func:`~depparse.decode.dual._dd_run` runs when it is handed a tag table
(:mod:`depparse.decode.joint` explains the decomposition): the head automata that also choose
tags (:func:`_automata_decode`, the joint model's z-step, in place of
:func:`~depparse.decode.automata._decode_lazy`), the tag chain's Viterbi over the candidates
(:func:`_chain_decode`), the agreement of the automata's tags with the chain
(:func:`_tag_agree`), the update of their multipliers ``mu`` and ``nu`` (:func:`_tag_update`),
and the analysis' score terms (:func:`chain_score`, :func:`_tag_arc_score`).

Shapes: ``N`` positions (the root 0 and the words), ``M`` candidates in all; the fields of
:data:`TagArrays` are those of :class:`~depparse.decode.joint.TagTable`.
"""

from __future__ import annotations

from collections import namedtuple

import numba as nb
import numpy as np

from .automata import _slot_start, _viterbi_side
from .part_table import table_width
from .slices import put

NEG_INF = -np.inf

#: The tag side of a joint table as the kernels take it (the fields of
#: :class:`~depparse.decode.joint.TagTable`; ``word[c]``: the word of candidate ``c``).
TagArrays = namedtuple("TagArrays", ["ptr", "ids", "emit", "trans", "doff", "dtab", "ok",
                                     "word"])

#: The tag state of a run: the multipliers ``mu`` (automaton's own tag = chain) and ``nu``
#: (modifier copies = chain) per candidate, and their values at the lowest dual value; the
#: chain's choice ``tau[i]`` (candidate index within ``C_i``), its value and ``dirty`` flag;
#: the automata's choices ``ahead[h]`` and ``bsel[h, m]``; what changed for lazy decoding
#: (``hdirty[h]``: some ``mu(h, .)``; ``nudirty[m]``: some ``nu(m, .)``); the counts of the
#: candidates in ``tau``, ``a`` and ``b`` (where to branch); work arrays; the best tags.
TagSlave = namedtuple("TagSlave", [
    "mu", "nu", "mubest", "nubest", "tau", "value", "dirty", "ahead", "bsel", "hdirty",
    "nudirty", "ctau", "ca", "cb", "sb", "ueff", "sel", "bestsel", "wtake", "cdelta", "cback",
    "best_tags"])



@nb.njit(cache=True)
def _tag_init(parts, tt, mu0, nu0):
    N = parts.arc.shape[0]
    M = tt.ids.shape[0]
    W = table_width(parts.cand_len)
    return TagSlave(mu0.copy(), nu0.copy(), mu0.copy(), nu0.copy(),
                    np.full(N, -1, dtype=np.int64), np.zeros(1), np.ones(1, dtype=np.bool_),
                    np.zeros(N, dtype=np.int64), np.zeros((N, N), dtype=np.int64),
                    np.ones(N, dtype=np.bool_), np.ones(N, dtype=np.bool_),
                    np.zeros(M), np.zeros(M), np.zeros(M), np.zeros(M), np.zeros((N, N)),
                    np.zeros(N, dtype=np.int64), np.zeros(N, dtype=np.int64),
                    np.zeros((2, W), dtype=np.int64), np.empty(max(M, 1)),
                    np.zeros(max(M, 1), dtype=np.int64), np.full(N, -1, dtype=np.int64))


@nb.njit(cache=True)
def _tag_scale(tt):
    """Largest magnitude of a finite tag score (emissions, transitions, tag-arc terms): with
    the parts' (:func:`~depparse.decode.dual._score_scale`), what the gap tolerance is
    relative to; a forbidden (``-inf``) score is not counted, as there."""
    s = 0.0
    for x in tt.dtab:
        if x != NEG_INF and abs(x) > s:
            s = abs(x)
    for x in tt.emit:
        if x != NEG_INF and abs(x) > s:
            s = abs(x)
    for x in tt.trans.ravel():
        if x != NEG_INF and abs(x) > s:
            s = abs(x)
    return s


@nb.njit(cache=True, inline="always")
def _nk(tt, i):
    """``K_i`` (1 for the root)."""
    return 1 if i == 0 else tt.ptr[i + 1] - tt.ptr[i]


@nb.njit(cache=True, inline="always")
def _best_before(delta, trans, ids, lo, hi, y):
    """``(b, c)``: the best ``delta[c] + trans[ids[c], y]`` over the candidates ``c`` in
    ``lo .. hi-1`` (those of the word before) that are reachable, ``(-inf, -1)`` when none is
    (the step of the chain's Viterbi into tag ``y``, or into END, ``y = S``)."""
    b = NEG_INF
    bc = -1
    for c in range(lo, hi):
        if delta[c] == NEG_INF:
            continue
        v = delta[c] + trans[ids[c], y]
        if v > b:
            b = v
            bc = c
    return b, bc


@nb.njit(cache=True)
def _chain_decode(tt, ts):
    """The tag chain under ``E + mu + nu`` over the allowed candidates: ``ts.tau`` and its
    value (``-inf`` when some word has no allowed candidate)."""
    ptr, ids, trans = tt.ptr, tt.ids, tt.trans
    N = ptr.shape[0] - 1
    S = trans.shape[0] - 1
    delta, back = ts.cdelta, ts.cback
    tau = ts.tau
    tau[0] = -1
    if N <= 1:
        return 0.0
    for c in range(ptr[1], ptr[2]):
        delta[c] = (trans[S, ids[c]] + tt.emit[c] + ts.mu[c] + ts.nu[c]) if tt.ok[c] else NEG_INF
        back[c] = -1
    for i in range(2, N):
        for c in range(ptr[i], ptr[i + 1]):
            b = NEG_INF
            bc = -1
            if tt.ok[c]:
                b, bc = _best_before(delta, trans, ids, ptr[i - 1], ptr[i], ids[c])
            delta[c] = b + tt.emit[c] + ts.mu[c] + ts.nu[c] if bc >= 0 else NEG_INF
            back[c] = bc
    b, bc = _best_before(delta, trans, ids, ptr[N - 1], ptr[N], S)
    if bc < 0:
        for i in range(1, N):
            tau[i] = 0
        return NEG_INF
    for i in range(N - 1, 0, -1):
        tau[i] = bc - ptr[i]
        bc = back[bc]
    return b


@nb.njit(cache=True)
def chain_score(tt, tau):
    """``chain(t)`` of the candidate indices ``tau`` (the tagger's part of ``F``)."""
    ptr, ids, trans = tt.ptr, tt.ids, tt.trans
    N = ptr.shape[0] - 1
    S = trans.shape[0] - 1
    if N <= 1:
        return 0.0
    total = 0.0
    prev = S
    for i in range(1, N):
        c = ptr[i] + tau[i]
        total += trans[prev, ids[c]] + tt.emit[c]
        prev = ids[c]
    return total + trans[prev, S]


@nb.njit(cache=True)
def _tag_arc_score(tt, heads, tau):
    """``sum_m D(h_m, m, t_{h_m}, t_m)`` of an analysis."""
    total = 0.0
    for m in range(1, heads.shape[0]):
        h = heads[m]
        a = 0 if h == 0 else tau[h]
        total += tt.dtab[tt.doff[h, m] + a * _nk(tt, m) + tau[m]]
    return total


@nb.njit(cache=True)
def _automata_decode(parts, tt, beta, single_root, z, ts):
    """z-step of the joint model: every head automaton whose multipliers changed chooses its
    own tag, its grandparent, its modifiers and their tags (module docstring); returns how
    many were decoded."""
    arc = parts.arc
    cand = parts.cand
    cand_off = parts.cand_off
    cand_len = parts.cand_len
    u, v = z.u, z.v
    dirty = z.dirty
    ptr, ok, dtab, doff = tt.ptr, tt.ok, tt.dtab, tt.doff
    mu, nu = ts.mu, ts.nu
    ueff = ts.ueff
    sel = ts.sel
    wtake = ts.wtake
    N = arc.shape[0]
    decoded = 0
    for h in range(N):
        need = dirty[h, 0] or dirty[h, 1] or dirty[h, 2] or ts.hdirty[h]
        if not need:
            for d in range(2):
                for i in range(cand_len[h, d]):
                    if ts.nudirty[cand[cand_off[h, d] + i]]:
                        need = True
        if not need:
            continue
        Kh = _nk(tt, h)
        best_val = NEG_INF
        best_gi = -1
        best_a = 0
        for a in range(Kh):
            if h > 0 and not ok[ptr[h] + a]:
                continue
            # each modifier's best tag for this head tag shifts its arc score
            for d in range(2):
                for i in range(cand_len[h, d]):
                    m = cand[cand_off[h, d] + i]
                    Km = _nk(tt, m)
                    o = doff[h, m] + a * Km
                    bb = NEG_INF
                    bj = -1
                    for j in range(Km):
                        c = ptr[m] + j
                        if ok[c]:
                            x = dtab[o + j] - nu[c]
                            if x > bb:
                                bb = x
                                bj = j
                    sel[m] = bj
                    ueff[h, m] = u[h, m] - bb if bj >= 0 else np.inf
            head = 0.0 if h == 0 else -mu[ptr[h] + a]
            for gi in range(parts.gp_len[h]):
                slot, usable, val = _slot_start(parts, arc, v, h, gi)
                if not usable:
                    continue
                for d in range(2):
                    val += _viterbi_side(parts.tab, parts.tab_off[slot, d], cand_len[h, d],
                                         cand, cand_off[h, d], h, arc, beta, ueff,
                                         single_root and h == 0 and d == 1, z.delta, z.back,
                                         wtake[d])
                val += head
                if val > best_val:
                    best_val = val
                    best_gi = gi
                    best_a = a
                    for d in range(2):
                        for i in range(cand_len[h, d]):
                            z.take[h, d, i] = wtake[d, i]
                            m = cand[cand_off[h, d] + i]
                            ts.bsel[h, m] = sel[m]
        z.value[h] = best_val
        z.slot[h] = best_gi
        ts.ahead[h] = best_a
        dirty[h, 0] = False
        dirty[h, 1] = False
        dirty[h, 2] = False
        ts.hdirty[h] = False
        decoded += 1
    for m in range(N):
        ts.nudirty[m] = False
    return decoded


@nb.njit(cache=True)
def _tag_agree(parts, tt, z, ts):
    """Agreement of the automata's tags with the chain; counts and returns the squared norm
    of the tag part of the subgradient (``ts.sb[c]``: ``sum_h b(h, m, c)``)."""
    N = parts.arc.shape[0]
    ptr = tt.ptr
    sb = ts.sb
    sb[:] = 0.0
    nd = 0
    for h in range(1, N):
        ts.ca[ptr[h] + ts.ahead[h]] += 1.0
        ts.ctau[ptr[h] + ts.tau[h]] += 1.0
        if ts.ahead[h] != ts.tau[h]:
            nd += 2
    for h in range(N):
        for d in range(2):
            c0 = parts.cand_off[h, d]
            for i in range(parts.cand_len[h, d]):
                if z.take[h, d, i] == 1:
                    m = parts.cand[c0 + i]
                    sb[ptr[m] + ts.bsel[h, m]] += 1.0
    for m in range(1, N):
        for c in range(ptr[m], ptr[m + 1]):
            ts.cb[c] += sb[c]
            g = sb[c] - (1.0 if c - ptr[m] == ts.tau[m] else 0.0)
            nd += int(g * g)
    return nd


@nb.njit(cache=True)
def _tag_update(tt, ts, step):
    """``mu(h, t) += step * (a(h, t) - tau(h, t))`` and ``nu(m, t) += step * (sum_h b(h, m, t)
    - tau(m, t))``; marks what changed."""
    ptr = tt.ptr
    N = ptr.shape[0] - 1
    changed = False
    for h in range(1, N):
        if ts.ahead[h] != ts.tau[h]:
            ts.mu[ptr[h] + ts.ahead[h]] += step
            ts.mu[ptr[h] + ts.tau[h]] -= step
            ts.hdirty[h] = True
            changed = True
    for m in range(1, N):
        for c in range(ptr[m], ptr[m + 1]):
            g = ts.sb[c] - (1.0 if c - ptr[m] == ts.tau[m] else 0.0)
            if g != 0.0:
                ts.nu[c] += step * g
                ts.nudirty[m] = True
                changed = True
    if changed:
        ts.dirty[0] = True


@nb.njit(cache=True, inline="always")
def _tag_keep(ts):
    """A new lowest dual value: keep the tag multipliers with it (the warm start)."""
    put(ts.mubest, 0, ts.mu, ts.mu.shape[0])
    put(ts.nubest, 0, ts.nu, ts.nu.shape[0])


@nb.njit(cache=True, inline="always")
def _chain_value(tt, ts):
    """The tag chain's value in ``L``, decoded again only when ``mu`` or ``nu`` changed."""
    if ts.dirty[0]:
        ts.value[0] = _chain_decode(tt, ts)
        ts.dirty[0] = False
    return ts.value[0]
