"""The longest sentences of a treebank's test raw text (the model's own tokenizer and sentence
splitter) and how long each takes to decode and prove, under a per-sentence time limit.

    python benchmarks/experiments/long_sentence.py MODEL.npz --treebank de_gsd --seconds 60

Prints, for each of the ``--top`` longest sentences: words, proved or not, the certificate,
branch-and-bound nodes, dual-decomposition iterations and wall seconds.
"""
import time

from _common import corpus, parser, use_code

ap = parser(__doc__)
ap.add_argument("model")
ap.add_argument("--treebank", default="de_gsd")
ap.add_argument("--seconds", type=float, default=60.0, help="time limit a sentence (0: none)")
ap.add_argument("--top", type=int, default=3)
args = ap.parse_args()
use_code(args)
from depparse.conllu import read_conllu  # noqa: E402
from depparse.inference.parser import Parser  # noqa: E402
from depparse.learn.tokenizer_training import treebank_text  # noqa: E402
from depparse.model import Model  # noqa: E402

p = Parser(Model.load(args.model), path=args.model)
sents = list(p.read_text(treebank_text(read_conllu(corpus("test", args.treebank))),
                         source="<raw>"))
longest = sorted(range(len(sents)), key=lambda i: sents[i].n)[-args.top:]
print(f"{len(sents)} sentences; the longest {[sents[i].n for i in longest]} words")
for i in longest:
    t0 = time.perf_counter()
    (_, r), = list(p.parse_results([sents[i]], time_limit=args.seconds))
    print(f"{sents[i].n} words: proved {r.optimal}, certificate {r.certificate}, nodes "
          f"{r.nodes}, iterations {r.iterations}, {time.perf_counter() - t0:.1f} s", flush=True)
