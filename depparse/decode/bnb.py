"""Exact decoding: dual decomposition, finished by branch and bound on the dual bound.

Koo et al. (2010, Sec. 7.5) stop dual decomposition after ``K`` iterations and return the best
primal tree, uncertified (about 2% of English sentences).  Here a run that has not certified
after a budget of iterations is finished exactly by branch and bound, so that every returned
tree is *proved* optimal for the full model (over the candidate arcs), unless a time or node
limit stops the search first.

The search (Land and Doig 1960; Lagrangian bounds as in Held and Karp 1971 and Fisher 1981):

* a *node* is the sentence with some arcs forbidden (``arc[h, m] = -inf``; the head automata
  and the spanning-tree solver then never use them, see :mod:`depparse.decode.dual`);
* its *upper bound* is the lowest dual value ``L(u)`` seen while running dual decomposition
  on it: by weak duality (Koo et al. Eq. 9) no tree of the node scores more;
* the *incumbent* (lower bound) is the best full-model score of any tree ``y^(k)`` met so far
  in any node: every one of them is a tree of the unrestricted sentence;
* a node is closed when its bound falls to the incumbent (within the rounding tolerance of
  the gap certificate), when it certifies (``y = z``: its own optimum is known), or when it has
  no tree; otherwise it is split on an arc ``h -> m`` where the two sides of the decomposition
  disagree most often over its iterations (``y(h, m)``, ``z(h, m)`` and ``z'(h, m)`` of
  Fig. 2): one child keeps ``h`` as the only head of ``m``, the other forbids ``h -> m``.  The
  two children partition the node's trees, and each forbids at least one more arc, so the
  search is finite;
* children start from the multipliers of their parent's best bound (a warm start: the
  parent's ``L(u)`` already bounds the child) and take Polyak steps towards the incumbent,
  ``lam * (L(u) - f*) / |g|^2``, ``lam`` halved when the bound stalls (Held and Karp 1971);
  a node that has stalled ``max_halvings`` times is split;
* nodes are expanded best-bound first.  When the queue is empty, the incumbent is optimal:
  its score equals the smallest upper bound over all leaves.

One driver, :func:`best_first`, runs every such search: it knows a node only through the
problem it is given (what a node allows, how it splits, how a child runs), the tree's here
(:class:`_TreeSearch`) and joint tagging's (:func:`~depparse.decode.joint.decode_joint`, which
also splits on tags).

The first run (:func:`decode_exact`) takes Polyak steps too, towards its own best tree
(``lam0 = 1.5``, halved after 60 iterations without a new lowest dual value), for at most
``budget`` iterations.  Tuned on en_ewt dev with the shipped model (benchmarks/bench_exact.py
``budget`` and ``solvers``): the 2001 sentences are all proved optimal in 1.75 s of CPU (93 of
them by branch and bound, 282 nodes), against 9.81 s for Koo et al.'s steps (Appendix A.1)
capped at K = 5000, which leave 35 of them unproved.

A parser gives a long sentence more than ``budget`` iterations
(:meth:`~depparse.config.DecodeConfig.first_budget`: ``budget_per_word`` per word where that
is more): a first run stopped far from the dual optimum leaves a loose bound, and branch and
bound then splits many nodes to close it (benchmarks/experiments/README.md, "The first run's
budget grows with the sentence").

References
----------
A. H. Land, A. G. Doig. An automatic method of solving discrete programming problems.
Econometrica 28, 1960.
M. Held, R. M. Karp. The traveling-salesman problem and minimum spanning trees: part II.
Mathematical Programming 1, 1971.
M. L. Fisher. The Lagrangian relaxation method for solving integer programming problems.
Management Science 27, 1981.
"""

from __future__ import annotations

import dataclasses
import heapq
import time
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .ad3 import ad3_decompose
from .dual import COUNT_C, COUNT_Y, COUNT_Z, COUNT_ZG, GAP_TOL, DualResult, dual_decompose
from .mst import NoSpanningTreeError
from .part_table import PartTable

__all__ = ["BUDGET", "BranchResult", "ExactResult", "PROOFS", "ProvedResult",
           "branch_and_bound", "decode_exact"]

NEG_INF = -np.inf
#: Default iterations of the first dual decomposition run before branch and bound (tuned on
#: en_ewt dev with the shipped model: benchmarks/bench_exact.py).
BUDGET = 150

# what proved a tree optimal ("proof" of ExactResult); None: not proved
PROOF_DUAL = "dual"
PROOF_BNB = "branch-and-bound"
PROOF_EXACT = "exact"  # an arc-factored model: Chu-Liu-Edmonds and Eisner are exact
PROOFS = (PROOF_DUAL, PROOF_BNB, PROOF_EXACT)


@dataclass
class ProvedResult:
    """The record of an exact decoding (a tree proved optimal by a first dual decomposition
    run, or by branch and bound after it): the fields of :class:`ExactResult` but the first
    run's traces, shared with :class:`~depparse.decode.joint.JointExact`, and the two steps
    that fill them (:meth:`of_first_run`, :meth:`add_search`)."""

    heads: np.ndarray
    score: float
    optimal: bool
    proof: str | None
    certificate: bool
    iterations: int
    root_iterations: int
    nodes: int
    bound: float
    timed_out: bool = False
    seconds_dual: float = 0.0
    seconds_bnb: float = 0.0

    @classmethod
    def of_first_run(cls, r, seconds, **more):
        """The record after the first run ``r`` (a :class:`~depparse.decode.dual.DualResult`
        or what has its ``heads``, ``score``, ``certificate``, ``iterations``, ``bound`` and
        ``timed_out``) of ``seconds``: its best tree, proved (``"dual"``) when it certified,
        one node, its lowest dual value as the bound (its score when certified); ``more``: the
        fields of the subclass."""
        return cls(r.heads, r.score, r.certificate, PROOF_DUAL if r.certificate else None,
                   r.certificate, r.iterations, r.iterations, 1,
                   r.score if r.certificate else r.bound, r.timed_out, seconds, **more)

    def add_search(self, nodes, iterations, optimal, bound, timed_out, seconds):
        """Branch and bound's outcome (the caller sets the best analysis it found): proved
        (``"branch-and-bound"``) when it closed every node, its ``nodes`` and ``iterations``
        added to the first run's, its ``bound``, ``timed_out`` and ``seconds``."""
        self.optimal = optimal
        self.proof = PROOF_BNB if optimal else None
        self.nodes += nodes
        self.iterations += iterations
        self.bound = bound
        self.timed_out = timed_out
        self.seconds_bnb = seconds


@dataclass
class ExactResult(ProvedResult):
    """Outcome of exact decoding for one sentence.

    Attributes
    ----------
    heads : (n+1,) int64
        The returned tree.
    score : float
        Its full-model score.
    optimal : bool
        True when the tree is proved optimal (``proof`` says how).
    proof : str or None
        ``"dual"``: dual decomposition certified it (agreement or zero gap, Koo et al.
        Theorem 1); ``"branch-and-bound"``: the search below closed every node; ``None``: not
        proved (time or node limit).
    certificate : bool
        The plain dual decomposition certificate of the first run (``proof == "dual"``).
    iterations : int
        Dual decomposition iterations, all nodes together.
    root_iterations : int
        Iterations of the first run (the traces below are its).
    nodes : int
        Nodes explored: 1 for the first run, plus every child evaluated by branch and bound.
    bound : float
        The best upper bound proved on the optimum (``score`` when ``optimal``).
    timed_out : bool
        True when the time limit stopped decoding.
    seconds_dual, seconds_bnb : float
        Time spent in the first run and in branch and bound.
    dual, primal, recomputed, best_changes
        Traces of the first run (:class:`~depparse.decode.dual.DualResult`).
    """

    dual: np.ndarray | None = None
    primal: np.ndarray | None = None
    recomputed: np.ndarray | None = None
    best_changes: list = field(default_factory=list)


@dataclass
class BranchResult:
    """Outcome of :func:`branch_and_bound`.

    Attributes
    ----------
    heads : (n+1,) int64
        The best tree found (the incumbent).
    score : float
        Its full-model score.
    optimal : bool
        True when every node was closed: ``heads`` is proved optimal.
    nodes : int
        Children evaluated.
    iterations : int
        Dual decomposition iterations over those children.
    bound : float
        The best upper bound proved on the optimum (the largest open bound when stopped
        early; ``score`` when ``optimal``).
    timed_out : bool
        True when the deadline stopped the search with nodes still open.
    """

    heads: np.ndarray
    score: float
    optimal: bool
    nodes: int
    iterations: int
    bound: float
    timed_out: bool


class WarmStart(NamedTuple):
    """What a node hands to its children: the multipliers of its lowest dual value (a warm
    start) and how often its slaves took each arc (where to branch)."""

    u: np.ndarray
    v: np.ndarray
    r: np.ndarray | None  # the head-bigram chain's (None without one)
    counts: np.ndarray  # (rows COUNT_Y, COUNT_Z, COUNT_ZG, COUNT_C of depparse.decode.dual)
    counted: int  # the number the counts are sums over

    @classmethod
    def of(cls, r: DualResult) -> WarmStart:
        return cls(r.u, r.v, r.r, r.counts, r.frequency_base)


class _Open(NamedTuple):
    """An open node of the search, ordered best bound first (``key = -bound``; ``tick``
    breaks ties by age)."""

    key: float
    tick: int
    space: object  # what the node allows (the tree search: its arc scores, -inf forbidden)
    start: object  # the warm start its children get (the tree search: a WarmStart)


class Search(NamedTuple):
    """What :func:`best_first` did: the children evaluated (``nodes``), their dual
    decomposition ``iterations``, whether every node was closed (``optimal``), the best upper
    ``bound`` proved, and whether the deadline stopped it with nodes still open."""

    nodes: int
    iterations: int
    optimal: bool
    bound: float
    timed_out: bool


def best_first(problem, first, space, start, *, tol=GAP_TOL, max_nodes=None,
               deadline=None):
    """Best-first branch and bound on the dual bound (module docstring): the one driver of
    the tree's search (:func:`branch_and_bound`) and joint tagging's
    (:func:`~depparse.decode.joint.decode_joint`).

    ``first`` is the root run (its ``score`` is the first incumbent, its ``bound`` the root's
    bound), ``space`` what the root allows and ``start`` its warm start.  ``problem`` says
    what a node is:

    * ``problem.scale``: the largest magnitude of a score (the gap tolerance is relative to it);
    * ``problem.children(space, start)``: the spaces of the node's children (those that can
      still hold an analysis), or None when a single analysis is left;
    * ``problem.leaf(space)``: that analysis scored (a run of one iteration), or None when it
      is no analysis (a cycle, several root children);
    * ``problem.run(space, start, incumbent)``: a child's run from its parent's warm start,
      pruned at ``incumbent`` (raises :class:`~depparse.decode.mst.NoSpanningTreeError`
      when the child has no analysis);
    * ``problem.warm(run)``: the warm start a run hands to its children.

    Every run has ``score``, ``bound``, ``certificate``, ``pruned``, ``timed_out`` and
    ``iterations``.  Returns ``(best, Search)``: the run of the best analysis found (``first``
    when none beat it) and the search's record.
    """
    scale = problem.scale
    best = first
    queue = [_Open(-float(first.bound), 0, space, start)]
    tick, nodes, iterations, timed_out = 1, 0, 0, False
    while True:
        node, timed_out = _next_open(queue, best.score, scale, tol, nodes, max_nodes, deadline,
                                     timed_out)
        if node is None:
            break
        children = problem.children(node.space, node.start)
        if children is None:  # a single analysis left: score it
            r = problem.leaf(node.space)
            if r is not None:
                nodes += 1
                iterations += r.iterations
                if r.score > best.score:
                    best = r
            continue
        for child in children:
            if _out_of(nodes, max_nodes, deadline):
                # out of nodes or time: the child stays open, under its parent's bound
                heapq.heappush(queue, _Open(node.key, tick, child, node.start))
                tick += 1
                continue
            try:
                r = problem.run(child, node.start, best.score)
            except NoSpanningTreeError:
                nodes += 1
                continue  # no analysis in this child
            nodes += 1
            iterations += r.iterations
            if r.score > best.score:
                best = r
            cb = _child_bound(r, -node.key, best.score, scale, tol)
            if cb is None:
                continue
            heapq.heappush(queue, _Open(-cb, tick, child, problem.warm(r)))
            tick += 1
            if r.timed_out:
                timed_out = True
    optimal, bound, timed_out = _search_end(queue, best.score, scale, tol, timed_out)
    return best, Search(nodes, iterations, optimal, bound, timed_out)


def has_heads(arc) -> bool:
    """Does every word keep an allowed head under the arc scores ``arc``?"""
    return bool(np.isfinite(arc[:, 1:]).any(axis=0).all())


def _scale(parts: PartTable) -> float:
    """Largest magnitude of a finite part score (the gap tolerance is relative to it)."""
    big = 0.0
    for a in (parts.arc, parts.tab) + ((parts.hb,) if parts.bigrams else ()):
        f = a[np.isfinite(a)]
        if f.size:
            big = max(big, float(np.abs(f).max()))
    return big


def shrink_factor(big: float) -> float:
    """A power of two that brings the largest score magnitude ``big`` under 1e200 (1.0 when
    it is under already): scaled by it (exactly), no sum of parts, dual value or Polyak step
    overflows."""
    factor = 1.0
    while big * factor > 1e200:
        factor *= 0.5 ** 64
    return factor


def _closed(bound, incumbent, scale, tol):
    """Does ``bound`` prove that nothing beats ``incumbent``?  (The test of the gap
    certificate in :mod:`depparse.decode.dual`.)"""
    if bound == NEG_INF:
        return True
    return bool(bound < np.inf and bound - incumbent <= tol * max(scale, abs(bound)))


def _branch_arc(arc, start: WarmStart, use_g, use_hb=False):
    """The arc ``(h, m)`` to split on, or None when every word has a single allowed head.

    Only words with at least two allowed heads are split.  Among their allowed arcs, the one
    where ``y``, ``z``, ``z'`` and the head-bigram chain's ``c`` (frequencies over the node's
    iterations) differ most; ties go to the most fractional ``y``, then to the lowest index.
    """
    allowed = np.isfinite(arc)
    allowed[:, 0] = False
    np.fill_diagonal(allowed, False)
    free = allowed.sum(axis=0) >= 2
    if not free.any():
        return None
    counts = start.counts
    it = max(int(start.counted), 1)
    y = counts[COUNT_Y] / it
    z = counts[COUNT_Z] / it
    dis = np.abs(y - z)
    if use_g:
        g = counts[COUNT_ZG] / it
        dis = np.maximum(dis, np.maximum(np.abs(y - g), np.abs(z - g)))
    if use_hb:
        c = counts[COUNT_C] / it
        dis = np.maximum(dis, np.maximum(np.abs(y - c), np.abs(z - c)))
    key = dis + 1e-6 * np.minimum(y, 1.0 - y)
    key = np.where(allowed & free[None, :], key, -1.0)
    h, m = np.unravel_index(int(np.argmax(key)), key.shape)
    return int(h), int(m)


def _head_split(arc, start: WarmStart, use_g, h, m, use_hb=False):
    """Half of the allowed heads of word ``m``, ``h`` among them: the heads by decreasing
    frequency in ``y``, ``z'`` (and ``z``) until they hold half of it, at least one and not all
    (a GUB split, Beale and Tomlin 1970: a word's candidate heads are halved at each level
    instead of being forbidden one at a time)."""
    heads = np.flatnonzero(np.isfinite(arc[:, m]))
    heads = heads[heads != m]
    counts = start.counts
    it = max(int(start.counted), 1)
    f = counts[COUNT_Y, heads, m] + counts[COUNT_Z, heads, m]
    if use_g:
        f = f + counts[COUNT_ZG, heads, m]
    if use_hb:
        f = f + counts[COUNT_C, heads, m]
    f = f / it
    order = heads[np.argsort(-f, kind="stable")]
    fs = np.sort(f)[::-1]
    total = float(fs.sum())
    S = [h]
    acc = float(f[heads == h][0])
    for g, fg in zip(order, fs, strict=True):
        if len(S) >= heads.size - 1 or acc >= total / 2:
            break
        if g != h:
            S.append(int(g))
            acc += float(fg)
    return np.array(S, dtype=np.int64)


def _only_tree(arc):
    """The tree of a node where every word has exactly one allowed head (or None)."""
    N = arc.shape[0]
    heads = np.full(N, -1, dtype=np.int64)
    for m in range(1, N):
        hs = np.flatnonzero(np.isfinite(arc[:, m]))
        hs = hs[hs != m]
        if hs.size != 1:
            return None
        heads[m] = hs[0]
    for m in range(1, N):  # acyclic: every word reaches the root
        v, steps = m, 0
        while v != 0 and steps <= N:
            v, steps = heads[v], steps + 1
        if v != 0:
            return None
    return heads


def branch_and_bound(parts: PartTable, first: DualResult, *, alpha=0.001, single_root=False,
                     projective=False, tol=GAP_TOL, node_iter=60, lam0=2.0, patience=20,
                     max_halvings=4, max_nodes=None, deadline=None,
                     split="arc") -> BranchResult:
    """Finish a dual decomposition run that has not certified (module docstring).

    Parameters
    ----------
    parts : PartTable
    first : DualResult
        The first run: its best tree and score (the first incumbent), its lowest dual value
        ``bound``, the multipliers that reached it (``u``, ``v`` and the head-bigram chain's
        ``r``: the children's warm start) and its ``counts`` of ``y``, ``z``, ``z'`` and ``c``
        (where to branch; :attr:`~depparse.decode.dual.DualResult.frequency_base` says what
        they are sums over).
    node_iter : int
        Iteration cap of each child.
    lam0, patience, max_halvings
        Polyak step settings of the children (:func:`~depparse.decode.dual.dual_decompose`).
    max_nodes : int, optional
        Stop (unproved) after evaluating this many children.
    split : {"arc", "heads"}
        ``"arc"``: the children are "``h`` is the head of ``m``" and "``h -> m`` is forbidden";
        ``"heads"``: ``m``'s allowed heads are split in two halves (:func:`_head_split`).  On
        en_ewt dev both prove the 2001 sentences in the same time; on long joined sentences
        neither wins everywhere (100 words: 25 against 21 nodes, 150 words: 121 against 171).
    deadline : float, optional
        ``time.perf_counter()`` value at which to stop (unproved).

    Returns
    -------
    BranchResult
    """
    problem = _TreeSearch(parts, split, dict(
        alpha=alpha, single_root=single_root, projective=projective, tol=tol, history=False),
        dict(step_rule="polyak", max_iter=node_iter, lam0=lam0, patience=patience,
             max_halvings=max_halvings, deadline=deadline, chunk=50))
    best, s = best_first(problem, first, parts.arc, WarmStart.of(first), tol=tol,
                         max_nodes=max_nodes, deadline=deadline)
    return BranchResult(np.asarray(best.heads).copy(), float(best.score), s.optimal, s.nodes,
                        s.iterations, s.bound, s.timed_out)


class _TreeSearch:
    """The tree's search for :func:`best_first`: a node's space is its arc scores (``-inf``:
    forbidden), split on an arc (or on a word's heads, ``split="heads"``), its runs
    :func:`~depparse.decode.dual.dual_decompose` from the parent's multipliers."""

    def __init__(self, parts: PartTable, split, kw, child_kw):
        self.parts, self.split, self.kw, self.child_kw = parts, split, kw, child_kw
        self.scale = _scale(parts)

    def children(self, arc, start):
        parts = self.parts
        hm = _branch_arc(arc, start, parts.grandparents, parts.bigrams)
        if hm is None:
            return None
        h, m = hm
        S = (_head_split(arc, start, parts.grandparents, h, m, parts.bigrams)
             if self.split == "heads" else np.array([h]))
        fix = arc.copy()  # child 1: the head of m is in S
        out = np.ones(arc.shape[0], dtype=bool)
        out[S] = False
        fix[out, m] = NEG_INF
        forbid = arc.copy()  # child 2: it is not
        forbid[S, m] = NEG_INF
        return [c for c in (fix, forbid) if has_heads(c)]

    def leaf(self, arc):
        if _only_tree(arc) is None:
            return None
        try:  # (one dual decomposition step finds and scores it)
            return dual_decompose(dataclasses.replace(self.parts, arc=arc), max_iter=1,
                                  **self.kw)
        except NoSpanningTreeError:  # several root children, or not projective
            return None

    def run(self, arc, start, incumbent):
        return dual_decompose(dataclasses.replace(self.parts, arc=arc), u0=start.u,
                              v0=start.v, r0=start.r, incumbent=incumbent, **self.kw,
                              **self.child_kw)

    @staticmethod
    def warm(r):
        return WarmStart.of(r)


def _out_of(nodes, max_nodes, deadline):
    """Has the search used its nodes (``max_nodes``) or its time (``deadline``, a
    ``time.perf_counter()`` value)?"""
    return (max_nodes is not None and nodes >= max_nodes) or (
        deadline is not None and time.perf_counter() >= deadline)


def _next_open(queue, best, scale, tol, nodes, max_nodes, deadline, timed_out):
    """``(node, timed_out)``: the open node of the best bound that the incumbent's score
    ``best`` does not close (popped from the heap ``queue``; the closed ones before it are
    dropped), or None when the search stops: no node left, ``max_nodes`` evaluated, or the
    deadline passed (then ``timed_out`` becomes True; else it is returned as given)."""
    while queue:
        if deadline is not None and time.perf_counter() >= deadline:
            return None, True
        if max_nodes is not None and nodes >= max_nodes:
            return None, timed_out
        node = heapq.heappop(queue)
        if not _closed(-node.key, best, scale, tol):
            return node, timed_out
    return None, timed_out


def _child_bound(r, pbound, best, scale, tol):
    """The bound under which a child evaluated by the run ``r`` stays open (the lower of its
    parent's ``pbound`` and its own lowest dual value), or None when it is closed: certified,
    pruned by the incumbent, or its bound proves that nothing in it beats ``best``."""
    if r.certificate or r.pruned:
        return None
    cb = min(pbound, r.bound)
    return None if _closed(cb, best, scale, tol) else cb


def _search_end(queue, best, scale, tol, timed_out):
    """``(optimal, bound, timed_out)`` of a search stopped with the open nodes ``queue``
    (``key = -bound``) and the incumbent's score ``best``: every open node is in the queue,
    so the incumbent is optimal when none of them can beat it; the bound is the largest open
    one (``best`` when none is open); a time-out counts only with nodes still open (what was
    left open was closed anyway)."""
    open_bounds = [-q.key for q in queue if not _closed(-q.key, best, scale, tol)]
    ub = max(open_bounds) if open_bounds else best
    return not open_bounds, max(ub, best), timed_out and bool(open_bounds)


def decode_exact(parts: PartTable, *, alpha=0.001, budget=BUDGET, single_root=False,
                 projective=False, tol=GAP_TOL, time_limit=None, solver="subgradient",
                 step_rule="polyak", root_lam0=1.5, root_patience=60, node_iter=60, lam0=2.0,
                 patience=20, max_halvings=4, max_nodes=None, history=True,
                 ad3_options=None, split="arc") -> ExactResult:
    """Best tree under the full model, proved optimal (dual decomposition + branch and bound).

    Parameters
    ----------
    parts : PartTable
    budget : int
        Iterations of the first dual decomposition run before branch and bound takes over.
    time_limit : float, optional
        Seconds for the whole sentence; then the best tree so far, ``optimal = False``.
    solver : {"subgradient", "ad3"}
        The first run: subgradient dual decomposition (Koo et al. 2010) or AD3
        (:mod:`depparse.decode.ad3`, options ``ad3_options``); branch and bound is the same.
    step_rule : {"koo", "polyak"}
        Step sizes of a subgradient first run (:func:`~depparse.decode.dual.dual_decompose`);
        with ``"polyak"``, ``root_lam0`` and ``root_patience`` set them.
    node_iter, lam0, patience, max_halvings, max_nodes, split
        Branch and bound settings (:func:`branch_and_bound`).
    history : bool
        Keep the first run's best-tree history.

    Returns
    -------
    ExactResult

    Raises
    ------
    NoSpanningTreeError
        If the kept arcs admit no tree.
    """
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + float(time_limit)
    # huge scores: scale by a power of two (exact) so that no sum of parts, dual value or
    # Polyak step overflows; the scores returned are scaled back
    factor = shrink_factor(_scale(parts))
    if factor != 1.0:
        parts = dataclasses.replace(parts, arc=parts.arc * factor, tab=parts.tab * factor,
                                    hb=None if parts.hb is None else parts.hb * factor)
    kw = dict(alpha=alpha, single_root=single_root, projective=projective, tol=tol)
    if solver == "ad3":
        r = ad3_decompose(parts, max_iter=budget, deadline=deadline, **kw,
                          **(ad3_options or {}))
    elif solver == "subgradient":
        if step_rule == "polyak":
            kw.update(lam0=root_lam0, patience=root_patience)
        r = dual_decompose(parts, max_iter=budget, step_rule=step_rule, history=history,
                           deadline=deadline, **kw)
    else:
        raise ValueError(f"solver must be 'subgradient' or 'ad3', got {solver!r}")
    t1 = time.perf_counter()
    res = ExactResult.of_first_run(r, t1 - t0, dual=r.dual, primal=r.primal,
                                   recomputed=r.recomputed, best_changes=r.best_changes)
    if r.certificate or r.timed_out:
        return _unscale(res, factor)
    b = branch_and_bound(parts, r, alpha=alpha, single_root=single_root, projective=projective,
                         tol=tol, node_iter=node_iter, lam0=lam0, patience=patience,
                         max_halvings=max_halvings, max_nodes=max_nodes, deadline=deadline,
                         split=split)
    res.heads, res.score = b.heads, b.score
    res.add_search(b.nodes, b.iterations, b.optimal, b.bound, b.timed_out,
                   time.perf_counter() - t1)
    return _unscale(res, factor)


def _unscale(res: ExactResult, factor: float) -> ExactResult:
    if factor != 1.0:
        res.score /= factor
        res.bound /= factor
        res.dual = res.dual / factor
        res.primal = res.primal / factor
    return res
