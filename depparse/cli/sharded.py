"""``depparse parse --scheduler ADDRESS``: the workers of a Dask cluster read and parse the
inputs; this process joins their shard files into the outputs.

The workers read the inputs from a filesystem they share with this process (the input paths,
made absolute, must mean the same files there) and write their shard files into a folder
beside the output (:func:`shard_dir_of`), which must be shared too: ``OUT.partial.shards/``
for ``-o OUT``, ``FOLDER/.depparse-parse.partial.shards/`` for ``-o FOLDER/`` and
``--in-place``, a temporary folder in the current directory for stdout.  This process reads
only each CoNLL-U file's first :data:`~depparse.inference.columns.TAG_WINDOW` sentences (the
columns the file lacks, decided as a local run decides them); it holds the list of shards and
the counts, and copies the shard files into the output as they come, in order
(:class:`~depparse.shards.Joiner`): the same bytes as a local run
(:func:`depparse.distributed.iter_parse_files` says how).

``--resume`` after a stopped run keeps its plan and its complete shards and parses the others;
``--force`` starts again.  Bad input (a malformed sentence without ``--skip-bad``) is the
error of a local run, the first in file order; the shard folder is then removed.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import time
import warnings

from ..atomic import PARTIAL_SUFFIX
from ..errors import ConlluError, DepparseError, UsageError
from .stream import count_of, file_columns, written

__all__ = ["parse_size", "run_sharded", "shard_dir_of"]

_SIZE = re.compile(r"^\s*(\d+)\s*([kKmMgG]?)i?[bB]?\s*$")


def parse_size(text) -> int:
    """``"64K"`` -> 65536, ``"8M"``, ``"1G"``, ``"100000"`` (bytes)."""
    m = _SIZE.match(str(text))
    if not m or int(m.group(1)) <= 0:
        raise UsageError(f"--shard-size {text}: give a number of bytes, e.g. 4M or 65536")
    return int(m.group(1)) << {"": 0, "k": 10, "m": 20, "g": 30}[m.group(2).lower()]


def shard_dir_of(mode, targets):
    """Where the shard files of a run go (None: a temporary folder, for stdout or a device)."""
    if mode == "file" and not targets[0].special:
        return targets[0].path + PARTIAL_SUFFIX + ".shards"
    if mode in ("folder", "in-place"):
        return os.path.join(os.path.dirname(os.path.abspath(targets[0].path)),
                            ".depparse-parse" + PARTIAL_SUFFIX + ".shards")
    return None


def _columns(parser, kind, retag, inputs):
    """The tag columns each CoNLL-U file lacks, from its first sentences (a local run's
    decision, :mod:`depparse.inference.columns`)."""
    if kind != "conllu" or retag:
        return None
    out = {}
    with warnings.catch_warnings():  # the workers' readers warn (byte-order mark, CRLF)
        warnings.simplefilter("ignore")
        for f in inputs:
            out[f] = next(iter(file_columns(parser, kind, f).values()), ())
    return out


_WHERE = re.compile(r"^(.*?):\d+: ")


def _warn(seen, category, message):
    """A worker's warning, once per file and kind (a local run's reader warns once per
    file, at the first place; the shards of a file each warn at theirs)."""
    from .. import errors

    key = (category, _WHERE.sub(r"\1: ", message))
    if key in seen:
        return
    seen.add(key)
    cls = getattr(errors, category, None)
    if not (isinstance(cls, type) and issubclass(cls, Warning)):
        cls = UserWarning
    warnings.warn(message, cls, stacklevel=2)


def run_sharded(run):
    """Run ``depparse parse --scheduler`` (``run``: the :class:`~.parse.Run` of the command,
    its inputs, targets, counts and progress)."""
    from ..distributed import iter_parse_files

    args, mode, targets = run.args, run.mode, run.targets
    if "-" in run.inputs:
        raise UsageError("--scheduler: the workers read the inputs from a shared filesystem, "
                         "so stdin ('-') cannot be one; save it to a file first")
    if args.resume and mode == "in-place":
        raise UsageError("--resume with --scheduler continues -o FILE or -o FOLDER/ runs, not "
                         "--in-place (whose finished inputs were replaced)")
    if run.state_path and os.path.exists(run.state_path):  # a stopped run without --scheduler
        if not args.force:
            raise UsageError(f"{run._partial_name()}: an earlier run (without --scheduler) "
                             "stopped here; continue it with --resume without --scheduler, or "
                             "start again with --force")
        os.unlink(run.state_path)
    folder = shard_dir_of(mode, targets)
    temporary = folder is None
    if temporary:
        folder = tempfile.mkdtemp(prefix=".depparse-parse.", suffix=".shards",
                                  dir=os.getcwd())
    elif os.path.exists(folder):
        if not args.resume:
            if not args.force:
                raise UsageError(f"{folder}: an earlier run stopped here; continue it with "
                                 "--resume, or start again with --force")
            shutil.rmtree(folder)
    elif args.resume and not args.quiet:
        print(f"depparse: nothing to resume ({folder} not found): parsing from the start",
              file=sys.stderr)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        raise UsageError(f"{folder}: cannot make the folder of the shard files: "
                         f"{e.strerror or e}") from None
    skip = run._skipped(0)
    parsed = [(i, f, t) for i, (f, t) in enumerate(run.segments) if i not in skip]
    # the inputs' identities are in the plan and the shards' names (a resumed folder run may
    # skip the inputs whose outputs are complete)
    fingerprint = {"settings": run.settings}
    try:
        _join(run, iter_parse_files, parsed, os.path.abspath(folder), fingerprint)
    except DepparseError:
        run._discard()
        _remove(folder)
        raise
    except BaseException:
        run.progress.clear()
        for x in (run.sink, run.report):
            if x is not None:
                x.discard()
        if temporary:
            _remove(folder)
        else:
            print(f"depparse: {folder}: the complete shards are kept; --resume continues the "
                  "run", file=sys.stderr)
        raise
    _remove(folder)


def _remove(folder):
    """Remove the shard folder (again while a task of a cancelled run, still running on a
    worker, writes into it: what it writes after the folder is gone fails there)."""
    for _ in range(50):
        shutil.rmtree(folder, ignore_errors=True)
        if not os.path.exists(folder):
            return
        time.sleep(0.1)


def _join(run, iter_parse_files, parsed, folder, fingerprint):
    from ..shards import Joiner
    from .commands import conllu_hint
    from .progress import Progress

    args, parser, kw = run.args, run.parser, run.kw
    files = [f for _, f, _ in parsed]
    total = sum(os.path.getsize(f) for f in files) or None
    run.progress = Progress(args.quiet, args.progress_interval, total)
    t0, paused = time.perf_counter(), run.watch.seconds
    if args.report:
        from ..report.report_writer import ReportWriter

        run.report = written("report", args.report, ReportWriter, args.report, parser,
                             kw["max_iter"], kw["single_root"])
    columns = _columns(parser, args.input, args.retag, files)
    before = {}

    def on_plan(tasks, done):
        before["done"] = done
        if done and not args.quiet:
            print(f"depparse: resuming: {done:,} of {count_of(len(tasks), 'shard')} are "
                  f"complete ({folder})", file=sys.stderr)

    shards = iter_parse_files(
        parser, [os.path.abspath(f) for f in files], args.scheduler, folder, kind=args.input,
        names=files, columns=columns, retag=args.retag, skip_bad=args.skip_bad,
        normalized_spaces=args.normalized_spaces,
        report=bool(args.report), shard_bytes=args.shard_size, resume=args.resume,
        fingerprint=fingerprint, on_plan=on_plan, **kw)
    seen: set = set()
    read = 0
    joiner = None
    try:
        nxt = next(shards, None)
        for k, (i, f, t) in enumerate(parsed):
            if t is not run.target:
                run._finish_target()
                run._open_target(t)
                joiner = Joiner(_writer("output", t.path, run.sink.write), args.input,
                                None if run.report is None
                                else _writer("report", args.report, run.report.add_json))
            had = len(run.bad)
            n0 = run.counts.file(f)["sentences"]
            while nxt is not None and nxt[0].file == k:
                task, meta, lead = nxt
                for line, message in meta["bad"]:  # as run._skip_bad prints them
                    run.progress.clear()
                    run.bad.append((i, line))
                    print(f"depparse: skipped: {message}", file=sys.stderr)
                for category, message in meta["warnings"]:
                    _warn(seen, category, message)
                joiner.add(task, meta, lead)
                for st in meta["stats"]:
                    run.counts.add_stat(f, *st)
                read += task.end - task.start
                c = run.counts
                run.progress.update(c.sentences, c.words, c.proved, read, run.watch.seconds)
                nxt = next(shards, None)
            if run.counts.file(f)["sentences"] == n0 and len(run.bad) == had:
                warnings.warn(f"no sentences in {f}", _input_warning(), stacklevel=2)
        run._finish_target()
        if run.mode in ("file", "stdout") and run.target is None:
            run._open_target(run.targets[0])  # nothing parsed: an empty output
            run._finish_target()
    except ConlluError as e:  # the local run's message (it has no sentence count here: a
        raise conllu_hint(e, 1, skip_bad=True) from None  # shard may start mid-file)
    finally:
        shards.close()
    run.counts.bad = len(run.bad)
    if run.bad and not run.counts.sentences:
        raise UsageError(f"no sentence to parse: all {len(run.bad)} sentences are malformed")
    seconds = time.perf_counter() - t0 - (run.watch.seconds - paused)
    if run.report is not None:
        written("report", args.report, run.report.finish, run.inputs, run.counts.files,
                run.counts.to_json(), seconds)
        run.report = None
    run.progress.clear()
    run.watch.done()
    run.counts.time_limit_warning(run.parser.decoding.seconds(run.kw["time_limit"]))
    if not args.quiet:
        summary = run.counts.summary(seconds)
        if before.get("done"):
            summary += f"; {count_of(before['done'], 'shard')} parsed before --resume"
        print(f"depparse: {summary}", file=sys.stderr)


def _writer(what, path, fn):
    def write(data):
        written(what, path, fn, data)

    return write


def _input_warning():
    from ..errors import InputWarning

    return InputWarning
