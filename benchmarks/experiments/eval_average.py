"""Dev/test UAS of one parser model, or of the average of several models' weights.

    python eval_average.py --code WORKTREE A.npz[,B.npz,...] dev,test

All models must share vocabulary and hashing (trained by the same code on the same data);
the first model's pruner and vocabulary are used.  Averaging the weights of linear models is
the same as summing their scores (a "model soup").
"""
import numpy as np
from _common import corpus, parser, uas, use_code

ap = parser(__doc__)
ap.add_argument("models")
ap.add_argument("splits")
args = ap.parse_args()
use_code(args)
from depparse.conllu_io import read_conllu  # noqa: E402
from depparse.model import Model  # noqa: E402
from depparse.parser import Parser  # noqa: E402

ms = [Model.load(p) for p in args.models.split(",")]
m = ms[0]
m.weights = sum(x.weights.astype(np.float64) for x in ms) / len(ms)
for split in args.splits.split(","):
    sents = read_conllu(corpus(split))
    rs = Parser(m).engine.parse_heads(sents)
    cert = 100 * np.mean([r.certificate for r in rs])
    print(f"{args.models} {split}: UAS {uas([r.heads for r in rs], sents):.2f}, "
          f"certificates {cert:.2f}%")
