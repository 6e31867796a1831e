"""The exceptions of depparse: one base class for everything the user can fix.

Every error that comes from what the user gave — a malformed file, a model that cannot be
used, a bad setting, training data without trees — is a :class:`DepparseError`; its message
names the file and line (or the setting) and says what to do.  The command line turns any
``DepparseError`` into one line on stderr and exit status 2 (:mod:`depparse.cli`); anything
else is an internal error (status 1).

This module is the bottom of the package's dependency order (README, Layout): it imports
nothing from depparse, and every other module may import it.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import shlex
import sys

__all__ = [
    "PATCHES",
    "CheckpointError",
    "ConfigError",
    "ConlluError",
    "ConlluWarning",
    "DepparseError",
    "EncoderError",
    "EvaluationError",
    "InputWarning",
    "MissingExtraError",
    "ModelError",
    "NoSpanningTreeError",
    "ProofWarning",
    "ReportError",
    "SchedulerError",
    "extra_command",
    "pip_command",
    "TrainingDataError",
    "UsageError",
    "require_extra",
]


#: Where the patches of the features retired from depparse are (issue 49: a feature stays if
#: it is an idea of the papers this parser implements or it measured a gain);
#: ``benchmarks/experiments/patches/README.md`` says what each was, what it measured and the
#: commit its patch applies to.
PATCHES = "benchmarks/experiments/patches"


class DepparseError(Exception):
    """Base class of the errors the user can fix (bad input, settings, model files)."""


class UsageError(DepparseError):
    """A command-line or API call that cannot be carried out as given (missing file,
    unwritable output, conflicting options)."""


class ConfigError(DepparseError, ValueError):
    """A setting outside its allowed values.

    ``field`` is the setting's name (``bits``, ``max_iter`` ...) and ``rule`` what it must
    be; the command line prints the flag (``--bits``) in place of the name.
    """

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(field, rule)
        self.field = field
        self.rule = rule

    def __str__(self) -> str:
        return f"{self.field} {self.rule}"


class ConlluError(DepparseError):
    """Malformed CoNLL-U (or plain-text) input.

    Parameters
    ----------
    path : str
        File name, the file object's ``name``, or ``'<stream>'``.
    line : int
        1-based line number of the offending line.
    message : str
        What is wrong.

    Notes
    -----
    ``str(err)`` is ``f"{path}:{line}: {message}"``.
    """

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(path, line, message)
        self.path = str(path)
        self.line = int(line)
        self.message = str(message)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class ConlluWarning(UserWarning):
    """A recoverable deviation in CoNLL-U input (BOM, CRLF); the data is kept as is."""


class ProofWarning(UserWarning):
    """Trees a run could not prove optimal in its time (``--time-limit``): each is the best
    tree found, marked not proved; the message says what to do."""


class InputWarning(UserWarning):
    """Input the model was not trained for (e.g. untagged words for a model without a
    tagger): parsed, but worse than it could be; the message says what to do."""


class ModelError(DepparseError):
    """A model file cannot be used (missing, corrupt, wrong format or version)."""


def check_component(meta, fmt: str, version: int, what: str) -> None:
    """Raise :class:`ModelError` unless ``meta`` describes a model component of format
    ``fmt`` at ``version`` (the tagger, tokenizer and dense arc term check themselves so)."""
    if not isinstance(meta, dict) or meta.get("format") != fmt:
        raise ModelError(f"the model's {what} component is not a depparse {what}")
    if meta.get("version") != version:
        raise ModelError(f"the model's {what} component: format version "
                         f"{meta.get('version')!r} is not supported (this depparse reads "
                         f"version {version}); retrain the model, or use the depparse version "
                         "that wrote it")


class EncoderError(ModelError):
    """The transformer a model needs is not installed, or its files are not the expected."""


class CheckpointError(DepparseError):
    """A training checkpoint cannot be resumed from (corrupt, other version or settings)."""


class TrainingDataError(DepparseError, ValueError):
    """Training data that cannot be learned from (no gold tree); names file and line."""


class EvaluationError(DepparseError, ValueError):
    """A system file that cannot be scored against its gold file (different sentences or
    tokenization); names both files and the first sentence that differs."""


class NoSpanningTreeError(DepparseError, ValueError):
    """The finite scores admit no spanning tree (every candidate head of a word is ``-inf``)."""


class ReportError(DepparseError, ValueError):
    """A parse report (JSON) that is not a valid depparse report."""


class SchedulerError(DepparseError, OSError):
    """The Dask scheduler cannot be reached."""


class MissingExtraError(UsageError):
    """A feature that needs an optional dependency (an extra of the package) not installed."""


def require_extra(module: str, extra: str, what: str) -> None:
    """Raise :class:`MissingExtraError` unless ``module`` can be imported.

    Parameters
    ----------
    module : str
        The top-level module the feature imports (``"distributed"``, ``"matplotlib"``).
    extra : str
        The extra of depparse that installs it (``"dask"``, ``"report"``).
    what : str
        What needs it, for the message (``"parse --scheduler"``).
    """
    if importlib.util.find_spec(module) is None:
        raise MissingExtraError(f"{what} needs the optional dependency {module!r}, which is "
                                f"not installed: {extra_command(extra)}")


def pip_command(*requirements: str, no_deps: bool = False) -> str:
    """The command that installs ``requirements`` into the environment depparse runs in:
    ``<this python> -m pip install ...``, which works where the user is (a virtual
    environment that is not activated, a checkout or not), unlike a bare ``pip``."""
    args = [sys.executable or "python3", "-m", "pip", "install",
            *(["--no-deps"] if no_deps else []), *requirements]
    return " ".join(shlex.quote(a) for a in args)


def extra_command(extra: str) -> str:
    """The command that installs depparse's extra ``extra``: its own requirements, read from
    the installed package's metadata, so that it works without an index that has depparse
    (depparse installs from its wheels or a checkout); ``depparse[extra]`` where the metadata
    cannot be read."""
    try:
        reqs = importlib.metadata.requires("depparse") or []
    except importlib.metadata.PackageNotFoundError:
        reqs = []
    mine = [r.split(";")[0].strip() for r in reqs
            if re.search(rf"""extra\s*==\s*["']{re.escape(extra)}["']""", r)]
    return pip_command(*(mine or [f"depparse[{extra}]"]))
