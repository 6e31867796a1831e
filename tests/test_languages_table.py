"""benchmarks/languages_table.py: the table of every shipped language against UDPipe 2 is
its cards' scores and the published figures, with their difference (issue 48, item 5)."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

import languages_table  # noqa: E402

from depparse import catalog  # noqa: E402


def test_every_shipped_model_has_its_row_with_the_difference():
    table = languages_table.rows()
    shipped = {e.treebank for e in catalog.models() if e.source == "checkout"}
    assert {r["treebank"] for r in table} == shipped
    for r in table:
        card = catalog.card_scores(REPO / "models" / f"{r['model']}.md")
        mine = r["depparse"]["gold tokenization"]
        assert mine["LAS"] == card["gold tokenization"]["LAS"]
        if "trained_on" in r:  # the dev split only: against UDPipe 1
            u1 = languages_table.UDPIPE1["treebanks"][r["treebank"]]["LAS"]
            assert abs(r["difference_udpipe1_las"] - (mine["LAS"] - u1)) < 0.006
            assert r["difference_udpipe1_las"] > 0  # shipped only where it beats UDPipe 1
            continue
        theirs = languages_table.UDPIPE["treebanks"][r["treebank"]]
        assert r["udpipe2_gold_tokenization"] == theirs
        for m in languages_table.METRICS:
            assert abs(r["difference_gold_tokenization"][m] - (mine[m] - theirs[m])) < 0.006
    text = languages_table.markdown(table)
    assert all(f"| {r['treebank']} |" in text for r in table)
    # the committed results are today's cards (`python benchmarks/languages_table.py`)
    import json

    assert json.loads(languages_table.OUT.with_suffix(".json").read_text()) == table


def test_the_readme_languages_table_is_the_cards():
    """README.md's "Languages" table is :func:`languages_table.readme_rows` of today's cards."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert languages_table.readme_rows(languages_table.rows()) in readme


def test_dev_only_table_is_its_records_and_ships_only_above_udpipe1():
    """benchmarks/dev_only_table.py: a row per dev-only treebank, its figures those of its
    build's record, shipped exactly where the record beats UDPipe 1 and the model is in
    models/; the committed table is today's records."""
    import json

    import dev_only_table

    table = dev_only_table.rows()
    assert [r["treebank"] for r in table] == [tb for tb, _, _ in dev_only_table.DEV_ONLY.values()]
    for r in table:
        if not r["built"]:
            continue
        rec = json.loads((dev_only_table.OUT / f"{r['treebank']}.json").read_text())
        assert r["predicted"][2] == rec["scores"]["gold tokenization"]["LAS"]
        assert abs(r["difference_las"] - (r["predicted"][2] - r["udpipe1_las"])) < 0.006
        assert r["shipped"] == (r["difference_las"] > 0)
        assert r["shipped"] == (REPO / "models" / f"{r['treebank']}_gs.npz").exists()
    assert json.loads((dev_only_table.RESULTS / "dev_only.json").read_text()) == table
