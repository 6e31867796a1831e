"""The weights of the learned network's UPOS and DEPREL views in the tagger and the labeler
(``ModelConfig.learned_tag_weight`` / ``learned_label_weight``: products of experts), on a
dev file with its tags blanked, as ``depparse parse`` parses untagged input.

    python benchmarks/experiments/expert_weights.py MODEL.npz TREEBANK \
        [--tag 0,0.5,1,2,3] [--label 0,0.5,1,2,4] [--split dev]

For each tag weight the sentences are tagged and parsed once; for each label weight the trees
are labelled again (the trees do not depend on it).  Prints one line per pair: UPOS, UAS,
LAS, Lemmas, AllTags (official definitions).
"""
import argparse
import sys
import time

from _common import REPO, corpus

from depparse.api import load
from depparse.conllu import read_conllu
from depparse.evaluate import evaluate

sys.path.insert(0, str(REPO / "benchmarks"))
from real_input import blank_tags  # noqa: E402  (the gold tokenization, tags blanked)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("treebank", help="e.g. en_ewt")
    ap.add_argument("--split", default="dev")
    ap.add_argument("--tag", default="0,0.5,1,2,3")
    ap.add_argument("--label", default="0,0.5,1,2,4")
    args = ap.parse_args()
    p = load(args.model)
    if p.learned is None or p.tagger is None or p.labeler is None:
        raise SystemExit("the model needs a learned network, a tagger and a labeler")
    gold = read_conllu(corpus(args.split, args.treebank))
    blank = blank_tags(gold)
    vocab, net, lab = p.model.vocab, p.learned, p.labeler
    t0 = time.perf_counter()
    for a in (float(x) for x in args.tag.split(",")):
        p.tag_weight, p.label_weight = a, 0.0
        parsed = p.parse(blank)
        encs = [vocab.encode(s) for s in parsed]
        net.remember(encs)  # the representations the label views read
        try:
            for b in (float(x) for x in args.label.split(",")):
                out = []
                for s, enc in zip(parsed, encs, strict=True):
                    extra = b * net.label_logprobs(enc, s.heads) if b else None
                    out.append(s.with_parse(s.heads, lab.label_strings(enc, s.heads, extra)))
                ev = evaluate(gold, out)
                cells = " ".join(f"{k} {ev.metric(k).f1:.2f}"
                                 for k in ("UPOS", "UAS", "LAS", "Lemmas", "AllTags"))
                print(f"tag weight {a:g}, label weight {b:g}: {cells} "
                      f"({time.perf_counter() - t0:.0f} s)", flush=True)
        finally:
            net.forget()


if __name__ == "__main__":
    main()
