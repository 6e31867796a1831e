"""Parser trained on gold tags vs on jackknifed predicted tags (issue 12, item 3).

    python tag_training.py OUT_DIR [--epochs 8]

Trains the shipped recipe (G+S, contextual classes of MiniLM layer 3, labeler, tagger) twice
on en_ewt train, with ``tag_training="gold"`` and ``"jackknife"``, and scores both on en_ewt
dev in the two gold-tokenization settings: the gold tags, and the tags the model's own tagger
predicts (every LEMMA/UPOS/XPOS/FEATS replaced, as ``depparse parse --retag``).  Models are
written to OUT_DIR; the scores are printed as a Markdown table.
"""
import logging
import sys
import time
from pathlib import Path

from _common import corpus, parser, use_code

ap = parser(__doc__)
ap.add_argument("out")
ap.add_argument("--epochs", type=int, default=8)
ap.add_argument("--modes", default="gold,jackknife")
args = ap.parse_args()
use_code(args)
import depparse  # noqa: E402
from depparse.conllu import read_conllu  # noqa: E402
from depparse.evaluate import evaluate  # noqa: E402

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
out = Path(args.out)
out.mkdir(parents=True, exist_ok=True)
train, dev = read_conllu(corpus("train")), read_conllu(corpus("dev"))
rows = []
for mode in args.modes.split(","):
    path = out / f"{mode}.npz"
    t0 = time.perf_counter()
    if not path.exists():
        m = depparse.train(train, dev, model="gs", context_layer=3, epochs=args.epochs,
                           tag_training=mode, tokenizer=False, progress=False)
        m.save(path)
    p = depparse.load(path)
    for setting, retag in (("gold tags", False), ("predicted tags", True)):
        sc = evaluate(dev, p.parse(dev, retag=retag))
        rows.append((mode, setting, sc.uas, sc.las))
        print(f"{mode} / {setting}: UAS {sc.uas:.2f} LAS {sc.las:.2f}", flush=True)
    print(f"{mode}: {time.perf_counter() - t0:.0f} s", flush=True)
print("| parser trained on | dev tags | UAS | LAS |\n|---|---|---|---|")
for mode, setting, uas, las in rows:
    print(f"| {mode} | {setting} | {uas:.2f} | {las:.2f} |")
