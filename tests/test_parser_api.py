"""The parse pipeline, labeler, model files, Python API and the demo."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
import synthetic

import depparse
from depparse.config import DecodeConfig, ModelConfig
from depparse.conllu import read_conllu
from depparse.decode.trees import validate_tree
from depparse.encoding.vocab import Vocabularies
from depparse.errors import DepparseError, ModelError, NoSpanningTreeError
from depparse.inference.parser import Parser
from depparse.model import VERSION, Model
from depparse.paths import REPO_ROOT, models_dir
from depparse.report import build_report


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    tr = synthetic.sentences(150, seed=11)
    cfg = ModelConfig(model="gs", bits=17, pruner_bits=15, labeler_bits=15)
    m = depparse.train(tr, None, model="gs", bits=17, pruner_bits=15, labeler_bits=15,
                       epochs=4, labeler_epochs=8, progress=False, pruner_folds=2)
    assert m.config.bits == cfg.bits
    path = tmp_path_factory.mktemp("models") / "tiny.npz"
    m.save(path)
    return path


#: The API of a Parser (issue 49: at most 12 public methods): one call for a batch and one
#: iterator for a stream, thin wrappers over them, and the settings.  The pipeline's steps
#: belong to ``Parser.engine`` (depparse.inference.engine.Engine).
PARSER_API = {"parse", "parse_results", "iter_parse_results", "parse_file", "parse_text",
              "parse_conllu", "read_text", "tag",
              "set_decoding", "set_pruning", "set_proof", "set_joint"}


def test_parser_api_is_small_and_its_settings_are_the_engines(tiny_model):
    methods = {k for k, v in vars(Parser).items() if callable(v) and not k.startswith("_")}
    assert methods == PARSER_API and len(methods) <= 12
    p = depparse.load(tiny_model)
    p.set_pruning(threshold=1e-3)
    assert p.decoding is p.engine.decoding and p.decoding.prune_threshold == 1e-3
    p.set_proof("all", max_words=10)
    assert p.engine.decoding.proof_over == "all" and p.engine.decoding.proof_max_words == 10
    assert p.set_joint() is None and p.joint is p.engine.joint is not None
    p.set_joint(on=False)
    assert p.engine.joint is None
    with pytest.raises(AttributeError):
        p.decoding = DecodeConfig()  # read-only: settings change through set_decoding


def test_saved_model_round_trip_and_labels(tiny_model):
    p = depparse.load(tiny_model)
    te = synthetic.sentences(40, seed=12)
    parsed = p.parse(te)
    for gold, sys_ in zip(te, parsed, strict=True):
        assert np.array_equal(gold.heads, sys_.heads)
        assert list(gold.rels[1:]) == list(sys_.rels[1:])  # the labeler learned the grammar
        assert validate_tree(sys_, single_root=True) is None


def test_parse_conllu_changes_only_head_and_deprel(tiny_model):
    p = depparse.load(tiny_model)
    text = synthetic.conllu_text(10, seed=13)
    # blank out HEAD/DEPREL: the parser must not need them
    blank = "\n".join(
        "\t".join(c[:6] + ["_", "_"] + c[8:]) if (c := line.split("\t")) and len(c) == 10
        else line for line in text.split("\n"))
    out = p.parse_conllu(blank)
    for a, b in zip(blank.split("\n"), out.split("\n"), strict=True):
        ca, cb = a.split("\t"), b.split("\t")
        if len(ca) == 10:
            assert ca[:6] == cb[:6] and ca[8:] == cb[8:]
            assert cb[6] != "_" and cb[7] != "_"
        else:
            assert a == b
    assert out == text  # and it recovers the synthetic gold trees exactly


def test_parse_file_writes_atomically(tiny_model, tmp_path):
    src = tmp_path / "in.conllu"
    src.write_text(synthetic.conllu_text(5, seed=14))
    p = depparse.load(tiny_model)
    out = tmp_path / "out.conllu"
    parsed = p.parse_file(src, out=out)
    assert len(parsed) == 5 and out.read_text() == src.read_text()
    assert not [f for f in tmp_path.iterdir() if f.name.startswith(".")]


def test_results_and_report(tiny_model):
    p = depparse.load(tiny_model)
    te = synthetic.sentences(6, seed=15)
    res = p.parse_results(te)
    rep = build_report(p, [("x.conllu", te)], res, 0.5)
    assert rep["summary"]["sentences"] == 6
    s0 = rep["sentences"][0]
    assert s0["iterations"] == len(s0["dual"]) == len(s0["primal"]) == len(s0["recomputed"])
    assert s0["gold_heads"] == te[0].heads.tolist()
    json.dumps(rep)  # serialisable


def test_multi_root_and_max_iter(tiny_model):
    p = depparse.load(tiny_model)
    te = synthetic.sentences(5, seed=16)
    for single in (True, False):
        for s, r in p.parse_results(te, single_root=single, max_iter=1):
            assert validate_tree(s, single_root=single) is None
            assert r.iterations == 1  # the cap, whether certified or not
    # the flag reaches the decoder: with only root arcs to choose from, several roots are
    # the one tree when allowed, and no tree when not
    enc = p.model.vocab.encode(te[0])
    N = enc.n + 1
    root_only = np.zeros((N, N), dtype=bool)
    root_only[0, 1:] = True
    r = p.engine.decode(enc, keep=root_only, single_root=False)
    assert (r.heads[1:] == 0).all() and N - 1 > 1
    with pytest.raises(NoSpanningTreeError):
        p.engine.decode(enc, keep=root_only, single_root=True)


def test_set_pruning_prunes_harder_and_trees_stay_valid(tiny_model):
    p = depparse.load(tiny_model)
    te = synthetic.sentences(8, seed=17)
    enc = [p.model.vocab.encode(s) for s in te]
    default = [p.engine.keep_mask(e) for e in enc]
    p.set_pruning(threshold=1.0, max_heads=1)
    assert (p.decoding.prune_threshold, p.decoding.prune_max_heads) == (1.0, 1)
    assert p.model.decoding.prune_threshold == DecodeConfig().prune_threshold  # model unchanged
    tighter = 0
    for e, k0 in zip(enc, default, strict=True):
        k = p.engine.keep_mask(e)
        assert not (k & ~k0).any()  # a subset of the default candidates
        # per word: its best head by marginal, plus its head in the pruner's best tree
        assert (k.sum(axis=0)[1:] <= 2).all()
        tighter += int(k0.sum() - k.sum())
    assert tighter > 0
    res = p.parse_results(te)
    for s, _ in res:
        assert validate_tree(s, single_root=True) is None
    rep = build_report(p, [("x.conllu", te)], res, 0.1)
    assert (rep["model"]["prune_threshold"], rep["model"]["prune_max_heads"]) == (1.0, 1)
    for bad in ({"threshold": 1.5}, {"threshold": -0.1}, {"max_heads": 0},
                {"max_heads": 2.5}):
        with pytest.raises(ValueError):
            p.set_pruning(**bad)
    mst = Parser(Model(ModelConfig(model="mst"), p.model.vocab, np.zeros(1 << 10)))
    with pytest.raises(DepparseError, match="mst"):
        mst.set_pruning(threshold=0.1)


def test_model_errors(tiny_model, tmp_path):
    with pytest.raises(ModelError, match="not found"):
        Model.load(tmp_path / "missing.npz")
    data = tiny_model.read_bytes()
    cut = tmp_path / "truncated.npz"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelError, match="corrupt or truncated"):
        Model.load(cut)
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"hello, I am not a model")
    with pytest.raises(ModelError):
        Model.load(junk)
    # a newer format version
    with np.load(tiny_model) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["meta"].tobytes())
    meta["version"] = VERSION + 1
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    newer = tmp_path / "newer.npz"
    np.savez(newer, **arrays)
    with pytest.raises(ModelError, match="newer"):
        Model.load(newer)
    # not a depparse file at all
    other = tmp_path / "other.npz"
    np.savez(other, x=np.zeros(3))
    with pytest.raises(ModelError, match="not a depparse model"):
        Model.load(other)



def test_sparse_weight_storage_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    w = np.zeros(1 << 14)
    idx = rng.choice(w.size, 900, replace=False)
    w[idx] = rng.normal(size=900) * 10 ** rng.uniform(-3, 3, size=900)
    dense = rng.normal(size=1 << 10)
    m = Model(ModelConfig(bits=14, pruner_bits=10, storage="float16"), Vocabularies(), w,
              pruner=dense, labeler=None)
    path = tmp_path / "m.npz"
    m.save(path)
    with np.load(path) as z:
        assert {"weights_mask", "weights_values", "pruner"} <= set(z.files)
        assert "weights" not in z.files and z["weights_values"].shape == (900,)
    back = Model.load(path)
    # float16 storage: equal up to float16 rounding, zeros stay zeros
    assert np.array_equal(back.weights, w.astype(np.float16).astype(np.float64))
    assert np.array_equal(back.pruner, dense.astype(np.float16).astype(np.float64))
    assert back.labeler is None
    # a value array that does not match its mask is reported as corruption
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["weights_values"] = arrays["weights_values"][:-1]
    bad = tmp_path / "bad.npz"
    np.savez(bad, **arrays)
    with pytest.raises(ModelError, match="corrupt"):
        Model.load(bad)


def test_float16_storage_clips_instead_of_overflowing(tmp_path):
    """A weight beyond float16's range (65504) is stored as +-65000, never as +-inf."""
    w = np.zeros(1 << 10)
    w[[3, 7, 11]] = [1e6, -1e6, 2.5]
    m = Model(ModelConfig(bits=10, pruner_bits=10, storage="float16"), Vocabularies(), w,
              pruner=None, labeler=None)
    m.save(tmp_path / "m.npz")
    back = Model.load(tmp_path / "m.npz").weights
    assert np.isfinite(back).all()
    top = float(np.float16(65000.0))  # the clip value, rounded to float16
    assert back[3] == top and back[7] == -top and back[11] == 2.5


def test_model_of_another_feature_set_is_refused(tiny_model, tmp_path):
    with np.load(tiny_model) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["meta"].tobytes())
    del meta["config"]["feature_set"]  # a file written before feature sets were recorded
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    old = tmp_path / "old.npz"
    np.savez(old, **arrays)
    with pytest.raises(ModelError, match="feature set 1"):
        Model.load(old)


SHIPPED = models_dir() / "en_ewt_gs.npz"


@pytest.mark.skipif(not SHIPPED.exists(), reason="shipped model models/en_ewt_gs.npz absent")
def test_shipped_model_parses_sample_and_demo_runs(tmp_path, capsys):
    p = depparse.load()
    assert isinstance(p, Parser) and p.config.model == "gs" and p.engine.labeler is not None
    sample = read_conllu(REPO_ROOT / "corpora" / "sample.conllu")
    for s in p.parse(sample):
        assert validate_tree(s, single_root=True) is None
        assert all(r for r in s.rels[1:])
    from depparse import demo

    assert demo.main(["--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "UAS" in out and "LAS" in out and "certified" in out
    html = (tmp_path / "report" / "index.html").read_text()
    assert "<img" in html
    assert (tmp_path / "sample.parsed.conllu").exists()
    parsed = read_conllu(tmp_path / "sample.parsed.conllu")
    assert len(parsed) == len(sample)


def test_read_from_bytes_stream():
    s = read_conllu(io.BytesIO(synthetic.conllu_text(2, seed=1).encode()))
    assert len(s) == 2


def test_model_components_round_trip(tmp_path):
    """Components (tagger, tokenizer ...) keep their JSON and arrays (dtype included)."""
    from depparse.model import Component

    m = Model(ModelConfig(bits=10, pruner_bits=10), Vocabularies(), np.zeros(1 << 10))
    m.components["tagger"] = Component({"version": 1, "tags": ["NOUN", "VERB"]},
                                       {"w": np.arange(6, dtype=np.float16).reshape(2, 3),
                                        "ids": np.array([3, 1], dtype=np.int32)})
    m.save(tmp_path / "m.npz")
    back = Model.load(tmp_path / "m.npz").components
    assert set(back) == {"tagger"}
    assert back["tagger"].meta == {"version": 1, "tags": ["NOUN", "VERB"]}
    a = back["tagger"].arrays
    assert set(a) == {"w", "ids"} and a["w"].dtype == np.float16 and a["ids"].dtype == np.int32
    assert np.array_equal(a["w"], np.arange(6).reshape(2, 3))
