"""The three UD evaluation settings (issue 12): gold tokenization and tags, gold tokenization
with predicted tags, raw text.

    python benchmarks/real_input.py [--model MODEL] [--six]

For a model (default: the shipped English one) on en_ewt test, with the official CoNLL 2018
definitions (``depparse.evaluate``, checked against the shared task's script in the tests):

* **gold tokenization + gold tags**: the test file as it is;
* **gold tokenization**: LEMMA, UPOS, XPOS and FEATS blanked ('_'), so that the model's
  tagger and lemmatizer predict them (``depparse parse`` on untagged input);
* **raw text**: the test file's raw text (its ``# text`` lines, paragraphs as the treebank's
  ``# newpar``), segmented and tokenized by the model's tokenizer (``depparse parse --input
  text``), scored with the CoNLL 2018 word alignment.

Published figures beside ours (from their papers / model cards, not re-run here): UDPipe 1.2
with its UD 2.3 English-EWT model, and spaCy's transformer pipeline en_udv25_englishewt_trf.
With ``--six`` the three settings are also measured on the six shared treebanks with G+S
models trained here by ``depparse train``'s defaults (no encoder; train→test for en_ewt,
pt_bosque, tr_imst, dev→test for the others).  Output: ``benchmarks/results/real_input.md``.
"""

from __future__ import annotations

import argparse
import io
import logging
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
SIX = [("en_ewt", "train"), ("pt_bosque", "train"), ("tr_imst", "train"),
       ("da_ddt", "dev"), ("nl_alpino", "dev"), ("sv_talbanken", "dev")]
METRICS = ("Tokens", "Words", "Sentences", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas",
           "UAS", "LAS")
# published numbers (None: not given)
UDPIPE = {"gold tokenization + gold tags": {"UAS": 87.7, "LAS": 85.8},
          "gold tokenization": {"UPOS": 94.4, "XPOS": 93.9, "UFeats": 95.4, "AllTags": 92.5,
                                "Lemmas": 96.8, "UAS": 84.5, "LAS": 81.2},
          "raw text": {"Words": 99.1, "Sentences": 77.1, "UPOS": 93.5, "XPOS": 92.9,
                       "UFeats": 94.5, "AllTags": 91.5, "Lemmas": 96.0, "UAS": 80.5,
                       "LAS": 77.5}}
SPACY = {"raw text": {"UPOS": 96.9, "XPOS": 96.4, "UFeats": 96.9, "Lemmas": 97.4, "UAS": 91.9,
                      "LAS": 89.4, "Sentences": 90.6}}


def blank_tags(sentences):
    """The sentences, read back from CoNLL-U with LEMMA, UPOS, XPOS and FEATS set to '_'."""
    from depparse.conllu import read_conllu, write_conllu

    buf = io.BytesIO()
    write_conllu(sentences, buf)
    out = []
    for line in buf.getvalue().decode("utf-8").split("\n"):
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cols[2:6] = ["_"] * 4
        out.append("\t".join(cols))
    return read_conllu(io.BytesIO("\n".join(out).encode("utf-8")))


def settings(parser, gold):
    """Scores of ``parser`` on the gold sentences in the three settings (with timings)."""
    from depparse.evaluate import evaluate
    from depparse.learn.tokenizer_training import treebank_text

    out = {}
    words = sum(s.n for s in gold)
    t0 = time.perf_counter()
    out["gold tokenization + gold tags"] = (evaluate(gold, parser.parse(gold)),
                                            time.perf_counter() - t0)
    blank = blank_tags(gold)
    t0 = time.perf_counter()
    out["gold tokenization"] = (evaluate(gold, parser.parse(blank)), time.perf_counter() - t0)
    if parser.tokenizer is not None:
        t0 = time.perf_counter()
        system = parser.parse(parser.read_text(treebank_text(gold), source="<raw text>"))
        out["raw text"] = (evaluate(gold, system), time.perf_counter() - t0)
    return {k: (sc, words / dt) for k, (sc, dt) in out.items()}


def warm_up(parser, gold):
    """Run every path of :func:`settings` once on a few sentences, so that no timing includes
    loading the compiled kernels of the tagger or the tokenizer."""
    from depparse.learn.tokenizer_training import treebank_text

    few = gold[:10]
    parser.parse(few)
    parser.parse(blank_tags(few))
    if parser.tokenizer is not None:
        parser.parse(parser.read_text(treebank_text(few), source="<warm-up>"))


def speed(parser, gold, rounds=3):
    """Words/s of parsing the gold sentences with their tags and with the tags blanked (the
    tagger predicts them), back to back in each round after a warm-up of both paths (the
    tagger's kernels compile on first use); returns [(tagged, untagged), ...] per round."""

    blank = blank_tags(gold)
    warm_up(parser, gold)
    words = sum(s.n for s in gold)
    out = []
    for _ in range(rounds):
        pair = []
        for sents in (gold, blank):
            t0 = time.perf_counter()
            parser.parse(sents)
            pair.append(words / (time.perf_counter() - t0))
        out.append(tuple(pair))
    return out


def table(rows):
    lines = ["| system | setting | " + " | ".join(METRICS) + " | words/s |",
             "|---|---|" + "---|" * (len(METRICS) + 1)]
    for system, setting, vals, wps in rows:
        cells = [("–" if vals.get(m) is None else f"{vals[m]:.2f}") for m in METRICS]
        lines.append(f"| {system} | {setting} | " + " | ".join(cells) + f" | {wps} |")
    return lines


def values(sc, setting):
    v = {m: sc.metric(m).f1 for m in METRICS}
    if setting != "raw text":  # the input's tokenization: these are 100 by construction
        for m in ("Tokens", "Words", "Sentences"):
            v[m] = None
    if setting == "gold tokenization + gold tags":
        for m in ("UPOS", "XPOS", "UFeats", "AllTags", "Lemmas"):
            v[m] = None
    return v


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="model (default: the shipped English one)")
    ap.add_argument("--six", action="store_true",
                    help="also the six shared treebanks, three settings (trains 6 models)")
    ap.add_argument("--speed", type=int, metavar="ROUNDS", default=0,
                    help="only: words/s of en_ewt test tagged vs untagged, ROUNDS rounds back "
                         "to back after a warm-up of both paths")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    import depparse
    from depparse.conllu import read_conllu
    from depparse.paths import corpora_dir, treebank_file

    if not corpora_dir().is_dir():
        print(f"corpora not found at {corpora_dir()} (set DEPPARSE_CORPORA)", file=sys.stderr)
        return 2
    parser = depparse.load(args.model)
    gold = read_conllu(treebank_file("en_ewt", "test"))
    if args.speed:
        for i, (tagged, untagged) in enumerate(speed(parser, gold, args.speed), 1):
            print(f"round {i}: tagged {tagged:,.0f} words/s, untagged (tags predicted) "
                  f"{untagged:,.0f} words/s: {100 * untagged / tagged:.1f}%", flush=True)
        return 0
    warm_up(parser, gold)
    rows = []
    scores = settings(parser, gold)
    for setting, (sc, wps) in scores.items():
        rows.append(("depparse", setting, values(sc, setting), f"{wps:,.0f}"))
    for setting in ("gold tokenization + gold tags", "gold tokenization", "raw text"):
        if setting in UDPIPE:
            rows.append(("UDPipe 1.2 (UD 2.3 model, published)", setting, UDPIPE[setting], "–"))
        if setting in SPACY:
            rows.append(("spaCy en_udv25_englishewt_trf (published)", setting, SPACY[setting],
                         "–"))
    name = Path(parser.path).name
    lines = ["# depparse on real input: the three UD settings", "",
             f"Generated by `python benchmarks/real_input.py` with `{name}` on en_ewt test "
             "(2,077 sentences); CoNLL 2018 definitions (LAS: universal part of DEPREL; F1 "
             "where the tokenization differs); words/s: read + tag + parse of the whole file "
             "in one process. UDPipe and spaCy: their published figures (UDPipe 1.2 with "
             "its UD 2.3 English-EWT model, on the UD 2.3 test set; spaCy's "
             "en_udv25_englishewt_trf model card, UD 2.5), not re-run here.", ""]
    lines += table(rows)
    ratio = scores["gold tokenization"][1] / scores["gold tokenization + gold tags"][1]
    lines += ["", f"Parsing the file without its tags (the tagger and lemmatizer predict them) "
              f"ran at {100 * ratio:.1f}% of the words/s with them in this run; "
              "`--speed 3` measures the two back to back, three times."]
    if args.six:
        lines += ["", "## The six shared treebanks", "",
                  "G+S models trained here with their tagger, lemmatizer and tokenizer "
                  "(`depparse train` defaults: no encoder, which is English-only); "
                  "**dev→test**: trained on dev (no train file here).", ""]
        six = []
        for code, split in SIX:
            tr = read_conllu(treebank_file(code, split))
            dev = read_conllu(treebank_file(code, "dev")) if split == "train" else None
            te = read_conllu(treebank_file(code, "test"))
            m = depparse.train(tr, dev, model="gs", progress=False)
            p = depparse.Parser(m)
            warm_up(p, te)
            res = settings(p, te)
            for setting in res:
                sc, wps = res[setting]
                label = code if split == "train" else f"{code} (**dev→test**)"
                six.append((label, setting, values(sc, setting), f"{wps:,.0f}"))
            (RESULTS / "real_input.md").write_text("\n".join(lines + table(six)) + "\n")
        lines += table(six)
    else:  # keep the six treebanks' section of an earlier --six run (it needs no model)
        old = RESULTS / "real_input.md"
        kept = old.read_text(encoding="utf-8") if old.exists() else ""
        if "\n## The six shared treebanks" in kept:
            lines += ["", "## The six shared treebanks"
                      + kept.split("\n## The six shared treebanks", 1)[1].rstrip("\n")]
    text = "\n".join(lines) + "\n"
    (RESULTS / "real_input.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
