"""Training recipes as data files (depparse/recipes/) and ``depparse train --recipe /
--treebank``."""

from __future__ import annotations

import json

import pytest
import synthetic
from fixtures_models import run_cli

from depparse import recipes
from depparse.config import DecodeConfig, ModelConfig, TrainConfig, split_settings
from depparse.errors import ConfigError
from depparse.model import Model


@pytest.mark.parametrize("name", recipes.names())
def test_every_shipped_recipe_is_valid_and_explained(name):
    r = recipes.load(name)
    assert r.name == name and r.description and r.settings
    m, d, t = split_settings(r.settings)
    ModelConfig(**m), DecodeConfig(**d), TrainConfig(**t)  # in range
    split_settings(dict.fromkeys(r.notes))  # a note explains a setting (kept or changed)


def test_the_shipped_models_are_built_from_their_recipes():
    """benchmarks/make_model.py reads the recipe files (no second copy of the settings)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import make_model

    for spec in make_model.SHIPPED.values():
        assert spec["recipe"] == recipes.load(spec["treebank"]).settings


def test_bad_recipes_are_named(tmp_path):
    with pytest.raises(ConfigError, match="neither a shipped recipe"):
        recipes.load("no_such_recipe")
    bad = tmp_path / "r.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match=str(bad)):
        recipes.load(bad)
    bad.write_text(json.dumps({"settings": {"epochs": 2, "no_such_setting": 1}}))
    with pytest.raises(ConfigError, match="no_such_setting"):
        recipes.load(bad)


def test_train_reads_a_recipe_file_and_flags_override_it(tmp_path):
    train = tmp_path / "train.conllu"
    train.write_text(synthetic.conllu_text(60, 3))
    r = tmp_path / "mine.json"
    r.write_text(json.dumps({"name": "mine", "settings": {"model": "sib", "epochs": 1,
                                                          "bits": 14, "labeler_epochs": 1}}))
    out = tmp_path / "m.npz"
    rc, _, err = run_cli(["train", train, "-o", out, "--recipe", r, "--bits", "15"])
    assert rc == 0, err
    assert "recipe mine: model=sib, epochs=1, bits=14, labeler_epochs=1" in err
    m = Model.load(out)
    assert (m.config.model, m.config.bits) == ("sib", 15)  # the flag beats the recipe
    rc, _, err = run_cli(["train", train, "-o", out, "--recipe", "nonesuch"])
    assert rc == 2 and "--recipe" in err and "neither a shipped recipe" in err


def test_train_treebank_folder_holds_out_the_last_tenth_without_a_dev_file(tmp_path):
    tb = tmp_path / "UD_Synthetic"
    tb.mkdir()
    (tb / "xx_syn-ud-train.conllu").write_text(synthetic.conllu_text(50, 4))
    (tb / "xx_syn-ud-test.conllu").write_text(synthetic.conllu_text(10, 5))
    out = tmp_path / "m.npz"
    args = ["train", "--treebank", tb, "-o", out, "--model", "sib", "--epochs", "1",
            "--bits", "14", "--labeler-epochs", "1"]
    rc, _, err = run_cli(args)
    assert rc == 0, err
    assert "has no dev file: the last 5 of its 50 sentences are the dev data" in err
    assert Model.load(out).info["final_dev"]["uas"] >= 0
    (tb / "xx_syn-ud-dev.conllu").write_text(synthetic.conllu_text(8, 6))
    rc, _, err = run_cli(args)
    assert rc == 0 and "has no dev file" not in err
    rc, _, err = run_cli(["train", "--treebank", tmp_path / "nowhere", "-o", out])
    assert rc == 2 and "not a folder" in err
    rc, _, err = run_cli(["train", tb / "xx_syn-ud-train.conllu", "--treebank", tb, "-o", out])
    assert rc == 2 and "not with TRAIN" in err
