"""Byte-range shards of corpus files: cut at sentence or paragraph boundaries, each parsed into
a shard file of its own, the shard files joined into the output.

This is what a worker of ``depparse parse --scheduler`` runs (:mod:`depparse.distributed`
sends the tasks; nothing here knows Dask), on files that every worker reads from a shared
filesystem.  The client never reads the corpus: it holds the list of shards and their counts.

Cutting (:func:`cut_points`, :func:`scan_range`, :func:`plan_file`)
    A file is cut at nominal byte offsets ``a_0 = 0 < a_1 < ...`` (:func:`cut_points`).  The
    scan of range ``i`` (:func:`scan_range`, a worker's task) counts its line breaks and finds
    the first *unit start* at or after ``a_i``: in CoNLL-U, a non-blank line that follows a
    blank one (the start of a sentence block); in plain text, the end of a blank line (the
    start of a paragraph, where :func:`~depparse.inference.textfile.iter_text_batches` may cut
    a batch).  A range that starts in the middle of a sentence so skips to the next sentence,
    and the shard before it reads past its nominal end to finish its last sentence (with the
    blank lines after it, which belong to it, :attr:`Sentence._sep`): shard ``i`` is the bytes
    ``[B_i, B_{i+1})`` between two unit starts, and its first line is
    ``1 + (line breaks before B_i)`` (a prefix sum over the scans), so that line numbers in
    messages are those of the file.  A file of one range is not scanned.

Parsing (:func:`parse_shard`, a worker's task)
    The shard's bytes are read as a stream (:class:`RangeFile`), as a local run reads them:
    :func:`~depparse.conllu.iter_conllu` from the shard's first line, or the model's tokenizer
    over the shard's paragraph batches (:func:`~depparse.inference.textfile.iter_text_batches`,
    as :meth:`~depparse.inference.tokenizer.Tokenizer.iter_sentences` reads a file; the
    file's first sentence, in whichever shard it is, gets ``# newdoc``);
    tagged by :meth:`~depparse.inference.columns.ColumnPolicy.assign` with the file's
    columns decided by the client from the file's first sentences (``task.columns``, the
    decision of a local run); parsed by :meth:`~depparse.inference.engine.Engine.iter_parsed`.
    The shard file is written to a temporary name and renamed, then its *meta* file (counts,
    what the joining needs) likewise: a shard is complete when its meta file is there, and a
    task that runs twice (its worker died, the scheduler ran it again; or a resumed run) only
    writes the same bytes again.

Joining (:class:`Joiner`)
    The shard files are copied into the output in order, with what a local run writes between
    them (:class:`~depparse.conllu.SentenceText`): the file's leading bytes before the output's
    first sentence (a byte-order mark, blank lines), and before a later shard the line break
    the previous file's last sentence lacked.  Plain text numbers its sentences per file
    (``# sent_id = N``, :meth:`~depparse.inference.tokenizer.Tokenizer.to_conllu`), which a
    worker cannot know in the middle of a file: a shard numbers its own from 1 and the joining
    adds the sentences of the file's earlier shards.  The output is byte for byte that of a
    local ``depparse parse`` (``tests/test_dask_shards.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import uuid
import warnings
from collections import deque
from typing import NamedTuple

from .atomic import atomic_output
from .conllu import SentenceText, iter_conllu
from .errors import DepparseError, UsageError

__all__ = ["MAX_SHARD_BYTES", "MIN_SHARD_BYTES", "META_FORMAT", "Joiner", "RangeFile",
           "RangeScan", "ShardTask", "cut_points", "load_meta", "parse_shard", "plan_file",
           "scan_range", "shard_bytes_for"]

#: The smallest and largest default shard (bytes of input; about 1,000 and 130,000 words of
#: CoNLL-U): small enough to spread a file over the workers, large enough that a task's fixed
#: costs (the encoder's first batch, the files' opening) stay small.
MIN_SHARD_BYTES = 1 << 16
MAX_SHARD_BYTES = 1 << 23

#: The ``format`` of a shard's meta file.
META_FORMAT = "depparse-parse-shard"
META_VERSION = 1

_READ = 1 << 20
_BOM = b"\xef\xbb\xbf"
#: The bytes of a blank line of plain text (as :mod:`depparse.inference.textfile` cuts batches).
_TEXT_SPACES = frozenset(b" \t\f\v\r")
_SENT_ID = re.compile(rb"^# sent_id = (\d+)(\r?)$", re.MULTILINE)


def shard_bytes_for(total: int, threads: int) -> int:
    """The default shard size for ``total`` bytes of input on ``threads`` worker threads:
    about 8 shards per thread, within :data:`MIN_SHARD_BYTES` .. :data:`MAX_SHARD_BYTES`."""
    want = -(-max(1, int(total)) // (8 * max(1, int(threads))))
    return max(MIN_SHARD_BYTES, min(MAX_SHARD_BYTES, want))


def cut_points(size: int, shard_bytes: int) -> list[int]:
    """The nominal starts ``[0, b, 2b, ...]`` of the ranges of a file of ``size`` bytes."""
    return list(range(0, max(1, int(size)), max(1, int(shard_bytes))))


# ---------------------------------------------------------------------------------------
# cutting


class RangeScan(NamedTuple):
    """A worker's scan of the range ``[a, b)`` of a file: ``newlines`` in it, the first unit
    start ``start >= a`` (the file's size if none), and the line breaks in ``[a, start)``."""

    newlines: int
    start: int
    newlines_to_start: int


def _blank_conllu(line: bytes) -> bool:
    """A blank line as the CoNLL-U reader judges it (empty or only whitespace, ``str.isspace``
    of the decoded line)."""
    s = line.rstrip(b"\n").decode("utf-8", "surrogateescape")
    return not s or s.isspace()


def _blank_text(line: bytes) -> bool:
    """A complete blank line of plain text (where a batch of paragraphs may end)."""
    return line.endswith(b"\n") and all(c in _TEXT_SPACES for c in line[:-1])


def _count_newlines(f, a: int, b: int) -> int:
    f.seek(a)
    left, n = b - a, 0
    while left > 0:
        chunk = f.read(min(_READ, left))
        if not chunk:
            break
        n += chunk.count(b"\n")
        left -= len(chunk)
    return n


def _next_start(f, kind: str, a: int, size: int) -> tuple[int, int]:
    """``(start, newlines)``: the first unit start at or after ``a > 0``, and the line breaks
    between ``a`` and it."""
    from .inference.textfile import only_space

    f.seek(a - 1)
    pos, nl = a, 0
    if f.read(1) != b"\n":  # in the middle of a line: go to the next one
        rest = f.readline()
        pos += len(rest)
        nl += rest.endswith(b"\n")
    prev_blank = None  # the line before `pos`: not known (not read), so not a start there
    while pos < size:
        line = f.readline()
        if not line:
            break
        if kind == "text":
            if _blank_text(line):
                # and the lines of whitespace after it: a shard starts on the line of its first
                # word, as a batch does (the whitespace between paragraphs goes to the token
                # before up to its last LF, :mod:`depparse.conllu.spaces`)
                pos, nl = pos + len(line), nl + 1
                while True:
                    line = f.readline()
                    if not only_space(line):
                        break
                    if not line.endswith(b"\n"):  # the file ends in whitespace
                        return size, nl
                    pos, nl = pos + len(line), nl + 1
                if not _only_space_before(f, pos):
                    return pos, nl
                f.seek(pos)  # the file's leading blank lines: its first shard holds a word
                continue
        else:
            blank = _blank_conllu(line)
            if not blank and prev_blank:
                return pos, nl
            prev_blank = blank
        pos += len(line)
        nl += line.endswith(b"\n")
    return size, nl


def scan_range(path: str, kind: str, a: int, b: int) -> RangeScan:
    """Scan the range ``[a, b)`` of a file (a worker's task; see the module docstring).

    Parameters
    ----------
    path : str
        The file, as the worker sees it.
    kind : {"conllu", "text"}
    a, b : int
        The range (``a = 0``: its start is the file's start).
    """
    try:
        size = os.path.getsize(path)
        f = open(path, "rb")
    except OSError as e:
        raise _unshared(path, "read the input", e) from None
    with f:
        n = _count_newlines(f, a, min(b, size))
        if a == 0:
            return RangeScan(n, 0, 0)
        start, k = _next_start(f, kind, a, size)
    return RangeScan(n, start, k)


def plan_file(size: int, cuts: list[int], scans: list[RangeScan]) -> list[tuple[int, int, int]]:
    """The shards of a file from its ranges' scans: ``(start, end, first_line)`` of each
    non-empty one, in order (a sentence longer than a range leaves a range without a shard)."""
    starts = [0] + [s.start for s in scans[1:]] + [size]
    out, before = [], 0  # line breaks before the range's nominal start
    for i in range(len(cuts)):
        line = 1 + before + scans[i].newlines_to_start
        before += scans[i].newlines
        if starts[i + 1] > starts[i]:
            out.append((starts[i], starts[i + 1], line))
    return out


# ---------------------------------------------------------------------------------------
# parsing


class ShardTask(NamedTuple):
    """One shard to parse.

    Attributes
    ----------
    index : int
        Its place in the output (the shards of all inputs, in order).
    file : int
        The index of its input among the inputs.
    path : str
        The input file as the workers see it (absolute).
    name : str
        The input as the user gave it (the sentences' ``source``, in messages).
    start, end, line : int
        Its bytes ``[start, end)`` and the line number of ``start``.
    columns : tuple or None
        The tag columns the file lacks (decided by the client on its first sentences:
        :meth:`~depparse.inference.columns.ColumnPolicy.of_file`); None: decided from the
        shard's first sentences (plain text, whose sentences are all untagged, or ``--retag``).
    out : str
        The shard's files without their extensions (``.conllu``, ``.json``, ``.report``).
    """

    index: int
    file: int
    path: str
    name: str
    start: int
    end: int
    line: int
    columns: tuple | None
    out: str


class RangeFile:
    """The bytes ``[start, end)`` of an open binary file as a stream that ends at ``end``
    (``seek`` and ``tell`` in the file's offsets), named ``name``."""

    def __init__(self, f, start: int, end: int, name: str):
        self.f, self.start, self.end, self.name = f, start, end, name
        self.pos = start
        f.seek(start)

    def read(self, n: int = -1) -> bytes:
        left = self.end - self.pos
        if n is None or n < 0 or n > left:
            n = left
        if n <= 0:
            return b""
        self.f.seek(self.pos)  # (the file may be read elsewhere between two reads)
        data = self.f.read(n)
        self.pos += len(data)
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence != 0:
            raise ValueError("RangeFile: only absolute seeks")
        self.pos = min(max(int(offset), self.start), self.end)
        self.f.seek(self.pos)
        return self.pos

    def tell(self) -> int:
        return self.pos

    def seekable(self) -> bool:
        return True


def _lead(f) -> str:
    """What a local run writes before a file's first sentence when it is the output's first
    (:attr:`Sentence._prefix`): a byte-order mark and the blank lines before the first
    non-blank one."""
    f.seek(0)
    head = f.read(len(_BOM))
    lead = _BOM if head == _BOM else b""
    f.seek(len(lead))
    while True:
        line = f.readline()
        if not line or not _blank_conllu(line):
            break
        lead += line
    return lead.decode("utf-8", "surrogateescape")


def _only_space_before(f, start: int) -> bool:
    """Whether the bytes of a file before ``start`` are blank (a byte-order mark and white
    space): then a text shard at ``start`` holds the file's first sentence.  Reads until the
    first other character (at once, in any file that does not start with blank lines: the
    first read is small, and they grow)."""
    import codecs

    from .inference.textfile import only_space

    f.seek(0)
    left, first, step = start, True, 4096
    # (incremental: a character cut in two by a read is decoded whole with the next read)
    utf8 = codecs.getincrementaldecoder("utf-8")("surrogateescape")
    while left > 0:
        chunk = f.read(min(step, left))
        step = min(2 * step, _READ)
        if not chunk:
            break
        left -= len(chunk)
        if first and chunk.startswith(_BOM):
            chunk = chunk[len(_BOM):]
        first = False
        text = utf8.decode(chunk).encode("utf-8", "surrogateescape")
        if not only_space(text):  # (what the tokenizer reads as whitespace)
            return False
    return True


def _text_sentences(parser, f, task, first, normalized_spaces=False):
    """The sentences of a text shard, as :meth:`Tokenizer.iter_sentences` reads them from
    the shard's offset, numbered from 1 (the joining numbers them on); ``first``: the shard
    holds the file's first sentence (which gets ``# newdoc``)."""
    from .inference.textfile import TEXT_BATCH, iter_text_batches

    sid = 1
    for b in iter_text_batches(f, task.name, task.start, task.line, TEXT_BATCH):
        newdoc = b.first if task.start == 0 else (first and sid == 1)
        sents = parser.tokenizer.tokenize(b.text, source=task.name, first_id=sid,
                                          newdoc=newdoc, normalized_spaces=normalized_spaces)
        yield from sents
        sid += len(sents)


def _sentences(parser, raw, task, kind, on_error, normalized_spaces=False):
    """The sentences of a shard of the open file ``raw``."""
    first = kind == "text" and task.start > 0 and _only_space_before(raw, task.start)
    f = RangeFile(raw, task.start, task.end, task.name)
    if kind == "text":
        return _text_sentences(parser, f, task, first, normalized_spaces)
    return iter_conllu(f, on_error=on_error, first_line=task.line)


def _stat(sentence, r):
    return [int(sentence.n), bool(r.certificate), r.proof, bool(r.timed_out),
            list(r.tagged or ()), float(r.seconds), bool(getattr(r, "joint", False)),
            int(getattr(r, "tags_changed", 0)), getattr(r, "optimal_over", None)]


def parse_shard(parser, task: ShardTask, settings: dict) -> dict:
    """Parse one shard into its shard file (a worker's task; see the module docstring).

    Parameters
    ----------
    parser : Parser
    task : ShardTask
    settings : dict
        ``kind`` (``"conllu"`` or ``"text"``), ``retag``, ``skip_bad``, ``report`` (also
        write the shard's report entries), ``kw`` (the keywords of
        :meth:`~depparse.inference.engine.Engine.parse_one`: ``max_iter``, ``single_root``,
        ``time_limit``, ``trace``), ``fingerprint`` (what identifies the run, kept in the
        meta file for ``--resume``).

    Returns
    -------
    dict
        The shard's meta (also written to ``task.out + ".json"``): ``sentences``, ``bytes``
        (of the shard file), ``stats`` (per sentence: words, certificate, proof, timed out,
        tagged columns, seconds, decoded jointly, UPOS changed, optimal over), ``pending``
        (what the last sentence needs before another one), ``lead`` (the file's leading
        text, for a shard at the file's start), ``bad`` (``[line, message]`` of the
        sentences ``skip_bad`` skipped), ``warnings`` (``[category, message]``); or
        ``{"error": DepparseError}`` for bad input (returned, not raised, so that the
        scheduler does not try it again).

    Notes
    -----
    The warnings of the readers and the tagger are recorded here and returned, for the client
    to show (``warnings.catch_warnings``, which is not thread-safe: on a worker with several
    threads a warning may be shown by the worker instead, or be returned by another shard's
    task; the parse itself holds the GIL, so one thread per worker process is the set-up to
    use anyway).
    """
    from .report.schema import sentence_entry

    kind, kw = settings["kind"], settings["kw"]
    tag = f".{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
    data_tmp, rep_tmp = task.out + ".conllu" + tag, task.out + ".report" + tag
    bad: list = []
    stats: list = []
    caught: list = []

    def on_error(e):
        bad.append([e.line, str(e)])

    try:
        raw = open(task.path, "rb")
    except OSError as e:
        return {"error": _unshared(task.path, "read the input", e)}
    try:
        out = open(data_tmp, "wb")
        rep = open(rep_tmp, "wb") if settings["report"] else None
    except OSError as e:
        raw.close()
        _remove(data_tmp)
        return {"error": _unshared(os.path.dirname(task.out), "write the shard files", e)}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with raw, out, (rep or contextlib.nullcontext()):
                # (plain text: the tokenizer's CoNLL-U starts with its first sentence)
                lead = _lead(raw) if task.start == 0 and kind == "conllu" else ""
                sents = _sentences(parser, raw, task, kind,
                                   on_error if settings["skip_bad"] else None,
                                   settings.get("normalized_spaces", False))
                read = deque()

                def tracked(it):
                    for s in it:
                        read.append(s)
                        yield s

                sents = tracked(sents)
                columns = None if task.columns is None else {task.name: tuple(task.columns)}
                text_of = SentenceText(count=1)  # the joining writes what goes before it
                # one thread: the cluster's worker threads are its parallelism
                for parsed, r in parser.iter_parse_results(
                        sents, retag=settings["retag"], file_columns=columns, threads=1,
                        **kw):
                    s = read.popleft()
                    out.write(text_of(parsed).encode("utf-8"))
                    if rep is not None:
                        e = sentence_entry(task.name, len(stats), s, parsed, r)
                        rep.write((json.dumps(e) + "\n").encode("utf-8"))
                    stats.append(_stat(s, r))
                for x in (out, rep):
                    if x is not None:
                        x.flush()
                        os.fsync(x.fileno())
    except DepparseError as e:
        _remove(data_tmp, rep_tmp)
        return {"error": e}
    except BaseException:
        _remove(data_tmp, rep_tmp)
        raise
    meta = {"format": META_FORMAT, "version": META_VERSION,
            "fingerprint": settings["fingerprint"], "index": task.index,
            "range": [task.start, task.end], "sentences": len(stats),
            "bytes": os.path.getsize(data_tmp),
            "report_bytes": os.path.getsize(rep_tmp) if settings["report"] else None,
            "stats": stats, "pending": text_of.pending, "lead": lead, "bad": bad,
            "warnings": [[w.category.__name__, str(w.message)] for w in caught]}
    os.replace(data_tmp, task.out + ".conllu")
    if settings["report"]:
        os.replace(rep_tmp, task.out + ".report")
    with atomic_output(task.out + ".json", "w", encoding="utf-8") as m:
        json.dump(meta, m)
    return meta


def _unshared(path, what, e):
    """The error of a worker that cannot reach a file of the run."""
    import socket

    return UsageError(f"{path}: cannot {what} on the worker {socket.gethostname()} "
                      f"({e.strerror or e}): with --scheduler, the inputs and the output's "
                      "folder must be on a filesystem that the workers share, under the same "
                      "paths")


def _remove(*paths):
    for p in paths:
        with contextlib.suppress(OSError):
            os.unlink(p)


def load_meta(task: ShardTask, fingerprint, report: bool) -> dict | None:
    """The meta of a shard a run completed (``--resume``): None unless its meta file is there,
    made by a run with this ``fingerprint`` for these bytes, and its shard file (and report
    file) have the sizes it records."""
    try:
        with open(task.out + ".json", encoding="utf-8") as f:
            meta = json.load(f)
        ok = (meta.get("format") == META_FORMAT and meta.get("version") == META_VERSION
              and meta.get("fingerprint") == fingerprint
              and meta.get("range") == [task.start, task.end]
              and os.path.getsize(task.out + ".conllu") == meta["bytes"])
        if ok and report:
            ok = meta.get("report_bytes") is not None and \
                os.path.getsize(task.out + ".report") == meta["report_bytes"]
        return meta if ok else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


# ---------------------------------------------------------------------------------------
# joining


class Joiner:
    """Join shard files into one output, as a local run writes the same sentences (see the
    module docstring): ``write(data)`` takes the output's bytes, ``report(line)`` (optional)
    each report entry (JSON, one line, without the separator).

    Parameters
    ----------
    write : callable
    kind : {"conllu", "text"}
    report : callable, optional
    """

    def __init__(self, write, kind, report=None):
        self.write, self.kind, self.report = write, kind, report
        self.count = 0  # sentences written
        self.pending = ""
        self.per_file: dict = {}  # sentences written per input (their numbering goes on)

    def add(self, task: ShardTask, meta: dict, lead: str = "") -> None:
        """Append a complete shard; ``lead``: the leading text of its file (from the meta of
        the file's first shard)."""
        n = int(meta["sentences"])
        if not n:
            return
        before = self.per_file.get(task.name, 0)
        head = lead if self.count == 0 else self.pending
        if head:
            self.write(head.encode("utf-8", "surrogateescape"))
        self._copy(task.out + ".conllu", before if self.kind == "text" else 0)
        if self.report is not None:
            self._entries(task.out + ".report", before)
        self.count += n
        self.per_file[task.name] = before + n
        self.pending = meta["pending"]

    def _copy(self, path, shift):
        with open(path, "rb") as f:
            if not shift:
                while chunk := f.read(_READ):
                    self.write(chunk)
                return
            rest = b""
            while True:
                chunk = f.read(_READ)
                data = rest + chunk
                cut = data.rfind(b"\n") + 1 if chunk else len(data)
                rest = data[cut:]
                if cut:
                    self.write(_SENT_ID.sub(
                        lambda m: b"# sent_id = %d%s" % (int(m.group(1)) + shift, m.group(2)),
                        data[:cut]))
                if not chunk:
                    return

    def _entries(self, path, shift):
        with open(path, "rb") as f:
            for line in f:
                e = json.loads(line)
                e["index"] += shift
                if self.kind == "text" and shift and e.get("sent_id") is not None:
                    e["sent_id"] = str(int(e["sent_id"]) + shift)
                self.report(json.dumps(e))
