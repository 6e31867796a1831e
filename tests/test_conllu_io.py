"""Tests for depparse.conllu: lossless CoNLL-U reading and writing."""

from __future__ import annotations

import io
import os
import pickle
import warnings
from pathlib import Path

import conllu
import numpy as np
import pytest
from conftest import corpora_path
from conllu.parser import parse_dict_value

from depparse.conllu import (
    ConlluError,
    ConlluWarning,
    Sentence,
    iter_conllu,
    read_conllu,
    read_sentence,
    write_conllu,
)
from depparse.conllu import reader as conllu_reader
from depparse.decode.trees import validate_tree
from depparse.errors import UsageError

# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------


def _corpus_params() -> list:
    root = corpora_path()
    files = sorted(root.rglob("*.conllu")) if root.is_dir() else []
    if not files:
        # the corpora_dir fixture skips with the reason
        return [pytest.param("<no corpora>", id="no-corpora")]
    return [pytest.param(f.relative_to(root).as_posix(), id=f.name) for f in files]


def _dir_listing(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir())


def _parse(text: str | bytes, name: str | None = None) -> list[Sentence]:
    data = text.encode("utf-8") if isinstance(text, str) else text
    f = io.BytesIO(data)
    if name is not None:
        f.name = name
    return read_conllu(f)


def _write_bytes(sentences) -> bytes:
    buf = io.BytesIO()
    write_conllu(sentences, buf)
    return buf.getvalue()


# A sentence with a multiword token, an empty node and a literal "_" word.
SMALL = (
    "# newdoc id = doc1\n"
    "# sent_id = es-1\n"
    "# text = Vámonos al mar _\n"
    "1-2\tVámonos\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "1\tVamos\tir\tVERB\tV\tMood=Imp|Person=1\t0\troot\t0:root\t_\n"
    "2\tnos\tnosotros\tPRON\tP\tCase=Acc\t1\tobj\t1:obj\t_\n"
    "3-4\tal\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "3\ta\ta\tADP\t_\t_\t5\tcase\t5:case\t_\n"
    "4\tel\tel\tDET\t_\tDefinite=Def\t5\tdet\t5:det\t_\n"
    "5\tmar\tmar\tNOUN\t_\t_\t1\tobl\t1:obl\tSpaceAfter=No\n"
    "5.1\tir\tir\tVERB\t_\t_\t_\t_\t1:conj\tCopyOf=1\n"
    "6\t_\t_\tPUNCT\t_\t_\t1\tpunct\t1:punct\tA=1|A=2|B=x=y\n"
    "\n"
    "# sent_id = es-2\n"
    "1\tHola\thola\tINTJ\t_\t_\t_\t_\t_\t_\n"
    "2\t!\t!\tPUNCT\t_\t_\t_\t_\t_\t_\n"
    "\n"
)

WORD = "{i}\tw{i}\tw\tX\t_\t_\t{h}\tdep\t_\t_\n"


def _words(n: int, head: int = 0) -> str:
    return "".join(WORD.format(i=i, h=head if i == 1 else 1) for i in range(1, n + 1))


# ---------------------------------------------------------------------------------------
# the corpora: byte-identical round trips, MISC, head/rel rewriting
# ---------------------------------------------------------------------------------------


@pytest.mark.corpora
@pytest.mark.parametrize("rel", _corpus_params())
def test_round_trip_every_corpus_file(corpora_dir: Path, rel: str, tmp_path: Path) -> None:
    path = corpora_dir / rel
    original = path.read_bytes()
    sentences = read_conllu(path)
    assert sentences, f"{rel} holds no sentences"
    out = tmp_path / "out.conllu"
    assert write_conllu(sentences, out) == len(sentences)
    assert out.read_bytes() == original
    assert _dir_listing(tmp_path) == ["out.conllu"]  # no temp file left behind
    # Sentence.to_text plus the first sentence's prefix is the whole file
    text = "".join(s.to_text() for s in sentences)
    assert text.encode("utf-8") == original
    # every word line is where word_line_nos says it is
    lines = original.decode("utf-8").split("\n")
    for s in sentences[:200]:
        assert lines[s.line_no - 1] == s.lines[0]
        for m in range(1, s.n + 1):
            assert lines[s.word_line_nos[m] - 1].split("\t")[0] == str(m)


# Lines that the conllu library's MISC parser would mangle (found with grep):
MISC_CASES = [
    ("en_ewt/en_ewt-ud-train.conllu", 118191, "Cxn=free=rc-obj"),
    (
        "sv_talbanken/sv_talbanken-ud-test.conllu",
        15806,
        "Cxn=Interrogative-WHInfo-Indirect|CxnElt=5:Interrogative-WHInfo-Indirect.Clause"
        "|CxnElt=5:Interrogative-WHInfo-Indirect.WHWord",
    ),
    (
        "sv_talbanken/sv_talbanken-ud-test.conllu",
        19519,
        "Cxn=Interrogative-WHInfo-Direct|CxnElt=2:Interrogative-WHInfo-Direct.Clause"
        "|CxnElt=2:Interrogative-WHInfo-Direct.WHWord",
    ),
]


@pytest.mark.corpora
@pytest.mark.parametrize("rel,line_no,misc", MISC_CASES, ids=["en_ewt", "sv_1", "sv_2"])
def test_misc_with_repeated_keys_and_equals_survive(
    corpora_dir: Path, rel: str, line_no: int, misc: str
) -> None:
    # the reason for keeping raw lines: conllu's dict parser loses information here
    parsed = parse_dict_value(misc)
    assert "|".join(f"{k}={v}" for k, v in parsed.items()) != misc

    path = corpora_dir / rel
    for s in iter_conllu(path):
        if s.line_no <= line_no < s.line_no + len(s.lines):
            break
    else:
        pytest.fail(f"line {line_no} not found in {rel}")
    line = s.lines[line_no - s.line_no]
    assert line.split("\t")[9] == misc
    # unmodified and modified sentences keep the MISC column exactly
    assert misc in s.to_text()
    heads = s.heads.copy()
    heads[1:] = 0
    rels = np.array([""] + ["dep"] * s.n, dtype=object)
    changed = s.with_parse(heads, rels)
    out_lines = changed.to_text(separator=False).split("\n")
    assert out_lines[line_no - s.line_no].split("\t")[9] == misc
    again = _parse(changed.to_text())[0]
    assert again.lines[line_no - s.line_no].split("\t")[9] == misc


def _check_only_head_and_rel_changed(old: Sentence, new_text: str, heads, rels) -> None:
    new_lines = new_text.split("\n")
    assert new_lines[-1] == ""  # the text ends with the terminator / separator
    new_lines = new_lines[: len(old.lines)]
    assert len(new_lines) == len(old.lines)
    words = {int(k) - old.line_no: m for m, k in enumerate(old.word_line_nos) if m > 0}
    for k, (a, b) in enumerate(zip(old.lines, new_lines, strict=True)):
        if k not in words:
            assert a == b  # comments, multiword tokens, empty nodes: untouched
            continue
        m = words[k]
        ca, cb = a.split("\t"), b.split("\t")
        assert ca[:6] == cb[:6] and ca[8:] == cb[8:]
        assert cb[6] == (str(heads[m]) if heads[m] >= 0 else "_")
        assert cb[7] == (rels[m] or "_")


@pytest.mark.corpora
def test_changing_heads_and_rels_rewrites_only_columns_7_and_8(
    corpora_dir: Path, tmp_path: Path
) -> None:
    path = corpora_dir / "en_ewt" / "en_ewt-ud-dev.conllu"
    if not path.exists():
        pytest.skip(f"{path} not found")
    sentences = read_conllu(path)
    rng = np.random.default_rng(0)
    new_sentences = []
    for s in sentences:
        heads = np.concatenate([[-1], rng.integers(0, s.n + 1, size=s.n)])
        rels = np.array([""] + [f"r{int(h)}" for h in heads[1:]], dtype=object)
        new = s.with_parse(heads, rels)
        _check_only_head_and_rel_changed(s, new.to_text(), heads, rels)
        new_sentences.append(new)
        assert new.modified and not s.modified  # the original is not affected
    out = tmp_path / "parsed.conllu"
    write_conllu(new_sentences, out)
    back = read_conllu(out)
    assert len(back) == len(sentences)
    for a, b in zip(new_sentences, back, strict=True):
        np.testing.assert_array_equal(a.heads, b.heads)
        np.testing.assert_array_equal(a.rels, b.rels)
        assert b.comments == a.comments


def test_in_place_changes_are_written() -> None:
    s = _parse(SMALL)[0]
    assert not s.modified
    s.heads[3] = 4
    s.rels[3] = "nmod:poss"
    assert s.modified
    text = s.to_text()
    heads = s.heads.copy()
    _check_only_head_and_rel_changed(_parse(SMALL)[0], text, heads, s.rels)
    assert "3\ta\ta\tADP\t_\t_\t4\tnmod:poss\t5:case\t_" in text
    # unannotated heads and empty relations are written as "_"
    s.heads[3] = -1
    s.rels[3] = ""
    assert "3\ta\ta\tADP\t_\t_\t_\t_\t5:case\t_" in s.to_text()
    # reverting to the original values gives the original text back
    s.heads[3] = 5
    s.rels[3] = "case"
    assert not s.modified
    assert s.to_text() == SMALL[: SMALL.index("# sent_id = es-2")]


@pytest.mark.corpora
def test_arrays_agree_with_conllu_library(corpora_dir: Path) -> None:
    path = corpora_dir / "en_ewt" / "en_ewt-ud-dev.conllu"
    if not path.exists():
        pytest.skip(f"{path} not found")
    with open(path, encoding="utf-8") as f:
        ref = list(conllu.parse_incr(f))
    ours = read_conllu(path)
    assert len(ref) == len(ours)
    for r, s in zip(ref, ours, strict=True):
        words = [t for t in r if isinstance(t["id"], int)]
        assert [t["id"] for t in words] == s.ids[1:].tolist()
        assert [t["form"] for t in words] == s.forms[1:].tolist()
        assert [t["lemma"] for t in words] == s.lemmas[1:].tolist()
        assert [t["upos"] for t in words] == s.upos[1:].tolist()
        assert [t["head"] for t in words] == s.heads[1:].tolist()
        assert [t["deprel"] for t in words] == s.rels[1:].tolist()
        assert dict(r.metadata) == s.metadata


# ---------------------------------------------------------------------------------------
# arrays on a hand-written sentence
# ---------------------------------------------------------------------------------------


def test_arrays_on_small_sentence() -> None:
    s, t = _parse(SMALL, name="small.conllu")
    assert s.n == 6
    assert s.source == "small.conllu"
    assert s.ids.tolist() == [0, 1, 2, 3, 4, 5, 6]
    assert s.forms.tolist() == ["<ROOT>", "Vamos", "nos", "a", "el", "mar", "_"]
    assert s.lemmas.tolist() == ["<ROOT>", "ir", "nosotros", "a", "el", "mar", "_"]
    assert s.upos.tolist() == ["<ROOT>", "VERB", "PRON", "ADP", "DET", "NOUN", "PUNCT"]
    assert s.xpos.tolist() == ["<ROOT>", "V", "P", "_", "_", "_", "_"]
    assert s.feats.tolist() == ["", "Mood=Imp|Person=1", "Case=Acc", "", "Definite=Def", "", ""]
    assert s.heads.tolist() == [-1, 0, 1, 5, 5, 1, 1]
    assert s.heads.dtype == np.int64
    assert s.rels.tolist() == ["", "root", "obj", "case", "det", "obl", "punct"]
    for arr in (s.forms, s.lemmas, s.upos, s.xpos, s.feats, s.rels):
        assert arr.dtype == object and arr.shape == (7,)
    assert s.line_no == 1
    assert s.word_line_nos.tolist() == [1, 5, 6, 8, 9, 10, 12]
    assert s.sent_id == "es-1"
    assert s.text == "Vámonos al mar _"
    assert s.metadata == {"newdoc id": "doc1", "sent_id": "es-1", "text": "Vámonos al mar _"}
    assert s.comments == ("# newdoc id = doc1", "# sent_id = es-1", "# text = Vámonos al mar _")
    assert s.has_gold_heads
    assert validate_tree(s) is None
    assert s.newline == "\n"

    assert t.n == 2
    assert t.line_no == 14
    assert t.word_line_nos.tolist() == [14, 15, 16]
    assert t.heads.tolist() == [-1, -1, -1]
    assert t.rels.tolist() == ["", "", ""]
    assert not t.has_gold_heads
    assert t.text is None
    assert validate_tree(t) == "word 1 has no head"
    assert _write_bytes([s, t]) == SMALL.encode("utf-8")


def test_non_parse_arrays_are_read_only_and_copy_is_independent() -> None:
    s = _parse(SMALL)[0]
    with pytest.raises(ValueError):
        s.forms[1] = "x"
    with pytest.raises(ValueError):
        s.upos[1] = "x"
    c = s.copy()
    c.heads[1] = 2
    c.rels[1] = "x"
    c.metadata["sent_id"] = "other"
    assert s.heads[1] == 0 and s.rels[1] == "root" and s.sent_id == "es-1"
    assert not s.modified and c.modified


def test_with_parse() -> None:
    s = _parse(SMALL)[0]
    new = s.with_parse([5, 0, 1, 1, 1, 1, 1])
    assert new.heads.tolist() == [-1, 0, 1, 1, 1, 1, 1]
    assert new.rels.tolist() == s.rels.tolist()
    assert s.heads.tolist() == [-1, 0, 1, 5, 5, 1, 1]
    assert "4\tel\tel\tDET\t_\tDefinite=Def\t1\tdet\t5:det\t_" in new.to_text()
    new2 = new.with_parse(new.heads, ["", "root", "obj", "case", "det", "obl", ""])
    assert "6\t_\t_\tPUNCT\t_\t_\t1\t_\t1:punct\tA=1|A=2|B=x=y" in new2.to_text()
    with pytest.raises(ValueError, match="shape"):
        s.with_parse([0, 1, 1])
    with pytest.raises(ValueError, match="out of range"):
        s.with_parse([-1, 0, 1, 1, 1, 1, 7])
    with pytest.raises(TypeError, match="integers"):
        s.with_parse(np.zeros(7))
    with pytest.raises(ValueError, match="length"):
        s.with_parse(s.heads, ["", "root"])
    with pytest.raises(ValueError, match="whitespace"):
        s.with_parse(s.heads, ["", "root", "a b", "x", "x", "x", "x"])
    with pytest.raises(TypeError, match="str"):
        s.with_parse(s.heads, ["", "root", 3, "x", "x", "x", "x"])


def test_invalid_in_place_changes_fail_on_write() -> None:
    s = _parse(SMALL)[0]
    s.heads[2] = 99
    with pytest.raises(ValueError, match="out of range"):
        s.to_text()
    s = _parse(SMALL)[0]
    s.rels[2] = "a\tb"
    with pytest.raises(ValueError, match="whitespace"):
        s.to_text()
    s = _parse(SMALL)[0]
    s.heads = np.array([0, 1])
    with pytest.raises(ValueError, match="shape"):
        s.to_text()


def test_from_text_and_pickle() -> None:
    block = SMALL[: SMALL.index("\n\n") + 2]
    s = read_sentence(block)
    assert s.n == 6 and s.to_text() == block
    with pytest.raises(ConlluError, match="expected one sentence, found 2"):
        read_sentence(SMALL)
    with pytest.raises(TypeError):
        Sentence()
    s.heads[2] = 0
    p = pickle.loads(pickle.dumps(s))
    assert p.to_text() == s.to_text()
    assert p.heads.tolist() == s.heads.tolist()


# ---------------------------------------------------------------------------------------
# inputs: files, streams, line structure
# ---------------------------------------------------------------------------------------


def test_paths_and_file_objects(tmp_path: Path) -> None:
    path = tmp_path / "small.conllu"
    path.write_bytes(SMALL.encode("utf-8"))
    from_path = read_conllu(path)
    from_str_path = read_conllu(str(path))
    with open(path, "rb") as fb:
        from_binary = read_conllu(fb)
    with open(path, encoding="utf-8", newline="") as ft:
        from_text = read_conllu(ft)
    from_stringio = read_conllu(io.StringIO(SMALL))
    for got in (from_str_path, from_binary, from_text, from_stringio):
        assert [s.to_text() for s in got] == [s.to_text() for s in from_path]
    assert from_path[0].source == str(path)
    assert from_binary[0].source == str(path)
    assert from_stringio[0].source == "<stream>"
    gen = iter_conllu(path)
    assert next(gen).sent_id == "es-1"
    # text output
    buf = io.StringIO()
    assert write_conllu(from_path, buf) == 2
    assert buf.getvalue() == SMALL
    # "-" is an ordinary file name
    with pytest.raises(FileNotFoundError):
        read_conllu(tmp_path / "-")
    with pytest.raises(TypeError):
        read_conllu(42)


@pytest.mark.parametrize("text", ["", "\n", "\n\n  \n", "\t\n"])
def test_empty_input_gives_no_sentences(text: str) -> None:
    assert _parse(text) == []
    assert read_conllu(io.StringIO(text)) == []


@pytest.mark.parametrize(
    "text",
    [
        SMALL[:-1],  # no final blank line
        SMALL[:-2],  # no final newline at all
        SMALL + "\n\n",  # extra blank lines at the end
        "\n\n" + SMALL,  # leading blank lines
        SMALL.replace("\n\n# sent_id = es-2", "\n\n\n  \n# sent_id = es-2"),  # odd separators
        SMALL.replace("1:conj\tCopyOf=1\n", "1:conj\tCopyOf=1\r\n"),  # one CRLF line
        SMALL.replace("\n", "\r\n")[:-2],  # CRLF, no final blank line
        SMALL.replace("Hola", "Ho\x0bla\u2028\x1c"),  # characters str.splitlines splits on
    ],
    ids=["no-blank", "no-newline", "extra-blank", "leading", "separators", "mixed", "crlf", "ff"],
)
def test_line_structure_round_trips(text: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConlluWarning)
        sentences = _parse(text)
        # reordered output is still well-formed CoNLL-U
        swapped = _parse(_write_bytes(sentences[::-1]))
    assert len(sentences) == 2
    assert _write_bytes(sentences) == text.encode("utf-8")
    assert sentences[1].forms[1] in ("Hola", "Ho\x0bla\u2028\x1c")
    assert [s.sent_id for s in swapped] == ["es-2", "es-1"]
    assert [s.n for s in swapped] == [2, 6]


def test_bom_and_crlf_accepted_with_warning_and_kept(tmp_path: Path) -> None:
    data = ("\ufeff" + SMALL.replace("\n", "\r\n")).encode("utf-8")
    with pytest.warns(ConlluWarning) as record:
        sentences = _parse(data)
    messages = [str(w.message) for w in record]
    assert any("byte-order mark" in m for m in messages)
    assert any("CRLF" in m for m in messages)
    s = sentences[0]
    assert s.newline == "\r\n"
    assert s.comments[0] == "# newdoc id = doc1"
    assert s.forms[1] == "Vamos"
    assert s.lines[-1].endswith("B=x=y")  # no "\r" inside the lines
    assert _write_bytes(sentences) == data
    # modified sentences keep CRLF and the BOM too
    changed = [s.with_parse(np.r_[-1, np.zeros(s.n, dtype=int)]) for s in sentences]
    out = _write_bytes(changed)
    assert out.startswith(b"\xef\xbb\xbf# newdoc")
    assert out.count(b"\r\n") == data.count(b"\r\n")
    assert out.replace(b"\r\n", b"").count(b"\n") == 0
    # through a file path
    path = tmp_path / "bom.conllu"
    path.write_bytes(data)
    with pytest.warns(ConlluWarning):
        again = read_conllu(path)
    write_conllu(again, tmp_path / "copy.conllu")
    assert (tmp_path / "copy.conllu").read_bytes() == data
    # the BOM is written only at the start of the output
    assert not _write_bytes(sentences[::-1]).startswith(b"\xef\xbb\xbf")


def test_small_read_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    data = (SMALL * 3).encode("utf-8")
    expected = [s.to_text() for s in _parse(data)]
    monkeypatch.setattr(conllu_reader, "_CHUNK", 7)
    assert [s.to_text() for s in _parse(data)] == expected
    assert [s.to_text() for s in read_conllu(io.StringIO(SMALL * 3))] == expected
    bad = data + b"1\tw\xff\tw\tX\t_\t_\t0\tdep\t_\t_\n"
    with pytest.raises(ConlluError) as err:
        _parse(bad)
    assert err.value.line == SMALL.count("\n") * 3 + 1


# ---------------------------------------------------------------------------------------
# malformed input
# ---------------------------------------------------------------------------------------

GOOD = "# sent_id = ok\n" + _words(3) + "\n"  # lines 1-5 (line 5 is blank)
L = 6  # first line of the second sentence in each error case

ERROR_CASES = [
    # (id, second sentence, line offset from L, message fragment)
    ("columns", "1\tw\tw\tX\t_\t_\t0\tdep\t_\n", 0, "expected 10 tab-separated columns, found 9"),
    ("columns-11", _words(1) + "2\tw\tw\tX\t_\t_\t1\tdep\t_\t_\t_\n", 1, "found 11"),
    ("spaces", "1 w w X _ _ 0 dep _ _\n", 0, "found 1"),
    ("id-text", _words(1) + "x\tw\tw\tX\t_\t_\t1\tdep\t_\t_\n", 1, "invalid ID 'x'"),
    ("id-zero-pad", _words(1) + "02\tw\tw\tX\t_\t_\t1\tdep\t_\t_\n", 1, "invalid ID '02'"),
    ("id-underscore", "_\tw\tw\tX\t_\t_\t0\tdep\t_\t_\n", 0, "invalid ID '_'"),
    ("id-duplicate", _words(2) + WORD.format(i=2, h=1), 2, "duplicate word ID 2"),
    ("id-gap", _words(2) + WORD.format(i=4, h=1), 2, "word ID 4 out of sequence (expected 3)"),
    ("id-zero", "0\tw\tw\tX\t_\t_\t0\tdep\t_\t_\n", 0, "word ID 0"),
    ("id-start-2", WORD.format(i=2, h=0), 0, "out of sequence (expected 1)"),
    ("mwt-reversed", "3-2\tx\t_\t_\t_\t_\t_\t_\t_\t_\n" + _words(3), 0, "start exceeds end"),
    ("mwt-single", "1-1\tx\t_\t_\t_\t_\t_\t_\t_\t_\n" + _words(3), 0, "at least two words"),
    ("mwt-late", _words(1) + "3-4\tx\t_\t_\t_\t_\t_\t_\t_\t_\n", 1, "next word ID 2"),
    (
        "mwt-short",
        _words(1) + "2-4\tx\t_\t_\t_\t_\t_\t_\t_\t_\n" + WORD.format(i=2, h=1),
        1,
        "2-4 is not covered",
    ),
    (
        "mwt-overlap",
        "1-2\tx\t_\t_\t_\t_\t_\t_\t_\t_\n"
        + _words(1)
        + "2-3\ty\t_\t_\t_\t_\t_\t_\t_\t_\n"
        + WORD.format(i=2, h=1),
        2,
        "before multiword token 1-2",
    ),
    ("empty-bad", _words(1) + "1.0\tx\tx\tX\t_\t_\t_\t_\t_\t_\n", 1, "invalid ID '1.0'"),
    ("empty-place", _words(2) + "1.1\tx\tx\tX\t_\t_\t_\t_\t_\t_\n", 2, "out of place"),
    ("empty-seq", _words(1) + "1.2\tx\tx\tX\t_\t_\t_\t_\t_\t_\n", 1, "expected 1.1"),
    ("empty-dup", _words(1) + "1.1\tx\tx\tX\t_\t_\t_\t_\t_\t_\n" * 2, 2, "expected 1.2"),
    ("head-text", _words(1) + "2\tw\tw\tX\t_\t_\tx\tdep\t_\t_\n", 1, "HEAD 'x' is not an integer"),
    ("head-float", _words(1) + "2\tw\tw\tX\t_\t_\t1.0\tdep\t_\t_\n", 1, "not an integer"),
    ("head-negative", _words(1) + "2\tw\tw\tX\t_\t_\t-1\tdep\t_\t_\n", 1, "HEAD -1 out of range"),
    ("head-big", _words(2) + "3\tw\tw\tX\t_\t_\t4\tdep\t_\t_\n", 2, "HEAD 4 out of range 0..3"),
    (
        "head-big-early",
        "1\tw\tw\tX\t_\t_\t9\tdep\t_\t_\n" + WORD.format(i=2, h=1) + WORD.format(i=3, h=1),
        0,
        "HEAD 9 out of range 0..3",
    ),
    ("form-empty", _words(1) + "2\t\tw\tX\t_\t_\t1\tdep\t_\t_\n", 1, "empty FORM column"),
    ("deprel-empty", _words(1) + "2\tw\tw\tX\t_\t_\t1\t\t_\t_\n", 1, "empty DEPREL column"),
    ("comment-inside", _words(2) + "# oops\n" + WORD.format(i=3, h=1), 2, "comment line after"),
    ("no-words", "# sent_id = empty\n# text = nothing\n", 0, "no syntactic words"),
    ("only-mwt", "1-2\tx\t_\t_\t_\t_\t_\t_\t_\t_\n", 0, "no syntactic words"),
    ("only-empty-node", "0.1\tx\tx\tX\t_\t_\t_\t_\t_\t_\n", 0, "no syntactic words"),
    ("plus-columns", "# global.columns = ID FORM UPOS\n" + _words(2), 0, "CoNLL-U Plus"),
    ("utf8", _words(1) + "2\tw\udcff\tw\tX\t_\t_\t1\tdep\t_\t_\n", 1, "invalid UTF-8"),
]


@pytest.mark.parametrize(
    "second,offset,fragment", [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES]
)
def test_malformed_input_raises_conllu_error(second: str, offset: int, fragment: str) -> None:
    # surrogateescape turns "\udcff" into the invalid byte 0xff
    data = (GOOD + second + "\n" + GOOD).encode("utf-8", "surrogateescape")
    with pytest.raises(ConlluError) as err:
        _parse(data, name="bad.conllu")
    assert err.value.line == L + offset, str(err.value)
    assert err.value.path == "bad.conllu"
    assert fragment in err.value.message
    assert str(err.value) == f"bad.conllu:{L + offset}: {err.value.message}"
    # the sentences before the error are delivered by iter_conllu
    gen = iter_conllu(io.BytesIO(data))
    assert next(gen).sent_id == "ok"
    with pytest.raises(ConlluError):
        list(gen)


def test_error_reports_path_and_stream_names(tmp_path: Path) -> None:
    path = tmp_path / "broken.conllu"
    path.write_bytes(b"1\tx\n")
    with pytest.raises(ConlluError) as err:
        read_conllu(path)
    assert err.value.path == str(path) and err.value.line == 1
    assert str(err.value).startswith(f"{path}:1: expected 10")
    with pytest.raises(ConlluError) as err:
        read_conllu(io.BytesIO(b"\n\n1\tx\n"))
    assert str(err.value) == "<stream>:3: expected 10 tab-separated columns, found 2"
    assert isinstance(pickle.loads(pickle.dumps(err.value)), ConlluError)
    assert str(pickle.loads(pickle.dumps(err.value))) == str(err.value)


def test_utf8_error_in_last_unterminated_line() -> None:
    with pytest.raises(ConlluError) as err:
        _parse(GOOD.encode() + b"1\tw\xc3\tw\tX\t_\t_\t0\tdep\t_\t_")
    assert err.value.line == 6


# ---------------------------------------------------------------------------------------
# atomic writes
# ---------------------------------------------------------------------------------------


def _sentences_with_bad_third() -> list[Sentence]:
    sentences = _parse(SMALL * 3)
    sentences[2] = sentences[2].copy()
    sentences[2].heads[1] = 1000
    return sentences


def test_atomic_write_failure_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "out.conllu"
    with pytest.raises(ValueError, match="out of range"):
        write_conllu(_sentences_with_bad_third(), target)
    assert _dir_listing(tmp_path) == []


def test_atomic_write_failure_keeps_existing_target(tmp_path: Path) -> None:
    target = tmp_path / "out.conllu"
    target.write_bytes(b"precious\n")
    os.chmod(target, 0o640)
    with pytest.raises(ValueError):
        write_conllu(_sentences_with_bad_third(), target)
    assert target.read_bytes() == b"precious\n"
    assert _dir_listing(tmp_path) == ["out.conllu"]

    def interrupted():
        yield from _parse(SMALL)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_conllu(interrupted(), target)
    assert target.read_bytes() == b"precious\n"
    assert _dir_listing(tmp_path) == ["out.conllu"]
    # a successful write replaces it and keeps its permissions
    write_conllu(_parse(SMALL), target)
    assert target.read_bytes() == SMALL.encode()
    assert (target.stat().st_mode & 0o777) == 0o640
    assert _dir_listing(tmp_path) == ["out.conllu"]


@pytest.mark.parametrize("fail", ["fsync", "replace"])
def test_atomic_write_os_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail) -> None:
    target = tmp_path / "out.conllu"
    target.write_bytes(b"old\n")

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(conllu_reader.os, fail, boom)
    with pytest.raises(OSError, match="disk full"):
        write_conllu(_parse(SMALL), target)
    monkeypatch.undo()
    assert target.read_bytes() == b"old\n"
    assert _dir_listing(tmp_path) == ["out.conllu"]


def test_atomic_write_unwritable_directory(tmp_path: Path) -> None:
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        pytest.skip("running as root: directory permissions are not enforced")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(PermissionError):
            write_conllu(_parse(SMALL), locked / "out.conllu")
        assert _dir_listing(locked) == []
    finally:
        locked.chmod(0o700)


def test_write_into_missing_directory(tmp_path: Path) -> None:
    """A clear error naming the folder (the API's parse_file too), nothing written."""
    with pytest.raises(UsageError, match=r"folder .*missing does not exist"):
        write_conllu(_parse(SMALL), tmp_path / "missing" / "out.conllu")
    assert _dir_listing(tmp_path) == []


def test_write_new_file_mode_and_symlink(tmp_path: Path) -> None:
    target = tmp_path / "new.conllu"
    write_conllu(_parse(SMALL), target)
    umask = os.umask(0o022)
    os.umask(umask)
    assert (target.stat().st_mode & 0o777) == 0o666 & ~umask
    link = tmp_path / "link.conllu"
    link.symlink_to(target)
    write_conllu(_parse(SMALL)[:1], link)
    assert link.is_symlink()
    assert target.read_bytes() == SMALL[: SMALL.index("# sent_id = es-2")].encode()


def test_write_rejects_non_sentences() -> None:
    with pytest.raises(TypeError):
        _write_bytes(["1\tx\n"])
    with pytest.raises(TypeError):
        write_conllu([], 3.5)


# ---------------------------------------------------------------------------------------
# validate_tree
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "heads,expected",
    [
        ([-1, 0, 1, 1], None),
        ([-1, 2, 0, 2, 3], None),
        ([-1, 0, 0, 1], None),  # two roots: still a tree rooted at 0
        ([-1, 0, 3, 2], "cycle: 2 -> 3 -> 2"),
        ([-1, 2, 3, 1], "cycle: 1 -> 2 -> 3 -> 1"),
        ([-1, 0, 2], "word 2 is its own head"),
        ([-1, 0, -1], "word 2 has no head"),
        ([-1, 0, 5], "out of range"),
        ([-1], "no words"),
    ],
)
def test_validate_tree(heads, expected) -> None:
    got = validate_tree(np.array(heads))
    if expected is None:
        assert got is None
    else:
        assert got is not None and expected in got


def test_validate_tree_single_root() -> None:
    assert validate_tree([-1, 0, 1], single_root=True) is None
    assert "2 words attached to the root" in validate_tree([-1, 0, 0], single_root=True)
    s = _parse(SMALL)[0]
    assert validate_tree(s, single_root=True) is None
    assert validate_tree(s.with_parse([-1, 3, 1, 2, 1, 1, 1])) == "cycle: 1 -> 3 -> 2 -> 1"


# ---------------------------------------------------------------------------------------
# the whole of a large file (slow: run with -m slow)
# ---------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.corpora
def test_read_whole_en_ewt_train(corpora_dir: Path) -> None:
    import time

    path = corpora_dir / "en_ewt" / "en_ewt-ud-train.conllu"
    if not path.exists():
        pytest.skip(f"{path} not found")
    t0 = time.perf_counter()
    sentences = read_conllu(path)
    elapsed = time.perf_counter() - t0
    # the whole training file is read (12,544 sentences, 204,577 words: the treebank's own
    # counts); the time is printed, not asserted (a timed test fails on a loaded machine; the
    # speed is benchmarks/streaming.md's business)
    print(f"reading en_ewt train took {elapsed:.2f} s")
    assert len(sentences) == 12544 and sum(s.n for s in sentences) == 204577


def test_whitespace_checks_are_str_isspace() -> None:
    """with_tags and with_parse reject a value by one regex search (depparse.conllu.sentence):
    ``\\s`` must be exactly str.isspace() over every code point, and the checks must still
    reject what they rejected (a TAB in a lemma, any whitespace in a tag or a relation)."""
    from depparse.conllu import sentence as S

    chars = "".join(map(chr, range(0x110000)))
    assert "".join(S._SPACE.findall(chars)) == "".join(c for c in chars if c.isspace())
    assert "".join(S._BREAK.findall(chars)) == "\t\n\r"
    s = read_sentence("1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n\n")
    assert s.with_tags(lemmas=["", "a b"]).lemmas[1] == "a b"  # spaces are fine in a lemma
    for bad in ("a\tb", "a\nb", "a\rb"):
        with pytest.raises(ValueError):
            s.with_tags(lemmas=["", bad])
    for bad in ("A B", "A\u00a0B", "A\u2003", "\u3000"):
        with pytest.raises(ValueError):
            s.with_tags(upos=["", bad])
        with pytest.raises(ValueError):
            s.with_parse([-1, 0], ["", bad])
    assert s.with_tags(upos=["", "NOUN"]).upos[1] == "NOUN"
