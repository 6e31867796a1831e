"""Crash safety: SIGKILL at a random moment never corrupts anything.

* ``depparse train`` killed after its first checkpoint exists, then re-run with
  ``--resume``, ends with bit-identical model arrays to an uninterrupted run.
* ``depparse parse`` killed at any moment leaves the output file absent (or, when it existed,
  untouched) or complete: never half-written (what it had parsed is in ``OUT.partial``, for
  ``--resume``: ``tests/test_streaming.py``).

The moments are drawn from a seeded generator (the seed is in the assertion messages).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import synthetic
from fixtures_models import REPO_ROOT, run_cli

pytestmark = pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")

SEED = int(os.environ.get("DEPPARSE_CRASH_SEED", "12345"))


def _cmd(*args):
    return [sys.executable, "-m", "depparse.cli", *[str(a) for a in args]]


def _wait_for(path, proc, timeout=120.0):
    t0 = time.monotonic()
    while not path.exists():
        if proc.poll() is not None:
            return False
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"{path} did not appear")
        time.sleep(0.005)
    return True


def _arrays(path):
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k].copy() for k in z.files if k != "meta"}


@pytest.fixture(scope="module")
def train_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("crash")
    p = d / "train.conllu"
    p.write_text(synthetic.conllu_text(1000, 5), encoding="utf-8")
    dev = d / "dev.conllu"
    dev.write_text(synthetic.conllu_text(50, 6), encoding="utf-8")
    return p, dev


# kills a CLI training at a random moment: 20-22 s, the slowest of the fast suite (measured);
# resuming bit-identically in-process stays fast (test_learning.test_resume_is_bit_identical)
@pytest.mark.slow
def test_killed_training_resumes_bit_identical(train_file, tmp_path):
    train, dev = train_file
    args = ["train", "--recipe", "none",
            "--model", "sib", "--train", train, "--dev", dev, "--epochs", "12",
            "--bits", "16", "--labeler-epochs", "2", "--dev-max-iter", "100", "-q"]
    ref = tmp_path / "ref.npz"
    t0 = time.monotonic()
    p = subprocess.run(_cmd(*args, "--out", ref), capture_output=True, cwd=REPO_ROOT,
                       timeout=300)
    assert p.returncode == 0, p.stderr.decode()
    total = time.monotonic() - t0
    rng = random.Random(SEED)
    out = tmp_path / "killed.npz"
    ckpt = tmp_path / "killed.npz.ckpt.npz"
    killed = False
    delay = None
    for attempt in range(4):
        for f in (out, ckpt):
            if f.exists():
                f.unlink()
        proc = subprocess.Popen(_cmd(*args, "--out", out), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, cwd=REPO_ROOT)
        try:
            appeared = _wait_for(ckpt, proc)
            # a random moment in what is left of the run (shorter on each retry)
            delay = rng.uniform(0.0, 0.5 * total / (2 ** attempt))
            time.sleep(delay)
            if appeared and proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                killed = True
        finally:
            proc.wait(timeout=300)
            proc.stderr.close()
        if killed:
            break
    assert killed, f"could not kill training in time (seed {SEED})"
    assert proc.returncode == -signal.SIGKILL
    assert ckpt.exists()
    p = subprocess.run(_cmd(*args, "--out", out, "--resume"), capture_output=True,
                       cwd=REPO_ROOT, timeout=300)
    assert p.returncode == 0, p.stderr.decode()
    a, b = _arrays(ref), _arrays(out)
    assert sorted(a) == sorted(b)
    for k in a:
        assert a[k].dtype == b[k].dtype
        assert np.array_equal(a[k], b[k]), f"{k} differs after kill at +{delay:.3f}s " \
                                           f"(seed {SEED})"


def test_killed_parse_never_leaves_half_written_output(syn, tmp_path):
    src = tmp_path / "in.conllu"
    src.write_text(synthetic.conllu_text(1500, 7), encoding="utf-8")
    ref = tmp_path / "ref.conllu"
    assert run_cli(["parse", src, "--model", syn.model, "-o", ref, "-q"])[0] == 0
    expected = ref.read_bytes()
    t0 = time.monotonic()
    out = tmp_path / "out.conllu"
    p = subprocess.run(_cmd("parse", src, "--model", syn.model, "-o", out, "-q"),
                       capture_output=True, cwd=REPO_ROOT, timeout=300)
    assert p.returncode == 0, p.stderr.decode()
    total = time.monotonic() - t0
    assert out.read_bytes() == expected
    rng = random.Random(SEED + 1)
    old = b"previous content\n"
    outcomes = []
    for k in range(4):
        existed = k % 2 == 1  # also: an existing output file must stay intact
        for f in (out, tmp_path / "out.conllu.partial", tmp_path / "out.conllu.partial.state"):
            if f.exists():
                f.unlink()
        if existed:
            out.write_bytes(old)
        jobs = ["--jobs", "2"] if k == 3 else []
        proc = subprocess.Popen(_cmd("parse", src, "--model", syn.model, "-o", out, "-q",
                                     *jobs),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                cwd=REPO_ROOT, start_new_session=True)
        # kill within the first 80% of a complete run: the kill lands before the end
        delay = rng.uniform(0.1, 0.8) * total
        time.sleep(delay)
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the parent and any worker processes
        except ProcessLookupError:
            pass
        proc.wait(timeout=60)
        killed = proc.returncode == -signal.SIGKILL
        if out.exists():
            data = out.read_bytes()
            ok = data == expected or (existed and data == old)
            assert ok, f"half-written output after kill at +{delay:.3f}s (seed {SEED})"
            state = "complete" if data == expected else "untouched"
        else:
            assert not existed, "the existing output file was removed"
            state = "absent"
        outcomes.append((killed, state, round(delay, 2)))
    # the kills landed while the parser was running, and at least one of them before the
    # output was in place (so the test saw a kill interrupt the work, not a finished run)
    assert sum(k for k, _, _ in outcomes) >= 3, outcomes
    assert any(k and s != "complete" for k, s, _ in outcomes), outcomes
    # no output file appeared under another name than a hidden temporary one or the partial
    # output of --resume
    names = {f.name for f in tmp_path.iterdir()}
    assert names - {"in.conllu", "ref.conllu", "out.conllu", "out.conllu.partial",
                    "out.conllu.partial.state"} <= {
        n for n in names if n.startswith(".out.conllu.") and n.endswith(".tmp")}
