"""The Python API: ``depparse.load()`` and ``depparse.train()``.

Example
-------
>>> import depparse
>>> parser = depparse.load()                       # the English model
>>> parser = depparse.load("pt")          # an installed model, by language  # doctest: +SKIP
>>> print(parser.parse_conllu(open("corpora/sample.conllu").read()))   # doctest: +SKIP
>>> print(parser.parse_text("The cat sat on the mat. It purred."))    # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import warnings
from pathlib import Path

from . import catalog
from .config import DecodeConfig, ModelConfig, TrainConfig, split_settings
from .conllu import read_conllu
from .errors import ModelError
from .inference.parser import Parser
from .model import Model

__all__ = ["DEFAULT_MODEL", "NAMES", "load", "resolve_model", "shipped_models", "train"]

#: The model loaded when none is named: the English one.
DEFAULT_MODEL = catalog.DEFAULT_NAME
#: Names that stand for another model's name.
NAMES = {"default": DEFAULT_MODEL}


def _is_path(x) -> bool:
    s = os.fspath(x)
    return (isinstance(x, os.PathLike) or os.path.exists(s) or s.endswith(".npz")
            or "/" in s or os.sep in s)


def resolve_model(path_or_name=None) -> Path:
    """Path of a model given a file path, the name of a known model, or None (the default).

    A path is anything that exists, ends in ``.npz`` or holds a path separator; any other
    string is a name: a model's (``en_ewt_gs``), its treebank's (``en_ewt``), its language's
    (``en``) or its package's (``depparse-model-en-ewt``), looked up among the checkout's
    ``models/`` and the installed model packages (:mod:`depparse.catalog`).

    Raises
    ------
    ModelError
        For a name no known model answers to: the message lists the installed models and
        says how to get the others.
    """
    if path_or_name is None:
        path_or_name = DEFAULT_MODEL
    if _is_path(path_or_name):
        return Path(path_or_name)
    name = NAMES.get(str(path_or_name).lower(), str(path_or_name))
    return catalog.find(name).path


def load(path_or_name=None) -> Parser:
    """Load a model and return a :class:`~depparse.inference.parser.Parser`.

    Parameters
    ----------
    path_or_name : str or Path, optional
        A model file, or the name of an installed model (``"en"``, ``"pt"``, ``"en_ewt"``,
        ``"pt_bosque_gs"``, ``"depparse-model-tr-imst"``; ``depparse models`` lists them);
        default: the English model.

    Raises
    ------
    ModelError
        If no model of that name is installed, or the file is missing, corrupt, or of a
        newer format version.
    """
    path = resolve_model(path_or_name)
    if not path.exists():
        raise ModelError(catalog.not_found_message(path, catalog.models(), path=True))
    return Parser(Model.load(path), path=path)


def shipped_models() -> list[catalog.ModelEntry]:
    """The models known by name (:func:`depparse.catalog.models`): the checkout's
    ``models/`` files, then the installed model packages."""
    return catalog.models()


def train(train_sentences, dev_sentences=None, *, recipe=None, checkpoint=None, resume=False,
          progress=True, **settings) -> Model:
    """Train a model.

    Parameters
    ----------
    train_sentences, dev_sentences : list of Sentence, or CoNLL-U file paths
    recipe : str or path, optional
        A recipe's name (``"default"``: what ``depparse train`` builds without ``--recipe``,
        made to work where JAX, the encoder or dev data are missing, with a warning, as
        there; ``"tr_imst"`` ...) or JSON file (:mod:`depparse.recipes`): its settings, under
        the keywords given.  Without it (or ``"none"``) the keywords' own defaults
        (``depparse train --recipe none``).
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
        (``epochs``, ``seed``, ``update`` ...), with the same defaults as ``depparse train
        --recipe none``.

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

    if recipe is not None and str(recipe).lower() != "none":
        from .learn.network_training import have_jax
        from .recipes import DEFAULT, fit_to_machine, load

        r = load(recipe)
        base = r.settings
        if r.path == load(DEFAULT).path:  # as `depparse train`: it works on any machine
            from .encoding.e5 import have_e5, install_hint

            base, said = fit_to_machine(base, settings, have_jax=have_jax(),
                                        have_encoder=have_e5(),
                                        has_dev=dev_sentences is not None,
                                        encoder_hint=install_hint())
            for line in said:
                warnings.warn(line, UserWarning, stacklevel=2)
        settings = {**base, **settings}
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
