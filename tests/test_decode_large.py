"""Fuzzing the decoders on large random inputs (n up to 100): the output is always a valid tree.

Scores include ties (small integers), pruned (-inf) arcs, and huge (1e300) or tiny (1e-300)
magnitudes.  Dual decomposition runs on random *sparse* part tables (the production layout,
about five candidate heads per word), which is how it is used on long sentences.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from naive import assert_tree

from depparse.decode import NoSpanningTreeError, chu_liu_edmonds, dual_decompose, eisner
from depparse.decode.part_table import PartTable, build_layout

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


def _scores(rng, shape, kind):
    s = rng.normal(size=shape)
    if kind == "ties":
        s = np.round(s)
    elif kind == "huge":
        s = s * 1e300
    elif kind == "tiny":
        s = s * 1e-300
    return s


case = st.tuples(st.integers(1, 100), st.sampled_from(["normal", "ties", "huge", "tiny"]),
                 st.integers(0, 2**32 - 1), st.booleans())


@settings(max_examples=60, **SETTINGS)
@given(case)
def test_cle_and_eisner_large(c):
    n, kind, seed, single = c
    rng = np.random.default_rng(seed)
    N = n + 1
    s = _scores(rng, (N, N), kind)
    s[rng.random((N, N)) < 0.5] = -np.inf
    s[0, :] = rng.normal(size=N)  # the root can reach every word: a tree exists
    heads = chu_liu_edmonds(s, single_root=single)
    assert_tree(heads, N, single, arc=s)
    if n <= 60:
        heads = eisner(s, single_root=single)
        assert_tree(heads, N, single)


def random_parts(rng, n, kind, grandparents, heads_per_word=5):
    N = n + 1
    keep = np.zeros((N, N), dtype=bool)
    for m in range(1, N):
        keep[rng.choice(N, size=min(N, heads_per_word), replace=False), m] = True
    keep[0, 1:] = True  # a tree always exists
    keep[np.arange(N), np.arange(N)] = False
    cand, cand_off, cand_len, gp, gp_off, gp_len, tab_off, size = build_layout(keep,
                                                                               grandparents)
    arc = np.where(keep, _scores(rng, (N, N), kind), -np.inf)
    tab = _scores(rng, size, kind)
    # transitions to an earlier state are impossible in the layout: -inf, as fill_scores does
    for slot in range(tab_off.shape[0]):
        for d in range(2):
            h = np.searchsorted(gp_off, slot, side="right") - 1
            L = cand_len[h, d]
            o = tab_off[slot, d]
            T = tab[o:o + (L + 1) ** 2].reshape(L + 1, L + 1)
            T[np.tril_indices(L + 1, -1)] = -np.inf
    return PartTable(arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off,
                     grandparents)


@settings(max_examples=40, **SETTINGS)
@given(case, st.booleans(), st.booleans())
def test_dual_decomposition_large(c, grandparents, projective):
    n, kind, seed, single = c
    rng = np.random.default_rng(seed)
    if projective:
        n = min(n, 50)
    pt = random_parts(rng, n, kind, grandparents)
    try:
        r = dual_decompose(pt, max_iter=30, single_root=single, projective=projective)
    except NoSpanningTreeError:
        assert projective  # a projective tree under the kept arcs may not exist
        return
    assert_tree(r.heads, n + 1, single)
    assert 1 <= r.iterations <= 30
