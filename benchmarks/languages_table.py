"""Every shipped language against UDPipe 2's published figures: the one table of issue 48.

    python benchmarks/languages_table.py        # -> benchmarks/results/languages.{md,json}

Reads the test scores of each shipped model's card (``models/*.md``, as ``make model-XX``
wrote them: :func:`depparse.catalog.card_scores`) in the settings gold tokenization with
predicted tags and raw text, UPOS / UAS / LAS, and puts beside them UDPipe 2's published UD
2.17 figures (gold tokenization; ``benchmarks/data/udpipe2_ud217.json``) with the difference.
Nothing is parsed here: the cards are the measurement (each says the command that made it).
The JSON holds every row; the Markdown is the table the README shortens.  A model trained on
its treebank's dev split only (the nine treebanks with only dev and test here: its card says
so) is compared with UDPipe 1's published UD 2.5 LAS (``benchmarks/data/udpipe1_ud25.json``),
UDPipe 2 having no published figure in the corpora for them.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from depparse import catalog  # noqa: E402
from depparse.cli.models import card_licence  # noqa: E402

UDPIPE = json.loads((REPO / "benchmarks" / "data" / "udpipe2_ud217.json").read_text())
UDPIPE1 = json.loads((REPO / "benchmarks" / "data" / "udpipe1_ud25.json").read_text())
#: what the card of a model trained on the dev split says (benchmarks/make_model.py)
DEV_ONLY = re.compile(r"trained on the dev split only \(([\d,]+) words\)")
SETTINGS = ("gold tokenization", "raw text")
METRICS = ("UPOS", "UAS", "LAS")
OUT = REPO / "benchmarks" / "results" / "languages"


def rows() -> list[dict]:
    """One row per shipped model of the checkout (``models/``), by treebank."""
    out = []
    for e in catalog.models():
        if e.source != "checkout":
            continue
        scores = catalog.card_scores(e.card)
        theirs = UDPIPE["treebanks"].get(e.treebank)
        row = {"model": e.name, "lang": e.lang, "treebank": e.treebank,
               "language": catalog.language_name(e.lang),
               "licence": card_licence(e.card), "size_mb": round(e.size / 1e6, 1),
               "depparse": {s: {m: scores.get(s, {}).get(m) for m in METRICS}
                            for s in SETTINGS},
               "udpipe2_gold_tokenization": theirs}
        mine = row["depparse"]["gold tokenization"]
        row["difference_gold_tokenization"] = (
            None if theirs is None else
            {m: None if mine[m] is None else round(mine[m] - theirs[m], 2) for m in METRICS})
        dev = DEV_ONLY.search(Path(e.card).read_text(encoding="utf-8")) if e.card else None
        if dev is not None:
            row["trained_on"] = f"the dev split only ({dev.group(1)} words)"
            u1 = UDPIPE1["treebanks"][e.treebank]["LAS"]
            row["udpipe1_gold_tokenization_las"] = u1
            row["difference_udpipe1_las"] = (None if mine["LAS"] is None
                                             else round(mine["LAS"] - u1, 2))
        out.append(row)
    return sorted(out, key=lambda r: r["treebank"])


def _f(v, signed=False):
    if v is None:
        return "–"
    return f"{v:+.2f}" if signed else f"{v:.2f}"


def markdown(table: list[dict]) -> str:
    lines = ["# Every shipped language against UDPipe 2 (test sets)", "",
             "depparse: each model card's scores (`make model-XX`; CoNLL 2018 definitions), "
             "gold tokenization with predicted tags and raw text.  UDPipe 2: its UD 2.17 "
             "models' published figures, gold tokenization (`benchmarks/data/"
             "udpipe2_ud217.json`: " + UDPIPE["source"] + ").  "
             "Δ: depparse minus UDPipe 2, gold tokenization.  Written by "
             "`python benchmarks/languages_table.py`.", "",
             "| treebank | language | gold tok. UPOS / UAS / LAS | raw text UPOS / UAS / LAS | "
             "UDPipe 2 UPOS / UAS / LAS | Δ UPOS / UAS / LAS |",
             "|---|---|---|---|---|---|"]
    for r in table:
        if "trained_on" in r:
            continue
        g, t = r["depparse"]["gold tokenization"], r["depparse"]["raw text"]
        u, d = r["udpipe2_gold_tokenization"] or {}, r["difference_gold_tokenization"] or {}
        lines.append(
            f"| {r['treebank']} | {r['language']} | "
            + " / ".join(_f(g[m]) for m in METRICS) + " | "
            + " / ".join(_f(t[m]) for m in METRICS) + " | "
            + " / ".join(_f(u.get(m)) for m in METRICS) + " | "
            + " / ".join(_f(d.get(m), True) for m in METRICS) + " |")
    las = [r["difference_gold_tokenization"]["LAS"] for r in table
           if r["difference_gold_tokenization"] and
           r["difference_gold_tokenization"]["LAS"] is not None]
    if las:
        lines += ["", f"{len(las)} languages; mean Δ LAS {sum(las) / len(las):+.2f}; at or "
                  f"above UDPipe 2's LAS: {sum(x >= 0 for x in las)}."]
    dev = [r for r in table if "trained_on" in r]
    if dev:
        lines += ["", "## Trained on the dev split only", "",
                  "The treebanks with only dev and test here, each model trained on its dev "
                  "split (the last 10% held out as its dev data) and shipped where it beats "
                  "UDPipe 1's published gold-tokenization LAS, whose models were trained on the "
                  "full train set (`benchmarks/data/udpipe1_ud25.json`: " + UDPIPE1["source"]
                  + ").  Every build, shipped or not: `benchmarks/results/dev_only/`.", "",
                  "| treebank | language | trained on | gold tok. UPOS / UAS / LAS | raw text "
                  "UPOS / UAS / LAS | UDPipe 1 LAS | Δ LAS |", "|---|---|---|---|---|---|---|"]
        for r in dev:
            g, t = r["depparse"]["gold tokenization"], r["depparse"]["raw text"]
            lines.append(
                f"| {r['treebank']} | {r['language']} | {r['trained_on']} | "
                + " / ".join(_f(g[m]) for m in METRICS) + " | "
                + " / ".join(_f(t[m]) for m in METRICS) + " | "
                + f"{_f(r['udpipe1_gold_tokenization_las'])} | "
                + f"{_f(r['difference_udpipe1_las'], True)} |")
    return "\n".join(lines) + "\n"


README_HEAD = ("| language | model | data licence | gold tokenization: UPOS / UAS / LAS | raw text "
               "LAS | UDPipe 2 LAS (Δ) |\n|---|---|---|---|---|---|")


def readme_rows(table: list[dict]) -> str:
    """The README's short table (its "Languages" section holds exactly these lines)."""
    out = [README_HEAD]
    for r in table:
        g, t = r["depparse"]["gold tokenization"], r["depparse"]["raw text"]
        u, d = r["udpipe2_gold_tokenization"] or {}, r["difference_gold_tokenization"] or {}
        ref = (f"{_f(u.get('LAS'))} ({_f(d.get('LAS'), True)})" if "trained_on" not in r else
               f"– (UDPipe 1: {_f(r['udpipe1_gold_tokenization_las'])}, "
               f"{_f(r['difference_udpipe1_las'], True)}; dev split only)")
        out.append(f"| {r['language']} | `{r['model']}` | {r['licence'] or '–'} | "
                   + " / ".join(_f(g[m]) for m in METRICS) + f" | {_f(t['LAS'])} | {ref} |")
    return "\n".join(out)


def main() -> int:
    table = rows()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.with_suffix(".json").write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n")
    text = markdown(table)
    OUT.with_suffix(".md").write_text(text)
    print(text)
    print("README.md, section Languages:\n" + readme_rows(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
