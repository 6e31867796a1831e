"""Installable depparse (issue 29): model packages found by name through their entry points,
the checkout's models/, `depparse models`, and the optional extras named when missing.

The installed-wheel check itself (build, fresh environment, parse from another folder) is
``tests/test_packaging_wheel.py`` (slow; CI runs it after ``make test``)."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures_models import run_cli

import depparse
from depparse import catalog, paths
from depparse.api import resolve_model
from depparse.errors import ModelError, extra_command

REPO = Path(__file__).resolve().parent.parent

CARD = """# xx_test_gs — a test model

- **Training data**: none. Licence of the data: **CC BY-SA 4.0**

| setting | Tokens | Words | Sentences | UPOS | UAS | LAS | words/s |
|---|---|---|---|---|---|---|---|
| gold tokenization + gold tags | – | – | – | – | 91.50 | 90.25 | 2,000 |
| gold tokenization | – | – | – | 97.10 | 88.00 | 85.75 | 1,900 |
| raw text | 99.50 | 99.00 | 90.00 | 96.00 | 86.00 | 83.50 | 1,800 |

Other text.
"""


def install_fake_package(root: Path, model: Path, name="xx_test_gs",
                         module="depparse_model_xx_test", package="depparse-model-xx-test",
                         version="0.1.0", card=CARD):
    """A model package as pip would install it (module + dist-info with its entry point)
    under ``root``, which the caller puts on ``sys.path``."""
    pkg = root / module
    pkg.mkdir(parents=True)
    shutil.copy2(model, pkg / f"{name}.npz")
    (pkg / f"{name}.md").write_text(card, encoding="utf-8")
    lang, corpus = name.split("_")[:2]
    (pkg / "__init__.py").write_text(
        f"META = {{'name': {name!r}, 'lang': {lang!r}, 'treebank': '{lang}_{corpus}', "
        f"'version': {version!r}, 'model': '{name}.npz', 'card': '{name}.md'}}\n",
        encoding="utf-8")
    info = root / f"{module}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: "
                                   f"{version}\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[depparse.models]\n{name} = {module}\n",
                                           encoding="utf-8")
    return pkg / f"{name}.npz"


@pytest.fixture(autouse=True)
def _forget_fake_modules():
    """Each test installs its fake packages afresh: no module of an earlier one stays."""
    def forget():
        for m in [m for m in sys.modules if m.startswith("depparse_model_xx")]:
            del sys.modules[m]
    forget()
    yield
    forget()


@pytest.fixture
def fake_package(tmp_path, monkeypatch, syn):
    path = install_fake_package(tmp_path / "site", syn.model)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    return path


def test_installed_package_found_by_every_name(fake_package):
    for name in ("xx_test_gs", "xx_test", "xx", "XX", "depparse-model-xx-test",
                 "depparse_model_xx_test"):
        assert resolve_model(name) == fake_package, name
    e = catalog.find("xx")
    assert (e.source, e.package, e.version, e.lang, e.treebank) == (
        "package", "depparse-model-xx-test", "0.1.0", "xx", "xx_test")
    assert Path(depparse.load("xx").path) == fake_package


def test_paths_and_checkout_models_still_work(fake_package, syn):
    assert resolve_model(str(syn.model)) == syn.model
    assert resolve_model(syn.model) == syn.model
    assert resolve_model("no/such/model.npz") == Path("no/such/model.npz")
    shipped = REPO / "models" / "en_ewt_gs.npz"
    assert paths.models_dir() == REPO / "models"
    for name in (None, "en", "en_ewt", "en_ewt_gs", "default"):
        assert resolve_model(name) == shipped, name
    assert catalog.find("en").source == "checkout"


def test_unknown_name_lists_what_is_installed(fake_package):
    with pytest.raises(ModelError) as e:
        resolve_model("qq")
    msg = str(e.value)
    assert msg.startswith("qq: no model of that name")
    assert "xx_test_gs (xx, xx_test; package depparse-model-xx-test 0.1.0)" in msg
    assert "en_ewt_gs (en, en_ewt; checkout" in msg
    assert "make dist model-packages" in msg and "--find-links dist depparse-model-" in msg
    rc, out, err = run_cli(["parse", "-m", "qq", str(REPO / "corpora" / "sample.conllu")])
    assert rc == 2 and out == b""
    assert err.startswith("depparse: error: qq: no model of that name") and err.count("\n") == 1


def test_a_language_with_two_models_is_ambiguous(tmp_path, monkeypatch, syn):
    site = tmp_path / "site"
    install_fake_package(site, syn.model)
    install_fake_package(site, syn.model, name="xx_other_gs", module="depparse_model_xx_other",
                         package="depparse-model-xx-other")
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(ModelError, match="several models answer"):
        resolve_model("xx")
    assert resolve_model("xx_other").name == "xx_other_gs.npz"


def test_broken_package_warns_and_the_others_stay(tmp_path, monkeypatch, syn):
    site = tmp_path / "site"
    path = install_fake_package(site, syn.model)
    path.unlink()
    monkeypatch.syspath_prepend(str(site))
    with pytest.warns(depparse.errors.InputWarning, match="depparse-model-xx-test.*cannot be used"):
        names = [e.name for e in catalog.models()]
    assert "xx_test_gs" not in names and "en_ewt_gs" in names


def test_installed_depparse_has_no_models_folder(monkeypatch, tmp_path):
    """A wheel's package sits in site-packages: no .layers beside it, so no models/."""
    (tmp_path / "models").mkdir()
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path)
    assert paths.models_dir() is None
    (tmp_path / ".layers").write_text("errors\n")
    assert paths.models_dir() == tmp_path / "models"


def test_card_scores_read_the_settings_table(tmp_path):
    card = tmp_path / "c.md"
    card.write_text(CARD, encoding="utf-8")
    sc = catalog.card_scores(card)
    assert sc["gold tokenization + gold tags"] == {"UAS": 91.5, "LAS": 90.25}
    assert sc["gold tokenization"] == {"UPOS": 97.1, "UAS": 88.0, "LAS": 85.75}
    assert sc["raw text"]["Words"] == 99.0 and sc["raw text"]["LAS"] == 83.5
    assert catalog.card_scores(None) == {} and catalog.card_scores(tmp_path / "none.md") == {}
    # a card with other systems' published figures beside ours: depparse's rows only
    other = CARD.replace("| setting |", "| system | setting |").replace("|---|", "|---|---|", 1)
    other = "\n".join(("| depparse " + x) if x.startswith("| gold") or x.startswith("| raw")
                      else x for x in other.splitlines())
    other += "\n| UDPipe | raw text | 1 | 2 | 3 | 4 | 5 | 6 | – |\n"
    card.write_text(other.replace("\nOther text.\n", ""), encoding="utf-8")
    assert catalog.card_scores(card) == sc


def test_models_command_lists_packages_and_card_scores(fake_package):
    rc, out, err = run_cli(["models"])
    assert rc == 0, err
    lines = out.decode().splitlines()
    row = next(x.split() for x in lines if x.startswith("xx_test_gs"))
    size = f"{fake_package.stat().st_size / 1e6:.1f}"
    # the licence is the card's ("Licence of the data: **CC BY-SA 4.0**")
    assert row == ["xx_test_gs", "xx", "Xx", "xx_test", "0.1.0", "CC", "BY-SA", "4.0", size,
                   "MB", "97.10", "88.00", "85.75", "83.50", "depparse-model-xx-test"]
    assert any(x.startswith("en_ewt_gs ") and x.endswith("checkout models/") for x in lines)
    # a checkout's model shows its version (the one its package gets), not "checkout"
    en = next(x.split() for x in lines if x.startswith("en_ewt_gs "))
    assert en[2] == "English" and en[4] == depparse.__version__ and "checkout" not in en[:-2]
    rc, out, _ = run_cli(["models", "--json"])
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["xx_test_gs"]["test_scores"]["raw text"]["LAS"] == 83.5
    assert rows["xx_test_gs"]["path"] == str(fake_package)
    assert rows["xx_test_gs"]["licence"] == "CC BY-SA 4.0"
    assert rows["en_ewt_gs"]["test_scores"] == catalog.card_scores(REPO / "models" /
                                                                   "en_ewt_gs.md")


@pytest.mark.parametrize("name", ["en_ewt_gs", "pt_bosque_gs", "tr_imst_gs"])
def test_the_cards_name_the_training_time_of_their_networks(name):
    """Each shipped card says how long its learned network trained, and the jackknifed ones of
    ``--learned-folds`` where the recipe has them (English), as the model file's own history
    records it."""
    from depparse.model import Model

    card = REPO / "models" / f"{name}.md"
    hist = Model.load(card.with_suffix(".npz")).info["history"]
    net = next(h for h in hist if "learned_network" in h)
    folds = next((h for h in hist if "learned_folds" in h), None)
    text = " ".join(card.read_text().split())
    if folds is None:
        assert f"learned network {net['seconds']:.0f} s;" in text
    else:
        assert (f"learned network {net['seconds']:.0f} s, its {folds['learned_folds']} "
                f"jackknifed networks {folds['seconds']:.0f} s;") in text


def test_runtime_dependencies_are_only_what_parsing_needs():
    """The installed metadata (pyproject.toml as pip read it): no optional dependency is a
    runtime one, each extra brings its own."""
    import importlib.metadata as md

    reqs = md.requires("depparse")

    def name(req):
        return re.match(r"[A-Za-z0-9_.-]+(\[[^\]]*\])?", req).group(0)

    core = {name(r).split("[")[0] for r in reqs if "extra ==" not in r}
    assert core and not core & {"dask", "networkx", "matplotlib", "spacy", "pytest"}

    def extra(e):
        return {name(r) for r in reqs if f'extra == "{e}"' in r}

    assert extra("dask") == {"dask[distributed]"} and extra("report") == {"matplotlib"}
    assert "networkx" in extra("test") and "spacy" in extra("spacy")
    eps = {e.name: e.value for e in md.entry_points(group="spacy_factories")}
    assert eps["depparse"] == "depparse.spacy:make_depparse"


def test_parse_path_imports_no_extra(syn):
    """`depparse parse` (CoNLL-U and text) loads none of the optional dependencies."""
    code = f"""
import sys
from depparse.cli import main
assert main(["parse", {str(syn.test)!r}, "-o", "/dev/null", "-q"]) == 0
assert main(["parse", "--input", "text", {str(syn.dev)!r}, "-o", "/dev/null", "-q"]) in (0, 2)
bad = sorted(m for m in sys.modules if m.split(".")[0] in
             ("dask", "distributed", "networkx", "matplotlib", "spacy"))
print(bad)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


def _without(monkeypatch, module):
    real = importlib.util.find_spec

    def find_spec(name, *a, **k):
        return None if name == module else real(name, *a, **k)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def test_an_extra_is_named_by_a_command_that_works_where_the_user_is():
    """The hint installs the extra's own requirements (pyproject.toml's) with this Python's
    pip: no index has depparse itself, and a bare ``pip`` may be another environment's."""
    import shlex

    tomllib = pytest.importorskip("tomllib")  # Python 3.11
    Requirement = pytest.importorskip("packaging.requirements").Requirement

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    for extra in ("dask", "report", "spacy", "serve", "learned"):
        args = shlex.split(extra_command(extra))
        assert args[:4] == [sys.executable, "-m", "pip", "install"], args
        named = {Requirement(a) for a in args[4:]}
        assert named and named == {Requirement(r) for r in extras[extra]}, (extra, args)


def test_scheduler_without_dask_names_the_extra(monkeypatch, syn, tmp_path):
    _without(monkeypatch, "distributed")
    out = tmp_path / "out.conllu"
    rc, stdout, err = run_cli(["parse", syn.test, "-m", syn.model, "-o", out, "--scheduler",
                               "tcp://127.0.0.1:1"])
    assert rc == 2 and not out.exists() and stdout == b""
    assert err == ("depparse: error: parse --scheduler needs the optional dependency "
                   f"'distributed', which is not installed: {extra_command('dask')}\n")
    rc, _, err = run_cli(["train", "--recipe", "none",
                          syn.train, "-o", tmp_path / "m.npz", "--scheduler", "x:1"])
    assert rc == 2 and extra_command("dask") in err and not (tmp_path / "m.npz").exists()


def test_report_without_matplotlib_names_the_extra(monkeypatch, tmp_path):
    _without(monkeypatch, "matplotlib")
    rep = tmp_path / "run.json"
    rep.write_text("{}")
    rc, _, err = run_cli(["report", rep, "-o", tmp_path / "html"])
    assert rc == 2 and not (tmp_path / "html").exists()
    assert err == ("depparse: error: depparse report (its PNG plots) needs the optional "
                   f"dependency 'matplotlib', which is not installed: "
                   f"{extra_command('report')}\n")
    from depparse.errors import MissingExtraError
    from depparse.report import write_report

    with pytest.raises(MissingExtraError, match=re.escape(extra_command("report"))):
        write_report({}, tmp_path / "html2")
    assert not (tmp_path / "html2").exists()


def test_every_shipped_cards_licence_has_its_spdx_identifier():
    """packaging/build_model_package.py writes the package's licence as SPDX: each shipped
    card's "Licence of the data" must be one it knows (gl_treegal's LGPL-LR was not)."""
    import importlib.util

    from depparse.cli.models import card_licence

    spec = importlib.util.spec_from_file_location(
        "build_model_package", REPO / "packaging" / "build_model_package.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cards = sorted((REPO / "models").glob("*.md"))
    assert cards
    for card in cards:
        assert card_licence(card) in mod.SPDX, card.name
