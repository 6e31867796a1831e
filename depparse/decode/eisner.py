"""Eisner's first-order projective decoder, O(n^3) (Eisner 2000).

Same conventions as :mod:`depparse.decode.mst`: ``scores[h, m]``, root 0, ``-inf`` forbids an
arc, ``heads[0] = -1``.  Used as the Y solver of projective dual decomposition (Koo et al. 2010,
Sec. 7.7 and Table 3: P-Sib, P-G+S).

Chart items (the recurrences are written above the lines that compute them):
``C[s, t, d]`` complete span, ``I[s, t, d]`` incomplete span, where ``d = 1`` means the head is
the left end ``s`` and ``d = 0`` that it is the right end ``t``.

References
----------
J. Eisner. Bilexical grammars and their cubic-time parsing algorithms. In Advances in
Probabilistic and Other Parsing Technologies, 2000.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .mst import NO_TREE, OK, NoSpanningTreeError, _check_values, _rescale

__all__ = ["eisner"]

NEG_INF = -np.inf


@nb.njit(cache=True)
def _eisner(scores, single_root, heads):
    """Eisner kernel: writes the best projective tree into ``heads``; returns a status code."""
    N = scores.shape[0]
    heads[0] = -1
    if N == 1:
        return OK
    factor = _rescale(scores)
    if factor != 1.0:
        scores = scores * factor  # sums of huge scores would overflow (exact power of 2)
    C = np.full((N, N, 2), NEG_INF)
    I = np.full((N, N, 2), NEG_INF)
    Cb = np.full((N, N, 2), -1, dtype=np.int64)
    Ib = np.full((N, N, 2), -1, dtype=np.int64)
    for s in range(N):
        C[s, s, 0] = 0.0
        C[s, s, 1] = 0.0
    for w in range(1, N):
        for s in range(0, N - w):
            t = s + w
            # I[s,t,.] = max_{s<=r<t} C[s,r,1] + C[r+1,t,0] + score(arc)
            best = NEG_INF
            br = -1
            for r in range(s, t):
                v = C[s, r, 1] + C[r + 1, t, 0]
                if v > best:
                    best = v
                    br = r
            if br >= 0:
                a = scores[s, t]
                if a != NEG_INF:
                    I[s, t, 1] = best + a
                    Ib[s, t, 1] = br
                if s != 0:  # the root is never a modifier
                    a = scores[t, s]
                    if a != NEG_INF:
                        I[s, t, 0] = best + a
                        Ib[s, t, 0] = br
            # C[s,t,0] = max_{s<=r<t} C[s,r,0] + I[r,t,0]
            best = NEG_INF
            br = -1
            for r in range(s, t):
                v = C[s, r, 0] + I[r, t, 0]
                if v > best:
                    best = v
                    br = r
            C[s, t, 0] = best
            Cb[s, t, 0] = br
            # C[s,t,1] = max_{s<r<=t} I[s,r,1] + C[r,t,1]
            best = NEG_INF
            br = -1
            for r in range(s + 1, t + 1):
                v = I[s, r, 1] + C[r, t, 1]
                if v > best:
                    best = v
                    br = r
            C[s, t, 1] = best
            Cb[s, t, 1] = br
    # stack of items to expand: (s, t, d, complete?)
    stack = np.empty((4 * N, 4), dtype=np.int64)
    sp = 0
    if single_root:
        # one root child c: score(0, c) + C[1, c, 0] + C[c, n, 1]
        best = NEG_INF
        bc = -1
        for c in range(1, N):
            a = scores[0, c]
            if a == NEG_INF:
                continue
            v = a + C[1, c, 0] + C[c, N - 1, 1]
            if v > best:
                best = v
                bc = c
        if bc < 0:
            return NO_TREE
        heads[bc] = 0
        stack[sp, 0] = 1
        stack[sp, 1] = bc
        stack[sp, 2] = 0
        stack[sp, 3] = 1
        sp += 1
        stack[sp, 0] = bc
        stack[sp, 1] = N - 1
        stack[sp, 2] = 1
        stack[sp, 3] = 1
        sp += 1
    else:
        if C[0, N - 1, 1] == NEG_INF:
            return NO_TREE
        stack[sp, 0] = 0
        stack[sp, 1] = N - 1
        stack[sp, 2] = 1
        stack[sp, 3] = 1
        sp += 1
    while sp > 0:
        sp -= 1
        s = stack[sp, 0]
        t = stack[sp, 1]
        d = stack[sp, 2]
        comp = stack[sp, 3]
        if s == t:
            continue
        if comp == 1:
            r = Cb[s, t, d]
            if d == 0:  # C[s,r,0] + I[r,t,0]
                stack[sp, 0] = s
                stack[sp, 1] = r
                stack[sp, 2] = 0
                stack[sp, 3] = 1
                sp += 1
                stack[sp, 0] = r
                stack[sp, 1] = t
                stack[sp, 2] = 0
                stack[sp, 3] = 0
                sp += 1
            else:  # I[s,r,1] + C[r,t,1]
                stack[sp, 0] = s
                stack[sp, 1] = r
                stack[sp, 2] = 1
                stack[sp, 3] = 0
                sp += 1
                stack[sp, 0] = r
                stack[sp, 1] = t
                stack[sp, 2] = 1
                stack[sp, 3] = 1
                sp += 1
        else:
            r = Ib[s, t, d]
            if d == 1:
                heads[t] = s
            else:
                heads[s] = t
            stack[sp, 0] = s
            stack[sp, 1] = r
            stack[sp, 2] = 1
            stack[sp, 3] = 1
            sp += 1
            stack[sp, 0] = r + 1
            stack[sp, 1] = t
            stack[sp, 2] = 0
            stack[sp, 3] = 1
            sp += 1
    return OK


def eisner(scores, single_root=False):
    """Best projective dependency tree under arc-factored ``scores`` (Eisner 2000).

    Parameters
    ----------
    scores : (n+1, n+1) array_like of float
        ``scores[h, m]``; ``-inf`` forbids an arc; diagonal and column 0 are ignored.
        Never modified.
    single_root : bool, default False
        If true, exactly one word attaches to the root.

    Returns
    -------
    heads : (n+1,) int64
        ``heads[0] = -1``.

    Raises
    ------
    NoSpanningTreeError
        If no projective tree exists under the forbidden arcs.
    """
    s = np.ascontiguousarray(scores, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] != s.shape[1] or s.shape[0] < 1:
        raise ValueError(f"scores must be a square (n+1, n+1) matrix, got shape {s.shape}")
    _check_values(s)
    heads = np.empty(s.shape[0], dtype=np.int64)
    if _eisner(s, bool(single_root), heads) != OK:
        kind = "single-root projective tree" if single_root else "projective tree"
        raise NoSpanningTreeError(f"no {kind} rooted at 0 exists under the -inf arcs")
    return heads
