"""The pieces of a streamed parse (:mod:`.parse`): counts, inputs read with the position of each
sentence, stdout as an output, the state that ``--resume`` checks.

* :class:`Counts`: what a run parsed (totals, by kind of proof, per input file), saved in the
  state file at each commit and restored by ``--resume``; its summary line.
* :class:`Reader`: the sentences of one input, lazily, each with where it starts (the line of
  a CoNLL-U sentence; a :class:`~depparse.inference.tokenizer.TextPosition` of a text
  sentence), so that a run can go on after any sentence (``after``).
* :class:`StdoutSink`: stdout with the interface of :class:`~depparse.atomic.PartialFile`.
* :func:`settings_of` and :func:`check_same`: the fingerprint of a run (model file, settings,
  inputs) that a run continued by ``--resume`` must share with the stopped one.
"""

from __future__ import annotations

import hashlib
import io
import os
import sys
import warnings
from collections import Counter, deque

from ..atomic import PARTIAL_SUFFIX
from ..errors import ProofWarning, UsageError

__all__ = ["Counts", "Reader", "StdoutSink", "check_same", "count_of", "file_columns", "file_stat",
           "first_sentences", "prefix_digest", "settings_of", "silence_stdout",
           "state_path_of", "written"]


# ---------------------------------------------------------------------------------------
# counts


def count_of(k, noun):
    """``"1 sentence"``, ``"2 sentences"``."""
    return f"{k:,} {noun}{'' if k == 1 else 's'}"


class Counts:
    """What a run has parsed: totals, per proof kind, per input file; saved in the state."""

    KEYS = ("sentences", "words", "certified", "proved", "timed_out", "tagged", "bad", "joint",
            "tags_changed", "joint_changed", "over_all")

    def __init__(self, d=None):
        d = d or {}
        for k in self.KEYS:
            setattr(self, k, int(d.get(k, 0)))
        self.proofs = Counter(d.get("proofs", {}))
        self.proof_seconds = Counter(d.get("proof_seconds", {}))
        self.columns = list(d.get("columns", []))
        self.files = {f: dict(v) for f, v in d.get("files", {}).items()}

    def to_json(self):
        d = {k: getattr(self, k) for k in self.KEYS}
        d.update(proofs=dict(self.proofs), proof_seconds=dict(self.proof_seconds),
                 columns=self.columns, files=self.files)
        return d

    def add(self, fname, sentence, r):
        self.add_stat(fname, sentence.n, r.certificate, r.proof, r.timed_out, r.tagged,
                      r.seconds, bool(getattr(r, "joint", False)),
                      int(getattr(r, "tags_changed", 0)), getattr(r, "optimal_over", None))

    def add_stat(self, fname, n, certificate, proof, timed_out, tagged, seconds, joint=False,
                 tags_changed=0, optimal_over=None):
        """:meth:`add` from the numbers alone (a shard's ``stats``, ``parse --scheduler``);
        ``optimal_over``: ``"all"`` for a tree proved over every arc (``--proof all``)."""
        self.sentences += 1
        self.over_all += proof is not None and optimal_over == "all"
        self.words += n
        self.certified += bool(certificate)
        self.proved += proof is not None
        self.timed_out += bool(timed_out)
        if joint:  # the tree and the UPOS decoded jointly (parse --joint)
            self.joint += 1
            self.tags_changed += tags_changed
            self.joint_changed += bool(tags_changed)
        kind = proof or "none"
        self.proofs[kind] += 1
        self.proof_seconds[kind] += seconds
        f = self.file(fname)
        f["sentences"] += 1
        f["words"] += n
        if tagged:
            self.tagged += 1
            f["tagged"] += 1
            for c in tagged:
                if c not in self.columns:
                    self.columns.append(c)
                if c not in f["columns"]:
                    f["columns"].append(c)

    def file(self, fname):
        return self.files.setdefault(fname, {"sentences": 0, "words": 0, "tagged": 0,
                                             "columns": []})

    def proved_line(self):
        """``proved optimal 2077/2077 (100.0%: dual 2040 in 19.1 s, branch-and-bound 37 in
        1.2 s)``: the trees proved optimal, by kind of proof, with their decoding time."""
        n = self.sentences
        if not n:
            return "proved optimal 0/0"
        kinds = ", ".join(f"{'not proved' if k == 'none' else k} {self.proofs[k]} in "
                          f"{self.proof_seconds[k]:.1f} s"
                          for k in ("dual", "branch-and-bound", "exact", "none")
                          if self.proofs[k])
        return (f"proved optimal {self.proved}/{n} ({100.0 * self.proved / n:.1f}%: {kinds})"
                + self._over_line())

    def _over_line(self):
        """Over which arcs the trees were proved: `` over all arcs`` (every arc of the
        sentence: ``--proof all``), `` over the arcs the pruner keeps`` or both counts."""
        if not self.proved:
            return ""
        if self.over_all == self.proved:
            return " over all arcs"
        if not self.over_all:
            return " over the arcs the pruner keeps"
        return (f"; over all arcs {self.over_all}, over the arcs the pruner keeps "
                f"{self.proved - self.over_all}")

    def tagged_line(self):
        """``UPOS/XPOS/LEMMA/FEATS predicted by the model's tagger in 50 of 100 sentences``."""
        if not self.tagged:
            return ""
        order = [c for c in ("UPOS", "XPOS", "LEMMA", "FEATS") if c in self.columns]
        return (f"{'/'.join(order)} predicted by the model's tagger in "
                f"{self.tagged:,} of {count_of(self.sentences, 'sentence')}")

    def joint_line(self):
        """``tree and UPOS decoded jointly in 100 sentences: 12 UPOS changed from the
        tagger's in 9 sentences`` (``depparse parse --joint``)."""
        return (f"tree and UPOS decoded jointly in {count_of(self.joint, 'sentence')}: "
                f"{self.tags_changed:,} UPOS changed from the tagger's in "
                f"{count_of(self.joint_changed, 'sentence')}")

    def time_limit_warning(self, seconds):
        """Warn (:class:`~depparse.errors.ProofWarning`) when ``--time-limit`` (``seconds``
        per sentence) stopped sentences before their proofs closed; nothing otherwise."""
        if not self.timed_out:
            return
        limit = f" ({seconds:g} s a sentence)" if seconds else ""
        warnings.warn(f"{count_of(self.timed_out, 'sentence')} not proved within --time-limit"
                      f"{limit}: each tree is the best one found, marked not proved (the "
                      "report's optimal: false); --time-limit 0 proves every tree, however "
                      "long it takes", ProofWarning, stacklevel=2)

    def summary(self, seconds, before=None):
        """The summary line; ``before``: the counts a resumed run started from.  The sentences,
        words, time and words/s at its start are this run's; then, after a ``--resume``, those
        parsed before it and the output's total; the certificates and proofs are the whole
        output's."""
        words, n = self.words, self.sentences
        resumed = before is not None and before.sentences > 0
        done_n = n - (before.sentences if resumed else 0)
        done = words - (before.words if resumed else 0)
        head = (f"parsed {count_of(done_n, 'sentence')}, {count_of(done, 'word')} in "
                f"{seconds:.2f} s ({done / max(seconds, 1e-9):.0f} words/s)")
        if resumed:
            head += (f" after --resume, and {count_of(before.sentences, 'sentence')}, "
                     f"{count_of(before.words, 'word')} before it: {count_of(n, 'sentence')} "
                     "in the output")
        extra = f"; {self.timed_out} stopped by --time-limit" if self.timed_out else ""
        if self.bad:
            extra += f"; skipped {count_of(self.bad, 'malformed sentence')}"
        if self.tagged:
            extra += "; " + self.tagged_line()
        if self.joint:
            extra += "; " + self.joint_line()
        return (f"{head}; certificates {self.certified}/{n} "
                f"({100.0 * self.certified / max(1, n):.1f}%); {self.proved_line()}{extra}")


# ---------------------------------------------------------------------------------------
# inputs


def seek_line(f, line):
    """Position a binary file at the start of line ``line`` (1-based)."""
    need, pos = line - 1, 0
    while need:
        chunk = f.read(1 << 20)
        if not chunk:
            break
        k = chunk.count(b"\n")
        if k < need:
            need -= k
            pos += len(chunk)
            continue
        i = -1
        for _ in range(need):
            i = chunk.index(b"\n", i + 1)
        pos += i + 1
        need = 0
    f.seek(pos)


def prefix_digest(path, line):
    """``(bytes, SHA-256 hex)`` of a file's bytes before line ``line`` (1-based)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        seek_line(f, line)
        end = f.tell()
        f.seek(0)
        left = end
        while left:
            chunk = f.read(min(left, 1 << 20))
            if not chunk:
                break
            h.update(chunk)
            left -= len(chunk)
    return end, h.hexdigest()


class Stdin:
    """stdin's binary stream under the name ``<stdin>`` (for the messages).

    It keeps what :meth:`prefix` needs: the SHA-256 of everything read so far, and the last
    chunks read with the digest before each, so that the digest of the input before a line
    of one of them can be given after a stop (stdin cannot be read again)."""

    name = "<stdin>"
    #: Chunks kept (the reader reads 1 MB at a time and parses a window of sentences behind).
    KEEP = 16
    #: Bytes of its start kept (the first sentences decide the tag columns of the input).
    START = 4 << 20

    def __init__(self, f):
        self.f = f
        self.sha = hashlib.sha256()
        self.offset = 0
        self.lines = 0
        self.recent: deque = deque(maxlen=self.KEEP)  # (sha, offset, lines before, chunk)
        self.head = b""  # read ahead by skip_to, given out first
        self.start = b""  # the first START bytes

    def read(self, n=-1):
        if self.head:
            data = self.head if n is None or n < 0 else self.head[:n]
            self.head = self.head[len(data):]
            return data
        data = self.f.read(n)
        if data:
            if self.offset < self.START:
                self.start += data[:self.START - self.offset]
            self.recent.append((self.sha.copy(), self.offset, self.lines, data))
            self.sha.update(data)
            self.offset += len(data)
            self.lines += data.count(b"\n")
        return data

    def prefix(self, line):
        """``(bytes, SHA-256 hex)`` of what was read before line ``line`` (1-based), or None
        if that line is no longer among the chunks kept."""
        need = line - 1  # line breaks before it
        for sha, offset, lines, chunk in self.recent:
            if lines <= need <= lines + chunk.count(b"\n"):
                k = 0
                for _ in range(need - lines):
                    k = chunk.index(b"\n", k) + 1
                h = sha.copy()
                h.update(chunk[:k])
                return offset + k, h.hexdigest()
        return None

    def skip_to(self, line):
        """Read on to the start of line ``line`` (1-based): ``(bytes, SHA-256 hex)`` of what
        was skipped; the rest of the chunk is given out by the next reads."""
        while self.lines < line - 1:
            if not self.read(1 << 20):
                break
        got = self.prefix(line)
        if got is None:  # stdin ended before that line
            return self.offset, self.sha.hexdigest()
        end = got[0]
        last = self.recent[-1]
        self.head = last[3][end - last[1]:] if end >= last[1] else b""
        return got

    def tell(self):
        return self.f.tell()

    def seekable(self):
        return False


class Reader:
    """The sentences of one input, lazily, each with its position (for ``--resume``): the line
    of a CoNLL-U (horizontal, vertical) sentence; a
    :class:`~depparse.inference.tokenizer.TextPosition` of a text sentence.  ``after``:
    continue after the sentence at that position."""

    def __init__(self, parser, kind, path, on_error=None, after=None,
                 normalized_spaces=False, prefix=None):
        self.path, self.kind = path, kind
        if path == "-":
            self.f = Stdin(sys.stdin.buffer)
            self.own = False
            if after is not None:  # stdin again, after a stop at bad input (--resume)
                got = self.f.skip_to(after)
                if prefix is None or list(got) != list(prefix):
                    raise UsageError(f"<stdin>: not the input of the stopped run (its first "
                                     f"{prefix[0] if prefix else '?':,} bytes differ): give "
                                     "it the same input, mended only after the bad line")
        else:
            self.f = open(path, "rb")
            self.own = True
        if kind == "text":
            from ..inference.tokenizer import TextPosition

            pos = None if after is None else TextPosition(*after)
            self.it = ((s, tuple(p)) for s, p in parser.tokenizer.iter_sentences(
                self.f, after=pos, normalized_spaces=normalized_spaces))
        else:  # CoNLL-U, or UDPipe's horizontal or vertical: a position is a line
            from ..conllu import iter_conllu, iter_words

            first = 1
            if after is not None:
                if path != "-":
                    seek_line(self.f, after)
                first = after
            if kind == "conllu":
                it = iter_conllu(self.f, on_error=on_error, first_line=first)
            else:
                it = iter_words(self.f, kind, on_error=on_error, first_line=first)
            if after is not None:
                next(it, None)  # the sentence the earlier run ended with
            self.it = hinted(((s, s.line_no) for s in it), after is None, on_error is None)

    def tell(self):
        try:
            return self.f.tell()
        except (OSError, ValueError):
            return None

    def close(self):
        if self.own:
            self.f.close()


def hinted(it, first=True, skip_bad=True):
    """``it``, its ConlluErrors with what to do (:func:`~.commands.conllu_hint`); ``first``:
    ``it`` starts at the start of its file; ``skip_bad``: say that ``--skip-bad`` skips
    malformed sentences (when it was not given)."""
    from ..errors import ConlluError
    from .commands import conllu_hint

    k = 0 if first else 1
    try:
        for x in it:
            k += 1
            yield x
    except ConlluError as e:
        raise conllu_hint(e, k, skip_bad=skip_bad) from None


def file_columns(parser, kind, path) -> dict:
    """``{source: columns}``: the tag columns a file lacks, decided as one local run decides
    them (:meth:`~depparse.inference.columns.ColumnPolicy.of_file`: its first
    :data:`~depparse.inference.columns.TAG_WINDOW` sentences), for a run that starts reading
    it elsewhere than at its start (``--resume``, a shard); ``{}`` for a file with no
    sentence.  ``source`` is the name its sentences carry (``Sentence.source``)."""
    from ..inference.columns import TAG_WINDOW

    head = first_sentences(parser, kind, path, TAG_WINDOW)
    return {head[0].source: parser.columns.of_file(head)} if head else {}


def first_sentences(parser, kind, path, k):
    """The first ``k`` sentences of a file (for the tag columns it lacks, on resume)."""
    r = Reader(parser, kind, path, on_error=lambda e: None)
    try:
        out = []
        for s, _ in r.it:
            out.append(s)
            if len(out) == k:
                break
        return out
    finally:
        r.close()


# ---------------------------------------------------------------------------------------
# outputs


class StdoutSink:
    """Output written to stdout as it comes (flushed at each commit): nothing to rename,
    nothing to continue."""

    def __init__(self):
        self.f = sys.stdout.buffer
        self.size = 0

    def write(self, data):
        self.f.write(data)
        self.size += len(data)

    def commit(self):
        self.f.flush()
        return self.size

    finish = commit

    def close(self):
        pass

    discard = close


def silence_stdout():
    """After a failed write to stdout, keep Python's exit-time flush from failing again."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass


def written(what, path, fn, *args):
    """``fn(*args)``; an OSError becomes the one-line error that names the file."""
    from .commands import oserror

    try:
        return fn(*args)
    except BrokenPipeError:
        if path is None:
            silence_stdout()
        raise
    except OSError as e:
        if path is None:
            silence_stdout()
        raise oserror(path or "<stdout>", what, e) from None


def state_path_of(mode, targets):
    if mode == "file":
        return targets[0].path + PARTIAL_SUFFIX + ".state"
    if mode in ("folder", "in-place"):
        return os.path.join(os.path.dirname(os.path.abspath(targets[0].path)),
                            ".depparse-parse" + PARTIAL_SUFFIX + ".state")
    return None


def file_stat(path):
    st = os.stat(path)
    return [os.path.realpath(path), st.st_size, st.st_mtime_ns]


def settings_of(args, given, model_path, inputs, mode, targets):
    """What must not change between a run and its ``--resume`` (the fingerprint)."""
    out = {"model": file_stat(model_path), "input": args.input, "retag": bool(args.retag),
           "skip_bad": bool(args.skip_bad), "decoding": {k: v for k, v in given.items()},
           "report": args.report and os.path.abspath(args.report), "mode": mode,
           "outputs": [t.path and os.path.abspath(t.path) for t in targets],
           "inputs": [f if f == "-" else os.path.abspath(f) for f in inputs]}
    if args.normalized_spaces:  # (only when set: runs stored before it still resume)
        out["normalized_spaces"] = True
    return out


def check_same(state_settings, settings, inputs_stats, old_stats, state_path):
    for key in settings:
        if state_settings.get(key) != settings[key]:
            what = {"model": "the model file", "decoding": "the decoding settings",
                    "inputs": "the inputs", "outputs": "the outputs"}.get(
                        key, "--" + key.replace("_", "-"))
            raise UsageError(f"{state_path}: the stopped run was made with other settings "
                             f"({what} differ); resume with the same command, or start again "
                             "with --force")
    for new, old in zip(inputs_stats, old_stats, strict=True):
        if new is not None and old is not None and new != old:
            raise UsageError(f"{state_path}: the input {new[0]} changed since the stopped run "
                             "(size or time); start again with --force")


