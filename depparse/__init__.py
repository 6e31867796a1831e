"""depparse: non-projective dependency parsing with head automata and dual decomposition.

Koo, Rush, Collins, Jaakkola and Sontag (2010), "Dual Decomposition for Parsing with
Non-Projective Head Automata", EMNLP.
"""

import hashlib as _hashlib
import os as _os
from pathlib import Path as _Path


def _set_numba_cache_dir():
    """Key numba's on-disk cache by a hash of the package source.

    numba's ``cache=True`` notices edits to a kernel's own file only; a kernel that calls a
    kernel in another module keeps a stale compiled copy after that module changes.  A cache
    folder named by the hash of every source file of the package makes any edit start a
    fresh cache.  Respects a ``NUMBA_CACHE_DIR`` set by the user.
    """
    if _os.environ.get("NUMBA_CACHE_DIR"):
        return
    root = _Path(__file__).resolve().parent
    h = _hashlib.sha1()
    for p in sorted(root.rglob("*.py")):
        h.update(p.relative_to(root).as_posix().encode())
        h.update(p.read_bytes())
    base = root / "__pycache__"
    if not _os.access(root, _os.W_OK):
        base = _Path(_os.environ.get("XDG_CACHE_HOME", _Path.home() / ".cache")) / "depparse"
    import numba

    numba.config.CACHE_DIR = str(base / "numba" / h.hexdigest()[:16])


_set_numba_cache_dir()

from .api import load, train  # noqa: E402
from .config import DecodeConfig, ModelConfig, TrainConfig  # noqa: E402
from .conllu import Sentence, iter_conllu, read_conllu, read_sentence, write_conllu  # noqa: E402
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
    "iter_conllu",
    "load",
    "read_conllu",
    "read_sentence",
    "train",
    "write_conllu",
]
