"""The experts' grid with the tag weight chosen by tagging alone, against parsing every tag
weight (issue 48: each model trains in <= 20 minutes; vi_vtb and is_modern took 26).

On a shipped model and its dev data (``make model``'s split), runs the whole grid as the
builds of 2026-12-06 ran it (:func:`depparse.learn.devscore.expert_weight_grid` over every tag
weight, :func:`_best_tagged` on its rows, then the given-tags grid) and
:func:`choose_expert_weights` (each tag weight tagged alone, only the best UPOS's parsed),
one after the other in one process (after a warm-up parse); prints both times and checks
that both choose the same weights.  The model is not changed.

    python benchmarks/experiments/grid_time.py vi is
"""
import sys
import time

from _common import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from make_model import SHIPPED, train_dev  # noqa: E402

from depparse.inference.parser import Parser  # noqa: E402
from depparse.learn.devscore import (  # noqa: E402
    LABEL_WEIGHTS,
    TAG_WEIGHTS,
    _best,
    _best_tagged,
    choose_expert_weights,
    expert_weight_grid,
    given_tags_grid,
)
from depparse.model import Model  # noqa: E402

KEYS = ("tag_weight", "arc_weight", "label_weight", "arc_weight_given", "label_weight_given")


def whole_grid(model, gold, arcs):
    """The choice of the grid that parses every tag weight (the rule of 2026-12-06)."""
    p = Parser(model)
    vectors = list(model.vocab.iter_context_vectors(gold))
    own = (p.engine.tag_weight, p.engine.arc_weight, p.engine.label_weight)
    rows = [{"tag_weight": a, "arc_weight": c, "label_weight": b, "upos": sc.upos,
             "uas": sc.uas, "las": sc.las}
            for a, c, b, sc in expert_weight_grid(p, gold, TAG_WEIGHTS, LABEL_WEIGHTS, vectors,
                                                  arcs)]
    pick = _best_tagged(rows, own)
    given = [{"arc_weight": c, "label_weight": b, "uas": sc.uas, "las": sc.las}
             for c, b, sc in given_tags_grid(p, gold, LABEL_WEIGHTS, vectors, arcs)]
    pg = _best(given, lambda r: (r["arc_weight"], r["label_weight"]),
               (p.engine.arc_weight_given, p.engine.label_weight_given))
    return {"tag_weight": pick["tag_weight"], "arc_weight": pick["arc_weight"],
            "label_weight": pick["label_weight"], "arc_weight_given": pg["arc_weight"],
            "label_weight_given": pg["label_weight"]}


print("| model | dev sentences | arc factors | whole grid s | tag weight by tagging s | ratio "
      "| same choice |")
print("|---|---|---|---|---|---|---|")
for lang in sys.argv[1:]:
    spec = SHIPPED[lang]
    _, dv, _ = train_dev(spec)
    model = Model.load(REPO / "models" / f"{spec['treebank']}_gs.npz")
    arcs = tuple(float(x) for x in
                 str(model.info["training"].get("expert_arc_weights", "1")).split(","))
    Parser(model).parse(dv[:20])  # compiled kernels and loaded encoders before either is timed
    t0 = time.perf_counter()
    old = whole_grid(model, dv, arcs)
    t1 = time.perf_counter()
    new = choose_expert_weights(model, dv, TAG_WEIGHTS, LABEL_WEIGHTS, arcs)
    t2 = time.perf_counter()
    same = all(old[k] == new[k] for k in KEYS)
    print(f"| {spec['treebank']} | {len(dv):,} | {', '.join(f'{a:g}' for a in arcs)} | "
          f"{t1 - t0:.0f} | {t2 - t1:.0f} | {(t1 - t0) / (t2 - t1):.2f} | "
          f"{'yes' if same else f'no: {old} / {new}'} |", flush=True)
