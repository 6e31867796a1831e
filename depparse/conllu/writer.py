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

__all__ = ["write_conllu"]

_CHUNK = 1 << 20


def _write_sentences(sentences: Iterable[Sentence], write: Any, binary: bool) -> int:
    parts: list[str] = []
    size = 0
    count = 0
    pending_break = ""
    for s in sentences:
        if not isinstance(s, Sentence):
            raise TypeError(f"expected Sentence objects, got {type(s).__name__}")
        text = s.to_text()
        if count == 0:
            text = s._prefix + text
        elif pending_break:
            text = pending_break + text
        pending_break = s._missing_break()
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
