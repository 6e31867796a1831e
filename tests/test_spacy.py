"""The spaCy component and pipeline (issue 29, item 5), with the real spaCy package.

Skipped when spaCy is not installed (``pip install 'depparse[spacy]'``; ``make test``
installs it, so CI runs these)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

spacy = pytest.importorskip(
    "spacy", reason="spaCy is not installed: pip install 'depparse[spacy]' to test the "
                    "spaCy component")


import depparse  # noqa: E402
from depparse.conllu import read_conllu  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def _own_parse(model, tokens_per_sentence):
    """depparse's own parse of the same words (CoNLL-U in, no spaCy): the reference."""
    blocks = ["\n".join(f"{j}\t{w}\t_\t_\t_\t_\t_\t_\t_\t_" for j, w in enumerate(ws, 1))
              + "\n" for ws in tokens_per_sentence]
    sents = read_conllu(io.BytesIO("\n".join(blocks).encode()))
    return depparse.load(model).parse_results(sents, trace=False)


def _check_doc(doc, model):
    sents = list(doc.sents)
    words = [[t.text for t in s if not t.is_space] for s in sents]
    ref = _own_parse(model, words)
    assert len(ref) == len(sents) == len(doc._.depparse_proofs)
    for s, (p, r), proof in zip(sents, ref, doc._.depparse_proofs, strict=True):
        toks = [t for t in s if not t.is_space]
        for j, t in enumerate(toks, 1):
            h = int(p.heads[j])
            assert (t.head.i == t.i) if h == 0 else (t.head.i == toks[h - 1].i)
            assert t.dep_ == p.rels[j] and t.pos_ == p.upos[j] and t.lemma_ == p.lemmas[j]
            assert str(t.morph) == p.feats[j]
            if p.xpos[j] != "_":
                assert t.tag_ == p.xpos[j]
        assert s[0].is_sent_start and not any(t.is_sent_start for t in s[1:])
        assert proof == {"optimal": r.optimal, "proof": r.proof, "certificate": r.certificate,
                         "iterations": r.iterations, "seconds": proof["seconds"],
                         "nodes": r.nodes}
        assert s._.depparse_proof == proof


def test_component_fills_heads_labels_tags_and_sentences(syn):
    nlp = spacy.blank("en")
    nlp.add_pipe("depparse", config={"model": str(syn.model)})
    text = ("this old red dog sees happy old house with this park . "
            "cat sees a man near the happy house .")
    doc = nlp(text)
    assert doc.text == text
    assert len(list(doc.sents)) == 2  # depparse's sentence splitter
    assert doc.has_annotation("DEP") and doc.has_annotation("POS")
    _check_doc(doc, syn.model)
    assert all(p["optimal"] for p in doc._.depparse_proofs)


def test_component_keeps_sentences_already_set_and_whitespace(syn):
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("depparse", config={"model": str(syn.model)})
    doc = nlp("cat sees a man .  \n this dog sees the house .")
    assert [t.text for t in doc if t.is_space] == [" \n "]
    sp = next(t for t in doc if t.is_space)
    assert sp.pos_ == "SPACE" and sp.head.i == sp.i - 1
    assert len(list(doc.sents)) == 2
    _check_doc(doc, syn.model)
    assert nlp("")._.depparse_proofs == []


def test_pipeline_with_depparse_tokenizer_and_displacy(syn):
    from spacy import displacy

    import depparse.spacy as dspacy

    nlp = dspacy.load(str(syn.model))
    assert nlp.lang == "xx"  # a model file: no language known
    text = "this dog sees a man . cat sees the house ."
    doc = nlp(text)
    own = depparse.load(syn.model).read_text(text, source="<t>")
    assert [[t.text for t in s] for s in doc.sents] == [list(s.forms[1:]) for s in own]
    _check_doc(doc, syn.model)
    svg = displacy.render(doc, style="dep", jupyter=False,
                          options={"collapse_punct": False, "collapse_phrases": False})
    assert svg.count("<path") == 2 * (len(doc) - 2)  # an arc and its arrow head per non-root
    assert all(f">{t.text}</tspan>" in svg for t in doc)


def test_depparse_tokenizer_keeps_the_text_s_whitespace(syn):
    """doc.text is the text: one space after a word is its whitespace_, the rest of a run of
    whitespace a token of its own (as spaCy's tokenizer makes them), in the sentence before."""
    import depparse.spacy as dspacy

    nlp = dspacy.load(str(syn.model))
    for text in ("\n  this dog sees a man .\t\tcat sees  the house .\r\n\r\nthe man sees "
                 "a dog .  ", "cat sees a dog .", "  ", ""):
        doc = nlp(text)
        assert doc.text == text
        words = [t.text for t in doc if not t.is_space]
        own = depparse.load(syn.model).read_text(text, source="<t>")
        assert words == [w for s in own for w in s.forms[1:]]
        if words:
            assert [[t.text for t in s if not t.is_space] for s in doc.sents] == [
                list(s.forms[1:]) for s in own]
            _check_doc(doc, syn.model)


def test_entry_point_registers_the_factory_without_importing_depparse(syn):
    """spaCy finds "depparse" by its entry point (spacy_factories) in a fresh process."""
    code = f"""
import sys, spacy
assert "depparse" not in sys.modules
nlp = spacy.blank("en")
nlp.add_pipe("depparse", config={{"model": {str(syn.model)!r}}})
doc = nlp("cat sees a man .")
print(sum(t.head.i == t.i for t in doc), doc._.depparse_proofs[0]["optimal"])
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split() == ["1", "True"]


def test_english_model_as_in_the_readme():
    """The README's snippet with the English model: multiword tokens split into words by
    depparse's tokenizer (don't -> do n't)."""
    if not (REPO / "models" / "en_ewt_gs.npz").exists():
        pytest.skip("the English model is not in models/")
    import depparse.spacy as dspacy

    nlp = spacy.blank("en")
    nlp.add_pipe("depparse", config={"model": "en"})
    doc = nlp("The cat sat on the mat. It purred.")
    assert [t.dep_ for t in doc if t.head.i == t.i] == ["root", "root"]
    assert [t.pos_ for t in doc][:3] == ["DET", "NOUN", "VERB"]
    _check_doc(doc, "en")
    nlp2 = dspacy.load("en")
    assert nlp2.lang == "en"
    doc2 = nlp2("I don't know.")
    assert [t.text for t in doc2] == ["I", "do", "n't", "know", "."]
    _check_doc(doc2, "en")


def _ud_doc(vocab, rows):
    """A Doc from (word, UPOS, head index (itself: root), UD label) rows."""
    from spacy.tokens import Doc

    words = [r[0] for r in rows]
    return Doc(vocab, words=words, pos=[r[1] for r in rows], heads=[r[2] for r in rows],
               deps=[r[3] for r in rows])


def test_noun_chunks_read_ud_labels():
    """Issue 51 item 6: spaCy's English iterator reads ClearNLP labels (dobj, pobj) and, on
    UD trees, misses the objects; depparse's finds them, keeps the preposition out ("the
    mat"), a possessor and the adjectives in, and a coordinated noun as a chunk of its own."""
    import depparse.spacy as dspacy

    nlp = spacy.blank("en")
    rows = [("The", "DET", 1, "det"), ("cat", "NOUN", 2, "nsubj"), ("chased", "VERB", 2, "root"),
            ("a", "DET", 5, "det"), ("small", "ADJ", 5, "amod"), ("mouse", "NOUN", 2, "obj"),
            ("on", "ADP", 8, "case"), ("the", "DET", 8, "det"), ("mat", "NOUN", 2, "obl"),
            ("and", "CCONJ", 12, "cc"), ("my", "PRON", 12, "nmod:poss"),
            ("old", "ADJ", 12, "amod"), ("rug", "NOUN", 8, "conj"), (".", "PUNCT", 2, "punct")]
    doc = _ud_doc(nlp.vocab, rows)
    english = [c.text for c in doc.noun_chunks]  # spaCy's own iterator for English
    assert "a small mouse" not in english
    doc.noun_chunks_iterator = dspacy.noun_chunks
    chunks = [c.text for c in doc.noun_chunks]
    assert chunks == ["The cat", "a small mouse", "the mat", "my old rug"]
    assert {c.label_ for c in doc.noun_chunks} == {"NP"}
    sent = doc[3:9]  # a Span's chunks: those inside it
    assert [c.text for c in sent.noun_chunks] == ["a small mouse", "the mat"]
    # Romance order: the adjective after the noun; a name's flat parts
    pt = _ud_doc(nlp.vocab, [("o", "DET", 1, "det"), ("gato", "NOUN", 1, "root"),
                             ("preto", "ADJ", 1, "amod")])
    pt.noun_chunks_iterator = dspacy.noun_chunks
    assert [c.text for c in pt.noun_chunks] == ["o gato preto"]


def test_component_gives_ud_noun_chunks_with_the_english_model():
    """The sentences of issue 51 item 6 through the English model: the objects are chunks,
    on the Doc parsed and on the pipeline's Docs restored from a DocBin."""
    if not (REPO / "models" / "en_ewt_gs.npz").exists():
        pytest.skip("the English model is not in models/")
    from spacy.tokens import DocBin

    nlp = spacy.blank("en")
    nlp.add_pipe("depparse", config={"model": "en"})
    want = {"The cat chased a small mouse.": ["The cat", "a small mouse"],
            "We watched the old film.": ["We", "the old film"]}
    docs = []
    for text, chunks in want.items():
        doc = nlp(text)
        assert [c.text for c in doc.noun_chunks] == chunks
        docs.append(doc)
    back = list(DocBin(docs=docs, attrs=["POS", "HEAD", "DEP"]).get_docs(nlp.vocab))
    assert [[c.text for c in d.noun_chunks] for d in back] == list(want.values())
