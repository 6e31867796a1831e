"""The reserved ids of every vocabulary, and the packing of contextual class codes.

A :class:`Vocab` maps the strings of one field (lower-cased forms, lemmas, UPOS, morphological
features, prefixes, suffixes) to dense ids.  Ids 0-5 are reserved in every vocabulary:

====  =========  ======================================================================
id    name       used for
====  =========  ======================================================================
0     <UNK>      a string not seen in training (unknown words, unknown UPOS, ...)
1     <ROOT>     every field of the artificial root (index 0 of a sentence)
2     <BOS>      context positions before the root (``i - 1`` of index 0)
3     <EOS>      context positions after the last word
4     <START>    the START state of a head automaton (sibling features)
5     <END>      the END state of a head automaton
====  =========  ======================================================================
"""

from __future__ import annotations

__all__ = ["BOS", "CLUSTER_SHIFT", "END", "EOS", "ROOT", "SPECIALS", "START", "UNK",
           "cluster_code"]

SPECIALS = ("<UNK>", "<ROOT>", "<BOS>", "<EOS>", "<START>", "<END>")
UNK, ROOT, BOS, EOS, START, END = range(6)
CLUSTER_SHIFT = 20  # cluster codes: fine id | coarse id << CLUSTER_SHIFT


def cluster_code(fine, coarse):
    """The code of a word's contextual classes (ints or int64 arrays) in ``Encoded.cluster``."""
    return fine | (coarse << CLUSTER_SHIFT)
