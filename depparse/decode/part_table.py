"""Compiled part scores: the arrays every higher-order decoder works on.

A *part table* holds, for one sentence, everything the head automata of Koo et al. (2010,
Sec. 3 Example 1 and Sec. 5 Example 3) need, restricted to the arcs kept by the pruner:

``arc``       : (n+1, n+1) float64, the arc-factored score theta(h, m); ``-inf`` = pruned.
``cand``      : int64, for every head ``h`` and side ``d`` (0 = left, 1 = right) the candidate
                modifiers of ``h`` in *outward* order (closest to ``h`` first), i.e. the words
                ``m`` with a kept arc ``h -> m``; slice ``cand[cand_off[h, d]:][:cand_len[h, d]]``.
``gp``        : int64, for every head ``h`` its candidate grandparents (the kept heads of
                ``h``), slice ``gp[gp_off[h]:][:gp_len[h]]``.  A sibling-only model and the root
                (``h = 0``) have one slot holding ``-1`` ("no grandparent").
``tab``       : float64, one transition matrix per (head, grandparent slot, side), at offset
                ``tab_off[gp_off[h] + gi, d]``, of shape ``(L+1, L+1)`` with ``L = cand_len[h, d]``:
                ``T[p, q]`` is the score of taking candidate ``q`` (or, for ``q = L``, the END
                state) right after state ``p`` (``p = 0`` START, ``p = i + 1`` after
                candidate ``i``).
                Only ``q >= p`` is meaningful (modifiers are taken outwards).  It sums the
                sibling, grandparent and grand-sibling part scores of that transition; arc
                scores are not in it (the decoders add them, so that dual decomposition can
                split them, Appendix A.2).

Dense tensors (for small sentences and tests) use this encoding of START and END, with
``N = n + 1``:

``sibling[h, s, m]`` : shape (N, N, N+1).  ``s = h`` is START; ``m = 0`` is END of the left side
                       (left modifiers are ``< h``, and 0 is never a modifier), ``m = N`` is END
                       of the right side.  So an empty right side scores ``sibling[h, h, N]``.
                       The root (``h = 0``) has only a right side.
``grand[g, h, m]``   : shape (N, N, N), the grandparent part ``g -> h -> m`` (used for ``h >= 1``).
``grandsib[g, h, s, m]`` : shape (N, N, N, N+1), grand-sibling parts with the START/END encoding
                       of ``sibling`` (used for ``h >= 1``).

A table may also hold head-bigram parts (``hd``, ``hd_off``, ``hd_len``, ``hb``, ``hb_off``:
the chain slave of :mod:`depparse.decode.head_bigrams`, layout and dense encoding there).

The kernels take a table as one named structure, :class:`PartArrays` (a named tuple that
Numba compiles; :meth:`PartTable.part_arrays`), and read its arrays by name.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import numba as nb
import numpy as np

from .head_bigrams import bigram_layout, fill_dense_bigrams

__all__ = ["PartArrays", "PartTable", "add_bigrams", "compile_dense", "score_tree"]

NEG_INF = -np.inf

#: A part table as the kernels take it (Numba compiles named tuples: a kernel reads
#: ``parts.cand_len[h, d]``).  The layout arrays of the module docstring, the head-bigram
#: arrays (empty without head bigrams) and two switches: ``grandparents`` (a G+S table) and
#: ``bigrams`` (head-bigram parts present).  A new part family adds its arrays here.
PartArrays = namedtuple("PartArrays", [
    "arc", "cand", "cand_off", "cand_len", "gp", "gp_off", "gp_len", "tab", "tab_off",
    "hd", "hd_off", "hd_len", "hb", "hb_off", "grandparents", "bigrams"])


@dataclass
class PartTable:
    """Scores of all parts of one sentence, in the layout described in the module docstring."""

    arc: np.ndarray
    cand: np.ndarray
    cand_off: np.ndarray
    cand_len: np.ndarray
    gp: np.ndarray
    gp_off: np.ndarray
    gp_len: np.ndarray
    tab: np.ndarray
    tab_off: np.ndarray
    grandparents: bool
    hd: np.ndarray | None = None
    hd_off: np.ndarray | None = None
    hd_len: np.ndarray | None = None
    hb: np.ndarray | None = None
    hb_off: np.ndarray | None = None

    @property
    def n(self) -> int:
        return self.arc.shape[0] - 1

    @property
    def bigrams(self) -> bool:
        """Does the table have head-bigram parts (:mod:`depparse.decode.head_bigrams`)?"""
        return self.hb is not None

    def bigram_arrays(self):
        """``(hd, hd_off, hd_len, hb, hb_off)``; for a table without head bigrams, empty
        arrays of the right types (the kernels then skip the chain)."""
        if self.hb is not None:
            return self.hd, self.hd_off, self.hd_len, self.hb, self.hb_off
        N = self.arc.shape[0]
        z = np.zeros(N, dtype=np.int64)
        return np.zeros(0, dtype=np.int64), z, z, np.zeros(0), z

    def arrays(self):
        """The layout arrays ``(arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab,
        tab_off)``, in the order of the module docstring (the oracles of the tests take
        them so)."""
        return (self.arc, self.cand, self.cand_off, self.cand_len, self.gp, self.gp_off,
                self.gp_len, self.tab, self.tab_off)

    def part_arrays(self) -> PartArrays:
        """The table as the kernels take it (:class:`PartArrays`)."""
        return PartArrays(*self.arrays(), *self.bigram_arrays(), bool(self.grandparents),
                          self.hb is not None)


@nb.njit(cache=True)
def table_width(cand_len):
    """``max L + 1`` over the candidate lists (at least 1): the side of the largest transition
    table, and the size of the per-automaton work arrays."""
    W = 1
    for h in range(cand_len.shape[0]):
        for d in range(2):
            if cand_len[h, d] + 1 > W:
                W = cand_len[h, d] + 1
    return W


@nb.njit(cache=True)
def build_layout(keep, grandparents):
    """Candidate lists and table offsets for a boolean matrix ``keep[h, m]`` of kept arcs.

    Returns ``(cand, cand_off, cand_len, gp, gp_off, gp_len, tab_off, tab_size)``.
    """
    N = keep.shape[0]
    cand_off = np.zeros((N, 2), dtype=np.int64)
    cand_len = np.zeros((N, 2), dtype=np.int64)
    total = 0
    for h in range(N):
        for m in range(1, N):
            if m != h and keep[h, m]:
                total += 1
    cand = np.empty(total, dtype=np.int64)
    k = 0
    for h in range(N):
        cand_off[h, 0] = k
        for m in range(h - 1, 0, -1):
            if keep[h, m]:
                cand[k] = m
                k += 1
        cand_len[h, 0] = k - cand_off[h, 0]
        cand_off[h, 1] = k
        for m in range(h + 1, N):
            if keep[h, m]:
                cand[k] = m
                k += 1
        cand_len[h, 1] = k - cand_off[h, 1]
    gp_off = np.zeros(N, dtype=np.int64)
    gp_len = np.zeros(N, dtype=np.int64)
    ng = 0
    for h in range(N):
        gp_off[h] = ng
        if grandparents and h > 0:
            for g in range(N):
                if g != h and keep[g, h]:
                    ng += 1
        else:
            ng += 1
        gp_len[h] = ng - gp_off[h]
    gp = np.empty(ng, dtype=np.int64)
    for h in range(N):
        k = gp_off[h]
        if grandparents and h > 0:
            for g in range(N):
                if g != h and keep[g, h]:
                    gp[k] = g
                    k += 1
        else:
            gp[k] = -1
    tab_off = np.zeros((ng, 2), dtype=np.int64)
    size = 0
    for h in range(N):
        for gi in range(gp_len[h]):
            for d in range(2):
                tab_off[gp_off[h] + gi, d] = size
                L = cand_len[h, d]
                size += (L + 1) * (L + 1)
    return cand, cand_off, cand_len, gp, gp_off, gp_len, tab_off, size


@nb.njit(cache=True)
def _fill_dense(parts, sibling, grand, grandsib):
    """Fill ``parts.tab`` (:class:`PartArrays`) from dense tensors (module docstring)."""
    N = parts.arc.shape[0]
    use_g = parts.grandparents
    cand = parts.cand
    tab = parts.tab
    for h in range(N):
        for gi in range(parts.gp_len[h]):
            g = parts.gp[parts.gp_off[h] + gi]
            for d in range(2):
                L = parts.cand_len[h, d]
                o = parts.tab_off[parts.gp_off[h] + gi, d]
                c0 = parts.cand_off[h, d]
                endm = 0 if d == 0 else N
                if h == 0 and d == 0:
                    tab[o] = 0.0  # the root has no left side: START -> END scores nothing
                    continue
                for p in range(L + 1):
                    s = h if p == 0 else cand[c0 + p - 1]
                    for q in range(L + 1):
                        if q < p:
                            tab[o + p * (L + 1) + q] = NEG_INF
                            continue
                        m = endm if q == L else cand[c0 + q]
                        v = sibling[h, s, m]
                        if use_g and g >= 0:
                            v += grandsib[g, h, s, m]
                            if q < L:
                                v += grand[g, h, m]
                        tab[o + p * (L + 1) + q] = v


def compile_dense(arc, sibling, grand=None, grandsib=None, bigram=None):
    """Build a :class:`PartTable` from dense tensors (module docstring for the encoding).

    Arcs with ``arc[h, m] = -inf`` are pruned: they get no automaton transitions.  With
    ``grand`` or ``grandsib`` given, the grandparent+sibling model is built (the missing one is
    taken as zero); otherwise the bigram-sibling model.  With ``bigram`` (``(N, N, N)``,
    :mod:`depparse.decode.head_bigrams`), the table also has head-bigram parts.
    """
    arc = np.ascontiguousarray(arc, dtype=np.float64)
    N = arc.shape[0]
    sibling = np.ascontiguousarray(sibling, dtype=np.float64)
    if sibling.shape != (N, N, N + 1):
        raise ValueError(f"sibling must have shape {(N, N, N + 1)}, got {sibling.shape}")
    use_g = grand is not None or grandsib is not None
    if use_g:
        grand = (np.zeros((N, N, N)) if grand is None
                 else np.ascontiguousarray(grand, dtype=np.float64))
        grandsib = (np.zeros((N, N, N, N + 1)) if grandsib is None
                    else np.ascontiguousarray(grandsib, dtype=np.float64))
        if grand.shape != (N, N, N) or grandsib.shape != (N, N, N, N + 1):
            raise ValueError("grand must be (N, N, N) and grandsib (N, N, N, N+1)")
    else:
        grand = np.zeros((1, 1, 1))
        grandsib = np.zeros((1, 1, 1, 1))
    keep = np.isfinite(arc)
    np.fill_diagonal(keep, False)
    keep[:, 0] = False
    cand, cand_off, cand_len, gp, gp_off, gp_len, tab_off, size = build_layout(keep, use_g)
    tab = np.empty(size, dtype=np.float64)
    table = PartTable(arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off, use_g)
    _fill_dense(table.part_arrays(), sibling, grand, grandsib)
    table.arc = np.where(keep, arc, NEG_INF)
    if bigram is not None:
        bigram = np.ascontiguousarray(bigram, dtype=np.float64)
        if bigram.shape != (N, N, N):
            raise ValueError(f"bigram must have shape {(N, N, N)}, got {bigram.shape}")
        add_bigrams(table, keep)
        fill_dense_bigrams(bigram, table.hd, table.hd_off, table.hd_len, table.hb_off, table.hb)
    return table


def add_bigrams(table: PartTable, keep) -> PartTable:
    """Give ``table`` the head-bigram layout of the kept arcs, with zero scores (filled by
    the caller)."""
    table.hd, table.hd_off, table.hd_len, table.hb_off, size = bigram_layout(keep)
    table.hb = np.zeros(size)
    return table


@nb.njit(cache=True)
def _score_tree_dense(heads, arc, sibling, grand, grandsib, use_g):
    N = heads.shape[0]
    total = 0.0
    for m in range(1, N):
        total += arc[heads[m], m]
    for h in range(N):
        g = heads[h] if (use_g and h > 0) else -1
        # left side, outwards: h-1, h-2, ..., 1 ; END = 0
        if h > 0:
            s = h
            for m in range(h - 1, 0, -1):
                if heads[m] == h:
                    total += sibling[h, s, m]
                    if g >= 0:
                        total += grand[g, h, m] + grandsib[g, h, s, m]
                    s = m
            total += sibling[h, s, 0]
            if g >= 0:
                total += grandsib[g, h, s, 0]
        s = h
        for m in range(h + 1, N):
            if heads[m] == h:
                total += sibling[h, s, m]
                if g >= 0:
                    total += grand[g, h, m] + grandsib[g, h, s, m]
                s = m
        total += sibling[h, s, N]
        if g >= 0:
            total += grandsib[g, h, s, N]
    return total


def score_tree(heads, arc, sibling=None, grand=None, grandsib=None, bigram=None):
    """Full-model score of a tree under dense part tensors.

    Parameters
    ----------
    heads : (n+1,) int
        A tree, ``heads[0] = -1``.
    arc : (N, N) float64
    sibling : (N, N, N+1) float64, optional
    grand : (N, N, N) float64, optional
    grandsib : (N, N, N, N+1) float64, optional
    bigram : (N, N, N) float64, optional
        Encodings as in the module docstring (and :mod:`depparse.decode.head_bigrams`); missing
        tensors count as zero.

    Returns
    -------
    float
    """
    heads = np.asarray(heads, dtype=np.int64)
    arc = np.asarray(arc, dtype=np.float64)
    N = arc.shape[0]
    use_g = grand is not None or grandsib is not None
    if sibling is None:
        sibling = np.zeros((N, N, N + 1))
    if not use_g:
        grand, grandsib = np.zeros((1, 1, 1)), np.zeros((1, 1, 1, 1))
    elif grand is None:
        grand = np.zeros((N, N, N))
    elif grandsib is None:
        grandsib = np.zeros((N, N, N, N + 1))
    total = float(_score_tree_dense(heads, arc, np.asarray(sibling, dtype=np.float64),
                                    np.asarray(grand, dtype=np.float64),
                                    np.asarray(grandsib, dtype=np.float64), use_g))
    if bigram is not None:
        total += float(sum(bigram[heads[m], m, heads[m + 1]] for m in range(1, N - 1)))
    return total
