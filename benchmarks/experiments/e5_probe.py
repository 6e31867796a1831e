"""The learned network alone with and without multilingual-e5-small's layers (issue 47's probe).

    python benchmarks/experiments/e5_probe.py --treebank tr_imst --mix 13 [--pooling mean]
        [--epochs 30] [--schedule constant] [--hidden 128] [--out result.json]

Trains the network of ``depparse/learn/network_training.py`` on the treebank's train file as
``train_learned`` trains it inside ``make model-pt`` / ``make model-tr`` (the vocabulary of
``Vocabularies.build(train, min_count)``, ``TrainConfig``'s defaults and the shipped recipe's
epochs, schedule and seed: ``benchmarks/make_model.py``), with ``--mix K``: a learned
softmax-weighted mix of the encoder's layers 0 .. K-1 in its input (``NetworkSpec.mix_layers``;
0: the shipped network, words and characters only).  The encoder's layers of train and dev
are computed once per pooling and cached in ``--cache-dir``.

Prints one line per epoch (dev heads as the argmax per word with no tree, labels under the
gold heads, UPOS, seconds) and, at the end, the mix's weights ``softmax(mix_w)`` per layer
and its scale; ``--out`` writes all of it as JSON.
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from _common import REPO, corpus

from depparse.conllu import read_conllu
from depparse.encoding.e5 import get_e5
from depparse.encoding.transformer import POOLINGS
from depparse.encoding.vocab import Vocabularies
from depparse.learn import network_training as learn
from depparse.network.biaffine import CHAR_SPECIALS, NetworkSpec

sys.path.insert(0, str(REPO / "benchmarks"))
NETWORK_EPOCHS = {"pt": 20, "tr": 30}  # the shipped networks before the encoder
NETWORK_SCHEDULE = "constant"

DEPTH = 13  # layers 0 (the embeddings) .. 12


def cached_layers(path, sents, pooling):
    """(n, 13, 384) float16 per sentence: layers 0-12 of each sentence's words, from ``path``
    when it holds the same sentences (their lengths), else computed and written there."""
    n = np.array([s.n for s in sents])
    if os.path.exists(path):
        with np.load(path) as z:
            if np.array_equal(z["n"], n):
                return np.split(z["x"], np.cumsum(n)[:-1])
    t0 = time.perf_counter()
    enc = get_e5(12)
    out = [np.stack(v, axis=1).astype(np.float16) for v in enc.iter_layer_vectors(
        (s.forms[1:] for s in sents), tuple(range(DEPTH)), pooling=pooling)]
    words = int(n.sum())
    sec = time.perf_counter() - t0
    print(f"encoder: {words} words, layers 0-12, {sec:.0f} s ({words / sec:.0f} words/s)",
          flush=True)
    tmp = path + ".part.npz"
    np.savez(tmp, n=n, x=np.concatenate(out))
    os.replace(tmp, path)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--treebank", default="tr_imst")
    ap.add_argument("--mix", type=int, default=13, help="layers 0 .. K-1 (0: no encoder)")
    ap.add_argument("--pooling", default="mean", choices=POOLINGS)
    ap.add_argument("--mix-dim", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=None)
    ap.add_argument("--schedule", default=None, choices=("constant", "cosine"))
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--minilm-layer", type=int, default=0,
                    help="also MiniLM's vectors of this layer (English's network: 3)")
    ap.add_argument("--cache-dir", default="/tmp/e5_probe")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    lang = args.treebank.split("_")[0]
    epochs = args.epochs or NETWORK_EPOCHS.get(lang, 12)
    schedule = args.schedule or (NETWORK_SCHEDULE if lang in NETWORK_EPOCHS else "cosine")
    train = read_conllu(corpus("train", args.treebank))
    dev = read_conllu(corpus("dev", args.treebank))
    vocab = Vocabularies.build(train, 2)
    vocab.vector_layer = args.minilm_layer
    enc = [vocab.encode(s) for s in train]
    denc = [vocab.encode(s) for s in dev]
    if args.mix:
        os.makedirs(args.cache_dir, exist_ok=True)
        for name, sents, encs in (("train", train, enc), ("dev", dev, denc)):
            lay = cached_layers(f"{args.cache_dir}/{args.treebank}_{name}_{args.pooling}.npz",
                                sents, args.pooling)
            for e, x in zip(encs, lay, strict=True):
                e.layers = x[:, :args.mix]
    chars = learn.char_vocabulary(train)
    vec_dim = enc[0].vectors.shape[1] if args.minilm_layer else 0
    spec = NetworkSpec(words=len(vocab.form), chars=len(chars) + CHAR_SPECIALS,
                       labels=len(vocab.deprel), tags=len(vocab.upos), hidden=args.hidden,
                       vec_dim=vec_dim, mix_layers=args.mix, mix_proj=args.mix_dim,
                       mix_pooling=args.pooling)
    mean, std = (learn.standardisation([e.vectors for e in enc]) if vec_dim else (None, None))
    t = learn.NetworkTrainer.fresh(spec, chars, mean, std, 1.0, seed=args.seed,
                                   schedule=schedule, horizon=epochs)
    items = learn.network_items(t.net, enc)
    gold = [learn.gold_ids(vocab, s) for s in train]
    dev_data = (learn.network_items(t.net, denc), [learn.gold_ids(vocab, s) for s in dev])
    print(f"{args.treebank}: mix {args.mix} ({args.pooling}), {len(train)} training "
          f"sentences, {len(dev)} dev; hidden {spec.hidden}, {epochs} epochs ({schedule}), "
          f"seed {args.seed}", flush=True)
    record = {"treebank": args.treebank, "mix": args.mix, "pooling": args.pooling,
              "minilm_layer": args.minilm_layer,
              "mix_dim": args.mix_dim, "hidden": args.hidden, "epochs": epochs,
              "schedule": schedule, "seed": args.seed, "history": []}
    for _ in range(epochs):
        t0 = time.perf_counter()
        loss = t.train_epoch(items, gold)
        sec = time.perf_counter() - t0
        r = t.evaluate(*dev_data)
        record["history"].append(dict(r, epoch=t.epoch, loss=loss, seconds=sec))
        print(f"epoch {t.epoch}: dev heads {r['uas']:.2f}, labels {r['label_acc']:.2f}, "
              f"UPOS {r['upos']:.2f}, loss {loss:.4f}, {sec:.0f} s, load "
              f"{os.getloadavg()[0]:.1f}", flush=True)
    if args.mix:
        w = np.asarray(t.params["mix_w"], dtype=np.float64)
        w = np.exp(w - w.max())
        w /= w.sum()
        record["mix_weights"] = [round(float(v), 4) for v in w]
        record["mix_scale"] = float(np.asarray(t.params["mix_g"])[0])
        print("mix weights (layers 0..): " + " ".join(f"{v:.3f}" for v in w)
              + f"; scale {record['mix_scale']:.3f}", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
