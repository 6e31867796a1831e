"""``depparse models``: the models depparse can load by name, with their cards' test scores."""

from __future__ import annotations

import json
import re
from pathlib import Path

__all__ = ["card_licence", "cmd_models", "model_rows"]

_LICENCE = re.compile(r"Licence of the data: \*\*(.+?)\*\*")


def card_licence(card) -> str | None:
    """The licence a model card gives for its training data (``Licence of the data:
    **CC BY-SA 4.0**``, as ``benchmarks/make_model.py`` writes it), ``None`` without one."""
    if card is None:
        return None
    try:
        m = _LICENCE.search(Path(card).read_text(encoding="utf-8"))
    except OSError:
        return None
    return m.group(1) if m else None

#: The card's settings and the short names of the listing's columns.
SETTINGS = (("gold tokenization", "gold tok."), ("raw text", "raw text"))


def model_rows(entries) -> list[dict]:
    """One JSON-able dict per model: name, language, treebank, version, size, where it is, the
    licence of its training data and the test scores of its card (``{setting: {metric:
    value}}``)."""
    from ..catalog import card_scores, language_name

    return [{"name": e.name, "lang": e.lang, "language": language_name(e.lang),
             "treebank": e.treebank, "version": e.version, "licence": card_licence(e.card),
             "size_mb": round(e.size / 1e6, 1), "source": e.source, "package": e.package,
             "path": str(e.path), "card": None if e.card is None else str(e.card),
             "test_scores": card_scores(e.card)} for e in entries]


def _score(row, setting, metric):
    v = row["test_scores"].get(setting, {}).get(metric)
    return "–" if v is None else f"{v:.2f}"


def cmd_models(args):
    from ..catalog import HOW_TO_GET, models

    rows = model_rows(models())
    if args.json:
        print(json.dumps(rows, indent=1, ensure_ascii=False))
        return
    if not rows:
        print(f"no models installed: {HOW_TO_GET}")
        return
    head = ["name", "lang", "language", "treebank", "version", "licence", "size", "UPOS", "UAS",
            "LAS", "LAS raw text", "from"]
    table = [head]
    for r in rows:
        where = r["package"] if r["source"] == "package" else "checkout models/"
        table.append([r["name"], r["lang"], r["language"], r["treebank"], r["version"],
                      r["licence"] or "–", f"{r['size_mb']:.1f} MB",
                      _score(r, "gold tokenization", "UPOS"),
                      _score(r, "gold tokenization", "UAS"),
                      _score(r, "gold tokenization", "LAS"), _score(r, "raw text", "LAS"),
                      where])
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    print("test scores from each model's card (CoNLL 2018 definitions): UPOS, UAS, LAS with "
          "gold tokenization and predicted tags; LAS from raw text.  `depparse parse -m NAME` "
          "loads one by its name, treebank or language.")
