"""Any UD treebank end to end (issue 29, item 4): ``depparse train`` with its defaults on six
treebanks that have no training file here, scored on test in the three UD settings.

    python benchmarks/six_treebanks.py [--treebanks de_gsd,fr_gsd,...] [--force]

For German (de_gsd), French (fr_gsd), Italian (it_isdt), Finnish (fi_tdt), Chinese
(zh_gsdsimp: no spaces between words) and Korean (ko_kaist), each model is trained by the
command line, ``depparse train CODE-ud-dev.conllu -o MODEL --recipe none`` (**train on dev,
test on test**: these folders have no train file), with nothing but the flags' defaults (as in
round 3, before the default recipe): the G+S parser, labeler,
tagger, lemmatizer and plain-text tokenizer (no encoder: MiniLM is English-only).  It is then
scored on the test file with the CoNLL 2018 definitions (``depparse.evaluate``) in the three
settings of ``benchmarks/real_input.py``: gold tokenization and tags; gold tokenization with
LEMMA, UPOS, XPOS and FEATS predicted; raw text (the test file's ``# text`` lines, paragraphs
at ``# newpar``/``# newdoc``) read by the model's tokenizer.  The training log's warnings
(what a model leaves out) and the tokenizer's multiword-token rules are kept per treebank.

Every treebank's result is cached as JSON under ``benchmarks/results/six_treebanks/`` (an
interrupted run resumes; ``--force`` recomputes); the models go to
``benchmarks/results/models/`` (not committed).  Output:
``benchmarks/results/six_treebanks.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
CACHE = RESULTS / "six_treebanks"
TREEBANKS = ["de_gsd", "fr_gsd", "it_isdt", "fi_tdt", "zh_gsdsimp", "ko_kaist"]
SETTINGS = ("gold tokenization + gold tags", "gold tokenization", "raw text")
#: multiword tokens whose words the issue names (the test file's own, if it has them)
EXAMPLES = {"de_gsd": ["zum", "im", "vom"], "fr_gsd": ["du", "au", "des"],
            "it_isdt": ["della", "nel", "al"]}


def run(code: str) -> dict:
    """Train on dev by the command line, score on test; the JSON-able result."""
    sys.path.insert(0, str(HERE))
    from real_input import METRICS, settings, values, warm_up

    import depparse
    from depparse.conllu import read_conllu
    from depparse.paths import treebank_file

    mdir = RESULTS / "models"
    mdir.mkdir(parents=True, exist_ok=True)
    model = mdir / f"{code}_six.npz"
    train_file = treebank_file(code, "dev")
    # the flags' defaults, as when benchmarks/results/six_treebanks.md was measured (round 3,
    # before `depparse train` took the default recipe without --recipe: issue 48)
    cmd = [sys.executable, "-m", "depparse.cli", "train", str(train_file), "-o", str(model),
           "--recipe", "none"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    train_s = time.perf_counter() - t0
    log = proc.stderr.splitlines()
    if proc.returncode:
        raise SystemExit(f"{code}: depparse train failed ({proc.returncode}):\n"
                         + "\n".join(log[-20:]))
    parser = depparse.load(model)
    gold = read_conllu(treebank_file(code, "test"))
    warm_up(parser, gold)
    scores = settings(parser, gold)
    out = {"treebank": code, "trained_on": "dev", "tested_on": "test",
           "command": "depparse train " + str(train_file.relative_to(train_file.parents[1]))
           + f" -o {model.name} --recipe none",
           "train_sentences": len(read_conllu(train_file)),
           "train_words": sum(s.n for s in read_conllu(train_file)),
           "test_words": sum(s.n for s in gold),
           "train_seconds": round(train_s, 1), "model_mb": round(model.stat().st_size / 1e6, 2),
           "warnings": [x for x in log if "warning" in x or "left out" in x or "no " in x],
           "scores": {}, "words_per_second": {}}
    for setting, (sc, wps) in scores.items():
        v = values(sc, setting)
        out["scores"][setting] = {m: (None if v[m] is None else round(v[m], 2)) for m in METRICS}
        out["words_per_second"][setting] = round(wps)
    tok = parser.tokenizer
    if tok is not None:
        ex = {}
        for form in EXAMPLES.get(code, []):
            sents = parser.read_text(f"{form.capitalize()} {form} .", source="<example>")
            ex[form] = [w for s in sents for w in s.forms[1:]]
        out["mwt_examples"] = ex
        out["tokenizer"] = {k: v for k, v in tok.describe().items()} if hasattr(
            tok, "describe") else {}
    return out


def mwt_stats(code: str) -> dict:
    """Multiword tokens of the test file, and how many of them the dev file (the training
    data) never shows: those the tokenizer's dictionary cannot split."""
    from depparse.conllu import read_conllu
    from depparse.learn.tokenizer_training import mwt_dictionary, sentence_tokens
    from depparse.paths import treebank_file

    known = mwt_dictionary(read_conllu(treebank_file(code, "dev")))
    n, unseen, examples = 0, 0, {}
    for s in read_conllu(treebank_file(code, "test")):
        for form, _, words in sentence_tokens(s):
            if words:
                n += 1
                if form not in known and form.lower() not in known:
                    unseen += 1
                    key = f"{form.lower()} = {' '.join(words).lower()}"
                    examples[key] = examples.get(key, 0) + 1
    top = sorted(examples.items(), key=lambda kv: -kv[1])[:4]
    return {"test_mwt": n, "unseen": unseen, "examples": [k for k, _ in top]}


def table(results: list[dict]) -> list[str]:
    from real_input import METRICS

    lines = ["| treebank (**trained on dev, tested on test**) | setting | "
             + " | ".join(METRICS) + " | words/s |",
             "|---|---|" + "---|" * (len(METRICS) + 1)]
    for r in results:
        for setting in SETTINGS:
            if setting not in r["scores"]:
                continue
            v = r["scores"][setting]
            cells = ["–" if v.get(m) is None else f"{v[m]:.2f}" for m in METRICS]
            lines.append(f"| {r['treebank']} (dev→test) | {setting} | " + " | ".join(cells)
                         + f" | {r['words_per_second'][setting]:,} |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--treebanks", default=",".join(TREEBANKS),
                    help="comma-separated codes to compute ('none': only write the table of "
                         "the cached ones)")
    ap.add_argument("--force", action="store_true", help="recompute cached treebanks")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from depparse.paths import corpora_dir

    if not corpora_dir().is_dir():
        print(f"corpora not found at {corpora_dir()} (set DEPPARSE_CORPORA)", file=sys.stderr)
        return 2
    CACHE.mkdir(parents=True, exist_ok=True)
    for code in [c for c in args.treebanks.split(",") if c and c != "none"]:
        f = CACHE / f"{code}.json"
        if f.exists() and not args.force:
            continue
        print(f"{code}: training on dev ...", file=sys.stderr, flush=True)
        r = run(code)
        f.write_text(json.dumps(r, indent=1, ensure_ascii=False) + "\n")
        print(f"{code}: done in {r['train_seconds']:.0f} s of training", file=sys.stderr,
              flush=True)
    results = [json.loads((CACHE / f"{c}.json").read_text()) for c in TREEBANKS
               if (CACHE / f"{c}.json").exists()]
    lines = ["# Any UD treebank, end to end: six treebanks trained by `depparse train`'s "
             "defaults", "",
             "Generated by `python benchmarks/six_treebanks.py` (cached per treebank in "
             "`benchmarks/results/six_treebanks/*.json`, with the training command, its "
             "warnings and the timings).  **Every model here is trained on the treebank's "
             "dev file and tested on its test file** (these folders have no train file), "
             "with `depparse train DEV.conllu -o MODEL` and nothing else: G+S parser, "
             "labeler, tagger, lemmatizer, tokenizer; no encoder.  CoNLL 2018 definitions "
             "(LAS: universal part of DEPREL; F1 where the tokenization differs); words/s: "
             "tag + parse (and tokenize) of the whole test file in one process.", ""]
    lines += table(results)
    lines += ["", "| treebank | training sentences / words (dev) | test words | "
              "training s | model MB |", "|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['treebank']} | {r['train_sentences']:,} / {r['train_words']:,} "
                     f"| {r['test_words']:,} | {r['train_seconds']:.0f} | {r['model_mb']} |")
    lines += ["", "Multiword tokens of each test file that its dev file (the training data) "
              "never shows, which the tokenizer's dictionary of the training data cannot split "
              "(it has no rules for unseen forms):", "",
              "| treebank | test multiword tokens | not in dev | e.g. |", "|---|---|---|---|"]
    for code in TREEBANKS:
        m = mwt_stats(code)
        lines.append(f"| {code} | {m['test_mwt']:,} | {m['unseen']:,} | "
                     + ", ".join(f"`{e}`" for e in m["examples"]) + " |")
    ex = [r for r in results if r.get("mwt_examples")]
    if ex:
        lines += ["", "Multiword tokens as the trained tokenizers split them (`parser."
                  "read_text(\"Form form .\")`):", ""]
        for r in ex:
            for form, words in r["mwt_examples"].items():
                lines.append(f"- {r['treebank']}: `{form.capitalize()} {form}` → "
                             f"`{' '.join(words[:-1])}`")
    lines += ["", f"Machine: {platform.machine()}, {os.cpu_count()} cores (shared; one "
              "process per treebank, one after the other, at low priority beside the machine's "
              "other jobs: the words/s vary with their load)."]
    text = "\n".join(lines) + "\n"
    (RESULTS / "six_treebanks.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
