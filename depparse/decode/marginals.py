"""Arc marginals by the matrix-tree theorem, and marginal-based pruning.

The pruner is an arc-factored log-linear model ``p(y | x) ∝ exp(sum_{(h,m) in y} s(h, m))`` over
single-root spanning trees.  Its partition function and arc marginals come from the
matrix-tree theorem in the single-root form of Koo, Globerson, Carreras and Collins (2007,
Sec. 3.3): with ``A[h, m] = exp(s(h, m))`` for words ``h, m >= 1``, root weights
``r[m] = exp(s(0, m))`` and the Laplacian ``L[m, m] = sum_h A[h, m]``, ``L[h, m] = -A[h, m]``,
replace the first row of ``L`` by ``r`` to get ``L^``; then ``Z = det(L^)`` and (1-based words)

    mu(0, m) = r[m] * inv(L^)[m, 1]
    mu(h, m) = A[h, m] * ([m != 1] inv(L^)[m, m] - [h != 1] inv(L^)[m, h])

(see also McDonald and Satta 2007; Smith and Smith 2007).  Every column ``m`` is scaled by
``exp(-max_h s(h, m))`` first: each tree has exactly one arc into ``m``, so this rescales every
tree by the same factor and leaves the marginals unchanged, while keeping ``exp`` in range.

Pruning (Koo et al. 2010, Sec. 7): for each modifier keep the heads whose marginal is at least
``threshold`` times that of its best head, at most ``max_heads`` of them, plus the arcs of the
pruner's own best tree so that a single-root tree always survives.
"""

from __future__ import annotations

import numpy as np

from .mst import chu_liu_edmonds

__all__ = ["arc_marginals", "log_partition", "prune_mask", "top_per_column"]


def _laplacian(scores):
    s = np.asarray(scores, dtype=np.float64)
    N = s.shape[0]
    n = N - 1
    sub = s[:, 1:].copy()  # (N, n): column j is word m = j + 1
    sub[np.arange(1, N), np.arange(n)] = -np.inf  # no self loops
    c = sub.max(axis=0)
    c = np.where(np.isfinite(c), c, 0.0)
    E = np.exp(sub - c)  # column-scaled weights, E[h, m-1]
    A = E[1:, :]  # word heads (n, n)
    r = E[0, :]
    Lh = -A.copy()
    Lh[np.arange(n), np.arange(n)] = A.sum(axis=0)
    Lh[0, :] = r
    return Lh, A, r, c


def log_partition(scores):
    """``log Z`` of the single-root arc-factored model (matrix-tree theorem)."""
    Lh, _, _, c = _laplacian(scores)
    sign, logdet = np.linalg.slogdet(Lh)
    if sign <= 0:
        return -np.inf
    return float(logdet + c.sum())


def arc_marginals(scores):
    """Arc marginals ``mu[h, m]`` of the single-root arc-factored model.

    Parameters
    ----------
    scores : (n+1, n+1) float64
        Arc scores ``s(h, m)``; ``-inf`` arcs get marginal 0.

    Returns
    -------
    mu : (n+1, n+1) float64
        ``mu[h, m]``, the probability that ``h`` heads ``m``; column ``m`` sums to 1 and
        row 0 sums to 1 (one root child).
    """
    s = np.asarray(scores, dtype=np.float64)
    N = s.shape[0]
    n = N - 1
    mu = np.zeros((N, N))
    if n == 0:
        return mu
    Lh, A, r, _ = _laplacian(s)
    try:
        inv = np.linalg.inv(Lh)
    except np.linalg.LinAlgError:
        inv = np.linalg.pinv(Lh)
    d = np.diag(inv).copy()  # inv[m, m]
    # mu(h, m) for words h, m (0-based j = m - 1, i = h - 1)
    term1 = A * d[None, :]
    term1[:, 0] = 0.0  # [m != 1]
    term2 = A * inv.T  # A[i, j] * inv[j, i]
    term2[0, :] = 0.0  # [h != 1]
    mu[1:, 1:] = term1 - term2
    mu[0, 1:] = r * inv[:, 0]
    np.clip(mu, 0.0, 1.0, out=mu)
    mu[np.arange(N), np.arange(N)] = 0.0
    return mu


def top_per_column(values, k):
    """``(R, C)`` bool: in each column of ``values``, its ``k`` largest entries (on a tie, the
    lower row first)."""
    order = np.argsort(-values, axis=0, kind="stable")
    rank = np.empty_like(order)
    rows = np.broadcast_to(np.arange(values.shape[0])[:, None], values.shape)
    np.put_along_axis(rank, order, rows, axis=0)
    return rank < k


def prune_mask(scores, mu=None, threshold=1e-4, max_heads=20, single_root=True):
    """Kept arcs: per modifier, heads with ``mu >= threshold * max_h mu``, capped.

    Parameters
    ----------
    scores : (n+1, n+1) float64
        Pruner arc scores.
    mu : (n+1, n+1) float64, optional
        Their marginals (computed when not given).
    threshold : float
        Relative marginal threshold.
    max_heads : int
        At most this many heads per modifier (the highest marginals).
    single_root : bool
        The guaranteed tree (the pruner's best tree) is single-root.

    Returns
    -------
    keep : (n+1, n+1) bool
    """
    s = np.asarray(scores, dtype=np.float64)
    if mu is None:
        mu = arc_marginals(s)
    N = s.shape[0]
    keep = np.zeros((N, N), dtype=bool)
    if N == 1:
        return keep
    col = mu[:, 1:]
    best = col.max(axis=0)
    ok = col >= threshold * best[None, :]
    if max_heads < N:
        ok &= top_per_column(col, max_heads)  # the top max_heads heads by marginal
    keep[:, 1:] = ok & (col > 0)
    heads = chu_liu_edmonds(s, single_root=single_root)
    keep[heads[1:], np.arange(1, N)] = True
    keep[np.arange(N), np.arange(N)] = False
    return keep
