"""Stacked G+S parsing (Martins et al. 2008) on en_ewt; needs stacking.patch in --code.

    python stacking.py --code WORKTREE --level0 LEVEL0.npz WORKDIR

Level 0: the unpatched G+S model (LEVEL0.npz, e.g. from train_variant.py with the measured
commit) parses dev and test; the training trees are parsed by 4 level-0 models trained on
the other three quarters (jackknifing).  Level 1: G+S with the stacking templates, which
see the level-0 tree.  Prints the dev UAS per epoch (log) and the final dev/test UAS.
"""
import logging
import pickle
from pathlib import Path

import numpy as np
from _common import corpus, parser, uas, use_code

ap = parser(__doc__)
ap.add_argument("--level0", required=True)
ap.add_argument("workdir")
ap.add_argument("--folds", type=int, default=4)
args = ap.parse_args()
use_code(args)
import depparse  # noqa: E402
import depparse.learn.perceptron as P  # noqa: E402
from depparse.conllu_io import read_conllu  # noqa: E402
from depparse.model import Model  # noqa: E402
from depparse.parser import Parser  # noqa: E402

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
work = Path(args.workdir)
work.mkdir(parents=True, exist_ok=True)
tr = read_conllu(corpus("train"))
splits = {s: read_conllu(corpus(s)) for s in ("dev", "test")}


def cached(name, fn):
    p = work / name
    if not p.exists():
        p.write_bytes(pickle.dumps(fn()))
    return pickle.loads(p.read_bytes())


# level-0 trees (without stacking features, the patched code is the plain model)
level0 = Parser(Model.load(args.level0))
h0_eval = {}
for split, sents in splits.items():
    h0_eval[split] = cached(f"h0_{split}.pkl",
                            lambda sents=sents: [r.heads for r in level0.engine.parse_heads(sents)])
fold = np.random.default_rng(12345).permutation(len(tr)) % args.folds
h0_train = {}
for f in range(args.folds):
    def run(f=f):
        rest = [s for s, x in zip(tr, fold, strict=True) if x != f]
        mine = [s for s, x in zip(tr, fold, strict=True) if x == f]
        m = depparse.train(rest, None, model="gs", epochs=8, labeler_epochs=0, progress=False)
        rs = Parser(m).engine.parse_heads(mine)
        return {int(i): r.heads for i, r in zip(np.flatnonzero(fold == f), rs, strict=True)}
    h0_train.update(cached(f"h0_fold{f}.pkl", run))
for i, s in enumerate(tr):
    P.H0[id(s)] = h0_train[i]
for s, h in zip(splits["dev"], h0_eval["dev"], strict=True):
    P.H0[id(s)] = h
m = depparse.train(tr, splits["dev"], model="gs", epochs=8, labeler_epochs=0, progress=False)
p = Parser(m)
for split, sents in splits.items():
    h1 = []
    for s, h0 in zip(sents, h0_eval[split], strict=True):
        e = m.vocab.encode(s)
        e.h0 = h0
        h1.append(p.engine.decode(e).heads)
    print(f"{split}: level-0 UAS {uas(h0_eval[split], sents):.2f}, "
          f"level-1 UAS {uas(h1, sents):.2f}")
