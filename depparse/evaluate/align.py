"""The CoNLL 2018 word alignment: system words matched to gold words through the text.

Zeman et al. (2018), *CoNLL 2018 Shared Task: Multilingual Parsing from Raw Text to
Universal Dependencies*, Sec. 2.5 and its evaluation script ``conll18_ud_eval.py``: when the
system tokenized raw text itself, its words are not the gold words.  Both files must hold the
same characters once whitespace is removed (the concatenation of the FORMs of the *tokens*:
multiword-token lines and the words outside them, with the characters of Unicode category
``Zs`` removed).  Every token then has a character span in that common string:

* **tokens** and **sentences** are scored as spans: a system span is correct when a gold span
  has the same start and end;
* **words** outside multiword tokens are aligned when their spans are equal;
* where a multiword token occurs on either side, the script takes the smallest stretch of
  text that covers the overlapping multiword tokens of both sides, and aligns the words
  inside it by the longest common subsequence of their lowercased FORMs.

This module re-implements that procedure (written for depparse, not copied, and checked
against the official script, ``udeval`` in the UD ``udtools`` package, in
``tests/test_evaluate.py``).  It builds :class:`Tokenized` views of parsed files and returns
the aligned word pairs; :mod:`depparse.evaluate` turns them into scores.
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Sequence
from functools import cache

from ..conllu import Sentence

__all__ = ["Tokenized", "align_words", "first_difference", "spans_correct"]


@cache
def _zs_table() -> dict[int, None]:
    """``str.translate`` table deleting the space separators (Unicode category ``Zs``)."""
    return {c: None for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Zs"}


class Tokenized:
    """A parsed file seen as text: its characters, tokens, sentences and words with spans.

    Parameters
    ----------
    sentences : sequence of Sentence
        The file's sentences, in order.

    Attributes
    ----------
    chars : str
        The concatenated FORMs of the tokens, ``Zs`` characters removed.
    tok_start, tok_end : list of int
        Character span of every token (multiword-token line, or a word outside one).
    tok_sent, tok_line : list of int
        Sentence index and file line of every token.
    sent_start, sent_end : list of int
        Character span of every sentence.
    w_start, w_end : list of int
        Span of every syntactic word (a word of a multiword token has its token's span).
    w_multi : list of bool
        Whether the word belongs to a multiword token.
    w_lower : list of str
        The lowercased FORM compared by the alignment (``Zs`` removed for words outside
        multiword tokens, as the official script does).
    w_sent, w_index : list of int
        Sentence index and word index (1-based, as in :class:`Sentence` arrays) of each word.
    offsets : list of int
        Index of the first word of each sentence in the word lists.
    """

    def __init__(self, sentences: Sequence[Sentence]) -> None:
        table = _zs_table()
        parts: list[str] = []
        self.tok_start: list[int] = []
        self.tok_end: list[int] = []
        self.tok_sent: list[int] = []
        self.tok_line: list[int] = []
        self.sent_start: list[int] = []
        self.sent_end: list[int] = []
        self.w_start: list[int] = []
        self.w_end: list[int] = []
        self.w_multi: list[bool] = []
        self.w_lower: list[str] = []
        self.w_sent: list[int] = []
        self.w_index: list[int] = []
        self.offsets: list[int] = []
        self.sources = [s.source for s in sentences]
        index = 0
        for k, s in enumerate(sentences):
            self.offsets.append(len(self.w_start))
            self.sent_start.append(index)
            inside = 0  # words of the current multiword token still to come
            span = (0, 0)
            m = 0
            for j, line in enumerate(s.lines):
                if line[:1] == "#":
                    continue
                tid, form = line.split("\t", 2)[:2]
                if "." in tid:
                    continue
                if "-" in tid:
                    a, b = tid.split("-")
                    form = form.translate(table)
                    span = (index, index + len(form))
                    inside = int(b) - int(a) + 1
                    self._token(span, k, s.line_no + j, form, parts)
                    index = span[1]
                    continue
                m += 1
                if inside:
                    inside -= 1
                    self._word(span, True, form, k, m)
                else:
                    form = form.translate(table)
                    own = (index, index + len(form))
                    self._token(own, k, s.line_no + j, form, parts)
                    index = own[1]
                    self._word(own, False, form, k, m)
            self.sent_end.append(index)
        self.chars = "".join(parts)

    def _token(self, span, k, line, form, parts) -> None:
        self.tok_start.append(span[0])
        self.tok_end.append(span[1])
        self.tok_sent.append(k)
        self.tok_line.append(line)
        parts.append(form)

    def _word(self, span, multi, form, k, m) -> None:
        self.w_start.append(span[0])
        self.w_end.append(span[1])
        self.w_multi.append(multi)
        self.w_lower.append(form.lower())
        self.w_sent.append(k)
        self.w_index.append(m)

    @property
    def n_words(self) -> int:
        """Number of syntactic words."""
        return len(self.w_start)

    def token_at(self, index: int) -> int:
        """Index of the first token that ends after character ``index`` (the token holding
        it), or the number of tokens when ``index`` is past the end."""
        lo, hi = 0, len(self.tok_end)
        while lo < hi:  # first token with tok_end > index (tok_end is non-decreasing)
            mid = (lo + hi) // 2
            if self.tok_end[mid] > index:
                hi = mid
            else:
                lo = mid + 1
        return lo


def spans_correct(gold_start, gold_end, sys_start, sys_end) -> int:
    """Number of system spans equal to a gold span (both lists sorted by start).

    As in ``conll18_ud_eval.py``'s ``spans_score``: walk both lists by start position and
    count the pairs with the same start and the same end.
    """
    correct = gi = si = 0
    ng, ns = len(gold_start), len(sys_start)
    while gi < ng and si < ns:
        if sys_start[si] < gold_start[gi]:
            si += 1
        elif gold_start[gi] < sys_start[si]:
            gi += 1
        else:
            correct += gold_end[gi] == sys_end[si]
            gi += 1
            si += 1
    return correct


def _beyond(t: Tokenized, i: int, end: int) -> bool:
    if i >= t.n_words:
        return True
    if t.w_multi[i]:
        return t.w_start[i] >= end
    return t.w_end[i] > end


def _extend(t: Tokenized, i: int, end: int) -> int:
    if t.w_multi[i] and t.w_end[i] > end:
        return t.w_end[i]
    return end


def _multiword_stretch(g: Tokenized, s: Tokenized, gi: int, si: int):
    """The words of both sides covered by the overlapping multiword tokens at ``gi``/``si``."""
    if g.w_multi[gi]:
        end = g.w_end[gi]
        if not s.w_multi[si] and s.w_start[si] < g.w_start[gi]:
            si += 1
    else:
        end = s.w_end[si]
        if not g.w_multi[gi] and g.w_start[gi] < s.w_start[si]:
            gi += 1
    gs, ss = gi, si
    while not _beyond(g, gi, end) or not _beyond(s, si, end):
        if gi < g.n_words and (si >= s.n_words or g.w_start[gi] <= s.w_start[si]):
            end = _extend(g, gi, end)
            gi += 1
        else:
            end = _extend(s, si, end)
            si += 1
    return gs, ss, gi, si


def _align_lcs(g: Tokenized, s: Tokenized, gs: int, ge: int, ss: int, se: int,
               pairs: list[tuple[int, int]]) -> None:
    """Align gold words ``gs:ge`` and system words ``ss:se`` by the longest common
    subsequence of their lowercased forms (ties resolved as the official script does)."""
    gf = g.w_lower[gs:ge]
    sf = s.w_lower[ss:se]
    ng, ns = len(gf), len(sf)
    lcs = [[0] * (ns + 1) for _ in range(ng + 1)]
    for a in range(ng - 1, -1, -1):
        row, below = lcs[a], lcs[a + 1]
        for b in range(ns - 1, -1, -1):
            v = 1 + below[b + 1] if gf[a] == sf[b] else 0
            row[b] = max(v, below[b], row[b + 1])
    a = b = 0
    while a < ng and b < ns:
        if gf[a] == sf[b]:
            pairs.append((gs + a, ss + b))
            a += 1
            b += 1
        elif lcs[a][b] == lcs[a + 1][b]:
            a += 1
        else:
            b += 1


def align_words(g: Tokenized, s: Tokenized) -> list[tuple[int, int]]:
    """Align the words of two tokenizations of the same text (CoNLL 2018).

    Parameters
    ----------
    g, s : Tokenized
        Gold and system; ``g.chars == s.chars`` is assumed.

    Returns
    -------
    list of (int, int)
        ``(gold word, system word)`` indices into the word lists, in text order; every word
        occurs at most once.

    References
    ----------
    Zeman et al. (2018), CoNLL 2018 shared task overview, Sec. 2.5; ``conll18_ud_eval.py``
    (``align_words``, ``find_multiword_span``, ``compute_lcs``).
    """
    pairs: list[tuple[int, int]] = []
    gi = si = 0
    while gi < g.n_words and si < s.n_words:
        if g.w_multi[gi] or s.w_multi[si]:
            gs, ss, gi, si = _multiword_stretch(g, s, gi, si)
            if gi > gs and si > ss:
                _align_lcs(g, s, gs, gi, ss, si, pairs)
        elif g.w_start[gi] == s.w_start[si] and g.w_end[gi] == s.w_end[si]:
            pairs.append((gi, si))
            gi += 1
            si += 1
        elif g.w_start[gi] <= s.w_start[si]:
            gi += 1
        else:
            si += 1
    return pairs


def first_difference(g: Tokenized, s: Tokenized) -> str | None:
    """Describe where the texts of two files first differ, or None if they are the same.

    Returns
    -------
    str or None
        ``"at character N of the text without whitespace: gold PATH:LINE (sentence i) has
        '...' where system PATH:LINE (sentence j) has '...'"``; a file that ends first is
        said to end there.
    """
    if g.chars == s.chars:
        return None
    n = min(len(g.chars), len(s.chars))
    i = 0
    step = 1024
    while i < n and g.chars[i:i + step] == s.chars[i:i + step]:
        i += step
    while i < n and g.chars[i] == s.chars[i]:
        i += 1

    def where(t: Tokenized, name: str) -> str:
        k = t.token_at(i)
        if k >= len(t.tok_end):
            src = t.sources[-1] if t.sources else "<no sentences>"
            return f"{name} {src} ends"
        return (f"{name} {t.sources[t.tok_sent[k]]}:{t.tok_line[k]} (sentence "
                f"{t.tok_sent[k] + 1}) has {t.chars[i:i + 20]!r}")

    return (f"at character {i + 1} of the text without whitespace: {where(g, 'gold')} where "
            f"{where(s, 'system')}")
