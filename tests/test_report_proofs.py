"""The proof keys of the parse report (version 3): ``optimal``, ``proof``, ``nodes`` per
sentence, ``proved``/``proved_rate`` in the summary, and the statistics over them."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from fixtures_models import run_cli
from test_report import example_report

from depparse.conllu import read_conllu
from depparse.errors import ReportError
from depparse.report import summarize_report, validate_report
from depparse.report.schema import PROOF_KINDS, VERSION

REPO = Path(__file__).resolve().parent.parent


def v3_report(**kw) -> dict:
    """:func:`example_report` with the version-3 proof keys: certified sentences are proved
    by the certificate, every third uncertified one is left unproved (a time limit), the rest
    proved by branch and bound with a few nodes."""
    rep = example_report(**kw)
    rep["version"] = 3
    for i, s in enumerate(rep["sentences"]):
        if s["certificate"]:
            s.update(optimal=True, proof="dual", nodes=1)
        elif i % 3 == 0:
            s.update(optimal=False, proof=None, nodes=4, bnb_iterations=300, bnb_seconds=0.5)
        else:
            s.update(optimal=True, proof="branch-and-bound", nodes=3 + i % 5,
                     bnb_iterations=100 + i, bnb_seconds=0.01 * i)
    proved = sum(s["optimal"] for s in rep["sentences"])
    rep["summary"].update(proved=proved, proved_rate=100.0 * proved / len(rep["sentences"]))
    return rep


def test_version_is_3():
    assert VERSION >= 3 and PROOF_KINDS == ("dual", "branch-and-bound", "exact")


def test_proof_statistics_follow_the_sentences():
    rep = v3_report(sentences=40)
    validate_report(rep)
    summ = summarize_report(rep)
    sents = rep["sentences"]
    assert summ["proved"] == sum(s["optimal"] for s in sents) == rep["summary"]["proved"]
    assert summ["unproved"] == len(sents) - summ["proved"] > 0
    by = {p["proof"]: p for p in summ["proofs"]}
    assert set(by) == {"dual", "branch-and-bound", "not proved"}  # no "exact" without mst
    for kind, key in (("dual", "dual"), ("branch-and-bound", "branch-and-bound"),
                      (None, "not proved")):
        group = [s for s in sents if s["proof"] == kind]
        assert by[key]["sentences"] == len(group) > 0
        assert by[key]["seconds"] == pytest.approx(sum(s["seconds"] for s in group))
        assert by[key]["bnb_seconds"] == pytest.approx(sum(s.get("bnb_seconds", 0.0)
                                                           for s in group))
        assert by[key]["nodes"] == sum(s["nodes"] for s in group)
    bnb = [s for s in sents if s["nodes"] > 1]
    assert summ["bnb_nodes"] == sum(s["nodes"] - 1 for s in bnb)
    assert summ["bnb_sentences"] == by["branch-and-bound"]["sentences"]
    json.dumps(summ, allow_nan=False)


def test_old_reports_read_their_certificate_as_the_proof():
    rep = example_report()
    assert rep["version"] == 1
    validate_report(rep)
    summ = summarize_report(rep)
    assert summ["proved"] == summ["certified"]
    by = {p["proof"]: p["sentences"] for p in summ["proofs"]}
    assert by["dual"] == summ["certified"] and by["branch-and-bound"] == 0


@pytest.mark.parametrize("edit, message", [
    (lambda s, r: s.pop("optimal"), "missing key(s) 'optimal'"),
    (lambda s, r: s.pop("proof"), "missing key(s) 'proof'"),
    (lambda s, r: s.pop("nodes"), "missing key(s) 'nodes'"),
    (lambda s, r: s.update(optimal="yes"), "'optimal' must be true or false"),
    (lambda s, r: s.update(proof="guess"), "'proof' must be null or one of"),
    (lambda s, r: s.update(optimal=False), "'optimal' is false but 'proof' is 'dual'"),
    (lambda s, r: s.update(proof=None), "'optimal' is true but 'proof' is null"),
    (lambda s, r: s.update(certificate=False), "'proof' is 'dual' but 'certificate' is false"),
    (lambda s, r: s.update(nodes=-1), "'nodes' must be a non-negative integer"),
    (lambda s, r: s.update(nodes=1.5), "'nodes' must be a non-negative integer"),
    (lambda s, r: s.update(bnb_seconds=-1.0), "'bnb_seconds' must be a non-negative number"),
    (lambda s, r: s.update(bnb_iterations="9"), "'bnb_iterations' must be a non-negative"),
    (lambda s, r: r["summary"].pop("proved"), "'summary' is missing key 'proved'"),
    (lambda s, r: r["summary"].update(proved_rate="all"), "summary 'proved_rate' must be"),
])
def test_invalid_proof_keys_are_named(edit, message):
    rep = v3_report()
    validate_report(rep)
    bad = copy.deepcopy(rep)
    s = bad["sentences"][0]
    assert s["proof"] == "dual"
    edit(s, bad)
    with pytest.raises(ReportError) as e:
        validate_report(bad)
    assert message in str(e.value)


def test_parse_report_has_proofs_end_to_end(syn, tmp_path):
    # budget 1: sentences not certified by the first iteration are proved by branch and bound
    rep_path = tmp_path / "r.json"
    # (and none per word: the first run of every sentence has that one iteration)
    rc, _, err = run_cli(["parse", syn.test, "-o", tmp_path / "o.conllu", "--budget", "1",
                          "--budget-per-word", "0", "--report", rep_path, "--jobs", "1"])
    assert rc == 0, err
    rep = json.loads(rep_path.read_text())
    validate_report(rep)
    assert rep["decoding"] == {"solver": "subgradient", "proof": True, "budget": 1,
                               "budget_per_word": 0, "proof_over": "pruned",
                               "proof_max_words": 80}
    sents = rep["sentences"]
    assert all(s["optimal"] for s in sents) and rep["summary"]["proved"] == len(sents)
    kinds = {s["proof"] for s in sents}
    assert kinds <= {"dual", "branch-and-bound"} and "branch-and-bound" in kinds
    assert all((s["proof"] == "dual") == s["certificate"] for s in sents)
    assert all(s["iterations"] == 1 for s in sents)
    assert f"proved optimal {len(sents)}/{len(sents)}" in err
    # without proofs, the uncertified sentences are reported as not proved
    rc, _, err = run_cli(["parse", syn.test, "-o", tmp_path / "o2.conllu", "--no-proof",
                          "--max-iter", "1", "--report", rep_path, "--jobs", "1"])
    assert rc == 0, err
    rep = json.loads(rep_path.read_text())
    validate_report(rep)
    sents = rep["sentences"]
    assert any(not s["optimal"] for s in sents)
    assert all(s["optimal"] == s["certificate"] and s["nodes"] == 1 for s in sents)
    summ = summarize_report(rep)
    assert summ["proved"] == summ["certified"] == rep["summary"]["proved"]


def _joined_sentence(path, sent_id="joined"):
    """CoNLL-U text of one sentence made of all the words of the file at ``path`` (no heads):
    a long run-on sentence, which dual decomposition does not certify within a few dozen
    iterations whatever the model."""
    words = [w for s in read_conllu(path) for w in s.forms[1:]]
    rows = [f"{i}\t{w}\t_\t_\t_\t_\t_\t_\t_\t_" for i, w in enumerate(words, 1)]
    return f"# sent_id = {sent_id}\n# text = {' '.join(words)}\n" + "\n".join(rows) + "\n\n"


def test_time_limit_gives_unproved_trees_end_to_end(syn, tmp_path):
    # a limit that strikes after the first chunk of iterations: what is not certified by then
    # is returned unproved, and says so.  Besides the synthetic test sentences (which a good
    # model may certify within the first chunk) the input has a run-on sentence of the 71
    # words of the demo sample, single root, which the first chunk does not certify
    rep_path = tmp_path / "r.json"
    inp = tmp_path / "in.conllu"
    inp.write_text(syn.test.read_text(encoding="utf-8")
                   + _joined_sentence(REPO / "corpora" / "sample.conllu"), encoding="utf-8")
    rc, out, err = run_cli(["parse", inp, "-o", tmp_path / "o.conllu", "--time-limit",
                            "1e-9", "--report", rep_path, "--jobs", "1"])
    assert rc == 0, err
    rep = json.loads(rep_path.read_text())
    validate_report(rep)
    sents = rep["sentences"]
    timed = [s for s in sents if s["timed_out"]]
    assert timed, "the limit never struck"
    assert all(not s["optimal"] and s["proof"] is None for s in timed)
    assert all(s["optimal"] == (s["proof"] is not None) for s in sents)
    assert rep["summary"]["proved"] == len(sents) - len(timed)
    assert f"{len(timed)} stopped by --time-limit" in err
    # and a warning says what the unproved trees are and what to do
    assert (f"warning: {len(timed)} sentence{'s' if len(timed) > 1 else ''} not proved "
            "within --time-limit (1e-09 s a sentence)") in err
    assert "--time-limit 0 proves every tree" in err
    # --time-limit 0: no limit, every tree proved, no warning
    rc, out, err = run_cli(["parse", inp, "-o", tmp_path / "o0.conllu", "--time-limit", "0",
                            "--report", rep_path, "--jobs", "1"])
    assert rc == 0, err
    rep = json.loads(rep_path.read_text())
    assert rep["summary"]["proved"] == len(rep["sentences"])
    assert "not proved within" not in err and "stopped by --time-limit" not in err


def test_a_sentence_is_bounded_in_time_by_default_and_0_lifts_the_bound():
    """Without --time-limit a sentence's decoding stops after PROOF_SECONDS (a model saved
    before the bound existed stored None, read as the bound); 0 is no limit."""
    from depparse.config import PROOF_SECONDS, DecodeConfig

    assert DecodeConfig().time_limit == PROOF_SECONDS > 0
    old = DecodeConfig.from_dict({**DecodeConfig().to_dict(), "time_limit": None})
    assert old.time_limit == PROOF_SECONDS
    assert DecodeConfig.from_dict({"time_limit": 5.0}).time_limit == 5.0
    d = DecodeConfig()
    assert d.seconds() == PROOF_SECONDS and d.seconds(2.5) == 2.5
    assert d.seconds(0) is None and DecodeConfig(time_limit=0).seconds() is None


def test_first_budget_grows_with_the_sentence():
    from depparse.config import DecodeConfig

    d = DecodeConfig()
    assert d.first_budget(5) == d.budget  # short: the flat budget
    n = d.budget // d.budget_per_word + 7  # long: the per-word one
    assert d.first_budget(n) == d.budget_per_word * n > d.budget
    assert d.first_budget(n, max_iter=d.budget + 1) == d.budget + 1  # never past the cap
    assert DecodeConfig(budget_per_word=0).first_budget(1000) == d.budget
    # a model file written before the setting existed reads the default
    old = {k: v for k, v in d.to_dict().items() if k != "budget_per_word"}
    assert DecodeConfig.from_dict(old).budget_per_word == d.budget_per_word


def test_budget_per_word_end_to_end(syn, tmp_path):
    # the synthetic sentences and the 71-word run-on sentence of the demo sample, with a budget
    # of 1 iteration and 1 per word: each first run stops by max(1, n) iterations, and one
    # that did not certify (the run-on sentence at least) used exactly that many
    rep_path = tmp_path / "r.json"
    inp = tmp_path / "in.conllu"
    inp.write_text(syn.test.read_text(encoding="utf-8")
                   + _joined_sentence(REPO / "corpora" / "sample.conllu"), encoding="utf-8")
    rc, _, err = run_cli(["parse", inp, "-o", tmp_path / "o.conllu", "--budget", "1",
                          "--budget-per-word", "1", "--report", rep_path, "--jobs", "1"])
    assert rc == 0, err
    rep = json.loads(rep_path.read_text())
    validate_report(rep)
    assert rep["decoding"]["budget_per_word"] == 1
    sents = rep["sentences"]
    assert all(s["optimal"] for s in sents)
    assert all(s["iterations"] <= max(1, s["n"]) for s in sents)
    bnb = [s for s in sents if s["proof"] == "branch-and-bound"]
    assert any(s["n"] == 71 for s in bnb), [(s["n"], s["proof"]) for s in sents]
    assert all(s["iterations"] == s["n"] for s in bnb)
