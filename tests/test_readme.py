"""Every code block of the README runs as written (issue 25).

The blocks are taken from README.md itself and run in a fresh folder that holds the files
they name (``input.conllu`` and ``gold.conllu``: the demo's sample sentences; ``train.conllu``
and ``dev.conllu``: small synthetic treebanks; ``texts/``: a plain-text file): the Python
block as one script (in the fast suite), each line of a command-line block as a shell command
with ``depparse`` the installed command (marked slow: a dozen runs of the shipped model).  A
block that is not run is listed in :data:`NOT_RUN` with the reason, so that a new block must
be looked at.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
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
}


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


def test_every_block_is_run_or_listed():
    sh = blocks("sh")
    assert len(blocks("python")) == 1
    listed = [b for b in sh if b.split("\n")[0] in NOT_RUN]
    assert len(listed) == len(NOT_RUN), "a block of NOT_RUN is no longer in the README"
    assert len(sh) - len(listed) >= 1


def test_python_block_runs(folder):
    (code,) = blocks("python")
    p = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True,
                       env=_env(), timeout=600)
    assert p.returncode == 0, p.stderr.decode()[-3000:]
    assert "# sent_id" in p.stdout.decode()
    assert (folder / "output.conllu").exists() and (folder / "my_model.npz").exists()
    assert "epoch 6/6" in p.stderr.decode(), "depparse.train() logs a line per epoch"


@pytest.mark.slow  # a dozen runs of the shipped model, about a minute
def test_command_line_blocks_run(folder):
    for block in blocks("sh"):
        if block.split("\n")[0] in NOT_RUN:
            continue
        for line in block.splitlines():
            cmd = line.split("  #")[0].strip()
            if not cmd:
                continue
            p = subprocess.run(["bash", "-c", cmd], cwd=folder, capture_output=True,
                               env=_env(), timeout=600, stdin=subprocess.DEVNULL)
            assert p.returncode == 0, f"{cmd}\n{p.stderr.decode()[-3000:]}"
    assert (folder / "output.conllu").exists() and (folder / "run.json").exists()
    assert (folder / "parsed" / "a.conllu").exists()
    assert (folder / "report_html" / "index.html").exists()
    assert (folder / "model.npz").exists()
