"""The nine dev-only treebanks' table (issue 48, item 4; issue 47, item 5), from the builds'
own records.

Usage::

    python benchmarks/dev_only_table.py      # -> benchmarks/results/dev_only.{md,json}

Reads ``benchmarks/results/dev_only/<treebank>.json`` (``make model-XX``: the default recipe
on the first 90% of the dev file, tested on test), ``<treebank>.<recipe>.json`` where a build
by another recipe was made to compare (``python benchmarks/make_model.py XX --recipe NAME``)
and, for round 3's default (the sparse model alone: no network, no encoder, trained on the
whole dev file), ``benchmarks/results/six_treebanks/<treebank>.json``.  Every figure: test,
CoNLL 2018 definitions, gold tokenization with the tags predicted, unless the column says
otherwise.  A treebank not built yet has a row that says so.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from make_model import DEV_ONLY, UDPIPE1  # noqa: E402

RESULTS = HERE / "results"
OUT = RESULTS / "dev_only"


def _read(path: Path) -> dict | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _las(rec: dict | None, setting: str = "gold tokenization") -> float | None:
    if rec is None:
        return None
    return rec["scores"][setting]["LAS"]


def rows() -> list[dict]:
    """One record per dev-only treebank, in :data:`DEV_ONLY`'s order."""
    out = []
    for lang, (tb, language, _) in DEV_ONLY.items():
        rec = _read(OUT / f"{tb}.json")
        others = {p.name[len(tb) + 1:-len(".json")]: _read(p)
                  for p in sorted(OUT.glob(f"{tb}.*.json"))}
        r3 = _read(RESULTS / "six_treebanks" / f"{tb}.json")
        row = {"lang": lang, "treebank": tb, "language": language,
               "udpipe1_las": UDPIPE1[tb]["LAS"], "built": rec is not None,
               "round3_las": _las(r3)}
        if rec is not None:
            sc = rec["scores"]
            row.update(train_words=rec["train_words"], shipped=rec["shipped"],
                       gold_tags=[sc["gold tokenization + gold tags"][k] for k in ("UAS", "LAS")],
                       predicted=[sc["gold tokenization"][k] for k in ("UPOS", "UAS", "LAS")],
                       raw_las=_las(rec, "raw text"), difference_las=rec["difference_las"],
                       train_seconds=rec["train_seconds"], model_mb=rec["model_mb"],
                       network_epochs=rec.get("network_epochs"))
        row["recipes"] = {name: {"las": _las(o), "network_epochs": o.get("network_epochs"),
                                 "train_seconds": o.get("train_seconds")}
                          for name, o in others.items()}
        out.append(row)
    return out


def _f(v, fmt="{:.2f}") -> str:
    return "–" if v is None else fmt.format(v)


def markdown(table: list[dict]) -> str:
    names = sorted({n for r in table for n in r["recipes"]})
    head = ["treebank", "train words (dev split)", "gold tags UAS / LAS",
            "UPOS / UAS / LAS", "raw text LAS", "UDPipe 1 LAS", "Δ", "shipped",
            "round 3's default LAS"] + [f"recipe {n} LAS" for n in names] + [
            "training s", "network epochs", "MB"]
    lines = ["# The nine dev-only treebanks", "",
             "Written by `python benchmarks/dev_only_table.py` from the builds' records "
             "(`benchmarks/results/dev_only/`).  Test scores (CoNLL 2018 definitions), gold "
             "tokenization with the tags predicted unless said; trained by `make model-XX` on "
             "the first 90% of the dev file (the last 10% its dev data), against UDPipe 1's "
             "published UD 2.5 LAS (trained on the full train set).  Round 3's default: the "
             "sparse model alone, no network and no encoder, trained on the whole dev file "
             "(`benchmarks/results/six_treebanks/`).  A recipe column: the same build by that "
             "recipe (`make_model.py XX --recipe NAME`, never shipped).", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in table:
        if not r["built"]:
            lines.append(f"| {r['treebank']} | not built |" + " |" * (len(head) - 2))
            continue
        rec = [r["treebank"], f"{r['train_words']:,}",
               " / ".join(_f(v) for v in r["gold_tags"]),
               " / ".join(_f(v) for v in r["predicted"]), _f(r["raw_las"]),
               _f(r["udpipe1_las"], "{:.1f}"), _f(r["difference_las"], "{:+.2f}"),
               "yes" if r["shipped"] else "no", _f(r["round3_las"])]
        rec += [_f(r["recipes"].get(n, {}).get("las")) for n in names]
        rec += [_f(r["train_seconds"], "{:.0f}"), _f(r["network_epochs"], "{}"),
                _f(r["model_mb"], "{:.1f}")]
        lines.append("| " + " | ".join(rec) + " |")
    built = [r for r in table if r["built"]]
    for n in names:
        both = [r for r in built if r["recipes"].get(n, {}).get("las") is not None]
        if both:
            d = [r["predicted"][2] - r["recipes"][n]["las"] for r in both]
            tbs = "treebank" if len(both) == 1 else f"{len(both)} treebanks"
            lines += ["", f"The default recipe against recipe {n}, on the {tbs} "
                      f"built by both: mean ΔLAS {sum(d) / len(d):+.2f}, at least as good on "
                      f"{sum(x >= 0 for x in d)} of {len(both)} "
                      f"(range {min(d):+.2f} to {max(d):+.2f})."]
    return "\n".join(lines) + "\n"


def main() -> int:
    table = rows()
    (RESULTS / "dev_only.json").write_text(json.dumps(table, indent=1, ensure_ascii=False)
                                           + "\n", encoding="utf-8")
    (RESULTS / "dev_only.md").write_text(markdown(table), encoding="utf-8")
    print(markdown(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
