"""Copies between arrays inside kernels, by loops rather than slice assignment.

``dst[a:b] = src`` with an array on the right makes Numba compile, once in every process that
compiles such a kernel, the message it raises when the shapes differ
(``numba.np.arrayobj.ol_raise_with_shape_context_cpu``: f-strings over the shapes), once for
1-D and once for 2-D slices: 2.7 s of CPU for the 1-D one alone, against 0.45 s for the whole
kernel with a loop (measured on a kernel of one copy).  The copies here are of shapes the
caller has made equal, so they have no such check.
"""

from __future__ import annotations

import numba as nb

__all__ = ["put", "put2"]


@nb.njit(cache=True, inline="always")
def put(dst, at, src, n):
    """``dst[at:at + n] = src[:n]`` (1-D)."""
    for i in range(n):
        dst[at + i] = src[i]


@nb.njit(cache=True, inline="always")
def put2(dst, src):
    """``dst[:, :] = src`` (2-D, the same shape)."""
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            dst[i, j] = src[i, j]
