"""UDPipe's tokenized input formats read as CoNLL-U sentences: ``horizontal`` and ``vertical``.

As UDPipe reads them (UDPipe 1 User's Manual, Sec. 1.4 "Input Formats"; UDPipe 2's REST
parameter ``input``):

``horizontal``
    A sentence per line, its words separated by whitespace; a U+00A0 NO-BREAK SPACE inside a
    word is part of it and becomes a space in FORM.  Blank lines are skipped.
``vertical``
    A word per line, its form the line's text up to the first tab (the rest of the line is
    ignored); a blank line ends a sentence.

Each sentence is built by :func:`~.sentence.build_sentence` from word lines ``ID FORM _ _ _ _
_ _ _ _`` and followed by a blank line when written, so that it is what the rest of the
pipeline reads from a CoNLL-U file; its ``line_no`` (and the line of any error) is the line
of the input it starts on.  The lines are read as :mod:`.reader` reads them (UTF-8, split on
``\\n`` only, a byte-order mark and CRs before the line ends dropped here: the output is
CoNLL-U, not the input's bytes), so an input file is streamed whatever its size.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from ..errors import ConlluError
from .reader import PathOrFile, _line_batches, _stream_name
from .sentence import Sentence, build_sentence

__all__ = ["TOKEN_FORMATS", "iter_horizontal", "iter_vertical", "iter_words"]

#: The formats of this module: one word per line, or a sentence per line.
TOKEN_FORMATS = ("horizontal", "vertical")

#: Whitespace between the words of a horizontal line (U+00A0 is part of a word).
_GAP = re.compile(r"[^\S\u00a0]+")
_BOM = "\ufeff"


def _lines(f: Any, path: str, first_line: int) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a stream, without line ends (nor a CR before them), a
    byte-order mark at the start of the file dropped."""
    line_no = first_line - 1
    for batch, _ in _line_batches(f, path, False, first_line):
        for line in batch:
            line_no += 1
            if line.endswith("\r"):
                line = line[:-1]
            if line_no == 1 and line.startswith(_BOM):
                line = line[1:]
            yield line_no, line


def _sentence(forms: list[str], start: int, path: str, on_error: Any) -> Sentence | None:
    lines = [f"{i}\t{w}\t_\t_\t_\t_\t_\t_\t_\t_" for i, w in enumerate(forms, 1)]
    try:
        s = build_sentence(lines, ["\n"] * len(lines), start, path, "")
    except ConlluError as e:
        if on_error is None:
            raise
        on_error(e)
        return None
    s._sep = "\n"
    return s


def _open(path_or_file: PathOrFile, read):
    if isinstance(path_or_file, (str, bytes, os.PathLike)):
        name = os.fsdecode(path_or_file)
        with open(path_or_file, "rb") as f:
            yield from read(f, name)
    elif hasattr(path_or_file, "read"):
        yield from read(path_or_file, _stream_name(path_or_file))
    else:
        raise TypeError(f"expected a path or a file object, got {type(path_or_file).__name__}")


def iter_horizontal(path_or_file: PathOrFile, *, on_error: Any = None,
                    first_line: int = 1) -> Iterator[Sentence]:
    """The sentences of a ``horizontal`` file (module docstring), a line each.

    Parameters
    ----------
    path_or_file : str, os.PathLike or binary file object
        The file (a stream is read from where it is).
    on_error : callable, optional
        A sentence that cannot be built is passed to ``on_error(ConlluError)`` and skipped
        (``depparse parse --skip-bad``); without it the error is raised.
    first_line : int, optional
        The number of the stream's first line (a stream positioned at a line of a file).

    Yields
    ------
    Sentence
        ``line_no``: the line of the input.

    Raises
    ------
    ConlluError
        ``FILE:LINE: message`` for input that is not UTF-8 text.
    """
    def read(f, name):
        for line_no, line in _lines(f, name, first_line):
            forms = [w.replace("\u00a0", " ") for w in _GAP.split(line.strip()) if w]
            if forms:
                s = _sentence(forms, line_no, name, on_error)
                if s is not None:
                    yield s

    yield from _open(path_or_file, read)


def iter_vertical(path_or_file: PathOrFile, *, on_error: Any = None,
                  first_line: int = 1) -> Iterator[Sentence]:
    """The sentences of a ``vertical`` file (module docstring): parameters, results and errors
    as :func:`iter_horizontal`'s; ``line_no`` is the line of the sentence's first word."""
    def read(f, name):
        forms: list[str] = []
        start = 0
        for line_no, line in _lines(f, name, first_line):
            form = line.split("\t", 1)[0].strip()
            if form:
                if not forms:
                    start = line_no
                forms.append(form)
            elif forms:
                s = _sentence(forms, start, name, on_error)
                forms = []
                if s is not None:
                    yield s
        if forms:
            s = _sentence(forms, start, name, on_error)
            if s is not None:
                yield s

    yield from _open(path_or_file, read)


def iter_words(path_or_file: PathOrFile, kind: str, *, on_error: Any = None,
               first_line: int = 1) -> Iterator[Sentence]:
    """:func:`iter_horizontal` or :func:`iter_vertical`, by ``kind``."""
    if kind == "horizontal":
        return iter_horizontal(path_or_file, on_error=on_error, first_line=first_line)
    if kind == "vertical":
        return iter_vertical(path_or_file, on_error=on_error, first_line=first_line)
    raise ValueError(f"unknown input format {kind!r}; expected one of {TOKEN_FORMATS}")
