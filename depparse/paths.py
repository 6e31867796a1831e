"""Where the project finds things: the UD corpora and the shipped models."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["corpora_dir", "models_dir", "treebank_file"]

PACKAGE_ROOT = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_ROOT.parent


def corpora_dir() -> Path:
    """``$DEPPARSE_CORPORA``, else ``../shared/corpora`` beside the repository (may not exist)."""
    env = os.environ.get("DEPPARSE_CORPORA")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "corpora"


def models_dir() -> Path:
    """The folder of the shipped models."""
    return REPO_ROOT / "models"


def treebank_file(code: str, split: str) -> Path:
    """Path of ``<code>-ud-<split>.conllu`` (e.g. ``en_ewt``, ``train``) in the corpora."""
    return corpora_dir() / code / f"{code}-ud-{split}.conllu"
