"""The commands ``evaluate`` and ``report``, and the helpers of every command (``parse`` is
in :mod:`.parse`, ``train`` in the package's ``__init__``)."""

from __future__ import annotations

import io
import json
import logging
import os
import sys
from pathlib import Path

from ..errors import ConlluError, UsageError

__all__ = ["COMMANDS", "check_output", "conllu_hint", "oserror", "read_conllu_file"]

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
        raise conllu_hint(e) from None


#: The starts of the messages about a whole file (not UTF-8 text at all:
#: :func:`depparse.conllu.encoding_problem`), which ``--skip-bad`` does not skip.
_WHOLE_FILE = ("the file is ", "the file looks like ", "a NUL byte (at byte ")


def conllu_hint(e, sentences_before=0, skip_bad=False):
    """A ConlluError with what to do: for a line without a tab at the start of the input
    (``sentences_before`` 0: no sentence was read before it), that plain text is ``--input
    text``; with ``skip_bad`` (``depparse parse``), that ``--skip-bad`` parses the other
    sentences."""
    if "--input text" in e.message or "--skip-bad" in e.message:
        return e
    if "tab-separated columns, found 1" in e.message and not sentences_before:
        e.message += (": the input must be CoNLL-U (10 tab-separated columns per word, "
                      "https://universaldependencies.org/format.html); for plain text "
                      "use --input text")
    if skip_bad and not e.message.startswith(_WHOLE_FILE):
        e.message += ("; --skip-bad skips malformed sentences (listing them) and parses the "
                      "others")
    return e


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


def oserror(path, what, e):
    return UsageError(f"{path}: cannot write the {what}: {e.strerror or e}")


# ---------------------------------------------------------------------------------------
# commands


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
    if not args.quiet:
        print(f"depparse: report written to {index}", file=sys.stderr)


COMMANDS = {"evaluate": cmd_evaluate, "report": cmd_report}

