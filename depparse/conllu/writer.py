"""Writing CoNLL-U: each sentence as :meth:`~depparse.conllu.Sentence.to_text` gives it,
atomically when written to a path (:mod:`depparse.atomic`)."""

from __future__ import annotations

import io
import os
from collections.abc import Iterable
from typing import Any

from ..atomic import atomic_output
from .reader import PathOrFile
from .sentence import Sentence

__all__ = ["SentenceText", "write_conllu"]

_CHUNK = 1 << 20


class SentenceText:
    """The text of consecutive sentences as :func:`write_conllu` writes them, one sentence at
    a time, for outputs written by chunks (``depparse parse`` streams its output).

    Parameters
    ----------
    count : int, optional
        Sentences already written before the first one given here (0: this one is the
        first of the output, and gets its file's leading text: a byte-order mark, blank
        lines).
    pending : str, optional
        What the last sentence written must get before another one follows it
        (:attr:`pending` of the writer that wrote it: the line break(s) of the last sentence
        of a file without a final blank line).

    The two attributes are all the state there is: a run that is stopped and continued
    (``--resume``) restores them and writes the same bytes as one run.
    """

    def __init__(self, count: int = 0, pending: str = ""):
        self.count = int(count)
        self.pending = str(pending)

    def __call__(self, s: Sentence) -> str:
        """The text of ``s``, written after the sentences seen so far."""
        if not isinstance(s, Sentence):
            raise TypeError(f"expected Sentence objects, got {type(s).__name__}")
        text = s.to_text()
        if self.count == 0:
            text = s._prefix + text
        elif self.pending:
            text = self.pending + text
        self.pending = s._missing_break()
        self.count += 1
        return text


def _write_sentences(sentences: Iterable[Sentence], write: Any, binary: bool) -> int:
    parts: list[str] = []
    size = 0
    count = 0
    text_of = SentenceText()
    for s in sentences:
        text = text_of(s)
        parts.append(text)
        size += len(text)
        count += 1
        if size >= _CHUNK:
            out = "".join(parts)
            write(out.encode("utf-8") if binary else out)
            parts = []
            size = 0
    if parts:
        out = "".join(parts)
        write(out.encode("utf-8") if binary else out)
    return count


def _is_binary(f: Any) -> bool:
    if isinstance(f, io.TextIOBase):
        return False
    if isinstance(f, (io.RawIOBase, io.BufferedIOBase)):
        return True
    mode = getattr(f, "mode", None)
    return isinstance(mode, str) and "b" in mode


def _write_atomic(sentences: Iterable[Sentence], path: str | os.PathLike[str]) -> int:
    """Write to a temporary file beside ``path``, fsync, then rename over it."""
    with atomic_output(path, "wb") as f:
        return _write_sentences(sentences, f.write, binary=True)


def write_conllu(sentences: Iterable[Sentence], path_or_file: PathOrFile) -> int:
    """Write sentences in CoNLL-U format.

    Parameters
    ----------
    sentences : iterable of Sentence
        Written in order, each as :meth:`Sentence.to_text` returns it.  The leading text
        of a file's first sentence (BOM, leading blank lines) is written only if that
        sentence is written first.  A sentence that lacked a final blank line (the last
        of a file without one) gets its line break(s) added when another sentence follows.
    path_or_file : str, os.PathLike or file object
        A path is written atomically: a temporary file in the same directory, fsync, then
        ``os.replace``; on any exception the temporary file is removed and an existing
        target is left untouched.  The file keeps an existing target's permissions.
        Symbolic links are followed (the link's target is replaced).  A file object
        (binary preferred, text accepted) is written to directly and not closed.

    Returns
    -------
    int
        The number of sentences written.

    Raises
    ------
    ValueError, TypeError
        If a sentence's ``heads``/``rels`` are invalid (wrong length or type, head out of
        range, relation containing whitespace).
    OSError
        If the file cannot be written.
    """
    if isinstance(path_or_file, (str, bytes, os.PathLike)):
        return _write_atomic(sentences, os.fsdecode(path_or_file))
    if not hasattr(path_or_file, "write"):
        raise TypeError(f"expected a path or a file object, got {type(path_or_file).__name__}")
    count = _write_sentences(sentences, path_or_file.write, _is_binary(path_or_file))
    flush = getattr(path_or_file, "flush", None)
    if flush is not None:
        flush()
    return count
