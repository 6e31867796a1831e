"""Shared pytest fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from depparse.paths import corpora_dir as corpora_dir_of_package

REPO_ROOT = Path(__file__).resolve().parent.parent

#: The fixture modules (``syn``: tiny models and data; ``server``: a real ``depparse serve``),
#: available to every test module by name; their work is done only where a test asks.
pytest_plugins = ["fixtures_models", "fixtures_serve"]


def corpora_path() -> Path:
    """The UD corpora directory (it may not exist): :func:`depparse.paths.corpora_dir`."""
    return corpora_dir_of_package()


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
