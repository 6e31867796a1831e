"""Plain text into CoNLL-U sentences: paragraphs, sentence segmentation, tokens, words.

The parse path for raw text (``depparse parse --input text``).  A :class:`Tokenizer` is built
from the model component ``"tokenizer"`` (trained by :func:`depparse.learn.tokenizer_training.
train_tokenizer` on the treebank's ``# text`` and ``SpaceAfter`` data) and works like
UDPipe's tokenizer (Straka, Hajič and Straková 2016, LREC, Sec. 4.2):

1. the text is read as UTF-8 (a byte-order mark is dropped, CRLF/CR become LF) and cut into
   paragraphs at blank lines; inside a paragraph every run of whitespace (line breaks and
   tabs included) is one space, and control characters count as whitespace;
2. after every character a linear classifier over hashed character features
   (:mod:`depparse.features.chars`) decides: the token goes on, the token ends, or the token
   and the sentence end; whitespace always ends a token (but in a tokenizer trained on words
   that hold spaces, Vietnamese's, where one space between two characters may be inside a
   word, and the classifier decides there too), no token ends inside a URL or an e-mail
   address (:data:`URL`), and a paragraph always ends a sentence;
3. a second, word-level classifier (:mod:`depparse.features.boundaries`, in models that have
   one) decides, token by token from left to right, whether a sentence ends after it, from
   the character classifier's margin there, the words and shapes around the gap and the
   number of tokens since the last sentence end; a sentence longer than ``max_words`` words
   is cut at its best-scoring token end;
4. tokens that the treebank writes as multiword tokens (English ``don't`` = ``do`` +
   ``n't``, Portuguese ``do`` = ``de`` + ``o``) are split into their words by a dictionary of
   the training data (the analysis it gives a token form more often than not), with the case
   of the text carried over; where the training data has multiword tokens that their words
   spell (Coptic's bound groups), a word splitter (:mod:`depparse.features.word_splits`)
   splits the tokens the dictionary does not hold;
5. the result is written as CoNLL-U (``# newdoc``, ``# newpar``, ``# sent_id``, ``# text``;
   in MISC ``SpaceAfter=No``, and UDPipe's ``SpacesAfter``/``SpacesBefore`` wherever the
   whitespace around a token is not one space, so that the text the tokens came from is kept
   exactly, :func:`depparse.conllu.document_text` rebuilds it; LEMMA to DEPREL ``_``) and
   read back with
   :func:`depparse.conllu.read_conllu`, so that the sentences are exactly what the rest of the
   pipeline reads from a file, and the CoNLL 2018 evaluation (:mod:`depparse.evaluate`) can
   align the output with gold.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from typing import IO, Any, NamedTuple

import numpy as np

from ..conllu import Sentence, encoding_problem, read_conllu, space_fields
from ..errors import ConlluError, ModelError, check_component
from ..features.boundaries import decide as decide_gaps
from ..features.boundaries import margin_buckets, token_table
from ..features.chars import (
    INSIDE,
    PARAGRAPH,
    SENTENCE_END,
    SPACE,
    TOKEN_END,
    bridges,
    char_classes,
    char_table,
    prepare,
    score_positions,
)
from ..features.word_splits import split_words
from . import textfile
from .textfile import iter_text_batches

__all__ = ["FORMAT", "Gaps", "SPACES_VERSION", "TextPosition", "URL", "VERSION", "Tokenizer",
           "apply_case", "read_text", "split_paragraphs"]

#: ``meta["format"]`` of the tokenizer component.
FORMAT = "depparse-tokenizer"
#: ``meta["version"]`` of a tokenizer whose tokens end at every space and whose multiword
#: tokens come from its dictionary alone (2: the word-level second stage);
#: :data:`SPACES_VERSION` where tokens may go on across a space (``meta["spaces_in_tokens"]``,
#: Vietnamese) or a word splitter splits the tokens the dictionary does not hold
#: (``arrays["split_weights"]``, Coptic).  This code reads both.
VERSION = 2
SPACES_VERSION = 3

#: URLs and e-mail addresses: never cut inside, and cut after unless whitespace or a period
#: follows (a trailing ``.,;:!?'`` or bracket is no part of the match).  In the six
#: treebanks' texts (train, dev, test) every match lies inside one token (``mailto:`` before an
#: address belongs to the same token), and a token ends after every match followed by
#: something other than whitespace or a period (76 times: ``>``, ``]``, ``)``, ``,``,
#: ``'``); of 14 followed by a period, 2 go on (``...``).
URL = re.compile(r"(?:(?:https?|ftp)://|www\d*\.)[^\s<>\"]*[^\s<>\".,;:!?'()\[\]{}]"
                 r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.IGNORECASE)

_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")
# control characters that are not whitespace (C0, DEL, C1) and U+FEFF inside the text
_CONTROL = re.compile("[\x01-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\ufeff]")


def read_text(path_or_file: str | os.PathLike[str] | IO[bytes] | IO[str]) -> tuple[str, str]:
    """Read a plain-text file as UTF-8.

    Parameters
    ----------
    path_or_file : str, os.PathLike or file object
        A path, or a binary or text stream (``sys.stdin.buffer`` for ``-``).

    Returns
    -------
    text : str
        The text, a leading byte-order mark removed, line breaks as read.
    name : str
        The file name used in error messages.

    Raises
    ------
    ConlluError
        ``FILE:LINE: message`` for bytes that are not UTF-8, for UTF-16, compressed and
        binary files (:func:`~depparse.conllu.encoding_problem`) and for NUL characters.
    OSError
        If the file cannot be read.
    """
    if isinstance(path_or_file, (str, os.PathLike)):
        name = os.fsdecode(path_or_file)
        with open(path_or_file, "rb") as f:
            data: Any = f.read()
    else:
        got = getattr(path_or_file, "name", None)
        name = os.fsdecode(got) if isinstance(got, (str, bytes, os.PathLike)) else "<stream>"
        data = path_or_file.read()
    if isinstance(data, bytes):
        problem = encoding_problem(data[:65536], name)
        if problem is not None:
            raise problem
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            line = data.count(b"\n", 0, err.start) + 1
            bad = data[err.start:err.end]
            raise ConlluError(name, line, f"invalid UTF-8 byte(s) {bad!r}: plain-text input "
                              "must be UTF-8") from None
    else:
        text = data
    if text.startswith("\ufeff"):
        text = text[1:]
    nul = text.find("\x00")
    if nul >= 0:
        raise ConlluError(name, text.count("\n", 0, nul) + 1,
                          "NUL character: this is not a plain-text file")
    return text, name


def split_paragraphs(text: str) -> list[str]:
    """Cut a text into paragraphs at blank lines and normalise their whitespace.

    Parameters
    ----------
    text : str
        The text (CRLF and CR line breaks are accepted).

    Returns
    -------
    list of str
        The non-empty paragraphs; each without leading or trailing whitespace, control
        characters replaced by spaces (line breaks inside a paragraph are kept: they are
        whitespace to the tokenizer).
    """
    return [p for p, _ in _paragraphs(text)[0]]


def _paragraphs(text: str) -> tuple[list[tuple[str, int]], np.ndarray]:
    """The paragraphs of :func:`split_paragraphs`, each with where it starts in the
    normalised text (CRLF and CR as LF, control characters as spaces), and where the
    normalised text lost a character (the CR of a CRLF): position ``n`` of the normalised
    text is ``n + searchsorted(lost, n, side="right")`` in ``text``."""
    crlf = np.array([m.start() for m in re.finditer("\r\n", text)], dtype=np.int64)
    lost = crlf - np.arange(len(crlf))  # the normalised position after each dropped CR
    norm = _CONTROL.sub(" ", text.replace("\r\n", "\n").replace("\r", "\n"))
    out = []
    pos = 0
    for m in [*_BLANK_LINE.finditer(norm), None]:
        end = len(norm) if m is None else m.start()
        chunk = norm[pos:end]
        p = chunk.strip()
        if p:
            out.append((p, pos + len(chunk) - len(chunk.lstrip())))
        if m is not None:
            pos = m.end()
    return out, lost


def _text_spans(found, segmented) -> tuple[list[int], list[int]]:
    """Where each token of ``segmented`` (the tokenizer's spans in the paragraphs ``found`` of
    :func:`_paragraphs`) starts and ends in the text itself, in order: character offsets, the
    end one past the token's last character (the CRs that the paragraphs lost counted)."""
    paras, lost = found
    starts = np.array([off + a for (_, off), sents in zip(paras, segmented, strict=True)
                       for toks in sents for a, _ in toks], dtype=np.int64)
    ends = np.array([off + b - 1 for (_, off), sents in zip(paras, segmented, strict=True)
                     for toks in sents for _, b in toks], dtype=np.int64)
    starts = (starts + np.searchsorted(lost, starts, side="right")).tolist()
    ends = (ends + np.searchsorted(lost, ends, side="right") + 1).tolist()
    return starts, ends


def _spaces_around(text: str, starts: list[int], ends: list[int]
                   ) -> tuple[list[str], list[str]]:
    """The whitespace of ``text`` before and after each token (its span ``starts[t]:ends[t]``
    in ``text``, :func:`_text_spans`), in order: the text's start goes to the first token, its
    end to the last, and the whitespace between two tokens to the first up to and including
    its last LF, the rest to the second."""
    befores, afters = [""] * len(starts), [""] * len(starts)
    if starts:
        befores[0], afters[-1] = text[:starts[0]], text[ends[-1]:]
    for i in range(len(starts) - 1):
        gap = text[ends[i]:starts[i + 1]]
        cut = gap.rfind("\n") + 1
        afters[i], befores[i + 1] = (gap[:cut], gap[cut:]) if cut else (gap, "")
    return befores, afters


def apply_case(token: str, words: list[str]) -> list[str]:
    """Carry the case of a token over to its (lower-cased) words.

    Parameters
    ----------
    token : str
        The token as written.
    words : list of str
        Its words, lower-cased, from the multiword-token dictionary.

    Returns
    -------
    list of str
        When the words spell the token (``don't`` = ``do`` + ``n't``), the token's own
        characters cut at the same places; otherwise the words in upper case for an
        upper-case token of 2+ letters, with a capital first letter for a capitalised token,
        and as given for the rest.
    """
    if "".join(words) == token.lower() and len(token.lower()) == len(token):
        out, k = [], 0
        for w in words:
            out.append(token[k:k + len(w)])
            k += len(w)
        return out
    if token.isupper() and sum(c.isalpha() for c in token) > 1:
        return [w.upper() for w in words]
    if token[:1].isupper():
        return [words[0][:1].upper() + words[0][1:]] + words[1:]
    return list(words)


class Gaps(NamedTuple):
    """The tokens of prepared paragraphs and what the second stage sees of the gaps after
    them (:meth:`Tokenizer.gaps`)."""

    #: First and one-past-last position of every token in the prepared text.
    starts: np.ndarray
    ends: np.ndarray
    #: Paragraph ``p`` holds tokens ``para_tokens[p] .. para_tokens[p + 1] - 1``.
    para_tokens: np.ndarray
    #: :func:`~depparse.features.boundaries.token_table` of the tokens.
    table: np.ndarray
    #: The character model's sentence-end margin after every token (the tuned bias not
    #: added), its bucket, and 1 where no whitespace follows the token.
    margins: np.ndarray
    buckets: np.ndarray
    glued: np.ndarray
    #: The character model's own decision: a sentence ends after the token.
    char_ends: np.ndarray


class Tokenizer:
    """Sentence segmenter, tokenizer and multiword-token splitter (see the module docstring).

    Parameters
    ----------
    weights : numpy.ndarray, shape (2**bits, 3)
        Weights of the character classifier.
    mwt : dict of str to list of str
        Lower-cased token form -> its lower-cased words.
    max_words : int, optional
        Longest sentence produced (longer ones are cut); default 250.
    sentence_bias : float, optional
        Added to the sentence-end score of every character (tuned on held-out text by the
        trainer); default 0.
    gap_weights : numpy.ndarray, shape (2**gap_bits,), optional
        Weights of the word-level second stage (:mod:`depparse.features.boundaries`); without
        them the character classifier decides where sentences end.
    gap_threshold : float, optional
        A sentence ends after a token whose second-stage score exceeds it; default 0.
    spaces : bool, optional
        A token may go on across one space between two characters, where the character
        classifier says so (:func:`~depparse.features.chars.bridges`; for writing systems
        whose words hold spaces, Vietnamese); default False: whitespace always ends a token.
    split_weights : numpy.ndarray, shape (2**split_bits,), optional
        Weights of the word splitter (:mod:`depparse.features.word_splits`), which splits the
        tokens that ``mwt`` does not hold into the words that spell them; without them such
        tokens stay one word.
    """

    def __init__(self, weights: np.ndarray, mwt: dict[str, list[str]], max_words: int = 250,
                 sentence_bias: float = 0.0, gap_weights: np.ndarray | None = None,
                 gap_threshold: float = 0.0, spaces: bool = False,
                 split_weights: np.ndarray | None = None):
        bits = int(weights.shape[0]).bit_length() - 1
        if weights.ndim != 2 or weights.shape != (1 << bits, 3):
            raise ModelError(f"tokenizer weights have shape {weights.shape}, expected "
                             "(2**bits, 3)")
        if max_words < 2:
            raise ValueError(f"max_words must be at least 2, got {max_words}")
        self.weights = np.ascontiguousarray(weights, dtype=np.float32)  # Numba: no float16
        self.bits = bits
        self.mwt = mwt
        self.max_words = int(max_words)
        self.sentence_bias = float(sentence_bias)
        self.gap_weights = None
        self.gap_bits = 0
        if gap_weights is not None:
            gb = int(gap_weights.shape[0]).bit_length() - 1
            if gap_weights.ndim != 1 or gap_weights.shape[0] != 1 << gb:
                raise ModelError(f"tokenizer gap weights have shape {gap_weights.shape}, "
                                 "expected (2**bits,)")
            self.gap_weights = np.ascontiguousarray(gap_weights, dtype=np.float32)
            self.gap_bits = gb
        self.gap_threshold = float(gap_threshold)
        self.spaces = bool(spaces)
        self.split_weights = None
        if split_weights is not None:
            sb = int(split_weights.shape[0]).bit_length() - 1
            if split_weights.ndim != 1 or split_weights.shape[0] != 1 << sb:
                raise ModelError(f"tokenizer split weights have shape {split_weights.shape}, "
                                 "expected (2**bits,)")
            self.split_weights = np.ascontiguousarray(split_weights, dtype=np.float32)

    @classmethod
    def from_component(cls, component: Any) -> Tokenizer:
        """Build the tokenizer of a model component.

        Parameters
        ----------
        component : depparse.model.Component
            ``meta``: ``{"format": "depparse-tokenizer", "version": 2, "mwt": {...},
            "max_words": int, "sentence_bias": float, "gap_threshold": float or null, ...}``;
            ``arrays["weights"]``: the character classifier's weights;
            ``arrays["gap_weights"]``: the second stage's (absent where ``gap_threshold`` is
            null: the character classifier alone ends sentences).

        Returns
        -------
        Tokenizer

        Raises
        ------
        ModelError
            If the component is not a tokenizer of a version this code reads.
        """
        meta = component.meta
        v3 = isinstance(meta, dict) and meta.get("version") == SPACES_VERSION
        check_component(meta, FORMAT, SPACES_VERSION if v3 else VERSION, "tokenizer")
        spaces = bool(meta.get("spaces_in_tokens"))
        sw = component.arrays.get("split_weights")
        if v3 != (spaces or sw is not None):
            raise ModelError("the model's tokenizer component: version 3 goes with "
                             "spaces_in_tokens or split weights, and they with version 3")
        w = component.arrays.get("weights")
        if w is None:
            raise ModelError("the model's tokenizer component has no weights")
        threshold = meta.get("gap_threshold")
        gw = component.arrays.get("gap_weights")
        if threshold is not None and gw is None:
            raise ModelError("the model's tokenizer component has no gap weights")
        mwt = {str(k): [str(x) for x in v] for k, v in (meta.get("mwt") or {}).items()}
        return cls(np.asarray(w), mwt, int(meta.get("max_words", 250)),
                   float(meta.get("sentence_bias", 0.0)),
                   None if threshold is None else np.asarray(gw),
                   0.0 if threshold is None else float(threshold), spaces=spaces,
                   split_weights=None if sw is None else np.asarray(sw))

    # -- segmentation -----------------------------------------------------------------------

    def gaps(self, paragraphs: list[str]) -> tuple[np.ndarray, Gaps]:
        """Tokens of paragraphs by the character classifier, and the gaps after them.

        Parameters
        ----------
        paragraphs : list of str
            Paragraph texts.

        Returns
        -------
        offsets : numpy.ndarray of int64
            The position of every paragraph's first character in the prepared text.
        Gaps
        """
        codes, low, offsets = prepare(paragraphs)
        cls = char_classes(codes)
        sc = score_positions(char_table(low, cls), self.weights, self.bits)
        for p, a in zip(paragraphs, offsets.tolist(), strict=True):
            for m in URL.finditer(p):  # no token ends inside a URL or an e-mail address
                sc[a + m.start():a + m.end() - 1, INSIDE] = np.inf
                if m.end() < len(p) and p[m.end()] != ".":  # "...": the classifier decides
                    sc[a + m.end() - 1, INSIDE] = -np.inf  # a bracket or comma after it
        nxt = np.append(low[1:], PARAGRAPH)
        nxt_space = (nxt == SPACE) | (nxt == PARAGRAPH)
        forced = nxt_space & ~bridges(codes, low) if self.spaces else nxt_space
        margin = sc[:, SENTENCE_END] - np.where(forced, sc[:, TOKEN_END],
                                                np.maximum(sc[:, TOKEN_END], sc[:, INSIDE]))
        # a token ends before whitespace (but where it may go on across a space) or where
        # ending it scores best; the bias only tells a sentence end from a token end
        is_end = forced | (np.maximum(sc[:, TOKEN_END], sc[:, SENTENCE_END])
                           > sc[:, INSIDE])
        sent = sc[:, SENTENCE_END] + np.float32(self.sentence_bias) > sc[:, TOKEN_END]
        label = np.where(is_end, np.where(sent, SENTENCE_END, TOKEN_END), INSIDE)
        label[nxt == PARAGRAPH] = SENTENCE_END
        label[(low == SPACE) | (low == PARAGRAPH)] = -1
        ends = np.flatnonzero(label >= TOKEN_END)
        nonspace = np.flatnonzero((low != SPACE) & (low != PARAGRAPH))
        starts = np.empty_like(ends)
        if len(ends):
            starts[0] = 0
            starts[1:] = ends[:-1] + 1
            starts = nonspace[np.searchsorted(nonspace, starts)]  # first non-space character
        para_tokens = np.append(np.searchsorted(ends, offsets), len(ends)).astype(np.int64)
        table = token_table(codes, low, cls, starts, ends + 1)
        margins = margin[ends]
        glued = (~nxt_space[ends]).astype(np.int8)
        return offsets, Gaps(starts, ends + 1, para_tokens, table, margins,
                             margin_buckets(margins), glued, label[ends] == SENTENCE_END)

    def decide(self, g: Gaps, threshold: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Where sentences end: after which tokens of :meth:`gaps`, and the scores that cut
        over-long sentences (the second stage's, else the character classifier's margins)."""
        if self.gap_weights is None:
            return g.char_ends, g.margins + np.float32(self.sentence_bias)
        return decide_gaps(g.table, g.para_tokens, g.buckets, g.glued, self.gap_weights,
                      self.gap_bits, self.gap_threshold if threshold is None else threshold)

    def segment(self, paragraphs: list[str], presegmented: bool = False
                ) -> list[list[list[tuple[int, int]]]]:
        """Sentences and tokens of paragraphs, as character spans.

        Parameters
        ----------
        paragraphs : list of str
            Paragraph texts (:func:`split_paragraphs`).
        presegmented : bool, optional
            Every line of a paragraph is one sentence (UDPipe's tokenizer option of the same
            name): the lines are tokenized each as a paragraph of its own, and neither cut
            into sentences nor cut when over ``max_words``.  Default False.

        Returns
        -------
        list
            For every paragraph, its sentences; for every sentence, its tokens as
            ``(start, end)`` spans into the paragraph string.
        """
        if not paragraphs:
            return []
        if presegmented:
            return self._segment_lines(paragraphs)
        offsets, g = self.gaps(paragraphs)
        sent_end, margin = self.decide(g)
        out = []
        for p, off in enumerate(offsets.tolist()):
            a, b = int(g.para_tokens[p]), int(g.para_tokens[p + 1])
            tokens = list(zip((g.starts[a:b] - off).tolist(), (g.ends[a:b] - off).tolist(),
                              strict=True))
            cut = [0] + (np.flatnonzero(sent_end[a:b]) + 1).tolist()
            if cut[-1] != b - a:
                cut.append(b - a)
            sents: list[list[tuple[int, int]]] = []
            for x, y in zip(cut[:-1], cut[1:], strict=True):
                self._cut_long(tokens, margin[a:b], x, y, sents)
            out.append(sents)
        return out

    def _segment_lines(self, paragraphs: list[str]) -> list[list[list[tuple[int, int]]]]:
        """:meth:`segment` with ``presegmented``: each non-blank line a sentence."""
        lines: list[str] = []
        where: list[tuple[int, int]] = []  # each line's paragraph, and its offset in it
        for i, p in enumerate(paragraphs):
            pos = 0
            for raw in p.split("\n"):
                line = raw.strip()
                if line:
                    lines.append(line)
                    where.append((i, pos + len(raw) - len(raw.lstrip())))
                pos += len(raw) + 1
        out: list[list[list[tuple[int, int]]]] = [[] for _ in paragraphs]
        if not lines:
            return out
        offsets, g = self.gaps(lines)
        for k, off in enumerate(offsets.tolist()):
            a, b = int(g.para_tokens[k]), int(g.para_tokens[k + 1])
            i, shift = where[k]
            out[i].append(list(zip((g.starts[a:b] - off + shift).tolist(),
                                   (g.ends[a:b] - off + shift).tolist(), strict=True)))
        return out

    def _cut_long(self, tokens, margin, a, b, sents) -> None:
        """Append tokens ``a:b`` as sentences of at most ``max_words`` tokens, cutting at the
        token end most likely to end a sentence."""
        while b - a > self.max_words:
            k = a + 1 + int(np.argmax(margin[a:b - 1]))  # first token of the second part
            if k - a > self.max_words:
                k = a + 1 + int(np.argmax(margin[a:a + self.max_words - 1]))
            sents.append(tokens[a:k])
            a = k
        sents.append(tokens[a:b])

    # -- CoNLL-U ----------------------------------------------------------------------------

    def to_conllu(self, text: str, *, first_id: int = 1, newdoc: bool = True,
                  normalized_spaces: bool = False, presegmented: bool = False,
                  ranges: bool = False) -> str:
        """Tokenize a text into CoNLL-U.

        Parameters
        ----------
        text : str
            Plain text; paragraphs separated by blank lines.
        first_id : int, optional
            The ``sent_id`` of the first sentence (then counted up); default 1.
        newdoc : bool, optional
            Mark the first sentence with ``# newdoc``; default True.
        normalized_spaces : bool, optional
            UD's ``SpaceAfter=No`` alone in MISC (where no whitespace follows a token inside
            its paragraph), not the text's exact whitespace (UDPipe's tokenizer option of the
            same name); default False.
        presegmented : bool, optional
            Every line is a sentence (UDPipe's tokenizer option; see :meth:`segment`);
            blank lines still separate paragraphs.  Default False.
        ranges : bool, optional
            ``TokenRange=start:end`` last in the MISC of every token (UDPipe's tokenizer
            option): where the token is in ``text``, in characters (code points) from 0,
            ``end`` one past its last character, a multiword token's range on its token
            line.  Default False.

        Returns
        -------
        str
            CoNLL-U: ``# newdoc`` (first sentence), ``# newpar`` (first sentence of every
            paragraph), ``# sent_id``, ``# text``; one line per token and word, columns 3-9
            ``_``; in MISC ``SpaceAfter=No`` where no whitespace follows the token,
            ``SpacesAfter`` and ``SpacesBefore`` where the whitespace after or before it is not
            one space (:mod:`depparse.conllu.spaces`: the text's start, runs of spaces, tabs,
            line breaks, its end), so that :func:`~depparse.conllu.document_text` of the
            sentences is ``text``.  Empty for a text without words.
        """
        found = _paragraphs(text)
        paragraphs = [p for p, _ in found[0]]
        segmented = self.segment(paragraphs, presegmented)
        if ranges or not normalized_spaces:
            starts, ends = _text_spans(found, segmented)
        if not normalized_spaces:
            befores, afters = _spaces_around(text, starts, ends)
        split = self._splits([p[a:b] for p, sents in zip(paragraphs, segmented, strict=True)
                              for toks in sents for a, b in toks])
        lines: list[str] = []
        sid = first_id
        t = 0  # the token's index in ``spans``
        for p, sents in zip(paragraphs, segmented, strict=True):
            for k, toks in enumerate(sents):
                if newdoc and sid == first_id:
                    lines.append("# newdoc")
                if k == 0:
                    lines.append("# newpar")
                lines.append(f"# sent_id = {sid}")
                sid += 1
                text_parts = []
                body = []
                m = 0
                last = len(toks) - 1
                for j, (a, b) in enumerate(toks):
                    form = p[a:b]
                    glued = b < len(p) and not p[b].isspace() and not (j == last
                                                                       and k == len(sents) - 1)
                    text_parts.append(form if glued or j == last else form + " ")
                    fields = (["SpaceAfter=No"] if glued else []) if normalized_spaces else (
                        space_fields(befores[t], afters[t]))
                    if ranges:
                        fields = [*fields, f"TokenRange={starts[t]}:{ends[t]}"]
                    misc = "|".join(fields) or "_"
                    t += 1
                    words = self.mwt.get(form.lower())
                    words = apply_case(form, words) if words else split.get(form)
                    if words:
                        body.append(f"{m + 1}-{m + len(words)}\t{form}\t_\t_\t_\t_\t_\t_\t_\t"
                                    f"{misc}")
                        for w in words:
                            m += 1
                            body.append(f"{m}\t{w}\t_\t_\t_\t_\t_\t_\t_\t_")
                    else:
                        m += 1
                        body.append(f"{m}\t{form}\t_\t_\t_\t_\t_\t_\t_\t{misc}")
                lines.append("# text = " + "".join(text_parts))
                lines.extend(body)
                lines.append("")
        return "\n".join(lines) + "\n" if lines else ""

    def _splits(self, forms: list[str]) -> dict[str, list[str]]:
        """The word splitter's words of the forms the dictionary does not hold, where it
        finds more than one."""
        if self.split_weights is None:
            return {}
        todo = sorted({f for f in forms if len(f) > 1 and f.lower() not in self.mwt})
        return {f: ws for f, ws in zip(todo, split_words(self.split_weights, todo), strict=True)
                if len(ws) > 1}

    def tokenize(self, text: str, *, source: str = "<text>", first_id: int = 1,
                 newdoc: bool = True, normalized_spaces: bool = False,
                 presegmented: bool = False, ranges: bool = False) -> list[Sentence]:
        """Tokenize a text into sentences (see :meth:`to_conllu`).

        Parameters
        ----------
        text : str
            Plain text.
        source : str, optional
            The name the sentences carry (their ``source``, in error messages).
        first_id : int, optional
            ``sent_id`` of the first sentence.
        newdoc : bool, optional
            Mark the first sentence with ``# newdoc``.
        normalized_spaces, presegmented, ranges : bool, optional
            ``SpaceAfter=No`` alone, a sentence per line, ``TokenRange`` in MISC (see
            :meth:`to_conllu`).

        Returns
        -------
        list of Sentence
            HEAD ``_`` (``heads`` -1) and LEMMA/UPOS/XPOS/FEATS/DEPREL ``_``; an empty list
            for a text without words.
        """
        data = self.to_conllu(text, first_id=first_id, newdoc=newdoc,
                              normalized_spaces=normalized_spaces, presegmented=presegmented,
                              ranges=ranges).encode("utf-8")
        if not data:
            return []
        f = io.BytesIO(data)
        f.name = source
        return read_conllu(f)

    def tokenize_file(self, path_or_file: str | os.PathLike[str] | IO[bytes] | IO[str], *,
                      normalized_spaces: bool = False, **kwargs: Any) -> list[Sentence]:
        """Read a plain-text file (:func:`read_text`) and :meth:`tokenize` it
        (``normalized_spaces`` and ``kwargs`` as there).

        Raises
        ------
        ConlluError
            ``FILE:LINE: message`` for input that is not UTF-8 text.
        """
        if kwargs or not _binary(path_or_file):
            text, name = read_text(path_or_file)
            return self.tokenize(text, source=name, normalized_spaces=normalized_spaces,
                                 **kwargs)
        return [s for s, _ in self.iter_sentences(path_or_file,
                                                  normalized_spaces=normalized_spaces)]

    def iter_sentences(self, path_or_file: str | os.PathLike[str] | IO[bytes], *,
                       after: TextPosition | None = None, normalized_spaces: bool = False
                       ) -> Iterator[tuple[Sentence, TextPosition]]:
        """Tokenize a plain-text file as a stream: its sentences, a batch of paragraphs at a
        time (:func:`~depparse.inference.textfile.iter_text_batches`), each with its position.

        Parameters
        ----------
        path_or_file : str, os.PathLike or binary file object
            The file (a stream is read from where it is to its end; a stream given with
            ``after`` must be seekable: it is positioned there).
        after : TextPosition, optional
            Continue after the sentence at this position (one this method yielded for the
            same file, in an earlier run).
        normalized_spaces : bool, optional
            ``SpaceAfter=No`` alone in MISC (see :meth:`to_conllu`).

        Yields
        ------
        (Sentence, TextPosition)
            The sentences of :meth:`tokenize_file`, in order; ``sent_id`` counts on across
            batches and only the file's first sentence gets ``# newdoc``.

        Raises
        ------
        ConlluError
            ``FILE:LINE: message`` for input that is not UTF-8 text (see
            :func:`~depparse.inference.textfile.iter_text_batches`).
        """
        if isinstance(path_or_file, (str, os.PathLike)):
            name = os.fsdecode(path_or_file)
            with open(path_or_file, "rb") as f:
                yield from self._iter_stream(f, name, after, normalized_spaces)
            return
        got = getattr(path_or_file, "name", None)
        name = os.fsdecode(got) if isinstance(got, (str, bytes, os.PathLike)) else "<stream>"
        if after is not None and not (hasattr(path_or_file, "seekable")
                                      and path_or_file.seekable()):
            raise ValueError("only a file (or a seekable stream) can be continued (after=...)")
        yield from self._iter_stream(path_or_file, name, after, normalized_spaces)

    def _iter_stream(self, f, name, after, normalized_spaces=False):
        offset, line, sid, skip, until = 0, 1, 1, 0, None
        if after is not None:
            offset, line, sid, skip = after.offset, after.line, after.first_id, after.index + 1
            until = after.end if after.end >= 0 else None
            f.seek(offset)
        for b in iter_text_batches(f, name, offset, line, textfile.TEXT_BATCH, until):
            sents = self.tokenize(b.text, source=name, first_id=sid, newdoc=b.first,
                                  normalized_spaces=normalized_spaces)
            for k in range(skip, len(sents)):
                yield sents[k], TextPosition(b.offset, b.line, sid, k, b.end)
            sid += len(sents)
            skip = 0


class TextPosition(NamedTuple):
    """Where a sentence of :meth:`Tokenizer.iter_sentences` comes from: the byte ``offset``
    and ``line`` of its batch, the ``sent_id`` of the batch's first sentence (``first_id``),
    the sentence's ``index`` in the batch, and the byte offset where the batch ends (``end``;
    -1, in positions stored before it was kept: not known, and a run continued from such a
    position may cut its first batch elsewhere than the run that stored it did, so that the
    index no longer points at the same sentence)."""

    offset: int
    line: int
    first_id: int
    index: int
    end: int = -1


def _binary(f: Any) -> bool:
    """A path, or a binary stream (what :meth:`Tokenizer.iter_sentences` reads)."""
    if isinstance(f, (str, os.PathLike)):
        return True
    return not isinstance(f, io.TextIOBase) and "b" in str(getattr(f, "mode", "b"))
