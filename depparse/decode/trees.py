"""Checking that a heads array is a dependency tree (the package's convention: ``heads``
of length n + 1, ``heads[0] = -1``, root 0; :mod:`depparse.decode.mst`)."""

from __future__ import annotations

import numpy as np

__all__ = ["arc_matrix", "validate_tree"]


def arc_matrix(heads) -> np.ndarray:
    """``mods[h, m]``: is ``h`` the head of ``m`` in the heads array ``heads`` (``heads[0]``
    ignored)?"""
    N = heads.shape[0]
    mods = np.zeros((N, N), dtype=bool)
    mods[heads[1:], np.arange(1, N)] = True
    return mods


def validate_tree(heads, *, single_root: bool = False) -> str | None:
    """Check that heads form a tree rooted at 0.

    Parameters
    ----------
    heads : array-like of int, shape (n + 1,), or an object with a ``heads`` array
        The heads with the root at index 0 (``heads[0]`` is ignored), or a
        :class:`~depparse.conllu.Sentence` (its current ``heads``).
    single_root : bool, optional
        Also require exactly one word attached to the root (the UD convention).

    Returns
    -------
    str or None
        None if every word has exactly one head in ``0..n``, no word is its own head and
        there is no cycle (so every word is reachable from 0); otherwise a message
        naming the first problem found.
    """
    heads = np.asarray(getattr(heads, "heads", heads))
    if heads.ndim != 1 or heads.dtype.kind not in "iu":
        return f"heads must be a 1-D integer array, got shape {heads.shape} dtype {heads.dtype}"
    n = heads.shape[0] - 1
    if n < 1:
        return "sentence has no words"
    h = heads.tolist()
    for m in range(1, n + 1):
        if h[m] < 0:
            return f"word {m} has no head"
        if h[m] > n:
            return f"head {h[m]} of word {m} is out of range 0..{n}"
        if h[m] == m:
            return f"word {m} is its own head"
    # 0 = unvisited, 1 = on the current path, 2 = known to reach the root
    state = [0] * (n + 1)
    state[0] = 2
    for m in range(1, n + 1):
        path = []
        v = m
        while state[v] == 0:
            state[v] = 1
            path.append(v)
            v = h[v]
        if state[v] == 1:
            cycle = path[path.index(v) :]
            return "cycle: " + " -> ".join(str(w) for w in [*cycle, v])
        for w in path:
            state[w] = 2
    if single_root:
        roots = [m for m in range(1, n + 1) if h[m] == 0]
        if len(roots) != 1:
            return f"{len(roots)} words attached to the root ({roots}), expected exactly one"
    return None
