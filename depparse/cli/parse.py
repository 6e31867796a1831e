"""``depparse parse``: read, tag, parse and write a stream of sentences, by chunks.

The inputs (files, folders, globs, stdin; CoNLL-U or plain text) are read lazily and fed to
:meth:`~depparse.inference.parser.Parser.iter_parse_results`, whose results come back in
input order; each is written at once (:mod:`.targets` says where), so that the memory stays
that of the model and a window of sentences whatever the size of the input.

Every few seconds (:data:`COMMIT_SECONDS`) the run *commits*: the output written so far
(``OUT.partial``) and the report (``REPORT.partial``) are flushed and fsynced, then a small
state file (``OUT.partial.state``; in a folder, ``.depparse-parse.partial.state``) records
how far they go, where in the input the next sentence starts, and the counts.  A run that
is killed is continued by ``--resume`` from its last commit: the partial files are cut back
to the committed sizes and the inputs are read on from the committed positions, so that
the output is byte for byte that of a run that was never stopped
(``tests/test_streaming.py`` kills runs with SIGKILL at random moments).  At the end the
files are renamed into place; until then nothing has the name the user gave.

With ``--scheduler`` the workers of a Dask cluster read and parse the inputs and this process
joins their shard files (:mod:`.sharded`).
"""

from __future__ import annotations

import io
import itertools
import json
import os
import sys
import time
import warnings
from collections import deque

from ..atomic import PARTIAL_SUFFIX, PartialFile, atomic_output, chunked_output
from ..config import DecodeConfig
from ..errors import ConfigError, ConlluError, DepparseError, InputWarning, UsageError
from .options import configs_from_args
from .progress import CompileWatch, Progress
from .stream import (
    Counts,
    Reader,
    StdoutSink,
    check_same,
    count_of,
    file_columns,
    file_stat,
    first_sentences,
    prefix_digest,
    settings_of,
    state_path_of,
    written,
)
from .targets import expand_inputs, plan_outputs, same_file

__all__ = ["COMMIT_SECONDS", "cmd_parse"]

#: Seconds between two commits of the output (and the report, and the state for --resume);
#: ``DEPPARSE_COMMIT_SECONDS`` sets another value (the kill tests commit every 0.05 s).
COMMIT_SECONDS = float(os.environ.get("DEPPARSE_COMMIT_SECONDS", "5"))

STATE_FORMAT = "depparse-parse-state"
STATE_VERSION = 1


def cmd_parse(args):
    from ..api import load
    from ..kernel_cache import cache_root

    if args.jobs < 0:
        raise UsageError("--jobs must be >= 0 (0: one per CPU)")
    given = configs_from_args(args, "parse", model_defaults=True)[DecodeConfig]
    jobs = args.jobs or os.cpu_count() or 1
    inputs = expand_inputs(args.inputs, args.input)
    mode, targets = plan_outputs(inputs, args.output, args.in_place, args.force)
    from .commands import check_output

    if mode == "file" and not targets[0].special:
        check_output(targets[0].path, "output")
    if args.report:
        check_output(args.report, "report")
        for f in inputs:
            if f != "-" and same_file(args.report, f):
                raise UsageError(f"{args.report}: is also an input ({f}): give the report "
                                 "another name")
        if any(t.path and same_file(args.report, t.path) for t in targets):
            raise UsageError(f"{args.report}: is also the output: give the report another name")
    resumable = mode in ("file", "folder", "in-place") and not targets[0].special
    if args.resume and not resumable:
        raise UsageError("--resume continues an output written to a file or a folder (-o FILE "
                         "or -o FOLDER/); a run into stdout or a device cannot be continued")
    if args.resume and "-" in inputs and not _stopped_at_bad_input(mode, targets):
        raise UsageError("--resume: stdin ('-') cannot be read again; give the input as a file")
    if args.scheduler and args.input in ("horizontal", "vertical"):
        raise UsageError(f"--input {args.input}: not with --scheduler (its shards are cut in "
                         "CoNLL-U or text files); parse here, or give CoNLL-U")
    if args.shard_size is not None:
        if not args.scheduler:
            raise UsageError("--shard-size needs --scheduler")
        from .sharded import parse_size

        args.shard_size = parse_size(args.shard_size)
    if given.get("proof_over") is not None:  # --proof pruned|all proves (over those arcs)
        if given.get("proof") is False:
            raise UsageError(f"--proof {given['proof_over']} and --no-proof: give one of them")
        given["proof"] = True
    parser = load(args.model)
    try:
        parser.set_pruning(given.get("prune_threshold"), given.get("prune_max_heads"),
                           given.get("prune_network"))
        proofs = {k: given[k] for k in ("proof", "budget", "budget_per_word", "solver",
                                        "proof_over", "proof_max_words")
                  if given.get(k) is not None}
    except DepparseError as e:
        raise UsageError(f"--prune-threshold/--prune-max-heads/--prune-network: {e}") from None
    try:  # the values were validated by configs_from_args; the solver is the model's to check
        parser.set_decoding(**proofs)
    except ConfigError as e:
        raise UsageError(f"--{e.field.replace('_', '-')}: {args.model}: {e.rule}") from None
    joint = dict(weight=args.joint_weight, k=args.joint_candidates, margin=args.joint_margin)
    if not args.joint and any(v is not None for v in joint.values()):
        raise UsageError("--joint-weight/--joint-candidates/--joint-margin: only with --joint")
    if args.joint:
        try:
            parser.set_joint(**joint)
        except ConfigError as e:
            raise UsageError(f"--{e.field}: {e.rule}") from None
    if args.input == "text" and parser.tokenizer is None:
        parser.read_text("")  # raises the UsageError that says what to do
    if args.normalized_spaces and args.input != "text":
        raise UsageError("--normalized-spaces: only with --input text (CoNLL-U input keeps "
                         "its MISC as it is)")
    kw = dict(max_iter=given.get("max_iter"), single_root=given.get("single_root"),
              time_limit=given.get("time_limit"), trace=bool(args.report))
    with CompileWatch(quiet=args.quiet, where=str(cache_root())) as watch:
        _warm(parser, args.input == "text", kw)
        watch.done()
        Run(args, parser, kw, jobs, inputs, mode, targets, watch, given).run()


def _stopped_at_bad_input(mode, targets):
    """Whether the stopped run of these outputs stopped at bad input with its work kept
    (:meth:`Run._keep`): then stdin can be given again, the same up to the bad line."""
    if targets[0].special or mode not in ("file", "folder", "in-place"):
        return False
    try:
        with open(state_path_of(mode, targets), encoding="utf-8") as f:
            return bool(json.load(f).get("stopped"))
    except (OSError, ValueError, AttributeError):
        return False


def _warm(parser, text, kw):
    """Load (the first time: compile) the kernels a parse needs, before the clock starts."""
    from ..inference.parallel import warmup

    warmup(parser, **{k: v for k, v in kw.items() if k != "time_limit"})
    if text:
        parser.tokenizer.tokenize("Warm up. Done.")


class _LanguageSample:
    """The first sentences of an input, for the language check (:meth:`Run.check_language`),
    done once :data:`~depparse.catalog.LANGUAGE_SAMPLE_CHARS` characters are read (or the
    input ends).  A resumed input (``head``: a function giving its first sentences) was
    checked by the run that began it: its warning is said again from the state, or, if that
    run stopped before its check was committed, the check is made on the input's head."""

    def __init__(self, run, fname, head=None):
        from ..catalog import LANGUAGE_SAMPLE_CHARS

        self.run, self.fname, self.limit = run, fname, LANGUAGE_SAMPLE_CHARS
        self.texts: list[str] = []
        self.chars = 0
        self.checked = False
        if head is not None:
            said = run.counts.files.get(fname, {}).get("language")
            if said is None:
                for s in head():
                    self.add(s)
                self.done()
            elif said.get("warning"):
                warnings.warn(said["warning"], InputWarning, stacklevel=2)
            self.checked = True

    def add(self, sentence):
        if self.checked:
            return
        from ..encoding.language import sentence_text

        self.texts.append(sentence_text(sentence))
        self.chars += len(self.texts[-1])
        if self.chars >= self.limit:
            self.done()

    def done(self):
        if not self.checked:
            self.checked = True
            if self.texts:
                self.run.check_language(self.fname, self.texts)
            self.texts = []


class Run:
    """One ``depparse parse`` run over its targets (see the module docstring).

    The inputs are *segments* (one per input file, in order), each written into its target:
    all into one target (stdout, ``-o FILE``), or each into its own (``-o FOLDER/``,
    ``--in-place``).
    """

    def __init__(self, args, parser, kw, jobs, inputs, mode, targets, watch, given):
        self.args, self.parser, self.kw, self.jobs = args, parser, kw, jobs
        self.inputs, self.mode, self.targets, self.watch = inputs, mode, targets, watch
        self.state_path = None if targets[0].special else state_path_of(mode, targets)
        self.settings = settings_of(args, given, parser.path, inputs, mode, targets)
        self.segments = [(f, t) for t in targets for f in t.inputs]
        self.counts = Counts()
        self.bad: list = []  # (segment, line) of the malformed sentences skipped (--skip-bad)
        self.sink = None  # the output being written, of target self.target
        self.target = None
        self.text_of = None  # the CoNLL-U writer's state (conllu.SentenceText)
        self.report = None
        self.committed = None  # (segment, position) of the last sentence written
        # progress through the input: the bytes of the segments done, and of the current one
        # up to the sentence last written (CoNLL-U: its output bytes, nearly the input's; text:
        # the offset of its batch of paragraphs)
        self.done_bytes = 0
        self.seg_bytes = 0
        self.seg = None
        self.sizes: dict = {}
        self.file_columns: dict = {}
        self.progress = Progress(quiet=True)
        self.stdin = None  # the Stdin of a Reader of "-" (what was read, for _keep)
        self.stopped = None  # where the run stopped at bad input (_keep), for the state
        self.resume_prefix = None  # (bytes, sha256) stdin must start with, resuming
        self.resume_columns = None  # and the tag columns it lacks

    # -- the run ---------------------------------------------------------------------------
    def run(self):
        args = self.args
        if args.scheduler:  # the workers read and parse; this process joins their shards
            from .sharded import run_sharded

            return run_sharded(self)
        start, after, state = 0, None, None
        if self.state_path and os.path.exists(self.state_path):
            finished = self.mode == "file" and not os.path.exists(self._partial_name())
            if args.resume:
                state = self._load_state()
                if state is None:
                    return
                start, after = state["segment"], state["position"]
            elif not (args.force or finished):
                raise UsageError(f"{self._partial_name()}: an earlier run stopped here; "
                                 "continue it with --resume, or start again with --force")
            else:  # starting again: the stopped run's state must not outlive its partial file
                os.unlink(self.state_path)
        elif args.resume and self._complete():
            if not args.quiet:
                print(f"depparse: nothing to resume: {self.targets[0].path} is complete (newer "
                      "than its input, no stopped run); --force parses it again",
                      file=sys.stderr)
            return
        elif args.resume and not args.quiet:
            print(f"depparse: nothing to resume ({self.state_path} not found): parsing from "
                  "the start", file=sys.stderr)
        skip = self._skipped(start)
        if not args.skip_bad:
            self._prescan(start, after, skip)
        total = None
        if "-" not in self.inputs:
            total = sum(os.path.getsize(f) for i, (f, _) in enumerate(self.segments)
                        if i not in skip and i >= start) or None
        self.progress = Progress(args.quiet, args.progress_interval, total,
                                 state["counts"]["words"] if state is not None else 0)
        t0, paused = time.perf_counter(), self.watch.seconds
        try:
            self._open(start, state)
            self._loop(start, after, skip)
            self._finish_target()
            if self.mode in ("file", "stdout") and self.target is None:
                self._open_target(self.targets[0])  # nothing parsed: an empty output
                self._finish_target()
            seconds = time.perf_counter() - t0 - (self.watch.seconds - paused)
            if self.report is not None:
                written("report", args.report, self.report.finish, self.inputs,
                         self.counts.files, self.counts.to_json(), seconds)
                self.report = None
            if self.state_path and os.path.exists(self.state_path):
                os.unlink(self.state_path)
            self._remove_stale_temporaries()
        except ConlluError as e:
            if not self._keep(e):
                self._discard()
            raise
        except DepparseError:
            self._discard()
            raise
        except BaseException:
            self._stopped()
            raise
        self.progress.clear()
        self.watch.done()
        if args.joint and self.counts.sentences and not self.counts.joint:
            warnings.warn("--joint: the tagger predicted the UPOS of no sentence (the input "
                          "has UPOS), so no tags were decoded jointly; give --retag to decode "
                          "them jointly anyway", InputWarning, stacklevel=1)
        self.counts.time_limit_warning(self.parser.decoding.seconds(self.kw["time_limit"]))
        if not args.quiet:
            before = Counts(state["counts"]) if state is not None else None
            print(f"depparse: {self.counts.summary(seconds, before)}", file=sys.stderr)

    def _keep(self, e):
        """After bad input met during the parse (stdin, which :meth:`_prescan` cannot read
        before, or a file changed since): commit what was written up to the last good
        sentence and keep it for ``--resume``, with the digest of the input before that
        sentence (``state["stopped"]``), so that a continued run may read a mended input (or
        stdin again) whose bytes up to there are the same; ``e`` says so.  False (nothing
        kept) where there is nothing to keep or the run cannot be continued."""
        if (self.state_path is None or self.committed is None or self.sink is None
                or self.args.input == "text" or isinstance(self.committed[1], (tuple, list))
                or self.committed[1] is None):
            return False
        seg, line = self.committed
        f = self.segments[seg][0]
        columns = None
        if f == "-":
            prefix = self.stdin.prefix(line) if self.stdin is not None else None
            columns = self._stdin_columns()
            if columns is None:
                return False
        else:
            prefix = prefix_digest(f, line)
        if prefix is None:
            return False
        self.stopped = {"segment": seg, "line": line, "bytes": prefix[0],
                        "sha256": prefix[1], "columns": columns}
        self._commit(seg, line)
        self.progress.clear()
        for x in (self.sink, self.report):
            if x is not None:
                x.close()
        n = self.counts.sentences
        e.message += (f"; the {count_of(n, 'sentence')} parsed before it "
                      f"{'is' if n == 1 else 'are'} kept ({self._partial_name()}): mend the "
                      "input after them and continue with --resume (which may add --skip-bad)")
        return True

    def _stdin_columns(self):
        """The tag columns stdin lacks (decided on its first sentences, which a run continued
        on stdin cannot read again), or None if they are no longer known."""
        from ..inference.columns import TAG_WINDOW

        if self.args.retag or self.stdin is None:
            return []
        f = io.BytesIO(self.stdin.start)
        f.name = "<stdin>"
        from ..conllu import iter_conllu, iter_words

        it = (iter_conllu(f, on_error=lambda e: None) if self.args.input == "conllu"
              else iter_words(f, self.args.input, on_error=lambda e: None))
        head = list(itertools.islice(it, TAG_WINDOW + 1))
        if len(head) <= TAG_WINDOW and len(self.stdin.start) >= self.stdin.START:
            return None  # its first sentences go on past the bytes kept
        return list(self.parser.columns.of_file(head))

    def _complete(self):
        """Whether ``-o FILE`` is there, complete (renamed into place, no ``FILE.partial``)
        and newer than every input: what a finished run of these inputs leaves."""
        if self.mode != "file":
            return False
        out = self.targets[0].path
        if not os.path.isfile(out) or os.path.exists(out + PARTIAL_SUFFIX):
            return False
        done = os.path.getmtime(out)
        return all(f != "-" and os.path.getmtime(f) <= done for f in self.inputs)

    def _prescan(self, start, after, skip):
        """Read the input files once before parsing them, with the reader the parse uses but
        no model (CoNLL-U: every sentence built and checked, about 20 MB/s; text: decoded),
        so that malformed input is reported at once, ``FILE:LINE``, before any output is
        written, not after hours of parsing the sentences before it.  stdin cannot be read
        twice: its errors come during the parse (:meth:`_bad_input`)."""
        for i in range(start, len(self.segments)):
            f = self.segments[i][0]
            if i in skip or f == "-":
                continue
            pos = after if i == start else None
            if self.args.input == "text":
                from ..inference.textfile import iter_text_batches

                offset, line = (pos[0], pos[1]) if pos is not None else (0, 1)
                with open(f, "rb") as fh:
                    fh.seek(offset)
                    for _ in iter_text_batches(fh, f, offset, line):
                        pass
                continue
            reader = Reader(self.parser, self.args.input, f, None, pos)
            try:
                for _ in reader.it:
                    pass
            finally:
                reader.close()

    def _remove_stale_temporaries(self):
        """Remove the temporary files of the state file that a kill left (a kill while the
        state was being written leaves ``.NAME.partial.state.XXXX.tmp``)."""
        if not self.state_path:
            return
        import glob

        folder, name = os.path.split(os.path.abspath(self.state_path))
        for f in glob.glob(os.path.join(glob.escape(folder), f".{glob.escape(name)}.*.tmp")):
            try:
                os.unlink(f)
            except OSError:
                pass

    def _partial_name(self):
        if self.mode == "file":
            return self.targets[0].path + PARTIAL_SUFFIX
        return self.state_path

    def _skipped(self, start):
        """Segments not to parse: those before ``start`` (done by the stopped run), and, in a
        folder, the inputs whose output is there already and newer than the input."""
        skip = set(range(start))
        if self.mode != "folder":
            return skip
        for i, (f, t) in enumerate(self.segments):
            if i < start:
                partial = t.path + PARTIAL_SUFFIX
                if os.path.exists(partial) and not os.path.exists(t.path):
                    os.replace(partial, t.path)  # killed between its last commit and rename
                continue
            if self.args.force or f == "-" or not os.path.exists(t.path):
                continue
            if os.path.getmtime(t.path) >= os.path.getmtime(f):
                skip.add(i)
                if not self.args.quiet:
                    print(f"depparse: {f}: skipped, {t.path} is complete (--force parses it "
                          "again)", file=sys.stderr)
        return skip

    def _open(self, start, state):
        """Open the report (and, resuming, the output) where the stopped run left them."""
        if state is not None:
            self.counts = Counts(state["counts"])
            self.bad = [tuple(x) for x in state.get("bad", [])]
            out = state["output"]
            if state["position"] is not None or self.mode == "file":
                from ..conllu import SentenceText

                self.target = self.segments[start][1]
                self.sink = PartialFile(self.target.path, keep=out["bytes"])
                self.text_of = SentenceText(out["count"], out["pending"])
        if self.args.report:
            from ..report.report_writer import ReportWriter

            keep = None
            if state is not None:
                keep = (state["report"]["bytes"], state["report"]["entries"])
            self.report = written("report", self.args.report, ReportWriter, self.args.report,
                                   self.parser, self.kw["max_iter"], self.kw["single_root"],
                                   keep)

    def _items(self, start, after, skip, track):
        """The sentences of the segments to parse, in order; ``track`` gets, for each, its
        (input sentence, segment, position)."""
        for i in range(start, len(self.segments)):
            if i in skip:
                continue
            f, t = self.segments[i]
            pos = after if i == start else None
            on_error = (lambda e, i=i: self._skip_bad(e, i)) if self.args.skip_bad else None
            if pos is not None and f == "-":  # stdin again: the stopped run's decision
                self.file_columns["<stdin>"] = tuple(self.resume_columns or ())
            elif pos is not None:  # the tag columns the file lacks: from its first sentences
                self.file_columns.update(file_columns(self.parser, self.args.input, f))
            reader = Reader(self.parser, self.args.input, f, on_error, pos,
                            self.args.normalized_spaces,
                            self.resume_prefix if pos is not None else None)
            if f == "-":
                self.stdin = reader.f
            k = 0
            fname = "<stdin>" if f == "-" else f
            language = _LanguageSample(self, fname, None if pos is None else (
                lambda f=f: first_sentences(self.parser, self.args.input, f, 400)))
            try:
                for s, p in reader.it:
                    language.add(s)
                    track.append((s, i, p))
                    k += 1
                    yield s
            finally:
                reader.close()
            language.done()
            if k == 0 and pos is None:
                if not any(b[0] == i for b in self.bad):
                    warnings.warn(f"no sentences in {'<stdin>' if f == '-' else f}",
                                  InputWarning, stacklevel=2)
                if self.mode == "folder":  # an empty input has an empty output
                    with atomic_output(t.path, "wb"):
                        pass

    def check_language(self, fname, texts):
        """The language check of an input's first sentences (:func:`depparse.catalog.
        check_language`): a warning on stderr when they do not look like the model's
        language, naming the shipped model that fits them better, and the finding in the
        report's ``files`` (kept in the state, so a resumed run reports it too)."""
        from ..catalog import check_language

        fit = None if self.parser.path is None else check_language(self.parser.path, texts)
        if fit is None:
            return
        msg = fit.message(fname)
        self.counts.file(fname)["language"] = {**fit.to_json(), "warning": msg}
        if msg:
            warnings.warn(msg, InputWarning, stacklevel=2)

    def _skip_bad(self, e, seg):
        self.bad.append((seg, e.line))
        self.progress.say(f"depparse: skipped: {e}")

    def _results(self, items):
        args, parser, kw = self.args, self.parser, self.kw
        yield from parser.iter_parse_results(items, jobs=self.jobs, retag=args.retag,
                                             file_columns=self.file_columns,
                                             threads=args.threads, **kw)

    def _loop(self, start, after, skip):
        track: deque = deque()
        items = self._items(start, after, skip, track)
        index: dict = {}  # per file: the index of its next sentence in the report
        last_commit = time.perf_counter()
        for parsed, r in self._results(items):
            s, seg, pos = track.popleft()
            f, t = self.segments[seg]
            if t is not self.target:
                self._finish_target()
                self._open_target(t)
            data = self.text_of(parsed).encode("utf-8")
            written("output", t.path, self.sink.write, data)
            self._advance(seg, pos, len(data))
            fname = "<stdin>" if f == "-" else f
            if self.report is not None:
                j = index.get(fname, self.counts.file(fname)["sentences"])
                written("report", self.args.report, self.report.add, fname, j, s, parsed, r)
                index[fname] = j + 1
            self.counts.add(fname, s, r)
            first = self.committed is None
            self.committed = (seg, pos)
            now = time.perf_counter()
            # the first sentence commits at once: a run killed in its first seconds resumes
            if first or now - last_commit >= COMMIT_SECONDS:
                self._commit(seg, pos)
                last_commit = now
            c = self.counts
            self.progress.update(c.sentences, c.words, c.proved, self._read_bytes(),
                                 self.watch.seconds)
        self.counts.bad = len(self.bad)
        if self.bad and not self.counts.sentences:
            raise UsageError(f"no sentence to parse: all {len(self.bad)} sentences are "
                             "malformed")

    def _advance(self, seg, pos, size):
        """Count the input read up to the sentence just written (for the progress line)."""
        if seg != self.seg:
            if self.seg is not None:
                self.done_bytes += self._size(self.seg)
            self.seg, self.seg_bytes = seg, 0
        self.seg_bytes = pos[0] if isinstance(pos, tuple) else self.seg_bytes + size

    def _size(self, seg):
        f = self.segments[seg][0]
        if f not in self.sizes:
            self.sizes[f] = 0 if f == "-" else os.path.getsize(f)
        return self.sizes[f]

    def _read_bytes(self):
        if self.seg is None:
            return self.done_bytes
        return self.done_bytes + min(self.seg_bytes, int(0.99 * self._size(self.seg)))

    def _open_target(self, t):
        from ..conllu import SentenceText

        self.target = t
        self.text_of = SentenceText()
        self.sink = (StdoutSink() if t.path is None
                     else written("output", t.path, chunked_output, t.path))

    def _finish_target(self):
        """Finish the current output (and, in a folder, say what went into it)."""
        if self.sink is None:
            return
        t = self.target
        if self.mode != "file" and self.state_path and self.committed is not None:
            self._commit(self.committed[0] + 1, None)  # this segment is complete
        written("output", t.path, self.sink.finish)
        self.sink = None
        if self.mode in ("folder", "in-place") and not self.args.quiet:
            f = t.inputs[0]
            c = self.counts.file("<stdin>" if f == "-" else f)
            self.progress.say(f"depparse: {f} -> {t.path}: "
                              f"{count_of(c['sentences'], 'sentence')}, "
                              f"{count_of(c['words'], 'word')}"
                              + (f", {c['tagged']:,} tagged" if c["tagged"] else ""))

    # -- commits and the state file ----------------------------------------------------------
    def _commit(self, seg, pos):
        """Make what was written durable, then record it in the state file: the next run
        (``--resume``) continues after the sentence at ``pos`` of segment ``seg`` (from the
        start of ``seg`` when ``pos`` is None)."""
        out = written("output", self.target.path, self.sink.commit)
        rep = None
        if self.report is not None:
            rep = written("report", self.args.report, self.report.commit)
        if self.state_path is None:
            return
        bad = [b for b in self.bad if b[0] < seg or (b[0] == seg and pos is not None
                                                     and isinstance(pos, int) and b[1] < pos)]
        output = {"bytes": out, "count": self.text_of.count, "pending": self.text_of.pending}
        if pos is None and self.mode != "file":
            output = {"bytes": 0, "count": 0, "pending": ""}
        state = {"format": STATE_FORMAT, "version": STATE_VERSION, "settings": self.settings,
                 "input_stats": [None if f == "-" else file_stat(f) for f in self.inputs],
                 "segment": seg, "position": pos, "output": output,
                 "report": None if rep is None else {"bytes": rep[0], "entries": rep[1]},
                 "counts": self.counts.to_json(), "bad": bad}
        if self.stopped is not None:
            state["stopped"] = self.stopped
        written("state", self.state_path, self._write_state, state)

    def _write_state(self, state):
        with atomic_output(self.state_path, "w", encoding="utf-8") as f:
            json.dump(state, f)

    def _load_state(self):
        """The state of the stopped run, checked against this one; None when that run had
        in fact finished (its output complete, only the state file left)."""
        try:
            with open(self.state_path, encoding="utf-8") as f:
                state = json.load(f)
            if state.get("format") != STATE_FORMAT or state.get("version") != STATE_VERSION:
                raise ValueError("not a depparse parse state")
        except (OSError, ValueError) as e:
            raise UsageError(f"{self.state_path}: cannot continue from it ({e}); start again "
                             "with --force") from None
        start = state["segment"]
        stats = [None if f == "-" else file_stat(f) for f in self.inputs]
        old_stats = list(state["input_stats"])
        first = 0 if self.mode == "file" else start
        settings = state["settings"]
        stopped = state.get("stopped")
        if stopped:  # at bad input: the input may be mended after the sentences kept, and
            # --skip-bad added (or left out)
            settings = {**settings, "skip_bad": self.settings["skip_bad"]}
            f = self.segments[stopped["segment"]][0]
            old_stats[self.inputs.index(f)] = None
            if f == "-":
                self.resume_prefix = (stopped["bytes"], stopped["sha256"])
                self.resume_columns = stopped.get("columns")
            elif list(prefix_digest(f, stopped["line"])) != [stopped["bytes"],
                                                             stopped["sha256"]]:
                raise UsageError(f"{self.state_path}: the input {f} changed before line "
                                 f"{stopped['line']:,} since the stopped run (only what "
                                 "comes after the sentences kept may change); start again "
                                 "with --force")
        check_same(settings, self.settings, stats[first:], old_stats[first:],
                   self.state_path)
        if self.mode == "file" and not os.path.exists(self._partial_name()):
            if os.path.exists(self.targets[0].path):  # killed after the rename
                os.unlink(self.state_path)
                if not self.args.quiet:
                    print(f"depparse: nothing to resume: {self.targets[0].path} is complete",
                          file=sys.stderr)
                return None
            raise UsageError(f"{self._partial_name()}: missing, so the stopped run cannot be "
                             "continued; start again with --force")
        if not self.args.quiet:
            n = state["counts"]["sentences"]
            print(f"depparse: resuming after {count_of(n, 'sentence')} "
                  f"({self._partial_name()})", file=sys.stderr)
        return state

    def _stopped(self):
        """After Ctrl-C, a killed worker or an internal error: keep what was committed."""
        self.progress.clear()
        if self.state_path is not None and os.path.exists(self.state_path):
            for x in (self.sink, self.report):
                if x is not None:
                    x.close()
            print(f"depparse: {self._partial_name()}: what was parsed up to the last commit "
                  "is kept; --resume continues the run", file=sys.stderr)
        else:
            self._discard()

    def _discard(self):
        """After bad input: remove the partial files (nothing half-written stays)."""
        self.progress.clear()
        for x in (self.sink, self.report):
            if x is not None:
                x.discard()
        if self.state_path and os.path.exists(self.state_path):
            os.unlink(self.state_path)
