"""Benchmark: parsing with worker processes, and training by iterative parameter mixing.

Usage::

    python benchmarks/bench_parallel.py jobs [--model M.npz] [--jobs 2] [--rounds 3]
    python benchmarks/bench_parallel.py ipm [--train-sentences 2000] [--epochs 8] [--bits 20]
    python benchmarks/bench_parallel.py all      # ipm, then jobs with the ipm's serial model

``jobs``
    Throughput (words/s) of ``Parser.parse(..., jobs=N)`` against ``jobs=1`` on the same
    input, in one process, best of ``--rounds`` rounds each (the pool start-up, fork, is
    inside the timed region: it is part of what ``--jobs`` costs).  With ``--model`` the
    input is the en_ewt dev set (``$DEPPARSE_CORPORA`` or ``../shared/corpora``; or
    ``--input``); without, a small sib model is trained on the synthetic grammar of
    ``tests/synthetic.py`` and parses 800 inputs of 3 synthetic sentences run together
    (about 25 words each, like real text: a 7-word synthetic sentence alone parses in a
    third of a millisecond, too little work per sentence to measure anything but the
    pool's overhead).  The outputs of both runs
    must be byte-identical.  Target: a ratio of at least 1.7 with 2 jobs on a 2-core machine
    that is otherwise idle (the load average is printed: other processes on the machine
    take cores away from the workers and the ratio with them).

``ipm``
    Iterative parameter mixing (McDonald, Hall and Mann 2010) on a ``LocalCluster`` of 2
    worker processes (loopback only) against single-process training, on the same data and
    the same number of epochs: the first ``--train-sentences`` sentences of en_ewt train,
    UAS on the first ``--dev-sentences`` of en_ewt dev (all tokens, punctuation included),
    no labeler.  Target: the two UAS within 0.5.  Without the corpora, synthetic data.
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def _load_slice(path, n):
    from depparse.conllu import iter_conllu

    out = []
    for s in iter_conllu(path):
        out.append(s)
        if n and len(out) >= n:
            break
    return out


def _corpus(split):
    from depparse.paths import treebank_file

    p = treebank_file("en_ewt", split)
    return p if p.exists() else None


def _synthetic(n, seed):
    import synthetic

    return synthetic.sentences(n, seed)


def _synthetic_long(n, seed, per=3):
    """``n`` sentences of ``per`` synthetic sentences run together (about 25 words, like
    real text; the short synthetic sentences alone parse in a fraction of a millisecond)."""
    import synthetic

    from depparse.conllu import read_conllu

    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        words = [w for _ in range(per) for w in synthetic.sentence(rng)]
        out.append(f"# sent_id = long-{seed}-{k}")
        out += [f"{i}\t{f}\t{f}\t{u}\t_\t_\t_\t_\t_\t_"
                for i, (u, f, _, _) in enumerate(words, 1)]
        out.append("")
    return read_conllu(io.BytesIO(("\n".join(out) + "\n").encode()))


def _bytes(sents):
    from depparse.conllu import write_conllu

    buf = io.BytesIO()
    write_conllu(sents, buf)
    return buf.getvalue()


# ---------------------------------------------------------------------------------------
# jobs


def _cpu():
    """CPU seconds of this process and of its finished children."""
    import resource

    me = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + ch.ru_utime + ch.ru_stime


def bench_jobs(model=None, input_path=None, jobs=2, rounds=3, limit=None):
    import depparse

    if model is not None:
        parser = depparse.load(model)
        src = Path(input_path) if input_path else _corpus("dev")
        if src is None:
            sys.exit("en_ewt dev not found: set DEPPARSE_CORPORA or give --input")
        sents = _load_slice(src, limit)
        what = f"{src.name} with {Path(model).name}"
    else:
        m = depparse.train(_synthetic(1000, 1), None, model="sib", bits=18, epochs=3,
                           progress=False, labeler_epochs=2)
        parser = depparse.Parser(m)
        sents = _synthetic_long(limit or 800, 9)
        what = "synthetic 3-sentence runs, synthetic sib model"
    words = sum(s.n for s in sents)
    parser.parse(sents[:20])  # kernels loaded
    print(f"\n## --jobs: {len(sents)} {what} ({words} words)")
    print(f"cores: {os.cpu_count()}, load average before: "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    res = {}
    cpu = {}
    outs = {}
    for j in (1, jobs):
        best = float("inf")
        for _ in range(rounds):
            c0 = _cpu()
            t0 = time.perf_counter()
            out = parser.parse(sents, jobs=j)
            dt = time.perf_counter() - t0
            if dt < best:
                best, cpu[j] = dt, _cpu() - c0
        res[j] = best
        outs[j] = _bytes(out)
        print(f"jobs={j}: {best:7.2f} s  {words / best:9.0f} words/s  "
              f"{len(sents) / best:8.0f} sent/s  (CPU time, workers included: {cpu[j]:.2f} s)")
    same = outs[1] == outs[jobs]
    ratio = res[1] / res[jobs]
    print(f"identical output: {same}")
    print(f"throughput ratio jobs={jobs} / jobs=1: {ratio:.2f}x (target >= 1.7 with 2 jobs)")
    # what the ratio would be on idle cores: the CPU work of the parallel run spread evenly
    print(f"CPU time of jobs={jobs} / jobs=1: {cpu[jobs] / cpu[1]:.2f} "
          f"(ideal speed-up on {jobs} idle cores: {jobs * cpu[1] / cpu[jobs]:.2f}x)")
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not same:
        sys.exit("outputs differ")
    return ratio


# ---------------------------------------------------------------------------------------
# iterative parameter mixing


def _uas(model, dev, max_iter):
    from depparse.inference.parser import Parser

    p = Parser(model)
    enc = model.vocab.encode
    correct = total = 0
    for s in dev:
        r = p.engine.decode(enc(s), max_iter=max_iter)
        correct += int((r.heads[1:] == np.asarray(s.heads[1:])).sum())
        total += s.n
    return 100.0 * correct / total


def bench_ipm(train_sentences=2000, dev_sentences=500, epochs=8, bits=20, model="sib",
              workers=2, seed=0, max_iter=1000, save=None):
    from distributed import Client, LocalCluster

    from depparse.config import DecodeConfig, ModelConfig, TrainConfig
    from depparse.distributed import train_distributed
    from depparse.learn.perceptron import train

    tr_path, dv_path = _corpus("train"), _corpus("dev")
    if tr_path and dv_path:
        tr = _load_slice(tr_path, train_sentences)
        dv = _load_slice(dv_path, dev_sentences)
        what = f"en_ewt: first {len(tr)} train sentences, first {len(dv)} dev sentences"
    else:
        print("en_ewt not found: synthetic data")
        tr, dv = _synthetic(train_sentences, 1), _synthetic(dev_sentences, 2)
        what = "synthetic"
    print(f"\n## iterative parameter mixing: {what}; {model}, 2**{bits} weights, "
          f"{epochs} epochs, seed {seed}")
    cfg = (ModelConfig(model=model, bits=bits), DecodeConfig(),
           TrainConfig(epochs=epochs, seed=seed, labeler_epochs=0))
    t0 = time.perf_counter()
    m1 = train(tr, None, *cfg, progress=False)
    t_serial = time.perf_counter() - t0
    ep1 = sum(h.get("train_seconds", 0) for h in m1.info["history"])
    uas1 = _uas(m1, dv, max_iter)
    if save:
        m1.save(save)
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address=None,
                           silence_logs=logging.ERROR)
    client = Client(cluster)
    try:
        t0 = time.perf_counter()
        m2 = train_distributed(tr, None, *cfg, client, progress=False)
        t_ipm = time.perf_counter() - t0
    finally:
        client.close()
        cluster.close()
    ep2 = sum(h.get("train_seconds", 0) for h in m2.info["history"])
    uas2 = _uas(m2, dv, max_iter)
    print(f"single process : UAS {uas1:6.2f}   total {t_serial:6.1f} s "
          f"(perceptron epochs {ep1:5.1f} s)")
    print(f"IPM, {m2.info['ipm_shards']} workers: UAS {uas2:6.2f}   total {t_ipm:6.1f} s "
          f"(perceptron epochs {ep2:5.1f} s)")
    print(f"UAS difference: {uas2 - uas1:+.2f} (target: within 0.5)")
    return uas1, uas2


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=["jobs", "ipm", "all"], nargs="?", default="all")
    ap.add_argument("--model", help="model file for `jobs` (else a synthetic model)")
    ap.add_argument("--input", help="CoNLL-U input for `jobs` (default: en_ewt dev)")
    ap.add_argument("--limit", type=int, help="parse only this many sentences")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--train-sentences", type=int, default=2000)
    ap.add_argument("--dev-sentences", type=int, default=500)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--bits", type=int, default=20)
    ap.add_argument("--ipm-model", default="sib", choices=["mst", "sib", "gs"])
    args = ap.parse_args(argv)
    logging.getLogger("distributed").setLevel(logging.ERROR)
    if args.what in ("ipm", "all"):
        save = None
        if args.what == "all" and not args.model:
            save = os.path.join(tempfile.mkdtemp(), "serial.npz")
        bench_ipm(args.train_sentences, args.dev_sentences, args.epochs, args.bits,
                  args.ipm_model, save=save)
        if save:
            args.model = save
    if args.what in ("jobs", "all"):
        bench_jobs(args.model, args.input, args.jobs, args.rounds, args.limit)


if __name__ == "__main__":
    main()
