"""Tests of the tagger and lemmatizer (issue 12) and of writing predicted tag columns."""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import numpy as np
import pytest

from depparse.conllu import ConlluWarning, read_conllu, write_conllu

# ---------------------------------------------------------------------------------------
# writing predicted LEMMA / UPOS / XPOS / FEATS (Sentence.with_tags)
# ---------------------------------------------------------------------------------------

UNTAGGED = (
    "# newdoc id = d1\r\n"
    "# sent_id = s1\r\n"
    "# text = Del perro vi.\r\n"
    "1-2\tDel\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No|X=a=b\r\n"
    "1\tDe\t_\t_\t_\t_\t3\tcase\t3:case\t_\r\n"
    "2\tel\t_\t_\t_\t_\t3\tdet\t3:det\t_\r\n"
    "3\tperro\t_\t_\t_\t_\t4\tobl\t4:obl\t_\r\n"
    "3.1\tvi\tver\tVERB\t_\t_\t_\t_\t3:conj\t_\r\n"
    "4\tvi\t_\t_\t_\t_\t0\troot\t0:root\tSpaceAfter=No\r\n"
    "5\t.\t_\t_\t_\t_\t4\tpunct\t4:punct\t_\r\n"
    "\r\n"
    "# sent_id = s2\n"
    "1\tOk\tok\tINTJ\tUH\t_\t0\troot\t0:root\t_"
)

LEMMAS = ["", "de", "el", "perro", "ver", "."]
UPOS = ["", "ADP", "DET", "NOUN", "VERB", "PUNCT"]
XPOS = ["", "SP", "DA", "NC", "VM", "Fp"]
FEATS = ["", "_", "Definite=Def|Gender=Masc", "Gender=Masc|Number=Sing", "Mood=Ind", ""]


def _read(text: str):
    """Sentences of ``text`` (CRLF warnings silenced: the input has them on purpose)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConlluWarning)
        return read_conllu(io.BytesIO(text.encode("utf-8")))


def _bytes(sentences) -> bytes:
    buf = io.BytesIO()
    write_conllu(sentences, buf)
    return buf.getvalue()


def test_with_tags_fills_exactly_the_four_columns() -> None:
    s, t = _read(UNTAGGED)
    new = s.with_tags(lemmas=LEMMAS, upos=UPOS, xpos=XPOS, feats=FEATS)
    assert not s.modified and new.modified
    assert new.upos.tolist() == ["<ROOT>"] + UPOS[1:]
    assert new.feats.tolist() == ["", "", *FEATS[2:5], ""]
    out = _bytes([new, t]).decode("utf-8")
    want = UNTAGGED
    for m in range(1, 6):
        row = f"{m}\t{s.forms[m]}\t_\t_\t_\t_\t"
        assert want.count(row) == 1
        want = want.replace(row, f"{m}\t{s.forms[m]}\t{LEMMAS[m]}\t{UPOS[m]}\t{XPOS[m]}\t"
                                 f"{FEATS[m] or '_'}\t")
    assert out == want
    # only some columns, only some words: the other columns keep their bytes
    part = s.with_tags(upos=["", "_", "_", "NOUN", "_", "_"])
    assert _bytes([part]).decode() == UNTAGGED[:UNTAGGED.index("# sent_id = s2")].replace(
        "3\tperro\t_\t_\t", "3\tperro\t_\tNOUN\t")
    # a value equal to the one read is not a change; None keeps the column
    same = t.with_tags(lemmas=["", "ok"], upos=None, xpos=["", "UH"])
    assert not same.modified and _bytes([same]) == _bytes([t])
    # tags and a new parse together, and in either order
    both = new.with_parse([-1, 3, 3, 4, 0, 4], ["", "case", "det", "obj", "root", "punct"])
    assert "3\tperro\tperro\tNOUN\tNC\tGender=Masc|Number=Sing\t4\tobj\t4:obl\t_" in \
        both.to_text()
    assert "3\tperro\tperro\t_\tNC\t" in both.with_tags(upos=s.upos).to_text()


def test_with_tags_rejects_bad_values() -> None:
    (s,) = _read(UNTAGGED[:UNTAGGED.index("# sent_id = s2")])
    with pytest.raises(ValueError, match="length"):
        s.with_tags(upos=["", "X"])
    with pytest.raises(TypeError, match="str"):
        s.with_tags(lemmas=["", "a", "b", 3, "d", "e"])
    with pytest.raises(ValueError, match="UPOS"):
        s.with_tags(upos=["", "A B", "X", "X", "X", "X"])
    with pytest.raises(ValueError, match="LEMMA"):
        s.with_tags(lemmas=["", "a\tb", "x", "x", "x", "x"])
    # a lemma may contain a space (CoNLL-U allows spaces in FORM and LEMMA)
    assert "1\tDe\ta b\t" in s.with_tags(lemmas=["", "a b", "x", "x", "x", "x"]).to_text()
    with pytest.raises(ValueError):
        s.upos[1] = "X"  # still read-only


@pytest.mark.corpora
def test_untagged_corpus_refilled_is_byte_identical(corpora_dir: Path) -> None:
    """Blank columns 3-6 of every word of en_ewt dev, read, put the values back with
    with_tags: the file written is the original, byte for byte."""
    path = corpora_dir / "en_ewt" / "en_ewt-ud-dev.conllu"
    if not path.exists():
        pytest.skip(f"{path} not found")
    raw = path.read_bytes()
    lines = raw.decode("utf-8").split("\n")
    for k, line in enumerate(lines):
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cols[2:6] = ["_"] * 4
            lines[k] = "\t".join(cols)
    gold = read_conllu(path)
    blank = _read("\n".join(lines))
    assert _bytes(blank) != raw
    filled = [b.with_tags(g.lemmas, g.upos, g.xpos, g.feats)
              for b, g in zip(blank, gold, strict=True)]
    assert _bytes(filled) == raw
    for f, g in zip(filled, gold, strict=True):
        np.testing.assert_array_equal(f.feats, g.feats)
        np.testing.assert_array_equal(f.lemmas, g.lemmas)
