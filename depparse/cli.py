"""Command line: ``depparse train | parse | evaluate | report``.

Errors in what the user gave (a malformed CoNLL-U file, a bad model file, an unwritable output
path, bad flags) print one line ``depparse: error: FILE:LINE: message`` on stderr and exit
with status 2; anything else is an internal error (status 1).  ``--debug`` shows tracebacks.
Outputs are written to a temporary file and renamed, so a failure never leaves a
half-written file.  Recoverable deviations of the input (a byte-order mark, CRLF line ends)
are accepted with a one-line warning.

Scale-out: ``parse --jobs N`` parses in N worker processes (:mod:`depparse.inference.parallel`);
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
from .errors import ConfigError, ConlluError, ConlluWarning, DepparseError, UsageError

__all__ = ["add_config_flags", "build_parser", "configs_from_args", "main"]

log = logging.getLogger("depparse")

CONFIGS = (ModelConfig, DecodeConfig, TrainConfig)


def _add_common(p):
    p.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")


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
        shown = m.get("shown") or ("none" if f.default is None else f.default)
        if f.type in ("bool", bool):
            if f.default:  # a flag that turns it off (e.g. --multi-root for single_root)
                g = p.add_mutually_exclusive_group()
                g.add_argument(_flag(f), dest=f.name, action="store_false",
                               default=None if model_defaults else f.default,
                               help=m.get("flag_help") or m["help"])
                if model_defaults:
                    g.add_argument("--" + f.name.replace("_", "-"), dest=f.name,
                                   action="store_true", default=None,
                                   help=m["help"] + " (default: the model's setting)")
            else:
                p.add_argument(_flag(f), dest=f.name, action="store_true",
                               default=None if model_defaults else f.default,
                               help=m["help"] + " (default: off)")
            continue
        kind = {"int": int, "float": float, "str": str}[str(f.type).split(" ")[0]]
        help_ = m["help"] + (f" (default: the model's; {shown} unless trained otherwise)"
                             if model_defaults else f" (default: {shown})")
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


EXAMPLES = {
    "train": """examples:
  depparse train en_ewt-ud-train.conllu --dev en_ewt-ud-dev.conllu -o en.npz
  depparse train train.conllu -o small.npz --model sib --epochs 4 --bits 20
  depparse train train.conllu -o en.npz --resume          # continue after an interruption
""",
    "parse": """examples:
  depparse parse input.conllu -o output.conllu             # the shipped English model
  depparse parse - < input.conllu > output.conllu          # stdin to stdout
  depparse parse input.conllu -o out.conllu --report run.json --jobs 2
  depparse parse input.conllu -m my_model.npz --prune-threshold 1e-4 --prune-max-heads 10
""",
    "evaluate": """examples:
  depparse evaluate gold.conllu output.conllu
  depparse evaluate gold.conllu output.conllu --parse-report run.json --json
""",
    "report": """examples:
  depparse report run.json                       # writes run_html/index.html
  depparse report run.json -o report_folder/
""",
}


def _sub(sub, name, help_, description):
    return sub.add_parser(name, help=help_, description=description, epilog=EXAMPLES[name],
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def build_parser():
    from . import __version__

    ap = argparse.ArgumentParser(
        prog="depparse",
        description="Non-projective dependency parsing with head automata and dual "
                    "decomposition (Koo et al. 2010).  Every parse says whether it is "
                    "proved to be the model's highest-scoring tree (a certificate).",
        epilog="Run 'depparse COMMAND --help' for the options and an example of each command.")
    ap.add_argument("--version", action="version", version=f"depparse {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    t = _sub(sub, "train", "train a model on a CoNLL-U treebank",
             "Train a parser (and its arc pruner and DEPREL labeler) on a CoNLL-U treebank "
             "with gold trees.  A checkpoint is written after every epoch and removed when "
             "the model is written.")
    t.add_argument("train", nargs="?", metavar="TRAIN", help="training CoNLL-U file")
    t.add_argument("--train", dest="train_flag", metavar="TRAIN", help=argparse.SUPPRESS)
    t.add_argument("--dev", help="development CoNLL-U file: UAS and certificates after every "
                                 "epoch, LAS at the end (default: none)")
    t.add_argument("-o", "--output", metavar="MODEL", help="model file to write (.npz; required)")
    t.add_argument("--out", dest="output", help=argparse.SUPPRESS)
    add_config_flags(t, "train")
    t.add_argument("--no-labeler", action="store_true",
                   help="do not train a DEPREL labeler (as --labeler-epochs 0)")
    t.add_argument("--checkpoint", metavar="FILE",
                   help="checkpoint file (default: MODEL.ckpt.npz)")
    t.add_argument("--keep-checkpoint", action="store_true",
                   help="keep the checkpoint after the model is written (default: remove it)")
    t.add_argument("--resume", action="store_true", help="continue from the checkpoint")
    t.add_argument("--scheduler", metavar="ADDRESS",
                   help="train on a Dask cluster by iterative parameter mixing "
                        "(McDonald et al. 2010), e.g. tcp://127.0.0.1:8786 (default: here)")
    t.add_argument("--shards", type=int,
                   help="with --scheduler: data shards (default: one per worker)")
    _add_common(t)

    p = _sub(sub, "parse", "parse CoNLL-U files",
             "Parse CoNLL-U files: HEAD and DEPREL are filled in, every other byte is kept.  "
             "A one-line summary goes to stderr.")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="CoNLL-U files ('-' = stdin)")
    p.add_argument("-o", "--output", help="output file (default: stdout)")
    p.add_argument("-m", "--model", help="model file or shipped model name (default: "
                                         "en_ewt_gs, the shipped English model)")
    add_config_flags(p, "parse", model_defaults=True)
    p.add_argument("--report", metavar="REPORT.json",
                   help="also write a parse report: per-sentence certificates, iterations, "
                        "times (JSON; read by 'depparse report') (default: none)")
    p.add_argument("--jobs", type=int, default=1,
                   help="worker processes (default: 1; 0: one per CPU); same output as 1")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="parse on a Dask cluster (e.g. tcp://127.0.0.1:8786) (default: here)")
    p.add_argument("--skip-bad", action="store_true",
                   help="skip malformed sentences (listed on stderr as FILE:LINE: message) "
                        "and parse the others; the output holds the good sentences only")
    _add_common(p)

    e = _sub(sub, "evaluate", "UAS/LAS of a system file against a gold file",
             "Score a parsed file against the gold file of the same sentences: UAS, LAS "
             "(CoNLL 2018 definitions: every word, punctuation included; LAS compares the "
             "universal part of DEPREL), both also without punctuation.")
    e.add_argument("gold", metavar="GOLD", help="gold-standard CoNLL-U file")
    e.add_argument("system", metavar="SYSTEM", help="parsed CoNLL-U file (same sentences)")
    e.add_argument("--parse-report", "--report", dest="parse_report", metavar="REPORT.json",
                   help="the parse report of SYSTEM ('depparse parse --report'): adds the "
                        "certificate rate (default: none)")
    e.add_argument("--json", action="store_true", help="print the scores as JSON")
    _add_common(e)

    r = _sub(sub, "report", "HTML/PNG/Markdown report from a parse report",
             "Write an HTML page with figures, a Markdown summary and summary.json from a "
             "parse report ('depparse parse --report').")
    r.add_argument("report", metavar="REPORT.json", help="the parse report to render")
    r.add_argument("-o", "--output", "--out-dir", dest="output", metavar="FOLDER",
                   help="output folder (default: REPORT_html beside the report)")
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
                          "https://universaldependencies.org/format.html)")
        raise


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


def _count(k, noun):
    """``"1 sentence"``, ``"2 sentences"``."""
    return f"{k:,} {noun}{'' if k == 1 else 's'}"


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

    if args.train and args.train_flag and args.train != args.train_flag:
        raise UsageError("give the training file once (TRAIN or --train)")
    train_file = args.train or args.train_flag
    if not train_file:
        raise UsageError("the training file is missing: depparse train TRAIN -o MODEL")
    if not args.output:
        raise UsageError("the model file to write is missing: depparse train TRAIN -o MODEL")
    for f in (train_file, args.dev):
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
    out = Path(args.output)
    _check_output(out, "model")
    ckpt = args.checkpoint or str(out) + ".ckpt.npz"
    _check_output(ckpt, "checkpoint")
    tr = _read(train_file)
    if not tr:
        raise UsageError(f"{train_file}: no sentences to train on (empty file)")
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
    log.info("%s", training_summary(m.info))
    log.info("model written to %s (%.1f MB)", out, out.stat().st_size / 1e6)
    if args.keep_checkpoint:
        log.info("checkpoint kept at %s (%.1f MB; --resume continues from it)", ckpt,
                 os.path.getsize(ckpt) / 1e6)
    elif os.path.exists(ckpt):
        os.remove(ckpt)
        log.info("checkpoint %s removed (--keep-checkpoint keeps it)", ckpt)


def training_summary(info) -> str:
    """The per-epoch table of a training run (from ``Model.info``), and the final dev scores."""
    rows = [h for h in info.get("history", []) if "epoch" in h]
    dev = any("dev_uas" in h for h in rows)
    K = next((h["dev_max_iter"] for h in rows if "dev_max_iter" in h), None)
    head = f"{'epoch':>5}  {'train UAS':>9}"
    if dev:
        head += f"  {'dev UAS':>7}  {'certified':>9}"
    head += f"  {'seconds':>7}"
    lines = ["training summary (train UAS: the predictions made during the epoch, before "
             "each update" + (f"; dev certificates with at most {K:,} iterations" if dev else "")
             + ")", head]
    for h in rows:
        line = f"{h['epoch']:>5}  {h.get('train_uas', float('nan')):>9.2f}"
        if dev:
            line += f"  {h.get('dev_uas', float('nan')):>7.2f}  {h.get('dev_cert', 0):>8.1f}%"
        lines.append(line + f"  {h['train_seconds']:>7.0f}")
    f = info.get("final_dev")
    if f:
        las = "" if f.get("las") is None else f", LAS {f['las']:.2f}"
        lines.append(f"final model on dev (as 'depparse parse' decodes, at most "
                     f"{f['max_iter']:,} iterations): UAS {f['uas']:.2f}{las}, certified "
                     f"{f['cert']:.1f}%")
    lines.append(f"total {info.get('total_seconds', 0):.0f} s (arc pruner "
                 f"{info.get('pruner_seconds', 0):.0f} s, labeler "
                 f"{info.get('labeler_seconds', 0):.0f} s)")
    return "\n".join(lines)


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
            extra += f"; skipped {_count(len(bad), 'malformed sentence')}"
        print(f"depparse: parsed {_count(len(sents), 'sentence')}, {_count(words, 'word')} "
              f"in {dt:.2f} s ({words / max(dt, 1e-9):.0f} words/s); certificates "
              f"{cert}/{len(sents)} ({100.0 * cert / max(1, len(sents)):.1f}%){extra}",
              file=sys.stderr)


def cmd_evaluate(args):
    from .evaluate import certificate_rate, evaluate

    gold = _read(args.gold)
    system = _read(args.system)
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
    out = args.output or (str(Path(args.report).with_suffix("")) + "_html")
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
