"""Reading CoNLL-U files: streams split into sentence blocks, each built and validated.

Malformed input raises :class:`~depparse.errors.ConlluError` (``path:line: message``).  Two
recoverable deviations are accepted with a :class:`~depparse.errors.ConlluWarning` and
round-trip unchanged: a UTF-8 byte-order mark at the start of the file and CRLF line
terminators.  Lines are split on ``\\n`` only, so other characters that Python treats as line
breaks (``\\x0b``, ``\\u2028``, ...) stay inside their line.  An empty file holds no
sentences, which is valid CoNLL-U.

For byte-exact round trips pass paths or binary file objects.  A text file object opened
with the default ``newline=None`` has already translated CRLF to LF before this module sees
it (open it with ``newline=""`` to keep CRLF).
"""

from __future__ import annotations

import io
import os
import re
import warnings
from collections.abc import Iterator
from typing import IO, Any, Union

from ..errors import ConlluError, ConlluWarning
from .sentence import Sentence, build_sentence

__all__ = ["PathOrFile", "encoding_problem", "iter_conllu", "read_conllu", "read_sentence"]

PathOrFile = Union[str, "os.PathLike[str]", IO[str], IO[bytes]]

_CHUNK = 1 << 20
_BOM = "\ufeff"


def _stream_name(f: Any) -> str:
    name = getattr(f, "name", None)
    if isinstance(name, (str, bytes, os.PathLike)):
        return os.fsdecode(name)
    return "<stream>"


#: Magic numbers of compressed files: what they are, and the command that decompresses one.
_COMPRESSED = ((b"\x1f\x8b", "gzip-compressed", "zcat"), (b"BZh", "bzip2-compressed", "bzcat"),
               (b"\xfd7zXZ\x00", "xz-compressed", "xzcat"),
               (b"\x28\xb5\x2f\xfd", "zstd-compressed", "zstdcat"))


def encoding_problem(head: bytes, path: str) -> ConlluError | None:
    """Why the first bytes of a file show that it is not UTF-8 text, with what to do: UTF-16
    or UTF-32 (a byte-order mark, or every other byte NUL), a compressed file, a binary file
    (NUL bytes among bytes that are not UTF-8); None otherwise (NUL characters in UTF-8 text
    are left to the reader).

    Parameters
    ----------
    head : bytes
        The start of the file (a few kilobytes are enough).
    path : str
        The file name for the message (``FILE:1: ...``).
    """
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        kind = "UTF-32" if head.startswith(b"\xff\xfe\x00\x00") else "UTF-16"
        return ConlluError(path, 1, f"the file is {kind} (it starts with a {kind} byte-order "
                           f"mark); depparse reads UTF-8: convert it first, e.g. iconv -f "
                           f"{kind} -t UTF-8 {path} > {_utf8_name(path)}")
    if head.startswith(b"\x00\x00\xfe\xff"):
        return ConlluError(path, 1, "the file is UTF-32 (it starts with a UTF-32 byte-order "
                           f"mark); depparse reads UTF-8: convert it first, e.g. iconv -f UTF-32 "
                           f"-t UTF-8 {path} > {_utf8_name(path)}")
    for magic, kind, cat in _COMPRESSED:
        if head.startswith(magic):
            return ConlluError(path, 1, f"the file is {kind}: decompress it first, e.g. "
                               f"{cat} {path} | depparse parse - ...")
    nul = head.find(b"\x00")
    if nul < 0:
        return None
    sample = head[:4096]
    half = len(sample) / 2
    even, odd = sample[0::2].count(0), sample[1::2].count(0)
    if len(sample) >= 64 and max(even, odd) >= 0.9 * half and min(even, odd) <= 0.1 * half:
        return ConlluError(path, 1, "the file looks like UTF-16 without a byte-order mark "
                           "(every other byte is NUL); depparse reads UTF-8: convert it first, "
                           f"e.g. iconv -f UTF-16{'LE' if odd >= even else 'BE'} -t UTF-8 "
                           f"{path} > {_utf8_name(path)}")
    try:  # NUL characters in UTF-8 text are the reader's to judge; bytes that are no text:
        head.decode("utf-8")
    except UnicodeDecodeError as err:
        if err.start < len(head) - 3:  # not a character cut at the end of the sample
            line = head.count(b"\n", 0, nul) + 1
            return ConlluError(path, line, f"a NUL byte (at byte {nul + 1} of the file) and "
                               "bytes that are not UTF-8: this is a binary file, not text; "
                               "give a CoNLL-U or plain-text file")
    return None


def _utf8_name(path: str) -> str:
    stem, ext = os.path.splitext(os.path.basename(path))
    return f"{stem}.utf8{ext}" if ext else f"{stem}.utf8"


def _decode(data: bytes, first_line: int, path: str) -> tuple[str, ConlluError | None]:
    """Decode UTF-8; on failure return the text of the complete lines before the error."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as err:
        bol = data.rfind(b"\n", 0, err.start) + 1
        line = first_line + data.count(b"\n", 0, bol)
        bad = data[err.start : err.end]
        exc = ConlluError(
            path,
            line,
            f"invalid UTF-8 byte(s) {bad!r} at byte {err.start - bol + 1} of the line",
        )
        return data[:bol].decode("utf-8"), exc


def _line_batches(
    f: Any, path: str, tolerant: bool = False, first_line: int = 1
) -> Iterator[tuple[list[str], bool]]:
    """Yield ``(lines, terminated)`` batches; lines are split on ``\\n`` only.

    The ``\\n`` is removed, a ``\\r`` before it is kept.  ``terminated`` is False only
    for the final batch when the file does not end with ``\\n`` (its last line is then
    unterminated).  ``tolerant``: invalid UTF-8 bytes are decoded as lone surrogates
    (``surrogateescape``) instead of raising; :func:`_parse_stream` then rejects their
    sentence alone.  ``first_line``: the number of the stream's first line (a stream that
    starts in the middle of a file); the encoding of a stream that starts at line 1 is checked
    first (:func:`encoding_problem`).
    """
    pending: Any = None
    nl: Any = None
    line_no = first_line
    while True:
        chunk = f.read(_CHUNK)
        if pending is None:
            if not chunk:
                return
            if isinstance(chunk, str):
                pending, nl = "", "\n"
            else:
                pending, nl = b"", b"\n"
                if first_line == 1:
                    problem = encoding_problem(bytes(chunk[:65536]), path)
                    if problem is not None:
                        raise problem
        if not chunk:
            break
        if isinstance(chunk, (bytearray, memoryview)):
            chunk = bytes(chunk)
        data = pending + chunk
        cut = data.rfind(nl) + 1
        if cut == 0:
            pending = data
            continue
        pending = data[cut:]
        data = data[:cut]
        error = None
        if nl == b"\n":
            if tolerant:
                data = data.decode("utf-8", "surrogateescape")
            else:
                data, error = _decode(data, line_no, path)
        lines = data.split("\n")
        lines.pop()
        if lines:
            yield lines, True
        if error is not None:
            raise error
        line_no += len(lines)
    if pending:
        error = None
        if nl == b"\n":
            if tolerant:
                text = pending.decode("utf-8", "surrogateescape")
            else:
                text, error = _decode(pending, line_no, path)
            if error is None:
                yield [text], False
            else:
                if text:
                    yield text.split("\n")[:-1], True
                raise error
        else:
            yield [pending], False


_SURROGATE_RE = re.compile("[\\udc80-\\udcff]")


def _utf8_error(line: str, path: str, line_no: int) -> ConlluError:
    """The error for a line decoded with ``surrogateescape`` that holds invalid UTF-8."""
    raw = line.encode("utf-8", "surrogateescape")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as err:
        bad = raw[err.start : err.end]
        return ConlluError(
            path, line_no, f"invalid UTF-8 byte(s) {bad!r} at byte {err.start + 1} of the line"
        )
    return ConlluError(path, line_no, "invalid UTF-8")  # pragma: no cover


def _build_or_skip(
    block: list[str], eols: list[str], start: int, path: str, prefix: str,
    bad: ConlluError | None, on_error: Any,
) -> Sentence | None:
    """:func:`build_sentence`; in tolerant mode (``on_error``) a bad block is reported and
    skipped."""
    if on_error is None:
        return build_sentence(block, eols, start, path, prefix)
    try:
        if bad is not None:
            raise bad
        return build_sentence(block, eols, start, path, prefix)
    except ConlluError as err:
        on_error(err)
        return None


def _parse_stream(f: Any, path: str, on_error: Any = None,
                  first_line: int = 1) -> Iterator[Sentence]:
    """Split a stream into sentence blocks and build them (see iter_conllu)."""
    tolerant = on_error is not None
    bad: ConlluError | None = None  # tolerant mode: invalid UTF-8 in the current block
    skipped = False  # tolerant mode: the last block was skipped (drop its separator)
    block: list[str] = []
    eols: list[str] = []
    start = 0
    prefix: list[str] = []
    sep: list[str] = []
    prev: Sentence | None = None
    first_done = False
    crlf_warned = False
    line_no = first_line - 1
    for batch, terminated in _line_batches(f, path, tolerant, first_line):
        last = len(batch) - 1
        for idx, line in enumerate(batch):
            line_no += 1
            if terminated or idx < last:
                if line.endswith("\r"):
                    line = line[:-1]
                    eol = "\r\n"
                    if not crlf_warned:
                        crlf_warned = True
                        warnings.warn(
                            f"{path}:{line_no}: CRLF line terminators; they are kept as they are",
                            ConlluWarning,
                            stacklevel=3,
                        )
                else:
                    eol = "\n"
            else:
                eol = ""
            if line_no == 1 and line.startswith(_BOM):
                line = line[1:]
                prefix.append(_BOM)
                warnings.warn(
                    f"{path}:1: UTF-8 byte-order mark at the start of the file; "
                    "it is kept as it is",
                    ConlluWarning,
                    stacklevel=3,
                )
            if line and not line.isspace():
                if not block:
                    if prev is not None:
                        prev._sep = "".join(sep)
                        sep = []
                        yield prev
                        prev = None
                    start = line_no
                    skipped = False
                if tolerant and bad is None and _SURROGATE_RE.search(line):
                    bad = _utf8_error(line, path, line_no)
                block.append(line)
                eols.append(eol)
            else:
                if block:
                    pre = "" if first_done else "".join(prefix)
                    prev = _build_or_skip(block, eols, start, path, pre, bad, on_error)
                    first_done = first_done or prev is not None
                    skipped = prev is None
                    bad = None
                    block = []
                    eols = []
                if prev is None:
                    if not skipped:
                        prefix.append(line + eol)
                else:
                    sep.append(line + eol)
    if block:
        pre = "" if first_done else "".join(prefix)
        prev = _build_or_skip(block, eols, start, path, pre, bad, on_error)
    elif prev is not None:
        prev._sep = "".join(sep)
    if prev is not None:
        yield prev


def iter_conllu(path_or_file: PathOrFile, *, on_error: Any = None,
                first_line: int = 1) -> Iterator[Sentence]:
    """Iterate over the sentences of a CoNLL-U file.

    Parameters
    ----------
    path_or_file : str, os.PathLike or file object
        A path (``"-"`` is an ordinary file name here), or an open file object in binary
        mode (preferred: exact bytes) or text mode.  File objects are not closed.
    on_error : callable, optional
        Tolerant reading: a malformed sentence block (including one with invalid UTF-8)
        is passed to ``on_error(ConlluError)`` and skipped instead of raising, and reading
        goes on with the next block (``depparse parse --skip-bad``).
    first_line : int, optional
        The line number of the stream's first line, for a file object positioned at the start
        of a sentence in the middle of a file (``depparse parse --resume``): line numbers,
        in the sentences and in error messages, count from it.  Default 1.

    Yields
    ------
    Sentence
        In file order.

    Raises
    ------
    ConlluError
        On malformed input (raised when the iteration reaches it), and for a file that is
        not UTF-8 text at all: UTF-16, compressed or binary (:func:`encoding_problem`).
    OSError
        If the file cannot be opened or read.

    Warns
    -----
    ConlluWarning
        For a byte-order mark or CRLF line terminators (both kept).
    """
    if isinstance(path_or_file, (str, bytes, os.PathLike)):
        name = os.fsdecode(path_or_file)
        with open(path_or_file, "rb") as f:
            yield from _parse_stream(f, name, on_error, first_line)
    elif hasattr(path_or_file, "read"):
        yield from _parse_stream(path_or_file, _stream_name(path_or_file), on_error, first_line)
    else:
        raise TypeError(f"expected a path or a file object, got {type(path_or_file).__name__}")


def read_conllu(path_or_file: PathOrFile, *, on_error: Any = None) -> list[Sentence]:
    """Read all sentences of a CoNLL-U file.

    Parameters
    ----------
    path_or_file : str, os.PathLike or file object
        See :func:`iter_conllu`.
    on_error : callable, optional
        Tolerant reading, see :func:`iter_conllu`.

    Returns
    -------
    list of Sentence
        Empty for an empty file (the caller decides whether that is an error).

    Raises
    ------
    ConlluError
        On malformed input.
    """
    return list(iter_conllu(path_or_file, on_error=on_error))


def read_sentence(text: str, source: str = "<string>") -> Sentence:
    """Parse exactly one sentence from CoNLL-U text.

    Parameters
    ----------
    text : str
        One sentence block (a trailing blank line is optional).
    source : str, optional
        Name used in error messages.

    Returns
    -------
    Sentence

    Raises
    ------
    ConlluError
        If the text is malformed or does not hold exactly one sentence.
    """
    sentences = list(_parse_stream(io.StringIO(text), source))
    if len(sentences) != 1:
        line = sentences[1].line_no if len(sentences) > 1 else 1
        raise ConlluError(source, line, f"expected one sentence, found {len(sentences)}")
    return sentences[0]
