"""Fine-tune an existing model for joint tagging and parsing (issue 30 item 2), without
retraining it: :func:`depparse.learn.joint.train_joint` on a treebank's training split.

Usage::

    python benchmarks/train_joint.py --model models/en_ewt_gs.npz --treebank en_ewt \\
        --epochs 1 --folds 5 -o /tmp/en_ewt_joint.npz [--examples /tmp/jt_examples.pkl]
        [--limit N] [--seed 0]

``--examples PATH``: the jackknifed candidate sets (the slow part: one tagger per fold) are
read from PATH when it exists, else made and written there (a pickle: a cache for reruns on
this machine, not a data format), so that several fine-tuning runs share them.  The output
is refused where it would replace the input model.  Measure the result with
``benchmarks/bench_joint.py --model OUT``.
"""

from __future__ import annotations

import argparse
import logging
import os
import pickle
import sys
import time
from pathlib import Path

import numpy as np

from depparse.conllu import read_conllu
from depparse.learn.joint import JOINT_FOLDS, joint_examples, train_joint
from depparse.model import Model


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="models/en_ewt_gs.npz")
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--folds", type=int, default=JOINT_FOLDS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int, default=None, help="first N training sentences")
    ap.add_argument("--examples", default=None)
    ap.add_argument("--only", default=None, help="comma-separated fold indices: make these "
                    "folds' candidate sets (added to --examples), and stop")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args(argv)
    if Path(a.out).resolve() == Path(a.model).resolve():
        sys.exit("train_joint.py: error: --out would replace the input model")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    corpora = Path(os.environ.get("DEPPARSE_CORPORA", "/work/shared/corpora"))
    train = read_conllu(next(corpora.glob(f"**/{a.treebank}-ud-train.conllu")))[:a.limit]
    model = Model.load(a.model)
    t0 = time.perf_counter()
    cache = {}  # fold index -> its examples
    if a.examples and Path(a.examples).exists():
        with open(a.examples, "rb") as f:
            cache = pickle.load(f)
        print(f"candidate sets of folds {sorted(cache)} read from {a.examples}")
    want = range(a.folds) if a.only is None else [int(k) for k in a.only.split(",")]
    todo = [k for k in want if k not in cache]
    if todo:  # one call: the encoder vectors computed once
        made = joint_examples(model, train, a.folds, a.seed, only=todo)
        bounds = np.linspace(0, len(train), a.folds + 1).astype(int)
        at = 0
        for k in todo:
            size = int(bounds[k + 1] - bounds[k])
            cache[k], at = made[at:at + size], at + size
        if a.examples:
            with open(a.examples + ".tmp", "wb") as f:
                pickle.dump(cache, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(a.examples + ".tmp", a.examples)
    if a.only is not None:
        print(f"folds {sorted(cache)} made, {time.perf_counter() - t0:.0f} s")
        return
    ex = [e for k in range(a.folds) for e in cache[k]]
    t1 = time.perf_counter()
    print(f"candidate sets: {len(ex)} sentences, {t1 - t0:.0f} s")
    out = train_joint(model, train, a.epochs, folds=a.folds, seed=a.seed, examples=ex)
    out.save(a.out)
    info = out.info["joint_training"]
    print(f"fine-tuned {a.epochs} epoch(s) in {time.perf_counter() - t1:.0f} s; "
          f"{info['candidates_per_word']:.3f} candidates per word, gold UPOS added to "
          f"{info['gold_added']} words; history {info['history']}; saved {a.out}")


if __name__ == "__main__":
    main()
