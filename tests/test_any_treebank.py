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
    rc, _, err = run_cli(["train", train, "-o", model, "--epochs", "1", "--bits", "16",
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
