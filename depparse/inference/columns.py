"""The tag-column policy: which of a sentence's LEMMA, UPOS, XPOS and FEATS columns the
model's tagger fills in before it is parsed.

One module, used wherever sentences are parsed: the API (``Parser.iter_parse_results``), the
command line (a file's columns on ``--resume``, stdin's), the Dask shards
(:mod:`depparse.shards`) and the server (:mod:`depparse.serve.workers`).

The rule, per sentence (what a careful user expects: a file tagged in places is parsed as
well in its untagged sentences as in the others, and no tag the input gives is replaced
unasked):

* ``retag``: all four columns;
* an *untagged* sentence (the four columns ``_`` on every word): the columns the model was
  trained with (:func:`trained_columns`), wherever the sentence is in its file;
* a tagged sentence: the columns its *file* lacks -- those ``_`` on every word of the file's
  first :data:`TAG_WINDOW` sentences although the model was trained with them
  (:meth:`ColumnPolicy.lacking`; a file without XPOS, say) -- where they are ``_`` on every
  word of the sentence.  A tagged sentence whose words happen to have no features (``Thank
  you !``) keeps its ``_`` in FEATS.

A file is a run of sentences with the same ``Sentence.source``.  A run that starts inside a
file (``--resume``, a shard) is given the file's decision, made on its first sentences by
:meth:`ColumnPolicy.of_file`, so that it chooses as one run from the start would.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterable, Iterator

from ..errors import InputWarning

__all__ = ["TAG_COLUMNS", "TAG_WINDOW", "ColumnPolicy", "blank_columns", "trained_columns"]

#: The columns the tagger can predict, and the Sentence attributes that hold them.
TAG_COLUMNS = {"UPOS": "upos", "XPOS": "xpos", "LEMMA": "lemmas", "FEATS": "feats"}

#: How many sentences at the start of a file decide which tag columns the whole file lacks.
TAG_WINDOW = 100

# (column, Sentence attribute, vocabulary field, the blank value in the Sentence)
_COLUMNS = (("UPOS", "upos", "upos", "_"), ("XPOS", "xpos", "xpos", "_"),
            ("LEMMA", "lemmas", "lemma", "_"), ("FEATS", "feats", "feat", ""))


def blank_columns(sentence) -> tuple:
    """The tag columns (of :data:`TAG_COLUMNS`) that are ``_`` on every word of a sentence."""
    return tuple(name for name, attr, _, blank in _COLUMNS
                 if (getattr(sentence, attr)[1:] == blank).all())


def trained_columns(vocab) -> tuple:
    """The tag columns a model was trained with (its vocabularies hold values other than
    ``_``), in the order of :data:`TAG_COLUMNS`; ``()`` for a model without a vocabulary."""
    if vocab is None:
        return ()
    return tuple(name for name, _, field, _ in _COLUMNS
                 if any(x not in ("_", "") for x in getattr(vocab, field).to_list()))


class ColumnPolicy:
    """The rule of this module for one model: the columns it was trained with (``trained``)
    and whether it has a tagger to fill them in (``has_tagger``)."""

    def __init__(self, trained: tuple, has_tagger: bool):
        self.trained = tuple(trained)
        self.has_tagger = bool(has_tagger)

    def lacking(self, sentences: Iterable) -> tuple:
        """The tag columns that are ``_`` on every word of ``sentences`` although the model
        was trained with them (``()`` for no sentence)."""
        sentences = list(sentences)
        if not sentences:
            return ()
        blank = set.intersection(*(set(blank_columns(s)) for s in sentences))
        return tuple(c for c in self.trained if c in blank)

    def of_file(self, sentences: Iterable) -> tuple:
        """A file's decision: :meth:`lacking` of its first :data:`TAG_WINDOW` sentences
        (``sentences``: the file's, from its start; read no further)."""
        return self.lacking(itertools.islice(sentences, TAG_WINDOW))

    def assign(self, sentences: Iterable, retag: bool = False,
               file_columns: dict | None = None) -> Iterator[tuple]:
        """Each sentence with the columns the tagger fills in for it: ``(Sentence,
        columns)`` pairs, in order, lazily (the module's rule).  ``file_columns``:
        ``{source: columns}``, the decision for the files it names (a stream that starts
        inside a file).  Without a tagger nothing is predicted, and sentences that lack
        columns the model was trained with are named in one warning
        (:class:`~depparse.errors.InputWarning`)."""
        if retag and self.has_tagger:
            for s in sentences:
                yield s, tuple(TAG_COLUMNS)
            return
        known = dict(file_columns or {})
        it = iter(sentences)
        warned = False
        head = next(it, None)
        while head is not None:
            source = head.source
            window = [head]
            head = None
            if source not in known:
                for s in it:  # the file's first sentences (or all, for a short file)
                    if s.source != source:
                        head = s
                        break
                    window.append(s)
                    if len(window) == TAG_WINDOW:
                        break
                known[source] = self.lacking(window)
            lacking = known[source]
            stream = itertools.chain(window, it) if head is None else iter(window)
            for s in stream:
                if s.source != source:
                    head = s
                    break
                blank = blank_columns(s)
                cols = self.trained if len(blank) == 4 else tuple(c for c in lacking
                                                                   if c in blank)
                if cols and not self.has_tagger:
                    if not warned:
                        warned = True
                        warnings.warn(
                            f"{s.source}:{s.line_no}: the input has no {'/'.join(cols)} "
                            f"(every word has '_'), which this model was trained with and "
                            f"has no tagger for: its trees will be much worse; give tagged "
                            f"input, or use a model with a tagger", InputWarning, stacklevel=3)
                    cols = ()
                yield s, cols
