"""Soft label constraints (issue 14, item 4): penalties learned on jackknifed en_ewt train
labels, measured on dev with the shipped model's labeler, on the parser's dev trees and on the
gold dev trees.

    python soft_constraints.py [--code DIR] [--rates R ...] [--folds F] [--penalty-epochs P]

Prints the dev LAS without and with the constraints for each rate, the heads decoded by dual
decomposition and the share of them proved optimal, and the learned penalties.
"""
import logging
import time

import numpy as np
from _common import REPO, corpus, parser, use_code

ap = parser(__doc__)
ap.add_argument("--rates", type=float, nargs="+", default=[0.03, 0.1, 0.3, 1.0])
ap.add_argument("--folds", type=int, default=5)
ap.add_argument("--penalty-epochs", type=int, default=5)
ap.add_argument("--max-iter", type=int, default=100)
args = ap.parse_args()
use_code(args)
from depparse.conllu import read_conllu  # noqa: E402
from depparse.evaluate import evaluate  # noqa: E402
from depparse.inference.labeling import Labeler  # noqa: E402
from depparse.inference.parser import Parser  # noqa: E402
from depparse.learn.labeler import fit_label_constraints, held_out_label_scores  # noqa: E402
from depparse.model import Model  # noqa: E402

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
model = Model.load(REPO / "models" / "en_ewt_gs.npz")
v = model.vocab
train, dev = read_conllu(corpus("train")), read_conllu(corpus("dev"))
t0 = time.perf_counter()
enc_train = [v.encode(s, x) for s, x in zip(train, v.iter_context_vectors(train), strict=True)]
enc_dev = [v.encode(s, x) for s, x in zip(dev, v.iter_context_vectors(dev), strict=True)]
print(f"encoded train and dev in {time.perf_counter() - t0:.0f} s", flush=True)
p = Parser(model)
pred_heads = [p.engine.decode(e, keep=p.engine.keep_mask(e)).heads for e in enc_dev]
trees = {"parser trees": pred_heads, "gold trees": [np.asarray(s.heads) for s in dev]}


def las(labeler):
    res = {}
    for name, hs in trees.items():
        out = [s.with_parse(h, labeler.label_strings(e, h))
               for s, e, h in zip(dev, enc_dev, hs, strict=True)]
        sc = evaluate(dev, out)
        res[name] = (sc.uas, sc.las)
    return res


base = las(p.engine.labeler)
print("no constraints: " + "; ".join(f"{k}: UAS {u:.2f} LAS {a:.2f}" for k, (u, a) in base.items()))
t0 = time.perf_counter()
held = held_out_label_scores(enc_train, [np.asarray(s.heads) for s in train],
                             [s.rels for s in train], v, bits=model.config.labeler_bits,
                             epochs=8, folds=args.folds)
print(f"jackknifed label scores in {time.perf_counter() - t0:.0f} s", flush=True)
for rates in [[r] for r in args.rates] + [args.rates]:
    t0 = time.perf_counter()
    comp = fit_label_constraints(held, v.deprel.items, penalty_epochs=args.penalty_epochs,
                                 rates=rates, max_iter=args.max_iter,
                                 require_gain=len(rates) > 1)
    t_learn = time.perf_counter() - t0
    lab = Labeler(v, model.labeler, model.config.labeler_bits, comp)
    t0 = time.perf_counter()
    res = las(lab)
    t_lab = time.perf_counter() - t0
    dd, proved, steps = (int(x) for x in lab.stats)
    held_out = comp.meta["held_out_wrong"]
    dev_las = "; ".join(f"{k}: LAS {a:.2f} ({a - base[k][1]:+.2f})" for k, (_, a) in res.items())
    print(f"rates {rates} (chosen {comp.meta['rate']}, held-out labels wrong {held_out}): "
          f"{dev_las}; heads by dual decomposition {dd} ({proved} proved, {steps} steps); "
          f"learning {t_learn:.0f} s, labelling both {t_lab:.1f} s", flush=True)
    rho = comp.arrays["rho"]
    for i in np.argsort(-rho):
        if rho[i] > 0:
            print(f"    {rho[i]:8.3f}  {comp.meta['names'][i]}")
