"""Dense contextual label scores (issue 14, item 1, "the same for the labeler"): the labeler
trained on en_ewt train with and without them, measured on dev (the shipped parser's trees
and the gold trees).

    python labeler_dense.py [--code DIR] [--factor K ...] [--epochs E]

The vocabularies, encoder vectors and their standardisation are the shipped model's.
"""
import logging
import time

import numpy as np
from _common import REPO, corpus, parser, use_code

ap = parser(__doc__)
ap.add_argument("--factor", type=float, nargs="+", default=[1.0])
ap.add_argument("--epochs", type=int, default=8)
ap.add_argument("--buckets", type=int, default=2)
ap.add_argument("--no-base", action="store_true", help="skip the sparse-only labeler")
args = ap.parse_args()
use_code(args)
from depparse.conllu import read_conllu  # noqa: E402
from depparse.evaluate import evaluate  # noqa: E402
from depparse.inference.labeling import Labeler  # noqa: E402
from depparse.inference.parser import Parser  # noqa: E402
from depparse.learn.labeler import train_labeler, train_labeler_dense  # noqa: E402
from depparse.model import Model  # noqa: E402

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
model = Model.load(REPO / "models" / "en_ewt_gs.npz")
v, bits = model.vocab, model.config.labeler_bits
train, dev = read_conllu(corpus("train")), read_conllu(corpus("dev"))
enc_train = [v.encode(s, x) for s, x in zip(train, v.iter_context_vectors(train), strict=True)]
enc_dev = [v.encode(s, x) for s, x in zip(dev, v.iter_context_vectors(dev), strict=True)]
p = Parser(model)
trees = {"parser trees": [p.engine.decode(e, keep=p.engine.keep_mask(e)).heads for e in enc_dev],
         "gold trees": [np.asarray(s.heads) for s in dev]}
args_train = (enc_train, [np.asarray(s.heads) for s in train], [s.rels for s in train], v)


def las(labeler):
    return {name: evaluate(dev, [s.with_parse(h, labeler.label_strings(e, h))
                                 for s, e, h in zip(dev, enc_dev, hs, strict=True)]).las
            for name, hs in trees.items()}


t0 = time.perf_counter()
base = {"parser trees": 89.31, "gold trees": 97.75}  # the run below, at 9915932
if not args.no_base:
    w = train_labeler(*args_train, bits=bits, epochs=args.epochs)
    base = las(Labeler(v, w, bits))
print(f"sparse only ({time.perf_counter() - t0:.0f} s): "
      + "; ".join(f"{k} LAS {a:.2f}" for k, a in base.items()), flush=True)
for k in args.factor:
    t0 = time.perf_counter()
    w, ld = train_labeler_dense(*args_train, p.engine.dense, bits=bits, epochs=args.epochs,
                                factor=k, buckets=args.buckets)
    res = las(Labeler(v, w, bits, dense=ld))
    print(f"dense, factor {k}, {args.buckets} buckets ({time.perf_counter() - t0:.0f} s): "
          + "; ".join(f"{n} LAS {a:.2f} ({a - base[n]:+.2f})" for n, a in res.items()),
          flush=True)
