"""DEPREL labelling of a parsed tree: each head's children labelled jointly.

Given a tree, the children ``c_1 < ... < c_k`` of every head ``h`` are labelled jointly: the
labels maximise ``sum_i w . phi(h, c_i, l_i) + sum_i w . psi(l_{i-1}, l_i)``, found by Viterbi
over the label chain (:func:`depparse.decode.label_chain.label_chain`; McDonald et al. 2006 label
the children of a head as a sequence in the same way), so that, e.g., the first of two
objects of a verb becomes ``iobj`` and a clause gets at most one subject.  The arc features
``phi(h, m, l)`` conjoin ``l`` with atoms of the head and the modifier (forms, lemmas, UPOS,
XPOS, morphological features, suffixes), direction and distance, the surrounding UPOS, the
grandparent, the nearest siblings of ``m`` on each side, and the UPOS and forms of ``m``'s
own children (a ``case`` child tells ``obl`` from ``obj``) — information the first-order
label models of MSTParser lack, available here because the whole tree is known.  ``psi``
conjoins the two labels with the head's UPOS and with whether the two children lie on the
same side of it (:mod:`depparse.features.labels`).

With a model's ``label_constraints`` component the chain is decoded under soft
constraints (Anzaroot et al. 2014; :mod:`depparse.features.label_constraints`: at most one
subject, an ``iobj`` needs an object or a clausal complement ...) whose penalties were
learned on held-out labels, by dual decomposition
(:func:`depparse.decode.label_chain.soft_label_chain`).

The labeler is trained on gold trees (:mod:`depparse.learn.labeler`) and applied to
predicted trees.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..decode.label_chain import children_of, soft_label_chain
from ..encoding.ids import START
from ..errors import ModelError
from ..features.labels import N_SPECIAL, head_emissions, sentence_bases, transition_tables

__all__ = ["CONSTRAINTS_VERSION", "Labeler", "label_arcs", "label_tree", "no_constraints"]

CONSTRAINTS_VERSION = 1  # of the label_constraints component


def no_constraints(nlabels):
    """``(A, b, rho)`` of an empty constraint set (plain label chains)."""
    return np.zeros((0, nlabels)), np.zeros(0), np.zeros(0)


# nogil: the parse's helper thread runs meanwhile (Engine.iter_parsed)
@nb.njit(cache=True, nogil=True)
def label_tree(heads, bases, counts, upos, w, mask, nlabels, tables, extra, A, b, rho, max_iter,
               stats):
    """Best label id of every arc of the tree ``heads`` (index 0 unused).

    ``bases``/``counts`` are the tree's emission hashes
    (:func:`~depparse.features.labels.sentence_bases`), ``tables`` the transition tables of
    the weights (:func:`~depparse.features.labels.transition_tables`), ``extra`` (N, labels)
    scores added to the emissions of each arc (the dense term; zeros without); ``A``, ``b``, ``rho``
    the soft constraints (none: ``K = 0``) and ``max_iter`` their budget of dual steps per
    head.  ``stats`` (int64, 3) accumulates: heads whose labels needed dual decomposition,
    those of them proved optimal, and the dual steps.
    """
    N = bases.shape[0]
    out = np.zeros(N, dtype=np.int64)
    ptr, kids = children_of(heads)
    for h in range(N):
        if ptr[h + 1] > ptr[h]:
            ch = kids[ptr[h]:ptr[h + 1]]
            E = head_emissions(ch, bases, counts, w, mask, nlabels)
            for i in range(ch.shape[0]):
                for j in range(E.shape[1]):  # (a loop: no row assignment, slices.put)
                    E[i, j] += extra[ch[i], j]
            T = tables[upos[h]]
            it, proved = soft_label_chain(E, T[3, START], T, ch, h, N_SPECIAL, A, b, rho,
                                          max_iter, out)
            if it > 0:
                stats[0] += 1
                stats[1] += 1 if proved else 0
                stats[2] += it
    return out


def label_arcs(enc, heads, w, mask, nlabels, tables=None, constraints=None, max_iter=100,
               stats=None, extra=None):
    """Best label id of every arc of the tree ``heads`` of an encoded sentence.

    ``tables``: the transition tables for these weights (computed here when not given; pass
    them when labelling many sentences); ``constraints``: ``(A, b, rho)`` soft constraints
    (none when not given); ``stats``: see :func:`label_tree`; ``extra``: (N, labels) scores
    added to the arcs' emissions (the dense term, :mod:`depparse.features.label_dense`).
    """
    heads = np.asarray(heads, dtype=np.int64)
    if tables is None:
        tables = transition_tables(w, mask, nlabels, int(enc.upos.max()) + 1)
    A, b, rho = no_constraints(nlabels) if constraints is None else constraints
    if stats is None:
        stats = np.zeros(3, dtype=np.int64)
    if extra is None:
        extra = np.zeros((len(heads), nlabels))
    bases, counts = sentence_bases(heads, enc.form, enc.lemma, enc.upos, enc.xpos, enc.suffix,
                                   enc.cluster, enc.feat_ptr, enc.feat_ids)
    return label_tree(heads, bases, counts, enc.upos, w, mask, nlabels, tables, extra, A, b, rho,
                      max_iter, stats)


class Labeler:
    """DEPREL labeler (joint over each head's children) bound to a vocabulary and weights.

    ``constraints``: the model's ``label_constraints`` component, if any (soft constraints
    with learned penalties); ``dense``: its labeler dense term
    (:class:`~depparse.features.label_dense.LabelDense`), if any.  ``stats`` counts, over all
    calls: heads labelled by dual decomposition, those proved optimal, dual steps.
    """

    def __init__(self, vocab, weights, bits, constraints=None, dense=None):
        self.vocab = vocab
        self.w = np.ascontiguousarray(weights, dtype=np.float64)
        self.mask = np.uint64((1 << bits) - 1)
        self.nlabels = len(vocab.deprel)
        self.tables = transition_tables(self.w, self.mask, self.nlabels, len(vocab.upos))
        self.constraints = no_constraints(self.nlabels)
        self.max_iter = 100
        self.names: list[str] = []
        if constraints is not None:
            meta = constraints.meta
            if meta.get("version") != CONSTRAINTS_VERSION:
                raise ModelError(f"label constraints of version {meta.get('version')!r}; this "
                                 f"depparse reads version {CONSTRAINTS_VERSION}: retrain the "
                                 "model or use a newer depparse")
            try:
                A, b, rho = (np.ascontiguousarray(constraints.arrays[k], dtype=np.float64)
                             for k in ("A", "b", "rho"))
            except KeyError as e:
                raise ModelError(f"the model's label constraints lack the array {e}: corrupt "
                                 "model file") from None
            if A.shape != (len(b), self.nlabels) or rho.shape != b.shape:
                raise ModelError(f"label constraints of shape {A.shape} for {self.nlabels} "
                                 "labels: the model file is inconsistent")
            self.constraints = (A, b, rho)
            self.max_iter = int(meta.get("max_iter", 100))
            self.names = list(meta.get("names", []))
        self.stats = np.zeros(3, dtype=np.int64)
        self.dense = dense

    def label(self, enc, heads, extra=None):
        """Label ids for the arcs of ``heads`` (index 0 unused); ``extra`` (N, labels),
        optional: scores added to each arc's labels (another model's view, such as the
        learned network's weighted log-probabilities: the product of the two experts)."""
        dense = None if self.dense is None else self.dense.scores(enc, heads)
        if extra is None:
            extra = dense
        elif dense is not None:
            extra = dense + extra
        return label_arcs(enc, heads, self.w, self.mask, self.nlabels, self.tables,
                          self.constraints, self.max_iter, self.stats, extra)

    def label_strings(self, enc, heads, extra=None):
        """DEPREL strings for the arcs of ``heads`` (index 0 is ``""``; ``extra``: as in
        :meth:`label`)."""
        ids = self.label(enc, heads, extra)
        items = self.vocab.deprel.items
        out = np.empty(len(ids), dtype=object)
        out[0] = ""
        for m in range(1, len(ids)):
            out[m] = items[ids[m]]
        return out
