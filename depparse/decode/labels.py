"""Joint labelling of one head's children: Viterbi over the chain of their labels.

The children ``c_1 < ... < c_k`` of a head ``h`` get the labels ``y_1 .. y_k`` that maximise
``sum_i E[i, y_i] + first[y_1] + sum_{i>1} trans[side_i, y_{i-1}, y_i]``, where ``E`` holds the
emission scores of each child's arc with each label and ``side_i`` tells where the two
consecutive children lie: 0 both left of ``h``, 1 on either side, 2 both right
(McDonald, Lerman and Pereira 2006 label a head's children as a sequence the same way).
Labels below ``lo`` are reserved ids and never chosen.  Arrays in, arrays out; the scores
come from :mod:`depparse.features.labels`.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["children_of", "label_chain"]


@nb.njit(cache=True)
def children_of(heads):
    """Children of every word in linear order, CSR: ``kids[ptr[h]:ptr[h + 1]]``.

    Parameters
    ----------
    heads : (N,) int64
        A tree (``heads[0] = -1``).

    Returns
    -------
    ptr : (N + 1,) int64
    kids : (N - 1,) int64
    """
    N = heads.shape[0]
    ptr = np.zeros(N + 1, dtype=np.int64)
    for m in range(1, N):
        ptr[heads[m] + 1] += 1
    for h in range(N):
        ptr[h + 1] += ptr[h]
    fill = ptr[:-1].copy()
    kids = np.empty(max(N - 1, 0), dtype=np.int64)
    for m in range(1, N):
        h = heads[m]
        kids[fill[h]] = m
        fill[h] += 1
    return ptr, kids


@nb.njit(cache=True)
def label_chain(E, first, trans, children, h, lo, out):
    """Best labels of the children of ``h``, written to ``out[children[i]]``.

    Parameters
    ----------
    E : (k, L) float64
        ``E[i, y]``: score of label ``y`` on the arc ``h -> children[i]``.
    first : (L,) float64
        Score of ``y`` as the label of the first child.
    trans : (3, L, L) float64 (or more rows; only 0-2 are read)
        ``trans[side, yp, y]``: score of ``y`` after ``yp`` on consecutive children.
    children : (k,) int64
        The children of ``h`` in linear order (k >= 1).
    h : int
    lo : int
        The smallest label that may be chosen.
    out : (N,) int64
        Receives the labels; other entries are left alone.

    Notes
    -----
    Ties go to the smallest label.  O(k L^2).
    """
    k = children.shape[0]
    L = E.shape[1]
    delta = np.full((k, L), -np.inf)
    back = np.zeros((k, L), dtype=np.int64)
    for y in range(lo, L):
        delta[0, y] = E[0, y] + first[y]
    for i in range(1, k):
        side = (1 if children[i - 1] > h else 0) + (1 if children[i] > h else 0)
        Ts = trans[side]
        for y in range(lo, L):
            best = -np.inf
            arg = lo
            for yp in range(lo, L):
                t = delta[i - 1, yp] + Ts[yp, y]
                if t > best:
                    best = t
                    arg = yp
            delta[i, y] = best + E[i, y]
            back[i, y] = arg
    y = lo
    best = -np.inf
    for lab in range(lo, L):
        if delta[k - 1, lab] > best:
            best = delta[k - 1, lab]
            y = lab
    for i in range(k - 1, -1, -1):
        out[children[i]] = y
        y = back[i, y]
