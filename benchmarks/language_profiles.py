"""The character profiles of the shipped models, and the measurement of the language check.

    python benchmarks/language_profiles.py write      # models/<name>.chars.json
    python benchmarks/language_profiles.py measure    # benchmarks/results/language_check.md

``write``: for every model of the checkout's ``models/`` whose training treebank is in the
corpora (``$DEPPARSE_CORPORA``), the character trigram profile of its train file, with the
score of its dev file as the level the check measures from
(:mod:`depparse.encoding.language`).  A model is not rebuilt: the profile is a file beside it.

``measure``: every dev and test file of the corpora, cut into samples of consecutive sentences
of at least S characters (S = 300, 1000 and 2000: a short request, the smallest sample the
check reads, what it reads of a file), scored against every profile: the excess over each
model's own level (bits per trigram) of its own language's test file and of every other
language's files, and what the check (:func:`depparse.catalog.language_verdict`, with its
thresholds) says of each sample: a false alarm on the model's own language, a wrong language
let through, the shipped model it names.  Writes ``benchmarks/results/language_check.md`` and
``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from depparse import catalog  # noqa: E402
from depparse.conllu import read_conllu  # noqa: E402
from depparse.encoding.language import (  # noqa: E402
    Profile,
    bits_per_trigram,
    profile_path,
    sentence_text,
    trigrams,
)
from depparse.paths import corpora_dir  # noqa: E402

SIZES = (300, 1000, 2000)
RESULTS = REPO / "benchmarks" / "results"


def _texts(path):
    return [sentence_text(s) for s in read_conllu(path)]


def _split(treebank, split):
    return corpora_dir() / treebank / f"{treebank}-ud-{split}.conllu"


def write():
    for e in catalog.models():
        if e.source == "checkout":
            dev_only = not _split(e.treebank, "train").exists()  # trained on dev
            write_one(e.path, e.treebank, e.name, split="dev" if dev_only else "train")


def write_one(model_path, treebank, name=None, split="train"):
    """The profile of one model file from its treebank's train file, the level from its dev
    file (a treebank without one, or a model trained on the dev split, ``split="dev"``: the
    profile from the first 90% of that file, the level from the last 10%, as the model's own
    training holds them out)."""
    name = name or Path(model_path).stem
    train = _split(treebank, split)
    dev = _split(treebank, "dev" if split == "train" else "none")
    if not train.exists():
        print(f"{name}: {train} not found: no profile", file=sys.stderr)
        return None
    texts = _texts(train)
    if dev.exists():
        held, source = _texts(dev), dev.name
    else:
        cut = len(texts) - max(1, len(texts) // 10)
        texts, held, source = texts[:cut], texts[cut:], f"the last 10% of {train.name}"
    p = Profile.count(texts, source=train.name)
    p = Profile(p.grams, p.total, p.rest, p.rest_types,
                round(bits_per_trigram(p, held), 4), p.source, source)
    out = profile_path(model_path)
    p.save(out)
    print(f"{name}: {out} ({out.stat().st_size / 1e3:.0f} KB; {p.total:,} trigrams, "
          f"{len(p.grams):,} kept; held out {p.held_out_bits:.3f} bits per trigram)")
    return out


def _samples(texts, size):
    out, cur, n = [], [], 0
    for t in texts:
        cur.append(t)
        n += len(t)
        if n >= size:
            out.append(cur)
            cur, n = [], 0
    return out


def measure():
    t0 = time.perf_counter()
    shipped = [(e, Profile.load(profile_path(e.path))) for e in catalog.models()
               if profile_path(e.path).exists()]
    files = sorted(p for p in corpora_dir().glob("*/*-ud-*.conllu")
                   if p.name.split("-ud-")[1] in ("dev.conllu", "test.conllu"))
    texts = {f: _texts(f) for f in files}
    rows = []
    for size in SIZES:
        for f in files:
            tb = f.parent.name
            for k, sample in enumerate(_samples(texts[f], size)):
                grams = [g for t in sample for g in trigrams(t)]
                ex = {e.name: p.bits(grams) - p.held_out_bits for e, p in shipped}
                known = {e.name: p.known(grams) for e, p in shipped}
                chars = sum(len(t) for t in sample)
                for e, _ in shipped:
                    fits, better = catalog.language_verdict(ex, e.name, chars, known)
                    rows.append({"size": size, "file": f.name, "treebank": tb, "sample": k,
                                 "model": e.name, "own": tb == e.treebank,
                                 "excess": round(ex[e.name], 4), "fits": fits,
                                 "better": better,
                                 "shipped_language": tb in {x.treebank for x, _ in shipped}})
    seconds = time.perf_counter() - t0
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "language_check.json").write_text(json.dumps(
        {"sizes": SIZES, "threshold": catalog.LANGUAGE_EXCESS, "margin": catalog.LANGUAGE_MARGIN,
         "min_chars": catalog.LANGUAGE_MIN_CHARS,
         "absolute_chars": catalog.LANGUAGE_ABSOLUTE_CHARS,
         "short_excess": catalog.LANGUAGE_SHORT_EXCESS,
         "known_ratio": catalog.LANGUAGE_KNOWN_RATIO, "groups": _groups(rows)}, indent=1),
        encoding="utf-8")
    (RESULTS / "language_check.md").write_text(_table(rows, shipped, seconds),
                                                encoding="utf-8")
    print(f"benchmarks/results/language_check.md ({len(rows):,} scores, {seconds:.0f} s)")


def _groups(rows):
    """Per model, sample size and file: the samples, their excess (min, median, max), how
    many were said to fit and which model the warning named (the machine-readable summary)."""
    out: dict = {}
    for x in rows:
        out.setdefault((x["model"], x["size"], x["file"]), []).append(x)
    res = []
    for (model, size, f), r in sorted(out.items()):
        v = np.array([x["excess"] for x in r])
        v = v[~np.isnan(v)]
        named: dict = {}
        for x in r:
            if x["better"]:
                named[x["better"]] = named.get(x["better"], 0) + 1
        res.append({"model": model, "size": size, "file": f, "own": r[0]["own"],
                    "samples": len(r), "min": round(float(v.min()), 3),
                    "median": round(float(np.median(v)), 3), "max": round(float(v.max()), 3),
                    "fit": sum(x["fits"] for x in r), "named": named})
    return res


def _table(rows, shipped, seconds):
    L = ["# The language check: measured on the corpora's dev and test files", "",
         "`python benchmarks/language_profiles.py measure` (profiles: `... write`; "
         f"{seconds:.0f} s).  Excess: bits per character trigram above the model's own dev "
         "file's level (`depparse/encoding/language.py`).  The check "
         "(`depparse.catalog.language_verdict`): a sample of at least "
         f"{catalog.LANGUAGE_MIN_CHARS} characters does not fit a model when its excess is "
         f"over {catalog.LANGUAGE_EXCESS} bits, where the sample has at least "
         f"{catalog.LANGUAGE_ABSOLUTE_CHARS} characters; a shorter one is compared with the "
         f"other models alone: it does not fit when another model's excess is lower by "
         f"{catalog.LANGUAGE_MARGIN} bits or more, and that model is named when its excess is "
         f"at most {catalog.LANGUAGE_EXCESS} (a long sample) or "
         f"{catalog.LANGUAGE_SHORT_EXCESS} (a short one); another model counts only where "
         f"its profile keeps at least {catalog.LANGUAGE_KNOWN_RATIO} times the share of the "
         "sample's trigrams the model's own keeps (`known_share`: another script's profile "
         "scores text evenly).  'fit' below counts the samples "
         "said to fit (for short samples of a language no model has, often: they are only "
         "compared with the other models), 'named' the model the warning names.", ""]
    L += ["## Own language: excess and false alarms", "",
          "The model's dev file (whose mean is the level: its median is near 0) and its test "
          "file.  A sample with no trigram left (web addresses alone) scores nothing and is "
          "left out.", "",
          "| model | file | sample ≥ chars | samples | median | p99 | max | said not to fit | "
          "another model named |", "|---|---|---|---|---|---|---|---|---|"]
    for e, _ in shipped:
        for split in ("dev", "test"):
            for size in SIZES:
                r = [x for x in rows if x["model"] == e.name and x["size"] == size
                     and x["own"] and x["file"].endswith(f"-{split}.conllu")]
                v = np.array([x["excess"] for x in r])
                v = v[~np.isnan(v)]
                if not len(v):  # no such file (gl_treegal has no dev file)
                    continue
                L.append(f"| {e.name} | {split} | {size} | {len(v)} | {np.median(v):.2f} | "
                         f"{np.percentile(v, 99):.2f} | {v.max():.2f} | "
                         f"{sum(not x['fits'] for x in r)} | "
                         f"{sum(bool(x['better']) for x in r)} |")
    by_tb = {e.treebank: e.name for e, _ in shipped}
    L += ["", "## Other languages: samples let through, and the model named", "",
          "Per model and sample size, the samples of every other treebank of the corpora: of "
          "a shipped language (whose own model the warning should name) and of a language no "
          "model has.  'let through': said to fit this model; 'named right': the warning "
          "names the sample's own model; 'lowest excess': the lowest of any other treebank's "
          "samples.  Per treebank: the JSON beside this file (`groups`).", "",
          "| model | sample ≥ chars | shipped-language samples | let through | named right "
          "| named another | other-language samples | let through | lowest excess |",
          "|---|---|---|---|---|---|---|---|---|"]
    leaks = {}
    for e, _ in shipped:
        for size in SIZES:
            r = [x for x in rows if x["model"] == e.name and x["size"] == size
                 and x["treebank"] != e.treebank]
            sh = [x for x in r if x["shipped_language"]]
            ot = [x for x in r if not x["shipped_language"]]
            for x in sh:
                if x["fits"]:
                    key = (size, x["treebank"], e.name)
                    leaks[key] = leaks.get(key, 0) + 1
            right = sum(x["better"] == by_tb.get(x["treebank"]) for x in sh)
            other = sum(bool(x["better"]) and x["better"] != by_tb.get(x["treebank"])
                        for x in sh)
            low = np.nanmin([x["excess"] for x in r]) if r else float("nan")
            L.append(f"| {e.name} | {size} | {len(sh)} | {sum(x['fits'] for x in sh)} | "
                     f"{right} | {other} | {len(ot)} | {sum(x['fits'] for x in ot)} | "
                     f"{low:.2f} |")
    L += ["", "Shipped-language samples let through, by sample size: treebank → model "
          "(samples).", ""]
    for size in SIZES:
        got = sorted((k[1], k[2], v) for k, v in leaks.items() if k[0] == size)
        L.append(f"- ≥ {size} characters: " + (", ".join(f"{t} → {m} ({v})" for t, m, v in got)
                                                 or "none"))
    return "\n".join(L) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("write", "measure"))
    args = ap.parse_args(argv)
    if not corpora_dir().is_dir():
        sys.exit(f"corpora not found at {corpora_dir()} (set DEPPARSE_CORPORA)")
    os.environ.setdefault("PYTHONHASHSEED", "0")
    write() if args.what == "write" else measure()
    return 0


if __name__ == "__main__":
    sys.exit(main())
