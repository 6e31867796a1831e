"""The CoNLL-U sentence: raw lines kept for lossless output, numpy views of its words.

A :class:`Sentence` keeps the raw lines it was read from (without their line terminators),
the terminator of each line, the blank separator line(s) that followed it, and, for the
first sentence of a file, anything that preceded it (a UTF-8 byte-order mark, leading blank
lines).  Writing (:mod:`depparse.conllu.writer`) therefore never regenerates a line from
parsed fields: an unmodified sentence is written back byte for byte; a sentence whose
``heads``/``rels`` were changed is written with only columns 7 (HEAD) and 8 (DEPREL) of the
changed word lines replaced, and one made by :meth:`Sentence.with_tags` with only the LEMMA,
UPOS, XPOS and FEATS columns (3-6) of the words whose values changed.  **DEPS (column 9) is
left exactly as in the input.**

:func:`build_sentence` validates one block of lines and makes its Sentence: the ``conllu``
library does the field-level validation (:func:`conllu.parser.parse_id_value` for IDs,
:func:`conllu.parser.parse_int_value` for HEAD, :func:`conllu.parser.parse_comment_line` for
``# key = value`` metadata), converted to :class:`~depparse.errors.ConlluError`.  Columns
are split on TAB only (CoNLL-U allows spaces inside FORM and LEMMA), and MISC/FEATS are
never parsed into dicts: the ``conllu`` MISC parser drops repeated keys and cuts values
containing ``=``.

Array convention: for a sentence of ``n`` syntactic words every array has length ``n + 1``
and index 0 is the artificial root.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from conllu.exceptions import ParseException
from conllu.parser import parse_comment_line, parse_id_value, parse_int_value

from ..errors import ConlluError

__all__ = ["COLUMNS", "ROOT", "Sentence", "build_sentence"]

#: The FORM/LEMMA/UPOS/XPOS placeholder at index 0 (the artificial root).
ROOT = "<ROOT>"

#: Column names, for error messages.
COLUMNS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")

_RANGE_RE = re.compile(r"([0-9]+)-([0-9]+)")


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr.flags.writeable = False
    return arr


class Sentence:
    """One CoNLL-U sentence: raw lines plus numpy views of its syntactic words.

    Instances come from :func:`~depparse.conllu.read_conllu`,
    :func:`~depparse.conllu.iter_conllu` or :func:`~depparse.conllu.read_sentence`; they
    are not constructed directly.

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
    ``heads`` and ``rels`` are written back, and the tag columns of a copy made by
    :meth:`with_tags`.  The other arrays are read-only so that edits that would be silently
    lost cannot happen; derive new tags with :meth:`with_tags`.
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
        "_orig_tags",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(
            "Sentence objects are created by read_conllu(), iter_conllu() or read_sentence()"
        )

    # -- construction -------------------------------------------------------------------

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

    def with_tags(self, lemmas: Sequence[str] | None = None, upos: Sequence[str] | None = None,
                  xpos: Sequence[str] | None = None,
                  feats: Sequence[str] | None = None) -> Sentence:
        """Return a copy carrying new LEMMA / UPOS / XPOS / FEATS columns (``None``: keep).

        Parameters
        ----------
        lemmas, upos, xpos, feats : array-like of str, shape (n + 1,), optional
            The new values (index 0, the root, is ignored).  ``""`` and ``"_"`` both mean
            an empty field: the arrays hold ``"_"`` for LEMMA/UPOS/XPOS and ``""`` for
            FEATS, as when read.

        Returns
        -------
        Sentence
            A copy whose writer (:meth:`to_text`) replaces exactly those of columns 3-6
            whose value changed, on the words where it changed; every other byte (comments,
            multiword-token lines, empty nodes, MISC, line terminators) is kept.

        Raises
        ------
        ValueError, TypeError
            If an array has the wrong length, a value is not a string, contains a TAB or a
            line break, or (UPOS, XPOS, FEATS) contains whitespace.
        """
        new = self._clone()
        if new._orig_tags is None:
            new._orig_tags = (self.lemmas, self.upos, self.xpos, self.feats)
        for col, name, values in ((2, "lemmas", lemmas), (3, "upos", upos), (4, "xpos", xpos),
                                  (5, "feats", feats)):
            if values is None:
                continue
            if len(values := list(values)) != self.n + 1:
                raise ValueError(f"{name} has length {len(values)}, expected {self.n + 1}")
            empty = "" if col == 5 else "_"
            arr = np.empty(self.n + 1, dtype=object)
            arr[0] = "" if col == 5 else ROOT
            for m in range(1, self.n + 1):
                v = values[m]
                if not isinstance(v, str):
                    raise TypeError(f"{name}[{m}] must be str, got {type(v).__name__}")
                if (_SPACE if col > 2 else _BREAK).search(v):
                    raise ValueError(f"{name}[{m}] = {v!r}: invalid {COLUMNS[col]} value")
                arr[m] = empty if v in ("", "_") else v
            setattr(new, name, _readonly(arr))
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
        """True if ``heads``, ``rels`` or the tag columns differ from the values read."""
        return self._changed_words().size > 0 or bool(self._changed_tags())

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

    def _changed_tags(self) -> dict[int, list[int]]:
        """``{word: [columns whose tag value changed]}`` (columns 2-5, 0-based)."""
        out: dict[int, list[int]] = {}
        if self._orig_tags is None:
            return out
        for col, orig, cur in zip((2, 3, 4, 5), self._orig_tags,
                                  (self.lemmas, self.upos, self.xpos, self.feats), strict=True):
            if cur is not orig:
                for m in (np.flatnonzero(cur[1:] != orig[1:]) + 1).tolist():
                    out.setdefault(m, []).append(col)
        return out

    def _current_lines(self) -> tuple[str, ...] | list[str]:
        changed = self._changed_words()
        tags = self._changed_tags()
        if changed.size == 0 and not tags:
            return self.lines
        n = self.n
        lines = list(self.lines)
        values = (None, None, self.lemmas, self.upos, self.xpos, self.feats)
        for m, cols_changed in tags.items():
            k = self._rows[m]
            cols = lines[k].split("\t")
            for c in cols_changed:
                cols[c] = values[c][m] or "_"
            lines[k] = "\t".join(cols)
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
            and LEMMA/UPOS/XPOS/FEATS (:meth:`with_tags`) rewritten where they were changed,
            then the separator.  Not included: the
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


# ``\s`` of a str pattern is exactly str.isspace() (both Py_UNICODE_ISSPACE; a test holds them
# equal over every code point): one regex search per value instead of a Python loop per character
_SPACE = re.compile(r"\s")
_BREAK = re.compile(r"[\t\n\r]")


def _check_rel(rel: Any, m: int) -> None:
    if not isinstance(rel, str):
        raise TypeError(f"relation of word {m} must be str, got {type(rel).__name__}")
    if _SPACE.search(rel):
        raise ValueError(f"relation {rel!r} of word {m} contains whitespace")


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


def build_sentence(lines: list[str], eols: list[str], start: int, path: str,
                   prefix: str) -> Sentence:
    """Validate one sentence block (its lines without terminators, and the terminators)
    and build its Sentence; ``start`` is the block's first line number."""
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
    s._orig_tags = None
    return s
