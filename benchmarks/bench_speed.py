"""End-to-end parsing speed in one process on en_ewt test: read CoNLL-U, parse, write CoNLL-U.

Times each model after a warm-up (kernels loaded, first sentences parsed), reports words/s
against the targets of the Learning issue (MST >= 10,000 words/s, G+S >= 3,000 words/s) and
the decoding-only share.  Models: ``--mst`` and ``--gs`` files (default: the table1 models
in benchmarks/results/models/, and the shipped models/en_ewt_gs.npz for G+S).

Usage: ``python benchmarks/bench_speed.py [--mst M.npz] [--gs M.npz] [--max-iter K]``
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = {"mst": 10000, "sib": None, "gs": 3000}


def bench(model_path, test_path, max_iter=None, repeat=1):
    from depparse.api import load
    from depparse.conllu import read_conllu, write_conllu

    p = load(model_path)
    p.parse(read_conllu(test_path)[:20])  # warm-up
    best = None
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            sents = read_conllu(test_path)
            res = p.parse_results(sents, max_iter=max_iter, trace=False)
            write_conllu([s for s, _ in res], Path(d) / "out.conllu")
            dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    words = sum(s.n for s in sents)
    cert = sum(r.certificate for _, r in res) / len(res)
    return p.config.model, words, best, cert


def main(argv=None):
    from depparse.paths import models_dir, treebank_file

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mst", default=str(HERE / "results" / "models" / "en_ewt_mst.npz"))
    ap.add_argument("--gs", default=str(models_dir() / "en_ewt_gs.npz"))
    ap.add_argument("--max-iter", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args(argv)
    test = treebank_file("en_ewt", "test")
    if not test.exists():
        print(f"{test} not found (set DEPPARSE_CORPORA)", file=sys.stderr)
        return 2
    print("| model | words | seconds | words/s | target | ratio | Cert% |")
    print("|---|---|---|---|---|---|---|")
    for path in (args.mst, args.gs):
        if not Path(path).exists():
            print(f"| {path} | (missing: run make table1 / make model) |||||", flush=True)
            continue
        kind, words, dt, cert = bench(path, test, args.max_iter, args.repeat)
        tgt = TARGET.get(kind)
        ratio = f"{words / dt / tgt:.2f}x" if tgt else "—"
        print(f"| {kind} ({Path(path).name}) | {words} | {dt:.2f} | {words / dt:.0f} | "
              f"{tgt or '—'} | {ratio} | {100 * cert:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
