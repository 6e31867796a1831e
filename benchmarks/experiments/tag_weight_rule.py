"""The tag weight of the experts' grid chosen by dev UPOS, not dev LAS (issue 48: is_modern's
rebuild lost a point of test UPOS when the grid, choosing by LAS, took the tag weight 0).

Reads the grids every shipped model keeps in its training record (``info["expert_weights"]
["grid"]``: dev UPOS, UAS and LAS of each tag, arc and label weight, tags predicted) and prints
what each rule picks there: by LAS alone (:func:`depparse.learn.devscore._best`, the rule
before) and the tag weight by UPOS, then the rest by LAS (:func:`_best_tagged`, the rule now).
Nothing is parsed: the rows are the grid's own measurements (dev; the choice and the score on
the same sentences, for both rules alike).

    python benchmarks/experiments/tag_weight_rule.py
    python benchmarks/experiments/tag_weight_rule.py --measure 2,3,4,6,8,12 ko mr ...

``--measure W LANG...``: each shipped model's tagger alone on its dev file (the held-out
split ``make model`` uses where there is none) with the tags blanked, its dev UPOS for each
tag weight in ``W`` (the stored networks; nothing but tagging).
"""
import argparse
import glob
import sys

import numpy as np
from _common import REPO

from depparse.config import ModelConfig
from depparse.learn.devscore import _best, _best_tagged
from depparse.model import Model


def measure(weights, langs):
    sys.path.insert(0, str(REPO / "benchmarks"))
    from make_model import SHIPPED, train_dev
    from real_input import blank_tags

    from depparse.inference.parser import Parser

    for lang in langs:
        _, dv, _ = train_dev(SHIPPED[lang])
        code = SHIPPED[lang]["treebank"]
        p = Parser(Model.load(REPO / "models" / f"{code}_gs.npz"))
        blank = blank_tags(dv)
        cells = []
        for w in weights:
            p.engine.set_experts(tag=w)
            tagged = p.tag(blank, ("UPOS", "XPOS", "FEATS", "LEMMA"))
            pairs = [(x, y) for g, s in zip(dv, tagged, strict=True)  # per word, not aligned
                     for x, y in zip(g.upos, s.upos, strict=True)]
            cells.append(f"{100 * sum(x == y for x, y in pairs) / len(pairs):.2f}")
        print(f"| {code} | " + " | ".join(cells) + " |", flush=True)


ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--measure", metavar="W", default=None)
ap.add_argument("langs", nargs="*")
args = ap.parse_args()
if args.measure:
    ws = [float(x) for x in args.measure.split(",")]
    print("| treebank | " + " | ".join(f"{w:g}" for w in ws) + " |")
    print("|---|" + "---|" * len(ws))
    measure(ws, args.langs)
    sys.exit(0)


def key(r):
    return (r["tag_weight"], r.get("arc_weight", 1.0), r["label_weight"])


print("| model | by LAS: weights | UPOS | LAS | tag weight by UPOS: weights | UPOS | LAS | "
      "ΔUPOS | ΔLAS |")
print("|---|---|---|---|---|---|---|---|---|")
deltas = []
d0 = ModelConfig()  # ties go to the defaults, as they did in the grid
for f in sorted(glob.glob(str(REPO / "models" / "*_gs.npz"))):
    m = Model.load(f)
    ew = m.info.get("expert_weights") or {}
    if "grid" not in ew or "tag_upos" in ew:  # a record of the fast grid (tag_upos) parsed
        continue                               # only the best UPOS's tag weights: no LAS rule
    rows = [dict(r, arc_weight=r.get("arc_weight", 1.0)) for r in ew["grid"]]
    own = (d0.learned_tag_weight, d0.learned_arc_weight, d0.learned_label_weight)
    old, new = _best(rows, key, own), _best_tagged(rows, own)
    d = (new["upos"] - old["upos"], new["las"] - old["las"])
    deltas.append(d)
    w = lambda r: "{:g} / {:g} / {:g}".format(*key(r))  # noqa: E731
    print(f"| {m.info.get('treebank', f.split('/')[-1][:-7])} | {w(old)} | {old['upos']:.2f} | "
          f"{old['las']:.2f} | {w(new)} | {new['upos']:.2f} | {new['las']:.2f} | {d[0]:+.2f} | "
          f"{d[1]:+.2f} |")
mean = np.mean(deltas, axis=0)
print(f"\n{len(deltas)} models: mean ΔUPOS {mean[0]:+.2f}, mean ΔLAS {mean[1]:+.2f}, "
      f"largest LAS loss {min(d[1] for d in deltas):+.2f}")
