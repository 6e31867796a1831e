"""Is the pruner what holds back the small treebanks?  G+S (no labeler) trained on the first
80% of a treebank's dev file (da_ddt, nl_alpino, sv_talbanken have no train file here), the
other 20% parsed with the pruning of the training and two looser ones: gold-arc recall, heads
kept per word and UAS.

    python small_candidates.py [--code DIR] CODE
"""
import numpy as np
from _common import corpus, parser, use_code

ap = parser(__doc__)
ap.add_argument("treebank")
args = ap.parse_args()
use_code(args)
import depparse  # noqa: E402
from depparse.conllu import read_conllu  # noqa: E402
from depparse.inference.parser import Parser  # noqa: E402

code = args.treebank
sents = read_conllu(corpus("dev", code))
cut = int(len(sents) * 0.8)
tr, ho = sents[:cut], sents[cut:]
m = depparse.train(tr, None, model="gs", labeler_epochs=0, tokenizer=False, progress=False,
                   tagger=False)
p = Parser(m)
words = sum(s.n for s in ho)
for thr, mh in [(1e-5, 20), (1e-6, 30), (1e-7, 50)]:
    p.set_pruning(thr, mh)
    encs = [m.vocab.encode(s) for s in ho]
    rec = 0
    kept = 0
    for e, s in zip(encs, ho, strict=True):
        k = p.engine.keep_mask(e)
        rec += int(k[np.asarray(s.heads[1:]), np.arange(1, s.n + 1)].sum())
        kept += int(k[:, 1:].sum())
    rs = [p.engine.decode(e) for e in encs]
    right = sum(int((np.asarray(r.heads[1:]) == np.asarray(s.heads[1:])).sum())
                for r, s in zip(rs, ho, strict=True))
    print(f"{code} threshold {thr:g}, at most {mh} heads: recall {100 * rec / words:.2f}%, "
          f"{kept / words:.2f} heads per word, UAS {100 * right / words:.2f}", flush=True)
