"""``depparse parse --scheduler``: byte-range shards read by the workers (depparse/shards.py,
depparse/distributed.py ``iter_parse_files``, depparse/cli/sharded.py).

* Without Dask: a file cut at any shard size, each shard parsed by :func:`parse_shard` and
  the shard files joined, is byte for byte a local ``depparse parse`` (CoNLL-U with a
  byte-order mark, CRLF, several blank lines and comments; plain text, whose sentence ids the
  joining renumbers); the first line of every shard is its line in the file.
* On a real cluster (``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1, no
  nanny, so that a killed worker stays dead): the CLI's output and report equal a local
  run's, for one file, several files into one output, a folder and plain text; a worker
  killed mid-run loses and duplicates nothing; a stopped run (a client killed with SIGKILL,
  or a folder run) continued by ``--resume`` parses only the shards that were not complete;
  bad input is the local run's error, ``--skip-bad`` the local run's list.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fixtures_models import run_cli

from depparse.shards import Joiner, ShardTask, cut_points, parse_shard, plan_file, scan_range


def _odd_conllu(syn):
    """The test sentences with a byte-order mark, leading and doubled blank lines, CRLF in one
    sentence and no final blank line."""
    blocks = syn.text("test").decode("utf-8").split("\n\n")
    blocks = [b for b in blocks if b.strip()]
    blocks[3] = blocks[3].replace("\n", "\r\n")
    out = "\ufeff\n\n" + "\n\n\n".join(blocks[:20]) + "\n\n" + "\n\n".join(blocks[20:])
    return out.rstrip("\n").encode("utf-8")


def _local(path, kind, tmp_path, syn, extra=()):
    out = tmp_path / f"local-{Path(path).name}.conllu"
    rc, _, err = run_cli(["parse", str(path), "--input", kind, "-m", syn.model, "-o", out,
                          "-q", *extra])
    assert rc == 0, err
    return out.read_bytes()


def _text(syn):
    """Plain text of the test sentences: paragraphs of three sentences."""
    from depparse.conllu import read_conllu

    sents = [" ".join(s.forms[1:]) for s in read_conllu(syn.test)]
    paras = [" ".join(sents[i:i + 3]) for i in range(0, len(sents), 3)]
    return ("\n\n".join(paras) + "\n").encode("utf-8")


def _odd_text(syn):
    """:func:`_text` with a byte-order mark, leading blank lines, CRLF and space-only lines."""
    text = _text(syn).decode("utf-8").split("\n\n")
    seps = ["\n\n", "\r\n\r\n", "\n \t\n", "\n\n\n"]
    out = "".join(p + seps[k % 4] for k, p in enumerate(text))
    return ("\ufeff\n\n" + out).encode("utf-8")


def _sharded(parser, path, kind, shard_bytes, folder, decide=True, normalized=False):
    """Plan, parse and join a file without Dask: the workers' functions called here
    (``decide``: the file's tag columns decided from its first sentences, as the client does;
    else each shard decides from its own)."""
    size = os.path.getsize(path)
    cuts = cut_points(size, shard_bytes)
    scans = [scan_range(str(path), kind, a, cuts[i + 1] if i + 1 < len(cuts) else size)
             for i, a in enumerate(cuts)]
    bounds = plan_file(size, cuts, scans)
    cols = None
    if kind == "conllu" and decide:
        from depparse.cli.stream import first_sentences
        from depparse.inference.columns import TAG_WINDOW

        cols = tuple(parser.columns.of_file(first_sentences(parser, kind, str(path),
                                                            TAG_WINDOW)))
    settings = dict(kind=kind, retag=False, skip_bad=False, report=False,
                    kw=dict(max_iter=None, single_root=None, time_limit=None, trace=False),
                    fingerprint=None, normalized_spaces=normalized)
    out = bytearray()
    joiner = Joiner(out.extend, kind)
    lead = ""
    for i, (a, b, line) in enumerate(bounds):
        task = ShardTask(i, 0, str(path), str(path), a, b, line, cols,
                         str(folder / f"shard-{i}"))
        meta = parse_shard(parser, task, settings)
        assert "error" not in meta, meta
        if a == 0:
            lead = meta["lead"]
        joiner.add(task, meta, lead)
    return bytes(out), bounds


@pytest.mark.parametrize("kind", ["conllu", "text"])
def test_shards_joined_are_the_local_output(parser, syn, tmp_path, kind):
    path = tmp_path / ("odd.conllu" if kind == "conllu" else "odd.txt")
    path.write_bytes(_odd_conllu(syn) if kind == "conllu" else _odd_text(syn))
    ref = _local(path, kind, tmp_path, syn)
    data = path.read_bytes()
    for shard_bytes in (1, 97, 700, 4000, len(data) + 1):
        folder = tmp_path / f"s{shard_bytes}"
        folder.mkdir()
        got, bounds = _sharded(parser, path, kind, shard_bytes, folder)
        assert got == ref, shard_bytes
        assert bounds[0][0] == 0 and bounds[-1][1] == len(data)
        assert all(x[1] == y[0] for x, y in zip(bounds, bounds[1:], strict=False))
        for a, _, line in bounds:  # each shard's first line is its line in the file
            assert line == data.count(b"\n", 0, a) + 1
        if shard_bytes < 100:
            assert len(bounds) > 10
    if kind == "text":  # the text's every space, tab and line break is in the output's MISC
        import io

        from depparse.conllu import document_text, read_conllu

        f = io.BytesIO(ref)
        f.name = "out.conllu"
        assert document_text(read_conllu(f)) == data.decode("utf-8").removeprefix("\ufeff")


def test_shards_with_normalized_spaces_are_the_local_output(parser, syn, tmp_path):
    path = tmp_path / "odd.txt"
    path.write_bytes(_odd_text(syn))
    ref = _local(path, "text", tmp_path, syn, ["--normalized-spaces"])
    assert b"Spaces" not in ref  # (the text has no glued tokens: MISC is "_" throughout)
    for shard_bytes in (97, len(path.read_bytes()) + 1):
        folder = tmp_path / f"n{shard_bytes}"
        folder.mkdir()
        got, _ = _sharded(parser, path, "text", shard_bytes, folder, normalized=True)
        assert got == ref, shard_bytes


def test_shards_take_the_files_tag_columns(parser, syn, tmp_path):
    """The columns a file lacks are decided from its first 100 sentences (by the client), not
    from each shard's: a file without LEMMA in its first 100 sentences gets LEMMA predicted
    where it is '_' in a later shard too, as in a local run."""
    from depparse.conllu import read_conllu, write_conllu

    sents = read_conllu(syn.test) + read_conllu(syn.dev) + read_conllu(syn.test)
    assert len(sents) > 110
    out = []
    for k, s in enumerate(sents):
        if k < 100 or k % 4 == 0:
            s = s.with_tags(lemmas=["_"] * (s.n + 1))
        out.append(s)
    path = tmp_path / "lemmas.conllu"
    write_conllu(out, path)
    ref = _local(path, "conllu", tmp_path, syn)
    size = path.stat().st_size
    folder = tmp_path / "s"
    folder.mkdir()
    got, bounds = _sharded(parser, path, "conllu", size // 12, folder)
    assert len(bounds) >= 8
    assert got == ref
    # each shard deciding from its own first sentences would differ (the later shards have
    # LEMMA in most sentences)
    (tmp_path / "own").mkdir()
    assert _sharded(parser, path, "conllu", size // 12, tmp_path / "own", decide=False)[0] != ref


def test_a_shard_reports_bad_input_at_its_line(parser, syn, tmp_path):
    lines = syn.text("test").decode("utf-8").split("\n")
    k = len(lines) - 8  # a word line of the last sentences
    assert lines[k][0].isdigit()
    lines[k] = lines[k].replace("\t", " ", 1)
    bad = tmp_path / "bad.conllu"
    bad.write_text("\n".join(lines), encoding="utf-8")
    rc, _, local_err = run_cli(["parse", bad, "-m", syn.model, "-o", tmp_path / "x.conllu"])
    assert rc == 2 and f"bad.conllu:{k + 1}:" in local_err
    size = bad.stat().st_size
    cuts = cut_points(size, 500)
    scans = [scan_range(str(bad), "conllu", a, cuts[i + 1] if i + 1 < len(cuts) else size)
             for i, a in enumerate(cuts)]
    a, b, line = [x for x in plan_file(size, cuts, scans) if x[0] <= sum(
        len(x) + 1 for x in lines[:k]) < x[1]][0]
    assert a > 0
    settings = dict(kind="conllu", retag=False, skip_bad=False, report=False,
                    kw={}, fingerprint=None)
    meta = parse_shard(parser, ShardTask(0, 0, str(bad), str(bad), a, b, line, (),
                                         str(tmp_path / "s")), settings)
    assert f"{bad}:{k + 1}:" in str(meta["error"])
    assert not list(tmp_path.glob("s.*")), "no shard file is left"


# ---------------------------------------------------------------------------------------
# a real cluster: `dask scheduler` and two `dask worker` processes


class Cluster:
    def __init__(self, root):
        self.root = root
        self.bin = Path(sys.executable).parent / "dask"
        self.file = root / "scheduler.json"
        env = dict(os.environ, DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="3s",
                   DASK_LOGGING__DISTRIBUTED="error")
        self.env = env
        self.scheduler = subprocess.Popen(
            [self.bin, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
             "--scheduler-file", self.file], env=env, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        t0 = time.time()
        while not self.file.exists():
            assert time.time() - t0 < 60, "the scheduler did not start"
            time.sleep(0.1)
        time.sleep(0.2)
        self.address = json.loads(self.file.read_text())["address"]
        self.workers = [self.start_worker() for _ in range(2)]
        self.wait(2)

    def start_worker(self):
        return subprocess.Popen(
            [self.bin, "worker", "--scheduler-file", self.file, "--nthreads", "1",
             "--no-nanny", "--host", "127.0.0.1", "--no-dashboard", "--local-directory",
             self.root], env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def wait(self, n):
        from distributed import Client

        with Client(self.address, timeout=30, set_as_default=False) as c:
            c.wait_for_workers(n, timeout=60)

    def close(self):
        for p in self.workers:  # nothing of theirs to keep: no graceful close (seconds)
            p.kill()
            p.wait()
        self.scheduler.terminate()
        try:
            self.scheduler.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.scheduler.kill()
            self.scheduler.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    pytest.importorskip("distributed")
    c = Cluster(tmp_path_factory.mktemp("dask"))
    try:
        yield c
    finally:
        c.close()


def _big(syn, tmp_path, times=6):
    path = tmp_path / "big.conllu"
    path.write_bytes(b"".join(syn.text(n) for n in ("test", "dev") * times))
    return path


def test_cli_on_a_cluster_is_the_local_run(cluster, syn, tmp_path):
    odd = tmp_path / "odd.conllu"
    odd.write_bytes(_odd_conllu(syn))
    for inputs, extra in (([odd], ()), ([syn.test, odd, syn.dev], ()),
                          ([odd], ("--report", "REPORT"))):
        ref, got = tmp_path / "ref.conllu", tmp_path / "got.conllu"
        local_extra = [str(tmp_path / "ref.json") if x == "REPORT" else x for x in extra]
        dask_extra = [str(tmp_path / "got.json") if x == "REPORT" else x for x in extra]
        rc, _, err = run_cli(["parse", *inputs, "-m", syn.model, "-o", ref, "-q",
                              *local_extra])
        assert rc == 0, err
        rc, _, err = run_cli(["parse", *inputs, "-m", syn.model, "-o", got, "--scheduler",
                              cluster.address, "--shard-size", "2K", *dask_extra])
        assert rc == 0, err
        assert got.read_bytes() == ref.read_bytes()
        assert "parsed 40 sentences" in err or "parsed" in err
        assert not (tmp_path / "got.conllu.partial.shards").exists()
        if extra:
            a = json.loads((tmp_path / "ref.json").read_text())
            b = json.loads((tmp_path / "got.json").read_text())
            keys = ("file", "index", "sent_id", "heads", "certificate", "iterations", "rels")
            assert [[e[k] for k in keys] for e in a["sentences"]] == \
                [[e[k] for k in keys] for e in b["sentences"]]
            assert a["files"] == b["files"]


def test_cli_on_a_cluster_into_stdout_and_relative_names(cluster, syn, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, ref, err = run_cli(["parse", syn.test, syn.dev, "-m", syn.model, "-q"])
    assert rc == 0, err
    rc, got, err = run_cli(["parse", syn.test, syn.dev, "-m", syn.model, "-q", "--scheduler",
                            cluster.address, "--shard-size", "4K"])
    assert rc == 0, err
    assert got == ref
    assert not list(tmp_path.iterdir()), "the temporary shard folder is removed"
    # a relative output: its shard folder is given to the workers as an absolute path
    rc, _, err = run_cli(["parse", syn.test, syn.dev, "-m", syn.model, "-q", "-o", "rel.conllu",
                          "--scheduler", cluster.address, "--shard-size", "4K"])
    assert rc == 0, err
    assert (tmp_path / "rel.conllu").read_bytes() == ref


def test_cli_text_and_folders_on_a_cluster(cluster, syn, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_bytes(_text(syn))
    (corpus / "b.txt").write_bytes(_text(syn)[:700] + b"\n")
    (corpus / "empty.txt").write_bytes(b"")
    rc, _, err = run_cli(["parse", "--input", "text", corpus, "-m", syn.model, "-o",
                          f"{tmp_path}/ref/", "-q"])
    assert rc == 0, err
    rc, _, err = run_cli(["parse", "--input", "text", corpus, "-m", syn.model, "-o",
                          f"{tmp_path}/got/", "--scheduler", cluster.address, "--shard-size",
                          "300"])
    assert rc == 0, err
    for name in ("a", "b", "empty"):
        assert (tmp_path / "got" / f"{name}.conllu").read_bytes() == \
            (tmp_path / "ref" / f"{name}.conllu").read_bytes(), name
    assert "no sentences in" in err and "empty.txt" in err
    assert not list((tmp_path / "got").glob(".*"))


def test_bad_input_on_a_cluster_is_the_local_error(cluster, syn, tmp_path):
    lines = _big(syn, tmp_path, 2).read_text(encoding="utf-8").split("\n")
    k = len(lines) // 2
    while not lines[k][:1].isdigit():
        k += 1
    lines[k] = lines[k].replace("\t", " ", 1)
    bad = tmp_path / "bad.conllu"
    bad.write_text("\n".join(lines), encoding="utf-8")
    out = tmp_path / "out.conllu"
    rc, _, local = run_cli(["parse", bad, "-m", syn.model, "-o", out])
    assert rc == 2
    rc, _, err = run_cli(["parse", bad, "-m", syn.model, "-o", out, "--scheduler",
                          cluster.address, "--shard-size", "1K"])
    assert rc == 2 and err == local, err
    assert not out.exists() and not list(tmp_path.glob("out.conllu.*"))
    rc, _, err = run_cli(["parse", "-", "-m", syn.model, "-o", out, "--scheduler",
                          cluster.address])
    assert rc == 2 and "stdin" in err and err.count("\n") == 1
    # --skip-bad: the same output and the same list of skipped sentences
    rc, _, local = run_cli(["parse", bad, "-m", syn.model, "-o", out, "--skip-bad", "-q"])
    assert rc == 0 and "skipped:" in local
    ref = out.read_bytes()
    rc, _, err = run_cli(["parse", bad, "-m", syn.model, "-o", out, "--skip-bad", "-q",
                          "--scheduler", cluster.address, "--shard-size", "1K"])
    assert rc == 0 and err == local, err
    assert out.read_bytes() == ref


def test_worker_killed_mid_run_loses_nothing(cluster, syn, parser, tmp_path):
    from depparse.distributed import iter_parse_files

    big = _big(syn, tmp_path)
    ref = _local(big, "conllu", tmp_path, syn)
    folder = tmp_path / "shards"
    folder.mkdir()
    victim = cluster.workers[0]
    seen = []

    def on_shard(i, n):
        seen.append(i)
        if len(seen) == 2:
            os.kill(victim.pid, signal.SIGKILL)

    out = bytearray()
    joiner = Joiner(out.extend, "conllu")
    from depparse.cli.stream import first_sentences

    cols = {str(big): tuple(parser.columns.of_file(first_sentences(parser, "conllu",
                                                                   str(big), 100)))}
    n = 0
    for task, meta, lead in iter_parse_files(parser, [str(big)], cluster.address, str(folder),
                                             columns=cols, shard_bytes=2000,
                                             on_shard=on_shard):
        joiner.add(task, meta, lead)
        n += 1
    try:
        assert victim.wait(timeout=10) == -signal.SIGKILL, "the worker was not killed"
        assert sorted(seen) == list(range(n)), "each shard came back exactly once"
        assert n > 20
        assert bytes(out) == ref
    finally:
        cluster.workers[0] = cluster.start_worker()
        cluster.wait(2)


def _run_keeping_shards(args, kept, monkeypatch):
    """``run_cli(args)`` with the shard folder copied to ``kept`` just before the client
    removes it (what a run stopped while joining leaves)."""
    import depparse.cli.sharded as sharded

    remove = sharded._remove

    def keep(path):
        shutil.copytree(path, kept)
        remove(path)

    monkeypatch.setattr(sharded, "_remove", keep)
    try:
        return run_cli(args)
    finally:
        monkeypatch.setattr(sharded, "_remove", remove)


def test_resume_parses_only_the_missing_shards(cluster, syn, tmp_path,
                                              monkeypatch):
    big = _big(syn, tmp_path, 3)
    ref = _local(big, "conllu", tmp_path, syn)
    out = tmp_path / "out.conllu"
    folder = tmp_path / "out.conllu.partial.shards"
    args = ["parse", big, "-m", syn.model, "-o", out, "--scheduler", cluster.address,
            "--shard-size", "3K"]
    # a run stopped while joining: its shard folder kept (copied before the removal)
    rc, _, err = _run_keeping_shards(args, tmp_path / "kept", monkeypatch)
    assert rc == 0 and out.read_bytes() == ref, err
    out.unlink()
    shutil.copytree(tmp_path / "kept", folder)
    metas = sorted(folder.glob("shard-*.json"))
    assert len(metas) > 6
    # two shards not done, one half-written (its size is not the one its meta records)
    metas[1].unlink()
    metas[-1].unlink()
    metas[2].with_suffix(".conllu").write_bytes(b"cut")
    rc, _, err = run_cli(args)
    assert rc == 2 and "--resume" in err and "--force" in err and err.count("\n") == 1
    rc, _, err = run_cli(args + ["--resume"])
    assert rc == 0, err
    assert out.read_bytes() == ref
    assert f"resuming: {len(metas) - 3:,} of {len(metas)} shards are complete" in err, err
    assert f"; {len(metas) - 3} shards parsed before --resume" in err
    assert not folder.exists()
    # a stopped local run is not replaced unasked
    (tmp_path / "out.conllu.partial.state").write_text("{}")
    rc, _, err = run_cli(args)
    assert rc == 2 and "without --scheduler" in err and "--force" in err
    rc, _, err = run_cli(args + ["--force"])
    assert rc == 0 and out.read_bytes() == ref, err
    assert not (tmp_path / "out.conllu.partial.state").exists()
    # a changed input makes the kept shards useless
    shutil.copytree(tmp_path / "kept", folder)
    big.write_bytes(big.read_bytes() + syn.text("test"))
    rc, _, err = run_cli(args + ["--resume"])
    assert rc == 0 and "resuming" not in err, err
    assert out.read_bytes() == _local(big, "conllu", tmp_path, syn)


def test_resume_a_folder_run(cluster, syn, tmp_path, monkeypatch):
    """A folder run stopped after its first output: --resume skips that input (its output is
    complete) and joins the others from their complete shards."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("a", "b", "c"):
        (corpus / f"{name}.conllu").write_bytes(_big(syn, tmp_path, 1).read_bytes())
    rc, _, err = run_cli(["parse", corpus, "-m", syn.model, "-o", f"{tmp_path}/ref/", "-q"])
    assert rc == 0, err
    args = ["parse", corpus, "-m", syn.model, "-o", f"{tmp_path}/out/", "--scheduler",
            cluster.address, "--shard-size", "3K"]
    rc, _, err = _run_keeping_shards(args, tmp_path / "kept", monkeypatch)
    assert rc == 0, err
    out = tmp_path / "out"
    for name in ("b", "c"):
        (out / f"{name}.conllu").unlink()
    shutil.copytree(tmp_path / "kept", out / ".depparse-parse.partial.shards")
    n_bc = len(list((tmp_path / "kept").glob("shard-*.json"))) * 2 // 3
    rc, _, err = run_cli(args + ["--resume"])
    assert rc == 0, err
    assert "a.conllu: skipped" in err
    assert f"resuming: {n_bc:,} of {n_bc:,} shards are complete" in err, err
    for name in ("a", "b", "c"):
        assert (out / f"{name}.conllu").read_bytes() == \
            (tmp_path / "ref" / f"{name}.conllu").read_bytes()
    assert not list(out.glob(".*"))


@pytest.mark.slow  # a client killed and a resumed run on the cluster: 9 s (measured)
def test_client_killed_then_resumed(cluster, syn, tmp_path):
    """The client killed (SIGKILL) once some shards are complete: --resume keeps them, parses
    the others and writes the local run's bytes."""
    big = _big(syn, tmp_path, 6)
    ref = _local(big, "conllu", tmp_path, syn)
    out = tmp_path / "out.conllu"
    folder = tmp_path / "out.conllu.partial.shards"
    args = [sys.executable, "-m", "depparse.cli", "parse", str(big), "-m", str(syn.model),
            "-o", str(out), "--scheduler", cluster.address, "--shard-size", "1K", "-q"]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.time()
    while len(list(folder.glob("shard-*.json"))) < 3 and p.poll() is None:
        assert time.time() - t0 < 120
        time.sleep(0.02)
    p.kill()
    assert p.wait() == -signal.SIGKILL, "the run ended before it was killed"
    assert not out.exists() and folder.exists()
    time.sleep(1)  # (the cluster may still finish the shards it had started)
    done = len(list(folder.glob("shard-*.json")))
    p = subprocess.run(args[:-1] + ["--resume"], capture_output=True, timeout=300)
    err = p.stderr.decode()
    assert p.returncode == 0, err
    assert out.read_bytes() == ref
    m = re.search(r"resuming: (\d+) of ([\d,]+) shards are complete", err)
    assert m and int(m.group(1)) >= min(done, 3), err
    assert not folder.exists()
