"""The language check (issue 51 item 1): input in a language the model was not trained for is
named, never silently parsed: on stderr, in the parse report and in the server's answer, with
the shipped model that fits better (``-m pt``) or the word that none does.

The profiles are the character trigram statistics of the shipped models' training treebanks,
beside the models (``models/*.chars.json``, ``benchmarks/language_profiles.py write``); the
threshold is measured (``benchmarks/results/language_check.md``).  The tests that read the
corpora or the shipped models skip where those are missing."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from fixtures_models import run_cli

from depparse import catalog
from depparse.conllu import read_conllu, write_conllu
from depparse.encoding.language import (
    Profile,
    bits_per_trigram,
    excess,
    profile_path,
    sentence_text,
    trigrams,
)

REPO = Path(__file__).resolve().parent.parent


# -- the statistics -------------------------------------------------------------------------

def test_trigrams_keep_case_and_leave_out_digits_and_addresses():
    assert trigrams("Ab 12") == [" Ab", "Ab ", "b 0", " 00", "00 "]
    assert trigrams("see http://x.org/a or me@x.org  now") == trigrams("see or now")
    assert trigrams("") == [] and trigrams("www.x.de") == []


def test_profile_scores_its_own_text_lower_and_round_trips(tmp_path):
    own = ["the cat sat on the mat", "the dog sat on the cat"] * 20
    p = Profile.count(own, source="x", top=10)
    assert p.total == sum(len(trigrams(t)) for t in own)
    assert len(p.grams) == 10 and p.rest == p.total - sum(p.grams.values())
    assert bits_per_trigram(p, ["the cat sat"]) < bits_per_trigram(p, ["der Hund saß"])
    # an unkept trigram costs the same whether it was seen (in the rest) or not
    rest = next(g for g in trigrams(" ".join(own)) if g not in p.grams)
    assert p.bits([rest]) == p.bits(["zzz"]) > max(p.bits([g]) for g in p.grams)
    assert math.isnan(p.bits([]))
    held = Profile(p.grams, p.total, p.rest, p.rest_types, 2.5, "x", "y")
    path = profile_path(tmp_path / "m.npz")
    assert path.name == "m.chars.json"
    held.save(path)
    back = Profile.load(path)
    assert back == held
    assert excess(back, ["the cat"]) == bits_per_trigram(back, ["the cat"]) - 2.5
    path.write_text('{"format": "other"}', encoding="utf-8")
    with pytest.raises(ValueError, match="not a depparse character profile"):
        Profile.load(path)


def test_verdict_follows_the_measured_thresholds():
    """language_verdict against the constants beside it: fits under the threshold, names a
    model better by the margin, says nothing of text too short to tell, and checks a short
    text against the other models only."""
    T, D = catalog.LANGUAGE_EXCESS, catalog.LANGUAGE_MARGIN
    long, short = catalog.LANGUAGE_ABSOLUTE_CHARS, catalog.LANGUAGE_MIN_CHARS
    v = catalog.language_verdict
    assert v({"a": T - 0.1, "b": 3.0}, "a", long) == (True, None)
    assert v({"a": T + 0.1, "b": T + 0.2}, "a", long) == (False, None)  # none fits
    assert v({"a": T + D + 0.1, "b": 0.0}, "a", long) == (False, "b")
    assert v({"a": T + D - 0.1, "b": T}, "a", long) == (False, None)  # b is no better by D
    assert v({"a": 9.0, "b": 0.0}, "a", short - 1) == (True, None)  # too short to tell
    assert v({"a": T + 0.5, "b": T + 0.4}, "a", short) == (True, None)  # short: no absolute
    S = catalog.LANGUAGE_SHORT_EXCESS
    assert v({"a": S + D, "b": S - 0.1}, "a", short) == (False, "b")  # short: relative
    assert v({"a": S + D + 1, "b": S + 0.1}, "a", short) == (False, None)  # b no fit either
    assert v({"a": T + 0.1, "b": -9.0}, "a", long - 1) == (False, "b")
    assert v({"a": T - 0.1, "b": -9.0}, "a", long) == (True, None)  # a fits: a is kept
    # a model that knows too few of the sample's trigrams is no candidate
    R = catalog.LANGUAGE_KNOWN_RATIO
    assert v({"a": S + D, "b": S - 0.1}, "a", short, {"a": 0.6, "b": 0.6 * R - 0.01}) == (
        True, None)
    assert v({"a": S + D, "b": S - 0.1}, "a", short, {"a": 0.6, "b": 0.6 * R}) == (False, "b")
    assert v({"a": T + D + 0.1, "b": 0.0, "c": 0.5}, "a", long,
             {"a": 0.5, "b": 0.5 * R - 0.01, "c": 0.9}) == (False, "c")


def test_known_share_is_the_share_of_trigrams_the_profile_keeps():
    from depparse.encoding.language import known_share, trigrams

    p = Profile.count(["the cat sat on the mat"] * 5)
    assert known_share(p, ["the cat"]) == 1.0
    grams = trigrams("der Hund")
    assert known_share(p, ["der Hund"]) == sum(g in p.grams for g in grams) / len(grams) < 0.5
    assert known_share(p, [""]) != known_share(p, [""])  # nan: nothing to score


# -- the shipped models on the corpora --------------------------------------------------------

def _profiled_entry(lang):
    try:
        e = catalog.find(lang)
    except catalog.ModelError:
        pytest.skip(f"no {lang} model installed")
    if not profile_path(e.path).exists():
        pytest.skip(f"{profile_path(e.path)}: no profile (benchmarks/language_profiles.py "
                    "write)")
    return e


def _corpus(corpora_dir, treebank, split="test", k=40):
    path = corpora_dir / treebank / f"{treebank}-ud-{split}.conllu"
    if not path.exists():
        pytest.skip(f"{path} not found")
    return read_conllu(path)[:k]


def test_finnish_through_english_warns_that_no_model_fits(corpora_dir):
    en = _profiled_entry("en")
    fi = _corpus(corpora_dir, "fi_tdt")  # a language no model is shipped for
    fit = catalog.check_language(en.path, [sentence_text(s) for s in fi])
    assert fit.chars >= catalog.LANGUAGE_ABSOLUTE_CHARS  # judged alone, not only by the others
    assert not fit.fits and fit.better is None
    assert fit.excess[en.name] > catalog.LANGUAGE_EXCESS
    msg = fit.message("fi.txt")
    assert msg.startswith("fi.txt: this does not look like the language of model en_ewt_gs")
    assert "fits none of the models installed" in msg


def test_german_through_english_names_the_german_model(corpora_dir):
    """German, which fitted no model before de_gsd_gs shipped, now names it."""
    en, de = _profiled_entry("en"), _profiled_entry("de")
    fit = catalog.check_language(en.path, [sentence_text(s) for s in
                                           _corpus(corpora_dir, "de_gsd")])
    assert not fit.fits and fit.better == de


def test_english_through_english_does_not_warn(corpora_dir):
    en = _profiled_entry("en")
    for split in ("dev", "test"):
        texts = [sentence_text(s) for s in _corpus(corpora_dir, "en_ewt", split, k=100)]
        fit = catalog.check_language(en.path, texts)
        assert fit.chars >= catalog.LANGUAGE_ABSOLUTE_CHARS
        assert fit.fits and fit.message("en") is None, fit


def test_portuguese_through_english_names_the_portuguese_model(corpora_dir):
    en, pt = _profiled_entry("en"), _profiled_entry("pt")
    texts = [sentence_text(s) for s in _corpus(corpora_dir, "pt_bosque")]
    fit = catalog.check_language(en.path, texts)
    assert not fit.fits and fit.better == pt
    assert fit.message("pt.txt").endswith(f"parse it with -m {pt.lang}")
    assert fit.to_json()["better_option"] == "-m pt"
    # and the other way round, English through the Portuguese model names -m en
    texts = [sentence_text(s) for s in _corpus(corpora_dir, "en_ewt")]
    assert catalog.check_language(pt.path, texts).better == en


def test_a_model_without_a_profile_is_not_checked(tmp_path):
    assert catalog.check_language(tmp_path / "mine.npz", ["any text at all"]) is None


# -- the faces: the command line, the report, the server ---------------------------------------

def _write(sents, path):
    with open(path, "wb") as f:
        write_conllu(sents, f)
    return path


def test_parse_warns_on_stderr_and_in_the_report(corpora_dir, tmp_path):
    """Text of a language no model has (Finnish) through the English model: a warning on
    stderr, the finding in the report; English text: neither.  Portuguese CoNLL-U: ``-m pt``."""
    _profiled_entry("en")
    pt = _profiled_entry("pt")
    fi = _corpus(corpora_dir, "fi_tdt", k=40)  # over LANGUAGE_SAMPLE_CHARS: judged alone
    (tmp_path / "fi.txt").write_text("\n\n".join(s.text for s in fi) + "\n", encoding="utf-8")
    rep = tmp_path / "fi.json"
    rc, _, err = run_cli(["parse", "--input", "text", tmp_path / "fi.txt", "-m", "en",
                          "-o", tmp_path / "fi.conllu", "--report", rep])
    assert rc == 0, err
    warned = [x for x in err.splitlines() if x.startswith("depparse: warning: ")]
    assert len(warned) == 1 and "does not look like the language of model en_ewt_gs" in \
        warned[0] and "fits none of the models installed" in warned[0], err
    lang = json.loads(rep.read_text(encoding="utf-8"))["files"][str(tmp_path / "fi.txt")][
        "language"]
    assert lang["fits"] is False and lang["better"] is None and lang["model"] == "en_ewt_gs"
    assert lang["warning"] == warned[0][len("depparse: warning: "):]

    en = _write(_corpus(corpora_dir, "en_ewt", k=25), tmp_path / "en.conllu")
    rep = tmp_path / "en.json"
    rc, _, err = run_cli(["parse", en, "-m", "en", "-o", tmp_path / "en.out", "--report", rep])
    assert rc == 0 and "warning" not in err, err
    lang = json.loads(rep.read_text(encoding="utf-8"))["files"][str(en)]["language"]
    assert lang["fits"] is True and lang["warning"] is None

    ptf = _write(_corpus(corpora_dir, "pt_bosque", k=25), tmp_path / "pt.conllu")
    rc, _, err = run_cli(["parse", ptf, "-m", "en", "-o", tmp_path / "pt.out"])
    assert rc == 0, err
    assert f"model {pt.name} (pt) fits it better: parse it with -m pt" in err, err


def test_server_answer_warns_and_names_the_served_model(corpora_dir, monkeypatch):
    """The server's worker reads a request (as for /process) and puts the warning among the
    answer's ``warnings``, naming the served model that fits (model=NAME), or the installed
    one it does not serve."""
    from depparse.api import load
    from depparse.serve import workers
    from depparse.serve.protocol import Job

    en, pt = _profiled_entry("en"), _profiled_entry("pt")
    text = "\n\n".join(s.text for s in _corpus(corpora_dir, "pt_bosque", k=15))
    parser = load(en.path)
    monkeypatch.setattr(workers, "_STATE", {"english": parser})
    job = Job("english", text, "text", False, True, 10.0)
    (sents, _), warned = workers._read(job, 1000)
    assert sents
    said = [w for w in warned if "does not look like the language of model en_ewt_gs" in w]
    assert len(said) == 1 and said[0].startswith("data: ")
    assert said[0].endswith(f"which this server does not serve (depparse serve -m {pt.lang})")
    monkeypatch.setattr(workers, "_STATE", {"english": parser, "portuguese": load(pt.path)})
    (_, _), warned = workers._read(job, 1000)
    assert [w for w in warned if "does not look like" in w][0].endswith("ask for model="
                                                                        "portuguese")
    english = "\n\n".join(s.text for s in _corpus(corpora_dir, "en_ewt", k=15))
    (_, _), warned = workers._read(Job("english", english, "text", False, True, 10.0), 1000)
    assert not [w for w in warned if "does not look like" in w]
