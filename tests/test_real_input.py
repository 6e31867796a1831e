"""Real input at the command line: plain text (--input text), input without tags."""

from __future__ import annotations

import io
import json

import pytest
from fixtures_models import run_cli

import depparse
from depparse.conllu import read_conllu
from depparse.decode.trees import validate_tree


def _plain(syn):
    """The synthetic test sentences as plain text: two paragraphs."""
    texts = [s.text for s in read_conllu(syn.test)]
    return " ".join(texts[:20]) + "\n\n" + " ".join(texts[20:]) + "\n"


def test_plain_text_is_segmented_tokenized_and_parsed(syn, tmp_path):
    src, out = tmp_path / "in.txt", tmp_path / "out.conllu"
    src.write_text(_plain(syn), encoding="utf-8")
    rc, _, err = run_cli(["parse", "--input", "text", src, "-m", syn.model, "-o", out])
    assert rc == 0, err
    text = out.read_text(encoding="utf-8")
    sents = read_conllu(out)
    assert len(sents) >= 2 and "# newpar" in text and "# newdoc" in text
    for s in sents:
        assert s.sent_id and s.text
        assert validate_tree(s, single_root=True) is None
    # the output spells the input text: words joined by their SpaceAfter marks
    words = " ".join(s.text for s in sents).split()
    assert words == _plain(syn).split()
    # stdin, and the API, give the same output
    rc, stdout, err = run_cli(["parse", "--input", "text", "-", "-m", syn.model],
                              stdin=_plain(syn).encode())
    assert rc == 0, err
    assert stdout.decode("utf-8").replace("<stdin>", "") == text.replace(str(src), "")
    assert depparse.load(syn.model).parse_text(_plain(syn)).count("# text = ") == len(sents)


@pytest.mark.parametrize("name,data", [
    ("empty", b""), ("blank", b"\n \n"), ("one-word", b"hello"),
    ("crlf-bom", b"\xef\xbb\xbfThe dog sleeps .\r\n\r\nA cat runs .\r\n"),
    ("tabs-controls", b"The\tdog\x07 sleeps .\n"),
])
def test_plain_text_edge_cases_parse(syn, tmp_path, name, data):
    src, out = tmp_path / "in.txt", tmp_path / "out.conllu"
    src.write_bytes(data)
    rc, _, err = run_cli(["parse", "--input", "text", src, "-m", syn.model, "-o", out])
    assert rc == 0, err
    sents = read_conllu(io.BytesIO(out.read_bytes()))
    assert (len(sents) == 0) == (name in ("empty", "blank"))
    for s in sents:
        assert validate_tree(s, single_root=True) is None


@pytest.mark.parametrize("data,word", [(b"caf\xe9 au lait\n", "UTF-8"),
                                       (b"a\x00b\n", "NUL")])
def test_bad_plain_text_is_one_line_exit_2(syn, tmp_path, data, word):
    src, out = tmp_path / "in.txt", tmp_path / "out.conllu"
    src.write_bytes(data)
    rc, stdout, err = run_cli(["parse", "--input", "text", src, "-m", syn.model, "-o", out])
    lines = [x for x in err.splitlines() if x.strip()]
    assert rc == 2 and len(lines) == 1 and lines[0].startswith(f"depparse: error: {src}:1:")
    assert word.lower() in err.lower() and "Traceback" not in err
    assert not out.exists()


def test_model_without_tokenizer_refuses_plain_text(syn, tmp_path):
    model = tmp_path / "notok.npz"
    assert run_cli(["train", "--recipe", "none",
                    syn.train, "-o", model, "--model", "sib", "--epochs", "1",
                    "--bits", "12", "--no-labeler", "--no-tokenizer", "-q"])[0] == 0
    assert "tokenizer" not in depparse.load(model).model.components
    src = tmp_path / "in.txt"
    src.write_text("The dog sleeps .\n", encoding="utf-8")
    rc, _, err = run_cli(["parse", "--input", "text", src, "-m", model])
    assert rc == 2 and "has no tokenizer" in err


def _untagged(syn, tmp_path, name="untagged.conllu"):
    """The synthetic test file with LEMMA, UPOS, XPOS and FEATS blanked ('_')."""
    lines = []
    for line in syn.test.read_text(encoding="utf-8").split("\n"):
        cols = line.split("\t")
        if len(cols) == 10:
            cols[2] = cols[3] = cols[4] = cols[5] = "_"
        lines.append("\t".join(cols))
    src = tmp_path / name
    src.write_text("\n".join(lines), encoding="utf-8")
    return src


def test_untagged_input_for_a_model_without_tagger_warns(syn, tmp_path):
    """Never silently worse trees: the missing columns are named, with what to do."""
    src = _untagged(syn, tmp_path)
    model = tmp_path / "notag.npz"
    assert run_cli(["train", "--recipe", "none",
                    syn.train, "-o", model, "--model", "sib", "--epochs", "1",
                    "--bits", "12", "--no-tagger", "--no-tokenizer", "-q"])[0] == 0
    assert "tagger" not in depparse.load(model).model.components
    rc, _, err = run_cli(["parse", src, "-m", model, "-o", tmp_path / "out.conllu"])
    assert rc == 0, err
    warning = [x for x in err.splitlines() if x.startswith("depparse: warning:")]
    assert len(warning) == 1 and "UPOS" in warning[0] and "tagger" in warning[0]
    rc, _, err = run_cli(["parse", syn.test, "-m", model, "-o", tmp_path / "out2.conllu"])
    assert rc == 0 and "warning" not in err


def test_untagged_input_gets_its_columns_predicted_and_only_those(syn, tmp_path):
    """The tagger fills the columns that are '_' everywhere; every other byte but HEAD and
    DEPREL stays; the trees are those of the tagged input (the tagger learned the synthetic
    language); the summary line and the report say what was predicted."""
    assert "tagger" in depparse.load(syn.model).model.components
    src, out, rep = _untagged(syn, tmp_path), tmp_path / "out.conllu", tmp_path / "r.json"
    rc, _, err = run_cli(["parse", src, "-m", syn.model, "-o", out, "--report", rep])
    assert rc == 0, err
    assert "warning" not in err
    assert "UPOS/LEMMA predicted by the model's tagger in 40 of 40 sentences" in err
    gold = syn.test.read_text(encoding="utf-8").split("\n")
    for a, b, g in zip(src.read_text(encoding="utf-8").split("\n"),
                       out.read_text(encoding="utf-8").split("\n"), gold, strict=True):
        ca, cb, cg = a.split("\t"), b.split("\t"), g.split("\t")
        if len(ca) != 10:
            assert a == b
            continue
        assert cb[:2] == ca[:2] and cb[8:] == ca[8:]  # ID, FORM, DEPS, MISC kept
        assert cb[3] == cg[3] and cb[2] == cg[2]  # UPOS and LEMMA predicted right
        assert cb[4] == ca[4] == "_" and cb[5] == ca[5] == "_"  # never trained with them
    rc, _, err = run_cli(["parse", syn.test, "-m", syn.model, "-o", tmp_path / "ref.conllu"])
    assert rc == 0 and "predicted" not in err
    assert [s.heads.tolist() for s in read_conllu(out)] == [
        s.heads.tolist() for s in read_conllu(tmp_path / "ref.conllu")]
    report = json.loads(rep.read_text())
    assert report["predicted_columns"] == {str(src): ["UPOS", "LEMMA"]}
    assert report["files"][str(src)]["tagged"] == 40


def _blocks(path):
    return path.read_text(encoding="utf-8").rstrip("\n").split("\n\n")


def test_a_file_tagged_in_places_is_tagged_per_sentence(syn, tmp_path):
    """Issue 25: every second sentence without tags (LEMMA, UPOS, XPOS, FEATS all '_'): each
    of those is tagged, the others keep their tags; the trees are those of the tagged file;
    the summary line, the report and the HTML report say how many sentences were tagged."""
    tagged, blank = _blocks(syn.test), _blocks(_untagged(syn, tmp_path))
    src = tmp_path / "mixed.conllu"
    src.write_text("\n\n".join(b if k % 2 else t for k, (t, b) in
                                enumerate(zip(tagged, blank, strict=True))) + "\n\n",
                   encoding="utf-8")
    out, rep = tmp_path / "out.conllu", tmp_path / "r.json"
    rc, _, err = run_cli(["parse", src, "-m", syn.model, "-o", out, "--report", rep])
    assert rc == 0, err
    assert "UPOS/LEMMA predicted by the model's tagger in 20 of 40 sentences" in err, err
    ref = tmp_path / "ref.conllu"
    assert run_cli(["parse", syn.test, "-m", syn.model, "-o", ref, "-q"])[0] == 0
    got, want = read_conllu(out), read_conllu(ref)
    assert [s.heads.tolist() for s in got] == [s.heads.tolist() for s in want]
    assert [list(s.upos) for s in got] == [list(s.upos) for s in want]
    for k, (a, b) in enumerate(zip(_blocks(src), _blocks(out), strict=True)):
        for la, lb in zip(a.split("\n"), b.split("\n"), strict=True):
            ca, cb = la.split("\t"), lb.split("\t")
            if len(ca) == 10 and k % 2 == 0:
                assert ca[:6] == cb[:6]  # a tagged sentence keeps its tags
    report = json.loads(rep.read_text())
    assert report["files"][str(src)]["tagged"] == 20
    assert [bool(s["tagged"]) for s in report["sentences"]] == [k % 2 == 1 for k in range(40)]
    assert run_cli(["report", rep, "-o", tmp_path / "html", "-q"])[0] == 0
    page = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    assert "mixed.conllu: UPOS/LEMMA in 20 of 40 sentences" in page


def test_a_column_missing_from_a_file_is_predicted_in_every_sentence(syn, tmp_path):
    """LEMMA '_' throughout, UPOS given: the file lacks LEMMA (its first sentences say so),
    so every sentence gets its LEMMA predicted, and keeps its UPOS."""
    lines = []
    for line in syn.test.read_text(encoding="utf-8").split("\n"):
        cols = line.split("\t")
        if len(cols) == 10:
            cols[2] = "_"
        lines.append("\t".join(cols))
    src = tmp_path / "nolemma.conllu"
    src.write_text("\n".join(lines), encoding="utf-8")
    out = tmp_path / "out.conllu"
    rc, _, err = run_cli(["parse", src, "-m", syn.model, "-o", out])
    assert rc == 0 and "LEMMA predicted by the model's tagger in 40 of 40 sentences" in err, err
    assert [list(s.lemmas) for s in read_conllu(out)] == [
        list(s.lemmas) for s in read_conllu(syn.test)]


def test_retag_overrides_the_input_tags(syn, tmp_path):
    lines = []
    for line in syn.test.read_text(encoding="utf-8").split("\n"):
        cols = line.split("\t")
        if len(cols) == 10:
            cols[3] = "X"  # wrong tags everywhere
        lines.append("\t".join(cols))
    src = tmp_path / "wrong.conllu"
    src.write_text("\n".join(lines), encoding="utf-8")
    for flags, want_x in (([], True), (["--retag"], False)):
        out = tmp_path / "out.conllu"
        rc, _, err = run_cli(["parse", src, "-m", syn.model, "-o", out, *flags])
        assert rc == 0, err
        upos = [u for s in read_conllu(out) for u in s.upos[1:]]
        assert all(u == "X" for u in upos) == want_x
    gold = [u for s in read_conllu(syn.test) for u in s.upos[1:]]
    assert upos == gold
