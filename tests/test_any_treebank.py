"""Any UD treebank trains end to end (issue 29, item 4): a treebank without ``# text``, or
without lemmas, XPOS or FEATS, trains and says what the model leaves out.  The six real
treebanks are measured by ``benchmarks/six_treebanks.py`` (too slow for the suite)."""

from __future__ import annotations

import synthetic
from fixtures_models import run_cli

from depparse.conllu import read_conllu


def _strip(text: str, *, comments=False, lemmas=False) -> str:
    out = []
    for line in text.split("\n"):
        if comments and line.startswith("# text"):
            continue
        cols = line.split("\t")
        if lemmas and len(cols) == 10 and cols[0].isdigit():
            cols[2] = "_"
        out.append("\t".join(cols))
    return "\n".join(out)


def test_treebank_without_text_lemmas_xpos_feats_trains_and_says_so(tmp_path):
    train = tmp_path / "train.conllu"
    train.write_text(_strip(synthetic.conllu_text(150, 5), comments=True, lemmas=True))
    model = tmp_path / "m.npz"
    rc, _, err = run_cli(["train", "--recipe", "none",
                          train, "-o", model, "--epochs", "1", "--bits", "16",
                          "--labeler-epochs", "1"])
    assert rc == 0, err
    assert ("depparse: the training data has no XPOS/LEMMA/FEATS ('_' on every word): the "
            "tagger leaves them out, and the model writes '_' there") in err
    assert ("depparse: no plain-text tokenizer (the model will read CoNLL-U only): the "
            "training data has no '# text' lines") in err
    test = tmp_path / "test.conllu"
    test.write_text(_strip(synthetic.conllu_text(20, 6), lemmas=True))
    out = tmp_path / "out.conllu"
    rc, _, err = run_cli(["parse", test, "-m", model, "-o", out])
    assert rc == 0, err
    parsed = read_conllu(out)
    assert len(parsed) == 20 and all((s.heads[1:] >= 0).all() for s in parsed)
    rc, _, err = run_cli(["parse", "--input", "text", test, "-m", model, "-o", tmp_path / "x"])
    assert rc == 2 and "the model has no tokenizer" in err


def _glued(n: int, seed: int) -> str:
    """A synthetic treebank written without spaces (as Chinese is): every token SpaceAfter=No,
    ``# text`` the words run together, no paragraph marks."""
    out = []
    for block in synthetic.conllu_text(n, seed).strip().split("\n\n"):
        lines = block.split("\n")
        words = [x.split("\t") for x in lines if x[:1].isdigit()]
        out.append(f"# text = {''.join(w[1] for w in words)}")
        out += ["\t".join(w[:9] + ["SpaceAfter=No"]) for w in words]
        out.append("")
    return "\n".join(out) + "\n"


def test_tokenizer_trains_on_text_without_spaces_or_paragraphs(tmp_path):
    """Without paragraph marks and with no whitespace between sentences, the held-out parts
    are cut at sentence ends all the same (before: one part, 'too little text')."""
    import io

    from depparse.evaluate import evaluate
    from depparse.inference.tokenizer import Tokenizer
    from depparse.learn.tokenizer_training import train_tokenizer, treebank_text

    sents = read_conllu(io.BytesIO(_glued(450, 7).encode()))
    comp = train_tokenizer(sents, seeds=1, gap_seeds=1)
    tok = Tokenizer.from_component(comp)
    gold = read_conllu(io.BytesIO(_glued(60, 8).encode()))
    system = tok.tokenize(treebank_text(gold), source="<glued>")
    sc = evaluate(gold, system)
    # measured: Tokens 100.00, Sentences 100.00 on this synthetic language (its words and
    # sentence ends are unambiguous once seen)
    assert sc.metric("Tokens").f1 > 99.0 and sc.metric("Sentences").f1 > 95.0
