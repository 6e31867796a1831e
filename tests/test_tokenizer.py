"""Tests of the plain-text tokenizer and sentence segmenter (depparse.inference.tokenizer,
depparse.learn.tokenizer_training, depparse.features.chars).

A small generated treebank (paragraphs, ``SpaceAfter=No``, English-style multiword tokens)
is learned and tokenized back; plain-text edge cases either tokenize or raise a one-line
``FILE:LINE: message`` error; on en_ewt the tokenizer's output on the dev text is scored by
depparse.evaluate and, where installed, by the official CoNLL 2018 scorer.
"""

from __future__ import annotations

import io
import random
import re

import numpy as np
import pytest

from depparse.conllu import read_conllu, write_conllu
from depparse.errors import ConlluError, ModelError, TrainingDataError
from depparse.evaluate import evaluate
from depparse.features.chars import bridges, char_classes, char_table, prepare
from depparse.inference import tokenizer as tokenizer_module
from depparse.inference.tokenizer import Tokenizer, apply_case, read_text, split_paragraphs
from depparse.learn.tokenizer_training import (
    SPACE_SHARE,
    mwt_dictionary,
    sentence_tokens,
    space_share,
    train_tokenizer,
    treebank_paragraphs,
    treebank_text,
)
from depparse.model import Component

try:
    from udtools import udeval
except ImportError:  # pragma: no cover - only without the dev extras
    udeval = None

SUBJ = ["I", "You", "We", "They", "Mary", "The man"]
VERB = ["like", "see", "want", "know"]
OBJ = ["cats", "the dog", "Paris", "it", "U.S. trains", "e-mail"]


def _sentence(rng: random.Random) -> list[tuple[str, bool, list[str] | None]]:
    """Tokens ``(form, space_after, mwt words)`` of one generated sentence."""
    toks: list[tuple[str, bool, list[str] | None]] = []
    for w in rng.choice(SUBJ).split():
        toks.append((w, True, None))
    if rng.random() < 0.4:
        neg = rng.choice(["don't", "can't"])
        toks.append((neg, True, [neg[:-3], "n't"]))
    for w in rng.choice(VERB).split():
        toks.append((w, True, None))
    for w in rng.choice(OBJ).split():
        toks.append((w, True, None))
    if rng.random() < 0.3:
        toks[-1] = (toks[-1][0], False, None)
        toks += [(",", True, None), ("really", True, None)]
    toks[-1] = (toks[-1][0], False, toks[-1][2])
    toks.append((rng.choice([".", "!", "?"]), True, None))
    return toks


def _treebank(n: int, seed: int) -> str:
    """CoNLL-U of ``n`` generated sentences in paragraphs of 1-3 sentences."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        toks = _sentence(rng)
        if k == 0:
            out.append("# newdoc id = d1")
        if k == 0 or rng.random() < 0.4:
            out.append("# newpar")
        text = "".join(f + (" " if sp else "") for f, sp, _ in toks).strip()
        out += [f"# sent_id = {k + 1}", f"# text = {text}"]
        m = 0
        for f, sp, words in toks:
            misc = "_" if sp else "SpaceAfter=No"
            if words:
                out.append(f"{m + 1}-{m + len(words)}\t{f}\t_\t_\t_\t_\t_\t_\t_\t{misc}")
                for w in words:
                    m += 1
                    out.append(f"{m}\t{w}\t_\tX\t_\t_\t{0 if m == 1 else 1}\tdep\t_\t_")
            else:
                m += 1
                out.append(f"{m}\t{f}\t_\tX\t_\t_\t{0 if m == 1 else 1}\tdep\t_\t{misc}")
        out.append("")
    return "\n".join(out) + "\n"


def _read(text: str, name: str = "gen.conllu"):
    f = io.BytesIO(text.encode("utf-8"))
    f.name = name
    return read_conllu(f)


@pytest.fixture(scope="module")
def generated():
    train = _read(_treebank(400, seed=1))
    dev = _read(_treebank(60, seed=2))
    comp = train_tokenizer(train, dev, bits=16, epochs=4)
    return train, dev, comp, Tokenizer.from_component(comp)


# -- the training data -------------------------------------------------------------------


def test_treebank_paragraphs_labels():
    sents = _read(_treebank(5, seed=3))
    paras = treebank_paragraphs(sents)
    # every sentence's text, paragraphs joined by blank lines
    text = treebank_text(sents)
    assert text == "\n\n".join(p for p, _ in paras) + "\n"
    assert text.count("\n\n") == sum("newpar" in s.metadata for s in sents) - 1
    for p, lab in paras:
        assert len(p) == len(lab)
        assert all((lab[i] == -1) == p[i].isspace() for i in range(len(p)))
        assert lab[-1] == 2
    # the labels spell the tokens: cutting the text after every token end gives the forms
    forms = []
    for p, lab in paras:
        start = 0
        for i in np.flatnonzero(lab >= 1):
            forms.append(p[start:i + 1].strip())
            start = i + 1
    assert forms == [f for s in sents for f, _, _ in sentence_tokens(s)]
    n_sent = sum(int((lab == 2).sum()) for _, lab in paras)
    assert n_sent == len(sents)


def test_paragraph_marks_as_in_conllu_to_text():
    # UD's conllu_to_text.pl starts a paragraph at "# newpar" / "# newdoc" followed by
    # whitespace or the line end, in any case: "# newpar id = ..." counts, "# newdoc_id" not
    base = _treebank(4, seed=6).replace("# newpar\n", "").replace("# newdoc id = d1\n", "")
    blocks = base.strip("\n").split("\n\n")
    for marks, want in ((["# newpar id = p2", "# NEWDOC id = d3", "# newpar"], 4),
                        (["# newdoc_id = d2", "# newparagraph", "# newpar"], 2)):
        text = "\n\n".join(b if k == 0 else marks[k - 1] + "\n" + b
                           for k, b in enumerate(blocks)) + "\n\n"
        paras = treebank_paragraphs(_read(text))
        assert len(paras) == want, marks
        assert sum(int((lab == 2).sum()) for _, lab in paras) == 4


def test_mwt_dictionary_majority():
    sents = _read(_treebank(50, seed=4))
    d = mwt_dictionary(sents)
    assert d == {"don't": ["do", "n't"], "can't": ["ca", "n't"]} or d == {"don't": ["do", "n't"]}
    assert mwt_dictionary(sents, min_share=1.0) == {}


def test_text_that_does_not_spell_its_tokens_is_rebuilt():
    good = _read(_treebank(2, seed=5))
    bad = _read(_treebank(2, seed=5).replace("# text = ", "# text = Z", 1))
    assert bad[0].text.startswith("Z")
    assert treebank_text(bad) == treebank_text(good)  # from the tokens and their SpaceAfter


def test_too_little_training_text():
    with pytest.raises(TrainingDataError, match="no sentences"):
        train_tokenizer([], bits=12, epochs=1)
    with pytest.raises(TrainingDataError, match=r"too little text .*\(2 parts"):
        # one paragraph of 41 sentences: 2 parts, and 10 are needed to hold one out
        one_par = _treebank(41, seed=5).replace("# newpar\n", "")
        train_tokenizer(_read(one_par), bits=12, epochs=1)


# -- tokenizing --------------------------------------------------------------------------


def test_generated_text_round_trip(generated):
    train, dev, comp, tok = generated
    for gold in (train, dev):
        system = tok.tokenize(treebank_text(gold), source="sys")
        sc = evaluate(gold, system)
        # a regular language: the learned tokenizer segments its texts exactly
        assert (sc.tokens, sc.words_f1, sc.sentences_f1) == (100.0, 100.0, 100.0)


def test_conllu_output(generated):
    tok = generated[3]
    text = "They don't see it, really!  I know.\n\nWe can't want Paris?"
    conllu = tok.to_conllu(text)
    sents = _read(conllu)
    assert [s.metadata.get("sent_id") for s in sents] == ["1", "2", "3"]
    assert "newdoc" in sents[0].metadata and "newpar" in sents[0].metadata
    assert "newpar" not in sents[1].metadata and "newpar" in sents[2].metadata
    assert [s.text for s in sents] == ["They don't see it, really!", "I know.",
                                       "We can't want Paris?"]
    assert list(sents[0].forms[1:]) == ["They", "do", "n't", "see", "it", ",", "really", "!"]
    assert list(sents[2].forms[1:]) == ["We", "ca", "n't", "want", "Paris", "?"]
    assert "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_" in conllu
    assert "5\tit\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No" in conllu
    for s in sents:
        assert (s.heads[1:] == -1).all() and set(s.upos[1:]) == {"_"}
        # "# text" is the tokens joined by their SpaceAfter
        toks = sentence_tokens(s)
        assert s.text == "".join(f + (" " if sp else "") for f, sp, _ in toks).strip()
    assert tok.tokenize(text)[0].source == "<text>"
    # a sentence glued to the next (no space): SpaceAfter=No on its last token
    glued = _read(tok.to_conllu("I know.You know."))
    if len(glued) == 2:
        assert "SpaceAfter=No" in glued[0].lines[-1]


def test_urls_are_never_cut(generated, monkeypatch):
    tok = generated[3]
    urls = ["http://ex.com/cats,dogs!/x?y.html", "www.u-s.org/it,really"]
    text = f"I see {urls[0]}, or cats. They like {urls[1]}!"
    forms = [f for s in tok.tokenize(text) for f in s.forms[1:]]
    assert urls[0] in forms and urls[1] in forms
    assert forms[forms.index(urls[1]) + 1] == "!"  # a final "!" is no part of the URL
    # without the rule this tokenizer (its training text has no URL) cuts both at a comma
    monkeypatch.setattr(tokenizer_module, "URL", re.compile("(?!)"))
    forms = [f for s in tok.tokenize(text) for f in s.forms[1:]]
    assert urls[0] not in forms and urls[1] not in forms


def _unmarked(n: int, seed: int, length: int = 4) -> str:
    """CoNLL-U of ``n`` sentences of ``length`` random words, no punctuation, no capitals,
    paragraphs of five sentences: only the count of words tells where a sentence ends."""
    rng = random.Random(seed)
    words = ["cats", "dogs", "see", "like", "we", "they", "paris", "trains", "know", "it"]
    out = []
    for k in range(n):
        if k % 5 == 0:
            out.append("# newpar")
        toks = [rng.choice(words) for _ in range(length)]
        out += [f"# sent_id = {k + 1}", "# text = " + " ".join(toks)]
        out += [f"{m + 1}\t{w}\t_\tX\t_\t_\t{0 if m == 0 else 1}\tdep\t_\t_"
                for m, w in enumerate(toks)]
        out.append("")
    return "\n".join(out) + "\n"


def test_second_stage_counts_words():
    # the character classifier sees a few words around a gap and cannot count them; the
    # second stage knows the words since the last sentence end (measured: Sentences F1 100
    # with it, 0.0 without; held-out sentence-end F1 100 against 36.2)
    train, dev = _read(_unmarked(600, seed=1)), _read(_unmarked(100, seed=2))
    scores = {}
    for stage in (True, False):
        comp = train_tokenizer(train, dev, bits=16, epochs=4, gap_stage=stage, gap_bits=16)
        tok = Tokenizer.from_component(comp)
        scores[stage] = evaluate(dev, tok.tokenize(treebank_text(dev))).sentences_f1
        assert (comp.meta["gap_threshold"] is None) != stage
        held = comp.meta["held_out_f1"]
        if stage:
            assert held["gaps"] > 95 and held["characters"] < 50
        else:
            assert held == {"characters": None, "gaps": None}
    assert scores[True] > 95 and scores[False] < 50


def test_apply_case():
    assert apply_case("Don't", ["do", "n't"]) == ["Do", "n't"]
    assert apply_case("DON'T", ["do", "n't"]) == ["DO", "N'T"]
    assert apply_case("Do", ["de", "o"]) == ["De", "o"]
    assert apply_case("DO", ["de", "o"]) == ["DE", "O"]
    assert apply_case("do", ["de", "o"]) == ["de", "o"]


def test_from_component_checks_version(generated):
    comp = generated[2]
    with pytest.raises(ModelError, match="version 99"):
        Tokenizer.from_component(Component({**comp.meta, "version": 99}, comp.arrays))
    with pytest.raises(ModelError, match="not a depparse tokenizer"):
        Tokenizer.from_component(Component({"format": "x"}, comp.arrays))
    with pytest.raises(ModelError, match="version 1 is not supported"):
        Tokenizer.from_component(Component({**comp.meta, "version": 1}, comp.arrays))
    with pytest.raises(ModelError, match="no weights"):
        Tokenizer.from_component(Component(comp.meta, {}))
    assert comp.meta["gap_threshold"] == 0.0 and comp.arrays["gap_weights"].dtype == np.float16
    with pytest.raises(ModelError, match="no gap weights"):
        Tokenizer.from_component(Component(comp.meta, {"weights": comp.arrays["weights"]}))
    # the arrays survive a compressed .npz (the model file) as float16
    buf = io.BytesIO()
    np.savez_compressed(buf, **comp.arrays)
    buf.seek(0)
    with np.load(buf) as z:
        again = Tokenizer.from_component(Component(comp.meta, {k: z[k] for k in z.files}))
    assert again.to_conllu("I know it.") == generated[3].to_conllu("I know it.")


# -- words that hold spaces (Vietnamese) -------------------------------------------------

#: Syllables that occur only inside the two-syllable words, and syllables that are words alone.
COMPOUNDS = ["công ty", "chủ tịch", "gia đình", "nhân dân", "quan trọng"]
SINGLES = ["tôi", "nhớ", "lời", "anh", "xã", "có", "tốt", "nhưng", "không", "hiểu"]


def _spaced(n: int, seed: int) -> str:
    """CoNLL-U of ``n`` sentences of single-syllable words and two-syllable words written with
    a space inside (as vi_vtb writes them), a period at the end, paragraphs of 1-3."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        if k == 0 or rng.random() < 0.4:
            out.append("# newpar")
        toks = [rng.choice(COMPOUNDS if rng.random() < 0.35 else SINGLES)
                for _ in range(rng.randint(3, 8))]
        toks[0] = toks[0][0].upper() + toks[0][1:]
        out += [f"# sent_id = {k + 1}", "# text = " + " ".join(toks) + "."]
        out += [f"{m + 1}\t{w}\t_\tX\t_\t_\t{0 if m == 0 else 1}\tdep\t_\t"
                f"{'SpaceAfter=No' if m == len(toks) - 1 else '_'}" for m, w in enumerate(toks)]
        out += [f"{len(toks) + 1}\t.\t_\tPUNCT\t_\t_\t1\tpunct\t_\t_", ""]
    return "\n".join(out) + "\n"


def test_bridges_are_single_spaces_between_characters():
    codes, low, _ = prepare(["ab c  d\te f", "g h"])
    text = "ab c  d\te f\x00g h\x00"
    assert [text[i] + text[i + 2] for i in np.flatnonzero(bridges(codes, low))] == \
        ["bc", "ef", "gh"]  # not across two spaces, a tab or a paragraph's end


def test_words_with_spaces_are_learned_where_the_treebank_has_them(tmp_path):
    train, dev = _read(_spaced(400, seed=1)), _read(_spaced(60, seed=2))
    share = space_share(train)
    assert share >= SPACE_SHARE
    comp = train_tokenizer(train, dev, bits=16, epochs=4)
    assert comp.meta["version"] == 3 and comp.meta["spaces_in_tokens"] is True
    assert comp.meta["space_share"] == round(share, 4)
    tok = Tokenizer.from_component(comp)
    assert tok.spaces
    system = tok.tokenize(treebank_text(dev), source="sys")
    assert (evaluate(dev, system).words_f1, evaluate(dev, system).sentences_f1) == (100, 100)
    (s,) = tok.tokenize("Tôi nhớ chủ tịch xã.")
    assert list(s.forms[1:]) == ["Tôi", "nhớ", "chủ tịch", "xã", "."]
    # written and read back as CoNLL-U, the form keeps its space; the text is kept exactly
    path = tmp_path / "out.conllu"
    write_conllu(system, path)
    again = read_conllu(path)
    assert [list(x.forms) for x in again] == [list(x.forms) for x in system]
    # only one space between two characters can be inside a word: a line break, a tab or two
    # spaces end the token
    for gap in ("\n", "\t", "  "):
        (s,) = tok.tokenize(f"Tôi nhớ chủ{gap}tịch xã.")
        assert list(s.forms[1:]) == ["Tôi", "nhớ", "chủ", "tịch", "xã", "."], repr(gap)
    # the same training data without the rule: every space ends a token (measured: Words F1
    # 57.59)
    plain = train_tokenizer(train, dev, bits=16, epochs=4, spaces=False)
    assert plain.meta["version"] == 2 and "spaces_in_tokens" not in plain.meta
    assert evaluate(dev, Tokenizer.from_component(plain).tokenize(
        treebank_text(dev))).words_f1 < 90
    if udeval is None:
        return
    # words with spaces against the official scorer
    gold_path, spath = tmp_path / "gold.conllu", tmp_path / "sys.conllu"
    gold_path.write_text(_spaced(60, seed=2), encoding="utf-8")
    write_conllu([x.with_parse(np.arange(-1, x.n)) for x in system], spath)
    ours = evaluate(read_conllu(gold_path), read_conllu(spath))
    official = udeval.evaluate(udeval.load_conllu_file(str(gold_path)),
                               udeval.load_conllu_file(str(spath)))
    for name in ("Tokens", "Words", "Sentences", "UAS"):
        o, m = official[name], ours.metric(name)
        assert (m.gold, m.system, m.correct) == (o.gold_total, o.system_total, o.correct), name


def test_a_tokenizer_with_spaces_is_version_3_and_its_flag_is_checked(generated):
    comp = generated[2]
    assert comp.meta["version"] == 2 and "spaces_in_tokens" not in comp.meta
    assert not generated[3].spaces
    with pytest.raises(ModelError, match="version 3 goes with"):
        Tokenizer.from_component(Component({**comp.meta, "version": 3}, comp.arrays))
    with pytest.raises(ModelError, match="version 3 goes with"):
        Tokenizer.from_component(Component({**comp.meta, "spaces_in_tokens": True},
                                           comp.arrays))
    assert Tokenizer.from_component(Component({**comp.meta, "version": 3,
                                               "spaces_in_tokens": True}, comp.arrays)).spaces


# -- multiword tokens that their words spell (Coptic's bound groups) ---------------------

CLITICS = ["a", "n", "hn", "e", "mp"]
STEMS = ["sotm", "rwme", "noute", "shaje", "ran", "hwb", "polis", "kosmos"]


def _bound(n: int, seed: int, pairs) -> str:
    """CoNLL-U of ``n`` sentences of bound groups: a stem alone, or clitics written together
    with a stem (``hnrwme`` = ``hn`` + ``rwme``) as a multiword token, the (clitic, stem)
    pairs drawn from ``pairs``."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        out += ["# newpar"] if k % 3 == 0 else []
        toks = []
        for _ in range(rng.randint(2, 6)):
            if rng.random() < 0.3:
                toks.append([rng.choice(STEMS)])
            else:
                c, st = rng.choice(pairs)
                toks.append([c, st] if rng.random() < 0.7 else ["a", c, st])
        text = " ".join("".join(t) for t in toks) + "."
        out += [f"# sent_id = {k + 1}", f"# text = {text}"]
        m = 0
        for j, t in enumerate(toks):
            misc = "SpaceAfter=No" if j == len(toks) - 1 else "_"
            if len(t) > 1:
                out.append(f"{m + 1}-{m + len(t)}\t{''.join(t)}\t_\t_\t_\t_\t_\t_\t_\t{misc}")
            for w in t:
                m += 1
                out.append(f"{m}\t{w}\t_\tX\t_\t_\t{0 if m == 1 else 1}\tdep\t_\t"
                           f"{misc if len(t) == 1 else '_'}")
        out += [f"{m + 1}\t.\t_\tPUNCT\t_\t_\t1\tpunct\t_\t_", ""]
    return "\n".join(out) + "\n"


def test_the_word_splitter_splits_bound_groups_the_dictionary_never_saw():
    pairs = [(c, st) for c in CLITICS for st in STEMS]
    rng = random.Random(0)
    rng.shuffle(pairs)
    seen, unseen = pairs[:28], pairs[28:]  # dev: only clitic-stem pairs never in training
    train, dev = _read(_bound(500, 1, seen)), _read(_bound(60, 2, unseen))
    comp = train_tokenizer(train, dev, bits=16, epochs=4)
    info = comp.meta["word_splitter"]
    assert comp.meta["version"] == 3 and info["kept"] and comp.arrays["split_weights"].dtype \
        == np.float16
    assert info["right"] > info["right_whole"] and info["on"] == "dev"
    tok = Tokenizer.from_component(comp)
    # measured: Words F1 100.00 with the splitter, 31.53 without (bound groups left whole)
    assert evaluate(dev, tok.tokenize(treebank_text(dev))).words_f1 > 98
    plain = train_tokenizer(train, dev, bits=16, epochs=4, splitter=False)
    assert "split_weights" not in plain.arrays and plain.meta["version"] == 2
    assert evaluate(dev, Tokenizer.from_component(plain).tokenize(
        treebank_text(dev))).words_f1 < 60
    # the words keep the text's case, and the dictionary still decides the forms it holds
    c, st = unseen[0]
    (s,) = tok.tokenize(f"{(c + st).upper()} {st}.")
    assert list(s.forms[1:]) == [c.upper(), st.upper(), st, "."]
    assert "1-2\t" + (c + st).upper() in tok.to_conllu(f"{(c + st).upper()} {st}.")


def test_split_features_and_points():
    from depparse.features.word_splits import (
        N_SPLIT_FEATURES,
        split_features,
        split_points,
        token_codes,
    )

    codes, starts = token_codes(["hnrwme", "a", "ÉB"])
    assert starts.tolist() == [0, 6, 7, 9] and codes[7] == ord("é")
    buf = np.empty(N_SPLIT_FEATURES, dtype=np.int64)
    assert split_features(codes, 0, 6, 1, buf, (1 << 10) - 1) == N_SPLIT_FEATURES
    assert ((buf >= 0) & (buf < 1 << 10)).all()
    # a point whose features all weigh 1 splits; a token's last character never does
    w = np.zeros(1 << 10, dtype=np.float32)
    w[buf] = 1.0
    pts = split_points(codes, starts, w, 10)
    assert pts[1] and not pts[5] and not pts[6] and not pts[8]


def test_a_word_splitter_that_does_not_help_is_not_kept(generated):
    comp = generated[2]
    # every multiword token of the generated English (don't, can't) is in the dictionary
    assert comp.meta["word_splitter"]["kept"] is False and "split_weights" not in comp.arrays
    with pytest.raises(ModelError, match="version 3 goes with"):
        Tokenizer.from_component(Component(comp.meta, {
            **comp.arrays, "split_weights": np.zeros(1 << 8, dtype=np.float16)}))


# -- plain-text edge cases ------------------------------------------------------------------


def test_empty_and_blank_text(generated):
    tok = generated[3]
    assert tok.tokenize("") == []
    assert tok.tokenize(" \n\t\n\n  \r\n") == []
    assert tok.to_conllu("") == ""


def test_one_word_and_no_final_newline(generated):
    tok = generated[3]
    (s,) = tok.tokenize("Paris")
    assert s.n == 1 and s.forms[1] == "Paris" and s.text == "Paris"
    assert [x.text for x in tok.tokenize("I know it.\nI see cats.")] == \
        [x.text for x in tok.tokenize("I know it.\nI see cats.\n")]


def test_crlf_bom_tabs_controls(generated, tmp_path):
    tok = generated[3]
    plain = "I know it. We see cats.\n\nThey like Paris."
    want = [(s.text, list(s.forms)) for s in tok.tokenize(plain)]
    variants = [
        plain.replace("\n", "\r\n"),                 # CRLF
        plain.replace("\n", "\r"),                   # old Mac line breaks
        "\ufeff" + plain,                            # a byte-order mark
        plain.replace(" ", "\t"),                    # tabs
        plain.replace(" ", " \x07\x1b "),            # control characters are whitespace
        plain.replace("I know", "I\n  know"),        # a line break inside a paragraph
    ]
    for v in variants:
        p = tmp_path / "in.txt"
        p.write_bytes(v.encode("utf-8"))
        got = [(s.text, list(s.forms)) for s in tok.tokenize_file(p)]
        assert got == want, repr(v)
    assert split_paragraphs("a\n \t\nb\n\n\nc") == ["a", "b", "c"]


def test_bad_bytes_name_file_and_line(generated, tmp_path):
    tok = generated[3]
    p = tmp_path / "bad.txt"
    p.write_bytes(b"I know it.\nWe see \xff cats.\n")
    with pytest.raises(ConlluError, match=r"bad\.txt:2: invalid UTF-8 byte\(s\) b'\\xff'") as e:
        tok.tokenize_file(p)
    assert "\n" not in str(e.value)
    p.write_bytes(b"I know.\n\nA\x00B\n")
    with pytest.raises(ConlluError, match=r"bad\.txt:3: NUL character"):
        tok.tokenize_file(p)
    with pytest.raises(ConlluError, match=r"<stream>:1: invalid UTF-8"):
        read_text(io.BytesIO(b"\xc3"))
    assert read_text(io.StringIO("\ufeffabc")) == ("abc", "<stream>")


def test_very_long_paragraph(generated):
    tok = generated[3]
    words = ["cats"] * 1200  # no sentence end anywhere
    sents = tok.tokenize(" ".join(words))
    assert sum(s.n for s in sents) == 1200
    assert max(s.n for s in sents) <= tok.max_words and len(sents) >= 1200 // tok.max_words
    long_word = "x" * 5000
    (s,) = tok.tokenize(long_word)
    assert s.forms[1] == long_word


def test_char_table_chunks():
    codes, low, starts = prepare(["Ab c.", "d"])
    assert starts.tolist() == [0, 6]
    assert low.tolist() == [97, 98, 32, 99, 46, -1, 100, -1]
    tab = char_table(low, char_classes(codes))
    # chunk "Ab": its next chunk starts at 3 ("c."), none before; "c." has "Ab" before it
    assert tab[0, 6] == 3 and tab[0, 7] == -1 and tab[3, 7] == 0 and tab[4, 6] == -1
    assert tab[0, 3] == tab[1, 3] != tab[3, 3]  # one hash for the whole chunk
    assert tab[6, 6] == -1 and tab[6, 7] == -1  # paragraphs do not see each other


# -- real text -----------------------------------------------------------------------------


@pytest.mark.corpora
def test_en_ewt_dev_raw_text(corpora_dir, tmp_path):
    train_path = corpora_dir / "en_ewt" / "en_ewt-ud-train.conllu"
    dev_path = corpora_dir / "en_ewt" / "en_ewt-ud-dev.conllu"
    if not train_path.is_file() or not dev_path.is_file():
        pytest.skip("en_ewt not found")
    train = read_conllu(train_path)[:4000]  # a third of train, for speed
    dev = read_conllu(dev_path)
    tok = Tokenizer.from_component(train_tokenizer(train, bits=16, epochs=3))
    system = tok.tokenize(treebank_text(dev), source="system")
    sc = evaluate(dev, system)
    # measured with these settings: Tokens 98.78, Words 98.03, Sentences 87.30 (85.22 without
    # the second stage; the full tokenizer: benchmarks/experiments/README.md)
    assert sc.tokens > 98.3 and sc.words_f1 > 97.5 and sc.sentences_f1 > 83
    mwt = sum(1 for s in system for line in s.lines if line.split("\t")[0].count("-") == 1)
    assert mwt > 200  # en_ewt dev has 359 multiword tokens
    if udeval is None:
        return
    # (c) of the evaluation checks: this retokenized output, with chain trees, against the
    # official scorer, every metric
    chained = [s.with_parse(np.arange(-1, s.n)) for s in system]
    spath = tmp_path / "system.conllu"
    write_conllu(chained, spath)
    ours = evaluate(dev, read_conllu(spath))
    official = udeval.evaluate(udeval.load_conllu_file(str(dev_path)),
                               udeval.load_conllu_file(str(spath)))
    for name in ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas",
                 "UAS", "LAS"):
        o, m = official[name], ours.metric(name)
        assert (m.gold, m.system, m.correct) == (o.gold_total, o.system_total, o.correct), name
        assert abs(m.f1 - 100 * o.f1) <= 1e-9
    assert ours.uas_correct > 0
