"""Does this machine's BLAS compute each row of a matrix product alike, whatever the number of
rows?  The batched encoder and the packed network are bit for bit their one-sentence and
padded forms only where it does (``MiniLM.iter_layer_vectors``, ``numpy_forward``).

OpenBLAS 0.3.31's ``sgemm`` does with its SkylakeX (AVX-512) kernels.  With its Haswell
kernels (AVX2 alone: the AMD EPYC of 2026-11-28, measured) the rows of a product beyond its
first full tiles of 24 rows go through smaller kernels that sum in another order: the same
row then differs in its last bits between a product of 37 rows and one of 200.  There a
sentence's vectors equal those it gets alone to float32 round-off: measured, at most 1.9e-6
apart on the encoder's vectors (values up to 6.0: a few units in the last place), 1.4e-6 on
the network's representations (values below 1; the differences grow along the recurrence)
and 2.2e-5 on its arc scores (values up to about 10, each a sum over 256 products), in
tests/test_network.py's batches at 128, 192 and 256 units, three seeds.  The tests that hold
those bit for bit compare with :func:`assert_rows_equal`: bit for bit where :func:`rows_alike`,
else to such round-off.
"""

from __future__ import annotations

import functools

import numpy as np

#: The tolerances where rows are not alike: five to nine times the differences measured above.
ENCODER_TOL = 1e-5
NETWORK_TOL = 1e-5
SCORE_TOL = 2e-4


@functools.cache
def rows_alike() -> bool:
    """True when every row of ``A[:n] @ W`` equals that row of ``A @ W``, bit for bit, for
    every ``n`` from 2 to 200 (float32; the shapes of the encoder's and the network's
    products: 384 x 384, 384 x 1536, 256 x 1024)."""
    rng = np.random.default_rng(0)
    for k, m in ((384, 384), (384, 1536), (256, 1024)):
        w = rng.standard_normal((k, m)).astype(np.float32)
        a = rng.standard_normal((200, k)).astype(np.float32)
        full = a @ w
        if any(not np.array_equal(a[:n] @ w, full[:n]) for n in range(2, 200)):
            return False
    return True


def assert_rows_equal(got, want, tol: float) -> None:
    """``got`` equals ``want``: bit for bit where :func:`rows_alike`, else to ``tol``
    (absolute and relative); same shape and dtype either way."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if rows_alike():
        assert got.tobytes() == want.tobytes()
    else:
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
