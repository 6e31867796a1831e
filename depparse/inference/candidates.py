"""Candidate arcs: which arcs the higher-order decoders may use (Koo et al. 2010, Sec. 7).

``sib`` and ``gs`` models score every arc with their arc-factored pruner (its own hashed
weights over the arc features of :mod:`depparse.features.parts`), compute the arc marginals by
the matrix-tree theorem and keep, for each word, the heads whose marginal is at least
``threshold`` times that of its best head, at most ``max_heads`` of them
(:func:`depparse.decode.marginals.prune_mask`).  ``mst`` models keep every arc.

A model with a learned network (:mod:`depparse.network.biaffine`) also keeps, for each word,
the heads whose network probability ``P(h | m)`` is at least ``network_threshold`` times that
of the network's best head, at most ``max_heads`` of them (:func:`network_heads`): the network
alone finds 91.5% of en_ewt dev's heads, the pruner's first-order features fewer, and the two
miss different arcs.  On en_ewt dev (gold tags) the shipped model's pruner alone keeps 99.61% of
the gold arcs at 5.15 heads per word; with the network's heads at 1e-3, 99.90% at 5.36
(pt_bosque 99.64% at 6.43 -> 99.88% at 7.07, tr_imst 99.02% at 8.88 -> 99.73% at 10.02;
benchmarks/results/proofs.md).

A tree is proved optimal over the kept arcs only (:mod:`depparse.decode.bnb`); ``parse --proof
all`` decodes over every arc instead (:meth:`~depparse.inference.engine.Engine.decode`).
"""

from __future__ import annotations

import numpy as np

from ..decode.marginals import arc_marginals, prune_mask, top_per_column
from ..features.parts import all_arcs, score_all_arcs

__all__ = ["candidate_arcs", "network_heads"]


def network_heads(logp, threshold, max_heads=None):
    """``(N, N)`` bool: for each word ``m``, the heads ``h`` with ``P(h | m) >= threshold *
    max_h' P(h' | m)`` under the network's ``logp[h, m] = log P(h | m)`` (never ``m = 0`` nor
    ``h = m``; a threshold of 0 keeps nothing), at most ``max_heads`` of them (the most
    probable; ties broken by the lower head index).

    Parameters
    ----------
    logp : (N, N) float64
        Column ``m`` is the network's log-distribution over the heads of ``m``.
    threshold : float
        In ``[0, 1]``.
    max_heads : int, optional
        The cap, as the pruner's (``--prune-max-heads``); None: no cap.  Where the network is
        unsure of every word, as in a long line of account codes and sums, the threshold
        alone keeps most heads of a long sentence (en_ewt test's raw text: a 112-word line
        kept 8,927 arcs, about 80 heads per word with the pruner's, against the pruner's
        2,163), and branch and bound over that many arcs did not close in 120 s.
    """
    lp = np.array(logp, dtype=np.float64)
    N = lp.shape[0]
    keep = np.zeros((N, N), dtype=bool)
    if N == 1 or threshold <= 0:
        return keep
    lp[np.arange(N), np.arange(N)] = -np.inf
    col = lp[:, 1:]
    best = col.max(axis=0)
    keep[:, 1:] = np.isfinite(col) & (col >= best[None, :] + np.log(threshold))
    if max_heads is not None and max_heads < N - 1:
        keep[:, 1:] &= top_per_column(col, max_heads)
    return keep


def candidate_arcs(enc, pruner=None, bits=0, threshold=1e-5, max_heads=20, single_root=True,
                   dense=None, network=None, network_threshold=0.0):
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
    network : (N, N) float64, optional
        The learned network's ``log P(h | m)`` of the sentence: the heads of
        :func:`network_heads` at ``network_threshold`` are kept too.
    """
    if pruner is None:
        return all_arcs(enc.n + 1)
    s = score_all_arcs(enc, pruner, bits)
    if dense is not None:
        dense.add_scores(enc, all_arcs(enc.n + 1), s)
    keep = prune_mask(s, arc_marginals(s), threshold, max_heads, single_root)
    if network is not None and network_threshold > 0:
        keep |= network_heads(network, network_threshold, max_heads)
    return keep
