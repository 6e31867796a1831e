"""depparse report --compare: several runs' certificates against the iteration cap on one plot
(the solvers compared, Koo et al. 2010 Fig. 4)."""

from __future__ import annotations

import json

import pytest
from fixtures_models import run_cli
from test_report import PNG_MAGIC, example_report

from depparse.errors import ReportError
from depparse.report import summarize_report, write_report
from depparse.report.compare import run_label


def _curve(rows):
    return [(r["K"], r["cert_pct"]) for r in rows]


def test_each_curve_is_its_own_reports(tmp_path):
    a = example_report(seed=0, max_iter=200)
    b = example_report(seed=1, max_iter=100)
    b["decoding"] = {"solver": "ad3", "proof": False, "budget": 150}
    index = write_report(a, tmp_path, compare=[(run_label(b, "b.json"), b)], label="a.json")
    assert (tmp_path / "compare.png").read_bytes().startswith(PNG_MAGIC)
    runs = json.loads((tmp_path / "summary.json").read_text())["compare"]
    assert [r["label"] for r in runs] == ["a.json", "ad3, no proofs (b.json)"]
    for run, rep in zip(runs, (a, b), strict=True):
        assert _curve(run["cap_curve"]) == _curve(summarize_report(rep)["cap_curve"])
    page = index.read_text(encoding="utf-8")
    assert "Runs compared" in page and 'src="compare.png"' in page
    assert "ad3, no proofs (b.json)" in page
    # one table row per cap of either run; past b's own cap (100) its column says '–'
    ks = sorted({k for run in runs for k, _ in _curve(run["cap_curve"])})
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert 200 in ks and 100 in ks
    section = md[md.index("Runs compared"):]
    row200 = next(line for line in section.splitlines() if line.startswith("| 200 |"))
    assert row200.rstrip(" |").endswith("–")


def test_runs_of_different_inputs_are_refused(tmp_path):
    a, b = example_report(sentences=24), example_report(sentences=10)
    with pytest.raises(ReportError, match="same input"):
        write_report(a, tmp_path / "out", compare=[("b", b)])
    assert not (tmp_path / "out").exists()


def test_a_report_without_compare_removes_a_stale_comparison(tmp_path):
    a = example_report(seed=0)
    write_report(a, tmp_path, compare=[("again", example_report(seed=2))])
    assert (tmp_path / "compare.png").is_file()
    index = write_report(a, tmp_path)
    assert not (tmp_path / "compare.png").exists()
    assert "compare.png" not in index.read_text(encoding="utf-8")


def test_labels_from_the_reports_decoding_settings():
    rep = example_report()
    assert run_label(rep, "x.json") == "x.json"  # written before the settings were recorded
    rep["decoding"] = {"solver": "subgradient", "proof": True, "budget": 150}
    assert run_label(rep, "x.json") == "subgradient, proofs (x.json)"


def test_cli_compare(tmp_path):
    a, b = tmp_path / "sub.json", tmp_path / "ad3.json"
    a.write_text(json.dumps(example_report(seed=0)), encoding="utf-8")
    b.write_text(json.dumps(example_report(seed=3)), encoding="utf-8")
    rc, _, err = run_cli(["report", a, "--compare", b, "-o", tmp_path / "html"])
    assert rc == 0, err
    assert (tmp_path / "html" / "compare.png").is_file()
    rc, _, err = run_cli(["report", a, "--compare", tmp_path / "missing.json"])
    assert rc == 2 and "missing.json: no such file" in err
    b.write_text(json.dumps({"format": "other"}), encoding="utf-8")
    rc, _, err = run_cli(["report", a, "--compare", b])
    assert rc == 2 and "ad3.json" in err
