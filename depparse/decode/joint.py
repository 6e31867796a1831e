"""Joint tagging and parsing by dual decomposition (Rush et al. 2010, Sec. 4.1, Fig. 1).

The pipeline fixes every word's tag first and parses with it.  Here the tag of each word is
chosen *together* with the tree, from a small candidate set ``C_i`` per word (the tags whose
max-marginal under the tagger's chain is within a margin of the best, at most ``K``:
:func:`~depparse.decode.tags.max_marginals`), maximising the joint objective

    F(y, t) = chain(t) + f(y) + sum_m D(h_m, m, t_{h_m}, t_m)

over trees ``y`` (heads ``h_m``) and tag sequences ``t`` (``t_i`` in ``C_i``; the root has no
tag), where

* ``chain(t) = sum_i E_i(t_i) + sum_i T(t_{i-1}, t_i) + T(t_n, END)`` is the tagger's own
  first-order chain (its emission and transition scores, times the joint weight: how much the
  tagger's view counts against the parser's);
* ``f(y)`` is the parser's full model (arcs, siblings, grandparents, grand-siblings: the part
  table of :mod:`depparse.decode.parts`) scored with the tagger's best tags, and
* ``D(h, m, a, b)`` is what the arc ``h -> m`` gains when its head takes its candidate ``a``
  and its modifier its candidate ``b`` instead of the tagger's best tags (``D = 0`` at the best
  tags; the parser's arc features read the tags of the arc's own two words,
  :mod:`depparse.features.tag_arcs`).

**Decomposition.**  Three slaves, each decoded exactly:

* the *tree* ``y`` (Chu-Liu-Edmonds, or Eisner), under ``alpha * theta + u + v``, tag-blind,
  exactly as in :mod:`depparse.decode.dual`;
* the *head automata* ``z`` (Koo et al. 2010, Fig. 2), now each choosing the tags of the words
  it touches: automaton ``h`` chooses its own tag ``a_h`` in ``C_h`` and, for each modifier
  ``m`` it takes, a tag ``b_{h,m}`` in ``C_m``.  It maximises

      -mu(h, a_h) - v(g, h) + sum_sides Viterbi[ T + (1 - alpha) theta(h, m) - u(h, m)
                                                + D(h, m, a_h, b_{h,m}) - nu(m, b_{h,m}) ]

  by running its Viterbi once per allowed head tag ``a_h`` (for a fixed ``a_h`` each modifier's
  best tag is chosen on its own, ``max_b D(h, m, a_h, b) - nu(m, b)``, which only shifts that
  modifier's arc score);
* the *tag chain* ``tau`` (the tagger's Viterbi over the candidates) under
  ``E_i(t) + mu(i, t) + nu(i, t)``.

The multipliers ``u`` and ``v`` tie ``z`` and ``z'`` to ``y`` as in Koo et al.; ``mu(h, t)``
ties each automaton's own tag to the chain (``a_h = tau_h``), ``nu(m, t)`` ties the modifier
copies to the chain (``sum_h b(h, m, t) = tau(m, t)``: exactly one automaton takes ``m`` once
``z = y``).  Every update is ``+= step * (copy - owner)``, the subgradient of the dual
``L(u, v, mu, nu)`` (Rush et al. Fig. 1; Koo et al. Eq. 9).

**Certificate.**  The sum of the three slaves' values is ``L``, an upper bound on every ``F``
(weak duality, Rush et al. Sec. 6.1).  When ``y = z``, ``z' = y``, every ``a_h = tau_h`` and
every taken ``b_{h,m} = tau_m``, the multiplier terms cancel and the slaves' solutions form
one analysis ``(y, tau)`` with ``F(y, tau) = L``: it is optimal (Rush et al. Sec. 6.2; Koo
et al. Theorem 1).  As in :mod:`depparse.decode.dual`, a zero gap ``L <= F(best) + eps``
also certifies.

**Why this decomposition.**  Tag-dependent arc scores need the tags of both ends of an arc:
the head automaton of ``h`` sees ``h`` and all its modifiers, so it scores ``D`` exactly with
no new slave; the tree stays tag-blind (its Chu-Liu-Edmonds step is unchanged) and the chain
is the tagger's own.  The cost is one automaton Viterbi per candidate tag of its head: ``K_h``
times the pipeline's z-step on the heads with ambiguous tags (most words have one candidate),
plus the chain (``O(sum_i K_{i-1} K_i)``, negligible).  Measured on 580 en_ewt dev
sentences with the shipped model (1.13 candidates per word, the defaults of
:class:`~depparse.inference.joint.JointSettings`): 0.69 s of CPU for this decoder, proofs
included, against 0.50 s for :func:`~depparse.decode.bnb.decode_exact` on the same part
tables, while tagging and building the tables take 6.4 s; a whole parse runs at 83-94% of the
pipeline's words per CPU second (benchmarks/bench_joint.py).  Sibling, grandparent and
grand-sibling parts keep the tagger's best tags (they would need tag states inside the
automata, ``K^2`` times the cost).

**Exactness.**  :func:`decode_joint` runs the decomposition for a budget of iterations (Polyak
steps towards the best analysis, as :func:`~depparse.decode.bnb.decode_exact`) and finishes
what it leaves by branch and bound on the dual bound: a node forbids arcs (``-inf``) and tags
(``ok = False``); it branches on a word's tag where the chain and the automata disagree most
(one child fixes the tag, the other forbids it), else on an arc as
:mod:`depparse.decode.bnb` does.  Every returned analysis is proved optimal for ``F`` over the
kept arcs and candidate tags, unless a time or node limit stops the search.

Table of tags (:class:`TagTable`):

``ptr``   : (N + 1,) int64, word ``i`` (1..n) has the candidates ``c = ptr[i] .. ptr[i+1]-1``
            (``ptr[0] = ptr[1] = 0``: the root has none; it counts as one candidate, index 0).
``ids``   : (M,) int64, the chain's tag id of candidate ``c`` (row/column of ``trans``).
``emit``  : (M,) float64, ``E_i`` of candidate ``c``.
``trans`` : (S + 1, S + 1) float64, ``trans[a, b]``; row / column ``S`` is START / END.
``doff``  : (N, N) int64, where the matrix ``D(h, m, ., .)`` of arc ``h -> m`` starts in
            ``dtab`` (``-1``: no such arc), of shape ``(K_h, K_m)``, ``K_0 = 1``.
``dtab``  : float64, the ``D`` matrices, row-major.
``ok``    : (M,) bool, candidate allowed (branch and bound forbids candidates).

References
----------
A. M. Rush, D. Sontag, M. Collins, T. Jaakkola. On dual decomposition and linear programming
relaxations for natural language processing. EMNLP 2010 (Sec. 4.1, Fig. 1: parsing and tagging
agreeing on u(i, t)).
T. Koo, A. M. Rush, M. Collins, T. Jaakkola, D. Sontag. Dual decomposition for parsing with
non-projective head automata. EMNLP 2010 (Fig. 2, Eq. 9, Appendix A).
"""

from __future__ import annotations

import dataclasses
import heapq
import time
from collections import namedtuple
from dataclasses import dataclass, field
from typing import NamedTuple

import numba as nb
import numpy as np

from .automata import _slot_start, _viterbi_side
from .bnb import (
    BUDGET,
    ProvedResult,
    _branch_arc,
    _child_bound,
    _next_open,
    _only_tree,
    _out_of,
    _search_end,
)
from .bnb import WarmStart as _ArcStart
from .dual import (
    COUNT_Y,
    COUNT_Z,
    COUNT_ZG,
    GAP_TOL,
    STEP_RULES,
    DualSettings,
    _arcs_agree,
    _arcs_update,
    _dd_init,
    _grandparent_slots,
    _keep_best,
    _new_lowest,
    _primal_score,
    _settle,
    _tree_step,
    _z_keep,
    _z_value,
    run_anytime,
)
from .mst import NO_TREE, OK, NoSpanningTreeError
from .parts import PartTable, table_width
from .slices import put

__all__ = ["JointExact", "JointResult", "TagTable", "decode_joint", "joint_decompose",
           "joint_score"]

NEG_INF = -np.inf

#: The tag side of a joint table as the kernels take it (module docstring).
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

#: The whole state of a joint run: the state of :func:`~depparse.decode.dual._dd_init` (tree,
#: automata, steps, progress, trace), the tag slave, the tag table and the score scale.
JointState = namedtuple("JointState", ["tree", "automata", "steps", "progress", "trace",
                                       "tags", "table", "scale"])


@dataclass
class TagTable:
    """The tag candidates and tag-dependent scores of one sentence (module docstring)."""

    ptr: np.ndarray
    ids: np.ndarray
    emit: np.ndarray
    trans: np.ndarray
    doff: np.ndarray
    dtab: np.ndarray
    ok: np.ndarray | None = None

    @property
    def N(self) -> int:
        return self.ptr.shape[0] - 1

    def sizes(self) -> np.ndarray:
        """``K_i``, the number of candidates of every word (``K_0 = 1``)."""
        k = np.diff(self.ptr)
        k[0] = 1
        return k

    def chosen(self, tau, default) -> np.ndarray:
        """The tag ids of the candidate indices ``tau`` (``tau[i]`` within ``C_i``); index 0
        keeps ``default[0]``."""
        out = np.array(default, dtype=np.int64, copy=True)
        for i in range(1, self.N):
            out[i] = self.ids[self.ptr[i] + tau[i]]
        return out

    def arrays(self) -> TagArrays:
        N = self.N
        word = np.repeat(np.arange(N, dtype=np.int64), np.diff(self.ptr))
        ok = (np.ones(self.ids.shape[0], dtype=np.bool_) if self.ok is None
              else np.ascontiguousarray(self.ok, dtype=np.bool_))
        return TagArrays(np.ascontiguousarray(self.ptr, dtype=np.int64),
                         np.ascontiguousarray(self.ids, dtype=np.int64),
                         np.ascontiguousarray(self.emit, dtype=np.float64),
                         np.ascontiguousarray(self.trans, dtype=np.float64),
                         np.ascontiguousarray(self.doff, dtype=np.int64),
                         np.ascontiguousarray(self.dtab, dtype=np.float64), ok, word)

    @classmethod
    def dense(cls, cands, emit, trans, D) -> TagTable:
        """A table from dense arrays (tests, small sentences): ``cands[i]`` the tag ids of word
        ``i`` (``cands[0]`` ignored), ``emit[i][j]`` the score of ``cands[i][j]``, ``D[h, m, a,
        b]`` of shape ``(N, N, K, K)``."""
        N = len(cands)
        k = [0] + [len(c) for c in cands[1:]]
        ptr = np.concatenate([[0], np.cumsum(k)]).astype(np.int64)
        ids = np.array([t for c in cands[1:] for t in c], dtype=np.int64)
        e = np.array([x for row in emit[1:] for x in row], dtype=np.float64)
        K = [1] + k[1:]
        doff = np.full((N, N), -1, dtype=np.int64)
        dtab = []
        for h in range(N):
            for m in range(1, N):
                if h != m:
                    doff[h, m] = len(dtab)
                    dtab.extend(np.asarray(D[h, m, :K[h], :K[m]], dtype=np.float64).ravel())
        return cls(ptr, ids, e, np.asarray(trans, dtype=np.float64), doff,
                   np.array(dtab, dtype=np.float64))


@dataclass
class JointResult:
    """Outcome of one joint dual decomposition run (:func:`joint_decompose`).

    ``heads`` and ``tags`` (the candidate index of every word within its ``C_i``; ``-1`` at the
    root) form the best analysis found, ``score`` its ``F``; ``certificate``, ``iterations``,
    ``bound``, ``pruned``, ``timed_out`` as in :class:`~depparse.decode.dual.DualResult`;
    ``start`` is the warm start for branch and bound (multipliers at the lowest dual value and
    the counts of every slave's choices)."""

    heads: np.ndarray
    tags: np.ndarray
    score: float
    certificate: bool
    iterations: int
    bound: float
    pruned: bool
    timed_out: bool
    start: _Start | None = None
    dual: np.ndarray | None = None
    primal: np.ndarray | None = None


class _Start(NamedTuple):
    """Warm start of a node: the multipliers of the lowest dual value and the slaves' counts."""

    u: np.ndarray
    v: np.ndarray
    mu: np.ndarray
    nu: np.ndarray
    counts: np.ndarray  # rows COUNT_Y, COUNT_Z, COUNT_ZG (and an empty COUNT_C)
    tcounts: np.ndarray  # (3, M): tau, a, b
    counted: int


# -- the kernels -------------------------------------------------------------------------


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
    s = 0.0
    for x in tt.dtab:
        if abs(x) > s:
            s = abs(x)
    for x in tt.emit:
        if x != NEG_INF and abs(x) > s:
            s = abs(x)
    for x in tt.trans.ravel():
        if abs(x) > s:
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


@nb.njit(cache=True)
def _joint_init(parts, tt, settings, u0, v0, mu0, nu0):
    N = parts.arc.shape[0]
    st = _dd_init(parts, settings, u0, v0, np.zeros((N, N)))
    scale = max(st.scale, _tag_scale(tt))
    return JointState(st.tree, st.automata, st.steps, st.progress, st.trace,
                      _tag_init(parts, tt, mu0, nu0), tt, scale)


@nb.njit(cache=True)
def _joint_run(parts, settings, state, k_end):
    """The joint dual decomposition loop (module docstring), resumable like
    :func:`~depparse.decode.dual._dd_run`: the slaves decode (tree, automata with tags, tag
    chain) and their values sum to ``L``; the lowest ``L`` and the best analysis are kept;
    agreement (arcs, grandparents, tags); the certificates; the step; the updates."""
    tree, z, steps, progress, trace = (state.tree, state.automata, state.steps,
                                       state.progress, state.trace)
    ts, tt = state.tags, state.table  # the tag slave and its table
    yh, w = tree.heads, tree.w
    k = progress.k[0]
    while k < settings.max_iter and k < k_end:
        progress.k[0] = k + 1
        status, L = _tree_step(settings, tree, progress)
        if status != OK:
            return NO_TREE
        trace.recomputed[k] = _automata_decode(parts, tt, 1.0 - settings.alpha,
                                               settings.single_root, z, ts) / parts.arc.shape[0]
        L = _z_value(L, z)
        if ts.dirty[0]:
            ts.value[0] = _chain_decode(tt, ts)
            ts.dirty[0] = False
        L += ts.value[0]
        trace.dual[k] = L
        if L == NEG_INF:  # an automaton or the chain has no feasible choice
            progress.done[0] = 1
            return NO_TREE
        if _new_lowest(L, progress, steps):
            _z_keep(z)
            put(ts.mubest, 0, ts.mu, ts.mu.shape[0])
            put(ts.nubest, 0, ts.nu, ts.nu.shape[0])
        f = _primal_score(parts, yh, z.gpos) + chain_score(tt, ts.tau) + _tag_arc_score(
            tt, yh, ts.tau)
        trace.primal[k] = f
        if f > progress.best[0] or progress.changes[0] == 0:
            put(ts.best_tags, 0, ts.tau, ts.tau.shape[0])
        _keep_best(f, yh, k, progress, trace)
        nd = _arcs_agree(parts, yh, tree, z) + _tag_agree(parts, tt, z, ts)
        if nd == 0:  # every copy agrees: a certificate, with the chain's tags
            put(ts.best_tags, 0, ts.tau, ts.tau.shape[0])
        stop, step = _settle(settings, state, yh, k, L, f, nd)
        if stop:
            return OK
        _arcs_update(parts, yh, z, w, step)
        _tag_update(tt, ts, step)
        k += 1
    if k >= settings.max_iter:
        progress.done[0] = 1
    return OK


# -- Python API --------------------------------------------------------------------------


def joint_score(parts: PartTable, tags: TagTable, heads, tau) -> float:
    """``F(y, t)`` of the analysis ``heads`` with candidate indices ``tau`` (module
    docstring)."""
    return float(_full_score(parts.part_arrays(), tags.arrays(),
                             np.ascontiguousarray(heads, dtype=np.int64),
                             np.ascontiguousarray(tau, dtype=np.int64)))


@nb.njit(cache=True)
def _full_score(pa, tt, heads, tau):
    return (_primal_score(pa, heads, _grandparent_slots(pa)) + chain_score(tt, tau)
            + _tag_arc_score(tt, heads, tau))


def _check(parts: PartTable, tags: TagTable):
    if parts.bigrams:
        raise ValueError("joint tagging does not combine with head bigrams (gsh models)")
    N = parts.arc.shape[0]
    if tags.N != N:
        raise ValueError(f"a tag table of {tags.N - 1} words for a sentence of {N - 1}")
    if (np.diff(tags.ptr)[1:] < 1).any():
        raise ValueError("every word needs at least one candidate tag")


def joint_decompose(parts: PartTable, tags: TagTable, *, alpha=0.001, max_iter=5000,
                    single_root=False, projective=False, tol=GAP_TOL, step_rule="koo",
                    lam0=1.0, patience=10, max_halvings=1 << 30, incumbent=-np.inf,
                    start: _Start | None = None, time_limit=None, deadline=None,
                    chunk=25) -> JointResult:
    """One joint dual decomposition run (module docstring); settings as
    :func:`~depparse.decode.dual.dual_decompose`'s, ``start`` a warm start (multipliers).

    Raises
    ------
    NoSpanningTreeError
        When no analysis exists under the kept arcs and allowed tags.
    """
    if max_iter < 1:
        raise ValueError("max_iter must be >= 1")
    if step_rule not in STEP_RULES:
        raise ValueError(f"step_rule must be one of {sorted(STEP_RULES)}, got {step_rule!r}")
    _check(parts, tags)
    pa = parts.part_arrays()
    tt = tags.arrays()
    N = pa.arc.shape[0]
    M = tt.ids.shape[0]
    if start is None:
        u0, v0, mu0, nu0 = np.zeros((N, N)), np.zeros((N, N)), np.zeros(M), np.zeros(M)
    else:
        u0, v0, mu0, nu0 = start.u, start.v, start.mu, start.nu
    settings = DualSettings(float(alpha), int(max_iter), bool(single_root), bool(projective),
                            float(tol), STEP_RULES[step_rule], int(patience), int(max_halvings),
                            float(incumbent), float(lam0), False)
    state = _joint_init(pa, tt, settings, u0, v0, mu0, nu0)
    run_anytime(_joint_run, pa, settings, state, max_iter=max_iter, time_limit=time_limit,
                deadline=deadline, chunk=chunk)
    pr, trace, z, ts = state.progress, state.trace, state.automata, state.tags
    iters = int(pr.k[0])
    counts = np.zeros((4, N, N))
    counts[COUNT_Y], counts[COUNT_Z], counts[COUNT_ZG] = state.tree.count, z.count, z.gcount
    tcounts = np.stack([ts.ctau, ts.ca, ts.cb])
    best_tags = ts.best_tags.copy()
    best_tags[0] = -1
    return JointResult(trace.best_heads.copy(), best_tags, float(pr.best[0]),
                       bool(pr.certified[0]) and not pr.pruned[0], iters, float(pr.lowest[0]),
                       bool(pr.pruned[0]), not bool(pr.done[0]),
                       _Start(z.ubest.copy(), z.vbest.copy(), ts.mubest.copy(),
                              ts.nubest.copy(), counts, tcounts, iters),
                       trace.dual[:iters].copy(), trace.primal[:iters].copy())


@dataclass
class JointExact(ProvedResult):
    """Outcome of :func:`decode_joint`: the analysis (``heads``; ``tags``, candidate index of
    every word, ``-1`` at the root), its ``score`` ``F``, ``optimal`` and ``proof`` (``"dual"``
    or ``"branch-and-bound"``, None when a limit stopped the search), the first run's
    ``certificate`` and ``root_iterations``, all ``iterations``, ``nodes`` (1 for the first
    run), the best upper ``bound`` and the seconds of the first run and of branch and
    bound (the fields of :class:`~depparse.decode.bnb.ProvedResult`, plus ``tags``)."""

    tags: np.ndarray = field(kw_only=True)


class _Node(NamedTuple):
    key: float
    tick: int
    arc: np.ndarray
    ok: np.ndarray
    start: _Start


def _branch_tag(tags: TagTable, ok, start: _Start):
    """``(key, c)``: the candidate to split on (where the chain ``tau``, the automata's own
    tags ``a`` and the modifier copies ``b`` differ most over the node's iterations), or None
    when every word has a single allowed candidate."""
    word = np.repeat(np.arange(tags.N), np.diff(tags.ptr))
    free_word = np.bincount(word[ok], minlength=tags.N) >= 2
    free = ok & free_word[word]
    if not free.any():
        return None
    it = max(int(start.counted), 1)
    t, a, b = start.tcounts / it
    dis = np.maximum(np.abs(t - a), np.maximum(np.abs(t - b), np.abs(a - b)))
    key = dis + 1e-6 * np.minimum(t, 1.0 - t)
    key = np.where(free, key, -1.0)
    c = int(np.argmax(key))
    return float(key[c]), c


def _arc_key(arc, start: _Start, use_g):
    """``(key, (h, m))`` of :func:`~depparse.decode.bnb._branch_arc`'s choice, or None."""
    ws = _ArcStart(start.u, start.v, None, start.counts, start.counted)
    hm = _branch_arc(arc, ws, use_g)
    if hm is None:
        return None
    it = max(int(start.counted), 1)
    h, m = hm
    y = start.counts[COUNT_Y, h, m] / it
    z = start.counts[COUNT_Z, h, m] / it
    dis = abs(y - z)
    if use_g:
        g = start.counts[COUNT_ZG, h, m] / it
        dis = max(dis, abs(y - g), abs(z - g))
    return dis + 1e-6 * min(y, 1.0 - y), hm


def decode_joint(parts: PartTable, tags: TagTable, *, alpha=0.001, budget=BUDGET,
                 single_root=False, projective=False, tol=GAP_TOL, time_limit=None,
                 root_lam0=1.5, root_patience=60, node_iter=60, lam0=2.0, patience=20,
                 max_halvings=4, max_nodes=None) -> JointExact:
    """Best joint analysis (tree and tags), proved optimal: joint dual decomposition for
    ``budget`` iterations, then branch and bound (module docstring).  Settings as
    :func:`~depparse.decode.bnb.decode_exact`'s.

    Raises
    ------
    NoSpanningTreeError
        If no analysis exists under the kept arcs.
    """
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + float(time_limit)
    kw = dict(alpha=alpha, single_root=single_root, projective=projective, tol=tol)
    r = joint_decompose(parts, tags, max_iter=budget, step_rule="polyak", lam0=root_lam0,
                        patience=root_patience, deadline=deadline, **kw)
    t1 = time.perf_counter()
    res = JointExact.of_first_run(r, t1 - t0, tags=r.tags)
    if r.certificate or r.timed_out:
        return res
    # branch and bound: a node forbids arcs (-inf) and candidates (ok = False)
    scale = max(float(np.abs(parts.arc[np.isfinite(parts.arc)]).max(initial=0.0)),
                float(np.abs(parts.tab[np.isfinite(parts.tab)]).max(initial=0.0)),
                float(np.abs(tags.dtab).max(initial=0.0)),
                float(np.abs(tags.emit).max(initial=0.0)),
                float(np.abs(tags.trans).max(initial=0.0)))
    ok0 = (np.ones(tags.ids.shape[0], dtype=bool) if tags.ok is None else tags.ok.copy())
    best_heads, best_tags, best = r.heads, r.tags, r.score
    queue = [_Node(-r.bound, 0, parts.arc, ok0, r.start)]
    tick, nodes, iters, timed_out = 1, 0, 0, False
    ptr = tags.ptr
    word = np.repeat(np.arange(tags.N), np.diff(ptr))

    def run(arc, ok, start, max_iter, **more):
        return joint_decompose(dataclasses.replace(parts, arc=arc),
                               dataclasses.replace(tags, ok=ok), max_iter=max_iter,
                               start=start, **kw, **more)

    while True:
        node, timed_out = _next_open(queue, best, scale, tol, nodes, max_nodes, deadline,
                                     timed_out)
        if node is None:
            break
        pbound = -node.key
        tk = _branch_tag(tags, node.ok, node.start)
        ak = _arc_key(node.arc, node.start, parts.grandparents)
        if tk is None and ak is None:  # one analysis left: score it
            if _only_tree(node.arc) is not None:
                try:
                    rr = run(node.arc, node.ok, None, 1)
                except NoSpanningTreeError:
                    continue
                nodes += 1
                iters += rr.iterations
                if rr.score > best:
                    best_heads, best_tags, best = rr.heads, rr.tags, rr.score
            continue
        children = []
        if tk is not None and (ak is None or tk[0] >= ak[0]):
            c = tk[1]
            fix = node.ok.copy()  # child 1: word i takes candidate c
            i = word[c]
            fix[ptr[i]:ptr[i + 1]] = False
            fix[c] = True
            forbid = node.ok.copy()  # child 2: it does not
            forbid[c] = False
            children = [(node.arc, fix), (node.arc, forbid)]
        else:
            h, m = ak[1]
            fix = node.arc.copy()
            keep = fix[h, m]
            fix[:, m] = NEG_INF
            fix[h, m] = keep
            forbid = node.arc.copy()
            forbid[h, m] = NEG_INF
            children = [(fix, node.ok), (forbid, node.ok)]
        for arc, ok in children:
            if not np.isfinite(arc[:, 1:]).any(axis=0).all():
                continue
            if _out_of(nodes, max_nodes, deadline):
                heapq.heappush(queue, _Node(node.key, tick, arc, ok, node.start))
                tick += 1
                continue
            try:
                rr = run(arc, ok, node.start, node_iter, incumbent=best, step_rule="polyak",
                         lam0=lam0, patience=patience, max_halvings=max_halvings,
                         deadline=deadline, chunk=50)
            except NoSpanningTreeError:
                nodes += 1
                continue
            nodes += 1
            iters += rr.iterations
            if rr.score > best:
                best_heads, best_tags, best = rr.heads, rr.tags, rr.score
            cb = _child_bound(rr, pbound, best, scale, tol)
            if cb is None:
                continue
            heapq.heappush(queue, _Node(-cb, tick, arc, ok, rr.start))
            tick += 1
            if rr.timed_out:
                timed_out = True
    optimal, bound, timed_out = _search_end(queue, best, scale, tol, timed_out)
    res.heads, res.tags, res.score = best_heads, best_tags, best
    res.add_search(nodes, iters, optimal, bound, timed_out, time.perf_counter() - t1)
    return res

