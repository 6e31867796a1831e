"""Plain text into CoNLL-U sentences: paragraphs, sentence segmentation, tokens, words.

The parse path for raw text (``depparse parse --input text``).  A :class:`Tokenizer` is built
from the model component ``"tokenizer"`` (trained by :func:`depparse.learn.tokenizer.
train_tokenizer` on the treebank's ``# text`` and ``SpaceAfter`` data) and works like
UDPipe's tokenizer (Straka, Hajič and Straková 2016, LREC, Sec. 4.2):

1. the text is read as UTF-8 (a byte-order mark is dropped, CRLF/CR become LF) and cut into
   paragraphs at blank lines; inside a paragraph every run of whitespace (line breaks and
   tabs included) is one space, and control characters count as whitespace;
2. after every character a linear classifier over hashed character features
   (:mod:`depparse.features.chars`) decides: the token goes on, the token ends, or the token
   and the sentence end; whitespace always ends a token and a paragraph always ends a
   sentence; a sentence longer than ``max_words`` words is cut at its best-scoring token end;
3. tokens that the treebank writes as multiword tokens (English ``don't`` = ``do`` +
   ``n't``, Portuguese ``do`` = ``de`` + ``o``) are split into their words by a dictionary of
   the training data (the analysis it gives a token form more often than not), with the case
   of the text carried over;
4. the result is written as CoNLL-U (``# newdoc``, ``# newpar``, ``# sent_id``, ``# text``,
   ``SpaceAfter=No``; LEMMA to DEPREL ``_``) and read back with
   :func:`depparse.conllu.read_conllu`, so that the sentences are exactly what the rest of the
   pipeline reads from a file, and the CoNLL 2018 evaluation (:mod:`depparse.evaluate`) can
   align the output with gold.
"""

from __future__ import annotations

import io
import os
import re
from typing import IO, Any

import numpy as np

from ..conllu import Sentence, read_conllu
from ..errors import ConlluError, ModelError
from ..features.chars import (
    INSIDE,
    SENTENCE_END,
    TOKEN_END,
    char_classes,
    char_table,
    prepare,
    score_positions,
)

__all__ = ["FORMAT", "VERSION", "Tokenizer", "apply_case", "read_text", "split_paragraphs"]

#: ``meta["format"]`` of the tokenizer component.
FORMAT = "depparse-tokenizer"
#: ``meta["version"]`` this code reads.
VERSION = 1

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
        ``FILE:LINE: message`` for bytes that are not UTF-8 and for NUL characters (binary
        input).
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
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub(" ", text)
    out = []
    for p in _BLANK_LINE.split(text):
        p = p.strip()
        if p:
            out.append(p)
    return out


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
    """

    def __init__(self, weights: np.ndarray, mwt: dict[str, list[str]], max_words: int = 250,
                 sentence_bias: float = 0.0):
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

    @classmethod
    def from_component(cls, component: Any) -> Tokenizer:
        """Build the tokenizer of a model component.

        Parameters
        ----------
        component : depparse.model.Component
            ``meta``: ``{"format": "depparse-tokenizer", "version": 1, "mwt": {...},
            "max_words": int, "sentence_bias": float, ...}``; ``arrays["weights"]``: the
            classifier's weights.

        Returns
        -------
        Tokenizer

        Raises
        ------
        ModelError
            If the component is not a tokenizer of a version this code reads.
        """
        meta = component.meta
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise ModelError("the model's tokenizer component is not a depparse tokenizer")
        if meta.get("version") != VERSION:
            raise ModelError(f"tokenizer component version {meta.get('version')!r} is not "
                             f"supported (this depparse reads version {VERSION}); retrain the "
                             "model with this depparse")
        w = component.arrays.get("weights")
        if w is None:
            raise ModelError("the model's tokenizer component has no weights")
        mwt = {str(k): [str(x) for x in v] for k, v in (meta.get("mwt") or {}).items()}
        return cls(np.asarray(w), mwt, int(meta.get("max_words", 250)),
                   float(meta.get("sentence_bias", 0.0)))

    # -- segmentation -----------------------------------------------------------------------

    def segment(self, paragraphs: list[str]) -> list[list[list[tuple[int, int]]]]:
        """Sentences and tokens of paragraphs, as character spans.

        Parameters
        ----------
        paragraphs : list of str
            Paragraph texts (:func:`split_paragraphs`).

        Returns
        -------
        list
            For every paragraph, its sentences; for every sentence, its tokens as
            ``(start, end)`` spans into the paragraph string.
        """
        if not paragraphs:
            return []
        codes, low, starts = prepare(paragraphs)
        tab = char_table(low, char_classes(codes))
        scores = score_positions(tab, self.weights, self.bits)
        scores[:, SENTENCE_END] += np.float32(self.sentence_bias)
        out = []
        for p, start in zip(paragraphs, starts.tolist(), strict=True):
            sc = scores[start:start + len(p)]
            out.append(self._paragraph(low[start:start + len(p) + 1], sc))
        return out

    def _paragraph(self, low: np.ndarray, sc: np.ndarray) -> list[list[tuple[int, int]]]:
        n = len(low) - 1
        space = low == 32
        # decision after every character: inside, token end, sentence end
        label = np.argmax(sc, axis=1)
        nxt_space = np.append(space[1:n], True)  # the paragraph end counts as whitespace
        forced = nxt_space & (label == INSIDE)
        label[forced] = np.where(sc[forced, SENTENCE_END] > sc[forced, TOKEN_END],
                                 SENTENCE_END, TOKEN_END)
        label[space[:n]] = -1
        label[n - 1] = SENTENCE_END
        ends = np.flatnonzero(label >= TOKEN_END)
        sent_end = label[ends] == SENTENCE_END
        margin = sc[ends, SENTENCE_END] - np.maximum(sc[ends, TOKEN_END], sc[ends, INSIDE])
        starts = np.empty_like(ends)
        starts[0] = 0
        starts[1:] = ends[:-1] + 1
        # a token starts at its first non-space character
        nonspace = np.flatnonzero(~space[:n])
        starts = nonspace[np.searchsorted(nonspace, starts)]
        tokens = list(zip(starts.tolist(), (ends + 1).tolist(), strict=True))
        sents: list[list[tuple[int, int]]] = []
        cut = [0] + (np.flatnonzero(sent_end) + 1).tolist()
        for a, b in zip(cut[:-1], cut[1:], strict=True):
            self._cut_long(tokens, margin, a, b, sents)
        return sents

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

    def to_conllu(self, text: str, *, first_id: int = 1, newdoc: bool = True) -> str:
        """Tokenize a text into CoNLL-U.

        Parameters
        ----------
        text : str
            Plain text; paragraphs separated by blank lines.
        first_id : int, optional
            The ``sent_id`` of the first sentence (then counted up); default 1.
        newdoc : bool, optional
            Mark the first sentence with ``# newdoc``; default True.

        Returns
        -------
        str
            CoNLL-U: ``# newdoc`` (first sentence), ``# newpar`` (first sentence of every
            paragraph), ``# sent_id``, ``# text``; one line per token and word, columns 3-9
            ``_``, ``SpaceAfter=No`` in MISC where no whitespace follows the token inside
            its paragraph.  Empty for a text without words.
        """
        paragraphs = split_paragraphs(text)
        lines: list[str] = []
        sid = first_id
        for p, sents in zip(paragraphs, self.segment(paragraphs), strict=True):
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
                    misc = "SpaceAfter=No" if glued else "_"
                    words = self.mwt.get(form.lower())
                    if words:
                        words = apply_case(form, words)
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

    def tokenize(self, text: str, *, source: str = "<text>", first_id: int = 1,
                 newdoc: bool = True) -> list[Sentence]:
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

        Returns
        -------
        list of Sentence
            HEAD ``_`` (``heads`` -1) and LEMMA/UPOS/XPOS/FEATS/DEPREL ``_``; an empty list
            for a text without words.
        """
        data = self.to_conllu(text, first_id=first_id, newdoc=newdoc).encode("utf-8")
        if not data:
            return []
        f = io.BytesIO(data)
        f.name = source
        return read_conllu(f)

    def tokenize_file(self, path_or_file: str | os.PathLike[str] | IO[bytes] | IO[str],
                      **kwargs: Any) -> list[Sentence]:
        """Read a plain-text file (:func:`read_text`) and :meth:`tokenize` it.

        Raises
        ------
        ConlluError
            ``FILE:LINE: message`` for input that is not UTF-8 text.
        """
        text, name = read_text(path_or_file)
        return self.tokenize(text, source=name, **kwargs)
