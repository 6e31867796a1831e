"""multilingual-e5-small's forward pass against this machine's BLAS peak, in one run.

    python benchmarks/e5_speed.py [--treebank en_ewt] [--split test] [--layers 4,8,12]
        [--limit 600] [--json benchmarks/results/e5_speed.json]

One BLAS thread throughout (as the parser runs the encoder: ``one_blas_thread``).  First the
reference: single-precision matrix products of the shapes the encoder's dense layers have
(1024 rows of 384 x 384 and 384 x 1536) and a large square one (1024^3), their GFLOP/s the
best of 5.  Then the encoder (:meth:`~depparse.encoding.e5.E5.iter_layer_vectors`, mean
pooling, up to ``MAX_ROWS`` pieces per pass) over the treebank's sentences up to each of
``--layers``: words/s and its floating-point rate, counting ``2 m n k`` per product (the six
dense products per piece, ``2 (4 H^2 + 2 H F)`` per layer; attention ``4 T H`` per piece and
layer for a window of ``T`` pieces) and nothing else (LayerNorm, GELU, the softmax and the
embeddings' dequantisation are the rest of the time).  Prints the rate as a fraction of the
large product's.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from depparse.conllu import read_conllu
from depparse.encoding.e5 import get_e5
from depparse.encoding.transformer import one_blas_thread
from depparse.paths import treebank_file


def gemm_rate(m, k, n, reps=5) -> float:
    """GFLOP/s of float32 (m, k) @ (k, n), the best of ``reps``."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2.0 * m * n * k / best / 1e9


def encoder_flops(enc, sentences, depth) -> float:
    """The dense products' and attention's floating-point operations of ``sentences`` up to
    layer ``depth`` (module docstring)."""
    H, F = enc.dim, enc.ff
    total = 0.0
    for forms in sentences:
        ids, _ = enc.piece_ids(forms)
        for s in range(0, max(len(ids), 1), enc.max_pieces):
            T = min(enc.max_pieces, len(ids) - s) + 2
            total += depth * T * (2.0 * (4 * H * H + 2 * H * F) + 4.0 * T * H)
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--split", default="test")
    ap.add_argument("--layers", default="4,8,12")
    ap.add_argument("--limit", type=int, default=600, help="sentences (0: all)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    sents = [s.forms[1:] for s in read_conllu(treebank_file(args.treebank, args.split))]
    if args.limit:
        sents = sents[:args.limit]
    words = sum(len(s) for s in sents)
    enc = get_e5(12)
    out = {"treebank": args.treebank, "split": args.split, "sentences": len(sents),
           "words": words, "rows": []}
    with one_blas_thread():
        peak = gemm_rate(1024, 1024, 1024)
        shapes = {f"{m}x{k}x{n}": gemm_rate(m, k, n) for m, k, n in
                  ((1024, 384, 384), (1024, 384, 1536), (1024, 1536, 384))}
    out["gemm_gflops"] = {"1024x1024x1024": peak, **shapes}
    print(f"sgemm, one thread: 1024^3 {peak:.1f} GFLOP/s; "
          + ", ".join(f"{k} {v:.1f}" for k, v in shapes.items()))
    for depth in (int(x) for x in args.layers.split(",")):
        flops = encoder_flops(enc, sents, depth)
        t0 = time.perf_counter()
        c0 = time.process_time()
        for _ in enc.iter_layer_vectors(sents, (depth,)):
            pass
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0
        rate = flops / cpu / 1e9
        out["rows"].append({"layers": depth, "wall_s": wall, "cpu_s": cpu,
                            "words_per_cpu_s": words / cpu, "gflops": rate,
                            "of_peak": rate / peak})
        print(f"layers 1-{depth}: {words / cpu:,.0f} words/CPU-s ({wall:.1f} s wall), "
              f"{rate:.1f} GFLOP/s = {rate / peak:.0%} of the 1024^3 sgemm's")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
