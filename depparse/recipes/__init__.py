"""Training recipes: named sets of ``depparse train`` settings, kept as data files.

A recipe is a JSON file (``<name>.json`` here, or any file a user writes) holding

- ``name`` and ``description``;
- ``settings``: fields of :class:`~depparse.config.ModelConfig`,
  :class:`~depparse.config.DecodeConfig` and :class:`~depparse.config.TrainConfig` (the
  names of :func:`depparse.api.train`'s keywords), beyond their defaults;
- ``notes``: for a setting, why it has that value (the measurement, where it is written).

``depparse train --recipe NAME|FILE`` starts from a recipe's settings (flags given beside it
override them); ``make model-XX`` builds the shipped models from theirs
(``benchmarks/make_model.py``).  :data:`DEFAULT` is what ``depparse train`` uses when no
recipe is named.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..config import split_settings
from ..errors import ConfigError

__all__ = ["DEFAULT", "Recipe", "load", "names"]

HERE = Path(__file__).resolve().parent
#: The recipe of ``depparse train`` without ``--recipe``.
DEFAULT = "default"


@dataclass(frozen=True)
class Recipe:
    """A recipe file's contents (module docstring)."""

    name: str
    description: str
    settings: dict
    notes: dict = field(default_factory=dict)
    path: Path | None = None


def names() -> list[str]:
    """The recipes shipped with depparse."""
    return sorted(p.stem for p in HERE.glob("*.json"))


def load(name_or_path) -> Recipe:
    """The recipe of a shipped name (:func:`names`) or of a JSON file; raises
    :class:`~depparse.errors.ConfigError` naming the file for one that is not a recipe."""
    s = str(name_or_path)
    path = HERE / f"{s}.json" if s in names() else Path(s)
    if not path.is_file():
        raise ConfigError("recipe", f"{s!r} is neither a shipped recipe ({', '.join(names())}) "
                                    "nor a file")
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ConfigError("recipe", f"{path}: not a JSON recipe ({e})") from None
    if not isinstance(d, dict) or not isinstance(d.get("settings"), dict):
        raise ConfigError("recipe", f"{path}: a recipe is a JSON object with a 'settings' "
                                    "object")
    try:
        split_settings(d["settings"])
    except TypeError as e:
        raise ConfigError("recipe", f"{path}: {e}") from None
    return Recipe(str(d.get("name", path.stem)), str(d.get("description", "")),
                  dict(d["settings"]), dict(d.get("notes", {})), path)
