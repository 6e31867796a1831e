"""Tokenizer and sentence segmenter on raw text: Tokens / Words / Sentences F1 (CoNLL 2018).

For every treebank the raw text of the evaluation file is rebuilt as the CoNLL 2018 shared
task built its ``.txt`` files (:func:`depparse.learn.tokenizer_training.treebank_text`), tokenized,
and scored against the gold file with :func:`depparse.evaluate.evaluate` (the official word
alignment).  Protocol (``../shared/corpora/README.md``): en_ewt, pt_bosque and tr_imst train
on train; the dev numbers come from a tokenizer whose sentence bias was tuned on held-out
training text (dev unseen), the test numbers from one tuned on dev; da_ddt, nl_alpino and
sv_talbanken train on dev (bias tuned on held-out dev text) and report on test.

With ``--syntok PYTHON`` (an interpreter with ``syntok`` installed) the library candidate
syntok is measured on the same texts (``benchmarks/tokenizer_syntok.py``).

``--no-gap-stage`` measures the character classifier alone (no word-level second stage);
``--no-spaces`` a tokenizer whose tokens end at every space even where the training words
hold spaces (vi_vtb: what depparse did before tokens could go on across a space);
``--no-splitter`` one whose multiword tokens come from the training data's dictionary alone
(what depparse did before the word splitter).

Usage::

    python benchmarks/tokenizer_experiments.py [--bits 20] [--epochs 8] [--seeds 3]
        [--no-gap-stage] [--no-spaces] [--no-splitter] [--gap-seeds 3]
        [--syntok PY]
        [--out benchmarks/results/tokenizer.md]
        [treebank ...]
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from depparse.conllu import read_conllu
from depparse.evaluate import evaluate
from depparse.inference.tokenizer import Tokenizer
from depparse.learn.tokenizer_training import train_tokenizer, treebank_text
from depparse.paths import corpora_dir

TREEBANKS = ("en_ewt", "pt_bosque", "tr_imst", "da_ddt", "nl_alpino", "sv_talbanken")
HERE = Path(__file__).resolve().parent


def _size(component) -> int:
    """Bytes the component's arrays take in a compressed .npz (as in the model file)."""
    buf = io.BytesIO()
    np.savez_compressed(buf, **component.arrays)
    return len(buf.getvalue())


def _score(tok: Tokenizer, gold):
    text = treebank_text(gold)
    tok.tokenize(text[:2000])  # compile / warm up
    t0 = time.perf_counter()
    system = tok.tokenize(text, source="system")
    dt = time.perf_counter() - t0
    sc = evaluate(gold, system)
    words = sum(s.n for s in system)
    return sc, words / dt


def _syntok(python: str, gold):
    with tempfile.TemporaryDirectory() as d:
        txt, out = Path(d) / "in.txt", Path(d) / "out.conllu"
        txt.write_text(treebank_text(gold), encoding="utf-8")
        subprocess.run([python, str(HERE / "tokenizer_syntok.py"), str(txt), str(out)],
                       check=True, capture_output=True)
        return evaluate(gold, read_conllu(out))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("treebanks", nargs="*", default=list(TREEBANKS))
    ap.add_argument("--bits", type=int, default=20)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--no-gap-stage", action="store_true",
                    help="no word-level second stage: the character classifier ends sentences")
    ap.add_argument("--seeds", type=int, default=3, help="character classifiers averaged")
    ap.add_argument("--gap-seeds", type=int, default=3, help="second stages averaged")
    ap.add_argument("--no-splitter", action="store_true",
                    help="multiword tokens from the dictionary alone (no word splitter)")
    ap.add_argument("--no-spaces", action="store_true",
                    help="tokens end at every space, even where the training words hold spaces")
    ap.add_argument("--syntok", help="a Python interpreter with syntok installed")
    ap.add_argument("--out", help="write the Markdown table here too")
    a = ap.parse_args(argv)
    root = corpora_dir()
    opts = {"bits": a.bits, "epochs": a.epochs, "gap_stage": not a.no_gap_stage,
            "seeds": a.seeds, "gap_seeds": a.gap_seeds}
    if a.no_spaces:
        opts["spaces"] = False
    if a.no_splitter:
        opts["splitter"] = False
    rows = ["| treebank | trained on | evaluated on | system | Tokens | Words | Sentences | "
            "words/s | size |", "|---|---|---|---|---|---|---|---|---|"]

    def row(tb, on, ev, name, sc, speed="", size=""):
        rows.append(f"| {tb} | {on} | {ev} | {name} | {sc.tokens:.2f} | {sc.words_f1:.2f} | "
                    f"{sc.sentences_f1:.2f} | {speed} | {size} |")
        print(rows[-1], flush=True)

    name = "depparse" if opts["gap_stage"] else "depparse, characters only"
    for tb in a.treebanks:
        files = {sp: root / tb / f"{tb}-ud-{sp}.conllu" for sp in ("train", "dev", "test")}
        dev, test = read_conllu(files["dev"]), read_conllu(files["test"])
        if files["train"].is_file():
            train = read_conllu(files["train"])
            t0 = time.perf_counter()
            comp = train_tokenizer(train, **opts)
            secs = time.perf_counter() - t0
            sc, wps = _score(Tokenizer.from_component(comp), dev)
            row(tb, "train (bias: held-out train)", "dev", name, sc, f"{wps:,.0f}",
                f"{_size(comp) / 1e6:.1f} MB, {secs:.0f} s")
            comp = train_tokenizer(train, dev, **opts)
            sc, wps = _score(Tokenizer.from_component(comp), test)
            row(tb, "train (bias: dev)", "test", name, sc, f"{wps:,.0f}")
        else:
            t0 = time.perf_counter()
            comp = train_tokenizer(dev, **opts)
            secs = time.perf_counter() - t0
            sc, wps = _score(Tokenizer.from_component(comp), test)
            row(tb, "dev (bias: held-out dev)", "test", name, sc, f"{wps:,.0f}",
                f"{_size(comp) / 1e6:.1f} MB, {secs:.0f} s")
        if a.syntok and tb == "en_ewt":
            row(tb, "-", "dev", "syntok 1.4.4", _syntok(a.syntok, dev))
            row(tb, "-", "test", "syntok 1.4.4", _syntok(a.syntok, test))
    if a.out:
        Path(a.out).write_text("\n".join(rows) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
