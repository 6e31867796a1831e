"""The NumPy MiniLM encoder and the contextual word classes (depparse/encoding/)."""

from __future__ import annotations

import base64
import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pytest
from blas_rows import ENCODER_TOL, assert_rows_equal
from fixtures_models import needs_encoder, run_cli

from depparse.conllu import read_sentence
from depparse.encoding.context import ContextClasses, spherical_kmeans
from depparse.encoding.ids import CLUSTER_SHIFT
from depparse.encoding.minilm import MiniLM, batch_word_vectors, find_encoder, get_encoder
from depparse.encoding.vocab import Vocabularies
from depparse.errors import EncoderError
from depparse.features.parts import ALL_TEMPLATES, arc_features


def test_erf_matches_math_erf():
    from depparse.encoding.minilm import _erf

    # the documented bound (6.7e-7, at x = 0.0464: an exhaustive float32 search); beyond 8
    # both are 1
    x = np.concatenate([np.linspace(-9, 9, 20001, dtype=np.float32),
                        np.array([0.04643703252077103], dtype=np.float32)])
    want = np.array([math.erf(float(v)) for v in x])
    assert np.abs(_erf(x) - want).max() <= 6.7e-7
    assert np.array_equal(_erf(-x), -_erf(x))


def test_spherical_kmeans_recovers_separated_groups():
    rng = np.random.default_rng(1)
    centres = np.eye(8, 16, dtype=np.float32) * 10
    labels = rng.integers(0, 8, 400)
    x = centres[labels] + rng.normal(0, 0.3, (400, 16)).astype(np.float32)
    c = spherical_kmeans(x, 8, seed=0)
    got = (x / np.linalg.norm(x, axis=1, keepdims=True) @ c.T).argmax(1)
    # the same partition up to renaming: each true group maps to exactly one class
    pairs = set(zip(labels.tolist(), got.tolist(), strict=True))
    assert len(pairs) == 8 and len({g for _, g in pairs}) == 8


def test_context_classes_codes_and_json_round_trip():
    rng = np.random.default_rng(2)
    v = rng.normal(size=(300, 12)).astype(np.float32)
    cc = ContextClasses.train(v, layer=2, k=20, k_coarse=4, seed=0)
    codes = cc.codes(vectors=v)
    fine = (codes & ((1 << CLUSTER_SHIFT) - 1)) - 6
    coarse = (codes >> CLUSTER_SHIFT) - 6
    assert fine.min() >= 0 and fine.max() < 20 and coarse.min() >= 0 and coarse.max() < 4
    assert np.array_equal(coarse, cc.coarse[fine])
    # nearest centroid by cosine
    vn = v / np.linalg.norm(v, axis=1, keepdims=True)
    assert np.array_equal(fine, (vn @ cc.centroids.T).argmax(1))
    back = ContextClasses.from_json(cc.to_json())
    assert back.layer == 2 and np.array_equal(back.codes(vectors=v), codes)


def test_context_classes_assigned_many_at_once_are_those_of_each_sentence():
    """ContextClasses.assign (one product over many sentences, looked up by codes) gives each
    sentence the classes codes gives it alone: near ties (the best two centroids within
    TIE_GAP) are assigned again alone; a look-up never outlives its array; a pickled copy
    (a --jobs worker's) starts without look-ups."""
    import pickle

    rng = np.random.default_rng(4)
    cc = ContextClasses.train(rng.normal(size=(300, 12)).astype(np.float32), layer=2, k=20,
                              k_coarse=4, seed=0)
    sents = [rng.normal(size=(n, 12)).astype(np.float32) for n in (1, 5, 0, 17, 2)]
    tie = (cc.centroids[3] + cc.centroids[7]) / 2  # equally near two centroids
    sents.append(np.stack([tie, -tie, cc.centroids[5]]).astype(np.float32))
    alone = [cc.codes(vectors=v) for v in sents]
    calls = []
    real = ContextClasses._codes
    ContextClasses._codes = lambda self, v: calls.append(len(v)) or real(self, v)
    try:
        cc.assign(sents)
        assert calls == [3]  # the sentence with the tie only
        calls.clear()
        for v, want in zip(sents, alone, strict=True):
            assert np.array_equal(cc.codes(vectors=v), want)
        assert calls == [0]  # the empty sentence (nothing to look up)
        assert len(cc._memo) == 5
        fresh = sents[1].copy()  # equal values, another array: assigned, not looked up
        assert np.array_equal(cc.codes(vectors=fresh), alone[1]) and calls == [0, 5]
        copy = pickle.loads(pickle.dumps(cc))
        assert copy._memo == {} and np.array_equal(copy.codes(vectors=sents[3]), alone[3])
        del sents, fresh, v
        assert cc._memo == {}  # freed arrays leave no look-up behind
    finally:
        ContextClasses._codes = real


def test_context_templates_only_add_features():
    """Without classes the arc features are those of feature set 2; with them, a superset."""

    s = read_sentence("1\tDogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_\n"
                           "2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_\n")
    v = Vocabularies.build([s])
    e = v.encode(s)
    assert not e.cluster.any()
    mask = np.uint64((1 << 20) - 1)
    buf = np.empty(1024, dtype=np.int64)
    k0 = arc_features(2, 1, *e.arrays(), mask, ALL_TEMPLATES, buf)
    plain = set(buf[:k0].tolist())
    e.cluster[:] = [1 | 1 << CLUSTER_SHIFT, 7 | 8 << CLUSTER_SHIFT, 9 | 8 << CLUSTER_SHIFT]
    k1 = arc_features(2, 1, *e.arrays(), mask, ALL_TEMPLATES, buf)
    assert k1 > k0 and plain <= set(buf[:k1].tolist())


def test_missing_encoder_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("DEPPARSE_ENCODER", str(tmp_path / "nowhere"))
    with pytest.raises(EncoderError, match="cannot read"):
        get_encoder(1)
    assert find_encoder() == tmp_path / "nowhere"


@needs_encoder
@pytest.mark.parametrize("broken", ["no weights", "other weights", "no vocab", "bad vocab",
                                    "vocab without [UNK]"])
def test_broken_encoder_files_are_clear_errors(tmp_path, broken):
    src = find_encoder()
    for name in ("config.json", "vocab.txt", "tokenizer_config.json"):
        (tmp_path / name).write_bytes((src / name).read_bytes())
    (tmp_path / "model.safetensors").symlink_to(src / "model.safetensors")
    if broken == "no weights":
        (tmp_path / "model.safetensors").unlink()
        match = "cannot read"
    elif broken == "other weights":
        (tmp_path / "model.safetensors").unlink()
        (tmp_path / "model.safetensors").write_bytes(b"\x08" + bytes(7) + b"{}      ")
        match = "SHA-256 differs"
    elif broken == "no vocab":
        (tmp_path / "vocab.txt").unlink()
        match = "cannot read"
    elif broken == "bad vocab":
        (tmp_path / "vocab.txt").write_bytes(b"\xff\xfe[PAD]\n")
        match = "not a WordPiece vocabulary"
    else:
        (tmp_path / "vocab.txt").write_text("[PAD]\n[CLS]\n[SEP]\nthe\n", encoding="utf-8")
        match = r"lacks \[UNK\]"
    with pytest.raises(EncoderError, match=match):
        MiniLM(tmp_path, 1)


@needs_encoder
def test_tokenizer_follows_bert_uncased():
    enc = get_encoder(1)
    inv = {i: p for p, i in enc.vocab.items()}

    def pieces(word):
        return [inv[i] for i in enc.pieces(word)]

    assert pieces("Don't") == ["don", "'", "t"]
    assert pieces("Café") == ["cafe"]  # lower-cased, accent stripped
    assert pieces("U.S.") == ["u", ".", "s", "."]
    assert pieces("e-mail") == ["e", "-", "mail"]
    assert pieces("\u4e2d\u6587") == ["\u4e2d", "\u6587"]  # CJK: one token per character
    assert pieces("a\u200bb") == ["ab"]  # a format character is dropped
    assert pieces("x" * 101) == ["[UNK]"]  # over 100 characters
    assert enc.pieces("\u2603" * 3) == [enc.unk]  # no piece matches a snowman
    assert enc.pieces("\u200b") == [enc.unk]  # a word that yields no piece at all


@needs_encoder
def test_piece_ids_map_pieces_to_their_words():
    enc = get_encoder(1)
    forms = ["Don't", "\u200b", "naïve", "hyperparameterization", "."]
    ids, owner = enc.piece_ids(forms)
    want = [enc.pieces(f) for f in forms]
    assert ids == [i for p in want for i in p]
    assert owner == [w for w, p in enumerate(want) for _ in p]
    assert enc.piece_ids([]) == ([], [])


@needs_encoder
def test_wordpieces_and_vectors():
    enc = get_encoder(2)
    inv = {i: p for p, i in enc.vocab.items()}
    # greedy longest match (WordPiece): the pieces spell the token, and no piece could have
    # been longer
    for word in ("unaffable", "Parsing", "hyperparameterization", "naïve"):
        tok = enc.tokenizer.normalizer.normalize_str(word)
        got = [inv[i] for i in enc.pieces(word)]
        assert "".join(p.removeprefix("##") for p in got) == tok
        pos = 0
        for j, p in enumerate(got):
            piece = p.removeprefix("##")
            pos += len(piece)
            for end in range(pos + 1, len(tok) + 1):
                longer = tok[pos - len(piece):end]
                assert (longer if j == 0 else "##" + longer) not in enc.vocab
    words = "The old man the boats .".split()
    x = enc.word_vectors(words)
    assert x.shape == (6, enc.dim) and np.isfinite(x).all()
    # context matters: "man" as a verb here, as a noun in the second sentence
    y = enc.word_vectors("The old man left .".split())
    assert not np.allclose(x[2], y[2])
    assert not np.allclose(x[:2], y[:2], atol=1e-5)  # attention sees the whole sentence


@needs_encoder
def test_long_sentences_are_encoded_in_windows():
    enc = get_encoder(1)
    words = ["word"] * 700  # one piece each: two windows of 510 and 190
    x = enc.word_vectors(words)
    assert x.shape == (700, enc.dim) and np.isfinite(x).all()
    first = enc.word_vectors(words[:510])
    assert np.allclose(x[:510], first, atol=1e-5)


def test_in_place_erf_gelu_layernorm_equal_the_plain_expressions():
    """The encoder's GELU, erf and LayerNorm work on buffers; their float32 results are those
    of the plain formulas bit for bit (so that the shipped model's classes stay the same)."""
    from depparse.encoding.minilm import _erf, _gelu

    rng = np.random.default_rng(5)
    x = (rng.standard_normal((37, 1536)) * 3).astype(np.float32)
    x[0, :4] = [0.0, -0.0, 9.5, -9.5]

    def plain_erf(x):
        a = np.abs(x)
        t = 1.0 / (1.0 + np.float32(0.3275911) * a)
        p = ((((np.float32(1.061405429) * t - np.float32(1.453152027)) * t
               + np.float32(1.421413741)) * t - np.float32(0.284496736)) * t
             + np.float32(0.254829592)) * t
        return np.sign(x) * (1.0 - p * np.exp(-a * a))

    want = np.float32(0.5) * x * (np.float32(1.0) + plain_erf(x * np.float32(0.7071067811865476)))
    assert _erf(x).tobytes() == plain_erf(x).tobytes()
    y = x.copy()
    assert _gelu(x).tobytes() == want.tobytes() and np.array_equal(x, y)  # input kept
    assert _gelu(y, out=y) is y and y.tobytes() == want.tobytes()

    class LN:
        eps = 1e-12
        w = {"n.weight": rng.standard_normal(1536).astype(np.float32),
             "n.bias": rng.standard_normal(1536).astype(np.float32)}

    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    plain = (x - m) / np.sqrt(v + LN.eps) * LN.w["n.weight"] + LN.w["n.bias"]
    assert MiniLM._ln(LN, x, LN.w["n.weight"], LN.w["n.bias"]).tobytes() == plain.tobytes()


def _sentences_for_batches():
    """Sentences of many lengths (several of each, so that windows of one length share an
    attention product), a word of many pieces, an empty sentence, one of two windows."""
    rng = np.random.default_rng(7)
    words = ("the old man the boats . Don't naïve hyperparameterization U.S. e-mail , "
             "parsing \u2603 dog barked at 42 cats").split()
    out = [list(rng.choice(words, size=n)) for n in rng.integers(1, 40, size=60)]
    out += [["Dogs", "bark", "."], ["Dogs", "bark", "."], []]
    out.insert(20, ["word"] * 700)  # 510 + 190 pieces: two windows
    return out


@needs_encoder
def test_batched_vectors_equal_one_sentence_at_a_time():
    """A sentence's vectors do not depend on the other sentences of its batch, bit for bit
    where the BLAS computes a product's rows alike whatever their number (else ``--jobs N``
    could differ from one process, and the classes from the shipped model's; elsewhere to
    float32 round-off, tests/blas_rows.py): every pass size, every order."""
    from depparse.encoding import minilm

    enc = get_encoder(3)
    sents = _sentences_for_batches()
    alone = [enc.word_vectors(f) for f in sents]
    x2, x3 = enc.batch_layer_vectors([sents[0]], (2, 3))[0]
    assert_rows_equal(x3, alone[0], ENCODER_TOL)
    for max_rows in (1, 40, 300, minilm.MAX_ROWS, 100_000):
        got = enc.batch_word_vectors(sents, max_rows=max_rows)
        assert len(got) == len(sents)
        for a, b in zip(got, alone, strict=True):
            assert a.dtype == np.float32
            assert_rows_equal(a, b, ENCODER_TOL)
    back = enc.batch_word_vectors(sents[::-1])[::-1]
    for a, b in zip(back, alone, strict=True):
        assert_rows_equal(a, b, ENCODER_TOL)
    both = enc.batch_layer_vectors(sents[:5], (2, 3))
    assert_rows_equal(both[0][0], x2, ENCODER_TOL)
    assert_rows_equal(both[0][1], x3, ENCODER_TOL)
    for b, a in zip(both, alone[:5], strict=True):
        assert_rows_equal(b[1], a, ENCODER_TOL)
    for v, a in zip(minilm.batch_word_vectors(3, sents[:5]), alone[:5], strict=True):
        assert_rows_equal(v, a, ENCODER_TOL)
    with pytest.raises(ValueError, match="layers"):
        enc.batch_layer_vectors(sents, (4,))


@needs_encoder
def test_iter_word_vectors_is_lazy():
    """Vectors come a pass at a time: the first sentences' before the input is all read."""
    from depparse.encoding import minilm

    sents = _sentences_for_batches()
    seen = []

    def feed():
        for f in sents:
            seen.append(f)
            yield f

    it = minilm.iter_word_vectors(3, feed(), max_rows=100)
    first = next(it)
    assert_rows_equal(first, get_encoder(3).word_vectors(sents[0]), ENCODER_TOL)
    assert 1 < len(seen) < len(sents)
    assert len(list(it)) == len(sents) - 1


@needs_encoder
def test_parse_encodes_many_sentences_per_pass_with_the_same_results(monkeypatch):
    """Parser.parse computes the contextual classes' vectors of many sentences per forward
    pass (Vocabularies.iter_context_vectors; each --jobs chunk likewise), and its parses are
    those of one sentence at a time."""
    import multiprocessing as mp

    import synthetic

    from depparse.api import load
    from depparse.encoding import minilm
    from depparse.inference.parallel import parse_parallel

    p = load(Path(__file__).parent / "data" / "parse_fixture_context.npz")
    vocab = p.model.vocab
    sents = synthetic.sentences(30, seed=12)
    vecs = list(vocab.iter_context_vectors(sents))
    enc = get_encoder(vocab.context.layer)
    for s, v in zip(sents, vecs, strict=True):
        assert_rows_equal(v, enc.word_vectors(s.forms[1:]), ENCODER_TOL)
        assert np.array_equal(vocab.encode(s, v).cluster, vocab.encode(s).cluster)
    alone = [p.engine.parse_one(s) for s in sents]
    windows = []
    real = minilm.MiniLM._forward
    monkeypatch.setattr(minilm.MiniLM, "_forward", lambda self, w, keep=None:
                        windows.append(len(w)) or real(self, w, keep))
    got = p.parse_results(sents)
    assert sum(windows) == len(sents) and len(windows) < len(sents) / 5

    def same(a, b):
        return all(np.array_equal(x.heads, y.heads) and list(x.rels) == list(y.rels)
                   and rx.iterations == ry.iterations
                   for (x, rx), (y, ry) in zip(a, b, strict=True))

    assert same(got, alone)
    monkeypatch.setattr(minilm.MiniLM, "_forward", real)
    if "fork" in mp.get_all_start_methods():
        assert same(parse_parallel(p, sents, 2, {}, chunk_size=8), alone)


@needs_encoder
@pytest.mark.parametrize("tagger_layer", [1, 2])
def test_parse_with_tagging_uses_the_batched_vectors_as_one_at_a_time(tagger_layer):
    """With a tagger (of the classes' layer: it gets the batched vectors; of another: its
    own), parse(retag=True) gives the tags and trees of one sentence at a time."""
    import synthetic

    from depparse.api import load
    from depparse.inference.columns import TAG_COLUMNS
    from depparse.inference.parser import Parser
    from depparse.learn.tagger import fit_tagger

    p = load(Path(__file__).parent / "data" / "parse_fixture_context.npz")
    assert p.model.vocab.context.layer == 1
    m = p.model
    m.components["tagger"] = fit_tagger(synthetic.sentences(40, seed=3), epochs=2,
                                        encoder_layer=tagger_layer).to_component()
    p = Parser(m)
    sents = synthetic.sentences(20, seed=12)
    alone = [p.engine.parse_one(s, tag_columns=tuple(TAG_COLUMNS)) for s in sents]
    got = p.parse_results(sents, retag=True)
    for (x, rx), (y, ry) in zip(got, alone, strict=True):
        assert list(x.upos) == list(y.upos) and list(x.lemmas) == list(y.lemmas)
        assert np.array_equal(x.heads, y.heads) and list(x.rels) == list(y.rels)
        assert rx.iterations == ry.iterations


@needs_encoder
def test_sentence_similarity_sanity():
    """Mean-pooled last-layer vectors: a paraphrase is closer than an unrelated sentence
    (fails for a forward pass with, e.g., transposed weights or a wrong attention mask)."""
    enc = get_encoder(6)

    def emb(text):
        v = enc.word_vectors(text.split()).mean(0)
        return v / np.linalg.norm(v)

    a = emb("A man is playing a guitar .")
    b = emb("Someone plays the guitar .")
    c = emb("The stock market fell sharply today .")
    assert a @ b > a @ c + 0.2


@needs_encoder
def test_cli_trains_and_parses_with_context_classes(syn, tmp_path, monkeypatch):
    model = tmp_path / "ctx.npz"
    rc, _, err = run_cli(["train", "--recipe", "none",
                          "--model", "sib", "--train", syn.train, "--out", model,
                          "--epochs", "1", "--bits", "16", "--context-layer", "2",
                          "--context-classes", "16", "--labeler-epochs", "1", "--quiet"])
    assert rc == 0, err
    rc, out, err = run_cli(["parse", syn.test_blank, "--model", model])
    assert rc == 0, err
    from depparse.conllu import read_conllu
    from depparse.model import Model

    m = Model.load(model)
    assert m.config.context_layer == 2 and m.vocab.context.centroids.shape == (16, 384)
    parsed = read_conllu(__import__("io").BytesIO(out))
    assert len(parsed) == len(read_conllu(syn.test_blank))
    for s in parsed:
        assert (s.heads[1:] >= 0).all() and (s.heads[1:] <= s.n).all()
    # without its encoder the model cannot be used: exit 2, a message, no traceback
    monkeypatch.setenv("DEPPARSE_ENCODER", str(tmp_path / "nowhere"))
    import depparse.encoding.minilm

    monkeypatch.setattr(depparse.encoding.minilm, "_ENCODERS", {})
    rc, out, err = run_cli(["parse", syn.test_blank, "--model", model])
    assert rc == 2 and "all-MiniLM-L6-v2" in err and "Traceback" not in err
    assert out == b""


@pytest.mark.parametrize("flags", [["--context-layer", "7"], ["--context-layer", "-1"],
                                   ["--context-layer", "1", "--context-classes", "1"]])
def test_bad_context_flags_exit_2(syn, tmp_path, flags):
    rc, _, err = run_cli(["train", "--recipe", "none",
                          "--train", syn.train, "--out", tmp_path / "m.npz", *flags])
    assert rc == 2 and "--context" in err


def test_coarse_groups_default_to_a_sixteenth_of_the_classes():
    from depparse.config import ModelConfig

    assert ModelConfig(context_layer=2, context_classes=16).context_coarse == 1
    assert ModelConfig(context_layer=3, context_classes=1024).context_coarse == 64
    assert ModelConfig(context_layer=3, context_classes=4096).context_coarse == 64
    assert ModelConfig(context_layer=3, context_coarse=8).context_coarse == 8


CLASSES_DATA = Path(__file__).parent / "data" / "encoder_classes_dev1000.json"


def _class_hashes(d: dict) -> dict:
    return {"centroids_sha256": hashlib.sha256(base64.b64decode(d["centroids"])).hexdigest(),
            "coarse_sha256": hashlib.sha256(
                np.asarray(d["coarse"], dtype="<i8").tobytes()).hexdigest()}


@needs_encoder
@pytest.mark.corpora
def test_shipped_model_classes_of_1000_dev_words_are_unchanged(corpora_dir):
    """The contextual classes the shipped model gives 1,000 en_ewt dev words are those of the
    encoder of commit a117308 (hand-written safetensors reader, tokenizer and erf), stored in
    tests/data/encoder_classes_dev1000.json (how: its "how" and
    tests/data/encoder_classes_fixture.py)."""
    from depparse.conllu import read_conllu
    from depparse.paths import models_dir

    want = json.loads(CLASSES_DATA.read_text(encoding="utf-8"))
    model = models_dir() / "en_ewt_gs.npz"
    if not model.exists():
        pytest.skip(f"{model} absent")
    with np.load(model) as z:
        ctx = json.loads(z["meta"].tobytes())["vocab"]["context"]
    if _class_hashes(ctx) != {k: want[k] for k in ("centroids_sha256", "coarse_sha256")}:
        pytest.skip(f"{model} has other contextual-class centroids than the model (commit "
                    "3d3e18c) the stored codes were computed with: nothing to compare")
    cc = ContextClasses.from_json(ctx)
    assert cc.layer == want["layer"]
    dev = {s.sent_id: s for s in read_conllu(corpora_dir / "en_ewt" / "en_ewt-ud-dev.conllu")}
    # one sentence at a time, and all in batches (as Parser.parse does)
    batched = batch_word_vectors(cc.layer, [dev[i].forms[1:] for i, _, _ in want["sentences"]])
    words = changed = changed_batched = 0
    for (sent_id, keep, codes), vectors in zip(want["sentences"], batched, strict=True):
        got = cc.codes(list(dev[sent_id].forms[1:]))[:keep]
        assert len(codes) == keep and len(got) == keep
        words += keep
        changed += int((got != np.asarray(codes)).sum())
        changed_batched += int((cc.codes(vectors=vectors)[:keep] != np.asarray(codes)).sum())
    assert words == 1000
    assert changed == 0, f"{changed} of 1000 words changed class"
    assert changed_batched == 0, f"{changed_batched} of 1000 words changed class (batched)"
