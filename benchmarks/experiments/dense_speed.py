"""Parsing speed of models with and without dense arc scores, measured back to back.

    python benchmarks/experiments/dense_speed.py MODEL_A.npz MODEL_B.npz [--split dev] [--rounds 2]

Each round parses the whole split with A, then with B (one process, ``Parser.parse``: encode,
prune, score, decode, label; after a warm-up of 20 sentences each), so that both see the same
machine load; prints words/s per round and the UAS of each model.
"""
import time

from _common import corpus, parser, uas, use_code

ap = parser(__doc__)
ap.add_argument("models", nargs=2)
ap.add_argument("--split", default="dev")
ap.add_argument("--rounds", type=int, default=2)
args = ap.parse_args()
use_code(args)
import depparse  # noqa: E402

sents = depparse.read_conllu(corpus(args.split))
words = sum(s.n for s in sents)
parsers = [depparse.load(m) for m in args.models]
for p in parsers:
    p.parse(sents[:20])
for r in range(args.rounds):
    for name, p in zip(args.models, parsers, strict=True):
        t0 = time.perf_counter()
        out = p.parse(sents)
        dt = time.perf_counter() - t0
        print(f"round {r + 1}: {name}: {words / dt:.0f} words/s ({dt:.1f} s), "
              f"UAS {uas([s.heads for s in out], sents):.2f}", flush=True)
