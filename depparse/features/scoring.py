"""One scoring interface: every scorer adds its terms into the part tables of a batch.

The decoders see a sentence only through its part table (:class:`~depparse.decode.PartTable`:
arcs, the head automata's sibling and grandparent transitions, the head bigrams; Koo et al.
2010, Sec. 3).  Its scores are a sum of terms, one per scorer::

    tables = score(batch, [SparseScorer(w, bits, order), DenseScorer(dense),
                           NetworkScorer(network, factor)], order)

- ``batch``: a sequence of :class:`Item` ``(enc, keep)``, an encoded sentence and its kept
  arcs ((N, N) bool, N = n + 1);
- :func:`score` lays out one table per item over its kept arcs (:func:`empty_tables`: every
  kept part scored 0, every other arc ``-inf``), then calls each scorer's ``add(batch,
  tables)`` in turn, which adds its terms into every table (the first scorer's ``fill``
  where it has one: the same sums, written in place);
- the scorers: the hashed features' weights (:class:`SparseScorer`, every part family), the
  dense contextual arc term (:class:`DenseScorer`, Lei et al. 2014) and the learned network's
  ``log P(h | m)`` (:class:`NetworkScorer`, Dozat and Manning 2017), the last two on arcs
  only.

A scorer keeps nothing between calls.  Where a term is computed for many sentences at once
(the network's forward pass over the batch's sentences that carry no outputs yet), each
sentence's scores are those it gets alone to float32 round-off; tests/blas_rows.py states the
tolerance and tests/test_network.py holds it on this machine's BLAS.  Scorers add in the
order given; the parser's and the trainer's order is sparse, dense, network.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple, Protocol

import numpy as np

from ..decode.part_table import PartTable, add_bigrams, build_layout
from .bigrams import fill_bigrams
from .parts import ALL_TEMPLATES, Weights, WordArrays, fill_scores

__all__ = ["DenseScorer", "Item", "NetworkScorer", "Scorer", "SparseScorer", "build_parts",
           "empty_tables", "model_scorers", "score"]


class Item(NamedTuple):
    """One sentence of a batch: ``enc`` (:class:`~depparse.encoding.Encoded`) and ``keep``
    ((N, N) bool, its kept arcs)."""
    enc: object
    keep: np.ndarray


class Scorer(Protocol):
    """Adds its terms into the part tables of a batch (``tables[i]`` is ``batch[i]``'s, laid
    out over its kept arcs)."""

    def add(self, batch: Sequence[Item], tables: Sequence[PartTable]) -> None: ...


def empty_tables(batch: Sequence[Item], order: int, bigrams: bool = False) -> list[PartTable]:
    """One part table per item over its kept arcs, every kept part scored 0: ``arc`` (N, N)
    is 0 on the kept arcs and ``-inf`` elsewhere (the root's column and the diagonal too);
    ``tab`` the automata's transitions (``order`` 0: arcs only, 1: + siblings, 2: + grandparents
    and grand-siblings); the head bigrams of the kept arcs where ``bigrams``."""
    tables = []
    for enc, keep in batch:
        N = enc.n + 1
        if keep.shape != (N, N):
            raise ValueError(f"kept arcs of shape {keep.shape} for a sentence of {enc.n} words")
        cand, cand_off, cand_len, gp, gp_off, gp_len, tab_off, size = build_layout(
            keep, order == 2)
        arc = np.full((N, N), -np.inf)
        ok = keep.copy()
        ok[:, 0] = False
        np.fill_diagonal(ok, False)
        arc[ok] = 0.0
        t = PartTable(arc, cand, cand_off, cand_len, gp, gp_off, gp_len, np.zeros(size),
                      tab_off, order == 2)
        tables.append(add_bigrams(t, keep) if bigrams else t)
    return tables


def score(batch: Sequence[Item], scorers: Sequence[Scorer], order: int,
          bigrams: bool = False) -> list[PartTable]:
    """The part tables of a batch: :func:`empty_tables`, then each scorer's terms added in
    turn (a scorer that is None is skipped)."""
    batch = [Item(*it) for it in batch]
    tables = empty_tables(batch, order, bigrams)
    scorers = [s for s in scorers if s is not None]
    for i, s in enumerate(scorers):
        if i == 0 and hasattr(s, "fill"):
            s.fill(batch, tables)  # into tables that hold no terms yet: its add, no scratch
        else:
            s.add(batch, tables)
    return tables


class SparseScorer:
    """The hashed features' scores ``w . phi(part)`` of every part family of the table
    (:func:`~depparse.features.parts.fill_scores`; the head bigrams',
    :func:`~depparse.features.bigrams.fill_bigrams`, where the table has them).

    Parameters
    ----------
    w : (2**bits,) float64
        The weights.
    bits : int
    order : int
        The families scored: 0 arcs, 1 + siblings, 2 + grandparents (the tables' order).
    on : uint8 array, optional
        Template switches (:func:`~depparse.features.parts.template_switches`; default every
        template).
    """

    def __init__(self, w, bits, order, on=None):
        self.weights = Weights(w, np.uint64((1 << bits) - 1), ALL_TEMPLATES if on is None else on)
        self.order = order

    def add(self, batch, tables) -> None:
        # the kernels write their scores: into scratch tables of the same layout, then added
        scratch = [replace(t, arc=np.empty_like(t.arc), tab=np.zeros_like(t.tab),
                           hb=None if t.hb is None else np.zeros_like(t.hb)) for t in tables]
        self.fill(batch, scratch)
        for t, s in zip(tables, scratch, strict=True):
            t.arc += s.arc
            t.tab += s.tab
            if t.hb is not None:
                t.hb += s.hb

    def fill(self, batch, tables) -> None:
        """:meth:`add` into tables that hold no terms yet (:func:`empty_tables`): the kernels
        write the scores in place (``-inf`` on the arcs not kept, as the table has them; the
        bits of adding, since 0 + x is x)."""
        wt = self.weights
        for (enc, keep), t in zip(batch, tables, strict=True):
            fill_scores(WordArrays(*enc.arrays()), wt, self.order, keep, t.part_arrays())
            if t.hb is not None:
                fill_bigrams(*enc.arrays(), wt.w, wt.mask, wt.on, t.hd, t.hd_off, t.hd_len,
                             t.hb_off, t.hb)


class DenseScorer:
    """The dense contextual arc term (:class:`~depparse.features.dense.DenseArcs`, Lei et al.
    2014) on the kept arcs; the sentences must carry their encoder vectors."""

    def __init__(self, dense):
        self.dense = dense

    def add(self, batch, tables) -> None:
        for (enc, keep), t in zip(batch, tables, strict=True):
            self.dense.add_scores(enc, keep, t.arc)


class NetworkScorer:
    """The learned network's arc term, ``factor * scale * log P(h | m)`` on the kept arcs
    (:class:`~depparse.network.biaffine.Network`; ``factor``: 1 in training, the parse-time
    weight ``ModelConfig.learned_arc_weight`` or ``learned_arc_weight_given`` in parsing).

    A sentence's log-probabilities are its attached outputs (``Encoded.network``, set by
    whoever ran the forward pass over its chunk); those of the batch's other sentences come
    from one batched forward pass here (a sentence alone: its own pass,
    :meth:`~depparse.network.biaffine.Network.arc_logprobs`), used and not kept.
    """

    def __init__(self, network, factor=1.0):
        self.network = network
        self.factor = float(factor)

    def add(self, batch, tables) -> None:
        missing = [enc for enc, _ in batch if enc.network is None]
        # one sentence alone: its own pass (arc_logprobs, as keep_mask reads it); more: one
        # pass over them all
        fresh = iter([self.network.arc_logprobs(missing[0])] if len(missing) == 1
                     else self.network.batch_logprobs(missing) if missing else ())
        f = self.factor * self.network.scale
        for (enc, keep), t in zip(batch, tables, strict=True):
            lp = next(fresh) if enc.network is None else enc.network[0]
            t.arc[keep] += f * lp[keep]


def model_scorers(w, bits, order, on=None, dense=None, network=None, factor=1.0) -> list:
    """A model's scorers in the order they add: :class:`SparseScorer` of the weights ``w``
    (2**bits; ``on`` template switches), :class:`DenseScorer` of the dense arc term ``dense``
    and :class:`NetworkScorer` of ``network`` times ``factor``, each where given (None in its
    place otherwise, which :func:`score` skips).  The parser's and the trainer's tables."""
    return [SparseScorer(w, bits, order, on),
            None if dense is None else DenseScorer(dense),
            None if network is None else NetworkScorer(network, factor)]


def build_parts(enc, keep, w, bits, order, dense=None, on=None, bigrams=False):
    """The part table of one sentence under sparse weights and, where given, a dense arc
    term: :func:`score` of ``[(enc, keep)]`` with :class:`SparseScorer` and
    :class:`DenseScorer` (the sparse model's table, as the trainer's tests build it).

    ``w`` (2**bits,) float64; ``order`` 0, 1 or 2; ``on`` template switches; ``bigrams``: also
    the head bigrams of the kept arcs (``gsh`` models, :mod:`depparse.decode.head_bigrams`).
    """
    return score([(enc, keep)], model_scorers(w, bits, order, on, dense), order, bigrams)[0]
