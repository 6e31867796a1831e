"""Weight updates of the averaged perceptron and passive-aggressive learners (Numba)."""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["diff_stats", "feature_stats", "update", "weighted_stats"]


@nb.njit(cache=True)
def update(w, acc, c, idx, scale):
    """``w[idx] += scale`` (repeated indices count repeatedly); ``acc`` receives ``c * scale``
    for each feature (lazy averaging: the average is ``w - acc / c``)."""
    for i in range(idx.shape[0]):
        j = idx[i]
        w[j] += scale
        acc[j] += c * scale


@nb.njit(cache=True)
def weighted_stats(w, idx, coef):
    """``(w . phi, ||phi||^2)`` for ``phi = sum_i coef[i] e_{idx[i]}`` (repeated indices
    add up)."""
    order = np.argsort(idx, kind="mergesort")
    dot = 0.0
    norm = 0.0
    i = 0
    n = idx.shape[0]
    while i < n:
        x = idx[order[i]]
        s = 0.0
        while i < n and idx[order[i]] == x:
            s += coef[order[i]]
            i += 1
        dot += s * w[x]
        norm += s * s
    return dot, norm


def feature_stats(w, terms):
    """``(w . phi, ||phi||^2)`` for ``phi = sum coef * phi(idx)`` over the ``terms``
    ``(idx, coef)``: :func:`diff_stats` when every coefficient is +1 or -1 (the plain
    perceptron difference, summed as it always was), else :func:`weighted_stats`."""
    if all(c in (1.0, -1.0) for _, c in terms):
        plus = [i for i, c in terms if c == 1.0]
        minus = [i for i, c in terms if c == -1.0]
        return diff_stats(w, _cat(plus), _cat(minus))
    return weighted_stats(w, _cat([i for i, _ in terms]),
                          _cat([np.full(i.size, c) for i, c in terms], np.float64))


def _cat(parts, dtype=np.int64):
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


@nb.njit(cache=True)
def diff_stats(w, plus, minus):
    """``(w . (phi+ - phi-), ||phi+ - phi-||^2)`` for two lists of feature indices."""
    a = np.sort(plus)
    b = np.sort(minus)
    dot = 0.0
    for i in range(a.shape[0]):
        dot += w[a[i]]
    for i in range(b.shape[0]):
        dot -= w[b[i]]
    # merge the sorted lists to get the count of each feature in the difference
    norm = 0.0
    i = 0
    j = 0
    while i < a.shape[0] or j < b.shape[0]:
        if j >= b.shape[0] or (i < a.shape[0] and a[i] < b[j]):
            x = a[i]
        else:
            x = b[j]
        cnt = 0
        while i < a.shape[0] and a[i] == x:
            cnt += 1
            i += 1
        while j < b.shape[0] and b[j] == x:
            cnt -= 1
            j += 1
        norm += cnt * cnt
    return dot, norm
