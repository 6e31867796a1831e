"""Fuzzing the CoNLL-U reader/writer with hypothesis: read -> write is lossless.

Random VALID files: forms and lemmas with any Unicode (spaces, combining marks, emoji,
``\\x0b``/``\\u2028`` that Python would take for line breaks), ``# key = value`` and free
comments, multiword-token lines, empty nodes, FEATS/MISC values holding ``=`` and ``|``,
HEAD ``_``, optional byte-order mark, CRLF line ends, with or without the final blank line.
Writing what was read gives back the same bytes; replacing the parse changes columns 7 and 8
of the word lines and nothing else.
"""

from __future__ import annotations

import io
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from depparse.conllu import ConlluWarning, read_conllu, write_conllu

# any character but TAB, LF, CR and lone surrogates (which UTF-8 cannot encode)
CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\t\n\r")
TEXT = st.text(CHARS, min_size=1, max_size=10)
NOSPACE = st.text(st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc")),
                  min_size=1, max_size=6)
KEYVAL = st.builds(lambda k, v: f"{k}={v}", NOSPACE, st.text(CHARS, max_size=8))
FEATS = st.one_of(st.just("_"), st.lists(KEYVAL, min_size=1, max_size=4).map("|".join))
MISC = st.one_of(st.just("_"), st.just("SpaceAfter=No"),
                 st.lists(st.one_of(KEYVAL, TEXT), min_size=1, max_size=4).map("|".join))
COMMENT = st.one_of(
    st.builds(lambda k, v: f"# {k} = {v}", NOSPACE, st.text(CHARS, max_size=12)),
    st.builds(lambda t: f"# {t}", st.text(CHARS, max_size=15)),
    st.just("# newpar"),
)


@st.composite
def sentence(draw):
    n = draw(st.integers(1, 8))
    lines = draw(st.lists(COMMENT, max_size=3))
    # multiword tokens: non-overlapping spans of at least 2 words
    mwt = {}
    i = 1
    while i < n:
        if draw(st.booleans()) and draw(st.booleans()):
            j = draw(st.integers(i + 1, min(n, i + 3)))
            mwt[i] = j
            i = j + 1
        else:
            i += 1
    for m in range(1, n + 1):
        if m in mwt:
            lines.append(f"{m}-{mwt[m]}\t{draw(TEXT)}\t_\t_\t_\t_\t_\t_\t_\t{draw(MISC)}")
        head = draw(st.one_of(st.just("_"), st.integers(0, n).map(str)))
        rel = draw(st.one_of(st.just("_"), NOSPACE))
        deps = draw(st.one_of(st.just("_"), st.builds(lambda h, r: f"{h}:{r}",
                                                      st.integers(0, n), NOSPACE)))
        cols = [str(m), draw(TEXT), draw(TEXT), draw(st.one_of(st.just("_"), NOSPACE)),
                draw(st.one_of(st.just("_"), NOSPACE)), draw(FEATS), head, rel, deps,
                draw(MISC)]
        lines.append("\t".join(cols))
        # empty nodes m.1, m.2 ... after word m (not inside a multiword token's words)
        for k in range(1, draw(st.integers(0, 2)) + 1):
            lines.append(f"{m}.{k}\t{draw(TEXT)}\t_\t_\t_\t{draw(FEATS)}\t_\t_\t"
                         f"{m}:{draw(NOSPACE)}\t{draw(MISC)}")
    return lines


@st.composite
def conllu_file(draw):
    sents = draw(st.lists(sentence(), min_size=1, max_size=4))
    eol = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    text = (eol + eol).join(eol.join(s) for s in sents)
    ending = draw(st.sampled_from([eol + eol, eol, ""]))
    bom = draw(st.sampled_from(["", "", "\ufeff"]))
    return (bom + text + ending).encode("utf-8")


def _read(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConlluWarning)
        return read_conllu(io.BytesIO(data))


def _write(sents):
    buf = io.BytesIO()
    write_conllu(sents, buf)
    return buf.getvalue()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conllu_file())
def test_read_write_is_lossless(data):
    assert _write(_read(data)) == data


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conllu_file(), st.randoms(use_true_random=False))
def test_new_parse_changes_only_head_and_deprel(data, rnd):
    sents = _read(data)
    parsed = []
    for s in sents:
        heads = np.array([-1] + [rnd.randint(0, s.n) for _ in range(s.n)], dtype=np.int64)
        rels = [""] + [rnd.choice(["nsubj", "obj", "root", ""]) for _ in range(s.n)]
        parsed.append(s.with_parse(heads, rels))
    out = _write(parsed)
    a = data.decode("utf-8").split("\n")
    b = out.decode("utf-8").split("\n")
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        cx, cy = x.split("\t"), y.split("\t")
        if len(cx) == 10 and cx[0].lstrip("\ufeff").isdigit():
            assert cx[:6] == cy[:6] and cx[8:] == cy[8:]
        else:
            assert x == y
    # and the new parse reads back
    again = _read(out)
    for s, p in zip(again, parsed, strict=True):
        assert list(s.heads) == list(p.heads)
        assert [r or "" for r in s.rels] == [r or "" for r in p.rels]
