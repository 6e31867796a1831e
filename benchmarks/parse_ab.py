"""Two checkouts of depparse, the same parse: their speed in alternating rounds, and whether
their outputs are the same.

    python benchmarks/parse_ab.py REF [--setting raw|untagged|gold ...] [--rounds 3]
                                      [--limit N] [--model M] [--check DIR]

``REF`` is another checkout with its own ``.venv`` (``make venv``; the lead's
``/work/main``, say); the other is this script's.  For each setting (``raw``: en_ewt test's
raw text, segmented and tokenized by the model's tokenizer, as ``depparse parse --input
text``; ``untagged``: the gold tokenization with LEMMA, UPOS, XPOS and FEATS blanked, so the
model's tagger and lemmatizer predict them; ``gold``: the test file as it is), each round
runs both checkouts in turn, each in a fresh process of its own environment that loads the
model (default: the shipped English one), warms up every path on the first ten sentences
(benchmarks/real_input.py's ``warm_up``) and then times parsing the whole test file (the raw
path includes reading the text); the order of the two alternates from round to round, so
that a slow drift of the machine's load favours neither.  Printed: words/s of each run, the
machine's load average at each, and the ratio (this checkout over REF) per round and its
median over the rounds.

``--check DIR``: the first round's CoNLL-U outputs are kept in ``DIR`` and compared word by
word (HEAD, DEPREL, UPOS, XPOS, LEMMA, FEATS, and the tokenization); where any differs, both
are scored against the gold file (CoNLL 2018 definitions, ``depparse.evaluate``) and the
differences listed.  Exit status 1 when the outputs differ.

Run it under the shared lock, alone on the machine: ``flock /work/heavy.lock nice -n 5
python benchmarks/parse_ab.py /work/main --check /tmp/ab``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SETTINGS = ("raw", "untagged", "gold")


def worker(setting, model, limit, out):
    """In the checkout's own environment: time one setting; print ``{"words", "seconds"}``."""
    sys.path.insert(0, str(HERE))
    from real_input import blank_tags, warm_up

    import depparse
    from depparse.conllu import read_conllu, write_conllu
    from depparse.learn.tokenizer_training import treebank_text
    from depparse.paths import treebank_file

    parser = depparse.load(model)
    gold = read_conllu(treebank_file("en_ewt", "test"))
    if limit:
        gold = gold[:limit]
    warm_up(parser, gold)
    words = sum(s.n for s in gold)
    if setting == "raw":
        text = treebank_text(gold)
        t0 = time.perf_counter()
        parsed = parser.parse(parser.read_text(text, source="<raw text>"))
    else:
        sents = blank_tags(gold) if setting == "untagged" else gold
        t0 = time.perf_counter()
        parsed = parser.parse(sents)
    seconds = time.perf_counter() - t0
    if out:
        write_conllu(parsed, out)
    print(json.dumps({"words": words, "seconds": seconds}))


def run(checkout, setting, args, out=None):
    python = Path(checkout) / ".venv" / "bin" / "python"
    cmd = [str(python), str(Path(__file__).resolve()), "--worker", setting, "--limit",
           str(args.limit)]
    if args.model:
        cmd += ["--model", args.model]
    if out:
        cmd += ["--out", str(out)]
    from depparse.paths import corpora_dir  # this checkout's: the same treebank for both

    env = dict(os.environ, PYTHONPATH="", DEPPARSE_CORPORA=str(corpora_dir().resolve()))
    got = subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True)
    if got.returncode:
        sys.exit(f"{checkout}: the worker failed:\n{got.stderr[-3000:]}")
    r = json.loads(got.stdout.strip().splitlines()[-1])
    return r["words"] / r["seconds"], os.getloadavg()[0]


def _rows(path):
    """Per sentence, the tuple of each word line's columns 1-8 (ID..DEPREL), in order."""
    out, cur = [], []
    for line in Path(path).read_text(encoding="utf-8").split("\n"):
        if not line:
            if cur:
                out.append(cur)
                cur = []
        elif not line.startswith("#"):
            cur.append(tuple(line.split("\t")[:8]))
    if cur:
        out.append(cur)
    return out


def compare(ref_out, new_out, setting, limit):
    """The number of differing words (any of columns 1-8) between the two outputs; where
    some differ, both outputs' scores against the gold file."""
    a, b = _rows(ref_out), _rows(new_out)
    words = sum(len(s) for s in a)
    differ, shown = 0, []
    if len(a) != len(b):
        print(f"  {setting}: {len(a)} against {len(b)} sentences")
        return -1
    for k, (sa, sb) in enumerate(zip(a, b, strict=True)):
        if len(sa) != len(sb):
            differ += max(len(sa), len(sb))
            continue
        for wa, wb in zip(sa, sb, strict=True):
            if wa != wb:
                differ += 1
                if len(shown) < 10:
                    shown.append((k, wa, wb))
    print(f"  {setting}: {differ} of {words} words differ")
    for k, wa, wb in shown:
        print(f"    sentence {k}: {wa} / {wb}")
    if differ:
        from depparse.conllu import read_conllu
        from depparse.evaluate import evaluate
        from depparse.paths import treebank_file

        gold = read_conllu(treebank_file("en_ewt", "test"))
        if limit:
            gold = gold[:limit]
        for name, path in (("REF", ref_out), ("this", new_out)):
            sc = evaluate(gold, read_conllu(path))
            print(f"    {name}: " + ", ".join(f"{m} {sc.metric(m).f1:.2f}"
                                              for m in ("UPOS", "Lemmas", "UAS", "LAS")))
    return differ


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ref", nargs="?", help="the other checkout (with its .venv)")
    ap.add_argument("--setting", choices=SETTINGS, action="append")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="the first N test sentences only")
    ap.add_argument("--model", default=None)
    ap.add_argument("--check", metavar="DIR", help="keep and compare the first round's outputs")
    ap.add_argument("--worker", choices=SETTINGS, help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.model, args.limit, args.out)
        return 0
    if not args.ref:
        ap.error("give the other checkout")
    this = str(HERE.parent)
    sides = {"REF": str(Path(args.ref).resolve()), "this": this}
    print(f"REF {sides['REF']} against this {this}; load average at start "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    status = 0
    for setting in args.setting or ["raw"]:
        ratios = []
        for rnd in range(args.rounds):
            order = ("REF", "this") if rnd % 2 == 0 else ("this", "REF")
            wps = {}
            for name in order:
                out = None
                if args.check and rnd == 0:
                    Path(args.check).mkdir(parents=True, exist_ok=True)
                    out = Path(args.check) / f"{setting}.{name}.conllu"
                wps[name], load = run(sides[name], setting, args, out)
                print(f"{setting} round {rnd + 1} {name}: {wps[name]:,.0f} words/s "
                      f"(load {load:.2f})", flush=True)
            ratios.append(wps["this"] / wps["REF"])
            print(f"{setting} round {rnd + 1}: ratio this/REF {ratios[-1]:.3f}", flush=True)
        print(f"{setting}: median ratio this/REF over {args.rounds} rounds "
              f"{statistics.median(ratios):.3f}", flush=True)
        if args.check:
            d = Path(args.check)
            if compare(d / f"{setting}.REF.conllu", d / f"{setting}.this.conllu", setting,
                       args.limit):
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
