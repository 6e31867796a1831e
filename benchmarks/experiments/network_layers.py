"""The learned network alone on MiniLM layers 1-3 instead of layer 3 (issue 26): does it gain?

    python benchmarks/experiments/network_layers.py --layers 1,2,3 [--epochs 8]
        [--cache /tmp/layermix_vectors.npz] [--treebank en_ewt]

Trains the network of ``depparse/learn/network_training.py`` on the treebank's train file, as
``train_learned`` trains it inside ``make model-en``: the vocabulary built as the shipped recipe
builds it (``Vocabularies.build(train, min_count)``; the recipe tags with gold tags, so the
sentences reach the network unchanged), the same ``NetworkSpec`` sizes, learning rate,
dropout and seed (``TrainConfig`` defaults with ``benchmarks/make_model.py``'s ``RECIPE``).
The one change: each word's ``Encoded.vectors`` is the concatenation of its MiniLM vectors
of ``--layers`` (384 dims each, in the order given), standardised over the concatenation
(``standardisation``) and projected by the network's ``vec_w`` as layer 3 alone is.
``--layers 3`` is the shipped network (its epoch record is printed beside).

The encoder's vectors of layers 1-3 of train and dev come from one batched pass
(``batch_layer_vectors``, each sentence's vectors bit for bit those it gets alone) and are
cached in ``--cache`` for the next run.  Prints one line per epoch: dev heads (argmax per
word, no tree), labels under the gold heads, UPOS, the epoch's training seconds.
"""
import argparse
import dataclasses
import os
import sys
import time

import numpy as np
from _common import REPO, corpus

from depparse.config import ModelConfig, TrainConfig, split_settings
from depparse.conllu import read_conllu
from depparse.encoding.minilm import batch_layer_vectors
from depparse.encoding.vocab import Vocabularies
from depparse.learn import network_training as learn
from depparse.model import Model
from depparse.network.biaffine import CHAR_SPECIALS, NetworkSpec

sys.path.insert(0, str(REPO / "benchmarks"))
from make_model import RECIPE  # noqa: E402

ALL = (1, 2, 3)  # the layers the parse path computes on its way to layer 3


def recipe_configs():
    """``(ModelConfig, TrainConfig)`` of the shipped English recipe."""
    m, _, t = split_settings(RECIPE)
    return ModelConfig(**m), TrainConfig(**t)


def layer_vectors(cache, splits):
    """``{split: [[(n, 384) float32 per layer of ALL] per sentence]}``, from ``cache`` when it
    holds the same sentences (their lengths), else computed and written there."""
    lengths = {k: np.array([s.n for s in v]) for k, v in splits.items()}
    if os.path.exists(cache):
        with np.load(cache) as z:
            if all(np.array_equal(z[f"{k}_n"], lengths[k]) for k in splits):
                out = {}
                for k, n in lengths.items():
                    cut = np.cumsum(n)[:-1]
                    per = [np.split(z[f"{k}_{layer}"], cut) for layer in ALL]
                    out[k] = [list(v) for v in zip(*per, strict=True)]
                print(f"vectors of layers {ALL} read from {cache}", flush=True)
                return out
    t0 = time.perf_counter()
    out = {k: batch_layer_vectors(ALL, [s.forms[1:] for s in v]) for k, v in splits.items()}
    arrays = {}
    for k, v in out.items():
        arrays[f"{k}_n"] = lengths[k]
        for j, layer in enumerate(ALL):
            arrays[f"{k}_{layer}"] = np.concatenate([x[j] for x in v])
    tmp = cache + ".part.npz"
    np.savez(tmp, **arrays)
    os.replace(tmp, cache)
    print(f"vectors of layers {ALL}: {time.perf_counter() - t0:.0f} s (encoder), cached in "
          f"{cache}", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", default="3", help="MiniLM layers, comma-separated (of 1-3)")
    ap.add_argument("--epochs", type=int, default=None, help="default: the recipe's")
    ap.add_argument("--cache", default="/tmp/layermix_vectors.npz")
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--schedule", default=None, choices=("constant", "cosine"),
                    help="the learning rate's schedule (default: the recipe's)")
    ap.add_argument("--hidden", type=int, default=None,
                    help="BiLSTM units per direction (default: the recipe's)")
    ap.add_argument("--limit", type=int, default=None,
                    help="the first N sentences of train and dev (a smoke test)")
    args = ap.parse_args()
    layers = [int(x) for x in args.layers.split(",")]
    if not layers or any(k not in ALL for k in layers) or len(set(layers)) < len(layers):
        ap.error(f"--layers {args.layers}: distinct layers of {ALL}")
    config, training = recipe_configs()
    training = dataclasses.replace(
        training, learned_epochs=args.epochs or training.learned_epochs,
        learned_schedule=args.schedule or training.learned_schedule,
        learned_hidden=args.hidden or training.learned_hidden)
    epochs = training.learned_epochs
    train = read_conllu(corpus("train", args.treebank))
    dev = read_conllu(corpus("dev", args.treebank))
    train, dev = train[:args.limit], dev[:args.limit]
    vocab = Vocabularies.build(train, config.min_count)  # vector_layer 0: vectors set below
    vecs = layer_vectors(args.cache, {"train": train, "dev": dev})
    pick = [ALL.index(k) for k in layers]

    def encode(sents, per):
        return [dataclasses.replace(vocab.encode(s), vectors=np.concatenate(
            [v[j] for j in pick], axis=1)) for s, v in zip(sents, per, strict=True)]

    enc, denc = encode(train, vecs["train"]), encode(dev, vecs["dev"])
    del vecs
    chars = learn.char_vocabulary(train)
    spec = NetworkSpec(words=len(vocab.form), chars=len(chars) + CHAR_SPECIALS,
                       labels=len(vocab.deprel), tags=len(vocab.upos),
                       vec_dim=enc[0].vectors.shape[1], hidden=training.learned_hidden,
                       layers=training.learned_layers)
    mean, std = learn.standardisation([e.vectors for e in enc])
    t = learn.NetworkTrainer.fresh(spec, chars, mean, std, config.learned_scale, seed=training.seed,
                                   lr=training.learned_lr, dropout=training.learned_dropout,
                                   schedule=training.learned_schedule, horizon=epochs)
    items = learn.network_items(t.net, enc)
    gold = [learn.gold_ids(vocab, s) for s in train]
    dev_data = (learn.network_items(t.net, denc), [learn.gold_ids(vocab, s) for s in dev])
    shipped = []
    if args.treebank == "en_ewt":
        hist = Model.load(REPO / "models" / "en_ewt_gs.npz").info["history"]
        shipped = next(h["learned_network"] for h in hist if "learned_network" in h)
    print(f"layers {args.layers}: vec_dim {spec.vec_dim}, {len(train)} training sentences, "
          f"{len(dev)} dev; hidden {spec.hidden}, layers {spec.layers}, lr "
          f"{training.learned_lr} ({training.learned_schedule}), dropout "
          f"{training.learned_dropout}, seed {training.seed}",
          flush=True)
    for _ in range(epochs):
        t0 = time.perf_counter()
        loss = t.train_epoch(items, gold)
        sec = time.perf_counter() - t0
        r = t.evaluate(*dev_data)
        line = (f"epoch {t.epoch}: dev heads {r['uas']:.2f}, labels {r['label_acc']:.2f}, "
                f"UPOS {r['upos']:.2f}, loss {loss:.4f}, {sec:.0f} s, load "
                f"{os.getloadavg()[0]:.1f}")
        if t.epoch <= len(shipped):
            s = shipped[t.epoch - 1]
            line += (f"   (shipped: {s['dev_uas']:.2f} / {s['dev_label_acc']:.2f} / "
                     f"{s['dev_upos']:.2f}, loss {s['loss']:.4f})")
        print(line, flush=True)


if __name__ == "__main__":
    main()
