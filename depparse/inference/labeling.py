"""DEPREL labelling of a parsed tree: each head's children labelled jointly.

Given a tree, the children ``c_1 < ... < c_k`` of every head ``h`` are labelled jointly: the
labels maximise ``sum_i w . phi(h, c_i, l_i) + sum_i w . psi(l_{i-1}, l_i)``, found by Viterbi
over the label chain (:func:`depparse.decode.labels.label_chain`; McDonald et al. 2006 label
the children of a head as a sequence in the same way), so that, e.g., the first of two
objects of a verb becomes ``iobj`` and a clause gets at most one subject.  The arc features
``phi(h, m, l)`` conjoin ``l`` with atoms of the head and the modifier (forms, lemmas, UPOS,
XPOS, morphological features, suffixes), direction and distance, the surrounding UPOS, the
grandparent, the nearest siblings of ``m`` on each side, and the UPOS and forms of ``m``'s
own children (a ``case`` child tells ``obl`` from ``obj``) — information the first-order
label models of MSTParser lack, available here because the whole tree is known.  ``psi``
conjoins the two labels with the head's UPOS and with whether the two children lie on the
same side of it (:mod:`depparse.features.labels`).

The labeler is trained on gold trees (:mod:`depparse.learn.labeler`) and applied to
predicted trees.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..decode.labels import children_of, label_chain
from ..encoding.ids import START
from ..features.labels import N_SPECIAL, head_emissions, sentence_bases, transition_tables

__all__ = ["Labeler", "label_arcs", "label_tree"]


@nb.njit(cache=True)
def label_tree(heads, bases, counts, upos, w, mask, nlabels, tables):
    """Best label id of every arc of the tree ``heads`` (index 0 unused).

    ``bases``/``counts`` are the tree's emission hashes
    (:func:`~depparse.features.labels.sentence_bases`), ``tables`` the transition tables of
    the weights (:func:`~depparse.features.labels.transition_tables`).
    """
    N = bases.shape[0]
    out = np.zeros(N, dtype=np.int64)
    ptr, kids = children_of(heads)
    for h in range(N):
        if ptr[h + 1] > ptr[h]:
            ch = kids[ptr[h]:ptr[h + 1]]
            E = head_emissions(ch, bases, counts, w, mask, nlabels)
            T = tables[upos[h]]
            label_chain(E, T[3, START], T, ch, h, N_SPECIAL, out)
    return out


def label_arcs(enc, heads, w, mask, nlabels, tables=None):
    """Best label id of every arc of the tree ``heads`` of an encoded sentence.

    ``tables``: the transition tables for these weights (computed here when not given; pass
    them when labelling many sentences).
    """
    heads = np.asarray(heads, dtype=np.int64)
    if tables is None:
        tables = transition_tables(w, mask, nlabels, int(enc.upos.max()) + 1)
    bases, counts = sentence_bases(heads, enc.form, enc.lemma, enc.upos, enc.xpos, enc.suffix,
                                   enc.cluster, enc.feat_ptr, enc.feat_ids)
    return label_tree(heads, bases, counts, enc.upos, w, mask, nlabels, tables)


class Labeler:
    """DEPREL labeler (joint over each head's children) bound to a vocabulary and weights."""

    def __init__(self, vocab, weights, bits):
        self.vocab = vocab
        self.w = np.ascontiguousarray(weights, dtype=np.float64)
        self.mask = np.uint64((1 << bits) - 1)
        self.nlabels = len(vocab.deprel)
        self.tables = transition_tables(self.w, self.mask, self.nlabels, len(vocab.upos))

    def label(self, enc, heads):
        """Label ids for the arcs of ``heads`` (index 0 unused)."""
        return label_arcs(enc, heads, self.w, self.mask, self.nlabels, self.tables)

    def label_strings(self, enc, heads):
        """DEPREL strings for the arcs of ``heads`` (index 0 is ``""``)."""
        ids = self.label(enc, heads)
        items = self.vocab.deprel.items
        out = np.empty(len(ids), dtype=object)
        out[0] = ""
        for m in range(1, len(ids)):
            out[m] = items[ids[m]]
        return out
