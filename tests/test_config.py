"""Settings have one owner: the config classes.  The CLI's flags and the API's keywords are
derived from them (same defaults, same validation); the feature-template registry is unique."""

from __future__ import annotations

import ast
import inspect
from dataclasses import fields
from pathlib import Path

import pytest
from fixtures_models import run_cli

import depparse
from depparse import errors
from depparse.cli import build_parser
from depparse.config import (
    PATCHES,
    RETIRED,
    RETIRED_VALUES,
    DecodeConfig,
    ModelConfig,
    TrainConfig,
    split_settings,
)
from depparse.errors import ConfigError, DepparseError
from depparse.features import templates as T

CONFIGS = (ModelConfig, DecodeConfig, TrainConfig)


def _subparser(command):
    ap = build_parser()
    sub = next(a for a in ap._actions if a.dest == "command")
    return sub.choices[command]


def _cli_fields(command):
    return [(c, f) for c in CONFIGS for f in fields(c) if command in f.metadata.get("cli", ())]


@pytest.mark.parametrize("command", ["train", "parse"])
def test_cli_flags_are_derived_from_the_config_fields(command):
    sp = _subparser(command)
    by_flag = {o: a for a in sp._actions for o in a.option_strings}
    cli = _cli_fields(command)
    assert cli, command
    for _, f in cli:
        a = by_flag[f.metadata.get("flag") or "--" + f.name.replace("_", "-")]
        assert a.dest == f.name
        want = None if command == "parse" else f.default  # parse: the model's value
        assert a.default == want, (command, f.name)
        text = f.metadata.get("flag_help") or f.metadata["help"]
        assert text.split(";")[0] in (a.help or ""), (command, f.name)
        if f.metadata.get("choices"):
            assert tuple(a.choices) == tuple(f.metadata["choices"])


def test_train_help_shows_every_default():
    text = " ".join(_subparser("train").format_help().split())
    for _, f in _cli_fields("train"):
        if f.type not in ("bool", bool):
            shown = f.metadata.get("shown") or f.default
            assert f"(default: {shown})" in text, f.name


def test_api_and_cli_defaults_are_equal():
    """``depparse.train`` has no defaults of its own: every setting comes from the config
    classes, exactly what ``depparse train --recipe none`` starts from (the flags' values
    before a recipe's are put under them)."""
    sig = inspect.signature(depparse.train)
    own = {k for k, p in sig.parameters.items() if p.kind is p.KEYWORD_ONLY}
    assert own == {"recipe", "checkpoint", "resume", "progress"}
    assert sig.parameters["recipe"].default is None
    m, d, t = split_settings({})
    assert (ModelConfig(**m), DecodeConfig(**d), TrainConfig(**t)) == (
        ModelConfig(), DecodeConfig(), TrainConfig())
    args = build_parser().parse_args(["train", "--train", "x", "--out", "y"])
    for cls, f in _cli_fields("train"):
        assert getattr(args, f.name) == getattr(cls(), f.name), f.name


@pytest.mark.parametrize("kw,field", [({"bits": 40}, "bits"), ({"bits": 3}, "bits"),
                                      ({"model": "tree"}, "model"),
                                      ({"context_layer": 7}, "context_layer"),
                                      ({"max_iter": 0}, "max_iter"),
                                      ({"prune_threshold": 1.5}, "prune_threshold"),
                                      ({"epochs": 0}, "epochs"), ({"update": "sgd"}, "update"),
                                      ({"bits": 2.5}, "bits")])
def test_bad_settings_are_refused_by_the_config_and_the_api(kw, field):
    m, d, t = split_settings(kw)
    with pytest.raises(ConfigError) as err:
        ModelConfig(**m), DecodeConfig(**d), TrainConfig(**t)
    assert err.value.field == field
    with pytest.raises(ConfigError):
        depparse.train([], None, **kw)
    with pytest.raises(TypeError, match="unknown setting"):
        depparse.train([], None, bitz=3)


@pytest.mark.parametrize("flags,message", [(["--bits", "40"], "--bits must be between 4 and 30"),
                                           (["--max-iter", "0"], "--max-iter must be >= 1"),
                                           (["--loss-aug", "-1"], "--loss-aug must be >= 0.0")])
def test_bad_flags_name_the_flag(syn, tmp_path, flags, message):
    rc, _, err = run_cli(["train", "--train", syn.train, "--out", tmp_path / "m.npz", *flags])
    assert rc == 2 and message in err, err
    assert not (tmp_path / "m.npz").exists()


def _asking(off):
    """A value of a retired setting other than the one that left its feature off."""
    if isinstance(off, bool):
        return not off
    return off + 1 if isinstance(off, (int, float)) else off + "x"


@pytest.mark.parametrize("name", sorted(RETIRED))
def test_a_retired_setting_reads_as_absent_at_its_old_default_and_is_refused_otherwise(name):
    """Model files, checkpoints and recipes written before a feature was retired hold its
    setting at the value that left it off: they read as without it.  Another value asks for
    the feature: refused, naming the patch that brings it back."""
    off, _, patch = RETIRED[name]
    assert name not in {f.name for c in CONFIGS for f in fields(c)}
    assert TrainConfig.from_dict({name: off, "epochs": 3}) == TrainConfig(epochs=3)
    assert split_settings({name: off, "bits": 12}) == ({"bits": 12}, {}, {})
    for call in (lambda: TrainConfig.from_dict({name: _asking(off)}),
                 lambda: split_settings({name: _asking(off)}),
                 lambda: depparse.train([], None, **{name: _asking(off)})):
        with pytest.raises(ConfigError, match=f"{PATCHES}/{patch}") as err:
            call()
        assert err.value.field == name and "retired" in str(err.value)


@pytest.mark.parametrize("name,value", sorted(RETIRED_VALUES))
def test_a_retired_value_of_a_setting_that_stays_is_refused_naming_the_patch(name, value):
    _, patch = RETIRED_VALUES[name, value]
    for call in (lambda: TrainConfig.from_dict({name: value}),
                 lambda: split_settings({name: value})):
        with pytest.raises(ConfigError, match=f"{PATCHES}/{patch}") as err:
            call()
        assert err.value.field == name and "retired" in str(err.value)
    default = next(f.default for c in CONFIGS for f in fields(c) if f.name == name)
    assert split_settings({name: default}) != ({}, {}, {})  # the setting itself stays


def test_every_retired_feature_has_its_patch_and_its_readme_entry():
    """The patch an error names exists, and the patches' README says what it measured and the
    commit it applies to."""
    folder = Path(__file__).resolve().parents[1] / PATCHES
    readme = (folder / "README.md").read_text(encoding="utf-8")
    patches = {p for _, _, p in RETIRED.values()} | {p for _, p in RETIRED_VALUES.values()}
    assert patches == {p.name for p in folder.glob("*.patch")}
    for name in sorted(patches):
        assert (folder / name).read_text(encoding="utf-8").startswith("diff --git "), name
        entry = readme.split(f"## `{name}`", 1)[1].split("\n## ", 1)[0]
        assert "Applies to commit " in entry and "**Measured**" in entry, name


def test_every_user_error_is_a_depparse_error():
    """The CLI catches one class; every error a user can cause derives from it."""
    user = [c for _, c in inspect.getmembers(errors, inspect.isclass)
            if issubclass(c, Exception) and c.__module__ == errors.__name__]
    assert len(user) >= 10
    for c in user:
        assert issubclass(c, DepparseError) or issubclass(c, Warning), c
    src = (Path(depparse.__file__).parent / "cli" / "__init__.py").read_text()
    handlers = [h for h in ast.walk(ast.parse(src)) if isinstance(h, ast.ExceptHandler)
                and isinstance(h.type, ast.Name) and h.type.id == "DepparseError"]
    assert handlers, "the CLI catches DepparseError"


# ---------------------------------------------------------------------------------------
# the feature-template registry


def test_template_ids_are_unique_and_the_check_refuses_a_duplicate(monkeypatch):
    reg = T.registry()
    assert len(reg) == len(set(reg.values())) > 100
    assert all(v > 0 for v in reg.values())
    # the labeler's label bigrams no longer share ids with its emissions (was 140 / 141)
    assert T.LTRANS_PREV_LABEL_SIDE not in {v for k, v in reg.items() if k.startswith("LABEL_")}
    monkeypatch.setattr(T, "LTRANS_PREV_LABEL_SIDE", T.LABEL_MC_DIR)
    with pytest.raises(ImportError, match="same id"):
        T._check_unique()


# the steps of a part family's features (depparse.features.parts: the prefix states, then each
# part), counted as the one kernel they make up
_STEPS = {"_arc_head": "arc_features", "_arc_emit": "arc_features",
          "_sib_prev": "sib_features", "_sib_emit": "sib_features",
          "_grand_head": "grand_features", "_grand_emit": "grand_features",
          "_gsib_head": "gsib_features", "_gsib_sibling": "gsib_features",
          "_gsib_emit": "gsib_features"}


def test_feature_kernels_use_only_registered_template_names():
    """No kernel passes a bare number as template id (to ``template`` / ``start``, or to the
    parser's ``emit``/``emit_pair``/``emit_hashed``/``emit_pair_hashed``, whose fourth argument
    it is); every name of the table is used by exactly one kernel (so no two kernels share a
    template; the steps of one family's features count as one kernel), and every name a kernel
    uses is in the table.  (``hashing.py`` defines the helpers, which take the id as a
    parameter.)"""
    root = Path(depparse.__file__).parent / "features"
    used = {}
    for path in sorted(root.glob("*.py")):
        if path.name == "hashing.py":
            continue
        for fn in ast.walk(ast.parse(path.read_text())):
            if not isinstance(fn, ast.FunctionDef):
                continue
            for node in ast.walk(fn):
                if not isinstance(node, ast.Call):
                    continue
                name = getattr(node.func, "id", "")
                if name in ("template", "start", "emit", "emit_pair", "emit_hashed",
                            "emit_pair_hashed"):
                    arg = node.args[0 if name in ("template", "start") else 3]
                    assert isinstance(arg, ast.Attribute) and arg.value.id == "T", (
                        f"{path.name}:{node.lineno}: template id must be a registry name")
                    assert arg.attr.split("_")[0] in T.FAMILIES, arg.attr
                    kernel = _STEPS.get(fn.name, fn.name)
                    used.setdefault(arg.attr, set()).add(f"{path.stem}.{kernel}")
    assert set(used) == set(T.registry()), set(T.registry()) ^ set(used)
    shared = {k: v for k, v in used.items() if len(v) > 1}
    assert not shared, shared
