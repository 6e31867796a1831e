"""Encoder words/s: ``word_vectors(3, s.forms[1:])`` over every sentence of en_ewt test.

    python benchmarks/encoder_speed.py [--old REV] [--repeat 3]

One process, after a warm-up (the first 100 sentences); prints the best of ``--repeat`` runs,
by wall-clock time and by the process's CPU time (the steadier of the two on a busy machine).
``--old REV`` also times depparse/encoding/minilm.py of commit REV (read with git), e.g.
``--old a117308`` for the hand-written tokenizer and safetensors reader, in turns with
today's (old, new, old, new, ...), so that both see the same load on a shared machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", metavar="REV")
    ap.add_argument("--layer", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    from depparse.conllu import read_conllu
    from depparse.encoding import minilm
    from depparse.paths import treebank_file

    variants = {"minilm.py": minilm}
    if args.old:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from encoder_tokenizer_check import load_old

        variants = {f"minilm.py of {args.old}": load_old(args.old), **variants}
    sents = read_conllu(treebank_file("en_ewt", "test"))
    forms = [list(s.forms[1:]) for s in sents]
    words = sum(len(f) for f in forms)
    for mod in variants.values():
        for f in forms[:100]:
            mod.word_vectors(args.layer, f)
    wall = dict.fromkeys(variants, float("inf"))
    cpu = dict(wall)
    for _ in range(args.repeat):
        for label, mod in variants.items():
            t, c = time.perf_counter(), time.process_time()
            for f in forms:
                mod.word_vectors(args.layer, f)
            wall[label] = min(wall[label], time.perf_counter() - t)
            cpu[label] = min(cpu[label], time.process_time() - c)
    for label in variants:
        print(f"{label}: {words} words, {len(sents)} sentences, {wall[label]:.2f} s, "
              f"{words / wall[label]:,.0f} words/s; CPU {cpu[label]:.2f} s, "
              f"{words / cpu[label]:,.0f} words/CPU-s (layer {args.layer}, best of "
              f"{args.repeat})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
