"""Dense contextual arc scores (issue 14, item 1): train a G+S parser (no labeler) on en_ewt
train, with the shipped recipe's contextual classes (layer 3), and report dev UAS per epoch.

    python benchmarks/experiments/dense_variant.py OUT.json EPOCHS [--slice N] [--save M.npz]
        [--treebank CODE] [field=value ...]

``--treebank`` trains on another shared treebank's train file (dev: its dev file);
``context_layer=0`` turns the contextual classes off; ``model=gsh`` trains the head-bigram model.

``field=value`` are settings of ``depparse.train`` (``dense_layer=3``, ``dense_rank=16``,
``dense_scale=2`` ...); ``--slice N`` trains on the first N training sentences only (the
screening protocol).  Dev: all of en_ewt dev, K = 1000 (``dev_max_iter``).  OUT.json gets the
settings, the per-epoch history and the finished model's dev UAS; the log goes to stderr.
"""
import dataclasses
import json
import logging
import time

from _common import corpus, parser, settings, use_code

ap = parser(__doc__)
ap.add_argument("out")
ap.add_argument("epochs", type=int)
ap.add_argument("config", nargs="*")
ap.add_argument("--slice", type=int, default=0, help="first N training sentences (0: all)")
ap.add_argument("--save", help="also write the model here")
ap.add_argument("--treebank", default="en_ewt", help="shared treebank code (default en_ewt)")
args = ap.parse_intermixed_args()
use_code(args)
import depparse  # noqa: E402
import depparse.config  # noqa: E402

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
kw = settings(args.config)
# the parser alone: no tagger either, where this depparse trains one by default
if "tagger" in {f.name for f in dataclasses.fields(depparse.config.TrainConfig)}:
    kw.setdefault("tagger", False)
kw.setdefault("context_layer", 3)
train = depparse.read_conllu(corpus("train", args.treebank))
if args.slice:
    train = train[:args.slice]
t0 = time.perf_counter()
m = depparse.train(train, corpus("dev", args.treebank), epochs=args.epochs,
                   labeler_epochs=0, tokenizer=False, progress=False, **{"model": "gs", **kw})
seconds = time.perf_counter() - t0
if args.save:
    m.save(args.save)
epochs = [h for h in m.info["history"] if "epoch" in h]
out = {"treebank": args.treebank, "settings": kw, "slice": args.slice, "epochs": args.epochs,
       "seconds": seconds,
       "dev_uas": [round(h["dev_uas"], 2) for h in epochs],
       "train_seconds": [round(h["train_seconds"], 1) for h in epochs],
       "final_dev": m.info.get("final_dev"), "history": m.info["history"]}
with open(args.out, "w") as f:
    json.dump(out, f, indent=1)
print(json.dumps({k: out[k] for k in ("settings", "slice", "dev_uas", "train_seconds")}))
