"""The Python API: ``depparse.load()`` and ``depparse.train()``.

Example
-------
>>> import depparse
>>> parser = depparse.load()                       # the shipped English model
>>> print(parser.parse_text(open("corpora/sample.conllu").read()))   # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

from .model import Model, ModelConfig, ModelError
from .parser import Parser
from .paths import models_dir

__all__ = ["DEFAULT_MODEL", "load", "train"]

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
    """Load a model and return a :class:`~depparse.parser.Parser`.

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
        raise ModelError(f"{path}: model file not found (train one with `depparse train` or "
                         "`make model`)")
    return Parser(Model.load(path), path=path)


def train(train_sentences, dev_sentences=None, model="gs", **kwargs) -> Model:
    """Train a model (see :func:`depparse.learn.perceptron.train` for the keywords).

    ``train_sentences``/``dev_sentences`` are lists of Sentence or CoNLL-U file paths.
    Config fields (``bits``, ``projective``, ``max_iter``, ``train_over`` ...) can be given as
    keywords too.
    """
    from .conllu_io import read_conllu
    from .learn.perceptron import train as _train

    def _load(x):
        if x is None or isinstance(x, list):
            return x
        return read_conllu(x)

    fields = set(ModelConfig.__dataclass_fields__)
    cfg = ModelConfig(model=model, **{k: kwargs.pop(k) for k in list(kwargs) if k in fields})
    return _train(_load(train_sentences), _load(dev_sentences), cfg, **kwargs)
