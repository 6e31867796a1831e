"""Maximum spanning arborescences: Chu-Liu-Edmonds in O(n^2), with an exact single-root variant
(sparse graphs: :mod:`depparse.decode.sparse_mst`).

Conventions (stated once for the whole package): a sentence has ``n`` words and the artificial
root is node 0.  ``scores[h, m]`` is the score of the arc from head ``h`` to modifier ``m``;
``-inf`` forbids the arc; the diagonal and column 0 are ignored.  A parse is ``heads``, an
int64 array of length ``n + 1`` with ``heads[0] = -1``.

The contraction phase follows Tarjan (1977) for dense graphs (see also Gabow, Galil, Spencer
and Tarjan 1986): repeatedly take every node's best incoming arc; if these arcs form a cycle,
contract it into a fresh node whose incoming scores are ``max_v (s(x, v) - s(best_in(v), v))``
and whose outgoing scores are ``max_v s(v, x)``.  Each contraction of a ``c``-cycle costs
``O(c n)``, so the whole phase is ``O(n^2)``; the expansion walks the contraction forest once.

The single-root constraint is enforced exactly, in one ``O(n^2)`` run, by the reweighting of
Stanojevic and Cohen (2021, Sec. 3): give every root arc an extra weight so heavy that the best
arborescence has as few root children as possible (one, if any single-root tree exists), and
among those the highest score.  Instead of a large finite constant, which would round away
exact ties, the weight is the pair ``(tier, score)`` compared lexicographically, where root
arcs have tier -1 and all other arcs tier 0.  Pairs form a totally ordered abelian group, and
Chu-Liu-Edmonds only adds, subtracts and compares weights, so it stays exact.  (Zmigrod,
Vieira and Cotterell 2020 reach the same optimum by deleting root arcs one at a time.)

References
----------
R. E. Tarjan. Finding optimum branchings. Networks 7, 1977.
H. N. Gabow, Z. Galil, T. Spencer, R. E. Tarjan. Efficient algorithms for finding minimum
spanning trees in undirected and directed graphs. Combinatorica 6, 1986.
R. Zmigrod, T. Vieira, R. Cotterell. Please Mind the Root: Decoding Arborescences for
Dependency Parsing. EMNLP 2020.
M. Stanojevic, S. B. Cohen. A Root of a Problem: Optimizing Single-Root Dependency Parsing.
EMNLP 2021.
"""

from __future__ import annotations

from collections import namedtuple

import numba as nb
import numpy as np

from ..errors import NoSpanningTreeError

__all__ = ["chu_liu_edmonds", "NoSpanningTreeError"]

NEG_INF = -np.inf

# status codes returned by the kernels
OK = 0
NO_TREE = 1


@nb.njit(cache=True)
def _rescale(scores):
    """Copy the finite part of ``scores``, scaled by a power of two if it is huge.

    The contraction subtracts scores from scores; values near the float64 limit could
    overflow to ``+-inf``.  Scaling by a power of two is exact and keeps every comparison.
    """
    N = scores.shape[0]
    big = 0.0
    for i in range(N):
        for j in range(N):
            v = scores[i, j]
            if np.isfinite(v):
                a = abs(v)
                if a > big:
                    big = a
    factor = 1.0
    while big * factor > 1e290:
        factor *= 0.5 ** 64
    return factor


@nb.njit(cache=True, inline="always")
def _better(t1, w1, t2, w2):
    """Is weight ``(t1, w1)`` strictly better than ``(t2, w2)``?  ``w = -inf`` is no arc."""
    if w1 == NEG_INF:
        return False
    if w2 == NEG_INF:
        return True
    return t1 > t2 or (t1 == t2 and w1 > w2)


@nb.njit(cache=True, inline="always")
def _tier(tin, N, single_root, y, x):
    """Tier of the arc ``x -> y`` (see :func:`_cle_ws`): implicit between input nodes."""
    if y < N and x < N:
        return -1 if (single_root and x == 0) else 0
    return tin[y, x]


@nb.njit(cache=True, inline="always")
def _orig_head(oh, N, y, x):
    """Head of the input arc that ``x -> y`` stands for: ``x`` itself between input nodes."""
    return x if (y < N and x < N) else oh[y, x]


@nb.njit(cache=True, inline="always")
def _orig_mod(om, N, y, x):
    """Modifier of the input arc that ``x -> y`` stands for: ``y`` between input nodes."""
    return y if (y < N and x < N) else om[y, x]


#: Work arrays of :func:`_cle_ws` (:func:`_cle_workspace`): the weights ``inn`` and tiers
#: ``tin`` of the arcs between current nodes, and the input arc ``oh -> om`` each stands for.
CleWork = namedtuple("CleWork", ["inn", "tin", "oh", "om"])


@nb.njit(cache=True)
def _cle_workspace(N):
    """Work arrays for :func:`_cle_ws` on graphs of up to ``N`` nodes (reusable):
    a :data:`CleWork`."""
    M = 2 * N
    return CleWork(np.empty((M, M)), np.empty((M, M), dtype=np.int64),
                   np.empty((M, M), dtype=np.int32), np.empty((M, M), dtype=np.int32))


@nb.njit(cache=True)
def _cle(scores, single_root, heads):
    """Chu-Liu-Edmonds kernel.  Writes the best tree into ``heads``; returns a status code.

    Parameters
    ----------
    scores : (n+1, n+1) float64
        Arc scores ``scores[h, m]``; ``-inf`` forbids an arc.  Not modified.
    single_root : bool
        If true, exactly one word attaches to the root (lexicographic reweighting).
    heads : (n+1,) int64
        Output; ``heads[0] = -1``.

    Returns
    -------
    int
        ``OK`` (0) or ``NO_TREE`` (1) when no (single-root) spanning tree exists.
    """
    inn, tin, oh, om = _cle_workspace(scores.shape[0])
    return _cle_ws(scores, single_root, heads, inn, tin, oh, om)


@nb.njit(cache=True)
def _greedy(scores, single_root, heads):
    """Fast path: every word takes its best head; if that is a tree (with one root child under
    ``single_root``), it is the best tree, since no tree scores more at any word.  Returns
    whether it was; ``heads`` is garbage otherwise.  In dual decomposition most spanning-tree
    calls end here."""
    N = scores.shape[0]
    best = np.full(N, NEG_INF)
    heads[1:] = -1
    for x in range(N):  # row by row: the matrix is read in memory order
        for y in range(1, N):
            v = scores[x, y]
            if v > best[y] and x != y:
                best[y] = v
                heads[y] = x
    nroot = 0
    for y in range(1, N):
        if heads[y] < 0:
            return False
        if heads[y] == 0:
            nroot += 1
    if single_root and nroot != 1:
        return False
    # acyclic: walk up from every word, marking the walk; stop at the root or a finished word
    state = np.zeros(N, dtype=np.int8)  # 0 new, 1 on the current walk, 2 reaches the root
    state[0] = 2
    for s in range(1, N):
        v = s
        while state[v] == 0:
            state[v] = 1
            v = heads[v]
        if state[v] == 1:
            return False
        v = s
        while state[v] == 1:
            state[v] = 2
            v = heads[v]
    return True


@nb.njit(cache=True)
def _cle_ws(scores, single_root, heads, inn, tin, oh, om):
    """:func:`_cle` with caller-provided work arrays (from :func:`_cle_workspace`), so that
    repeated calls (dual decomposition) allocate nothing."""
    N = scores.shape[0]
    heads[0] = -1
    if N == 1:
        return OK
    if _greedy(scores, single_root, heads):
        return OK
    factor = _rescale(scores)
    M = 2 * N  # ids of contracted nodes are N, N+1, ... ; at most N-1 contractions
    # inn[y, x], tin[y, x]: weight (tier, score) of the arc x -> y between current nodes;
    # in-arcs of y are contiguous.  oh/om: the input arc (oh -> om) it stands for.  Between
    # two input nodes (x, y < N) tin, oh and om are implicit (_tier, _orig_head, _orig_mod:
    # tier -1 for root arcs under single_root, else 0; the arc itself) and never stored.
    # Only rows/columns of nodes that exist are ever read; the row and column of a contracted
    # node are reset for the living nodes when it is created.
    for y in range(1, N):
        for x in range(N):
            inn[y, x] = scores[x, y] * factor if x != y else NEG_INF
    alive = np.zeros(M, dtype=np.bool_)
    alive[:N] = True
    parent = np.full(M, -1, dtype=np.int64)  # contraction forest
    best = np.full(M, -1, dtype=np.int64)  # best incoming neighbour of each node
    bests = np.full(M, NEG_INF)  # its weight: score ...
    bestt = np.zeros(M, dtype=np.int64)  # ... and tier
    n_nodes = N

    for y in range(1, N):
        b = -1
        for x in range(N):
            t = _tier(tin, N, single_root, y, x)
            if b < 0 or _better(t, inn[y, x], bestt[y], bests[y]):
                if inn[y, x] != NEG_INF:
                    b = x
                    bests[y] = inn[y, x]
                    bestt[y] = t
        if b < 0:
            return NO_TREE
        best[y] = b

    mark = np.zeros(M, dtype=np.int64)  # 0 unvisited, >0 id of the walk that visited
    cyc = np.empty(M, dtype=np.int64)
    live = np.arange(M)  # live[:n_live]: the living nodes, in increasing order
    n_live = N
    while True:
        # --- find a cycle among the best incoming arcs (the root has none) ---
        mark[:n_nodes] = 0
        clen = 0
        walk = 0
        for s in range(1, n_nodes):
            if not alive[s] or mark[s] != 0:
                continue
            walk += 1
            v = s
            while v != 0 and mark[v] == 0:
                mark[v] = walk
                v = best[v]
            if v != 0 and mark[v] == walk:
                u = v  # v lies on a new cycle
                while True:
                    cyc[clen] = u
                    clen += 1
                    u = best[u]
                    if u == v:
                        break
                break
        if clen == 0:
            break
        # --- contract the cycle into a fresh node r ---
        r = n_nodes
        n_nodes += 1
        for k in range(clen):
            v = cyc[k]
            alive[v] = False
            parent[v] = r
        j = 0
        for i in range(n_live):
            x = live[i]
            if alive[x]:
                live[j] = x
                j += 1
                inn[r, x] = NEG_INF
                inn[x, r] = NEG_INF
        n_live = j
        alive[r] = True
        inn[r, r] = NEG_INF
        for i in range(n_live):
            x = live[i]
            # arcs x -> r: enter the cycle at the member where it costs least
            bi = NEG_INF
            bt = 0
            bv = -1
            for k in range(clen):
                v = cyc[k]
                w = inn[v, x]
                if w != NEG_INF:
                    w = w - bests[v]
                    t = _tier(tin, N, single_root, v, x) - bestt[v]
                    if _better(t, w, bt, bi):
                        bi = w
                        bt = t
                        bv = v
            if bv >= 0:
                inn[r, x] = bi
                tin[r, x] = bt
                oh[r, x] = _orig_head(oh, N, bv, x)
                om[r, x] = _orig_mod(om, N, bv, x)
            # arcs r -> x: leave the cycle from its best member
            if x != 0:
                bo = NEG_INF
                bt = 0
                bu = -1
                for k in range(clen):
                    u = cyc[k]
                    t = _tier(tin, N, single_root, x, u)
                    if _better(t, inn[x, u], bt, bo):
                        bo = inn[x, u]
                        bt = t
                        bu = u
                if bu >= 0:
                    inn[x, r] = bo
                    tin[x, r] = bt
                    oh[x, r] = _orig_head(oh, N, x, bu)
                    om[x, r] = _orig_mod(om, N, x, bu)
        # best incoming arc of r
        b = -1
        for i in range(n_live):
            x = live[i]
            if inn[r, x] != NEG_INF:
                if b < 0 or _better(tin[r, x], inn[r, x], bestt[r], bests[r]):
                    b = x
                    bests[r] = inn[r, x]
                    bestt[r] = tin[r, x]
        if b < 0:
            return NO_TREE
        best[r] = b
        # nodes whose best in-arc came from the cycle now take it from r, with the same
        # weight (inn[x, r] is the max over the members)
        for i in range(n_live):
            x = live[i]
            if x > 0 and best[x] > 0 and not alive[best[x]]:
                best[x] = r
        live[n_live] = r
        n_live += 1

    # --- expansion: top-down through the contraction forest ---
    # enter[v]: the input-graph modifier through which node v is entered
    enter = np.full(M, -1, dtype=np.int64)
    nroot = 0
    for y in range(1, n_nodes):
        if alive[y]:
            b = best[y]
            heads[_orig_mod(om, N, y, b)] = _orig_head(oh, N, y, b)
            enter[y] = _orig_mod(om, N, y, b)
            if b == 0:
                nroot += 1
    if single_root and nroot != 1:
        return NO_TREE  # only trees with several root children are possible
    for r in range(n_nodes - 1, N - 1, -1):
        m0 = enter[r]
        v = m0  # the member of r's cycle that contains m0
        while parent[v] != r:
            v = parent[v]
        enter[v] = m0
        # every other member x keeps its cycle arc best[x] -> x
        for x in range(n_nodes - 1):
            if parent[x] == r and x != v:
                b = best[x]
                heads[_orig_mod(om, N, x, b)] = _orig_head(oh, N, x, b)
                enter[x] = _orig_mod(om, N, x, b)
    return OK


def chu_liu_edmonds(scores, single_root=False):
    """Maximum spanning arborescence rooted at 0.

    Parameters
    ----------
    scores : (n+1, n+1) array_like of float
        ``scores[h, m]`` is the score of the arc ``h -> m``; ``-inf`` forbids it.  The
        diagonal and column 0 are ignored.  The array is never modified.
    single_root : bool, default False
        If true, return the best tree in which exactly one word attaches to the root,
        computed exactly in ``O(n^2)`` (Zmigrod et al. 2020).

    Returns
    -------
    heads : (n+1,) int64
        ``heads[0] = -1``; ``heads[m]`` is the head of word ``m``.

    Raises
    ------
    NoSpanningTreeError
        If no (single-root) spanning tree exists under the forbidden arcs.
    ValueError
        If ``scores`` is not a square 2-d array or contains NaN or ``+inf``.
    """
    s = np.ascontiguousarray(scores, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] != s.shape[1] or s.shape[0] < 1:
        raise ValueError(f"scores must be a square (n+1, n+1) matrix, got shape {s.shape}")
    _check_values(s)
    heads = np.empty(s.shape[0], dtype=np.int64)
    if _cle(s, bool(single_root), heads) != OK:
        kind = "single-root spanning tree" if single_root else "spanning tree"
        raise NoSpanningTreeError(f"no {kind} rooted at 0 exists under the -inf arcs")
    return heads


def _check_values(s):
    """Reject NaN and +inf, which make an argmax meaningless."""
    if np.isnan(s).any() or np.isposinf(s).any():
        raise ValueError("scores must be finite or -inf (no NaN, no +inf)")
