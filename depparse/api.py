"""The Python API: ``depparse.load()`` and ``depparse.train()``.

Example
-------
>>> import depparse
>>> parser = depparse.load()                       # the shipped English model
>>> print(parser.parse_conllu(open("corpora/sample.conllu").read()))   # doctest: +SKIP
>>> print(parser.parse_text("The cat sat on the mat. It purred."))    # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import logging
import sys
from pathlib import Path

from .config import DecodeConfig, ModelConfig, TrainConfig, split_settings
from .conllu import read_conllu
from .errors import ModelError
from .inference.parser import Parser
from .model import Model
from .paths import models_dir

__all__ = ["DEFAULT_MODEL", "load", "shipped_models", "train"]

DEFAULT_MODEL = "en_ewt_gs.npz"
NAMES = {"en": DEFAULT_MODEL, "en_ewt": DEFAULT_MODEL, "default": DEFAULT_MODEL}


def resolve_model(path_or_name=None) -> Path:
    """Path of a model given a file path, a shipped model's name, or None (the default)."""
    if path_or_name is None:
        return models_dir() / DEFAULT_MODEL
    p = Path(path_or_name)
    if p.exists() or p.suffix == ".npz" or "/" in str(path_or_name):
        return p
    name = NAMES.get(str(path_or_name), f"{path_or_name}.npz")
    return models_dir() / name


def load(path_or_name=None) -> Parser:
    """Load a model and return a :class:`~depparse.inference.parser.Parser`.

    Parameters
    ----------
    path_or_name : str or Path, optional
        A model file, or the name of a shipped model (``"en"``, ``"en_ewt"``); default: the
        shipped English grandparent+sibling model.

    Raises
    ------
    ModelError
        If the file is missing, corrupt, or of a newer format version.
    """
    path = resolve_model(path_or_name)
    if not path.exists():
        names = ", ".join(f"{n} ({a})" if a else n for n, a in shipped_models())
        raise ModelError(f"{path}: model file not found; shipped models: {names or 'none'}; "
                         "or give the path of a model trained with `depparse train`")
    return Parser(Model.load(path), path=path)


def shipped_models():
    """``(name, aliases)`` of the models in the models folder."""
    out = []
    for p in sorted(models_dir().glob("*.npz")):
        aliases = ", ".join(k for k, v in NAMES.items() if v == p.name)
        out.append((p.stem, aliases))
    return out


def train(train_sentences, dev_sentences=None, *, checkpoint=None, resume=False, progress=True,
          **settings) -> Model:
    """Train a model.

    Parameters
    ----------
    train_sentences, dev_sentences : list of Sentence, or CoNLL-U file paths
    checkpoint : path, optional
        Written atomically after every epoch; ``resume=True`` continues from it.
    progress : bool
        Progress on stderr: a bar on a terminal, and the training log (a line per epoch,
        and one a minute within long epochs when stderr is not a terminal), unless logging
        is configured already (then the ``depparse`` logger's records go where it says).
    **settings
        Any field of :class:`~depparse.config.ModelConfig` (``model``, ``bits``,
        ``context_layer`` ...), :class:`~depparse.config.DecodeConfig` (``max_iter``,
        ``single_root``, ``projective`` ...) or :class:`~depparse.config.TrainConfig`
        (``epochs``, ``seed``, ``update`` ...), with the same defaults as ``depparse train``.

    Raises
    ------
    ConfigError
        For a setting outside its allowed values.
    TrainingDataError
        For training data without gold trees.
    TypeError
        For an unknown setting.
    """
    def _load(x):
        if x is None or isinstance(x, list):
            return x
        return read_conllu(x)

    from .learn.perceptron import train as _train  # the trainer: only when training

    m, d, t = split_settings(settings)
    with _training_log(progress):
        return _train(_load(train_sentences), _load(dev_sentences), ModelConfig(**m),
                      DecodeConfig(**d), TrainConfig(**t), checkpoint=checkpoint,
                      resume=resume, progress=progress)


@contextlib.contextmanager
def _training_log(progress):
    """The training log on stderr (a line per epoch, as ``depparse train`` prints it) while
    :func:`train` runs, unless logging is set up already (a handler on the ``depparse``
    logger or the root logger: the caller's own logging decides) or ``progress`` is off."""
    log = logging.getLogger("depparse")
    if not progress or log.handlers or logging.getLogger().handlers:
        yield
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("depparse: %(message)s"))
    level, propagate = log.level, log.propagate
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
        log.propagate = propagate
