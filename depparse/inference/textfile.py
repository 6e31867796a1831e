"""Plain-text input read as a stream: paragraph batches of a UTF-8 file, checked on the way.

``depparse parse --input text`` reads its input with :func:`iter_text_batches`: a few hundred
kilobytes at a time, cut after a blank line, so that a text of any size is tokenized
(:meth:`~depparse.inference.tokenizer.Tokenizer.iter_sentences`) in bounded memory.  The
tokenizer treats every paragraph on its own (a paragraph always ends a sentence, and the
character windows stop at its ends), so the sentences do not depend on where a batch is cut:
they are those of the whole text tokenized at once (``tests/test_streaming.py`` holds the two
equal).  Each batch carries the byte offset and line where it starts, so that a run can be
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

__all__ = ["TEXT_BATCH", "TextBatch", "conllu_line", "iter_text_batches"]

#: Bytes read at a time; a batch ends after the last blank line in what was read (a paragraph
#: longer than this makes a longer batch).
TEXT_BATCH = 1 << 18

#: The bytes that may stand on a blank line between its two line breaks (CRLF line ends
#: included; a line of other Unicode spaces is a paragraph break to the tokenizer too, but a
#: batch may end at any paragraph break, it need not end at every one).
_SPACES = b" \t\f\v\r"

#: A word line of CoNLL-U: an ID (``3``, ``3-4``, ``3.1``) and nine more tab-separated columns.
_CONLLU_LINE = re.compile(r"^\d+(?:[-.]\d+)?(?:\t[^\t\n]*){9}\r?$", re.MULTILINE)


class TextBatch(NamedTuple):
    """Paragraphs of a text file: ``text`` (decoded), the byte ``offset`` and ``line`` where
    they start, ``first``: whether this is the file's first batch (its first sentence gets
    ``# newdoc``)."""

    text: str
    offset: int
    line: int
    first: bool


def conllu_line(text: str) -> int | None:
    """The line number (1-based, in ``text``) of the first CoNLL-U word line (10 tab-separated
    columns, an ID first), or None."""
    m = _CONLLU_LINE.search(text)
    return None if m is None else text.count("\n", 0, m.start()) + 1


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
                      batch: int = TEXT_BATCH) -> Iterator[TextBatch]:
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
    chunk = f.read(batch)
    if first:
        problem = encoding_problem(chunk[:65536], name)
        if problem is not None:
            raise problem
        if chunk.startswith(b"\xef\xbb\xbf"):
            chunk, bom = chunk[3:], 3
    while True:
        data = pending + chunk
        cut = _last_break(data, len(pending)) if chunk else len(data)
        if cut:
            text = _decode(data[:cut], name, line)
            if first:
                at = conllu_line(text)
                if at is not None:
                    raise ConlluError(name, line + at - 1, "this is CoNLL-U (a line of 10 "
                                      "tab-separated columns), not plain text: give it with "
                                      "--input conllu")
            yield TextBatch(text, offset, line, first)
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
    ``lo`` (the bytes before ``lo`` were searched already), else 0."""
    pos = data.rfind(b"\n")
    while pos >= lo and pos > 0:
        j = pos - 1
        while j >= 0 and data[j] in _SPACES:
            j -= 1
        if j >= 0 and data[j] == 10:  # another line break: a blank line ends at pos
            return pos + 1
        pos = data.rfind(b"\n", 0, j + 1) if j >= 0 else -1
    return 0
