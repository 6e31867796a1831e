"""Real input at the command line: plain text (--input text), input without tags."""

from __future__ import annotations

import io

import pytest
from fixtures_models import run_cli, syn  # noqa: F401

import depparse
from depparse.conllu import read_conllu
from depparse.decode.trees import validate_tree


def _plain(syn):  # noqa: F811
    """The synthetic test sentences as plain text: two paragraphs."""
    texts = [s.text for s in read_conllu(syn.test)]
    return " ".join(texts[:20]) + "\n\n" + " ".join(texts[20:]) + "\n"


def test_plain_text_is_segmented_tokenized_and_parsed(syn, tmp_path):  # noqa: F811
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
def test_plain_text_edge_cases_parse(syn, tmp_path, name, data):  # noqa: F811
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
def test_bad_plain_text_is_one_line_exit_2(syn, tmp_path, data, word):  # noqa: F811
    src, out = tmp_path / "in.txt", tmp_path / "out.conllu"
    src.write_bytes(data)
    rc, stdout, err = run_cli(["parse", "--input", "text", src, "-m", syn.model, "-o", out])
    lines = [x for x in err.splitlines() if x.strip()]
    assert rc == 2 and len(lines) == 1 and lines[0].startswith(f"depparse: error: {src}:1:")
    assert word.lower() in err.lower() and "Traceback" not in err
    assert not out.exists()


def test_model_without_tokenizer_refuses_plain_text(syn, tmp_path):  # noqa: F811
    model = tmp_path / "notok.npz"
    assert run_cli(["train", syn.train, "-o", model, "--model", "sib", "--epochs", "1",
                    "--bits", "12", "--no-labeler", "--no-tokenizer", "-q"])[0] == 0
    assert "tokenizer" not in depparse.load(model).model.components
    src = tmp_path / "in.txt"
    src.write_text("The dog sleeps .\n", encoding="utf-8")
    rc, _, err = run_cli(["parse", "--input", "text", src, "-m", model])
    assert rc == 2 and "has no tokenizer" in err


def test_untagged_input_for_a_model_without_tagger_warns(syn, tmp_path):  # noqa: F811
    """Never silently worse trees: the missing columns are named, with what to do."""
    lines = []
    for line in syn.test.read_text(encoding="utf-8").split("\n"):
        cols = line.split("\t")
        if len(cols) == 10:
            cols[2] = cols[3] = cols[4] = cols[5] = "_"
        lines.append("\t".join(cols))
    src = tmp_path / "untagged.conllu"
    src.write_text("\n".join(lines), encoding="utf-8")
    model = depparse.load(syn.model)
    if "tagger" in model.model.components:
        pytest.skip("the test model has a tagger (tests/test_tagger.py covers that case)")
    rc, _, err = run_cli(["parse", src, "-m", syn.model, "-o", tmp_path / "out.conllu"])
    assert rc == 0, err
    warning = [x for x in err.splitlines() if x.startswith("depparse: warning:")]
    assert len(warning) == 1 and "UPOS" in warning[0] and "tagger" in warning[0]
    rc, _, err = run_cli(["parse", syn.test, "-m", syn.model, "-o", tmp_path / "out2.conllu"])
    assert rc == 0 and "warning" not in err
