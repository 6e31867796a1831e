"""Joint tagging and parsing against the pipeline, with the same model (issue 30).

Usage::

    python benchmarks/bench_joint.py [--model models/en_ewt_gs.npz] [--treebank en_ewt]
        [--split dev] [--offset 0] [--limit N] [--raw] [W,K,M ...]

Parses the sentences ``offset .. offset + limit`` of the treebank's split with the model's
tagger predicting all four tag columns (``retag``: the pipeline with predicted tags), once as
the pipeline and once per joint setting ``W,K,M`` (``Parser.set_joint(weight=W, k=K,
margin=M)``; default: the shipped defaults), back to back in one process (kernels compiled
by a warm-up first), and prints for each: the official CoNLL 2018 scores
(:func:`depparse.evaluate.evaluate`: UAS, LAS, UPOS, XPOS, lemmas), words per wall second and
per CPU second (``time.process_time``: less sensitive to the other jobs of a shared machine),
the analyses proved optimal, the UPOS changed from the tagger's; then, for the joint runs,
the gold -> tagger confusions the joint decoder fixed, those it left, and those it introduced
(the most frequent pairs).  ``--raw``: also the raw text (``# text`` lines, segmented and
tokenized by the model), both ways, scored with the CoNLL 2018 word alignment.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import os
import time

from depparse.conllu import read_conllu
from depparse.evaluate import evaluate
from depparse.inference.joint_tagging import JointSettings
from depparse.inference.parser import Parser
from depparse.model import Model


def run(parser, gold, setting):
    if setting is None:
        parser.set_joint(on=False)
    else:
        w, k, m = setting
        parser.set_joint(weight=w, k=k, margin=m)
    c0, t0 = time.process_time(), time.perf_counter()
    res = parser.parse_results(gold, retag=True, trace=False)
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    sc = evaluate(gold, [s for s, _ in res])
    words = sum(g.n for g in gold)
    return res, {
        "uas": sc.uas, "las": sc.las, "upos": sc.upos, "xpos": sc.xpos, "lemmas": sc.lemmas,
        "wps_wall": words / wall, "wps_cpu": words / cpu,
        "proved": sum(r.proof is not None for _, r in res),
        "changed": sum(r.tags_changed for _, r in res),
        "cand": sum(r.tag_candidates for _, r in res) / words}


def run_raw(parser, gold, setting):
    """The raw text of ``gold`` (its ``# text`` lines and paragraphs) segmented, tokenized,
    tagged and parsed; scored with the CoNLL 2018 word alignment."""
    from depparse.learn.tokenizer_training import treebank_text

    if setting is None:
        parser.set_joint(on=False)
    else:
        parser.set_joint(*setting)
    system = parser.parse(parser.read_text(treebank_text(gold), source="<raw text>"))
    sc = evaluate(gold, system)
    return {"uas": sc.uas, "las": sc.las, "upos": sc.upos, "words": sc.words_f1}


def confusions(gold, pipe, joint):
    fixed, left, made = (collections.Counter() for _ in range(3))
    for g, (p, _), (j, _) in zip(gold, pipe, joint, strict=True):
        for i in range(1, g.n + 1):
            gu, pu, ju = g.upos[i], p.upos[i], j.upos[i]
            if pu != gu and ju == gu:
                fixed[gu, pu] += 1
            elif pu != gu and ju == pu:
                left[gu, pu] += 1
            elif pu == gu and ju != gu:
                made[gu, ju] += 1
    return fixed, left, made


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="models/en_ewt_gs.npz")
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--split", default="dev")
    ap.add_argument("--offset", type=int, default=0)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--raw", action="store_true",
                    help="also parse the raw text (the model's tokenizer) both ways")
    ap.add_argument("settings", nargs="*", metavar="W,K,M")
    a = ap.parse_args()
    root = os.environ.get("DEPPARSE_CORPORA", "/work/shared/corpora")
    path = os.path.join(root, a.treebank, f"{a.treebank}-ud-{a.split}.conllu")
    stop = None if a.limit is None else a.offset + a.limit
    gold = list(itertools.islice(read_conllu(path), a.offset, stop))
    parser = Parser(Model.load(a.model), a.model)
    d = JointSettings()
    settings = [tuple(t(x) for t, x in zip((float, int, float), s.split(","), strict=True))
                for s in a.settings] or [(d.weight, d.k, d.margin)]
    for st in (None, settings[0]):  # warm-up: load or compile the kernels of both ways
        run(parser, gold[:20], st)
    print(f"{path}: sentences {a.offset}..{a.offset + len(gold) - 1} ({len(gold)}, "
          f"{sum(g.n for g in gold):,} words), model {a.model}; load "
          f"{os.getloadavg()[0]:.1f}")
    pipe, ps = run(parser, gold, None)
    head = ("setting", "UAS", "LAS", "UPOS", "XPOS", "Lemmas", "w/s wall", "w/s CPU",
            "proved", "UPOS changed", "cand/word")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))

    def line(name, s):
        print(f"| {name} | {s['uas']:.2f} | {s['las']:.2f} | {s['upos']:.2f} | "
              f"{s['xpos']:.2f} | {s['lemmas']:.2f} | {s['wps_wall']:.0f} | "
              f"{s['wps_cpu']:.0f} | {s['proved']}/{len(gold)} | {s['changed']} | "
              f"{s['cand']:.2f} |", flush=True)

    line("pipeline", ps)
    for st in settings:
        joint, js = run(parser, gold, st)
        line(f"joint W={st[0]:g} K={st[1]} M={st[2]:g}", js)
        fixed, left, made = confusions(gold, pipe, joint)
        for name, c in (("fixed", fixed), ("left", left), ("introduced", made)):
            top = ", ".join(f"{g}->{p} {n}" for (g, p), n in c.most_common(8))
            print(f"    {name} {sum(c.values())}: {top}")
    if a.raw:
        for st in (None, *settings):
            r = run_raw(parser, gold, st)
            name = "pipeline" if st is None else f"joint W={st[0]:g} K={st[1]} M={st[2]:g}"
            print(f"raw text, {name}: Words {r['words']:.2f} UPOS {r['upos']:.2f} "
                  f"UAS {r['uas']:.2f} LAS {r['las']:.2f}", flush=True)
    print(f"load at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
