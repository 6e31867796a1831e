"""depparse: non-projective dependency parsing with head automata and dual decomposition.

Koo, Rush, Collins, Jaakkola and Sontag (2010), "Dual Decomposition for Parsing with
Non-Projective Head Automata", EMNLP.
"""

from . import kernel_cache as _kernel_cache

_kernel_cache.install()  # depparse's compiled kernels: depparse/kernel_cache.py

from .api import load, train  # noqa: E402
from .config import DecodeConfig, ModelConfig, TrainConfig  # noqa: E402
from .conllu import (  # noqa: E402
    Sentence,
    document_text,
    iter_conllu,
    read_conllu,
    read_sentence,
    write_conllu,
)
from .errors import ConfigError, ConlluError, DepparseError, ModelError  # noqa: E402
from .inference.parser import Parser  # noqa: E402
from .model import Model  # noqa: E402

__version__ = "0.2.0"

__all__ = [
    "ConfigError",
    "ConlluError",
    "DecodeConfig",
    "DepparseError",
    "Model",
    "ModelConfig",
    "ModelError",
    "Parser",
    "Sentence",
    "TrainConfig",
    "document_text",
    "iter_conllu",
    "load",
    "read_conllu",
    "read_sentence",
    "train",
    "write_conllu",
]
