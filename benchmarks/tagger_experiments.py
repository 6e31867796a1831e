"""Tagger and lemmatizer experiments: train on one file, tag another, score with the official
CoNLL 2018 scorer (benchmarks/experiments/README.md, "Tagger and lemmatizer").

    python benchmarks/tagger_experiments.py en_ewt [--train train] [--eval dev]
        [--vectors DIR] [--out pred.conllu] [--json results.jsonl] [setting=value ...]

Settings are those of :func:`depparse.learn.tagger.fit_tagger` (``epochs=10 feats=split
encoder_layer=3 vector_scale=2 dense=upos,xpos ...``).  The evaluation file's LEMMA, UPOS,
XPOS and FEATS are replaced by the predicted ones (gold tokenization) and scored with
``udtools.udeval`` (UPOS, XPOS, UFeats, AllTags, Lemmas).  Speed: tagging and lemmatizing
the evaluation file in this process, encoder excluded (its vectors are computed first and
timed apart).  ``--vectors DIR`` keeps the encoder's word vectors of each file in
``DIR/<code>-<split>.L<layer>.npy`` (computed on first use).  ``scores`` are those of the
trained tagger, ``scores_stored`` those of the same tagger read back from its model-file
component (8-bit hashed weights).  ``--jackknife K`` instead times
:func:`depparse.learn.tagger.jackknife` with K folds on the training file and scores the
re-tagged training file.  ``--speed`` times the stored tagger three more times on the
evaluation file (and the encoder alone on it).
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from depparse.conllu import read_conllu, write_conllu  # noqa: E402
from depparse.inference.tagging import Tagger  # noqa: E402
from depparse.learn.tagger import TAGGER_DEFAULTS, column_accuracy, fit_tagger, jackknife  # noqa: E402
from depparse.paths import treebank_file  # noqa: E402


def _value(name, text):
    if name == "dense" and text != "all":
        return tuple(text.split(","))
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def vectors_of(code, split, sentences, layer, folder):
    """The encoder's word vectors of each sentence (cached in ``folder`` if given)."""
    from depparse.encoding.minilm import word_vectors
    path = None if folder is None else Path(folder) / f"{code}-{split}.L{layer}.npy"
    if path is not None and path.exists():
        flat = np.load(path).astype(np.float32)
    else:
        t0 = time.perf_counter()
        flat = np.concatenate([word_vectors(layer, list(s.forms[1:])) for s in sentences])
        print(f"encoder: {code} {split} layer {layer}: {len(flat)} words, "
              f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            np.save(path, flat)
    ends = np.cumsum([s.n for s in sentences])
    if ends[-1] != len(flat):
        raise SystemExit(f"{path}: {len(flat)} vectors for {ends[-1]} words")
    return np.split(flat, ends[:-1])


def official(gold_path, sentences):
    """UPOS, XPOS, UFeats, AllTags, Lemmas (F1 x 100) of predicted sentences."""
    from udtools import udeval
    buf = io.BytesIO()
    write_conllu(sentences, buf)
    system = udeval.load_conllu(io.StringIO(buf.getvalue().decode("utf-8")), "system", {})
    gold = udeval.load_conllu_file(str(gold_path))
    res = udeval.evaluate(gold, system)
    return {k: round(100 * res[k].f1, 2) for k in ("UPOS", "XPOS", "UFeats", "AllTags", "Lemmas")}


def component_bytes(tagger: Tagger) -> int:
    """Size of the tagger's arrays and JSON in a compressed .npz (as in a model file)."""
    c = tagger.to_component()
    buf = io.BytesIO()
    arrays = {f"tagger.{k}": v for k, v in c.arrays.items()}
    arrays["meta"] = np.frombuffer(json.dumps(c.meta).encode(), dtype=np.uint8)
    np.savez_compressed(buf, **arrays)
    return len(buf.getvalue())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("code")
    ap.add_argument("--train", default="train")
    ap.add_argument("--eval", default="dev")
    ap.add_argument("--vectors", default=None, help="cache folder of encoder vectors")
    ap.add_argument("--out", default=None, help="write the tagged evaluation file here")
    ap.add_argument("--json", default=None, help="append the results (one JSON line) here")
    ap.add_argument("--dev-curve", action="store_true", help="score the eval file every epoch")
    ap.add_argument("--jackknife", type=int, default=0, metavar="K")
    ap.add_argument("--speed", action="store_true",
                    help="time the stored tagger three times (and the encoder alone)")
    ap.add_argument("settings", nargs="*", help="setting=value (fit_tagger)")
    args = ap.parse_intermixed_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    settings = {}
    for item in args.settings:
        name, _, text = item.partition("=")
        if name not in TAGGER_DEFAULTS:
            ap.error(f"unknown setting {name!r} (known: {', '.join(TAGGER_DEFAULTS)})")
        settings[name] = _value(name, text)
    layer = settings.get("encoder_layer", TAGGER_DEFAULTS["encoder_layer"])
    train_path = treebank_file(args.code, args.train)
    eval_path = treebank_file(args.code, args.eval)
    train = read_conllu(train_path)
    result = {"code": args.code, "train": args.train, "eval": args.eval, "settings": settings}
    tv = None if layer is None else vectors_of(args.code, args.train, train, layer, args.vectors)
    if args.jackknife:
        t0 = time.perf_counter()
        re = jackknife(train, args.jackknife, vectors=tv, **settings)
        result["jackknife"] = {"folds": args.jackknife,
                               "seconds": round(time.perf_counter() - t0, 1),
                               "scores": official(train_path, re)}
        print(json.dumps(result))
        return
    ev = read_conllu(eval_path)
    evv = None if layer is None else vectors_of(args.code, args.eval, ev, layer, args.vectors)
    t0 = time.perf_counter()
    tagger = fit_tagger(train, vectors=tv, dev=ev if args.dev_curve else None, dev_vectors=evv,
                        **settings)
    result["train_seconds"] = round(time.perf_counter() - t0, 1)
    tagger.tag(ev[:50], None if evv is None else evv[:50])  # warm-up (compiled kernels)
    t0 = time.perf_counter()
    tagged = tagger.retag(ev, evv)
    dt = time.perf_counter() - t0
    words = sum(s.n for s in ev)
    result["words_per_s"] = round(words / dt)
    result["scores"] = official(eval_path, tagged)
    result["simple"] = column_accuracy([(s.lemmas, s.upos, s.xpos, s.feats) for s in tagged], ev)
    result["component_bytes"] = component_bytes(tagger)
    # what a model file holds: 8-bit hashed weights, float16 dense and transition weights
    stored = Tagger.from_component(tagger.to_component())
    result["scores_stored"] = official(eval_path, stored.retag(ev, evv))
    if args.speed:
        runs = []
        for _ in range(3):
            t0 = time.perf_counter()
            stored.retag(ev, evv)
            runs.append(words / (time.perf_counter() - t0))
        result["speed_stored_words_per_s"] = [round(r) for r in sorted(runs)]
        if layer is not None:
            from depparse.encoding.minilm import word_vectors
            t0 = time.perf_counter()
            for s in ev:
                word_vectors(layer, list(s.forms[1:]))
            result["encoder_words_per_s"] = round(words / (time.perf_counter() - t0))
    result["history"] = tagger.info.get("history")
    if args.out:
        write_conllu(tagged, args.out)
    line = json.dumps(result)
    print(line)
    if args.json:
        with open(args.json, "a", encoding="utf-8") as f:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
