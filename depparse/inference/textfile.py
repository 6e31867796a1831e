"""Plain-text input read as a stream: paragraph batches of a UTF-8 file, checked on the way.

``depparse parse --input text`` reads its input with :func:`iter_text_batches`: a few hundred
kilobytes at a time, cut after a blank line, so that a text of any size is tokenized
(:meth:`~depparse.inference.tokenizer.Tokenizer.iter_sentences`) in bounded memory.  The
tokenizer treats every paragraph on its own (a paragraph always ends a sentence), so the
sentences are those of the whole text tokenized at once (``tests/test_streaming.py`` holds
the two equal), with one exception: the character classifier's windows
(:func:`~depparse.features.chars.position_features`, 3 characters each side) are not cut at a
paragraph break, so the decisions after the last and before the first characters of a
paragraph see the next and the previous paragraph, and at the first and last paragraph of a
batch they see padding instead (en_ewt's dev text cut into 2 KB batches: 1 of 1,925
sentences tokenized differently; at 16 KB, and for the test text, pt_bosque's and tr_imst's
at both sizes, none).  Cutting the windows is a change of the tokenizer's features, for the
next rebuild of the models.  A batch starts at the line of a word (:func:`_last_break`), so
the whitespace between paragraphs is kept in MISC as in a text read whole.  Each batch
carries the byte offset and line where it starts, so that a run can be
continued from the middle of a file (``depparse parse --resume``).

What is not UTF-8 text is refused with ``FILE:LINE: message`` and what to do: UTF-16 or
compressed or binary files (:func:`~depparse.conllu.encoding_problem`), invalid UTF-8, NUL
characters, and CoNLL-U given as text (:func:`conllu_line`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import IO, NamedTuple

from ..conllu import encoding_problem
from ..errors import ConlluError

__all__ = ["TEXT_BATCH", "TextBatch", "conllu_line", "iter_text_batches", "only_space"]

#: Bytes read at a time; a batch ends after the last blank line in what was read (a paragraph
#: longer than this makes a longer batch).
TEXT_BATCH = 1 << 18

#: The bytes that may stand on a blank line between its two line breaks (CRLF line ends
#: included; a line of other Unicode spaces is a paragraph break to the tokenizer too, but a
#: batch may end at any paragraph break, it need not end at every one).
_SPACES = b" \t\f\v\r"
#: What the tokenizer reads as whitespace (:mod:`depparse.inference.tokenizer`: Unicode
#: whitespace and control characters), as UTF-8: one byte (control characters and the space),
#: and the longer sequences (C1 controls and the no-break space, U+1680, U+2000-U+200A, the line
#: and paragraph separators, U+202F, U+205F, U+3000, U+FEFF).
_SPACE_BYTES = bytes(range(1, 33)) + b"\x7f"
_WIDE_SPACES = tuple(bytes([0xC2, b]) for b in range(0x80, 0xA1)) + tuple(
    "\u1680\u2028\u2029\u202f\u205f\u3000\ufeff".encode()[3 * k:3 * k + 3] for k in range(7)
) + tuple(chr(c).encode() for c in range(0x2000, 0x200B))
_LEADING_SPACE = re.compile(b"(?:[\x01-\x20\x7f]|" + b"|".join(
    re.escape(w) for w in _WIDE_SPACES) + b")*")

#: A word line of CoNLL-U: an ID (``3``, ``3-4``, ``3.1``) and nine more tab-separated columns.
_CONLLU_LINE = re.compile(r"^\d+(?:[-.]\d+)?(?:\t[^\t\n]*){9}\r?$", re.MULTILINE)


class TextBatch(NamedTuple):
    """Paragraphs of a text file: ``text`` (decoded), the byte ``offset`` and ``line`` where
    they start, ``first``: whether this is the file's first batch (its first sentence gets
    ``# newdoc``), and the byte offset where they end."""

    text: str
    offset: int
    line: int
    first: bool
    #: The byte offset where the batch ends (where the next one starts).
    end: int = -1


def conllu_line(text: str) -> int | None:
    """The line number (1-based, in ``text``) of the first CoNLL-U word line (10 tab-separated
    columns, an ID first), or None."""
    m = _CONLLU_LINE.search(text)
    return None if m is None else text.count("\n", 0, m.start()) + 1


def only_space(data: bytes) -> bool:
    """Whether UTF-8 ``data`` holds nothing but what the tokenizer reads as whitespace (empty
    data included)."""
    return _LEADING_SPACE.match(data).end() == len(data)


def _decode(data: bytes, name: str, line: int) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        where = line + data.count(b"\n", 0, err.start)
        bad = data[err.start:err.end]
        raise ConlluError(name, where, f"invalid UTF-8 byte(s) {bad!r}: plain-text input must "
                          "be UTF-8 (convert a file in another encoding first, e.g. iconv -f "
                          "LATIN1 -t UTF-8)") from None
    nul = text.find("\x00")
    if nul >= 0:
        raise ConlluError(name, line + text.count("\n", 0, nul),
                          "NUL character: this is not a plain-text file")
    return text


def iter_text_batches(f: IO[bytes], name: str, offset: int = 0, line: int = 1,
                      batch: int = TEXT_BATCH, until: int | None = None) -> Iterator[TextBatch]:
    """The paragraphs of a binary stream, a batch at a time.

    Parameters
    ----------
    f : binary file object
        Positioned at ``offset`` (the start of the file, or of a batch an earlier run
        reported).
    name : str
        The file name for error messages.
    offset, line : int, optional
        Where ``f`` is positioned: byte offset and line number.
    batch : int, optional
        Bytes read at a time (:data:`TEXT_BATCH`).
    until : int, optional
        Where the first batch ends (the ``end`` of a batch an earlier run read from
        ``offset``): that batch again, byte for byte, then batches as usual.  Where the batches
        are cut depends on where the reading started, so a run continued from a batch must
        read that batch as it was to find its sentences at the same places in it.

    Yields
    ------
    TextBatch
        Non-empty texts (a byte-order mark at the start of the file dropped).

    Raises
    ------
    ConlluError
        ``FILE:LINE: message`` for a file that is UTF-16, compressed or binary, invalid
        UTF-8, a NUL character, or CoNLL-U word lines in the first batch (with ``--input
        conllu`` as what to do).
    """
    pending = b""
    first = offset == 0
    bom = 0  # the bytes of a byte-order mark dropped from the first batch
    chunk = f.read(batch if until is None else max(until - offset, 1))
    if first:
        problem = encoding_problem(chunk[:65536], name)
        if problem is not None:
            raise problem
        if chunk.startswith(b"\xef\xbb\xbf"):
            chunk, bom = chunk[3:], 3
    while True:
        data = pending + chunk
        if until is not None:  # the batch an earlier run read
            cut, until = len(data), None
        else:  # (a break in the whitespace the last read ended in is looked at again)
            cut = _last_break(data, _text_end(pending)) if chunk else len(data)
        if cut:
            text = _decode(data[:cut], name, line)
            if first:
                at = conllu_line(text)
                if at is not None:
                    raise ConlluError(name, line + at - 1, "this is CoNLL-U (a line of 10 "
                                      "tab-separated columns), not plain text: give it with "
                                      "--input conllu")
            yield TextBatch(text, offset, line, first, offset + cut + bom)
            first = False
            offset += cut + bom
            bom = 0
            line += data.count(b"\n", 0, cut)
        pending = data[cut:]
        if not chunk:
            return
        chunk = f.read(batch)


def _last_break(data: bytes, lo: int) -> int:
    """The end of the last blank line of ``data`` whose final line break is at or after
    ``lo`` (the bytes before ``lo`` were searched already), that follows a word and is
    followed by more than whitespace, else 0.

    So the next batch starts with no line break before its first word: the whitespace
    between two paragraphs is then split between the batches as the tokenizer splits it
    between the tokens around it (:mod:`depparse.conllu.spaces`: up to its last LF to the
    token before), and a text read in batches gets the same ``SpacesAfter`` and
    ``SpacesBefore`` as read whole.
    """
    pos = data.rfind(b"\n", 0, _text_end(data))
    head = _LEADING_SPACE.match(data).end()  # and not before the first word: a batch holds one
    while pos >= lo and pos > head:
        j = pos - 1
        while j >= 0 and data[j] in _SPACES:
            j -= 1
        if j >= 0 and data[j] == 10:  # another line break: a blank line ends at pos
            return pos + 1
        pos = data.rfind(b"\n", 0, j + 1) if j >= 0 else -1
    return 0


def _text_end(data: bytes) -> int:
    """The length of ``data`` without the whitespace it ends in (what the tokenizer reads as
    whitespace; a character cut off at the end counts as whitespace)."""
    end = len(data)
    while end:
        if data[end - 1] in _SPACE_BYTES:
            end -= 1
            continue
        wide = next((w for w in _WIDE_SPACES if data.endswith(w, 0, end)), None)
        cut = len(wide) if wide else _cut_character(data[max(0, end - 3):end])
        if not cut:
            return end
        end -= cut
    return 0


def _cut_character(tail: bytes) -> int:
    """The bytes at the end of ``tail`` that begin a UTF-8 character they do not finish."""
    for k in range(1, min(3, len(tail)) + 1):
        b = tail[-k]
        if b >= 0xC0:  # a lead byte: the character needs 2, 3 or 4 bytes
            need = 2 if b < 0xE0 else 3 if b < 0xF0 else 4
            return k if need > k else 0
        if b < 0x80:
            return 0
    return 0
