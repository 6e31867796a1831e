"""Lossless reading and writing of CoNLL-U files.

Every :class:`Sentence` keeps the raw lines it was read from (without their line
terminators), the terminator of each line, the blank separator line(s) that followed
it, and, for the first sentence of a file, anything that preceded it (a UTF-8
byte-order mark, leading blank lines).  Writing therefore never regenerates a line
from parsed fields:

* an unmodified sentence is written back byte for byte as it was read, so reading
  and then writing an unmodified file reproduces it exactly (comments, multiword
  token lines ``1-2``, empty nodes ``8.1``, FEATS, DEPS, MISC, the final newline
  and the blank-line structure included);
* a sentence whose ``heads``/``rels`` arrays were changed (in place, by assignment,
  or through :meth:`Sentence.with_parse`) is written with only columns 7 (HEAD)
  and 8 (DEPREL) of the changed syntactic-word lines replaced; every other byte,
  including the other columns, comments, multiword-token and empty-node lines, is
  kept.  **DEPS (column 9) is left exactly as in the input**: it is not updated to
  match a new basic tree.

The ``conllu`` library does the field-level validation (:func:`conllu.parser.parse_id_value`
for IDs, :func:`conllu.parser.parse_int_value` for HEAD, :func:`conllu.parser.parse_comment_line`
for ``# key = value`` metadata) and its :class:`~conllu.exceptions.ParseException` is
converted to :class:`ConlluError`.  Columns are split on TAB only (CoNLL-U allows
spaces inside FORM and LEMMA), and MISC/FEATS are never parsed into dicts: the
``conllu`` MISC parser drops repeated keys and cuts values containing ``=``.

Malformed input raises :class:`ConlluError` (``path:line: message``).  Two
recoverable deviations are accepted with a :class:`ConlluWarning` and round-trip
unchanged: a UTF-8 byte-order mark at the start of the file and CRLF line
terminators.  Lines are split on ``\\n`` only, so other characters that Python
treats as line breaks (``\\x0b``, ``\\u2028``, ...) stay inside their line.

For byte-exact round trips pass paths or binary file objects.  A text file object
opened with the default ``newline=None`` has already translated CRLF to LF before
this module sees it (open it with ``newline=""`` to keep CRLF).

Array convention: for a sentence of ``n`` syntactic words every array has length
``n + 1`` and index 0 is the artificial root.
"""

from __future__ import annotations

import io
import os
import re
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Any, Union

import numpy as np
from conllu.exceptions import ParseException
from conllu.parser import parse_comment_line, parse_id_value, parse_int_value

__all__ = [
    "ROOT",
    "ConlluError",
    "ConlluWarning",
    "Sentence",
    "iter_conllu",
    "read_conllu",
    "validate_tree",
    "write_conllu",
]

#: The FORM/LEMMA/UPOS/XPOS placeholder at index 0 (the artificial root).
ROOT = "<ROOT>"

#: Column names, for error messages.
COLUMNS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")

PathOrFile = Union[str, "os.PathLike[str]", IO[str], IO[bytes]]

_CHUNK = 1 << 20
_BOM = "\ufeff"
_RANGE_RE = re.compile(r"([0-9]+)-([0-9]+)")


class ConlluError(Exception):
    """Malformed CoNLL-U input.

    Parameters
    ----------
    path : str
        File name, the file object's ``name``, or ``'<stream>'``.
    line : int
        1-based line number of the offending line.
    message : str
        What is wrong.

    Notes
    -----
    ``str(err)`` is ``f"{path}:{line}: {message}"``.
    """

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(path, line, message)
        self.path = str(path)
        self.line = int(line)
        self.message = str(message)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class ConlluWarning(UserWarning):
    """A recoverable deviation in CoNLL-U input (BOM, CRLF); the data is kept as is."""


# ---------------------------------------------------------------------------------------
# Sentence
# ---------------------------------------------------------------------------------------


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr.flags.writeable = False
    return arr


class Sentence:
    """One CoNLL-U sentence: raw lines plus numpy views of its syntactic words.

    Instances come from :func:`read_conllu`, :func:`iter_conllu` or
    :meth:`Sentence.from_text`; they are not constructed directly.

    Attributes
    ----------
    n : int
        Number of syntactic words (integer IDs; multiword tokens and empty nodes excluded).
    ids : numpy.ndarray of int64, shape (n + 1,)
        ``0, 1, ..., n`` (0 is the root).
    forms, lemmas : numpy.ndarray of object (str), shape (n + 1,)
        FORM and LEMMA; index 0 is ``"<ROOT>"``.  ``_`` stays ``"_"`` (it can be a word).
    upos, xpos : numpy.ndarray of object (str), shape (n + 1,)
        UPOS and XPOS as in the file (``_`` stays ``"_"``); index 0 is ``"<ROOT>"``.
    feats : numpy.ndarray of object (str), shape (n + 1,)
        FEATS as in the file, ``_`` becomes ``""``; index 0 is ``""``.
    heads : numpy.ndarray of int64, shape (n + 1,)
        ``heads[m]`` is the head of word ``m``; ``heads[0] == -1``; ``-1`` where HEAD is ``_``.
        Writable: changes are written back to column 7.
    rels : numpy.ndarray of object (str), shape (n + 1,)
        DEPREL, ``_`` becomes ``""``; index 0 is ``""``.  Writable: changes are written
        back to column 8 (``""`` is written as ``_``).
    comments : tuple of str
        The comment lines, verbatim (with the leading ``#``).
    metadata : dict
        ``# key = value`` comments as parsed by :func:`conllu.parser.parse_comment_line`
        (``newdoc``/``newpar`` without a value map to ``None``).
    sent_id, text : str or None
        ``metadata["sent_id"]`` and ``metadata["text"]`` where present.
    line_no : int
        1-based line number of the sentence's first line in its file.
    word_line_nos : numpy.ndarray of int64, shape (n + 1,)
        File line number of each word; index 0 holds ``line_no``.
    lines : tuple of str
        The raw lines as read, without line terminators (not updated by parse changes).
    source : str
        The file the sentence was read from (or the stream's name).

    Notes
    -----
    Only ``heads`` and ``rels`` are written back.  The other arrays are read-only so that
    edits that would be silently lost cannot happen; copy them to derive new values.
    """

    __slots__ = (
        "n",
        "ids",
        "forms",
        "lemmas",
        "upos",
        "xpos",
        "feats",
        "heads",
        "rels",
        "comments",
        "metadata",
        "line_no",
        "word_line_nos",
        "lines",
        "source",
        "_eols",
        "_eol",
        "_sep",
        "_prefix",
        "_rows",
        "_orig_heads",
        "_orig_rels",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(
            "Sentence objects are created by read_conllu(), iter_conllu() or Sentence.from_text()"
        )

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_text(cls, text: str, source: str = "<string>") -> Sentence:
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

    def _clone(self) -> Sentence:
        new = object.__new__(type(self))
        for name in Sentence.__slots__:
            object.__setattr__(new, name, getattr(self, name))
        new.metadata = dict(self.metadata)
        return new

    def copy(self) -> Sentence:
        """Return an independent copy (``heads``, ``rels`` and ``metadata`` are copied).

        Returns
        -------
        Sentence
        """
        new = self._clone()
        new.heads = np.array(self.heads, dtype=np.int64, copy=True)
        new.rels = np.array(self.rels, dtype=object, copy=True)
        return new

    def with_parse(self, heads: Sequence[int], rels: Sequence[str] | None = None) -> Sentence:
        """Return a copy carrying a new parse.

        Parameters
        ----------
        heads : array-like of int, shape (n + 1,)
            ``heads[m]`` is the head of word ``m`` (0 = root, -1 = unannotated, written
            as ``_``); ``heads[0]`` is ignored and set to -1.
        rels : array-like of str, shape (n + 1,), optional
            Dependency relations (``""`` is written as ``_``); ``rels[0]`` is ignored.
            Default: keep this sentence's ``rels``.

        Returns
        -------
        Sentence
            A copy whose HEAD/DEPREL columns will be written from the new arrays.

        Raises
        ------
        ValueError, TypeError
            If the arrays have the wrong length, type or values.
        """
        n = self.n
        h = np.asarray(heads)
        if h.shape != (n + 1,):
            raise ValueError(f"heads has shape {h.shape}, expected ({n + 1},) (root at index 0)")
        if h.dtype.kind not in "iu":
            raise TypeError(f"heads must be integers, got dtype {h.dtype}")
        h = h.astype(np.int64, copy=True)
        h[0] = -1
        bad = np.flatnonzero((h[1:] < -1) | (h[1:] > n))
        if bad.size:
            m = int(bad[0]) + 1
            raise ValueError(f"head {int(h[m])} of word {m} is out of range -1..{n}")
        if rels is None:
            r = np.array(self.rels, dtype=object, copy=True)
        else:
            rels = list(rels)
            if len(rels) != n + 1:
                raise ValueError(f"rels has length {len(rels)}, expected {n + 1} (root at index 0)")
            r = np.empty(n + 1, dtype=object)
            r[:] = rels
            for m in range(1, n + 1):
                _check_rel(r[m], m)
            r[0] = ""
        new = self._clone()
        new.heads = h
        new.rels = r
        return new

    # -- derived attributes ------------------------------------------------------------

    @property
    def sent_id(self) -> str | None:
        """``# sent_id`` or None."""
        return self.metadata.get("sent_id")

    @property
    def text(self) -> str | None:
        """``# text`` or None."""
        return self.metadata.get("text")

    @property
    def has_gold_heads(self) -> bool:
        """True if every word has a HEAD (none is ``_``)."""
        return self.n > 0 and bool((np.asarray(self.heads)[1:] >= 0).all())

    @property
    def newline(self) -> str:
        """The sentence's line terminator (``"\\n"`` or ``"\\r\\n"``)."""
        return self._eols[0] or "\n"

    @property
    def modified(self) -> bool:
        """True if ``heads`` or ``rels`` differ from the values read from the file."""
        return self._changed_words().size > 0

    def __repr__(self) -> str:
        return f"<Sentence sent_id={self.sent_id!r} n={self.n} at {self.source}:{self.line_no}>"

    # -- output ---------------------------------------------------------------------------

    def _changed_words(self) -> np.ndarray:
        n = self.n
        h = np.asarray(self.heads)
        if h.shape != (n + 1,):
            raise ValueError(
                f"{self.source}:{self.line_no}: heads has shape {h.shape}, expected ({n + 1},)"
            )
        if h.dtype.kind not in "iu":
            raise TypeError(
                f"{self.source}:{self.line_no}: heads must be integers, got dtype {h.dtype}"
            )
        r = self.rels
        if not isinstance(r, np.ndarray) or r.dtype != object or r.ndim != 1:
            r = list(r)
            if len(r) != n + 1:
                raise ValueError(
                    f"{self.source}:{self.line_no}: rels has length {len(r)}, expected {n + 1}"
                )
            r_arr = np.empty(n + 1, dtype=object)
            r_arr[:] = r
            r = r_arr
        if r.shape != (n + 1,):
            raise ValueError(
                f"{self.source}:{self.line_no}: rels has shape {r.shape}, expected ({n + 1},)"
            )
        changed = (h[1:] != self._orig_heads[1:]) | (r[1:] != self._orig_rels[1:])
        return np.flatnonzero(changed) + 1

    def _current_lines(self) -> tuple[str, ...] | list[str]:
        changed = self._changed_words()
        if changed.size == 0:
            return self.lines
        n = self.n
        lines = list(self.lines)
        for m in changed.tolist():
            head = self.heads[m]
            rel = self.rels[m]
            try:
                head = int(head)
                if not -1 <= head <= n:
                    raise ValueError(f"head {head} out of range -1..{n}")
                _check_rel(rel, m)
            except (TypeError, ValueError) as err:
                raise type(err)(
                    f"{self.source}:{int(self.word_line_nos[m])}: word {m}: {err}"
                ) from None
            k = self._rows[m]
            cols = lines[k].split("\t")
            cols[6] = str(head) if head >= 0 else "_"
            cols[7] = rel or "_"
            lines[k] = "\t".join(cols)
        return lines

    def _block(self) -> str:
        lines = self._current_lines()
        eol = self._eol
        if eol is not None:
            return eol.join(lines) + eol
        return "".join([line + e for line, e in zip(lines, self._eols, strict=True)])

    def to_text(self, separator: bool = True) -> str:
        """Return the sentence block exactly as :func:`write_conllu` writes it.

        Parameters
        ----------
        separator : bool, optional
            Include the blank line(s) that followed the sentence in the input (normally
            one empty line; nothing for the last sentence of a file without a final
            blank line).  Default True.

        Returns
        -------
        str
            The comment and token lines, each with its original terminator, HEAD/DEPREL
            rewritten where the parse was changed, then the separator.  Not included: the
            BOM/leading blank lines of a file's first sentence (written only when that
            sentence is written first) and the line break that :func:`write_conllu` adds
            after a sentence lacking a blank line when it is not written last.
        """
        block = self._block()
        return block + self._sep if separator else block

    def _missing_break(self) -> str:
        """What must follow this sentence if another one is written after it."""
        nl = self.newline
        missing = "" if self._eols[-1] else nl
        if not self._sep or not self._sep.endswith("\n"):
            missing += nl
        return missing


def _check_rel(rel: Any, m: int) -> None:
    if not isinstance(rel, str):
        raise TypeError(f"relation of word {m} must be str, got {type(rel).__name__}")
    if rel and (rel.isspace() or any(c.isspace() for c in rel)):
        raise ValueError(f"relation {rel!r} of word {m} contains whitespace")


# ---------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------


def _stream_name(f: Any) -> str:
    name = getattr(f, "name", None)
    if isinstance(name, (str, bytes, os.PathLike)):
        return os.fsdecode(name)
    return "<stream>"


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
    f: Any, path: str, tolerant: bool = False
) -> Iterator[tuple[list[str], bool]]:
    """Yield ``(lines, terminated)`` batches; lines are split on ``\\n`` only.

    The ``\\n`` is removed, a ``\\r`` before it is kept.  ``terminated`` is False only
    for the final batch when the file does not end with ``\\n`` (its last line is then
    unterminated).  ``tolerant``: invalid UTF-8 bytes are decoded as lone surrogates
    (``surrogateescape``) instead of raising; :func:`_parse_stream` then rejects their
    sentence alone.
    """
    pending: Any = None
    nl: Any = None
    line_no = 1
    while True:
        chunk = f.read(_CHUNK)
        if pending is None:
            if not chunk:
                return
            if isinstance(chunk, str):
                pending, nl = "", "\n"
            else:
                pending, nl = b"", b"\n"
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


def _parse_id(tid: str, path: str, line: int) -> Any:
    try:
        value = parse_id_value(tid)
    except ParseException as err:
        m = _RANGE_RE.fullmatch(tid)
        if m and int(m.group(1)) > int(m.group(2)):
            raise ConlluError(
                path, line, f"invalid multiword token range {tid}: start exceeds end"
            ) from None
        raise ConlluError(path, line, f"invalid ID {tid!r} ({err})") from None
    if value is None:
        raise ConlluError(path, line, f"invalid ID {tid!r}")
    canonical = str(value) if isinstance(value, int) else f"{value[0]}{value[1]}{value[2]}"
    if canonical != tid:
        raise ConlluError(path, line, f"invalid ID {tid!r} (not in canonical form {canonical})")
    return value


def _parse_head(h: str, path: str, line: int) -> int:
    try:
        value = parse_int_value(h)
    except ParseException:
        raise ConlluError(path, line, f"HEAD {h!r} is not an integer") from None
    if value is None:
        return -1
    if value < 0:
        raise ConlluError(path, line, f"HEAD {value} out of range")
    return value


def _check_global_columns(line: str, path: str, line_no: int) -> None:
    _, _, value = line.partition("=")
    names = [c.upper() for c in value.split()]
    if names != list(COLUMNS):
        raise ConlluError(
            path,
            line_no,
            f"CoNLL-U Plus column layout {value.strip()!r} is not supported "
            "(only the 10 standard CoNLL-U columns)",
        )


def _build(lines: list[str], eols: list[str], start: int, path: str, prefix: str) -> Sentence:
    """Validate one sentence block and build its Sentence."""
    comments: list[str] = []
    metadata: dict[str, Any] = {}
    forms = [ROOT]
    lemmas = [ROOT]
    upos = [ROOT]
    xpos = [ROOT]
    feats = [""]
    rels = [""]
    heads = [-1]
    rows = [0]
    n = 0
    tokens_seen = False
    mwt_end = 0
    mwt_id = ""
    mwt_line = 0
    empty_i = -1
    empty_j = 0
    for k, line in enumerate(lines):
        if line[0] == "#":
            if tokens_seen:
                raise ConlluError(
                    path,
                    start + k,
                    "comment line after token lines inside a sentence (missing blank line?)",
                )
            comments.append(line)
            if line.startswith("# global.columns"):
                _check_global_columns(line, path, start + k)
            try:
                for key, value in parse_comment_line(line):
                    metadata[key] = value
            except ParseException as err:
                raise ConlluError(path, start + k, f"invalid comment line ({err})") from None
            continue
        tokens_seen = True
        cols = line.split("\t")
        if len(cols) != 10:
            raise ConlluError(
                path, start + k, f"expected 10 tab-separated columns, found {len(cols)}"
            )
        if "" in cols:
            raise ConlluError(path, start + k, f"empty {COLUMNS[cols.index('')]} column")
        tid = cols[0]
        if tid.isdigit() and tid.isascii() and tid[0] != "0":
            wid: Any = int(tid)
        else:
            wid = _parse_id(tid, path, start + k)
        if type(wid) is int:
            if wid != n + 1:
                if 1 <= wid <= n:
                    msg = f"duplicate word ID {wid}"
                elif wid == 0:
                    msg = "word ID 0 is reserved for the root"
                else:
                    msg = f"word ID {wid} out of sequence (expected {n + 1})"
                raise ConlluError(path, start + k, msg)
            n = wid
            h = cols[6]
            if h.isdigit() and h.isascii() and (h[0] != "0" or len(h) == 1):
                heads.append(int(h))
            elif h == "_":
                heads.append(-1)
            else:
                heads.append(_parse_head(h, path, start + k))
            forms.append(cols[1])
            lemmas.append(cols[2])
            upos.append(cols[3])
            xpos.append(cols[4])
            f = cols[5]
            feats.append("" if f == "_" else f)
            d = cols[7]
            rels.append("" if d == "_" else d)
            rows.append(k)
        elif wid[1] == "-":
            a, b = wid[0], wid[2]
            if mwt_end > n:
                raise ConlluError(
                    path,
                    start + k,
                    f"multiword token {tid} starts before multiword token {mwt_id} "
                    f"is complete (words {n + 1}-{mwt_end} missing)",
                )
            if a != n + 1:
                raise ConlluError(
                    path,
                    start + k,
                    f"multiword token {tid} must start at the next word ID {n + 1}",
                )
            if b <= a:
                raise ConlluError(
                    path, start + k, f"multiword token range {tid} must span at least two words"
                )
            mwt_end, mwt_id, mwt_line = b, tid, start + k
        else:
            i, j = wid[0], wid[2]
            if i != n:
                raise ConlluError(
                    path,
                    start + k,
                    f"empty node {tid} out of place (it follows word {n}, so expected {n}.N)",
                )
            expected = empty_j + 1 if empty_i == i else 1
            if j != expected:
                raise ConlluError(
                    path, start + k, f"empty node {tid} out of sequence (expected {i}.{expected})"
                )
            empty_i, empty_j = i, j
    if n == 0:
        raise ConlluError(path, start, "sentence has no syntactic words")
    if mwt_end > n:
        raise ConlluError(
            path,
            mwt_line,
            f"multiword token {mwt_id} is not covered by the following words "
            f"(the sentence ends at word {n})",
        )
    harr = np.array(heads, dtype=np.int64)
    if int(harr.max()) > n:
        m = int(np.argmax(harr > n))
        raise ConlluError(
            path, start + rows[m], f"HEAD {int(harr[m])} out of range 0..{n} (word {m})"
        )
    rel_arr = np.empty(n + 1, dtype=object)
    rel_arr[:] = rels

    s = object.__new__(Sentence)
    s.n = n
    s.ids = _readonly(np.arange(n + 1, dtype=np.int64))
    s.forms = _readonly(np.array(forms, dtype=object))
    s.lemmas = _readonly(np.array(lemmas, dtype=object))
    s.upos = _readonly(np.array(upos, dtype=object))
    s.xpos = _readonly(np.array(xpos, dtype=object))
    s.feats = _readonly(np.array(feats, dtype=object))
    s.heads = harr
    s.rels = rel_arr
    s.comments = tuple(comments)
    s.metadata = metadata
    s.line_no = start
    s.word_line_nos = _readonly(np.array(rows, dtype=np.int64) + start)
    s.lines = tuple(lines)
    s.source = path
    s._eols = tuple(eols)
    first = eols[0]
    s._eol = first if first and eols.count(first) == len(eols) else None
    s._sep = ""
    s._prefix = prefix
    s._rows = rows
    s._orig_heads = _readonly(harr.copy())
    s._orig_rels = _readonly(rel_arr.copy())
    return s


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
    """:func:`_build`; in tolerant mode (``on_error``) a bad block is reported and skipped."""
    if on_error is None:
        return _build(block, eols, start, path, prefix)
    try:
        if bad is not None:
            raise bad
        return _build(block, eols, start, path, prefix)
    except ConlluError as err:
        on_error(err)
        return None


def _parse_stream(f: Any, path: str, on_error: Any = None) -> Iterator[Sentence]:
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
    line_no = 0
    for batch, terminated in _line_batches(f, path, tolerant):
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


def iter_conllu(path_or_file: PathOrFile, *, on_error: Any = None) -> Iterator[Sentence]:
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

    Yields
    ------
    Sentence
        In file order.

    Raises
    ------
    ConlluError
        On malformed input (raised when the iteration reaches it).
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
            yield from _parse_stream(f, name, on_error)
    elif hasattr(path_or_file, "read"):
        yield from _parse_stream(path_or_file, _stream_name(path_or_file), on_error)
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


# ---------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------


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
    from .atomic import atomic_output

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


# ---------------------------------------------------------------------------------------
# Tree check
# ---------------------------------------------------------------------------------------


def validate_tree(sentence: Sentence | Sequence[int], *, single_root: bool = False) -> str | None:
    """Check that heads form a tree rooted at 0.

    Parameters
    ----------
    sentence : Sentence or array-like of int, shape (n + 1,)
        A sentence (its current ``heads``) or a heads array with the root at index 0.
    single_root : bool, optional
        Also require exactly one word attached to the root (the UD convention).

    Returns
    -------
    str or None
        None if every word has exactly one head in ``0..n``, no word is its own head and
        there is no cycle (so every word is reachable from 0); otherwise a message
        naming the first problem found.
    """
    if isinstance(sentence, Sentence):
        heads = np.asarray(sentence.heads)
    else:
        heads = np.asarray(sentence)
    if heads.ndim != 1 or heads.dtype.kind not in "iu":
        return f"heads must be a 1-D integer array, got shape {heads.shape} dtype {heads.dtype}"
    n = heads.shape[0] - 1
    if n < 1:
        return "sentence has no words"
    h = heads.tolist()
    for m in range(1, n + 1):
        if h[m] < 0:
            return f"word {m} has no head"
        if h[m] > n:
            return f"head {h[m]} of word {m} is out of range 0..{n}"
        if h[m] == m:
            return f"word {m} is its own head"
    # 0 = unvisited, 1 = on the current path, 2 = known to reach the root
    state = [0] * (n + 1)
    state[0] = 2
    for m in range(1, n + 1):
        path = []
        v = m
        while state[v] == 0:
            state[v] = 1
            path.append(v)
            v = h[v]
        if state[v] == 1:
            cycle = path[path.index(v) :]
            return "cycle: " + " -> ".join(str(w) for w in [*cycle, v])
        for w in path:
            state[w] = 2
    if single_root:
        roots = [m for m in range(1, n + 1) if h[m] == 0]
        if len(roots) != 1:
            return f"{len(roots)} words attached to the root ({roots}), expected exactly one"
    return None
