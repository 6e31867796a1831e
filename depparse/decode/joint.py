"""Joint tagging and parsing by dual decomposition (Rush et al. 2010, Sec. 4.1, Fig. 1).

The pipeline fixes every word's tag first and parses with it.  Here the tag of each word is
chosen *together* with the tree, from a small candidate set ``C_i`` per word (the tags whose
max-marginal under the tagger's chain is within a margin of the best, at most ``K``:
:func:`~depparse.decode.tag_chain.max_marginals`), maximising the joint objective

    F(y, t) = chain(t) + f(y) + sum_m D(h_m, m, t_{h_m}, t_m)

over trees ``y`` (heads ``h_m``) and tag sequences ``t`` (``t_i`` in ``C_i``; the root has no
tag), where

* ``chain(t) = sum_i E_i(t_i) + sum_i T(t_{i-1}, t_i) + T(t_n, END)`` is the tagger's own
  first-order chain (its emission and transition scores, times the joint weight: how much the
  tagger's view counts against the parser's);
* ``f(y)`` is the parser's full model (arcs, siblings, grandparents, grand-siblings: the part
  table of :mod:`depparse.decode.part_table`) scored with the tagger's best tags, and
* ``D(h, m, a, b)`` is what the arc ``h -> m`` gains when its head takes its candidate ``a``
  and its modifier its candidate ``b`` instead of the tagger's best tags (``D = 0`` at the best
  tags; the parser's arc features read the tags of the arc's own two words,
  :mod:`depparse.features.tag_arcs`).

**Decomposition.**  Three slaves, each decoded exactly (one loop with the tree's own:
:func:`~depparse.decode.dual._dd_run` handed the tag slave of :mod:`depparse.decode.tag_slave`):

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
:class:`~depparse.inference.joint_tagging.JointSettings`): 0.69 s of CPU for this decoder, proofs
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
:mod:`depparse.decode.bnb` does, by the tree's own driver
(:func:`~depparse.decode.bnb.best_first`); huge scores are scaled by a power of two first,
as there.  Every returned analysis is proved optimal for ``F`` over the
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
import time
from dataclasses import dataclass, field
from typing import NamedTuple

import numba as nb
import numpy as np

from .bnb import (
    BUDGET,
    ProvedResult,
    _branch_arc,
    _only_tree,
    best_first,
    has_heads,
    shrink_factor,
)
from .bnb import WarmStart as _ArcStart
from .dual import (
    COUNT_Y,
    COUNT_Z,
    COUNT_ZG,
    GAP_TOL,
    STEP_RULES,
    DualSettings,
    DualState,
    _dd_init,
    _dd_run,
    _grandparent_slots,
    _primal_score,
    run_anytime,
)
from .mst import NoSpanningTreeError
from .part_table import PartTable
from .tag_slave import TagArrays, _tag_arc_score, _tag_init, _tag_scale, chain_score

__all__ = ["JointExact", "JointResult", "TagTable", "decode_joint", "joint_decompose",
           "joint_score"]

NEG_INF = -np.inf


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
    scale: float = 0.0  # the largest magnitude of a finite score (the gap tolerance's)


class _Start(NamedTuple):
    """Warm start of a node: the multipliers of the lowest dual value and the slaves' counts."""

    u: np.ndarray
    v: np.ndarray
    mu: np.ndarray
    nu: np.ndarray
    counts: np.ndarray  # rows COUNT_Y, COUNT_Z, COUNT_ZG (and an empty COUNT_C)
    tcounts: np.ndarray  # (3, M): tau, a, b
    counted: int


# -- Python API --------------------------------------------------------------------------


@nb.njit(cache=True)
def _joint_init(parts, tt, settings, u0, v0, mu0, nu0):
    """The state of a joint run (:func:`~depparse.decode.dual._dd_init`'s, its gap tolerance
    relative to the tag scores too) and the tag slave's, in one call."""
    N = parts.arc.shape[0]
    st = _dd_init(parts, settings, u0, v0, np.zeros((N, N)))
    state = DualState(st.tree, st.automata, st.chain, st.steps, st.progress, st.trace,
                      max(st.scale, _tag_scale(tt)))
    return state, _tag_init(parts, tt, mu0, nu0)


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
    state, ts = _joint_init(pa, tt, settings, u0, v0, mu0, nu0)
    run_anytime(_dd_run, pa, settings, state, (ts, tt), max_iter=max_iter,
                time_limit=time_limit, deadline=deadline, chunk=chunk)
    pr, trace, z = state.progress, state.trace, state.automata
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
                       trace.dual[:iters].copy(), trace.primal[:iters].copy(),
                       float(state.scale))


@dataclass
class JointExact(ProvedResult):
    """Outcome of :func:`decode_joint`: the analysis (``heads``; ``tags``, candidate index of
    every word, ``-1`` at the root), its ``score`` ``F``, ``optimal`` and ``proof`` (``"dual"``
    or ``"branch-and-bound"``, None when a limit stopped the search), the first run's
    ``certificate`` and ``root_iterations``, all ``iterations``, ``nodes`` (1 for the first
    run), the best upper ``bound`` and the seconds of the first run and of branch and
    bound (the fields of :class:`~depparse.decode.bnb.ProvedResult`, plus ``tags``)."""

    tags: np.ndarray = field(kw_only=True)


def _branch_tag(tags: TagTable, word, ok, start: _Start):
    """``(key, c)``: the candidate to split on (where the chain ``tau``, the automata's own
    tags ``a`` and the modifier copies ``b`` differ most over the node's iterations), or None
    when every word has a single allowed candidate; ``word[c]``: the word of candidate ``c``
    (computed once per search)."""
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
    first = dict(max_iter=budget, step_rule="polyak", lam0=root_lam0, patience=root_patience,
                 deadline=deadline, **kw)
    r = joint_decompose(parts, tags, **first)
    # huge scores: scaled by a power of two (exact), as decode_exact does, and run again (the
    # run measures the scale: no second pass over the tables); scaled back below
    factor = shrink_factor(r.scale)
    if factor != 1.0:
        parts = dataclasses.replace(parts, arc=parts.arc * factor, tab=parts.tab * factor)
        tags = dataclasses.replace(tags, emit=tags.emit * factor, trans=tags.trans * factor,
                                   dtab=tags.dtab * factor)
        r = joint_decompose(parts, tags, **first)
    scale = r.scale
    t1 = time.perf_counter()
    res = JointExact.of_first_run(r, t1 - t0, tags=r.tags)
    if not (r.certificate or r.timed_out):
        # branch and bound: a node forbids arcs (-inf) and candidates (ok = False)
        ok0 = (np.ones(tags.ids.shape[0], dtype=bool) if tags.ok is None else tags.ok.copy())
        problem = _JointSearch(parts, tags, scale, kw, dict(
            step_rule="polyak", max_iter=node_iter, lam0=lam0, patience=patience,
            max_halvings=max_halvings, deadline=deadline, chunk=50))
        best, sr = best_first(problem, r, (parts.arc, ok0), r.start, tol=tol,
                              max_nodes=max_nodes, deadline=deadline)
        res.heads, res.tags, res.score = best.heads, best.tags, best.score
        res.add_search(sr.nodes, sr.iterations, sr.optimal, sr.bound, sr.timed_out,
                       time.perf_counter() - t1)
    if factor != 1.0:
        res.score /= factor
        res.bound /= factor
    return res


class _JointSearch:
    """Joint tagging's search for :func:`~depparse.decode.bnb.best_first`: a node's space is
    ``(arc, ok)``, its arc scores (``-inf``: forbidden) and its allowed candidates; it splits
    on a word's tag where the chain and the automata disagree most (one child fixes the
    tag, the other forbids it), else on an arc as the tree's search does."""

    def __init__(self, parts: PartTable, tags: TagTable, scale, kw, child_kw):
        self.parts, self.tags, self.scale, self.kw, self.child_kw = (parts, tags, scale, kw,
                                                                     child_kw)
        self.word = np.repeat(np.arange(tags.N), np.diff(tags.ptr))

    def _run(self, space, start, max_iter, **more):
        arc, ok = space
        return joint_decompose(dataclasses.replace(self.parts, arc=arc),
                               dataclasses.replace(self.tags, ok=ok), max_iter=max_iter,
                               start=start, **self.kw, **more)

    def children(self, space, start):
        arc, ok = space
        tk = _branch_tag(self.tags, self.word, ok, start)
        ak = _arc_key(arc, start, self.parts.grandparents)
        if tk is None and ak is None:
            return None
        if tk is not None and (ak is None or tk[0] >= ak[0]):
            c = tk[1]
            ptr = self.tags.ptr
            fix = ok.copy()  # child 1: word i takes candidate c
            i = self.word[c]
            fix[ptr[i]:ptr[i + 1]] = False
            fix[c] = True
            forbid = ok.copy()  # child 2: it does not
            forbid[c] = False
            children = [(arc, fix), (arc, forbid)]
        else:
            h, m = ak[1]
            fix = arc.copy()
            keep = fix[h, m]
            fix[:, m] = NEG_INF
            fix[h, m] = keep
            forbid = arc.copy()
            forbid[h, m] = NEG_INF
            children = [(fix, ok), (forbid, ok)]
        return [c for c in children if has_heads(c[0])]

    def leaf(self, space):
        if _only_tree(space[0]) is None:
            return None
        try:
            return self._run(space, None, 1)
        except NoSpanningTreeError:
            return None

    def run(self, space, start, incumbent):
        return self._run(space, start, incumbent=incumbent, **self.child_kw)

    @staticmethod
    def warm(r):
        return r.start
