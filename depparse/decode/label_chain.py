"""Joint labelling of one head's children: Viterbi over the chain of their labels.

The children ``c_1 < ... < c_k`` of a head ``h`` get the labels ``y_1 .. y_k`` that maximise
``sum_i E[i, y_i] + first[y_1] + sum_{i>1} trans[side_i, y_{i-1}, y_i]``, where ``E`` holds the
emission scores of each child's arc with each label and ``side_i`` tells where the two
consecutive children lie: 0 both left of ``h``, 1 on either side, 2 both right
(McDonald, Lerman and Pereira 2006 label a head's children as a sequence the same way).
Labels below ``lo`` are reserved ids and never chosen.  Arrays in, arrays out; the scores
come from :mod:`depparse.features.labels`.

Soft constraints (Anzaroot, Passos, Belanger and McCallum 2014) on the labels of one head's
children are linear counts ``c_k(y) = sum_i A[k, y_i] - b_k`` (e.g. "at most one nsubj":
``A[k, y] = 1`` for the subject labels, ``b_k = 1``) with a learned penalty ``rho_k >= 0`` for
each unit of violation: :func:`soft_label_chain` maximises
``chain(y) - sum_k rho_k max(0, c_k(y))`` by dual decomposition.  Its Lagrangian
``L(lam) = max_y chain(y) - sum_k lam_k c_k(y)`` with ``0 <= lam_k <= rho_k`` bounds the
soft objective from above (``lam c <= rho max(0, c)``) and is again a label chain (the
multipliers shift the emission scores), so the chain's Viterbi is the only oracle; the
multipliers follow projected subgradient steps, and when the dual value meets the best
labelling found (the primal) the labelling is proved optimal.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .slices import put

__all__ = ["chain_score", "children_of", "label_chain", "soft_label_chain", "soft_objective"]


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


@nb.njit(cache=True)
def chain_score(E, first, trans, children, h, y):
    """``sum_i E[i, y_i] + first[y_1] + sum_{i>1} trans[side_i, y_{i-1}, y_i]`` for the labels
    ``y`` (one per child, in the order of ``children``)."""
    t = E[0, y[0]] + first[y[0]]
    for i in range(1, children.shape[0]):
        side = (1 if children[i - 1] > h else 0) + (1 if children[i] > h else 0)
        t += trans[side, y[i - 1], y[i]] + E[i, y[i]]
    return t


@nb.njit(cache=True)
def _counts(A, b, y, c):
    """``c[k] = sum_i A[k, y_i] - b[k]``."""
    for k in range(A.shape[0]):
        t = -b[k]
        for i in range(y.shape[0]):
            t += A[k, y[i]]
        c[k] = t


@nb.njit(cache=True)
def soft_objective(E, first, trans, children, h, y, A, b, rho):
    """The soft-constrained score ``chain(y) - sum_k rho_k max(0, c_k(y))`` of labels ``y``."""
    c = np.empty(A.shape[0])
    _counts(A, b, y, c)
    t = chain_score(E, first, trans, children, h, y)
    for k in range(A.shape[0]):
        if c[k] > 0.0:
            t -= rho[k] * c[k]
    return t


@nb.njit(cache=True)
def soft_label_chain(E, first, trans, children, h, lo, A, b, rho, max_iter, out):
    """Best labels of the children of ``h`` under soft constraints (module docstring).

    Arguments as for :func:`label_chain`, plus the constraints ``A`` (K, L), ``b`` (K,), their
    penalties ``rho`` (K,) and a budget of ``max_iter`` subgradient steps.  The labels are
    written to ``out[children[i]]``.

    Returns
    -------
    iterations : int
        Dual decomposition steps taken (0 when the unconstrained Viterbi labels violate no
        penalised constraint: they are then optimal).
    proved : bool
        Whether the labels are proved optimal (the dual value met their score); otherwise they
        are the best labelling found within the budget.

    Notes
    -----
    Steps ``lam <- clip(lam + eta c(y), 0, rho)`` with Polyak's size ``eta = (L(lam) - best) /
    |g|^2`` (``best`` the best soft score found, ``g`` the components of ``c(y)`` the box lets
    move), halved after 10 steps without a lower dual value.
    """
    k = children.shape[0]
    K = A.shape[0]
    L = E.shape[1]
    y = np.empty(k, dtype=np.int64)
    c = np.empty(K)
    label_chain(E, first, trans, children, h, lo, out)
    for i in range(k):
        y[i] = out[children[i]]
    _counts(A, b, y, c)
    pen = 0.0
    for j in range(K):
        if c[j] > 0.0:
            pen += rho[j] * c[j]
    if pen == 0.0:
        return 0, True  # L(0) = chain(y) = the soft score of y
    best = chain_score(E, first, trans, children, h, y) - pen
    best_y = y.copy()
    lam = np.zeros(K)
    shift = np.zeros(L)
    Ep = np.empty_like(E)
    scale = 1.0
    best_dual = np.inf
    stale = 0
    proved = False
    it = 0
    while it < max_iter:
        it += 1
        for lab in range(L):
            t = 0.0
            for j in range(K):
                t += lam[j] * A[j, lab]
            shift[lab] = t
        for i in range(k):
            for lab in range(L):
                Ep[i, lab] = E[i, lab] - shift[lab]
        label_chain(Ep, first, trans, children, h, lo, out)
        for i in range(k):
            y[i] = out[children[i]]
        dual = chain_score(Ep, first, trans, children, h, y)
        for j in range(K):
            dual += lam[j] * b[j]
        _counts(A, b, y, c)
        primal = chain_score(E, first, trans, children, h, y)
        for j in range(K):
            if c[j] > 0.0:
                primal -= rho[j] * c[j]
        if primal > best:
            best = primal
            put(best_y, 0, y, y.shape[0])
        if dual - best <= 1e-9 * max(1.0, abs(best)):
            proved = True
            break
        if dual < best_dual - 1e-12:
            best_dual = dual
            stale = 0
        else:
            stale += 1
            if stale >= 10:
                scale *= 0.5
                stale = 0
        g2 = 0.0
        for j in range(K):
            if (c[j] > 0.0 and lam[j] < rho[j]) or (c[j] < 0.0 and lam[j] > 0.0):
                g2 += c[j] * c[j]
        if g2 == 0.0:
            break  # no multiplier can move: the gap is the relaxation's own
        eta = scale * (dual - best) / g2
        for j in range(K):
            v = lam[j] + eta * c[j]
            lam[j] = 0.0 if v < 0.0 else (rho[j] if v > rho[j] else v)
    for i in range(k):
        out[children[i]] = best_y[i]
    return it, proved
