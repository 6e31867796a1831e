"""A parser trained by ``dense_variant.py`` (no labeler, no tagger) scored on en_ewt dev as
``depparse parse`` parses: gold tags and tags predicted by a tagger, with the labeler of a
reference model, against that reference model itself, in one process.

    python benchmarks/experiments/learned_dev.py MODEL.npz [--reference models/en_ewt_gs.npz]

The reference's tagger, labeler and label scores are grafted onto MODEL (both were trained on
en_ewt train with the same vocabularies and contextual classes, so its labeler reads MODEL's
encodings as its own).  Prints one JSON line per (model, setting): UAS, LAS (official
definitions), trees proved optimal, words/s of ``Parser.parse`` (the encoder included; the
machine's load beside it).
"""
import argparse
import json
import os
import time
from pathlib import Path

from _common import corpus

import depparse
from depparse.evaluate import evaluate
from depparse.inference.parser import Parser
from depparse.model import Model

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("model")
ap.add_argument("--reference", default=str(Path(__file__).resolve().parents[2] / "models"
                                           / "en_ewt_gs.npz"))
ap.add_argument("--split", default="dev")
ap.add_argument("--limit", type=int, default=0, help="the first N sentences only (a check)")
args = ap.parse_args()

ref = Model.load(args.reference)
m = Model.load(args.model)
for name in ("tagger", "label_dense"):
    if name in ref.components:
        m.components[name] = ref.components[name]
m.labeler = ref.labeler
m.config = type(m.config).from_dict({**m.config.to_dict(),
                                     "labeler_bits": ref.config.labeler_bits})
gold = depparse.read_conllu(corpus(args.split, "en_ewt"))
if args.limit:
    gold = gold[:args.limit]
words = sum(s.n for s in gold)
for label, model in (("reference", ref), ("model", m)):
    p = Parser(model)
    for setting, retag in (("gold tags", False), ("predicted tags", True)):
        t0 = time.perf_counter()
        res = p.parse_results(gold, retag=retag, trace=False)
        sec = time.perf_counter() - t0
        sc = evaluate(gold, [s for s, _ in res])
        print(json.dumps({"model": label, "file": args.model if label == "model" else
                          args.reference, "split": args.split, "setting": setting,
                          "uas": round(sc.uas, 2), "las": round(sc.las, 2),
                          "upos": round(sc.upos, 2) if retag else None,
                          "proved": round(100.0 * sum(r.optimal for _, r in res) / len(res), 2),
                          "words_per_s": round(words / sec), "load": os.getloadavg()[0]}),
              flush=True)
