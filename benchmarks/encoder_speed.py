"""Encoder words/s over every sentence of en_ewt test: one sentence at a time and batched.

    python benchmarks/encoder_speed.py [--old REV] [--repeat 3] [--max-rows 512]
    python benchmarks/encoder_speed.py --grid 128,256,512,1024,2048
    python benchmarks/encoder_speed.py --check [--old REV]

One process, after a warm-up (the first 100 sentences); prints the best of ``--repeat`` runs,
by wall-clock time and by the process's CPU time (the steadier of the two on a busy machine),
of ``word_vectors(3, forms)`` sentence by sentence and of ``batch_word_vectors(3, all
forms)`` (``--max-rows`` rows per forward pass).  ``--old REV`` also times
depparse/encoding/minilm.py of commit REV (read with git) sentence by sentence, e.g. ``--old
a117308`` for the hand-written tokenizer and safetensors reader; the variants run in turns
(old, new, batched, old, ...), so that all see the same load on a shared machine.
``--grid`` times the batched encoder for several ``max_rows``.

``--check``: every en_ewt dev and test sentence (and a 1,200-word one, three windows), batched
(the default pass size, and in reverse order with 97 rows per pass) against one at a time:
the number of sentences whose vectors are not bit for bit the same (must be 0); with ``--old
REV``, also one at a time against REV's encoder.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def _forms(part):
    from depparse.conllu import read_conllu
    from depparse.paths import treebank_file

    return [list(s.forms[1:]) for s in read_conllu(treebank_file("en_ewt", part))]


def _differ(a, b):
    """Sentences whose vectors are not the same bytes; the largest absolute difference."""
    import numpy as np

    bad = [i for i, (x, y) in enumerate(zip(a, b, strict=True))
           if x.shape != y.shape or x.tobytes() != y.tobytes()]
    worst = max((float(np.abs(a[i] - b[i]).max()) for i in bad
                 if a[i].shape == b[i].shape), default=0.0)
    return len(bad), worst


def check(args, old):
    from depparse.encoding import minilm

    forms = _forms("dev") + _forms("test") + [["word"] * 1200]
    words = sum(len(f) for f in forms)
    t = time.process_time()
    alone = [minilm.word_vectors(args.layer, f) for f in forms]
    print(f"{len(forms)} sentences, {words} words; one at a time: "
          f"{time.process_time() - t:.1f} CPU-s", flush=True)
    runs = {f"batched ({args.max_rows} rows per pass)":
            lambda: minilm.batch_word_vectors(args.layer, forms, args.max_rows),
            "batched, reverse order, 97 rows per pass":
            lambda: minilm.batch_word_vectors(args.layer, forms[::-1], 97)[::-1]}
    if old is not None:
        runs[f"one at a time, minilm.py of {args.old}"] = \
            lambda: [old.word_vectors(args.layer, f) for f in forms]
    failed = False
    for label, fn in runs.items():
        t = time.process_time()
        got = fn()
        n, worst = _differ(got, alone)
        failed |= n > 0
        print(f"{label} against one at a time: {n} of {len(forms)} sentences differ "
              f"(largest difference {worst:.3g}); {time.process_time() - t:.1f} CPU-s",
              flush=True)
    return 1 if failed else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", metavar="REV")
    ap.add_argument("--layer", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-rows", type=int, default=None)
    ap.add_argument("--grid", metavar="ROWS,ROWS,...")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    from depparse.encoding import minilm

    if args.max_rows is None:
        args.max_rows = minilm.MAX_ROWS
    old = None
    if args.old:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from encoder_tokenizer_check import load_old

        old = load_old(args.old)
    if args.check:
        return check(args, old)
    forms = _forms("test")
    words = sum(len(f) for f in forms)
    layer = args.layer

    def alone(mod):
        return lambda: [mod.word_vectors(layer, f) for f in forms]

    variants = {}
    if old is not None:
        variants[f"minilm.py of {args.old}, one sentence at a time"] = alone(old)
    if args.grid:
        for rows in (int(r) for r in args.grid.split(",")):
            variants[f"batched, {rows} rows per pass"] = \
                lambda rows=rows: minilm.batch_word_vectors(layer, forms, rows)
    else:
        variants["minilm.py, one sentence at a time"] = alone(minilm)
        variants[f"minilm.py, batched ({args.max_rows} rows per pass)"] = \
            lambda: minilm.batch_word_vectors(layer, forms, args.max_rows)
    for f in forms[:100]:  # warm-up
        minilm.word_vectors(layer, f)
        if old is not None:
            old.word_vectors(layer, f)
    wall = dict.fromkeys(variants, float("inf"))
    cpu = dict(wall)
    for _ in range(args.repeat):
        for label, fn in variants.items():
            t, c = time.perf_counter(), time.process_time()
            fn()
            wall[label] = min(wall[label], time.perf_counter() - t)
            cpu[label] = min(cpu[label], time.process_time() - c)
    for label in variants:
        print(f"{label}: {words} words, {len(forms)} sentences, {wall[label]:.2f} s, "
              f"{words / wall[label]:,.0f} words/s; CPU {cpu[label]:.2f} s, "
              f"{words / cpu[label]:,.0f} words/CPU-s (layer {layer}, best of "
              f"{args.repeat})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
