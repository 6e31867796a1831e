"""Shared pytest fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def corpora_path() -> Path:
    """Return the UD corpora directory: ``$DEPPARSE_CORPORA``, else ``<repo>/../shared/corpora``.

    Returns
    -------
    pathlib.Path
        The directory (it may not exist).
    """
    env = os.environ.get("DEPPARSE_CORPORA")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "corpora"


@pytest.fixture(scope="session")
def corpora_dir() -> Path:
    """The UD corpora directory; skips the test when it is absent."""
    path = corpora_path()
    if not path.is_dir():
        pytest.skip(
            f"UD corpora not found at {path}: set DEPPARSE_CORPORA to the directory "
            "holding the treebanks (e.g. ../shared/corpora)"
        )
    return path
