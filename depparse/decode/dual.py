"""Subgradient dual decomposition for non-projective head automata (Koo et al. 2010).

Fig. 1 (sibling models) and Fig. 2 (grandparent+sibling models): ``y`` is a spanning tree found
by Chu-Liu-Edmonds on the kept arcs' lists (:func:`~depparse.decode.sparse_mst._cle_sparse`; in
projective mode, by Eisner's algorithm: Sec. 7.7, Table 3) under arc weights
``alpha * theta + u (+ v)``; ``z`` is the union of the independent head-automaton
solutions under ``(1 - alpha) * theta - u`` (and ``- v`` on the automaton's own head).  When
``y`` and ``z`` agree the tree is the exact argmax of the full model (Theorem 1): a certificate.
A table with head-bigram parts adds a third slave, the chain of :mod:`depparse.decode.head_bigrams`,
whose copies ``c`` of the arcs agree with ``y`` through multipliers ``r`` (``+ r`` in the tree's
weights, ``- r`` in the chain's); the certificate then needs ``y = z = c``.

One iteration of Fig. 1 / Fig. 2 (:func:`_dd_run`), one small kernel per step and slave:

* the y-step, ``y = argmax_Y`` under ``w = alpha * theta + u + v + r``: :func:`_y_decode`;
* the z-step, every head automaton under ``(1 - alpha) theta - u`` and ``- v``
  (:func:`_z_decode`, lazily: :func:`~depparse.decode.automata._decode_lazy`), and the
  chain's under ``- r`` (:func:`_c_decode`); their values sum to the dual value ``L(u)``
  (Eq. 9);
* the lowest dual value, with every slave's multipliers (:func:`_keep_lowest`), and the best
  tree so far under the full model (:func:`_primal_score`, :func:`_keep_best`);
* agreement, ``y(h, m) = z(h, m)``, ``z'(g, h) = y(g, h)``, ``c(h, m) = y(h, m)``: the
  subgradient's entries and its squared norm (:func:`_z_agree`, :func:`_zg_agree`,
  :func:`_c_agree`); no disagreement is a certificate (Theorem 1);
* the step size (:func:`_step_size`);
* the update ``u += step * (z - y)``, ``v += step * (z' - y)``, ``r += step * (c - y)``, each
  also moving the tree's weights ``w`` (:func:`_z_update`, :func:`_zg_update`,
  :func:`_c_update`).

Details, each from the paper:

* step sizes (Appendix A.1): ``delta = L(u^1) - f(y^1)`` and ``alpha_k = delta / (1 + eta_k)``
  where ``eta_k`` counts the iterations ``k' <= k`` at which the dual went up
  (:func:`_step_size`);
* the split of the arc scores (Appendix A.2), ``alpha = 0.001`` by default;
* lazy decoding (Sec. 7.4): automaton ``i`` is re-decoded only when some ``u(i, .)`` or
  ``v(., i)`` changed since its last decoding (:func:`_z_decode`);
* an iteration cap ``K`` (5000 by default); without agreement the ``y^(k)`` with the best
  full-model score is returned, uncertified (Sec. 7.5).

For branch and bound (:mod:`depparse.decode.bnb`), a run can also start from given multipliers
(a warm start), forbid arcs (``-inf`` in the part table), stop as soon as its dual value falls
to a score known from elsewhere (the incumbent), take Polyak's steps
``lam (L(u) - f*) / |g|^2`` towards the best known score ``f*`` (Polyak 1969; halving ``lam``
when the dual stalls, Held and Karp 1971) instead of Appendix A.1's, and report its lowest dual
value with the multipliers that reached it and where ``y``, ``z`` and ``z'`` disagreed.
Lazy decoding is one level finer than Sec. 7.4: per automaton side and grandparent slot
(:func:`~depparse.decode.automata._decode_lazy`).

Besides agreement, a zero duality gap also certifies: ``L(u) <= f(y) + eps`` for a tree ``y``
means ``y`` is optimal (weak duality, Eq. 9); ``eps = tol * max(|L(u)|, max |part score|)``
only absorbs floating-point rounding (no absolute floor, so tiny scores are handled exactly).
This matters when ties make ``y`` and ``z`` differ at an optimum, where the subgradient step
would be zero forever (:func:`_gap_closed`).

The state of a run is a named structure (:data:`DualState`, named tuples that Numba
compiles), one part per slave: :data:`TreeSlave` (``y``), :data:`AutomataSlave` (``z``,
``z'``), :data:`ChainSlave` (``c``), and the step rule's memory, the progress and the traces.
A time limit is enforced between chunks of iterations (:func:`run_anytime`, shared with AD3).
The step kernels are inlined into :func:`_dd_run` (``inline="always"``), which hands each one
its slave's structure: a named tuple passed down through several calls per iteration costs
the reference counting of all its arrays, and kernels called per head take plain arrays.

**Adding a slave** (e.g. the tagger's tag chain of joint tagging, Rush et al. 2010): every
slave agrees with the tree ``y`` through its own multipliers, so a slave is

1. a named tuple of its state beside :data:`ChainSlave` (its multipliers and their copy at
   the lowest dual value, its solution and value, ``dirty`` for lazy decoding, its counts,
   work arrays), allocated in :func:`_dd_init` and a field of :data:`DualState`;
2. ``_x_decode``, its decoding step under minus its multipliers (its scores are fields of the
   part table, :class:`~depparse.decode.part_table.PartArrays`), whose value :func:`_dd_run` adds
   to ``L(u)``;
3. ``_x_agree``: counts its copies, returns its disagreements with ``y`` (their part of the
   subgradient's squared norm), added to ``nd`` in :func:`_dd_run`;
4. ``_x_update``: its multipliers ``+= step * (x - y)`` and the tree's weights ``w`` by the
   same amounts, called with the other updates in :func:`_dd_run`;
5. ``_x_keep``, called by :func:`_keep_lowest`, and the kept multipliers in
   :class:`DualResult` (the warm start of branch and bound's children, :func:`dual_decompose`
   reads them, :func:`~depparse.decode.bnb.branch_and_bound` passes them on); its part of the
   full-model score ``f(y)`` is added where :func:`_dd_run` adds the chain's
   (:func:`_c_score`).

Joint tagging's tag slave (Rush et al. 2010; :mod:`depparse.decode.tag_slave`) is one, with
two differences: its variables are tags, not arcs, so they agree with the automata's tag
choices (the automata that own them), and its state is an argument of :func:`_dd_run`
(``tags``), not a field of :data:`DualState`, so that a run without tags compiles none of its
steps.
"""

from __future__ import annotations

import time
from collections import namedtuple
from dataclasses import dataclass, field

import numba as nb
import numpy as np

from .automata import _decode_lazy
from .eisner import _eisner
from .head_bigrams import chain_viterbi, head_positions, tree_bigram_score
from .mst import NO_TREE, OK, NoSpanningTreeError
from .part_table import PartTable, compile_dense, table_width
from .slices import put, put2
from .sparse_mst import _cle_sparse, in_arcs
from .tag_slave import (
    _automata_decode,
    _chain_value,
    _tag_agree,
    _tag_arc_score,
    _tag_keep,
    _tag_update,
    chain_score,
)

__all__ = ["COUNT_C", "COUNT_Y", "COUNT_Z", "COUNT_ZG", "DualResult", "dual_decompose",
           "dual_decompose_dense"]

NEG_INF = -np.inf
GAP_TOL = 1e-9

#: The rows of :attr:`DualResult.counts`: how often ``y(h, m)``, ``z(h, m)``, ``z'(h, m)`` and
#: the chain's ``c(h, m)`` were 1.
COUNT_Y, COUNT_Z, COUNT_ZG, COUNT_C = 0, 1, 2, 3


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
        ``c(h, m)`` were 1 (rows :data:`COUNT_Y`, :data:`COUNT_Z`, :data:`COUNT_ZG`,
        :data:`COUNT_C`; where the sides disagree, branch and bound branches).
    counted : int or None
        The number the counts are sums over: ``iterations`` when None (AD3's counts are
        fractions already: 1).
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
    counted: int | None = None

    @property
    def frequency_base(self) -> int:
        """What the counts are divided by to give frequencies (see ``counted``)."""
        return self.iterations if self.counted is None else self.counted


STEP_RULES = {"koo": 0, "polyak": 1}
MAX_CHANGES = 256  # best-tree history kept per sentence (for reports of UAS vs K)

# step-size rules of :func:`_dd_run`
RULE_KOO = STEP_RULES["koo"]  # Appendix A.1: delta / (1 + eta_k)
RULE_POLYAK = STEP_RULES["polyak"]  # Polyak, towards the incumbent; halved on stalls

# -- the state of a run, by name (Numba compiles named tuples; a scalar that changes during
# -- the run is an array of one element, read as ``progress.k[0]``) ----------------------

#: The settings of a run (:func:`dual_decompose` documents them); fixed during the run.
DualSettings = namedtuple("DualSettings", [
    "alpha", "max_iter", "single_root", "projective", "tol", "rule", "patience",
    "max_halvings", "incumbent", "lam0", "history"])

#: The spanning-tree slave ``y`` (Chu-Liu-Edmonds over the kept arcs, or Eisner): its arc
#: weights ``w = alpha * theta + u + v + r`` (``-inf`` off the kept arcs), the kept arcs'
#: in-lists of the sparse Chu-Liu-Edmonds, its tree ``heads`` and ``count[h, m]``, how often
#: ``y(h, m) = 1``.  Every other slave agrees with ``y`` through its own multipliers, which
#: it adds to ``w``.
TreeSlave = namedtuple("TreeSlave", ["w", "in_ptr", "in_src", "heads", "count"])

#: The head automata ``z`` (and their grandparent choices ``z'``, Fig. 2): the multipliers
#: ``u(h, m)`` (agreement of ``z`` with ``y``) and ``v(g, h)`` (of ``z'`` with ``y``) and
#: their values at the lowest dual value (``ubest``, ``vbest``); each automaton's choice
#: (``take[h, d, i]`` for candidate ``i`` of side ``d``, grandparent ``slot[h]``, ``value[h]``);
#: lazy decoding's memory (``dirty[h]``: side 0, side 1 or ``v`` changed; the Viterbi result of
#: every slot and side: ``side_value``, ``side_take`` at ``side_off``); ``gpos[h, g]``, the slot
#: of grandparent ``g`` of ``h``; Viterbi work arrays; ``count``/``gcount``, how often
#: ``z(h, m)`` / ``z'(h, m)`` was 1.
AutomataSlave = namedtuple("AutomataSlave", [
    "u", "v", "ubest", "vbest", "take", "slot", "value", "dirty", "side_value", "side_take",
    "side_off", "gpos", "delta", "back", "count", "gcount"])

#: The head-bigram chain ``c`` (:mod:`depparse.decode.head_bigrams`): its multipliers
#: ``r(h, m)`` (and ``rbest`` at the lowest dual value), its ``heads`` and ``value[0]``,
#: ``dirty[0]`` (some ``r`` changed since it was decoded), ``hpos``
#: (:func:`~depparse.decode.head_bigrams.head_positions`), Viterbi work arrays and ``count``,
#: how often ``c(h, m)`` was 1.
ChainSlave = namedtuple("ChainSlave", [
    "r", "rbest", "heads", "value", "dirty", "hpos", "delta", "back", "count"])

#: The memory of the step-size rules: Appendix A.1's ``delta = L(u^1) - f(y^1)``, the last
#: dual value and ``eta`` (the rises of the dual); Polyak's ``lam``, the iterations since the
#: lowest dual value fell (``stalls``) and the ``halvings`` of ``lam``.
StepState = namedtuple("StepState", ["delta", "prev_dual", "eta", "lam", "stalls", "halvings"])

#: Where the run stands: iterations done ``k``, ``done`` (1: stopped for good), ``certified``,
#: ``pruned``; the best tree's score ``best`` and the ``changes`` of the best tree so far;
#: the ``lowest`` dual value.
Progress = namedtuple("Progress", ["k", "done", "certified", "pruned", "changes", "best",
                                   "lowest"])

#: What the run reports: the best tree, the traces of ``L(u)``, ``f(y)`` and of the automata
#: re-decoded per iteration, the history of best trees (iteration, heads).
DualTrace = namedtuple("DualTrace", ["best_heads", "dual", "primal", "recomputed",
                                     "change_iter", "change_heads"])

#: The whole state of a resumable run (:func:`_dd_init`, :func:`_dd_run`); ``scale`` is the
#: largest magnitude of a part score (the gap tolerance is relative to it).
DualState = namedtuple("DualState", ["tree", "automata", "chain", "steps", "progress",
                                     "trace", "scale"])


@nb.njit(cache=True, no_cpython_wrapper=True)
def _grandparent_slots(parts):
    """``gpos[h, g]``: the slot of grandparent ``g`` in the automaton of ``h`` (-1: none)."""
    N = parts.arc.shape[0]
    gpos = np.full((N, N), -1, dtype=np.int64)
    for h in range(N):
        for gi in range(parts.gp_len[h]):
            g = parts.gp[parts.gp_off[h] + gi]
            if g >= 0:
                gpos[h, g] = gi
    return gpos


@nb.njit(cache=True)
def _primal_score(parts, heads, gpos):
    """Full-model score f(y) of tree ``heads`` from the arc scores and the automata tables
    (``gpos`` from :func:`_grandparent_slots`; without the head bigrams)."""
    N = heads.shape[0]
    arc = parts.arc
    cand = parts.cand
    cand_len = parts.cand_len
    tab = parts.tab
    total = 0.0
    for m in range(1, N):
        total += arc[heads[m], m]
    for h in range(N):
        gi = 0
        if parts.grandparents and h > 0:
            gi = gpos[h, heads[h]]
        slot = parts.gp_off[h] + gi
        for d in range(2):
            L = cand_len[h, d]
            o = parts.tab_off[slot, d]
            c0 = parts.cand_off[h, d]
            p = 0
            for q in range(L):
                if heads[cand[c0 + q]] == h:
                    total += tab[o + p * (L + 1) + q]
                    p = q + 1
            total += tab[o + p * (L + 1) + L]
    return total


@nb.njit(cache=True, no_cpython_wrapper=True)
def _score_scale(parts):
    """Largest magnitude of a finite part score."""
    N = parts.arc.shape[0]
    scale = 0.0
    for h in range(N):
        for m in range(N):
            a = parts.arc[h, m]
            if a != NEG_INF and abs(a) > scale:
                scale = abs(a)
    for i in range(parts.tab.shape[0]):
        a = parts.tab[i]
        if a != NEG_INF and abs(a) > scale:
            scale = abs(a)
    for i in range(parts.hb.shape[0]):
        if abs(parts.hb[i]) > scale:
            scale = abs(parts.hb[i])
    return scale


@nb.njit(cache=True, inline="always")
def _gap_closed(bound, best, scale, tol):
    """Does the upper bound ``bound`` prove that no tree beats the score ``best``?  (Weak
    duality, Eq. 9: ``bound <= best + eps``, ``eps = tol * max(scale, |bound|)``.)"""
    return bound < np.inf and bound - best <= tol * max(scale, abs(bound))


@nb.njit(cache=True)
def _dd_init(parts, settings, u0, v0, r0):
    """Allocate the state of a dual decomposition run (:data:`DualState`, see
    :func:`_dd_run`), starting from the multipliers ``u0``, ``v0`` and ``r0`` (copied; zeros
    for a cold start)."""
    N = parts.arc.shape[0]
    arc = parts.arc
    cand = parts.cand
    cand_len = parts.cand_len
    u = u0.copy()
    v = v0.copy()
    r = r0.copy()
    w = np.full((N, N), NEG_INF)  # MST weights alpha*theta + u + v + r on kept arcs
    for h in range(N):
        for d in range(2):
            for i in range(cand_len[h, d]):
                m = cand[parts.cand_off[h, d] + i]
                if arc[h, m] != NEG_INF:
                    w[h, m] = settings.alpha * arc[h, m] + u[h, m] + v[h, m] + r[h, m]
    in_ptr, in_src = in_arcs(w)
    tree = TreeSlave(w, in_ptr, in_src, np.empty(N, dtype=np.int64), np.zeros((N, N)))
    Wmax = table_width(cand_len)
    # per (grandparent slot, side): the last Viterbi value and choice (lazy decoding)
    nslot = parts.tab_off.shape[0]
    soff = np.zeros((nslot, 2), dtype=np.int64)
    size = 0
    for h in range(N):
        for gi in range(parts.gp_len[h]):
            for d in range(2):
                soff[parts.gp_off[h] + gi, d] = size
                size += cand_len[h, d]
    automata = AutomataSlave(
        u, v, u0.copy(), v0.copy(), np.zeros((N, 2, Wmax), dtype=np.int64),
        np.full(N, -1, dtype=np.int64), np.zeros(N), np.ones((N, 3), dtype=np.bool_),
        np.zeros((nslot, 2)), np.zeros(max(size, 1), dtype=np.int64), soff,
        _grandparent_slots(parts), np.empty(Wmax), np.empty(Wmax, dtype=np.int64),
        np.zeros((N, N)), np.zeros((N, N)))
    nh = max(parts.hd.shape[0], 1)
    chain = ChainSlave(r, r0.copy(), np.full(N, -1, dtype=np.int64), np.zeros(1),
                       np.ones(1, dtype=np.bool_),
                       head_positions(parts.hd, parts.hd_off, parts.hd_len), np.empty(nh),
                       np.empty(nh, dtype=np.int64), np.zeros((N, N)))
    steps = StepState(np.zeros(1), np.full(1, np.inf), np.zeros(1, dtype=np.int64),
                      np.full(1, settings.lam0), np.zeros(1, dtype=np.int64),
                      np.zeros(1, dtype=np.int64))
    progress = Progress(np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
                        np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
                        np.zeros(1, dtype=np.int64), np.full(1, NEG_INF), np.full(1, np.inf))
    K = settings.max_iter
    ncap = min(K, MAX_CHANGES) if settings.history else 1
    trace = DualTrace(np.full(N, -1, dtype=np.int64), np.empty(K), np.empty(K), np.empty(K),
                      np.zeros(ncap, dtype=np.int64), np.zeros((ncap, N), dtype=np.int64))
    return DualState(tree, automata, chain, steps, progress, trace, _score_scale(parts))


# -- the slaves: each decodes, counts its disagreements with y, moves its multipliers ----


@nb.njit(cache=True, inline="always")
def _y_decode(settings, tree):
    """y-step: the spanning tree under the weights ``tree.w`` into ``tree.heads``; returns
    ``(status, its weight)`` (status ``NO_TREE`` when the kept arcs admit no tree)."""
    yh = tree.heads
    w = tree.w
    if settings.projective:
        status = _eisner(w, settings.single_root, yh)
    else:
        status = _cle_sparse(w, tree.in_ptr, tree.in_src, settings.single_root, yh)
    if status != OK:
        return status, NEG_INF
    yval = 0.0
    for m in range(1, yh.shape[0]):
        yval += w[yh[m], m]
    return OK, yval


@nb.njit(cache=True, inline="always")
def _y_count(tree):
    """``count[h, m] += y(h, m)``."""
    yh = tree.heads
    count = tree.count
    for m in range(1, yh.shape[0]):
        count[yh[m], m] += 1.0


@nb.njit(cache=True, inline="always")
def _z_decode(parts, settings, z):
    """z-step: every head automaton whose multipliers changed is decoded again (Sec. 7.4)
    under ``(1 - alpha) theta - u`` and ``- v``; returns the fraction re-decoded (Fig. 3)."""
    return _decode_lazy(parts, 1.0 - settings.alpha, settings.single_root, z) / parts.arc.shape[0]


@nb.njit(cache=True, inline="always")
def _z_value(L, z):
    """``L`` plus the automata's values (summed in head order)."""
    value = z.value
    for h in range(value.shape[0]):
        L += value[h]
    return L


@nb.njit(cache=True, inline="always")
def _z_agree(parts, yh, z):
    """Agreement of the automata with the tree: ``z(h, m) = y(h, m)`` for every candidate arc;
    counts ``z`` and returns the disagreements (the squared norm of the subgradient)."""
    N = parts.arc.shape[0]
    cand = parts.cand
    cand_off = parts.cand_off
    cand_len = parts.cand_len
    take = z.take
    count = z.count
    nd = 0
    for h in range(N):
        for d in range(2):
            c0 = cand_off[h, d]
            for i in range(cand_len[h, d]):
                m = cand[c0 + i]
                if take[h, d, i] == 1:
                    count[h, m] += 1.0
                    if yh[m] != h:
                        nd += 1
                elif yh[m] == h:
                    nd += 1
    return nd


@nb.njit(cache=True, inline="always")
def _z_update(parts, yh, z, w, step):
    """``u(h, m) += step * (z(h, m) - y(h, m))`` (and the tree's weights with it); marks the
    changed sides for lazy decoding."""
    N = parts.arc.shape[0]
    cand = parts.cand
    cand_off = parts.cand_off
    cand_len = parts.cand_len
    take = z.take
    u = z.u
    dirty = z.dirty
    for h in range(N):
        for d in range(2):
            c0 = cand_off[h, d]
            for i in range(cand_len[h, d]):
                m = cand[c0 + i]
                zz = take[h, d, i]
                yy = 1 if yh[m] == h else 0
                if zz != yy:
                    du = step * (zz - yy)
                    u[h, m] += du
                    w[h, m] += du
                    dirty[h, d] = True


@nb.njit(cache=True, inline="always")
def _zg_agree(parts, yh, z):
    """Agreement of the automata's grandparents with the tree (Fig. 2): ``z'(g, h) = y(g, h)``;
    counts ``z'`` and returns the disagreements (each counts twice in the subgradient's norm:
    ``z'`` and ``y`` each have a 1 where the other has none)."""
    N = parts.arc.shape[0]
    gp = parts.gp
    gp_off = parts.gp_off
    slot = z.slot
    gcount = z.gcount
    nd = 0
    for h in range(1, N):
        gz = gp[gp_off[h] + slot[h]]
        gcount[gz, h] += 1.0
        if gz != yh[h]:
            nd += 2
    return nd


@nb.njit(cache=True, inline="always")
def _move_arc(x, w, hc, hy, m, step):
    """A copy took the arc ``hc -> m`` where the tree took ``hy -> m``: ``x(hc, m) += step``,
    ``x(hy, m) -= step`` (the subgradient ``copy - y`` of the multipliers ``x``), and the
    tree's weights ``w`` with them."""
    x[hc, m] += step
    w[hc, m] += step
    x[hy, m] -= step
    w[hy, m] -= step


@nb.njit(cache=True, inline="always")
def _zg_update(parts, yh, z, w, step):
    """``v(g, h) += step * (z'(g, h) - y(g, h))`` (and the tree's weights with it)."""
    N = parts.arc.shape[0]
    gp = parts.gp
    gp_off = parts.gp_off
    slot = z.slot
    v = z.v
    dirty = z.dirty
    for m in range(1, N):
        gz = gp[gp_off[m] + slot[m]]
        gy = yh[m]
        if gz != gy:
            _move_arc(v, w, gz, gy, m, step)
            dirty[m, 2] = True


@nb.njit(cache=True, inline="always")
def _z_keep(z):
    """The automata's multipliers at a new lowest dual value."""
    put2(z.ubest, z.u)
    put2(z.vbest, z.v)


@nb.njit(cache=True, inline="always")
def _c_decode(parts, c):
    """c-step: the head-bigram chain under ``- r``, when some ``r`` changed; returns its
    value."""
    if c.dirty[0]:
        c.value[0] = chain_viterbi(parts.arc, parts.hd, parts.hd_off, parts.hd_len, parts.hb,
                                   parts.hb_off, c.r, c.delta, c.back, c.heads)
        c.dirty[0] = False
    return c.value[0]


@nb.njit(cache=True, inline="always")
def _c_score(parts, yh, c):
    """The head-bigram part of the full-model score of the tree ``yh``."""
    return tree_bigram_score(yh, parts.hb, parts.hb_off, parts.hd_len, c.hpos)


@nb.njit(cache=True, inline="always")
def _c_agree(yh, c):
    """Agreement of the chain with the tree, ``c(h, m) = y(h, m)``; counts ``c`` and returns
    the disagreements (twice each, as for ``z'``)."""
    heads = c.heads
    count = c.count
    nd = 0
    for m in range(1, yh.shape[0]):
        count[heads[m], m] += 1.0
        if heads[m] != yh[m]:
            nd += 2
    return nd


@nb.njit(cache=True, inline="always")
def _c_update(yh, c, w, step):
    """``r(h, m) += step * (c(h, m) - y(h, m))`` (and the tree's weights with it)."""
    heads = c.heads
    r = c.r
    changed = False
    for m in range(1, yh.shape[0]):
        hc = heads[m]
        hy = yh[m]
        if hc != hy:
            _move_arc(r, w, hc, hy, m, step)
            changed = True
    if changed:
        c.dirty[0] = True


@nb.njit(cache=True, inline="always")
def _c_keep(c):
    """The chain's multipliers at a new lowest dual value."""
    put2(c.rbest, c.r)


# -- one iteration's steps -------------------------------------------------------------


@nb.njit(cache=True, inline="always")
def _new_lowest(L, progress, steps):
    """Is ``L`` a new lowest dual value?  Kept if so; the iterations without one are counted
    (Polyak's stalls).  The caller keeps its slaves' multipliers with it."""
    if L < progress.lowest[0]:
        progress.lowest[0] = L
        steps.stalls[0] = 0
        return True
    steps.stalls[0] += 1
    return False


@nb.njit(cache=True, inline="always")
def _keep_lowest(L, progress, steps, z, c):
    """A new lowest dual value ``L``: keep it with every slave's multipliers (the warm start
    of branch and bound); returns whether it was one."""
    if _new_lowest(L, progress, steps):
        _z_keep(z)
        _c_keep(c)
        return True
    return False


@nb.njit(cache=True, inline="always")
def _tree_step(settings, tree, progress):
    """The y-step (:func:`_y_decode`): ``(status, value)``; where there is no tree under the
    kept arcs the run is over (``progress.done``)."""
    status, L = _y_decode(settings, tree)
    if status != OK:
        progress.done[0] = 1
    return status, L


@nb.njit(cache=True, inline="always")
def _arcs_agree(parts, yh, tree, z):
    """Agreement of the tree ``yh`` with the head automata's copies of its arcs and, in a
    grandparent model, of its grandparent arcs: the squared norm of those slaves'
    subgradient (:func:`_z_agree`, :func:`_zg_agree`; the tree's counts first)."""
    _y_count(tree)
    nd = _z_agree(parts, yh, z)
    if parts.grandparents:
        nd += _zg_agree(parts, yh, z)
    return nd


@nb.njit(cache=True, inline="always")
def _arcs_update(parts, yh, z, w, step):
    """The head automata's multipliers ``u`` (and ``v``) moved by ``step`` towards the tree
    ``yh``, and the tree's weights ``w`` with them (:func:`_z_update`, :func:`_zg_update`)."""
    _z_update(parts, yh, z, w, step)
    if parts.grandparents:
        _zg_update(parts, yh, z, w, step)


@nb.njit(cache=True, inline="always")
def _keep_best(f, yh, k, progress, trace):
    """The best tree so far (and its history), with its score ``f``."""
    if f > progress.best[0] or progress.changes[0] == 0:  # (the first tree counts: NaN-safe)
        progress.best[0] = f
        put(trace.best_heads, 0, yh, yh.shape[0])
        c = progress.changes[0]
        ncap = trace.change_iter.shape[0]
        if c >= ncap:
            c = ncap - 1  # history full: the last slot keeps the latest best tree
        trace.change_iter[c] = k + 1
        put(trace.change_heads[c], 0, yh, yh.shape[0])
        progress.changes[0] = c + 1


@nb.njit(cache=True, inline="always")
def _step_size(settings, steps, k, L, f, inc, nd):
    """The step of iteration ``k``: Appendix A.1's ``delta / (1 + eta_k)``, or Polyak's
    ``lam (L(u) - f*) / |g|^2`` towards ``f* = inc`` with ``lam`` halved after ``patience``
    iterations without a new lowest dual value.  Returns ``(stalled, step)``: ``stalled``
    when ``lam`` was halved more than ``max_halvings`` times (the caller branches)."""
    if settings.rule == RULE_KOO:  # Appendix A.1
        if k == 0:
            steps.delta[0] = L - f
        elif L > steps.prev_dual[0]:
            steps.eta[0] += 1
        steps.prev_dual[0] = L
        return False, steps.delta[0] / (1.0 + steps.eta[0])
    if steps.stalls[0] >= settings.patience:
        steps.lam[0] *= 0.5
        steps.halvings[0] += 1
        steps.stalls[0] = 0
        if steps.halvings[0] > settings.max_halvings:
            return True, 0.0
    return False, steps.lam[0] * (L - inc) / nd


@nb.njit(cache=True, inline="always")
def _settle(settings, state, yh, k, L, f, nd):
    """The end of an iteration, after the agreement check (every loop over these slaves:
    :func:`_dd_run`, with or without the tag slave): ``(True, 0)`` where the run
    stops -- a certificate (no disagreement, ``nd = 0``: Theorem 1; the best tree is ``yh``
    of value ``f``), a zero duality gap against the best tree known or the ``incumbent``
    (then the node is pruned), or a step rule that has stalled -- else ``(False, step)``,
    the step of the multipliers' update."""
    progress = state.progress
    incumbent = settings.incumbent
    if nd == 0:  # y = z (= z' = c): a certificate (Theorem 1)
        put(state.trace.best_heads, 0, yh, yh.shape[0])
        progress.best[0] = f
        progress.certified[0] = 1
        progress.done[0] = 1
        return True, 0.0
    inc = progress.best[0]  # the best score known: this run's or the incumbent
    if incumbent > inc:
        inc = incumbent
    if _gap_closed(L, inc, state.scale, settings.tol):
        progress.certified[0] = 1  # zero duality gap: the best known tree is optimal
        if incumbent > progress.best[0]:
            progress.pruned[0] = 1
        progress.done[0] = 1
        return True, 0.0
    stalled, step = _step_size(settings, state.steps, k, L, f, inc, nd)
    if stalled:
        progress.done[0] = 1
        return True, 0.0
    return False, step


# nogil: the parse's helper thread runs meanwhile (Engine.iter_parsed)
@nb.njit(cache=True, nogil=True)
def _dd_run(parts, settings, state, k_end, tags):
    """Run the dual decomposition loop (Fig. 1 / Fig. 2) from iteration ``progress.k`` until
    agreement, a zero gap, ``max_iter`` or ``k_end`` iterations.  Resumable: all state lives
    in the :data:`DualState` made by :func:`_dd_init`.

    One iteration: the slaves decode (y-step, z-step, the chain), their values sum to
    ``L(u)``; the lowest dual value and the best tree are kept; agreement; the certificates
    (no disagreement, Theorem 1, or a zero gap); the step size; the update of every slave's
    multipliers.  The run stops early when ``L(u) <= max(f(best y), incumbent) + eps``: the
    upper bound ``L(u)`` (Eq. 9) then proves that no tree beats the best one known, which is
    this run's own best tree (a certificate) or the ``incumbent`` given from outside (branch
    and bound: the node is pruned, ``progress.pruned[0] = 1``).

    ``tags`` is None, or joint tagging's tag slave and its table, ``(TagSlave, TagArrays)``
    (:mod:`depparse.decode.tag_slave`, :mod:`depparse.decode.joint`: Rush et al. 2010): the
    automata then also choose tags, the tag chain is one more slave, and the tags agree with
    it.  Numba compiles the loop once per kind of ``tags``; with None the tag steps are pruned
    before typing (not compiled).

    Returns a status: ``OK`` (stopped, see ``progress.done``) or ``NO_TREE`` (no tree, or an
    automaton with no feasible choice, under the kept arcs: ``L = -inf``).
    """
    tree = state.tree
    z = state.automata
    chain = state.chain
    steps = state.steps
    progress = state.progress
    trace = state.trace
    yh = tree.heads
    w = tree.w
    bigrams = parts.bigrams
    k = progress.k[0]
    while k < settings.max_iter and k < k_end:
        progress.k[0] = k + 1
        # the slaves decode; L(u) is the sum of their values
        status, L = _tree_step(settings, tree, progress)
        if status != OK:
            return NO_TREE
        if tags is None:
            trace.recomputed[k] = _z_decode(parts, settings, z)
        else:
            trace.recomputed[k] = _automata_decode(
                parts, tags[1], 1.0 - settings.alpha, settings.single_root, z,
                tags[0]) / parts.arc.shape[0]
        L = _z_value(L, z)
        if bigrams:
            L += _c_decode(parts, chain)
        if tags is not None:
            L += _chain_value(tags[1], tags[0])
        trace.dual[k] = L
        if L == NEG_INF:  # an automaton (or the tag chain) has no feasible choice: no tree
            progress.done[0] = 1
            return NO_TREE
        if _keep_lowest(L, progress, steps, z, chain):
            if tags is not None:
                _tag_keep(tags[0])
        f = _primal_score(parts, yh, z.gpos)  # f(y)
        if bigrams:
            f += _c_score(parts, yh, chain)
        if tags is not None:  # F(y, tau): the chain's and the tag-dependent arcs' terms
            f += chain_score(tags[1], tags[0].tau)
            f += _tag_arc_score(tags[1], yh, tags[0].tau)
        trace.primal[k] = f
        if tags is not None:
            if f > progress.best[0] or progress.changes[0] == 0:  # the best analysis' tags
                put(tags[0].best_tags, 0, tags[0].tau, tags[0].tau.shape[0])
        _keep_best(f, yh, k, progress, trace)
        # agreement: the subgradient's squared norm
        nd = _arcs_agree(parts, yh, tree, z)
        if bigrams:
            nd += _c_agree(yh, chain)
        if tags is not None:
            nd += _tag_agree(parts, tags[1], z, tags[0])
            if nd == 0:  # every copy agrees: a certificate, with the chain's tags
                put(tags[0].best_tags, 0, tags[0].tau, tags[0].tau.shape[0])
        stop, step = _settle(settings, state, yh, k, L, f, nd)
        if stop:
            return OK
        # the update of every slave's multipliers (and of the tree's weights)
        _arcs_update(parts, yh, z, w, step)
        if bigrams:
            _c_update(yh, chain, w, step)
        if tags is not None:
            _tag_update(tags[1], tags[0], step)
        k += 1
    if k >= settings.max_iter:
        progress.done[0] = 1
    return OK


def run_anytime(kernel, parts, settings, state, *more, max_iter, time_limit=None,
                deadline=None, chunk=25):
    """Run a resumable decoding kernel to its end, or to a deadline (anytime decoding).

    ``kernel(parts, settings, state, k_end, *more)`` runs iterations up to ``k_end`` and
    returns a status; ``state.progress.done[0]`` says when it has stopped for good (:func:`_dd_run`,
    :func:`~depparse.decode.ad3._ad3_run`).  Without a deadline it is called once; with one
    (``deadline``, a ``time.perf_counter()`` value, or ``time_limit`` seconds from now) it
    runs ``chunk`` iterations per call and Python reads the clock between calls.

    Raises
    ------
    NoSpanningTreeError
        When the kernel reports ``NO_TREE``.
    """
    if deadline is None and time_limit is not None:
        deadline = time.perf_counter() + float(time_limit)
    k_end = int(max_iter) if deadline is None else 0
    while True:
        if deadline is not None:
            k_end = min(int(max_iter), k_end + chunk)
        if kernel(parts, settings, state, k_end, *more) == NO_TREE:
            raise NoSpanningTreeError("no spanning tree rooted at 0 exists under the kept arcs")
        if state.progress.done[0] or (deadline is not None and time.perf_counter() >= deadline):
            return


def dual_decompose(parts: PartTable, *, alpha=0.001, max_iter=5000, single_root=False,
                   projective=False, tol=GAP_TOL, time_limit=None, chunk=25, u0=None, v0=None,
                   incumbent=-np.inf, step_rule="koo", lam0=1.0, patience=10,
                   max_halvings=1 << 30, history=True, deadline=None, r0=None) -> DualResult:
    """Decode a sentence with dual decomposition (Koo et al. 2010, Fig. 1 or Fig. 2).

    Parameters
    ----------
    parts : PartTable
        Compiled part scores (:mod:`depparse.decode.part_table`).  A sibling-only table gives
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
    table = parts.part_arrays()
    N = table.arc.shape[0]
    u0 = np.zeros((N, N)) if u0 is None else np.ascontiguousarray(u0, dtype=np.float64)
    v0 = np.zeros((N, N)) if v0 is None else np.ascontiguousarray(v0, dtype=np.float64)
    r0 = np.zeros((N, N)) if r0 is None else np.ascontiguousarray(r0, dtype=np.float64)
    settings = DualSettings(float(alpha), int(max_iter), bool(single_root), bool(projective),
                            float(tol), STEP_RULES[step_rule], int(patience), int(max_halvings),
                            float(incumbent), float(lam0), bool(history))
    state = _dd_init(table, settings, u0, v0, r0)
    run_anytime(_dd_run, table, settings, state, None, max_iter=max_iter,
                time_limit=time_limit, deadline=deadline, chunk=chunk)
    progress, trace = state.progress, state.trace
    iters = int(progress.k[0])
    nchg = int(progress.changes[0])
    changes = ([(int(trace.change_iter[c]), trace.change_heads[c].copy()) for c in range(nchg)]
               if history else [])
    z = state.automata
    counts = np.empty((4, N, N))
    counts[COUNT_Y], counts[COUNT_Z] = state.tree.count, z.count
    counts[COUNT_ZG], counts[COUNT_C] = z.gcount, state.chain.count
    return DualResult(trace.best_heads.copy(),
                      bool(progress.certified[0]) and not progress.pruned[0], iters,
                      trace.dual[:iters].copy(), trace.primal[:iters].copy(),
                      trace.recomputed[:iters].copy(), float(progress.best[0]), changes,
                      not bool(progress.done[0]), bound=float(progress.lowest[0]),
                      pruned=bool(progress.pruned[0]), u=z.ubest, v=z.vbest, counts=counts,
                      r=state.chain.rbest)


def dual_decompose_dense(arc, sibling, grand=None, grandsib=None, bigram=None,
                         **kwargs) -> DualResult:
    """:func:`dual_decompose` on dense part tensors (encoding in :mod:`depparse.decode.part_table`;
    ``bigram``: :mod:`depparse.decode.head_bigrams`).

    Meant for small sentences and tests; production decoding builds a pruned
    :class:`PartTable` directly and never needs the ``O(n^4)`` tensors.
    """
    return dual_decompose(compile_dense(arc, sibling, grand, grandsib, bigram), **kwargs)
