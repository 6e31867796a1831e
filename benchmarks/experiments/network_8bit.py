"""The learned network in 8 bits (issue 47/48: model files <= 8 MB): dev UAS/LAS of a shipped
model with its network as the file holds it and after the round trip of the 8-bit store
(:func:`depparse.network.biaffine.stored_params`, then ``restored_params``), in the gold-tags
and the predicted-tags settings (gold tokenization).

    python benchmarks/experiments/network_8bit.py is_modern [--split dev]

A model whose file already holds a version-2 (8-bit) network measures the same on both lines.
"""
import time

from _common import REPO, corpus, parser, use_code

ap = parser(__doc__)
ap.add_argument("treebank", help="a shipped model's treebank code, e.g. is_modern")
ap.add_argument("--split", default="dev")
args = ap.parse_args()
use_code(args)
import sys  # noqa: E402

sys.path.insert(0, str(REPO / "benchmarks"))
from real_input import blank_tags  # noqa: E402

from depparse.conllu import read_conllu  # noqa: E402
from depparse.evaluate import evaluate  # noqa: E402
from depparse.inference.parser import Parser  # noqa: E402
from depparse.model import Model  # noqa: E402
from depparse.network.biaffine import restored_params, stored_params  # noqa: E402

path = f"{args.code}/models/{args.treebank}_gs.npz"
gold = read_conllu(corpus(args.split, args.treebank))
blank = blank_tags(gold)
for variant in ("as stored", "8-bit"):
    p = Parser(Model.load(path), path=path)
    if variant == "8-bit":
        p.engine.learned.params = restored_params(stored_params(p.engine.learned.params))
    t0 = time.perf_counter()
    g = evaluate(gold, p.parse(gold))
    b = evaluate(gold, p.parse(blank))
    print(f"{args.treebank} {variant}: gold tags UAS/LAS {g.metric('UAS').f1:.2f}/"
          f"{g.metric('LAS').f1:.2f}; predicted UPOS {b.metric('UPOS').f1:.2f} UAS/LAS "
          f"{b.metric('UAS').f1:.2f}/{b.metric('LAS').f1:.2f} ({time.perf_counter() - t0:.0f} s)",
          flush=True)
