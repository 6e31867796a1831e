"""Command line: ``depparse train | parse | evaluate | report | serve | show``.

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

import logging
import os
import sys
import warnings
from pathlib import Path

from ..errors import (
    ConfigError,
    ConlluWarning,
    DepparseError,
    InputWarning,
    MissingExtraError,
    ProofWarning,
    UsageError,
    require_extra,
)
from .commands import COMMANDS, check_output, oserror, read_conllu_file
from .models import cmd_models
from .options import CONFIGS, add_config_flags, configs_from_args, recipe_settings
from .options import build_parser as _build_parser
from .parse import cmd_parse
from .serve import COMMANDS as VIEW_COMMANDS
from .serve import add_parsers as _add_view_parsers

__all__ = ["add_config_flags", "build_parser", "configs_from_args", "main", "training_summary"]

log = logging.getLogger("depparse")


# ---------------------------------------------------------------------------------------
# entry point


def cmd_train(args):
    from ..learn.data import check_training_sentences
    from ..learn.perceptron import Trainer, train

    if args.train and args.train_flag and args.train != args.train_flag:
        raise UsageError("give the training file once (TRAIN or --train)")
    train_file = args.train or args.train_flag
    held_out = False  # dev = the last 10% of train (a treebank without a dev file)
    if args.treebank:
        if train_file or args.dev:
            raise UsageError("--treebank DIR finds the training and dev files: not with TRAIN "
                             "or --dev")
        train_file, args.dev = treebank_files(args.treebank)
        held_out = args.dev is None
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
    recipe = {}
    from ..recipes import DEFAULT, NONE, fit_to_machine, load

    name = DEFAULT if args.recipe is None else args.recipe
    if name.lower() != NONE:
        try:
            r = load(name)
        except ConfigError as e:
            raise UsageError(f"--recipe {e.rule}") from None
        recipe = r.settings
        if r.path == load(DEFAULT).path:  # it works on any machine, saying what it lacks
            from ..encoding.e5 import have_e5, install_hint

            given = {k: getattr(args, k) for k in getattr(args, "_given", ())}
            if args.no_labeler:
                given["labeler_epochs"] = 0
            recipe, said = fit_to_machine(recipe, given, have_jax=_have_jax(),
                                          have_encoder=have_e5(),
                                          has_dev=bool(args.dev or held_out),
                                          distributed=bool(args.scheduler),
                                          encoder_hint=install_hint())
            for line in said:
                log.warning("%s", line)
        log.info("recipe %s%s: %s", r.name, " (the default; --recipe none: the flags' own "
                 "defaults)" if args.recipe is None else "",
                 ", ".join(f"{k}={v}" for k, v in recipe.items()))
    recipe_settings(args, "train", recipe)
    if args.no_labeler:
        args.labeler_epochs = 0
    kw = configs_from_args(args, "train")
    cfg, dec, trc = (cls(**kw[cls]) for cls in CONFIGS)
    if cfg.learned_scale:  # before the data is read and anything trains
        from ..learn.network_training import NEEDS_JAX, have_jax

        if not have_jax():
            raise MissingExtraError(f"--learned-scale: {NEEDS_JAX}")
    out = Path(args.output)
    check_output(out, "model")
    ckpt = args.checkpoint or str(out) + ".ckpt.npz"
    check_output(ckpt, "checkpoint")
    tr = read_conllu_file(train_file)
    if not tr:
        raise UsageError(f"{train_file}: no sentences to train on (empty file)")
    dv = read_conllu_file(args.dev) if args.dev else None
    if held_out:
        cut = len(tr) - max(1, len(tr) // 10)
        if cut < 1:
            raise UsageError(f"{train_file}: too few sentences to hold 10% out as dev")
        tr, dv = tr[:cut], tr[cut:]
        log.info("%s has no dev file: the last %d of its %d sentences are the dev data",
                 args.treebank, len(dv), len(tr) + len(dv))
    check_training_sentences(tr, "training", dec.single_root)
    if dv:
        check_training_sentences(dv, "dev", dec.single_root)
    if args.resume and os.path.exists(ckpt):
        c = Trainer.load_checkpoint(ckpt).config
        if (c.model, c.bits) != (cfg.model, cfg.bits):
            raise UsageError(f"{ckpt}: the checkpoint was written for --model {c.model} "
                             f"--bits {c.bits}; resume with the same settings or delete it")
        if (c.learned_scale, c.storage) != (cfg.learned_scale, cfg.storage):
            raise UsageError(f"{ckpt}: the checkpoint was written for --learned-scale "
                             f"{c.learned_scale:g} --storage {c.storage} (another recipe?); "
                             "resume with the same settings or delete it")
        log.info("resuming from %s", ckpt)
    common = dict(checkpoint=ckpt, resume=args.resume, progress=not args.quiet)
    try:
        if args.scheduler:
            from ..distributed import train_distributed

            m = train_distributed(tr, dv, cfg, dec, trc, args.scheduler, shards=args.shards,
                                  **common)
        else:
            m = train(tr, dv, cfg, dec, trc, **common)
    except OSError as e:
        if e.filename is not None or e.errno is None:  # named already, or not the disk's
            raise
        # a disk error without a file name: the only file written while training is the
        # checkpoint (through a temporary file, hence no name)
        raise oserror(ckpt, "checkpoint", e) from None
    try:
        m.save(out)
    except OSError as e:
        raise oserror(out, "model", e) from None
    log.info("%s", training_summary(m.info))
    log.info("model written to %s (%.1f MB)", out, out.stat().st_size / 1e6)
    if args.keep_checkpoint:
        log.info("checkpoint kept at %s (%.1f MB; --resume continues from it)", ckpt,
                 os.path.getsize(ckpt) / 1e6)
    elif os.path.exists(ckpt):
        os.remove(ckpt)
        log.info("checkpoint %s removed (--keep-checkpoint keeps it)", ckpt)


def _have_jax() -> bool:
    from ..learn.network_training import have_jax

    return have_jax()


def treebank_files(folder) -> tuple[str, str | None]:
    """``(train, dev or None)``: the ``*-ud-train.conllu`` and ``*-ud-dev.conllu`` of a UD
    treebank's folder; a UsageError where there is no (or more than one) training file."""
    d = Path(folder)
    if not d.is_dir():
        raise UsageError(f"--treebank {folder}: not a folder")

    def one(split):
        got = sorted(d.glob(f"*-ud-{split}.conllu"))
        if len(got) > 1:
            raise UsageError(f"--treebank {folder}: more than one *-ud-{split}.conllu")
        return str(got[0]) if got else None

    train = one("train")
    if train is None:
        raise UsageError(f"--treebank {folder}: no *-ud-train.conllu in it")
    return train, one("dev")


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
        proved = f" (proved optimal {f['proved']:.1f}%)" if "proved" in f else ""
        lines.append(f"final model on dev (as 'depparse parse' decodes, at most "
                     f"{f['max_iter']:,} iterations): UAS {f['uas']:.2f}{las}, certified "
                     f"{f['cert']:.1f}%{proved}")
    lines.append(f"total {info.get('total_seconds', 0):.0f} s (arc pruner "
                 f"{info.get('pruner_seconds', 0):.0f} s, labeler "
                 f"{info.get('labeler_seconds', 0):.0f} s)")
    return "\n".join(lines)


COMMANDS = {"train": cmd_train, "parse": cmd_parse, **COMMANDS, "models": cmd_models,
            **VIEW_COMMANDS}


def build_parser():
    """The command line's argument parser, every command included (``serve``, ``show``:
    :mod:`.serve`)."""
    return _build_parser(extra=(_add_view_parsers,))


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


def check_extras(args):
    """Fail before any work when the command needs an extra that is not installed."""
    if getattr(args, "scheduler", None):
        require_extra("distributed", "dask", f"{args.command} --scheduler")
    if args.command == "report":
        require_extra("matplotlib", "report", "depparse report (its PNG plots)")


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
        warnings.simplefilter("default", InputWarning)
        warnings.simplefilter("default", ProofWarning)
        try:
            check_extras(args)
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


