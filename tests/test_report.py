"""Tests of depparse.report: validation, statistics and the written HTML/Markdown/JSON."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import numpy as np
import pytest

from depparse.evaluate import certificate_rate
from depparse.report import (
    FIGURES,
    VERSION,
    cap_grid,
    load_report,
    summarize_report,
    validate_report,
    write_report,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
#: The figures of one run with gold heads and traces: every figure but the comparison of
#: several runs (``compare.png``, drawn only with ``compare=``; tests/test_report_compare.py)
ONE_RUN = tuple(f for f in FIGURES if f != "compare.png")


def _random_tree(rng: np.random.Generator, n: int) -> list[int]:
    """A random tree rooted at 0 (each word's head is an earlier node), ``heads[0] = -1``."""
    heads = [-1] + [int(rng.integers(0, m)) for m in range(1, n + 1)]
    perm = rng.permutation(n) + 1  # relabel words so trees are not all left-headed
    order = [0, *perm.tolist()]
    out = [-1] * (n + 1)
    for m in range(1, n + 1):
        out[order[m]] = order[heads[m]]
    return out


def example_report(
    *,
    sentences: int = 24,
    max_iter: int = 200,
    gold: bool = True,
    model: str = "sib",
    seed: int = 0,
) -> dict:
    """A synthetic, internally consistent parse report (``depparse parse --report`` format).

    Iterations cycle through 1, 1, 2, 3, 4, 7, 15, 40, 120 and ``max_iter`` (the last one
    uncertified); for ``mst`` models every sentence takes one iteration with empty traces.
    The best tree changes at iterations 1, 2, 4, 8, ... (up to the last iteration); the final
    tree matches the gold tree except for about one word in five.
    """
    rng = np.random.default_rng(seed)
    cycle = [1, 1, 2, 3, 4, 7, 15, 40, 120, max_iter]
    lengths = [3, 8, 12, 15, 19, 24, 28, 35, 44, 52, 6, 1]
    sents = []
    for i in range(sentences):
        n = lengths[i % len(lengths)]
        gold_heads = _random_tree(rng, n)
        if model == "mst":
            iters, cert = 1, True
        else:
            iters = min(cycle[i % len(cycle)], max_iter)
            cert = i % len(cycle) != len(cycle) - 1
        change_at = [k for k in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512) if k <= iters]
        changes = [[k, _random_tree(rng, n)] for k in change_at]
        final = list(gold_heads)
        alt = changes[0][1]
        for m in range(1, n + 1):
            if rng.random() < 0.2:
                cand = list(final)
                cand[m] = alt[m]
                if _is_tree(cand):
                    final = cand
        changes[-1][1] = final
        if model == "mst":
            dual = primal = recomputed = []
            changes = [] if i % 2 else changes
        else:
            best = 10.0 + rng.random()
            primal = (best - rng.random(iters) * 2.0).tolist()
            primal[-1] = best
            dual = (
                best + 3.0 / np.arange(1, iters + 1) * (0.0 if cert else 1.0) + (0 if cert else 0.5)
            ).tolist()
            if cert:
                dual[-1] = best
            recomputed = [1.0] + [float(x) for x in rng.random(iters - 1) * 0.3]
        sents.append(
            {
                "file": f"data/in{i % 2}.conllu",
                "index": i // 2,
                "sent_id": f"s{i}" if i % 3 else None,
                "n": n,
                "certificate": cert,
                "iterations": iters,
                "seconds": 0.01 * iters,
                "dual": dual,
                "primal": primal,
                "recomputed": recomputed,
                "best_changes": changes,
                "heads": final,
                "gold_heads": gold_heads if gold else None,
            }
        )
    words = sum(s["n"] for s in sents)
    certified = sum(s["certificate"] for s in sents)
    seconds = sum(s["seconds"] for s in sents)
    return {
        "format": "depparse-report",
        "version": 1,
        "model": {"path": "models/x.model", "model": model},
        "max_iter": max_iter,
        "single_root": True,
        "inputs": ["data/in0.conllu", "data/in1.conllu"],
        "summary": {
            "sentences": len(sents),
            "words": words,
            "certified": certified,
            "cert_rate": 100.0 * certified / len(sents) if sents else 0.0,
            "seconds": seconds,
            "words_per_sec": words / seconds if seconds else 0.0,
        },
        "sentences": sents,
    }


def _is_tree(heads: list[int]) -> bool:
    for m in range(1, len(heads)):
        seen, v = set(), m
        while v != 0:
            if v in seen or v < 0:
                return False
            seen.add(v)
            v = heads[v]
    return True


def _img_sources(html: str) -> list[str]:
    return re.findall(r'<img src="([^"]+)"', html)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    report = example_report()
    out = tmp_path_factory.mktemp("report") / "nested" / "out"
    index = write_report(report, out)
    return report, out, index


# ---------------------------------------------------------------------------------------
# The written files
# ---------------------------------------------------------------------------------------


def test_html_references_exactly_the_written_images(written):
    _, out, index = written
    assert index == out / "index.html" and index.is_file()
    html = index.read_text(encoding="utf-8")
    sources = _img_sources(html)
    assert sorted(sources) == sorted(set(sources))
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert sorted(sources) == pngs == sorted(ONE_RUN)  # gold + traces: every figure
    for name in sources:
        assert not Path(name).is_absolute()
        assert (out / name).read_bytes()[:8] == PNG_MAGIC
    # each figure has an explanation right under it
    assert html.count("<figcaption>") == len(sources)
    # no temporary files left behind
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [*ONE_RUN, "index.html", "report.md", "summary.json", "trees.html"]
    )


def test_summary_json_matches_input(written):
    report, out, _ = written
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary.pop("figures") == list(ONE_RUN)
    assert summary == json.loads(json.dumps(summarize_report(report)))
    sents = report["sentences"]
    certified = sum(s["certificate"] for s in sents)
    assert summary["sentences"] == len(sents) == report["summary"]["sentences"]
    assert summary["certified"] == certified == report["summary"]["certified"]
    assert summary["cert_rate"] == certificate_rate(report)
    assert summary["cert_rate"] == pytest.approx(report["summary"]["cert_rate"])
    assert summary["words"] == report["summary"]["words"]

    # final UAS, punctuation included (the report has no UPOS)
    ok = sum(
        h == g for s in sents for h, g in zip(s["heads"][1:], s["gold_heads"][1:], strict=True)
    )
    words = sum(s["n"] for s in sents)
    assert (summary["uas_correct"], summary["uas_words"]) == (ok, words)
    assert summary["uas"] == pytest.approx(100.0 * ok / words)

    # the cap curve ends at the final trees and all certificates
    last = summary["cap_curve"][-1]
    assert last["K"] == report["max_iter"]
    assert last["cert_pct"] == pytest.approx(summary["cert_rate"])
    assert last["match_pct"] == 100.0
    assert last["uas"] == pytest.approx(summary["uas"])
    curve = summary["cap_curve"]
    assert [r["K"] for r in curve] == cap_grid(report["max_iter"])
    assert all(a["certified"] <= b["certified"] for a, b in zip(curve, curve[1:], strict=False))
    first = curve[0]
    assert first["certified"] == sum(s["certificate"] and s["iterations"] <= 1 for s in sents)

    # histogram (Rush et al. 2010, Table 1 buckets + 51+ + not certified)
    hist = {r["bucket"]: r["count"] for r in summary["iteration_histogram"]}
    assert list(hist) == ["1", "2", "3", "4", "5-10", "11-20", "21-50", "51+", "not certified"]
    assert sum(hist.values()) == len(sents)
    its = [s["iterations"] for s in sents if s["certificate"]]
    assert hist["1"] == its.count(1)
    assert hist["5-10"] == sum(5 <= k <= 10 for k in its)
    assert hist["51+"] == sum(k > 50 for k in its)
    assert hist["not certified"] == len(sents) - certified

    # recomputed: averaged over the sentences still running
    rec = summary["recomputed"]
    assert rec["running"][0] == len(sents)
    assert rec["mean_pct"][0] == pytest.approx(100.0)
    k = 10  # iteration 10: sentences with >= 10 iterations
    running = [s for s in sents if s["iterations"] >= k]
    assert rec["running"][k - 1] == len(running)
    assert rec["mean_pct"][k - 1] == pytest.approx(
        100.0 * np.mean([s["recomputed"][k - 1] for s in running])
    )
    assert len(rec["iterations"]) == max(s["iterations"] for s in sents)

    # UAS by length
    by_len = {r["bucket"]: r for r in summary["uas_by_length"]}
    assert list(by_len) == ["1-10", "11-20", "21-30", "31-40", "41+"]
    assert sum(r["sentences"] for r in by_len.values()) == len(sents)
    assert by_len["41+"]["sentences"] == sum(s["n"] >= 41 for s in sents)

    # hardest: the most iterations first
    hard = summary["hardest"]
    assert len(hard) == 4
    assert [h["iterations"] for h in hard] == sorted(
        (s["iterations"] for s in sents), reverse=True
    )[:4]


def test_markdown_matches_summary(written):
    _, out, _ = written
    md = (out / "report.md").read_text(encoding="utf-8")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert f"{summary['certified']} ({summary['cert_rate']:.2f}%)" in md
    assert f"{summary['uas']:.2f} ({summary['uas_correct']}/{summary['uas_words']})" in md
    for row in summary["iteration_histogram"]:
        assert f"| {row['bucket']} | {row['count']} | {row['pct']:.2f} |" in md
    for row in summary["cap_curve"]:
        assert f"| {row['K']} | {row['certified']} | {row['cert_pct']:.2f} |" in md
    rec = summary["recomputed"]
    assert f"| 1 | {rec['mean_pct'][0]:.2f} | {rec['running'][0]} |" in md
    for name in ONE_RUN:
        assert f"]({name})" in md


# ---------------------------------------------------------------------------------------
# Definitions on a hand-made report
# ---------------------------------------------------------------------------------------


def _one_sentence_report() -> dict:
    a = [-1, 2, 0, 1]  # the best tree after iteration 1 (only word 3 right)
    b = [-1, 0, 1, 1]  # the best tree from iteration 5 on (= gold)
    return {
        "format": "depparse-report",
        "version": 1,
        "model": {"path": "m", "model": "gs"},
        "max_iter": 10,
        "single_root": True,
        "inputs": ["in.conllu"],
        "summary": {
            "sentences": 1,
            "words": 3,
            "certified": 1,
            "cert_rate": 100.0,
            "seconds": 0.5,
            "words_per_sec": 6.0,
        },
        "sentences": [
            {
                "file": "in.conllu",
                "index": 0,
                "sent_id": "a",
                "n": 3,
                "certificate": True,
                "iterations": 8,
                "seconds": 0.5,
                "dual": [5.0, 4.0, 3.5, 3.2, 3.1, 3.05, 3.01, 3.0],
                "primal": [1.0, 0.5, 0.7, 0.9, 2.0, 1.0, 1.5, 3.0],
                "recomputed": [1.0, 0.5, 0.5, 0.25, 0.25, 0.0, 0.25, 0.25],
                "best_changes": [[1, a], [5, b]],
                "heads": b,
                "gold_heads": b,
            },
        ],
    }


def test_tree_and_certificate_at_cap():
    summary = summarize_report(_one_sentence_report())
    curve = {r["K"]: r for r in summary["cap_curve"]}
    assert list(curve) == [1, 2, 3, 5, 7, 10]
    # tree at cap K: the last best-primal change at iteration <= K
    assert curve[1]["uas"] == curve[3]["uas"] == pytest.approx(100.0 / 3)  # a: only word 3
    assert curve[5]["uas"] == curve[10]["uas"] == 100.0
    assert [curve[k]["match_pct"] for k in (1, 3, 5)] == [0.0, 0.0, 100.0]
    # certified at cap K: certificate and iterations (8) <= K
    assert [curve[k]["certified"] for k in curve] == [0, 0, 0, 0, 0, 1]
    hist = {r["bucket"]: r["count"] for r in summary["iteration_histogram"]}
    assert hist == {
        "1": 0,
        "2": 0,
        "3": 0,
        "4": 0,
        "5-10": 1,
        "11-20": 0,
        "21-50": 0,
        "not certified": 0,
    }
    rec = summary["recomputed"]
    assert rec["mean_pct"] == [100.0, 50.0, 50.0, 25.0, 25.0, 0.0, 25.0, 25.0]
    assert rec["running"] == [1] * 8
    assert summary["hardest"][0]["gap"] == 0.0


def test_cap_grid_is_log_spaced():
    assert cap_grid(1) == [1]
    assert cap_grid(5000) == [
        1,
        2,
        3,
        5,
        7,
        10,
        15,
        20,
        30,
        50,
        70,
        100,
        150,
        200,
        300,
        500,
        700,
        1000,
        1500,
        2000,
        3000,
        5000,
    ]
    assert cap_grid(60)[-1] == 60


def test_no_gold_and_stale_figures(tmp_path):
    # mst reports: fewer figures to draw, the same logic
    write_report(example_report(sentences=10, model="mst", max_iter=1), tmp_path)
    assert (tmp_path / "uas_by_length.png").is_file()
    index = write_report(
        example_report(sentences=10, model="mst", max_iter=1, gold=False), tmp_path
    )
    html = index.read_text(encoding="utf-8")
    sources = _img_sources(html)
    assert "uas_by_length.png" not in sources
    assert sorted(p.name for p in tmp_path.glob("*.png")) == sorted(sources)
    assert "no gold heads" in html.lower()
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert summary["uas"] is None and all(r["uas"] is None for r in summary["cap_curve"])


def test_mst_report_has_no_trace_figures(tmp_path):
    report = example_report(sentences=6, model="mst", max_iter=1)
    index = write_report(report, tmp_path)
    sources = _img_sources(index.read_text(encoding="utf-8"))
    assert sources == ["cap_curve.png", "iterations_histogram.png", "uas_by_length.png"]
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert summary["recomputed"] is None and summary["hardest"] == []
    assert summary["cert_rate"] == 100.0


def test_non_finite_values_give_strict_json(tmp_path):
    report = _one_sentence_report()
    report["sentences"][0]["dual"][0] = float("inf")
    report["summary"]["words_per_sec"] = float("nan")
    write_report(report, tmp_path)

    def reject(name):
        raise AssertionError(f"non-standard JSON constant {name}")

    json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"), parse_constant=reject)


def test_empty_report(tmp_path):
    report = _one_sentence_report()
    report["sentences"] = []
    index = write_report(report, tmp_path)
    assert _img_sources(index.read_text(encoding="utf-8")) == []
    assert certificate_rate(report) == 0.0


# ---------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------


def _broken(edit) -> dict:
    report = copy.deepcopy(_one_sentence_report())
    edit(report)
    return report


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda r: r.update(format="something-else"), r"'format' is 'something-else'"),
        (lambda r: r.update(version=VERSION + 1),
         rf"version {VERSION + 1}, newer than this depparse reads"),
        (lambda r: r.update(version="1"), r"'version' must be a positive integer"),
        (lambda r: r.pop("max_iter"), r"missing key\(s\) 'max_iter'"),
        (lambda r: r["summary"].pop("cert_rate"), r"'summary' is missing key\(s\) 'cert_rate'"),
        (
            lambda r: r["sentences"][0].pop("best_changes"),
            r"sentence 0 \(file in.conllu, index 0\): missing key\(s\) 'best_changes'",
        ),
        (lambda r: r["sentences"][0].update(heads=[-1, 0]), r"'heads' has length 2, expected"),
        (lambda r: r["sentences"][0].update(dual=[1.0]), r"'dual' has 1 values, expected"),
        (lambda r: r["sentences"][0].update(recomputed=[50.0] * 8), r"fractions in \[0, 1\]"),
        (lambda r: r["sentences"][0]["best_changes"].reverse(), r"must not decrease"),
        (lambda r: r["sentences"][0].update(gold_heads=[-1, 0, 9, 1]), r"out of range"),
        (lambda r: r["sentences"][0].update(certificate=1), r"'certificate' must be true"),
    ],
)
def test_invalid_reports_are_rejected(tmp_path, edit, message):
    report = _broken(edit)
    with pytest.raises(ValueError, match=message):
        validate_report(report)
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=message):
        write_report(report, out)
    assert not out.exists()  # nothing is written for an invalid report


def test_not_a_dict_is_rejected():
    with pytest.raises(ValueError, match="expected a JSON object"):
        validate_report([1, 2])  # type: ignore[arg-type]


def test_load_report(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_one_sentence_report()), encoding="utf-8")
    assert load_report(path) == _one_sentence_report()
    path.write_text(json.dumps({**_one_sentence_report(), "format": "x"}), encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{re.escape(str(path))}: 'format' is 'x'"):
        load_report(path)
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_report(path)


# ---------------------------------------------------------------------------------------
# section 6 readable (issue 25): long file names and sent_ids


LONG_ID = "weblog-blogspot.com_nominations_20041117172713_ENG_20041117_172713-0001"


def test_section6_titles_and_table_fit(tmp_path):
    from depparse.report.figures import TITLE_CHARS, sentence_name, traces_figure
    from depparse.report.schema import read_sentences
    from depparse.report.stats import hardest

    rep = example_report(sentences=24)
    for k, s in enumerate(rep["sentences"]):
        s["file"] = "/data/corpora/english/en_ewt-ud-test-with-a-long-name.conllu"
        s["sent_id"] = f"{LONG_ID}-{k}"
    hard = hardest(read_sentences(rep))
    assert len(hard) == 4
    fig = traces_figure(hard)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [ax.title.get_window_extent(renderer) for ax in fig.axes]
    width = fig.bbox.width
    for i, a in enumerate(boxes):
        assert a.x0 >= 0 and a.x1 <= width, (a, width)  # inside the picture
        for b in boxes[i + 1:]:
            overlap = min(a.x1, b.x1) > max(a.x0, b.x0) and min(a.y1, b.y1) > max(a.y0, b.y0)
            assert not overlap, (a, b)
    for ax in fig.axes:
        assert all(len(x) <= TITLE_CHARS for x in ax.get_title().split("\n"))
    # the end of a long id stays (it is what tells the sentences apart)
    assert sentence_name(hard[0].file, 3, f"{LONG_ID}-3").endswith("-0001-3)")
    index = write_report(rep, tmp_path)
    page = index.read_text(encoding="utf-8")
    table = page[page.index("The sentences that took longest"):]
    cells = re.findall(r"<tr><td>(?:<a [^>]*>)?([^<]*)(?:</a>)?</td>", table)  # a link to the tree
    assert cells and all(len(c) <= TITLE_CHARS for c in cells), cells
    assert "td { white-space: nowrap; }" in page  # numbers and the proof on one line
