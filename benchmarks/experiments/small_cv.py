"""Settings for the small treebanks, chosen without their test files: K-fold cross-validation
on a treebank's dev file (da_ddt, nl_alpino, sv_talbanken have no train file here), G+S
(or ``model=gsh`` ...) without labeler, UAS over all held-out words of the K folds.

    python small_cv.py [--code DIR] [--folds 5] [--extra CODE:SPLIT[:N] ...] [--test] CODE
        [field=value ...]

``--extra`` adds another shared treebank's file (its first N sentences) to the training data
of every fold (related languages: da_ddt and sv_talbanken ...).  ``--test``: the final check
of a variant the cross-validation chose, once: train on all of the dev file (+ ``--extra``)
and report the UAS on the treebank's test file instead.
"""
import json
import time

import numpy as np
from _common import corpus, parser, settings, use_code

ap = parser(__doc__)
ap.add_argument("treebank")
ap.add_argument("config", nargs="*")
ap.add_argument("--folds", type=int, default=5)
ap.add_argument("--extra", nargs="*", default=[], help="CODE:SPLIT[:N] added to every fold")
ap.add_argument("--test", action="store_true", help="train on all of dev, score on test")
args = ap.parse_args()
use_code(args)
import depparse  # noqa: E402
from depparse.conllu import read_conllu  # noqa: E402
from depparse.inference.parser import Parser  # noqa: E402

kw = settings(args.config)
sents = read_conllu(corpus("dev", args.treebank))
extra = []
for item in args.extra:
    code, split, *n = item.split(":")
    more = read_conllu(corpus(split, code))
    extra += more[:int(n[0])] if n else more
fold = np.arange(len(sents)) % args.folds
right = words = 0
t0 = time.perf_counter()
splits = [([s for s, g in zip(sents, fold, strict=True) if g != f],
           [s for s, g in zip(sents, fold, strict=True) if g == f]) for f in range(args.folds)]
if args.test:
    splits = [(sents, read_conllu(corpus("test", args.treebank)))]
for tr, ho in splits:
    tr = tr + extra
    m = depparse.train(tr, None, **{"model": "gs", **kw}, labeler_epochs=0, tokenizer=False,
                       progress=False, tagger=False)
    p = Parser(m)
    for r, s in zip(p.engine.parse_heads(ho), ho, strict=True):
        right += int((np.asarray(r.heads[1:]) == np.asarray(s.heads[1:])).sum())
        words += s.n
print(json.dumps({"treebank": args.treebank, "settings": kw, "extra": args.extra,
                  "folds": "test" if args.test else args.folds,
                  "uas": round(100 * right / words, 2), "words": words,
                  "seconds": round(time.perf_counter() - t0)}), flush=True)
