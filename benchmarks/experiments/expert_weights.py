"""The weights of the learned network's UPOS and DEPREL views in the tagger and the labeler
(``ModelConfig.learned_tag_weight`` / ``learned_label_weight``: products of experts), and of
its arc scores (``learned_arc_weight``), on a dev file with its tags blanked, as ``depparse
parse`` parses untagged input.

    python benchmarks/experiments/expert_weights.py MODEL.npz TREEBANK \
        [--tag 0,0.5,1,2,3] [--label 0,0.5,1,2,4] [--arc 1] [--split dev]

The grid of :func:`depparse.learn.devscore.expert_weight_grid` (the one ``train
--expert-weights dev`` chooses from): for each tag weight and arc weight the sentences are
tagged and parsed once; for each label weight the trees are labelled again (the trees do not
depend on it).  Prints one line per triple: UPOS, UAS, LAS, Lemmas, AllTags (official
definitions); then, with the gold tags given (:func:`~depparse.learn.devscore.given_tags_grid`),
UAS and LAS per arc weight and label weight (``ModelConfig.learned_arc_weight_given``,
``learned_label_weight_given``).
"""
import argparse
import time

from _common import corpus

from depparse.api import load
from depparse.conllu import read_conllu
from depparse.learn.devscore import expert_weight_grid, given_tags_grid


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("treebank", help="e.g. en_ewt")
    ap.add_argument("--split", default="dev")
    ap.add_argument("--tag", default="0,0.5,1,2,3")
    ap.add_argument("--label", default="0,0.5,1,2,4")
    ap.add_argument("--arc", default="1", help="factors of the network's arc scores")
    args = ap.parse_args()
    p = load(args.model)
    if p.learned is None or p.tagger is None or p.engine.labeler is None:
        raise SystemExit("the model needs a learned network, a tagger and a labeler")
    gold = read_conllu(corpus(args.split, args.treebank))
    t0 = time.perf_counter()
    labels = [float(x) for x in args.label.split(",")]
    arcs = [float(x) for x in args.arc.split(",")]
    grid = expert_weight_grid(p, gold, [float(x) for x in args.tag.split(",")], labels,
                              arc_weights=arcs)
    for a, c, b, ev in grid:
        cells = " ".join(f"{k} {ev.metric(k).f1:.2f}"
                         for k in ("UPOS", "UAS", "LAS", "Lemmas", "AllTags"))
        print(f"tag weight {a:g}, arc weight {c:g}, label weight {b:g}: {cells} "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    for c, b, ev in given_tags_grid(p, gold, labels, arc_weights=arcs):
        print(f"tags given, arc weight {c:g}, label weight {b:g}: UAS {ev.uas:.2f} LAS "
              f"{ev.las:.2f} ({time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
