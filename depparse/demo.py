"""``make demo``: parse the sample sentences with the shipped English model.

Prints every tree readably with its certificate, UAS/LAS against the sample's gold trees and
the certificate rate, and writes the parsed file, the JSON report and the HTML report under
``out/demo/``; then parses a paragraph of plain text (the model's own tokenizer and, when it
has one, tagger).  Run as ``python -m depparse.demo [--model PATH] [--input FILE]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from .paths import REPO_ROOT

__all__ = ["main", "format_tree"]


def format_tree(sentence, result) -> str:
    """A readable rendering of one parsed sentence: one line per word, arrows to heads."""
    lines = []
    status = (f"certified in {result.iterations} iteration{'s' * (result.iterations != 1)}"
              if result.certificate else
              f"NOT certified (best of {result.iterations} iterations)")
    sid = sentence.sent_id or ""
    lines.append(f"{sid}  {sentence.text or ' '.join(sentence.forms[1:])}")
    lines.append(f"  [{status}, {1000 * result.seconds:.1f} ms]")
    width = max(len(f) for f in sentence.forms[1:])
    for m in range(1, sentence.n + 1):
        h = int(sentence.heads[m])
        head = "ROOT" if h == 0 else f"{h} {sentence.forms[h]}"
        lines.append(f"  {m:3d} {sentence.forms[m]:<{width}}  {sentence.upos[m]:<6} "
                     f"{sentence.rels[m] or '_':<12} -> {head}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m depparse.demo", description=__doc__)
    ap.add_argument("--model", default=None, help="model file (default: the shipped model)")
    ap.add_argument("--input", default=str(REPO_ROOT / "corpora" / "sample.conllu"))
    ap.add_argument("--out", default=str(REPO_ROOT / "out" / "demo"))
    args = ap.parse_args(argv)

    from .api import load
    from .conllu import read_conllu, write_conllu
    from .errors import ModelError
    from .evaluate import evaluate
    from .report import build_report, write_report

    try:
        t0 = time.perf_counter()
        parser = load(args.model)
        t_load = time.perf_counter() - t0
    except ModelError as e:
        print(f"depparse demo: {e}", file=sys.stderr)
        return 2
    gold = read_conllu(args.input)
    parser.parse(gold[:1])  # warm-up: load the compiled kernels
    t0 = time.perf_counter()
    results = parser.parse_results(gold)
    dt = time.perf_counter() - t0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_conllu([p for p, _ in results], out / "sample.parsed.conllu")
    for p, r in results:
        print(format_tree(p, r))
        print()
    sc = evaluate(gold, [p for p, _ in results])
    cert = sum(r.certificate for _, r in results)
    words = sum(s.n for s in gold)
    report = build_report(parser, [(args.input, gold)], results, dt)
    (out / "report.json").write_text(json.dumps(report))
    index = write_report(report, out / "report")
    print(f"model      {parser.path} ({parser.config.model}, loaded in {t_load:.1f} s)")
    print(f"sentences  {len(gold)}, words {words}, parsed in {dt:.3f} s")
    print(f"UAS        {sc.uas:.2f}")
    print(f"LAS        {sc.las:.2f}")
    print(f"certified  {cert}/{len(gold)} ({100.0 * cert / max(1, len(gold)):.1f}%)")
    print(f"output     {out / 'sample.parsed.conllu'}")
    print(f"report     {index}")
    print()
    if parser.tokenizer is None:
        print("plain text: this model has no tokenizer (it reads CoNLL-U only)")
        return 0
    print(f"plain text: {PLAIN!r}")
    for s, r in parser.parse_results(parser.read_text(PLAIN, source="<demo>")):
        print(format_tree(s, r))
    print("(the same from the command line: echo '...' | depparse parse --input text -)")
    return 0


#: The plain-text example of the demo (segmented, tokenized, tagged and parsed).
PLAIN = "I didn't see the film, but my sister loved it. She's seen it twice!"


if __name__ == "__main__":
    sys.exit(main())
