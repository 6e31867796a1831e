"""Train the labeler on en_ewt train (gold trees) and label dev: on the parser's dev trees
(a parsed CoNLL-U file) and on the gold dev trees.

    python labeler_variant.py --code WORKTREE PARSED_DEV.conllu

The vocabulary is the shipped model's (models/en_ewt_gs.npz).
"""
import json

import numpy as np
from _common import REPO, corpus, parser, use_code

ap = parser(__doc__)
ap.add_argument("parsed_dev")
args = ap.parse_args()
use_code(args)
from depparse.conllu_io import read_conllu  # noqa: E402
from depparse.evaluate import evaluate  # noqa: E402
from depparse.learn.labeler import label_arcs, train_labeler  # noqa: E402
from depparse.sentence import Vocabularies  # noqa: E402

z = np.load(REPO / "models" / "en_ewt_gs.npz")
v = Vocabularies.from_json(json.loads(z["meta"].tobytes())["vocab"])
tr, gd = read_conllu(corpus("train")), read_conllu(corpus("dev"))
bits = 20
w = train_labeler([v.encode(s) for s in tr], [np.asarray(s.heads) for s in tr],
                  [s.rels for s in tr], v, bits=bits, epochs=8)
mask = np.uint64((1 << bits) - 1)
for name, src in (("parser trees", read_conllu(args.parsed_dev)), ("gold trees", gd)):
    out = []
    for p in src:
        h = np.asarray(p.heads, dtype=np.int64)
        ids = label_arcs(v.encode(p), h, w, mask, len(v.deprel))
        out.append(p.with_parse(h, [""] + [v.deprel.items[i] for i in ids[1:]]))
    sc = evaluate(gd, out)
    print(f"{name}: UAS {sc.uas:.2f}, LAS {sc.las:.2f}")
