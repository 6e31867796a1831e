"""The head-bigram slave: a chain over the words whose states are their heads.

A *head-bigram* part scores the heads of two consecutive words together, ``(h_m, m, h_{m+1},
m+1)`` (Martins, Almeida and Smith 2013, "Turning on the Turbo", Sec. 3: their third-order
model has head bigrams besides grand-siblings and tri-siblings).  It is not local to any head
automaton, so it enters dual decomposition as one more slave (Koo et al. 2010 Sec. 4: a new
component costs one more subproblem and keeps the certificate): a first-order chain over
``m = 1 .. n`` in which word ``m`` takes one of its kept heads, decoded exactly by Viterbi in
``O(sum_m K_m K_{m+1})`` for ``K_m`` kept heads of word ``m``.  Its copies ``c(h, m)`` of the
arc variables must agree with the tree, through multipliers ``r(h, m)``
(:mod:`depparse.decode.dual`):

    max_c  sum_m B(c_m, m, c_{m+1}) - sum_m r(c_m, m)

Layout (arrays of a :class:`~depparse.decode.part_table.PartTable` with head bigrams):

``hd``      : int64, the kept heads of each word ``m`` in increasing order, slice
              ``hd[hd_off[m]:][:hd_len[m]]`` (``hd_len[0] = 0``: the root has no head).
``hb``      : float64, for every pair ``(m, m+1)``, ``1 <= m < n``, the matrix at offset
              ``hb_off[m]`` of shape ``(hd_len[m], hd_len[m+1])``: ``B[i, j]`` is the score of
              word ``m`` taking its ``i``-th kept head while ``m+1`` takes its ``j``-th.

Dense encoding (tests, small sentences): ``bigram[h1, m, h2]`` of shape ``(N, N, N)``, the
score of ``h1 -> m`` together with ``h2 -> m+1`` (used for ``1 <= m < n``).
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["bigram_layout", "chain_viterbi", "decode_chain", "fill_dense_bigrams",
           "head_positions", "tree_bigram_score"]

NEG_INF = -np.inf


@nb.njit(cache=True)
def bigram_layout(keep):
    """Head lists and bigram-table offsets for the kept arcs ``keep[h, m]``.

    Returns ``(hd, hd_off, hd_len, hb_off, hb_size)``.
    """
    N = keep.shape[0]
    hd_off = np.zeros(N, dtype=np.int64)
    hd_len = np.zeros(N, dtype=np.int64)
    total = 0
    for m in range(1, N):
        for h in range(N):
            if h != m and keep[h, m]:
                total += 1
    hd = np.empty(total, dtype=np.int64)
    k = 0
    for m in range(N):
        hd_off[m] = k
        if m > 0:
            for h in range(N):
                if h != m and keep[h, m]:
                    hd[k] = h
                    k += 1
        hd_len[m] = k - hd_off[m]
    hb_off = np.zeros(N, dtype=np.int64)
    size = 0
    for m in range(1, N - 1):
        hb_off[m] = size
        size += hd_len[m] * hd_len[m + 1]
    return hd, hd_off, hd_len, hb_off, size


@nb.njit(cache=True)
def head_positions(hd, hd_off, hd_len):
    """``pos[h, m]``: the index of ``h`` in the kept-head list of ``m``, or -1."""
    N = hd_off.shape[0]
    pos = np.full((N, N), -1, dtype=np.int64)
    for m in range(N):
        for i in range(hd_len[m]):
            pos[hd[hd_off[m] + i], m] = i
    return pos


@nb.njit(cache=True)
def fill_dense_bigrams(bigram, hd, hd_off, hd_len, hb_off, hb):
    """Copy a dense ``bigram[h1, m, h2]`` tensor into the table layout."""
    N = hd_off.shape[0]
    for m in range(1, N - 1):
        K2 = hd_len[m + 1]
        for i in range(hd_len[m]):
            h1 = hd[hd_off[m] + i]
            for j in range(K2):
                hb[hb_off[m] + i * K2 + j] = bigram[h1, m, hd[hd_off[m + 1] + j]]


@nb.njit(cache=True)
def chain_viterbi(arc, hd, hd_off, hd_len, hb, hb_off, r, delta, back, out):
    """Best head sequence of the chain: ``max sum_m B(c_m, m, c_{m+1}) - r(c_m, m)``.

    Heads ``h`` of ``m`` with ``arc[h, m] = -inf`` (forbidden by branch and bound) are never
    taken.  ``delta`` and ``back`` are work arrays of the size of ``hd``; ``out[m]`` receives the
    chosen head of each word (``out[0] = -1``).  Returns the value, ``-inf`` when some word has
    no allowed head.
    """
    N = hd_off.shape[0]
    out[0] = -1
    if N < 2:
        return 0.0
    o = hd_off[1]
    for i in range(hd_len[1]):
        h = hd[o + i]
        delta[o + i] = NEG_INF if arc[h, 1] == NEG_INF else -r[h, 1]
        back[o + i] = -1
    for m in range(2, N):
        o1, K1 = hd_off[m - 1], hd_len[m - 1]
        o2, K2 = hd_off[m], hd_len[m]
        t = hb_off[m - 1]
        for j in range(K2):
            h = hd[o2 + j]
            b = NEG_INF
            bi = -1
            if arc[h, m] != NEG_INF:
                for i in range(K1):
                    v = delta[o1 + i] + hb[t + i * K2 + j]
                    if v > b:
                        b = v
                        bi = i
            delta[o2 + j] = b - r[h, m] if bi >= 0 else NEG_INF
            back[o2 + j] = bi
    o, K = hd_off[N - 1], hd_len[N - 1]
    b = NEG_INF
    bi = -1
    for i in range(K):
        if delta[o + i] > b:
            b = delta[o + i]
            bi = i
    if bi < 0:
        for m in range(1, N):
            out[m] = -1
        return NEG_INF
    for m in range(N - 1, 0, -1):
        out[m] = hd[hd_off[m] + bi]
        bi = back[hd_off[m] + bi]
    return b


@nb.njit(cache=True)
def tree_bigram_score(heads, hb, hb_off, hd_len, pos):
    """The head-bigram part of the score of ``heads`` (every arc kept; ``pos`` from
    :func:`head_positions`)."""
    N = heads.shape[0]
    total = 0.0
    for m in range(1, N - 1):
        total += hb[hb_off[m] + pos[heads[m], m] * hd_len[m + 1] + pos[heads[m + 1], m + 1]]
    return total


@nb.njit(cache=True)
def decode_chain(arc, hd, hd_off, hd_len, hb, hb_off, share):
    """The chain's own best head sequence under its bigram scores and ``share`` times the arc
    scores (``r = -share * arc``): its part of training over Z."""
    N = hd_off.shape[0]
    n = max(hd.shape[0], 1)
    r = np.zeros((N, N))
    if share != 0.0:
        for h in range(N):
            for m in range(N):
                if arc[h, m] != NEG_INF:
                    r[h, m] = -share * arc[h, m]
    out = np.full(N, -1, dtype=np.int64)
    chain_viterbi(arc, hd, hd_off, hd_len, hb, hb_off, r, np.empty(n),
                  np.empty(n, dtype=np.int64), out)
    return out
