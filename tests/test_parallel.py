"""Parallel and distributed execution: --jobs N worker processes, and a Dask cluster.

* ``--jobs 2`` gives byte-identical output to ``--jobs 1``; errors and dead workers in the
  pool give clean errors and leave no process behind.
* Dask (``LocalCluster`` of 2 worker processes on the loopback interface): sharded parsing
  in input order, identical to a local run, also when a worker is killed mid-run (no
  sentence lost or duplicated); training by iterative parameter mixing (McDonald et al.
  2010): one shard equals the single-process perceptron, the result does not depend on
  where the shards ran, and ``depparse train --scheduler`` works end to end.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal

import numpy as np
import pytest
from fixtures_models import conllu_bytes, run_cli, run_subprocess

import depparse
from depparse.conllu import read_conllu
from depparse.inference.engine import Engine
from depparse.inference.parallel import WorkerDiedError, chunk_bounds, parse_parallel

# ---------------------------------------------------------------------------------------
# --jobs


@pytest.mark.parametrize("n,jobs,size", [(1, 2, None), (7, 2, None), (100, 2, None),
                                         (100, 3, 7), (5, 8, 1)])
def test_chunk_bounds_cover_in_order(n, jobs, size):
    b = chunk_bounds(n, jobs, size)
    assert b[0][0] == 0 and b[-1][1] == n
    assert all(x[1] == y[0] for x, y in zip(b, b[1:], strict=False))
    assert all(a < c for a, c in b)


def test_jobs_identical_to_serial(parser, sents):
    ref = parser.parse_results(sents)
    for chunk in (None, 1, 7):
        got = parse_parallel(parser, sents, 2, dict(trace=True), chunk_size=chunk)
        assert conllu_bytes([p for p, _ in got]) == conllu_bytes([p for p, _ in ref])
        for (_, r1), (_, r2) in zip(ref, got, strict=True):
            assert r1.certificate == r2.certificate and r1.iterations == r2.iterations
            assert np.array_equal(r1.dual, r2.dual)
    assert not mp.active_children()


def test_spawn_start_method_identical(parser, sents):
    sub = sents[:24]
    ref = conllu_bytes(parser.parse(sub))
    got = parse_parallel(parser, sub, 2, {}, start_method="spawn")
    assert conllu_bytes([p for p, _ in got]) == ref
    assert not mp.active_children()


def test_cli_jobs_identical(syn, tmp_path):
    a, b = tmp_path / "a.conllu", tmp_path / "b.conllu"
    ra, rb = tmp_path / "a.json", tmp_path / "b.json"
    assert run_cli(["parse", syn.test, syn.dev, "--model", syn.model, "-o", a, "--report", ra,
                    "-q"])[0] == 0
    rc, _, err = run_cli(["parse", syn.test, syn.dev, "--model", syn.model, "-o", b,
                          "--report", rb, "--jobs", "2"])
    assert rc == 0, err
    assert a.read_bytes() == b.read_bytes()
    import json

    ja, jb = json.loads(ra.read_text()), json.loads(rb.read_text())
    for x, y in zip(ja["sentences"], jb["sentences"], strict=True):
        assert (x["heads"], x["certificate"], x["iterations"], x["dual"]) == \
            (y["heads"], y["certificate"], y["iterations"], y["dual"])


def _boom(self, sentence, **kw):
    if sentence.sent_id == "syn-3-17":
        raise ValueError("boom in worker")
    return _orig_parse_one(self, sentence, **kw)


def _die(self, sentence, **kw):
    if sentence.sent_id == "syn-3-17":
        os.kill(os.getpid(), signal.SIGKILL)
    return _orig_parse_one(self, sentence, **kw)


_orig_parse_one = Engine.parse_one


@pytest.mark.skipif("fork" not in mp.get_all_start_methods(), reason="needs fork")
def test_worker_exception_is_reraised(parser, sents, monkeypatch):
    monkeypatch.setattr(Engine, "parse_one", _boom)
    with pytest.raises(ValueError, match="boom in worker"):
        parse_parallel(parser, sents, 2, {}, chunk_size=4)
    assert not mp.active_children()


@pytest.mark.skipif("fork" not in mp.get_all_start_methods(), reason="needs fork")
def test_worker_death_is_a_clean_error(parser, sents, monkeypatch):
    monkeypatch.setattr(Engine, "parse_one", _die)
    with pytest.raises(WorkerDiedError, match="worker process died"):
        parse_parallel(parser, sents, 2, {}, chunk_size=4)
    assert not mp.active_children()


@pytest.mark.skipif("fork" not in mp.get_all_start_methods(), reason="needs fork")
def test_cli_worker_errors(syn, tmp_path, monkeypatch):
    out = tmp_path / "out.conllu"
    for fn in (_boom, _die):
        monkeypatch.setattr(Engine, "parse_one", fn)
        rc, stdout, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", out,
                                   "--jobs", "2", "--force"])  # (the first run's is kept)
        assert rc == 1, err
        # the error, after the line saying what was committed before it is kept for --resume
        # (the state is committed from the first sentence on: issue 51, item 4)
        last = err.splitlines()[-1]
        assert err.count("\n") <= 2 and last.startswith("depparse: internal error:"), err
        assert err.count("\n") == 1 or "--resume continues the run" in err
        assert "Traceback" not in err
        assert not out.exists()


# ---------------------------------------------------------------------------------------
# Dask


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    import logging

    import dask

    logging.getLogger("distributed").setLevel(logging.ERROR)
    # After a worker is killed, a gather that was already on its way to it retries the
    # connection until this timeout (30 s by default) before the scheduler gives up on it;
    # the results are right either way, this only keeps the test short.
    with dask.config.set({"distributed.comm.timeouts.connect": "3s"}):
        c = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     host="127.0.0.1", dashboard_address=None,
                                     silence_logs=logging.ERROR)
        client = distributed.Client(c)
        try:
            yield client
        finally:
            client.close()
            c.close()


def test_parse_distributed_identical(cluster, parser, sents):
    from depparse.distributed import parse_distributed

    ref = conllu_bytes(parser.parse(sents))
    got = parse_distributed(parser, sents, cluster, shard_size=7)
    assert conllu_bytes(got) == ref
    # from a model path and a scheduler address, with results
    res = parse_distributed(str(parser.path), sents, cluster.scheduler.address,
                            return_results=True)
    assert conllu_bytes([p for p, _ in res]) == ref
    assert all(r.dual is not None for _, r in res)


def test_worker_killed_mid_parse_loses_nothing(cluster, parser, sents):
    from depparse.distributed import parse_distributed

    sents = sents * 4  # 360 sentences
    ref = conllu_bytes(parser.parse(sents))
    cluster.wait_for_workers(2, timeout=60)
    pids = cluster.run(os.getpid)
    victim = sorted(pids.values())[0]
    seen = []

    def on_shard(i, n):
        seen.append(i)
        if len(seen) == 2:
            os.kill(victim, signal.SIGKILL)

    got = parse_distributed(parser, sents, cluster, shard_size=4, on_shard=on_shard)
    assert sorted(seen) == list(range(90)), "each shard exactly once"
    assert len(got) == len(sents)
    assert conllu_bytes(got) == ref
    cluster.wait_for_workers(2, timeout=60)
    assert victim not in cluster.run(os.getpid).values(), "the worker was not killed"


def test_cli_parse_with_scheduler(cluster, syn, tmp_path):
    a, b = tmp_path / "a.conllu", tmp_path / "b.conllu"
    assert run_cli(["parse", syn.test, "--model", syn.model, "-o", a, "-q"])[0] == 0
    rc, _, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", b, "--scheduler",
                          cluster.scheduler.address])
    assert rc == 0, err
    assert a.read_bytes() == b.read_bytes()
    # a process of its own (no default client there), as a user runs it
    c = tmp_path / "c.conllu"
    p = run_subprocess(["parse", syn.test, "--model", syn.model, "-o", c, "--scheduler",
                        cluster.scheduler.address])
    assert p.returncode == 0, p.stderr.decode()
    assert c.read_bytes() == a.read_bytes()
    rc, _, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", b, "--scheduler",
                          "no-such-address"])
    assert rc == 2 and err.startswith("depparse: error:") and err.count("\n") == 1, err


def _train_data(syn):
    return read_conllu(syn.train), read_conllu(syn.dev)


def test_ipm_one_shard_is_the_serial_perceptron(syn):
    from depparse.config import DecodeConfig, ModelConfig, TrainConfig
    from depparse.distributed import train_distributed
    from depparse.learn.perceptron import train

    tr, dv = _train_data(syn)
    cfg = (ModelConfig(model="sib", bits=16), DecodeConfig(),
           TrainConfig(epochs=2, seed=3, labeler_epochs=0))
    m1 = train(tr, None, *cfg, progress=False)
    m2 = train_distributed(tr, None, *cfg, None, shards=1, progress=False)
    assert np.allclose(m1.weights, m2.weights, rtol=1e-6, atol=1e-9)
    assert np.array_equal(m1.pruner, m2.pruner)


def test_ipm_on_dask_equals_local_and_resumes(cluster, syn, tmp_path):
    from depparse.config import DecodeConfig, ModelConfig, TrainConfig
    from depparse.distributed import train_distributed

    tr, dv = _train_data(syn)
    cfg = (ModelConfig(model="sib", bits=16), DecodeConfig())
    three = TrainConfig(epochs=3, seed=0, labeler_epochs=0)
    two = TrainConfig(epochs=2, seed=0, labeler_epochs=0)
    m_dask = train_distributed(tr, dv, *cfg, three, cluster, progress=False)
    assert m_dask.info["ipm_shards"] == 2
    assert m_dask.info["history"][-1]["dev_uas"] > 90
    ck = tmp_path / "ck.npz"
    m_local = train_distributed(tr, dv, *cfg, two, None, shards=2, checkpoint=ck,
                                progress=False)
    m_res = train_distributed(tr, dv, *cfg, three, None, checkpoint=ck, resume=True,
                              progress=False)
    assert m_local.info["ipm_shards"] == 2
    assert np.array_equal(m_dask.weights, m_res.weights)


def test_cli_train_with_scheduler(cluster, syn, tmp_path):
    out = tmp_path / "ipm.npz"
    rc, _, err = run_cli(["train", "--recipe", "none",
                          "--model", "sib", "--train", syn.train, "--dev", syn.dev,
                          "--out", out, "--epochs", "2", "--bits", "16", "--labeler-epochs",
                          "2", "--scheduler", cluster.scheduler.address])
    assert rc == 0, err
    assert "IPM, 2 shards" in err
    m = depparse.load(out)
    assert m.model.info["ipm_shards"] == 2
    rc, _, err = run_cli(["parse", syn.test, "--model", out, "-o", tmp_path / "o.conllu"])
    assert rc == 0, err
