"""Where the project finds things: the UD corpora, and the models folder of a checkout.

An installed depparse finds its models as installed packages (:mod:`depparse.catalog`, entry
points of the group ``depparse.models``); a checkout of the repository also has them as files
in its ``models/`` folder, which :func:`models_dir` names.
"""

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


def models_dir() -> Path | None:
    """The ``models/`` folder of the checkout depparse runs from, or None for an installed
    depparse (a wheel's package sits in ``site-packages``, beside no ``models/`` of ours:
    the checkout is recognised by its ``.layers`` file beside the package)."""
    folder = REPO_ROOT / "models"
    return folder if (REPO_ROOT / ".layers").is_file() and folder.is_dir() else None


def treebank_file(code: str, split: str) -> Path:
    """Path of ``<code>-ud-<split>.conllu`` (e.g. ``en_ewt``, ``train``) in the corpora."""
    return corpora_dir() / code / f"{code}-ud-{split}.conllu"
