"""Candidate arcs: which arcs the higher-order decoders may use (Koo et al. 2010, Sec. 7).

``sib`` and ``gs`` models score every arc with their arc-factored pruner (its own hashed
weights over the arc features of :mod:`depparse.features.parts`), compute the arc marginals by
the matrix-tree theorem and keep, for each word, the heads whose marginal is at least
``threshold`` times that of its best head, at most ``max_heads`` of them
(:func:`depparse.decode.marginals.prune_mask`).  ``mst`` models keep every arc.
"""

from __future__ import annotations

from ..decode.marginals import arc_marginals, prune_mask
from ..features.parts import all_arcs, score_all_arcs

__all__ = ["candidate_arcs"]


def candidate_arcs(enc, pruner=None, bits=0, threshold=1e-5, max_heads=20, single_root=True,
                   dense=None):
    """Kept arcs ``(N, N)`` bool of an encoded sentence.

    Parameters
    ----------
    enc : depparse.encoding.Encoded
    pruner : float64 array of size ``2**bits``, optional
        The pruner's weights; None keeps every arc.
    bits : int
    threshold, max_heads : float, int
        See the module docstring.
    single_root : bool
        The pruner's best tree, always kept so that a tree exists, has a single root.
    dense : DenseArcs, optional
        The pruner's dense term (a model's ``pruner_dense`` component), added to its scores.
    """
    if pruner is None:
        return all_arcs(enc.n + 1)
    s = score_all_arcs(enc, pruner, bits)
    if dense is not None:
        dense.add_scores(enc, all_arcs(enc.n + 1), s)
    return prune_mask(s, arc_marginals(s), threshold, max_heads, single_root)
