"""Command line: ``depparse train | parse | evaluate | report``.

Errors in what the user gave (a malformed CoNLL-U file, a bad model file, an unwritable output
path, bad flags) print one line ``depparse: error: FILE:LINE: message`` on stderr and exit
with status 2; anything else is an internal error (status 1).  ``--debug`` shows tracebacks.
Outputs are written to a temporary file and renamed, so a failure never leaves a
half-written file.  Recoverable deviations of the input (a byte-order mark, CRLF line ends)
are accepted with a one-line warning.

Scale-out: ``parse --jobs N`` parses in N worker processes (:mod:`depparse.parallel`);
``parse --scheduler ADDRESS`` and ``train --scheduler ADDRESS`` run on a Dask cluster
(:mod:`depparse.distributed`: sharded parsing; training by iterative parameter mixing).
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import sys
import time
import warnings
from dataclasses import fields
from pathlib import Path

from .config import DecodeConfig, ModelConfig, TrainConfig
from .errors import ConfigError, ConlluWarning, DepparseError, UsageError

__all__ = ["add_config_flags", "build_parser", "configs_from_args", "main"]

log = logging.getLogger("depparse")

CONFIGS = (ModelConfig, DecodeConfig, TrainConfig)


def _add_common(p):
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    p.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors")


def _flag(f) -> str:
    return f.metadata.get("flag") or "--" + f.name.replace("_", "-")


def _cli_fields(command):
    for cls in CONFIGS:
        for f in fields(cls):
            if command in f.metadata.get("cli", ()):
                yield cls, f


def add_config_flags(p, command, model_defaults=False):
    """Flags of ``command`` derived from the fields of the config classes (help, choices,
    defaults).  ``model_defaults``: the default is the loaded model's (``None`` here)."""
    for _, f in _cli_fields(command):
        m = f.metadata
        help_ = m["help"]
        if model_defaults:
            help_ += f" (default: the model's; {f.default} unless trained otherwise)"
        if f.type in ("bool", bool):
            if f.default:  # a flag that turns it off (e.g. --multi-root for single_root)
                g = p.add_mutually_exclusive_group()
                g.add_argument(_flag(f), dest=f.name, action="store_false",
                               default=None if model_defaults else f.default, help=help_)
                if model_defaults:
                    g.add_argument("--" + f.name.replace("_", "-"), dest=f.name,
                                   action="store_true", default=None,
                                   help=f"the opposite of {_flag(f)}")
            else:
                p.add_argument(_flag(f), dest=f.name, action="store_true",
                               default=None if model_defaults else f.default, help=help_)
            continue
        kind = {"int": int, "float": float, "str": str}.get(str(f.type).split(" ")[0],
                                                             type(f.default))
        if kind is type(None):
            kind = float
        if not model_defaults:
            help_ += " (default: %(default)s)"
        p.add_argument(_flag(f), dest=f.name, type=kind, choices=m.get("choices"),
                       metavar=m.get("metavar"), default=None if model_defaults else f.default,
                       help=help_)


def configs_from_args(args, command, model_defaults=False):
    """``{config class: keyword dict}`` of the flags of ``command`` that were given (all of
    them unless ``model_defaults``), validated: a bad value is a UsageError naming the flag."""
    out = {cls: {} for cls in CONFIGS}
    for cls, f in _cli_fields(command):
        v = getattr(args, f.name)
        if v is not None or not model_defaults:
            out[cls][f.name] = v
    for cls, kw in out.items():
        try:
            cls(**kw)
        except ConfigError as e:
            flag = next((_flag(f) for c, f in _cli_fields(command)
                         if c is cls and f.name == e.field), e.field)
            raise UsageError(f"{flag} {e.rule}") from None
    return out


def build_parser():
    ap = argparse.ArgumentParser(
        prog="depparse",
        description="Non-projective dependency parsing with head automata and dual "
                    "decomposition (Koo et al. 2010).")
    sub = ap.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train a model on a CoNLL-U treebank")
    t.add_argument("--train", required=True, help="training CoNLL-U file")
    t.add_argument("--dev", help="development CoNLL-U file (UAS/certificates per epoch)")
    t.add_argument("--out", required=True, help="model file to write (.npz)")
    add_config_flags(t, "train")
    t.add_argument("--no-labeler", action="store_true",
                   help="do not train a DEPREL labeler (as --labeler-epochs 0)")
    t.add_argument("--checkpoint", help="checkpoint file (default: OUT.ckpt.npz)")
    t.add_argument("--resume", action="store_true", help="continue from the checkpoint")
    t.add_argument("--scheduler", metavar="ADDRESS",
                   help="train on a Dask cluster by iterative parameter mixing "
                        "(McDonald et al. 2010), e.g. tcp://127.0.0.1:8786")
    t.add_argument("--shards", type=int,
                   help="with --scheduler: data shards (default: one per worker)")
    _add_common(t)

    p = sub.add_parser("parse", help="parse CoNLL-U files")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="CoNLL-U files ('-' = stdin)")
    p.add_argument("-o", "--output", help="output file (default: stdout)")
    p.add_argument("--model", help="model file or name (default: the shipped English model)")
    add_config_flags(p, "parse", model_defaults=True)
    p.add_argument("--report", help="write per-sentence certificates/iterations/times (JSON)")
    p.add_argument("--jobs", type=int, default=1,
                   help="worker processes (default 1; 0: one per CPU); same output as 1")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="parse on a Dask cluster (e.g. tcp://127.0.0.1:8786)")
    p.add_argument("--skip-bad", action="store_true",
                   help="skip malformed sentences (listed on stderr as FILE:LINE: message) "
                        "and parse the others; the output holds the good sentences only")
    _add_common(p)

    e = sub.add_parser("evaluate", help="UAS/LAS of a system file against a gold file")
    e.add_argument("gold")
    e.add_argument("system")
    e.add_argument("--report", help="parse report (JSON) for the certificate rate")
    e.add_argument("--json", action="store_true", help="print the scores as JSON")
    _add_common(e)

    r = sub.add_parser("report", help="HTML/PNG/Markdown report from a parse report")
    r.add_argument("report")
    r.add_argument("-o", "--out-dir", default=None, help="output folder (default: REPORT_html)")
    _add_common(r)
    return ap


# ---------------------------------------------------------------------------------------
# helpers


def _read(path, on_error=None):
    """Sentences of a CoNLL-U file (``-``: stdin); an empty file holds none."""
    from .conllu import read_conllu

    errors = []

    def _err(e):
        errors.append(e)
        on_error(e)

    if path == "-":
        f = io.BytesIO(sys.stdin.buffer.read())
        f.name = "<stdin>"
        sents = read_conllu(f, on_error=_err if on_error else None)
        path = "<stdin>"
    else:
        if os.path.isdir(path):
            raise UsageError(f"{path}: is a folder, not a CoNLL-U file")
        if not os.path.exists(path):
            raise UsageError(f"{path}: no such file")
        sents = read_conllu(path, on_error=_err if on_error else None)
    return sents


def _check_output(path, what="output"):
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


def _oserror(path, what, e):
    return UsageError(f"{path}: cannot write the {what}: {e.strerror or e}")


def _write_json(path, obj):
    from .atomic import atomic_output

    path = Path(path)
    d = path.resolve().parent
    if not d.is_dir():
        raise UsageError(f"{path}: folder {d} does not exist")
    try:
        with atomic_output(path, "w", encoding="utf-8") as f:
            json.dump(obj, f)
    except OSError as e:
        raise _oserror(path, "report", e) from None


def _write_output(parsed, out):
    """Write CoNLL-U atomically to ``out``, or to stdout when ``out`` is None."""
    from .conllu import write_conllu

    if out:
        try:
            write_conllu(parsed, out)
        except OSError as e:
            raise _oserror(out, "output", e) from None
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
        raise _oserror("<stdout>", "output", e) from None


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


def cmd_train(args):
    from .learn.data import check_training_sentences
    from .learn.perceptron import Trainer, train

    for f in (args.train, args.dev):
        if f and f != "-" and not os.path.exists(f):
            raise UsageError(f"{f}: no such file")
    if args.shards is not None and args.shards < 1:
        raise UsageError("--shards must be >= 1")
    if args.shards is not None and not args.scheduler:
        raise UsageError("--shards needs --scheduler")
    if args.no_labeler:
        args.labeler_epochs = 0
    kw = configs_from_args(args, "train")
    cfg, dec, trc = (cls(**kw[cls]) for cls in CONFIGS)
    out = Path(args.out)
    _check_output(out, "model")
    ckpt = args.checkpoint or str(out) + ".ckpt.npz"
    _check_output(ckpt, "checkpoint")
    tr = _read(args.train)
    if not tr:
        raise UsageError(f"{args.train}: no sentences to train on (empty file)")
    dv = _read(args.dev) if args.dev else None
    check_training_sentences(tr, "training", dec.single_root)
    if dv:
        check_training_sentences(dv, "dev", dec.single_root)
    if args.resume and os.path.exists(ckpt):
        c = Trainer.load_checkpoint(ckpt).config
        if (c.model, c.bits) != (cfg.model, cfg.bits):
            raise UsageError(f"{ckpt}: the checkpoint was written for --model {c.model} "
                             f"--bits {c.bits}; resume with the same settings or delete it")
        log.info("resuming from %s", ckpt)
    elif args.resume:
        log.info("no checkpoint at %s: training from the start", ckpt)
    common = dict(checkpoint=ckpt, resume=args.resume, progress=not args.quiet)
    try:
        if args.scheduler:
            from .distributed import train_distributed

            m = train_distributed(tr, dv, cfg, dec, trc, args.scheduler, shards=args.shards,
                                  **common)
        else:
            m = train(tr, dv, cfg, dec, trc, **common)
    except OSError as e:
        if e.filename is not None or e.errno is None:  # named already, or not the disk's
            raise
        # a disk error without a file name: the only file written while training is the
        # checkpoint (through a temporary file, hence no name)
        raise _oserror(ckpt, "checkpoint", e) from None
    try:
        m.save(out)
    except OSError as e:
        raise _oserror(out, "model", e) from None
    log.info("model written to %s (%.1f MB)", out, out.stat().st_size / 1e6)


def cmd_parse(args):
    from .api import load
    from .report import build_report

    if args.jobs < 0:
        raise UsageError("--jobs must be >= 0 (0: one per CPU)")
    if args.inputs.count("-") > 1:
        raise UsageError("stdin ('-') can be read only once")
    given = configs_from_args(args, "parse", model_defaults=True)[DecodeConfig]
    jobs = args.jobs or os.cpu_count() or 1
    out = args.output
    _check_output(out, "output")
    _check_output(args.report, "report")
    parser = load(args.model)
    try:
        parser.set_pruning(given.get("prune_threshold"), given.get("prune_max_heads"))
    except DepparseError as e:
        raise UsageError(f"--prune-threshold/--prune-max-heads: {e}") from None
    t0 = time.perf_counter()
    bad = []

    def _skip(e):
        bad.append(e)
        print(f"depparse: skipped: {e}", file=sys.stderr)

    docs = [(f, _read(f, _skip if args.skip_bad else None)) for f in args.inputs]
    sents = [s for _, ss in docs for s in ss]
    if not sents and bad:
        raise UsageError(f"no sentence to parse: all {len(bad)} sentences are malformed")
    kw = dict(max_iter=given.get("max_iter"), single_root=given.get("single_root"),
              time_limit=given.get("time_limit"), trace=bool(args.report))
    if args.scheduler and sents:
        from .distributed import parse_distributed

        results = parse_distributed(parser, sents, args.scheduler, return_results=True, **kw)
    else:
        results = parser.parse(sents, jobs=jobs, return_results=True, **kw)
    parsed = [p for p, _ in results]
    _write_output(parsed, out)
    dt = time.perf_counter() - t0
    if args.report:
        rep = build_report(parser, docs, results, dt, max_iter=kw["max_iter"],
                           single_root=kw["single_root"])
        _write_json(args.report, rep)
    if not args.quiet:
        words = sum(s.n for s in sents)
        cert = sum(bool(r.certificate) for _, r in results)
        timed = sum(bool(r.timed_out) for _, r in results)
        extra = f"; {timed} stopped by --time-limit" if timed else ""
        if bad:
            extra += f"; skipped {len(bad)} malformed sentences"
        print(f"depparse: parsed {len(sents)} sentences, {words} words in {dt:.2f} s "
              f"({words / max(dt, 1e-9):.0f} words/s); certificates {cert}/{len(sents)} "
              f"({100.0 * cert / max(1, len(sents)):.1f}%){extra}", file=sys.stderr)


def cmd_evaluate(args):
    from .evaluate import certificate_rate, evaluate

    gold = _read(args.gold)
    system = _read(args.system)
    sc = evaluate(gold, system)
    rate = None
    if args.report:
        try:
            with open(args.report, encoding="utf-8") as f:
                rate = certificate_rate(json.load(f))
        except FileNotFoundError:
            raise UsageError(f"{args.report}: no such file") from None
        except (ValueError, KeyError, TypeError) as e:  # not JSON, or a ReportError
            raise UsageError(f"{args.report}: not a parse report ({e})") from None
    if args.json:
        d = dict(sc.__dict__)
        if rate is not None:
            d["cert_rate"] = rate
        print(json.dumps(d))
        return
    print(f"words      {sc.words}")
    print(f"UAS        {sc.uas:.2f}")
    print(f"LAS        {sc.las:.2f}")
    print(f"UAS-nopunct {sc.uas_nopunct:.2f}")
    if rate is not None:
        print(f"Cert%      {rate:.2f}")


def cmd_report(args):
    from .errors import ReportError
    from .report import write_report

    try:
        with open(args.report, encoding="utf-8") as f:
            rep = json.load(f)
    except FileNotFoundError:
        raise UsageError(f"{args.report}: no such file") from None
    except UnicodeDecodeError as e:
        raise UsageError(f"{args.report}: not valid JSON ({e.reason})") from None
    except json.JSONDecodeError as e:
        raise UsageError(f"{args.report}:{e.lineno}: not valid JSON ({e.msg})") from None
    out = args.out_dir or (str(Path(args.report).with_suffix("")) + "_html")
    try:
        index = write_report(rep, out)
    except ReportError as e:
        raise UsageError(f"{args.report}: {e}") from None
    print(f"depparse: report written to {index}", file=sys.stderr)


COMMANDS = {"train": cmd_train, "parse": cmd_parse, "evaluate": cmd_evaluate,
            "report": cmd_report}


# ---------------------------------------------------------------------------------------
# entry point


class _StderrHandler(logging.StreamHandler):
    """Writes to the current ``sys.stderr`` (also when it is replaced after set-up)."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


def _setup_logging(quiet):
    for h in list(log.handlers):
        if isinstance(h, _StderrHandler):
            log.removeHandler(h)
    h = _StderrHandler()
    h.setFormatter(logging.Formatter("depparse: %(message)s"))
    log.addHandler(h)
    log.setLevel(logging.WARNING if quiet else logging.INFO)
    log.propagate = False


def _one_line(msg):
    lines = [x.strip() for x in str(msg).splitlines() if x.strip()]
    return " ".join(lines) if len(lines) <= 3 else lines[0] + " ..."


def main(argv=None):
    """Run the command line; returns the exit status (0 ok, 2 bad input, 1 internal)."""
    ap = build_parser()
    args = ap.parse_args(argv)
    _setup_logging(args.quiet)

    def _warn(message, category, filename, lineno, file=None, line=None):
        print(f"depparse: warning: {_one_line(message)}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = _warn
        warnings.simplefilter("default", ConlluWarning)
        try:
            COMMANDS[args.command](args)
            return 0
        except DepparseError as e:
            if args.debug:
                raise
            print(f"depparse: error: {_one_line(e)}", file=sys.stderr)
            return 2
        except BrokenPipeError:
            return 141  # the reader of stdout went away (e.g. `| head`): not an error to show
        except OSError as e:
            if args.debug:
                raise
            where = f"{e.filename}: " if getattr(e, "filename", None) else ""
            print(f"depparse: error: {where}{_one_line(e.strerror or e)}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("depparse: interrupted", file=sys.stderr)
            return 130
        except Exception as e:  # noqa: BLE001
            if args.debug:
                raise
            print(f"depparse: internal error: {type(e).__name__}: {_one_line(e)} (run with "
                  "--debug for the traceback)", file=sys.stderr)
            return 1


if __name__ == "__main__":
    sys.exit(main())
