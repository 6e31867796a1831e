"""Tag sequences: first-order Viterbi over each word's candidate tags, and per-word argmax.

A sentence of ``n`` words (positions 1..n; 0 is the root and takes no tag) has, for word
``i``, the candidate tags ``ids[ptr[i]:ptr[i + 1]]`` with emission scores ``E`` aligned to
them.  :func:`viterbi` finds the sequence ``y_1 .. y_n`` maximising
``trans[S, y_1] + sum_i E_i(y_i) + sum_{i>1} trans[y_{i-1}, y_i] + trans[y_n, S]``, ``S`` the
START/END row and column of ``trans`` (its last), in ``O(sum_i |C_{i-1}| |C_i|)`` (Viterbi
1967; the decoder of Collins's 2002 perceptron tagger); :func:`best_each` picks every word's
best candidate on its own; :func:`max_marginals` gives, for every candidate, the best score of a
sequence through it (the forward and backward Viterbi passes; the candidate sets of joint
tagging and parsing, :mod:`depparse.decode.joint`).  Arrays in, arrays out; the scores come from
:func:`depparse.features.tags.candidate_scores`.

References
----------
A. Viterbi. Error bounds for convolutional codes and an asymptotically optimum decoding
algorithm. IEEE Trans. Information Theory 13(2), 1967.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["best_each", "max_marginals", "viterbi"]


@nb.njit(cache=True)
def viterbi(E, ptr, ids, trans):
    """Best tag sequence under emission and bigram transition scores.

    Parameters
    ----------
    E : (M,) float64
        Score of each candidate (aligned with ``ids``).
    ptr : (N + 1,) int64
        Word ``i`` (1..N-1) has the candidates ``ids[ptr[i]:ptr[i + 1]]`` (at least one).
    ids : (M,) int64
        Candidate tags, each in ``0..S-1``.
    trans : (S + 1, S + 1) float64
        ``trans[a, b]``: score of tag ``b`` after tag ``a``; row / column ``S`` is START /
        END.

    Returns
    -------
    (N,) int64
        The tags (index 0: -1).

    Notes
    -----
    Ties go to the earliest candidate.
    """
    N = ptr.shape[0] - 1
    S = trans.shape[0] - 1
    out = np.full(N, -1, dtype=np.int64)
    if N <= 1:
        return out
    M = ids.shape[0]
    delta = np.empty(M)
    back = np.zeros(M, dtype=np.int64)
    for c in range(ptr[1], ptr[2]):
        delta[c] = trans[S, ids[c]] + E[c]
    for i in range(2, N):
        for c in range(ptr[i], ptr[i + 1]):
            y = ids[c]
            best = -np.inf
            arg = ptr[i - 1]
            for cp in range(ptr[i - 1], ptr[i]):
                t = delta[cp] + trans[ids[cp], y]
                if t > best:
                    best = t
                    arg = cp
            delta[c] = best + E[c]
            back[c] = arg
    best = -np.inf
    arg = ptr[N - 1]
    for c in range(ptr[N - 1], ptr[N]):
        t = delta[c] + trans[ids[c], S]
        if t > best:
            best = t
            arg = c
    for i in range(N - 1, 0, -1):
        out[i] = ids[arg]
        arg = back[arg]
    return out


@nb.njit(cache=True)
def best_each(E, ptr, ids):
    """Every word's best candidate on its own (first on a tie); index 0: -1.

    Parameters
    ----------
    E, ptr, ids
        As for :func:`viterbi`.

    Returns
    -------
    (N,) int64
    """
    N = ptr.shape[0] - 1
    out = np.full(N, -1, dtype=np.int64)
    for i in range(1, N):
        best = -np.inf
        for c in range(ptr[i], ptr[i + 1]):
            if E[c] > best:
                best = E[c]
                out[i] = ids[c]
    return out


@nb.njit(cache=True)
def max_marginals(E, ptr, ids, trans):
    """For every candidate ``c`` of word ``i``, the best score of a tag sequence with
    ``y_i = ids[c]`` (the objective of :func:`viterbi`): forward plus backward Viterbi.

    Parameters
    ----------
    E, ptr, ids, trans
        As for :func:`viterbi`.

    Returns
    -------
    (M,) float64
        The max-marginals; their maximum over any one word is the score of the best sequence.
    """
    N = ptr.shape[0] - 1
    S = trans.shape[0] - 1
    M = ids.shape[0]
    fw = np.empty(M)
    bw = np.empty(M)
    if N <= 1:
        return fw
    for c in range(ptr[1], ptr[2]):
        fw[c] = trans[S, ids[c]] + E[c]
    for i in range(2, N):
        for c in range(ptr[i], ptr[i + 1]):
            best = -np.inf
            for cp in range(ptr[i - 1], ptr[i]):
                t = fw[cp] + trans[ids[cp], ids[c]]
                if t > best:
                    best = t
            fw[c] = best + E[c]
    for c in range(ptr[N - 1], ptr[N]):
        bw[c] = trans[ids[c], S]
    for i in range(N - 2, 0, -1):
        for c in range(ptr[i], ptr[i + 1]):
            best = -np.inf
            for cn in range(ptr[i + 1], ptr[i + 2]):
                t = trans[ids[c], ids[cn]] + E[cn] + bw[cn]
                if t > best:
                    best = t
            bw[c] = best
    return fw + bw
