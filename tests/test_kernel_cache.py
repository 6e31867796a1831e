"""depparse's kernel cache: its layers are the repository's `.layers`, only depparse's own
kernels go there, and a kernel's folder changes with the sources of its layer and those below,
not with the layers above it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numba
import pytest

from depparse import kernel_cache
from depparse.kernel_cache import LAYERS, layer_of, source_key

REPO = Path(__file__).resolve().parent.parent


def test_layers_are_the_repository_layer_file():
    path = REPO / ".layers"
    if not path.exists():
        pytest.skip("no .layers file (installed package)")
    lines = [tuple(line.split("#", 1)[0].split())
             for line in path.read_text(encoding="utf-8").splitlines()]
    assert tuple(t for t in lines if t) == LAYERS


def test_every_module_is_on_a_layer():
    names = {n for layer in LAYERS for n in layer}
    for p in kernel_cache.PACKAGE_ROOT.iterdir():
        if p.name.startswith("_") or p.name.startswith(".") or p.name == "py.typed":
            continue
        if p.is_dir() and not (p / "__init__.py").exists() and not list(p.glob("*.py")):
            continue
        assert p.name.removesuffix(".py") in names, p.name


def test_depparse_kernels_are_filed_by_layer_key():
    from depparse.decode import mst

    mst.chu_liu_edmonds(__import__("numpy").zeros((3, 3)))
    cache = mst._cle._cache._cache_path
    key = f"{layer_of(mst.__file__):02d}-{source_key(layer_of(mst.__file__))}"
    assert key in Path(cache).parts
    assert layer_of(mst.__file__) == [i for i, t in enumerate(LAYERS) if "decode" in t][0]


def test_other_functions_keep_numbas_places(tmp_path):
    """A cached function outside the package is not filed under depparse's folder, and
    numba.config.CACHE_DIR stays as the user set it."""
    assert numba.config.CACHE_DIR == os.environ.get("NUMBA_CACHE_DIR", "")
    mod = tmp_path / "other_mod.py"
    mod.write_text("import numba\n@numba.njit(cache=True)\ndef f(x):\n    return x + 1\n")
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import depparse, other_mod; "
            "other_mod.f(1); print(other_mod.f._cache._cache_path)")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                         text=True, check=True, env=env).stdout.strip()
    assert Path(out) == tmp_path / "__pycache__"


def test_keys_follow_the_layers(tmp_path, monkeypatch):
    """An edit changes the key of its own layer and of those above, never of those below."""
    pkg = tmp_path / "depparse"
    shutil.copytree(kernel_cache.PACKAGE_ROOT, pkg,
                    ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(kernel_cache, "PACKAGE_ROOT", pkg.resolve())
    monkeypatch.setattr(kernel_cache, "_KEYS", {})
    before = [source_key(i) for i in range(len(LAYERS))]
    edited = pkg / "cli" / "commands.py"
    edited.write_text(edited.read_text() + "\n# an edit\n")
    monkeypatch.setattr(kernel_cache, "_KEYS", {})
    after_cli = [source_key(i) for i in range(len(LAYERS))]
    cli = layer_of(edited)
    assert after_cli[:cli] == before[:cli] and after_cli[cli] != before[cli]
    edited = pkg / "decode" / "mst.py"
    edited.write_text(edited.read_text() + "\n# an edit\n")
    monkeypatch.setattr(kernel_cache, "_KEYS", {})
    after = [source_key(i) for i in range(len(LAYERS))]
    dec = layer_of(edited)
    assert after[:dec] == after_cli[:dec]
    assert all(a != b for a, b in zip(after[dec:], after_cli[dec:], strict=True))


def test_parse_does_not_load_the_trainer(tmp_path):
    """`depparse parse` (plain text and CoNLL-U) imports no module of depparse.learn."""
    text = tmp_path / "in.txt"
    text.write_text("The cat sat on the mat. It purred.\n", encoding="utf-8")
    code = (
        "import sys; import depparse.cli as c\n"
        "a = ['parse', sys.argv[1], '-o', sys.argv[2], '-q']\n"
        "b = ['parse', '--input', 'text', sys.argv[3], '-o', sys.argv[4], '-q']\n"
        "assert c.main(a) == 0 and c.main(b) == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith('depparse.learn')))\n")
    out = subprocess.run(
        [sys.executable, "-c", code, str(REPO / "corpora" / "sample.conllu"),
         str(tmp_path / "a.conllu"), str(text), str(tmp_path / "b.conllu")],
        capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
    assert (tmp_path / "a.conllu").stat().st_size > 0 and (tmp_path / "b.conllu").exists()
