"""The exact whitespace of plain text kept in MISC (``SpacesBefore``/``SpacesAfter``) and the
text rebuilt from CoNLL-U (:mod:`depparse.conllu.spaces`): tokenizer, batches, the CLI."""

from __future__ import annotations

import io
import random

import pytest
from fixtures_models import run_cli

from depparse.conllu import (
    document_text,
    escape_spaces,
    read_conllu,
    space_fields,
    unescape_spaces,
)
from depparse.inference import textfile
from depparse.inference.tokenizer import Tokenizer

#: Characters whitespace is made of in the generated texts: UDPipe's named escapes, other
#: Unicode whitespace, control characters (whitespace to the tokenizer), the escape's own
#: characters.
ODD = [" ", "  ", "\t", "\n", "\n\n", "\r\n", "\r\n\r\n", "\r", "\u00a0", "\u3000", "\u2028",
       "\x0c", "\x0b", "\x07", "\x85", "\ufeff", "\n \t\n", " \n\n\n  "]
WORDS = ["a", "bc", "Don't", "it's", "I", ".", ",", "!", "(", ")", "x|y", "a\\b", "\\s",
         "www.example.com/x", "e\u0301", "Ünï", "12.5", "\U0001f389"]


def _texts(n, seed):
    rng = random.Random(seed)
    for _ in range(n):
        parts = [rng.choice(ODD) if rng.random() < 0.4 else ""]
        for _ in range(rng.randint(1, 25)):
            parts.append(rng.choice(WORDS))
            r = rng.random()
            parts.append(" " if r < 0.5 else "" if r < 0.65 else rng.choice(ODD))
        yield "".join(parts)


@pytest.fixture(scope="module")
def tok(parser):
    """The tiny model's tokenizer, with multiword tokens to split."""
    t = parser.tokenizer
    return Tokenizer(t.weights, {"don't": ["do", "n't"], "it's": ["it", "'s"]}, t.max_words,
                     t.sentence_bias, t.gap_weights, t.gap_threshold)


def test_escapes_round_trip_and_keep_fields_one_line():
    rng = random.Random(1)
    alphabet = "".join(ODD) + "|\\sp=_x\U0001f389"
    for _ in range(500):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        e = escape_spaces(s)
        assert unescape_spaces(e) == s
        assert not any(c.isspace() or c == "|" or not c.isprintable() for c in e), e
    assert escape_spaces(" \t\r\n|\\") == "\\s\\t\\r\\n\\p\\\\"  # UDPipe's escapes
    assert escape_spaces("\u00a0\U000e0001\U00010000") == "\\u00A0\\U000E0001\U00010000"
    assert space_fields("", " ") == [] and space_fields("", "") == ["SpaceAfter=No"]
    assert space_fields("\n ", "\n") == ["SpacesBefore=\\n\\s", "SpacesAfter=\\n"]


def test_tokenized_text_is_rebuilt_exactly(tok):
    for k, text in enumerate(_texts(300, seed=2)):
        sents = tok.tokenize(text)
        assert sents, text
        assert document_text(sents) == text, (k, text)
        # what UD readers know still holds: SpaceAfter=No where no whitespace follows
        for s in sents:
            for line in s.lines:
                cols = line.split("\t")
                if len(cols) == 10 and "." not in cols[0]:
                    fields = cols[9].split("|")
                    assert not ("SpaceAfter=No" in fields
                                and any(f.startswith("SpacesAfter=") for f in fields))


def test_normalized_spaces_writes_space_after_no_alone(tok):
    for text in _texts(50, seed=4):
        exact = tok.tokenize(text)
        plain = tok.tokenize(text, normalized_spaces=True)
        assert [s.forms.tolist() for s in plain] == [s.forms.tolist() for s in exact]
        for a, b in zip(exact, plain, strict=True):
            assert a.text == b.text
            for la, lb in zip(a.lines, b.lines, strict=True):
                ca, cb = la.split("\t"), lb.split("\t")
                if len(ca) == 10:
                    assert "Spaces" not in cb[9]
                    # inside a paragraph, SpaceAfter=No means the same in both
                    if "SpaceAfter=No" in cb[9]:
                        assert "SpaceAfter=No" in ca[9]


def test_a_text_read_in_batches_keeps_the_text(tok, tmp_path, monkeypatch):
    """Read in batches cut after blank lines, the text is rebuilt exactly too, and the
    whitespace between paragraphs is split as in a text read whole: no batch starts with a
    line break before its first word (only the document's first token may have one in
    ``SpacesBefore``), and ordinary text gets the same fields at any batch size."""
    odd = "\n\n".join(_texts(40, seed=3)) + "\n \n\n  tail\t"
    plain = "".join(f"Sentence {k} is here.{' ' * (k % 3)}" + ["\n\n", "\n \n   ", "\r\n\r\n",
                    "\n\n\n", "\n \t\n\t", "\n"][k % 6] for k in range(60)) + "End."
    for text in (odd, plain):
        src = tmp_path / "in.txt"
        src.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
        ref = [s.to_text() for s in tok.tokenize(text)]
        for batch in (5, 16, 64, 333):
            monkeypatch.setattr(textfile, "TEXT_BATCH", batch)
            got = [s for s, _ in tok.iter_sentences(src)]
            assert document_text(got) == text, batch  # the byte-order mark dropped
            miscs = [line.split("\t")[9] for s in got for line in s.lines if "\t" in line]
            befores = [f for m in miscs[1:] for f in m.split("|") if f.startswith("SpacesBe")]
            assert not any("\\n" in f for f in befores), (batch, befores)
            if text is plain:
                assert [s.to_text() for s in got] == ref, batch


def test_cli_text_to_conllu_keeps_the_text(syn, tmp_path):
    text = ("  Indented first line.\r\nA line  with\ttabs,\u00a0and more.\n\n\n"
            "A paragraph|with a bar\\.   \n   \nLast words")
    src = tmp_path / "in.txt"
    src.write_bytes(text.encode("utf-8"))
    out = tmp_path / "out.conllu"
    rc, _, err = run_cli(["parse", "--input", "text", str(src), "-m", syn.model, "-o",
                          str(out), "-q"])
    assert rc == 0, err
    parsed = read_conllu(out)
    assert all((s.heads[1:] >= 0).all() for s in parsed)
    assert document_text(parsed) == text


def test_cli_normalized_spaces(syn, tmp_path):
    text = "  One  sentence here.\n\n\tAnother\r\none.\n"
    src = tmp_path / "in.txt"
    src.write_bytes(text.encode("utf-8"))
    out = tmp_path / "out.conllu"
    rc, _, err = run_cli(["parse", "--input", "text", str(src), "-m", syn.model, "-o",
                          str(out), "-q", "--normalized-spaces"])
    assert rc == 0, err
    data = out.read_text("utf-8")
    assert "Spaces" not in data
    assert document_text(read_conllu(out)).split() == text.split()
    # CoNLL-U keeps its MISC: the option is refused there
    rc, _, err = run_cli(["parse", str(out), "-m", syn.model, "-o", str(tmp_path / "x.conllu"),
                          "--normalized-spaces"])
    assert rc == 2 and "--normalized-spaces: only with --input text" in err


def test_treebank_tokens_rebuild_their_text_lines(corpora_dir):
    """Without SpacesAfter, a sentence's tokens joined as SpaceAfter=No says are its
    ``# text`` (multiword tokens count once, by their own form)."""
    sents = read_conllu(corpora_dir / "pt_bosque" / "pt_bosque-ud-dev.conllu")
    assert any("-" in line.split("\t")[0] for s in sents for line in s.lines)
    for s in sents:
        assert document_text([s]).removesuffix(" ") == s.text, s.sent_id


def test_document_text_reads_multiword_tokens_and_empty_nodes_once():
    data = ("# text = ab c\n1-2\tab\t_\t_\t_\t_\t_\t_\t_\tSpacesBefore=\\t\n"
            "1\ta\t_\t_\t_\t_\t0\troot\t_\tSpaceAfter=No\n2\tb\t_\t_\t_\t_\t1\tdep\t_\t_\n"
            "2.1\tz\t_\t_\t_\t_\t_\t_\t1:dep\t_\n3\tc\t_\t_\t_\t_\t1\tdep\t_\t"
            "SpacesAfter=\\n\\n\n\n")
    f = io.BytesIO(data.encode())
    f.name = "x.conllu"
    assert document_text(read_conllu(f)) == "\tab c\n\n"
