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


# ---------------------------------------------------------------------------------------
# decoding: Viterbi against brute force
# ---------------------------------------------------------------------------------------


def _random_lattice(rng, n, S):
    ptr = [0, 0]
    ids: list[int] = []
    for _ in range(n):
        k = int(rng.integers(1, S + 1))
        ids.extend(sorted(rng.choice(S, size=k, replace=False).tolist()))
        ptr.append(len(ids))
    E = rng.normal(size=len(ids))
    trans = rng.normal(size=(S + 1, S + 1))
    return E, np.array(ptr, dtype=np.int64), np.array(ids, dtype=np.int64), trans


def _brute_force(E, ptr, ids, trans):
    import itertools

    S = trans.shape[0] - 1
    n = len(ptr) - 2
    best, arg = -np.inf, None
    choices = [range(ptr[i], ptr[i + 1]) for i in range(1, n + 1)]
    for path in itertools.product(*choices):
        tags = [S] + [int(ids[c]) for c in path] + [S]
        score = sum(E[c] for c in path) + sum(
            trans[a, b] for a, b in zip(tags[:-1], tags[1:], strict=True))
        if score > best:
            best, arg = score, tags[1:-1]
    return best, arg


def _path_score(E, ptr, ids, trans, tags):
    S = trans.shape[0] - 1
    total = 0.0
    for i, y in enumerate(tags, 1):
        total += E[ptr[i] + list(ids[ptr[i]:ptr[i + 1]]).index(y)]
    full = [S, *tags, S]
    return total + sum(trans[a, b] for a, b in zip(full[:-1], full[1:], strict=True))


@pytest.mark.parametrize("seed", range(30))
def test_viterbi_equals_brute_force(seed: int) -> None:
    from depparse.decode.tag_chain import best_each, viterbi

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 6))
    S = int(rng.integers(1, 5))
    E, ptr, ids, trans = _random_lattice(rng, n, S)
    got = viterbi(E, ptr, ids, trans)
    assert got[0] == -1 and got.shape == (n + 1,)
    best, arg = _brute_force(E, ptr, ids, trans)
    assert got[1:].tolist() == arg
    assert _path_score(E, ptr, ids, trans, got[1:].tolist()) == pytest.approx(best)
    # without transitions it is every word's own best candidate
    each = best_each(E, ptr, ids)
    zero = np.zeros_like(trans)
    assert viterbi(E, ptr, ids, zero).tolist() == each.tolist()
    for i in range(1, n + 1):
        c = ptr[i] + int(np.argmax(E[ptr[i]:ptr[i + 1]]))
        assert each[i] == ids[c]


# ---------------------------------------------------------------------------------------
# lemma edit scripts
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("form, lemma, script", [
    ("running", "run", ("l", "", "", "ning", "")),
    ("Running", "run", ("l", "", "", "ning", "")),
    ("dogs", "dog", ("l", "", "", "s", "")),
    ("The", "the", ("l", "", "", "", "")),
    ("London", "London", ("k", "", "", "", "")),
    ("NASA", "NASA", ("k", "", "", "", "")),
    ("went", "go", ("l", "", "", "went", "go")),
    ("studies", "study", ("l", "", "", "ies", "y")),
    ("gelopen", "lopen", ("l", "ge", "", "", "")),
    ("i", "I", ("t", "", "", "", "")),
    ("Dogs", "DOG", ("u", "", "", "s", "")),
])
def test_edit_scripts_examples(form: str, lemma: str, script: tuple) -> None:
    from depparse.features.lemmas import ScriptIndex, apply, derive, from_key, key

    assert derive(form, lemma) == script
    assert apply(script, form) == lemma
    assert from_key(key(script)) == script
    ids, lemmas = ScriptIndex([("l", "", "", "", ""), script]).candidates(form)
    assert lemma in lemmas and 1 in ids
    # a script does not apply where its affixes are missing
    assert apply(("l", "", "", "ning", ""), "dogs") is None
    assert apply(("l", "ge", "", "", ""), "lopen") is None


def test_edit_script_rejects_garbage() -> None:
    from depparse.features.lemmas import from_key

    with pytest.raises(ValueError):
        from_key("x\x1fa")


#: The training file of each shared treebank (train where there is one, else dev).
TRAINING_FILES = ("en_ewt/en_ewt-ud-train", "pt_bosque/pt_bosque-ud-train",
                  "tr_imst/tr_imst-ud-train", "da_ddt/da_ddt-ud-dev",
                  "nl_alpino/nl_alpino-ud-dev", "sv_talbanken/sv_talbanken-ud-dev")


def _corpus_pairs(corpora_dir: Path):
    """The distinct (FORM, LEMMA) pairs of the words of each training file (read raw)."""
    found = False
    for name in TRAINING_FILES:
        path = corpora_dir / f"{name}.conllu"
        if not path.exists():
            continue
        found = True
        pairs = set()
        with open(path, encoding="utf-8") as f:
            for line in f:
                cols = line.split("\t")
                if len(cols) == 10 and cols[0].isdigit():
                    pairs.add((cols[1], cols[2]))
        yield path, pairs
    if not found:
        pytest.skip(f"no training files under {corpora_dir}")


@pytest.mark.corpora
def test_edit_scripts_round_trip_every_corpus_pair(corpora_dir: Path) -> None:
    """Every (form, lemma) pair of the shared training files has a script that rebuilds it,
    and the scripts of a file, as lemmatizer classes, offer every pair of that file."""
    from depparse.features.lemmas import ScriptIndex, apply, derive

    total = 0
    for path, pairs in _corpus_pairs(corpora_dir):
        scripts = {p: derive(*p) for p in pairs}
        for (form, lemma), sc in scripts.items():
            assert apply(sc, form) == lemma, (path.name, form, lemma, sc)
        index = ScriptIndex(sorted(set(scripts.values())))
        for (form, lemma), sc in scripts.items():
            ids, lemmas = index.candidates(form)
            assert lemma in lemmas, (path.name, form, lemma, sc)
        total += len(pairs)
    assert total > 50_000


# ---------------------------------------------------------------------------------------
# the tagger and lemmatizer on a synthetic language
# ---------------------------------------------------------------------------------------

SMALL = {"epochs": 8, "bits": 18, "margin": 1.0}


def _synthetic(n, seed, nonce=False):
    import synthetic

    return _read(synthetic.tagged_conllu_text(n, seed, nonce, large=True))


def _fit(train, **settings):
    from depparse.learn.tagger import fit_tagger

    return fit_tagger(train, **{**SMALL, **settings})


def _columns(s):
    return (s.lemmas, s.upos, s.xpos, s.feats)


@pytest.fixture(scope="module")
def syn_train():
    return _synthetic(1000, seed=0)


@pytest.fixture(scope="module")
def syn_tagger(syn_train):
    return _fit(syn_train)


@pytest.mark.parametrize("feats", ["bundle", "split"])
def test_tagger_learns_the_synthetic_language_exactly(syn_train, syn_tagger, feats) -> None:
    """New sentences of the language: every column of every known word right; *saw* as a
    noun (lemma *saw*) or a verb (lemma *see*) told apart by its position; words never seen
    in training (a quarter of the nouns: *bems* -> NOUN NNS Number=Plur, lemma *bem*) right
    too (99% at least: generalisation, not memory)."""
    tagger = syn_tagger if feats == "bundle" else _fit(syn_train, feats="split")
    known = {f for s in syn_train for f in s.forms}
    test = _synthetic(200, seed=100, nonce=True)
    right = {"known": np.zeros(4, dtype=int), "new": np.zeros(4, dtype=int)}
    count = {"known": 0, "new": 0}
    saw = set()
    for pred, s in zip(tagger.tag(test), test, strict=True):
        for i in range(1, s.n + 1):
            kind = "known" if s.forms[i] in known else "new"
            count[kind] += 1
            right[kind] += [p[i] == g[i] for p, g in zip(pred, _columns(s), strict=True)]
            if s.forms[i].lower() == "saw":
                saw.add((s.upos[i], s.lemmas[i]))
    assert saw == {("NOUN", "saw"), ("VERB", "see")}
    assert count["new"] > 50
    assert right["known"].tolist() == [count["known"]] * 4
    assert (right["new"] >= 0.99 * count["new"]).all(), right["new"] / count["new"]


def test_an_untrained_tagger_is_wrong(syn_train) -> None:
    """The exactness above is learnt: after no epoch the tagger gets the words wrong."""
    from depparse.learn.tagger import column_accuracy

    acc = column_accuracy(_fit(syn_train, epochs=0).tag(syn_train[:50]), syn_train[:50])
    assert acc["upos"] < 50 and acc["xpos"] < 50


def test_retag_replaces_only_the_four_columns(syn_tagger) -> None:
    """Untagged input (LEMMA, UPOS, XPOS, FEATS all ``_``) comes back with the four columns
    filled and every other byte as it was."""
    import synthetic

    gold_text = synthetic.tagged_conllu_text(40, seed=2, large=True)
    lines = gold_text.split("\n")
    for k, line in enumerate(lines):
        cols = line.split("\t")
        if len(cols) == 10:
            cols[2:6] = ["_"] * 4
            cols[9] = f"Line={k}"  # MISC must survive
            lines[k] = "\t".join(cols)
    blank = "\n".join(lines)
    out = _bytes(syn_tagger.retag(_read(blank))).decode("utf-8")
    gold_lines = gold_text.split("\n")
    out_lines = out.split("\n")
    assert len(out_lines) == len(lines)
    for a, b, g in zip(lines, out_lines, gold_lines, strict=True):
        ca, cb, cg = a.split("\t"), b.split("\t"), g.split("\t")
        if len(ca) != 10:
            assert a == b
            continue
        assert ca[:2] == cb[:2] and ca[6:] == cb[6:]
        assert cb[2:6] == cg[2:6]
    # some columns only
    up = syn_tagger.retag(_read(blank), columns=("upos",))
    assert all(s.lemmas[1:].tolist() == ["_"] * s.n for s in up)
    assert up[0].upos[1] == gold_lines[2].split("\t")[3]


def test_component_round_trip_through_a_model_file(syn_tagger, tmp_path: Path) -> None:
    """Stored in a model file and read back, the tagger predicts exactly what the trained
    one predicts (8-bit weights included: the synthetic data are tagged right by both)."""
    from depparse.config import ModelConfig
    from depparse.encoding import Vocabularies
    from depparse.inference.tagging import Tagger
    from depparse.model import Model

    comp = syn_tagger.to_component()
    assert comp.meta["format"] == "depparse-tagger" and comp.meta["version"] == 1
    model = Model(ModelConfig(model="mst", bits=8), Vocabularies(), np.zeros(256),
                  components={"tagger": comp})
    model.save(tmp_path / "m.npz")
    back = Tagger.from_component(Model.load(tmp_path / "m.npz").components["tagger"])
    test = _synthetic(60, seed=3, nonce=True)
    for a, b in zip(syn_tagger.tag(test), back.tag(test), strict=True):
        for x, y in zip(a, b, strict=True):
            assert x.tolist() == y.tolist()
    assert back.lemma_dict == syn_tagger.lemma_dict
    assert [t.classes for t in back.tasks.values()] == \
        [t.classes for t in syn_tagger.tasks.values()]


def test_component_version_and_corruption_raise_model_error(syn_tagger) -> None:
    from depparse.errors import ModelError
    from depparse.inference.tagging import Tagger
    from depparse.model import Component

    comp = syn_tagger.to_component()
    with pytest.raises(ModelError, match="version 99"):
        Tagger.from_component(Component({**comp.meta, "version": 99}, comp.arrays))
    with pytest.raises(ModelError, match="not a depparse tagger"):
        Tagger.from_component(Component({"format": "x"}, comp.arrays))
    broken = dict(comp.arrays)
    broken["w_values"] = broken["w_values"][:-1]
    with pytest.raises(ModelError, match="corrupt"):
        Tagger.from_component(Component(comp.meta, broken))
    missing = {k: v for k, v in comp.arrays.items() if k != "t0.trans"}
    with pytest.raises(ModelError, match="corrupt"):
        Tagger.from_component(Component(comp.meta, missing))


def test_jackknife_tags_each_fold_with_a_tagger_of_the_other_folds(syn_train) -> None:
    from depparse.learn.tagger import jackknife

    data = syn_train[:90]
    out = jackknife(data, folds=3, **SMALL)
    assert [s.sent_id for s in out] == [s.sent_id for s in data]
    assert all(a.forms.tolist() == b.forms.tolist() for a, b in zip(out, data, strict=True))
    # the second fold, by hand
    expect = _fit(data[:30] + data[60:]).tag(data[30:60])
    for s, cols in zip(out[30:60], expect, strict=True):
        for got, want in zip(_columns(s), cols, strict=True):
            assert got.tolist() == want.tolist()
    with pytest.raises(ValueError, match="folds"):
        jackknife(data, folds=1)


def test_dense_features_alone_tag_words_the_forms_do_not_tell(syn_train, tmp_path) -> None:
    """Vectors that encode each word's UPOS (one-hot plus noise) as dense features: a tagger
    trained with them tags sentences of words never seen, whose forms say nothing, by the
    vectors alone; stored and read back it does the same."""
    from depparse.inference.tagging import Tagger

    rng = np.random.default_rng(0)
    upos = sorted({u for s in syn_train for u in s.upos[1:]})

    def vectors(sents):
        out = []
        for s in sents:
            v = rng.normal(scale=0.1, size=(s.n, 8)).astype(np.float32)
            v[np.arange(s.n), [upos.index(u) for u in s.upos[1:]]] += 1.0
            out.append(v)
        return out

    tagger = _fit(syn_train, encoder_layer=3, vector_scale=3.0, vectors=vectors(syn_train))
    assert tagger.tasks["upos"].dense.shape == (len(upos), 8)
    test = _synthetic(60, seed=7)
    sents = [_read_forms(["".join(rng.choice(list("qzxj"), size=6)) for _ in range(s.n)])
             for s in test]
    tv = vectors(test)
    for tg in (tagger, Tagger.from_component(tagger.to_component())):
        pred = tg.tag(sents, tv)
        for (_, up, _, _), s in zip(pred, test, strict=True):
            assert up.tolist()[1:] == s.upos.tolist()[1:]
    with pytest.raises(ValueError, match="shape"):
        tagger.tag(sents[:1], [tv[0][:-1]])
    # the forms alone do not tell
    wrong = sum(int((up[1:] != s.upos[1:]).sum())
                for (_, up, _, _), s in zip(_fit(syn_train).tag(sents), test, strict=True))
    assert wrong > 0.2 * sum(s.n for s in test)


def _read_forms(forms):
    """A sentence of these forms, every other column ``_``."""
    (s,) = _read("".join(f"{i}\t{f}\t_\t_\t_\t_\t_\t_\t_\t_\n" for i, f in enumerate(forms, 1))
                 + "\n")
    return s


def test_lazy_average_equals_eager_average() -> None:
    """``w - acc / c`` after the steps of :func:`train_step` is the mean of the weights
    after each step (dense and transition weights included)."""
    from depparse.learn.tagger import train_step

    rng = np.random.default_rng(0)
    N, F, C, D, bits = 6, 5, 4, 3, 10
    w, acc = np.zeros(1 << bits), np.zeros(1 << bits)
    dense, dacc = np.zeros((C, D)), np.zeros((C, D))
    trans, tacc = np.zeros((C + 1, C + 1)), np.zeros((C + 1, C + 1))
    mask = np.uint64((1 << bits) - 1)
    ptr = np.array([0, 0, *range(C, C * N, C)], dtype=np.int64)
    ids = np.tile(np.arange(C, dtype=np.int64), N - 1)
    totals = [np.zeros_like(w), np.zeros_like(dense), np.zeros_like(trans)]
    c = 0.0
    errors = 0
    for step in range(40):
        bases = rng.integers(0, 50, size=(N, F)).astype(np.uint64)
        counts = np.full(N, F, dtype=np.int64)
        vec = rng.normal(size=(N, D))
        gold = np.concatenate([[-1], rng.integers(0, C, size=N - 1)]).astype(np.int64)
        errors += train_step(bases, counts, np.uint64(7), w, acc, mask, vec[:, :0], vec, dense,
                             dacc, trans, tacc, step % 2 == 0, ptr, ids, gold, c, 0.5)
        c += 1.0
        for t, x in zip(totals, (w, dense, trans), strict=True):
            t += x
    assert errors > 0 and np.abs(w).sum() > 0 and np.abs(trans).sum() > 0
    for t, x, a in zip(totals, (w, dense, trans), (acc, dacc, tacc), strict=True):
        np.testing.assert_allclose(x - a / c, t / c, rtol=0, atol=1e-9)
