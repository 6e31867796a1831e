"""Tests of depparse.evaluate: CoNLL 2018 UAS/LAS and tokenization checks.

The official CoNLL 2018 scorer (``conll18_ud_eval.py``) is installable from PyPI as the
``udeval`` module of the UD ``udtools`` package (dev dependency); where it is installed, the
hand-computed example and the corpus perturbations are also checked against it, count for
count and bit for bit.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from depparse.conllu import read_conllu, write_conllu
from depparse.evaluate import (
    Metric,
    Scores,
    certificate_rate,
    check_tokenization,
    evaluate,
    evaluate_files,
)

try:  # the official scorer, as shipped by the UD tools package
    from udtools import udeval
except ImportError:  # pragma: no cover - exercised only without the dev extras
    udeval = None

needs_official = pytest.mark.skipif(
    udeval is None, reason="udtools (official CoNLL 2018 scorer) not installed: pip install udtools"
)


def _conllu(rows: str) -> str:
    """Turn a readable block (columns separated by runs of spaces) into CoNLL-U text."""
    out = []
    for line in rows.strip("\n").splitlines():
        line = line.strip()
        out.append(line if line.startswith("#") or not line else "\t".join(line.split()))
    return "\n".join(out) + "\n\n"


# Sentence 1 has a multiword token (2-3 "don't"), sentence 2 an empty node (5.1).
GOLD = _conllu("""
# sent_id = s1
# text = I don't like his cat , really .
1    I       I       PRON   _  _  4  nsubj      _       _
2-3  don't   _       _      _  _  _  _          _       _
2    do      do      AUX    _  _  4  aux        _       _
3    n't     not     PART   _  _  4  advmod     _       _
4    like    like    VERB   _  _  0  root       _       _
5    his     his     PRON   _  _  6  nmod:poss  _       _
6    cat     cat     NOUN   _  _  4  obj        _       _
7    ,       ,       PUNCT  _  _  8  punct      _       _
8    really  really  ADV    _  _  4  advmod     _       _
9    .       .       PUNCT  _  _  4  punct      _       _
""") + _conllu("""
# sent_id = s2
# text = Mary likes tea and John coffee .
1    Mary    Mary    PROPN  _  _  2  nsubj      _       _
2    likes   like    VERB   _  _  0  root       _       _
3    tea     tea     NOUN   _  _  2  obj        _       _
4    and     and     CCONJ  _  _  5  cc         _       _
5    John    John    PROPN  _  _  2  conj       _       _
5.1  likes   like    VERB   _  _  _  _          2:conj  _
6    coffee  coffee  NOUN   _  _  5  orphan     _       _
7    .       .       PUNCT  _  _  2  punct      _       _
""")

# Hand computation (H = head correct, L = head and universal DEPREL correct):
#   s1 w1 I       4 nsubj                 H L
#      w2 do      4 aux                   H L
#      w3 n't     2 advmod    (gold 4)    - -
#      w4 like    0 root                  H L
#      w5 his     6 nmod      (nmod:poss) H L   universal parts equal
#      w6 cat     4 nmod      (gold obj)  H -
#      w7 ,       4 punct     (gold 8)    - -   PUNCT
#      w8 really  4 advmod:emph           H L   universal parts equal
#      w9 .       4 punct                 H L   PUNCT
#   s2 w1 Mary    2 nsubj:pass            H L
#      w2 likes   0 root                  H L
#      w3 tea     2 obj                   H L
#      w4 and     5 cc:preconj            H L
#      w5 John    2 conj                  H L
#      w6 coffee  2 obj       (gold 5)    - -
#      w7 .       2 dep       (punct)     H -   PUNCT
# words 16 (the MWT line and the empty node are not words), PUNCT 3, non-punct 13
# UAS 13/16 = 81.25   LAS 11/16 = 68.75
# non-punct: H fails at s1w3, s2w6 -> 11/13; L fails also at s1w6 -> 10/13
SYSTEM = _conllu("""
# sent_id = s1
# text = I don't like his cat , really .
1    I       I       PRON   _  _  4  nsubj        _       _
2-3  don't   _       _      _  _  _  _            _       _
2    do      do      AUX    _  _  4  aux          _       _
3    n't     not     PART   _  _  2  advmod       _       _
4    like    like    VERB   _  _  0  root         _       _
5    his     his     PRON   _  _  6  nmod         _       _
6    cat     cat     NOUN   _  _  4  nmod         _       _
7    ,       ,       PUNCT  _  _  4  punct        _       _
8    really  really  ADV    _  _  4  advmod:emph  _       _
9    .       .       PUNCT  _  _  4  punct        _       _
""") + _conllu("""
# sent_id = s2
# text = Mary likes tea and John coffee .
1    Mary    Mary    PROPN  _  _  2  nsubj:pass   _       _
2    likes   like    VERB   _  _  0  root         _       _
3    tea     tea     NOUN   _  _  2  obj          _       _
4    and     and     CCONJ  _  _  5  cc:preconj   _       _
5    John    John    PROPN  _  _  2  conj         _       _
5.1  likes   like    VERB   _  _  _  _            2:conj  _
6    coffee  coffee  NOUN   _  _  2  obj          _       _
7    .       .       PUNCT  _  _  2  dep          _       _
""")


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    return _write(tmp_path, "gold.conllu", GOLD), _write(tmp_path, "system.conllu", SYSTEM)


def _official(gold: Path, system: Path) -> dict:
    return udeval.evaluate(udeval.load_conllu_file(str(gold)), udeval.load_conllu_file(str(system)))


def test_hand_computed_example(files):
    scores = evaluate_files(*files)
    assert replace(scores, counts={}, tokens=None, sentences_f1=None, words_f1=None, upos=None,
                   xpos=None, ufeats=None, alltags=None, lemmas=None, same_tokenization=None,
                   nopunct_system=None) == Scores(
        sentences=2,
        words=16,
        uas=81.25,
        las=68.75,
        uas_nopunct=100 * (11 / 13),  # 84.62, computed as the official 100 * f1
        las_nopunct=100 * (10 / 13),  # 76.92
        punct_words=3,
        uas_correct=13,
        las_correct=11,
        uas_nopunct_correct=11,
        las_nopunct_correct=10,
    )
    # same tokenization and tags: segmentation and tagging metrics are all 100
    assert scores.same_tokenization is True
    assert (scores.tokens, scores.sentences_f1, scores.words_f1) == (100.0,) * 3
    assert (scores.upos, scores.xpos, scores.ufeats, scores.alltags, scores.lemmas) == (100.0,) * 5
    assert scores.metric("Tokens") == Metric(gold=15, system=15, correct=15, aligned=15)
    assert scores.nopunct_words == 13
    assert scores.as_dict()["las_correct"] == 11
    json.dumps(scores.as_dict())
    text = scores.format()
    assert "81.25" in text and "(13/16)" in text and "(10/13)" in text
    assert "UPOS" in text and "Tokens" not in text


def test_identical_files_score_100(files):
    gold = read_conllu(files[0])
    scores = evaluate(gold, read_conllu(files[0]))
    assert (scores.uas, scores.las, scores.uas_nopunct, scores.las_nopunct) == (100.0,) * 4


@needs_official
def test_hand_computed_example_matches_official(files):
    ours = evaluate_files(*files)
    official = _official(*files)
    assert official["Words"].gold_total == official["Words"].system_total == ours.words
    assert official["UAS"].correct == ours.uas_correct == 13
    assert official["LAS"].correct == ours.las_correct == 11
    assert 100 * official["UAS"].f1 == ours.uas
    assert 100 * official["LAS"].f1 == ours.las


def test_unlabeled_system_heads_count_as_wrong(tmp_path):
    system = GOLD.replace("coffee\tNOUN\t_\t_\t5", "coffee\tNOUN\t_\t_\t_")
    scores = evaluate_files(
        _write(tmp_path, "g.conllu", GOLD), _write(tmp_path, "s.conllu", system)
    )
    assert scores.uas_correct == 15 and scores.las_correct == 15


def test_gold_without_heads_is_rejected(tmp_path):
    gold = GOLD.replace("coffee\tNOUN\t_\t_\t5", "coffee\tNOUN\t_\t_\t_")
    gpath = _write(tmp_path, "g.conllu", gold)
    with pytest.raises(ValueError, match=r"no HEAD for word 6 .*g\.conllu:\d+"):
        evaluate_files(gpath, _write(tmp_path, "s.conllu", SYSTEM))


def test_different_form_is_rejected(tmp_path):
    system = SYSTEM.replace("cat\tcat", "dog\tcat")
    gpath = _write(tmp_path, "gold.conllu", GOLD)
    spath = _write(tmp_path, "sys.conllu", system)
    with pytest.raises(ValueError) as err:
        evaluate_files(gpath, spath)
    msg = str(err.value)
    assert str(gpath) in msg and str(spath) in msg
    assert "sentence 1, word 6" in msg and "'cat'" in msg and "'dog'" in msg
    # the word's line in both files (line 9: 2 comments, word lines 1, 2-3, 2, 3, 4, 5, 6)
    assert f"{gpath}:9" in msg and f"{spath}:9" in msg


def test_different_word_count_is_rejected(tmp_path):
    # a word dropped from the system file: its text lacks "coffee"
    sents = SYSTEM.split("\n\n")
    s2 = "\n".join(line for line in sents[1].splitlines() if not line.startswith("6\t"))
    s2 = s2.replace("7\t.\t.", "6\t.\t.")
    system = sents[0] + "\n\n" + s2 + "\n\n"
    gpath = _write(tmp_path, "gold.conllu", GOLD)
    spath = _write(tmp_path, "sys.conllu", system)
    with pytest.raises(ValueError, match=r"texts of gold file .* and system file .* differ") as e:
        evaluate_files(gpath, spath)
    msg = str(e.value)
    # sentence 1 takes lines 1-12 and 24 characters (I don't like his cat , really .), line 13
    # is blank; in sentence 2 (from line 14) "coffee" is gold line 22 after 19 more characters
    # (Mary likes tea and John; the empty node is no token), and the system has "." there
    assert f"gold {gpath}:22 (sentence 2) has 'coffee.'" in msg
    assert f"system {spath}:22 (sentence 2) has '.'" in msg
    assert "at character 44 " in msg


def test_different_sentence_count_is_rejected(tmp_path):
    gpath = _write(tmp_path, "gold.conllu", GOLD)
    spath = _write(tmp_path, "sys.conllu", SYSTEM.split("\n\n")[0] + "\n\n")
    # a missing sentence is named as such (not as a difference of tokenization)
    with pytest.raises(ValueError, match=r"the system file lacks gold sentence 2 \(.*gold\."
                       r"conllu:\d+, sent_id s2\)"):
        evaluate_files(gpath, spath)
    # two sentences kept, the gold file's order broken: the first differing text is named
    two = SYSTEM.split("\n\n")
    spath2 = _write(tmp_path, "sys2.conllu", two[1] + "\n\n" + two[0] + "\n\n")
    with pytest.raises(ValueError, match=r"texts of gold file .* differ"):
        evaluate_files(gpath, spath2)
    with pytest.raises(ValueError, match=r"gold has 1 sentences, system has 2.*system sentence 2"):
        check_tokenization(read_conllu(spath), read_conllu(gpath))


# Retokenized system (hand computation in the comments of the test below).
RT_GOLD = _conllu("""
1    I      I     PRON   _  _  4  nsubj   _  _
2-3  don't  _     _      _  _  _  _       _  _
2    do     do    AUX    _  _  4  aux     _  _
3    n't    not   PART   _  _  2  advmod  _  _
4    know   know  VERB   _  _  0  root    _  _
5    .      .     PUNCT  _  _  4  punct   _  _
""") + _conllu("""
1    He     he    PRON   _  _  2  nsubj   _  _
2    left   leave VERB   _  _  0  root    _  _
3    .      .     PUNCT  _  _  2  punct   _  _
""")
RT_SYSTEM = _conllu("""
1    I      I     PRON   _  _  4  nsubj   _  _
2    do     do    AUX    _  _  4  aux     _  _
3    n't    not   ADV    _  _  2  advmod  _  _
4    know.  know  VERB   _  _  0  root    _  _
5    He     he    PRON   _  _  6  nsubj   _  _
6    left   leave VERB   _  _  4  conj    _  _
7    .      .     PUNCT  _  _  6  punct   _  _
""")


def test_retokenized_hand_computed(tmp_path):
    # text "Idon'tknow.Heleft.": gold tokens I|don't|know|.|He|left|. (7, words 8), system
    # tokens I|do|n't|know.|He|left|. (7 tokens = words, one sentence)
    gpath = _write(tmp_path, "g.conllu", RT_GOLD)
    spath = _write(tmp_path, "s.conllu", RT_SYSTEM)
    sc = evaluate_files(gpath, spath)
    assert sc.same_tokenization is False
    # tokens with equal spans: I, He, left, . -> 4 of 7 and 7
    assert sc.metric("Tokens") == Metric(7, 7, 4, 4) and sc.tokens == 100 * (8 / 14)
    # the system's one sentence spans both gold sentences: none correct
    assert sc.metric("Sentences") == Metric(2, 1, 0, 0) and sc.sentences_f1 == 0.0
    # aligned: I; do, n't (LCS inside the multiword token's stretch); He, left, . -> 6
    assert sc.metric("Words") == Metric(8, 7, 6, 6) and sc.words_f1 == 100 * (12 / 15)
    # UPOS: n't is ADV -> 5 of the 6 aligned
    assert sc.metric("UPOS").correct == 5 and sc.upos == 100 * (10 / 15)
    # heads: I, do -> know. (not aligned): wrong; n't -> do (aligned to gold do): right;
    # He -> left: right; left -> know. (gold: root): wrong; . -> left: right
    assert sc.uas_correct == 3 and sc.uas == 100 * (6 / 15)
    assert sc.las_correct == 3
    # no punct: gold 6 words; system: 5 aligned to non-PUNCT gold words + know. (VERB)
    assert sc.nopunct_system == 6 and sc.uas_nopunct_correct == 2
    assert sc.uas_nopunct == 100 * (4 / 12)
    assert "Tokens           57.14  (4/7)" in sc.format()
    assert "Sentences" in sc.format() and "0 correct, 2 gold, 1 system" in sc.format()
    # each metric once (issue 51: UAS and LAS were printed twice on retokenized output)
    names = [line.split("  ")[0].strip() for line in sc.format().splitlines()[1:]]
    assert names == ["Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags",
                     "Lemmas", "UAS", "LAS", "UAS (no punct)", "LAS (no punct)"]
    uas = sc.format().splitlines()[9]
    assert uas.startswith("UAS ") and "3 correct, 8 gold, 7 system" in uas


@needs_official
def test_retokenized_hand_computed_matches_official(tmp_path):
    gpath = _write(tmp_path, "g.conllu", RT_GOLD)
    spath = _write(tmp_path, "s.conllu", RT_SYSTEM)
    _assert_official(evaluate_files(gpath, spath), gpath, spath)


def test_different_text_is_rejected(tmp_path):
    system = RT_SYSTEM.replace("He\the", "She\tshe")
    gpath = _write(tmp_path, "g.conllu", RT_GOLD)
    spath = _write(tmp_path, "s.conllu", system)
    with pytest.raises(ValueError) as e:
        evaluate_files(gpath, spath)
    msg = str(e.value)
    assert f"gold {gpath}:8 (sentence 2) has 'Heleft.'" in msg
    assert f"system {spath}:5 (sentence 1) has 'Sheleft.'" in msg
    assert "must hold the gold text" in msg


def test_empty_gold_file_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="holds no sentence"):
        evaluate_files(_write(tmp_path, "g.conllu", ""), _write(tmp_path, "s.conllu", SYSTEM))


def test_certificate_rate():
    report = {
        "format": "depparse-report",
        "version": 1,
        "model": {"path": "m", "model": "mst"},
        "max_iter": 1,
        "single_root": True,
        "inputs": ["x"],
        "summary": {
            "sentences": 4,
            "words": 4,
            "certified": 3,
            "cert_rate": 75.0,
            "seconds": 1.0,
            "words_per_sec": 4.0,
        },
        "sentences": [
            {
                "file": "x",
                "index": i,
                "sent_id": None,
                "n": 1,
                "certificate": i != 2,
                "iterations": 1,
                "seconds": 0.1,
                "dual": [],
                "primal": [],
                "recomputed": [],
                "best_changes": [],
                "heads": [-1, 0],
                "gold_heads": None,
            }
            for i in range(4)
        ],
    }
    assert certificate_rate(report) == 75.0
    assert certificate_rate({**report, "sentences": []}) == 0.0
    with pytest.raises(ValueError, match="format"):
        certificate_rate({**report, "format": "other"})


# ---------------------------------------------------------------------------------------
# Real treebanks: gold vs itself, gold vs a deterministic perturbation, official scorer
# ---------------------------------------------------------------------------------------


def _perturb(gold):
    """Deterministically damage heads and labels; return (system, head_wrong, label_wrong).

    Every 10th word (counting from the 4th) whose grandparent is a word is re-attached to its
    current grandparent (an ancestor, so the tree stays a tree with the same single root); every
    7th word (from the 6th) gets another universal relation; every 11th other word only gets
    its subtype changed (still LAS-correct).  The masks mark the words that must be scored
    wrong, as (sentence, word) pairs.
    """
    system, head_wrong, label_wrong = [], set(), set()
    i = 0
    for k, s in enumerate(gold):
        heads = np.array(s.heads)
        rels = list(s.rels)
        for m in range(1, s.n + 1):
            i += 1
            h = heads[m]
            if i % 10 == 3 and h > 0 and heads[h] > 0:
                heads[m] = heads[h]
                head_wrong.add((k, m))
            universal, _, sub = rels[m].partition(":")
            if i % 7 == 5:
                rels[m] = "dep" if universal != "dep" else "obj"
                label_wrong.add((k, m))
            elif i % 11 == 0:
                rels[m] = universal if sub else universal + ":xyz"
        system.append(s.with_parse(heads, rels))
    return system, head_wrong, label_wrong


@pytest.mark.corpora
@pytest.mark.parametrize("name", ["en_ewt/en_ewt-ud-dev.conllu", "tr_imst/tr_imst-ud-dev.conllu"])
def test_corpus_perturbation(corpora_dir, tmp_path, name):
    path = corpora_dir / name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    gold = read_conllu(path)
    same = evaluate(gold, read_conllu(path))
    assert (same.uas, same.las, same.uas_nopunct, same.las_nopunct) == (100.0,) * 4

    system, head_wrong, label_wrong = _perturb(gold)
    spath = tmp_path / "system.conllu"
    write_conllu(system, spath)
    scores = evaluate(gold, read_conllu(spath))

    words = sum(s.n for s in gold)
    punct = {(k, m) for k, s in enumerate(gold) for m in range(1, s.n + 1) if s.upos[m] == "PUNCT"}
    las_wrong = head_wrong | label_wrong
    assert head_wrong and label_wrong - head_wrong and punct
    assert scores.words == words and scores.punct_words == len(punct)
    assert scores.uas_correct == words - len(head_wrong)
    assert scores.las_correct == words - len(las_wrong)
    assert scores.uas_nopunct_correct == words - len(punct) - len(head_wrong - punct)
    assert scores.las_nopunct_correct == words - len(punct) - len(las_wrong - punct)
    assert scores.uas == 100 * ((words - len(head_wrong)) / words)
    assert scores.las == 100 * ((words - len(las_wrong)) / words)

    if udeval is not None:
        official = _official(path, spath)
        assert official["Words"].gold_total == official["Words"].system_total == words
        assert official["UAS"].correct == scores.uas_correct
        assert official["LAS"].correct == scores.las_correct
        assert 100 * official["UAS"].f1 == scores.uas
        assert 100 * official["LAS"].f1 == scores.las


# ---------------------------------------------------------------------------------------
# All metrics against the official scorer: gold tokenization with perturbed tags, and a
# retokenized system file (split, merged and re-segmented tokens and sentences)
# ---------------------------------------------------------------------------------------

_NAMES = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas", "UAS",
          "LAS")


def _assert_official(ours, gpath, spath, gold_ud=None):
    """Every metric of ``ours`` equals the official scorer's, count for count (F1 to 1e-9)."""
    types = {"multiple_roots_okay": True}
    gold_ud = gold_ud or udeval.load_conllu_file(str(gpath), types)
    official = udeval.evaluate(gold_ud, udeval.load_conllu_file(str(spath), types))
    for name in _NAMES:
        o, m = official[name], ours.metric(name)
        assert (m.gold, m.system, m.correct) == (o.gold_total, o.system_total, o.correct), name
        if o.aligned_total is not None:
            assert m.aligned == o.aligned_total, name
        assert abs(m.f1 - 100 * o.f1) <= 1e-9, name
    assert abs(ours.uas - 100 * official["UAS"].f1) <= 1e-9
    assert abs(ours.las - 100 * official["LAS"].f1) <= 1e-9


def _tokens(sent):
    """The tokens of a sentence: ``(form, [word columns], is_multiword)``."""
    lines = [line.split("\t") for line in sent.lines if line[:1] != "#"]
    lines = [c for c in lines if "." not in c[0]]
    out, i = [], 0
    while i < len(lines):
        c = lines[i]
        if "-" in c[0]:
            a, b = map(int, c[0].split("-"))
            out.append((c[1], lines[i + 1:i + 2 + b - a], True))
            i += 2 + b - a
        else:
            out.append((c[1], [c], False))
            i += 1
    return out


def _system_file(gold, path, *, retokenize):
    """Write a system file derived from ``gold`` deterministically; return nothing.

    Tags are damaged on a schedule (UPOS every 9th word, XPOS every 10th, a universal
    feature dropped every 8th word that has features, LEMMA every 12th).  With
    ``retokenize``: every 3rd multiword token becomes one word, every 7th other token of 4+
    characters is split in two tokens, every 11th of 3+ characters becomes a two-word
    multiword token, every 13th is merged with a following plain token, every 5th sentence
    is merged with the next and every 6th sentence of 6+ tokens is cut in two.  A word that
    corresponds to a gold word keeps its gold head where the head word is in the same
    system sentence (else it becomes a root); new words attach to the word before them.
    """
    # system sentences: lists of tokens; a token is (form, words); a word is
    # (form, gold columns, gold (k, id) or None)
    sents, n = [], 0
    for k, s in enumerate(gold):
        toks = []
        raw = _tokens(s)
        i = 0
        while i < len(raw):
            form, words, multi = raw[i]
            n += 1
            refs = [(k, int(c[0])) for c in words]
            if not retokenize:
                toks.append((form if multi else None,
                             [(c[1], c, r) for c, r in zip(words, refs, strict=True)]))
            elif multi and n % 3 == 0:
                toks.append((None, [(form, words[0], refs[0])]))
            elif not multi and len(form) >= 4 and n % 7 == 1:
                h = len(form) // 2
                toks.append((None, [(form[:h], words[0], refs[0])]))
                toks.append((None, [(form[h:], words[0], None)]))
            elif not multi and len(form) >= 3 and n % 11 == 2:
                toks.append((form, [(form[:1], words[0], refs[0]), (form[1:], words[0], None)]))
            elif not multi and n % 13 == 5 and i + 1 < len(raw) and not raw[i + 1][2]:
                toks.append((None, [(form + raw[i + 1][0], words[0], refs[0])]))
                i += 1
            else:
                toks.append((form if multi else None,
                             [(c[1], c, r) for c, r in zip(words, refs, strict=True)]))
            i += 1
        if retokenize and k % 6 == 0 and len(toks) >= 6:
            sents += [toks[:len(toks) // 2], toks[len(toks) // 2:]]
        elif retokenize and k % 5 == 4 and sents:
            sents[-1] = sents[-1] + toks
        else:
            sents.append(toks)
    out, w = [], 0
    for toks in sents:
        words = [wd for _, ws in toks for wd in ws]
        where = {r: j + 1 for j, (_, _, r) in enumerate(words) if r is not None}
        m = 0
        for tform, ws in toks:
            if tform is not None:
                out.append(f"{m + 1}-{m + len(ws)}\t{tform}" + "\t_" * 8)
            for form, c, r in ws:
                m += 1
                w += 1
                if r is None:
                    head = m - 1
                else:
                    gh = int(c[6])
                    head = 0 if gh == 0 else where.get((r[0], gh), 0)
                lemma = c[2] + "x" if w % 12 == 0 else c[2]
                upos = "X" if w % 9 == 0 else c[3]
                xpos = c[4] + "y" if w % 10 == 0 else c[4]
                feats = c[5]
                if w % 8 == 0 and feats != "_":
                    feats = "|".join(feats.split("|")[1:]) or "_"
                out.append("\t".join([str(m), form, lemma, upos, xpos, feats, str(head), c[7],
                                      "_", "_"]))
        out.append("")
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


@pytest.mark.corpora
@needs_official
# 9-12 s a treebank (measured): Portuguese in the slow suite
@pytest.mark.parametrize("name", ["en_ewt/en_ewt-ud-dev.conllu",
                                  pytest.param("pt_bosque/pt_bosque-ud-dev.conllu",
                                               marks=pytest.mark.slow)])
def test_corpus_all_metrics_match_official(corpora_dir, tmp_path, name):
    path = corpora_dir / name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    gold = read_conllu(path)
    gold_ud = udeval.load_conllu_file(str(path), {"multiple_roots_okay": True})
    _assert_official(evaluate(gold, gold), path, path, gold_ud)  # (a) itself
    for retokenize in (False, True):  # (b) damaged tags, (c) also retokenized
        spath = tmp_path / f"system{int(retokenize)}.conllu"
        _system_file(gold, spath, retokenize=retokenize)
        scores = evaluate(gold, read_conllu(spath))
        assert scores.same_tokenization is (not retokenize)
        # the damage shows: tags and (when retokenized) segmentation are not perfect
        assert scores.upos < 100 and scores.lemmas < 100 and scores.ufeats < 100
        if retokenize:
            assert scores.tokens < 100 and scores.words_f1 < 100 and scores.sentences_f1 < 100
            assert scores.uas > 50
        _assert_official(scores, path, spath, gold_ud)
