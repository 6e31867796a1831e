"""The commands of the command line: ``train``, ``parse``, ``evaluate``, ``report``."""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import os
import sys
import time
from collections import Counter
from pathlib import Path

from ..config import DecodeConfig, check_solver
from ..errors import ConfigError, ConlluError, DepparseError, UsageError
from .options import configs_from_args

__all__ = ["COMMANDS", "check_output", "oserror", "read_conllu_file"]

log = logging.getLogger("depparse")


# ---------------------------------------------------------------------------------------
# helpers


def read_conllu_file(path, on_error=None):
    """Sentences of a CoNLL-U file (``-``: stdin); an empty file holds none."""
    from ..conllu import read_conllu

    errors = []

    def _err(e):
        errors.append(e)
        on_error(e)

    try:
        if path == "-":
            f = io.BytesIO(sys.stdin.buffer.read())
            f.name = "<stdin>"
            return read_conllu(f, on_error=_err if on_error else None)
        if os.path.isdir(path):
            raise UsageError(f"{path}: is a folder, not a CoNLL-U file")
        if not os.path.exists(path):
            raise UsageError(f"{path}: no such file")
        return read_conllu(path, on_error=_err if on_error else None)
    except ConlluError as e:
        if "tab-separated columns, found 1" in e.message:  # a line without a tab
            e.message += (": the input must be CoNLL-U (10 tab-separated columns per word, "
                          "https://universaldependencies.org/format.html); for plain text "
                          "use --input text")
        raise


def _read_text(parser, path):
    """Sentences of a plain-text file (``-``: stdin), by the model's tokenizer."""
    if path == "-":
        f = io.BytesIO(sys.stdin.buffer.read())
        f.name = "<stdin>"
        return parser.read_text(f)
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a folder, not a text file")
    if not os.path.exists(path):
        raise UsageError(f"{path}: no such file")
    return parser.read_text(path)


def check_output(path, what="output"):
    """Fail early (before any work) when ``path`` cannot be written."""
    if path is None:
        return
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{path}: is a folder; give a file name for the {what}")
    d = p.resolve().parent
    if not d.is_dir():
        raise UsageError(f"{path}: cannot write the {what}: folder {d} does not exist")
    if not os.access(d, os.W_OK):
        raise UsageError(f"{path}: cannot write the {what}: folder {d} is not writable")
    if p.exists() and not os.access(p, os.W_OK):
        raise UsageError(f"{path}: cannot write the {what}: the file is read-only")


def _count(k, noun):
    """``"1 sentence"``, ``"2 sentences"``."""
    return f"{k:,} {noun}{'' if k == 1 else 's'}"


def oserror(path, what, e):
    return UsageError(f"{path}: cannot write the {what}: {e.strerror or e}")


def _write_json(path, obj):
    from ..atomic import atomic_output

    path = Path(path)
    d = path.resolve().parent
    if not d.is_dir():
        raise UsageError(f"{path}: folder {d} does not exist")
    try:
        with atomic_output(path, "w", encoding="utf-8") as f:
            json.dump(obj, f)
    except OSError as e:
        raise oserror(path, "report", e) from None


def _write_output(parsed, out):
    """Write CoNLL-U atomically to ``out``, or to stdout when ``out`` is None."""
    from ..conllu import write_conllu

    if out:
        try:
            write_conllu(parsed, out)
        except OSError as e:
            raise oserror(out, "output", e) from None
        return
    buf = io.BytesIO()
    write_conllu(parsed, buf)
    try:
        sys.stdout.buffer.write(buf.getvalue())
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        _silence_stdout()
        raise
    except OSError as e:
        _silence_stdout()
        raise oserror("<stdout>", "output", e) from None


def _silence_stdout():
    """After a failed write to stdout, keep Python's exit-time flush from failing again."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass


# ---------------------------------------------------------------------------------------
# commands


def cmd_parse(args):
    from ..api import load
    from ..report import build_report

    if args.jobs < 0:
        raise UsageError("--jobs must be >= 0 (0: one per CPU)")
    if args.inputs.count("-") > 1:
        raise UsageError("stdin ('-') can be read only once")
    given = configs_from_args(args, "parse", model_defaults=True)[DecodeConfig]
    jobs = args.jobs or os.cpu_count() or 1
    out = args.output
    check_output(out, "output")
    check_output(args.report, "report")
    parser = load(args.model)
    try:
        parser.set_pruning(given.get("prune_threshold"), given.get("prune_max_heads"))
        proofs = {k: given[k] for k in ("proof", "budget", "solver") if given.get(k) is not None}
        if proofs:  # validated by configs_from_args
            parser.decoding = dataclasses.replace(parser.decoding, **proofs)
    except DepparseError as e:
        raise UsageError(f"--prune-threshold/--prune-max-heads: {e}") from None
    try:
        check_solver(parser.config, parser.decoding)
    except ConfigError as e:
        raise UsageError(f"--solver: {args.model}: {e.rule}") from None
    t0 = time.perf_counter()
    bad = []

    def _skip(e):
        bad.append(e)
        print(f"depparse: skipped: {e}", file=sys.stderr)

    if args.input == "text":
        docs = [(f, _read_text(parser, f)) for f in args.inputs]
    else:
        docs = [(f, read_conllu_file(f, _skip if args.skip_bad else None)) for f in args.inputs]
    sents = [s for _, ss in docs for s in ss]
    if not sents and bad:
        raise UsageError(f"no sentence to parse: all {len(bad)} sentences are malformed")
    kw = dict(max_iter=given.get("max_iter"), single_root=given.get("single_root"),
              time_limit=given.get("time_limit"), trace=bool(args.report))
    # each input file gets the columns it lacks predicted (all four with --retag)
    tagged = {f: parser.columns_to_tag(ss, args.retag) for f, ss in docs}
    results = []
    for f, ss in docs:
        if args.scheduler and ss:
            from ..distributed import parse_distributed

            results += parse_distributed(parser, parser.tag(ss, tagged[f]), args.scheduler,
                                         return_results=True, **kw)
        elif ss:
            results += parser.parse_results(ss, jobs=jobs, retag=args.retag, **kw)
    parsed = [p for p, _ in results]
    _write_output(parsed, out)
    dt = time.perf_counter() - t0
    if args.report:
        rep = build_report(parser, docs, results, dt, max_iter=kw["max_iter"],
                           single_root=kw["single_root"],
                           predicted={f: list(c) for f, c in tagged.items()})
        _write_json(args.report, rep)
    if not args.quiet:
        words = sum(s.n for s in sents)
        cert = sum(bool(r.certificate) for _, r in results)
        proved = _proved(results)
        timed = sum(bool(r.timed_out) for _, r in results)
        extra = f"; {timed} stopped by --time-limit" if timed else ""
        if bad:
            extra += f"; skipped {_count(len(bad), 'malformed sentence')}"
        cols = [c for c in ("UPOS", "XPOS", "LEMMA", "FEATS") if any(c in t for t in
                                                                      tagged.values())]
        if cols:
            extra += f"; {'/'.join(cols)} predicted by the model's tagger"
        print(f"depparse: parsed {_count(len(sents), 'sentence')}, {_count(words, 'word')} "
              f"in {dt:.2f} s ({words / max(dt, 1e-9):.0f} words/s); certificates "
              f"{cert}/{len(sents)} ({100.0 * cert / max(1, len(sents)):.1f}%); {proved}{extra}",
              file=sys.stderr)


def _proved(results):
    """``proved optimal 2077/2077 (100.0%: dual 2040 in 19.1 s, branch-and-bound 37 in 1.2 s)``:
    the trees proved optimal, by kind of proof, with the decoding time of those sentences."""
    n = len(results)
    count, secs = Counter(), Counter()
    for _, r in results:
        count[r.proof] += 1
        secs[r.proof] += r.seconds
    ok = n - count[None]
    kinds = ", ".join(f"{k or 'not proved'} {count[k]} in {secs[k]:.1f} s"
                      for k in ("dual", "branch-and-bound", "exact", None) if count[k])
    if not n:
        return "proved optimal 0/0"
    return f"proved optimal {ok}/{n} ({100.0 * ok / n:.1f}%: {kinds})"


def cmd_evaluate(args):
    from ..evaluate import certificate_rate, evaluate

    gold = read_conllu_file(args.gold)
    system = read_conllu_file(args.system)
    sc = evaluate(gold, system)
    rate = None
    if args.parse_report:
        try:
            with open(args.parse_report, encoding="utf-8") as f:
                rate = certificate_rate(json.load(f))
        except FileNotFoundError:
            raise UsageError(f"{args.parse_report}: no such file") from None
        except (ValueError, KeyError, TypeError) as e:  # not JSON, or a ReportError
            raise UsageError(f"{args.parse_report}: not a parse report ({e})") from None
    if args.json:
        d = dict(sc.__dict__)
        if rate is not None:
            d["cert_rate"] = rate
        print(json.dumps(d))
        return
    print(sc.format())
    if rate is not None:
        print(f"{'certified':<15} {rate:6.2f}  (% of sentences with a certificate)")


def _read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except UnicodeDecodeError as e:
        raise UsageError(f"{path}: not valid JSON ({e.reason})") from None
    except json.JSONDecodeError as e:
        raise UsageError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from None


def cmd_report(args):
    from ..errors import ReportError
    from ..report import validate_report, write_report
    from ..report.compare import run_label

    rep = _read_json(args.report)
    others = []
    for path in args.compare:
        other = _read_json(path)
        try:
            validate_report(other)
        except ReportError as e:
            raise UsageError(f"{path}: {e}") from None
        others.append((run_label(other, Path(path).name), other))
    out = args.output or (str(Path(args.report).with_suffix("")) + "_html")
    try:
        index = write_report(rep, out, compare=others,
                             label=run_label(rep, Path(args.report).name))
    except ReportError as e:
        raise UsageError(f"{args.report}: {e}") from None
    print(f"depparse: report written to {index}", file=sys.stderr)


COMMANDS = {"parse": cmd_parse, "evaluate": cmd_evaluate, "report": cmd_report}

