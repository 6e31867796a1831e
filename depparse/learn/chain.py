"""The head-bigram chain's part of training over Z (``gsh`` models; Koo et al. 2010 Sec. 6).

For a ``gsh`` model, Z also holds the chain of :mod:`depparse.decode.head_bigrams` on its own: the
prediction is every head automaton's choice and the chain's choice, with no agreement between
them.  Two relaxations are offered (``TrainConfig.chain_share = s``):

* ``s = 0`` (the default): the chain decodes with its bigram scores alone, as Koo et al.'s
  automata choose their grandparents on their own;
* ``s > 0``: the arc scores are split as dual decomposition splits them (Appendix A.2): the
  automata decode with ``(1 - s) theta``, the chain with ``s theta``, and the update's
  feature difference is ``phi(gold) - (1 - s) phi_arc(z) - s phi_arc(c) - phi_rest(z, c)``.

On en_ewt both are as accurate as the ``gs`` model (experiments README, "Head bigrams").
An update is a list of *terms* ``(feature indices, coefficient)``
(:func:`~depparse.learn.updates.feature_stats`).
"""

from __future__ import annotations

import numpy as np

from ..decode.automata import decode_z
from ..decode.head_bigrams import decode_chain
from ..decode.trees import arc_matrix
from ..features.bigrams import chain_features
from ..features.parts import structure_features

__all__ = ["chain_mistakes", "chain_terms", "decode_relaxed"]


def decode_relaxed(parts, share, single_root):
    """``argmax_{z in Z}``: ``(mods, gpar, chain)``, the automata's structure (see
    :func:`~depparse.decode.automata.decode_z`) and the chain's heads (None without head
    bigrams), with the arc scores split by ``share``."""
    table = parts.part_arrays()
    if not parts.bigrams:
        return (*decode_z(table, single_root), None)
    automata = table
    if share > 0.0:
        arc = np.where(np.isfinite(parts.arc), (1.0 - share) * parts.arc, -np.inf)
        automata = table._replace(arc=arc)
    mods, gpar = decode_z(automata, single_root)
    return mods, gpar, decode_chain(parts.arc, *parts.bigram_arrays(), share)


def chain_mistakes(heads, chain):
    """``wrong[m]``: the head bigram ``(m, m+1)`` of ``chain`` differs from the gold one (all
    False without a chain)."""
    wrong = np.zeros(heads.shape[0], dtype=bool)
    if chain is not None:
        bad = chain != heads
        wrong[1:-1] = bad[1:-1] | bad[2:]
    return wrong


def chain_terms(arrays, mask, on, heads, chain, wrong, mods, share):
    """The update terms of the chain: its wrong head bigrams (gold ``+1``, predicted ``-1``)
    and, with ``share > 0``, the arcs of the automata ``+share`` and of the chain
    ``-share`` (``arrays``: the encoded sentence's)."""
    terms = []
    if wrong.any():
        terms += [(chain_features(*arrays, mask, on, heads, wrong), 1.0),
                  (chain_features(*arrays, mask, on, chain, wrong), -1.0)]
    if share > 0.0:
        every = np.ones(heads.shape[0], dtype=bool)
        cmods = arc_matrix(chain)
        terms += [(structure_features(*arrays, mask, on, 0, mods, heads, every), share),
                  (structure_features(*arrays, mask, on, 0, cmods, heads, every), -share)]
    return terms
