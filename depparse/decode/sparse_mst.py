"""Chu-Liu-Edmonds on sparse graphs, for dual decomposition's many spanning-tree calls.

Dual decomposition calls Chu-Liu-Edmonds thousands of times on one sentence whose pruned
graph keeps ~10 candidate heads per word: :func:`~depparse.decode.mst._cle_ws`'s O(n^2) per
call is then mostly spent on arcs that do not exist.  :func:`_cle_sparse` works on in-arc
lists instead (Tarjan 1977's contraction with merged lists): a contracted node's list is the
union of its members' lists, at most one arc per source node, weights reduced by the
member's best in-arc as in the dense kernel, and source nodes mapped to the node that now
contains them by a union-find.  Cycles are found by one walk that continues from each freshly
contracted node (a walk that reached the root is never revisited), so everything but the
merges is O(n + m).  Weights are the dense kernel's (tier, score) pairs, so the single-root
constraint is exact here too (:mod:`depparse.decode.mst`).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .mst import NEG_INF, NO_TREE, OK, _better
from .slices import put

__all__ = ["in_arcs"]


@nb.njit(cache=True)
def in_arcs(scores):
    """In-arc lists of the arcs with a finite score: ``src[ptr[y]:ptr[y+1]]`` are the heads
    ``x`` of the arcs ``x -> y`` (``y >= 1``, ``x != y``), in increasing order."""
    N = scores.shape[0]
    ptr = np.zeros(N + 1, dtype=np.int64)
    for y in range(1, N):
        c = 0
        for x in range(N):
            if x != y and np.isfinite(scores[x, y]):
                c += 1
        ptr[y + 1] = ptr[y] + c
    src = np.empty(ptr[N], dtype=np.int64)
    for y in range(1, N):
        j = ptr[y]
        for x in range(N):
            if x != y and np.isfinite(scores[x, y]):
                src[j] = x
                j += 1
    return ptr, src


@nb.njit(cache=True, inline="always")
def _find(uf, x):
    """The living node that contains ``x`` (union-find with path halving)."""
    while uf[x] != x:
        uf[x] = uf[uf[x]]
        x = uf[x]
    return x


@nb.njit(cache=True, inline="always")
def _best_arc(a_t, a_s, lo, hi):
    """Index of the best arc among ``lo..hi-1`` of the pool (the first of equals), -1 if none."""
    b = -1
    for i in range(lo, hi):
        if b < 0 or _better(a_t[i], a_s[i], a_t[b], a_s[b]):
            b = i
    return b


@nb.njit(cache=True)
def _cle_sparse(scores, ptr, src, single_root, heads):
    """:func:`_cle` over the arcs listed by :func:`in_arcs` (``ptr``, ``src``); an arc whose
    score is ``-inf`` now counts as absent, so arcs can be forbidden without rebuilding the
    lists.  Same result as :func:`_cle` up to ties between equally good trees."""
    N = scores.shape[0]
    heads[0] = -1
    if N == 1:
        return OK
    M = 2 * N
    m0 = ptr[N]
    # the arc pool: input arcs first (node y's list is [lo[y], hi[y])), merged lists after
    cap = 2 * m0 + 4 * N
    a_h = np.empty(cap, dtype=np.int64)  # head and modifier of the input arc it stands for
    a_m = np.empty(cap, dtype=np.int64)
    a_s = np.empty(cap)  # weight: score ...
    a_t = np.empty(cap, dtype=np.int64)  # ... and tier
    lo = np.zeros(M, dtype=np.int64)
    hi = np.zeros(M, dtype=np.int64)
    big = 0.0
    top = np.int64(0)  # (int64, not Literal[int](0): one signature of _grow)
    for y in range(1, N):
        lo[y] = top
        for j in range(ptr[y], ptr[y + 1]):
            x = src[j]
            s = scores[x, y]
            if s != NEG_INF:
                a_h[top] = x
                a_m[top] = y
                a_s[top] = s
                a_t[top] = -1 if (single_root and x == 0) else 0
                if abs(s) > big:
                    big = abs(s)
                top += 1
        hi[y] = top
    if big > 1e290:  # see _rescale
        factor = 1.0
        while big * factor > 1e290:
            factor *= 0.5 ** 64
        for i in range(top):
            a_s[i] *= factor
    uf = np.arange(M)
    parent = np.full(M, -1, dtype=np.int64)  # contraction forest
    best = np.full(M, -1, dtype=np.int64)  # pool index of each node's best in-arc
    state = np.zeros(M, dtype=np.int8)  # 0 new, 1 on the current walk, 2 reaches the root
    state[0] = 2
    seen = np.full(M, -1, dtype=np.int64)  # merge: pool index of the arc kept per source
    mem = np.empty(M, dtype=np.int64)  # members of the contracted nodes, by node
    mlo = np.zeros(M, dtype=np.int64)
    mhi = np.zeros(M, dtype=np.int64)
    nm = 0
    path = np.empty(M, dtype=np.int64)
    n_nodes = N
    for y in range(1, N):
        best[y] = _best_arc(a_t, a_s, lo[y], hi[y])
        if best[y] < 0:
            return NO_TREE
    for s0 in range(1, N):
        if state[s0] != 0:
            continue
        plen = 0
        v = s0
        while True:
            if state[v] == 0:
                state[v] = 1
                path[plen] = v
                plen += 1
                v = _find(uf, a_h[best[v]])
                continue
            if state[v] == 2:
                break
            # v is on the walk: the walk from v on is a cycle; contract it into r
            r = n_nodes
            n_nodes += 1
            mlo[r] = nm
            while True:
                plen -= 1
                x = path[plen]
                mem[nm] = x
                nm += 1
                parent[x] = r
                uf[x] = r
                if x == v:
                    break
            mhi[r] = nm
            # r's in-arcs: the members' arcs from outside, reduced by the member's best arc
            need = top
            for k in range(mlo[r], mhi[r]):
                x = mem[k]
                need += hi[x] - lo[x]
            if need > cap:
                cap = 2 * need
                a_h = _grow(a_h, cap, top)
                a_m = _grow(a_m, cap, top)
                a_s = _grow(a_s, cap, top)
                a_t = _grow(a_t, cap, top)
            lo[r] = top
            for k in range(mlo[r], mhi[r]):
                x = mem[k]
                bs = a_s[best[x]]
                bt = a_t[best[x]]
                for i in range(lo[x], hi[x]):
                    z = _find(uf, a_h[i])
                    if z == r:
                        continue
                    s = a_s[i] - bs
                    t = a_t[i] - bt
                    j = seen[z]
                    if j >= lo[r]:
                        if _better(t, s, a_t[j], a_s[j]):
                            a_h[j] = a_h[i]
                            a_m[j] = a_m[i]
                            a_s[j] = s
                            a_t[j] = t
                    else:
                        seen[z] = top
                        a_h[top] = a_h[i]
                        a_m[top] = a_m[i]
                        a_s[top] = s
                        a_t[top] = t
                        top += 1
            hi[r] = top
            b = _best_arc(a_t, a_s, lo[r], hi[r])
            if b < 0:
                return NO_TREE
            best[r] = b
            state[r] = 1
            path[plen] = r
            plen += 1
            v = _find(uf, a_h[b])
        for k in range(plen):
            state[path[k]] = 2
    # expansion, top-down through the contraction forest (as in _cle_ws)
    enter = np.full(M, -1, dtype=np.int64)
    nroot = 0
    for y in range(1, n_nodes):
        if parent[y] < 0:
            b = best[y]
            heads[a_m[b]] = a_h[b]
            enter[y] = a_m[b]
            if a_h[b] == 0:
                nroot += 1
    if single_root and nroot != 1:
        return NO_TREE
    for r in range(n_nodes - 1, N - 1, -1):
        m0 = enter[r]
        v = m0
        while parent[v] != r:
            v = parent[v]
        enter[v] = m0
        for k in range(mlo[r], mhi[r]):
            x = mem[k]
            if x != v:
                b = best[x]
                heads[a_m[b]] = a_h[b]
                enter[x] = a_m[b]
    return OK


@nb.njit(cache=True)
def _grow(a, cap, n):
    """A copy of ``a[:n]`` in an array of ``cap`` elements (the arc pool outgrew its size)."""
    b = np.empty(cap, dtype=a.dtype)
    put(b, 0, a, n)
    return b
