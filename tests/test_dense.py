"""Dense contextual arc scores (depparse/features/dense.py, depparse/learn/dense_training.py): NumPy
oracles, part scores = w . phi + dense, lazy = eager averaging, model files, and models
without the dense term parsing exactly as before."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import synthetic
from fixtures_models import needs_encoder

from depparse.api import load, train
from depparse.config import ModelConfig
from depparse.conllu import read_sentence
from depparse.decode.dual import _primal_score
from depparse.encoding.vocab import Vocabularies
from depparse.errors import ConfigError, ModelError
from depparse.features.dense import (
    BUCKETS,
    DenseArcs,
    DenseLayout,
    dense_arc_gradient,
    dense_arc_sum,
)
from depparse.features.parts import ALL_TEMPLATES, all_arcs, structure_features
from depparse.features.scoring import build_parts
from depparse.inference.parser import Parser
from depparse.learn.dense_training import DenseLearner
from depparse.learn.perceptron import Trainer, gold_structure
from depparse.learn.updates import update
from depparse.model import Model

DATA = Path(__file__).parent / "data"


def _naive_bucket(h, m):
    if h == 0:
        return 10
    a = abs(m - h)
    db = 0 if a == 1 else 1 if a == 2 else 2 if a <= 4 else 3 if a <= 8 else 4
    return (5 if m > h else 0) + db


def _naive_scores(vectors, mean, std, scale, sec, keep):
    """The module docstring's formula, written out with NumPy, one arc at a time."""
    n, D = vectors.shape
    m16 = mean.astype(np.float16).astype(np.float64)
    s16 = np.maximum(std, 1e-3).astype(np.float16).astype(np.float64)
    z = np.zeros((n + 1, D))
    z[1:] = scale * (vectors - m16) / (s16 * np.sqrt(D))
    out = np.zeros((n + 1, n + 1))
    for h in range(n + 1):
        for m in range(n + 1):
            if not keep[h, m]:
                continue
            b = _naive_bucket(h, m)
            v = sec["head"][b] @ z[h] + sec["mod"][b] @ z[m]
            v += np.sqrt(D) / scale * (sec["prod"][b] * z[h] * z[m]).sum()
            out[h, m] = v
    return out


def _random_term(rng, n=13, D=24, scale=1.7, constant_dim=True):
    layout = DenseLayout(D)
    theta = rng.normal(size=layout.size)
    mean = rng.normal(size=D)
    std = rng.uniform(0.2, 2.0, size=D)
    if constant_dim:
        std[0] = 0.0  # a constant dimension: floored, not a division by zero
    vectors = rng.normal(size=(n, D)) * 3 + 1
    return DenseArcs(3, mean, std, scale, layout, theta), vectors, mean, std


class _Enc:
    def __init__(self, vectors):
        self.vectors = vectors
        self.n = vectors.shape[0]


def test_dense_scores_equal_numpy_formula():
    rng = np.random.default_rng(0)
    term, vectors, mean, std = _random_term(rng)
    n = vectors.shape[0]
    keep = rng.random((n + 1, n + 1)) < 0.6
    keep[:, 0] = False
    np.fill_diagonal(keep, False)
    want = _naive_scores(vectors, mean, std, term.scale, term.layout.split(term.theta), keep)
    got = term.scores(_Enc(vectors), keep)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    assert np.abs(want).max() > 1  # not trivially zero
    # every bucket occurs (root arcs, both directions, all distances)
    assert {_naive_bucket(h, m) for h in range(n + 1) for m in range(1, n + 1) if h != m} \
        == set(range(BUCKETS))


def test_dense_gradient_is_the_derivative():
    """The update direction is d dense / d theta, equal to central differences."""
    rng = np.random.default_rng(1)
    term, vectors, _, _ = _random_term(rng, n=9, D=8, constant_dim=False)
    z = term.standardise(vectors)
    heads = np.array([0, 3, 3, 7, 2], dtype=np.int64)
    mods = np.array([3, 1, 5, 2, 9], dtype=np.int64)
    sign = np.array([1.0, 1.0, -1.0, -1.0, 1.0])
    B = term.layout.buckets

    def f(theta):
        return dense_arc_sum(z, theta, B, term.pf, heads, mods, sign)

    g = np.zeros_like(term.theta)
    dense_arc_gradient(z, B, term.pf, heads, mods, sign, g)
    eps = 1e-6
    num = np.empty_like(g)
    for i in range(g.shape[0]):
        e = np.zeros_like(g)
        e[i] = eps
        num[i] = (f(term.theta + e) - f(term.theta - e)) / (2 * eps)
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-6)
    assert np.abs(g).max() > 0.1
    # the sum equals the per-arc scores
    keep_scores = term.scores(_Enc(vectors), np.ones((10, 10), dtype=bool))
    assert f(term.theta) == pytest.approx(float((sign * keep_scores[heads, mods]).sum()))


HAND = """# text = The old dog barked loudly .
1\tThe\tthe\tDET\t_\tDefinite=Def|PronType=Art\t3\tdet\t_\t_
2\told\told\tADJ\t_\tDegree=Pos\t3\tamod\t_\t_
3\tdog\tdog\tNOUN\t_\tNumber=Sing\t4\tnsubj\t_\t_
4\tbarked\tbark\tVERB\t_\tMood=Ind|Tense=Past\t0\troot\t_\t_
5\tloudly\tloudly\tADV\t_\t_\t4\tadvmod\t_\t_
6\t.\t.\tPUNCT\t_\t_\t4\tpunct\t_\t_

"""


@pytest.mark.parametrize("order", [0, 1, 2])
def test_part_scores_equal_sparse_plus_dense(order):
    """With the dense term, every tree's score from the part table is w . phi(tree) plus
    theta . f(tree) (exactly the features the update adds)."""
    s = read_sentence(HAND)
    v = Vocabularies.build([s])
    e = v.encode(s)
    rng = np.random.default_rng(10 + order)
    e.vectors = rng.normal(size=(e.n, 16))
    bits = 14
    w = rng.normal(size=1 << bits)
    layout = DenseLayout(16)
    term = DenseArcs(2, np.zeros(16), np.ones(16), 2.0, layout, rng.normal(size=layout.size))
    N = e.n + 1
    keep = all_arcs(N)
    pt = build_parts(e, keep, w, bits, order, term)
    plain = build_parts(e, keep, w, bits, order)
    np.testing.assert_allclose(pt.arc[keep] - plain.arc[keep], term.scores(e, keep)[keep],
                               atol=1e-12)
    assert np.isneginf(pt.arc[~keep]).all()
    gpos = np.full((N, N), -1, dtype=np.int64)
    for h in range(N):
        for gi in range(pt.gp_len[h]):
            if pt.gp[pt.gp_off[h] + gi] >= 0:
                gpos[h, pt.gp[pt.gp_off[h] + gi]] = gi
    for heads in (np.asarray(s.heads, dtype=np.int64), np.array([0, 2, 4, 2, 0, 4, 5]),
                  np.array([0, 0, 1, 1, 1, 3, 3])):
        score = _primal_score(pt.part_arrays(), heads, gpos)
        mods, gpar = gold_structure(heads)
        only = np.ones(N, dtype=bool)
        idx = structure_features(*e.arrays(), np.uint64((1 << bits) - 1), ALL_TEMPLATES, order,
                                 mods, gpar, only)
        phi = np.zeros(1 << bits)
        update(phi, np.zeros(1 << bits), 0.0, idx, 1.0)
        learner = DenseLearner(term)
        f, margin = learner.difference(e, mods, np.zeros_like(mods), only)
        assert margin == pytest.approx(float(f @ term.theta), abs=1e-9)
        assert score == pytest.approx(phi @ w + f @ term.theta, abs=1e-9)
        assert f.any()


def _synthetic_with_vectors(n, seed, D=12):
    tr = synthetic.sentences(n, seed=seed)
    vocab = Vocabularies.build(tr)
    rng = np.random.default_rng(seed)
    # vectors that carry each word's gold head direction, as an encoder's might
    enc = []
    for s in tr:
        e = vocab.encode(s)
        x = rng.normal(size=(e.n, D))
        x[:, 0] += 3 * np.sign(np.asarray(s.heads[1:]) - np.arange(1, e.n + 1))
        e.vectors = x
        enc.append(e)
    return tr, vocab, enc


@pytest.mark.parametrize("model", ["sib", "gs"])
def test_lazy_average_of_dense_parameters_equals_eager_average(model):
    tr, vocab, enc = _synthetic_with_vectors(40, 5)
    cfg = ModelConfig(model=model, bits=14, pruner_bits=14, dense_layer=2, dense_scale=2.0)
    trainer = Trainer(cfg, vocab, pruner=None)
    trainer.dense = DenseLearner.start(cfg, [e.vectors for e in enc], seed=0)
    heads = [np.asarray(s.heads, dtype=np.int64) for s in tr]
    total = np.zeros_like(trainer.dense.theta)
    total_w = np.zeros(1 << cfg.bits)
    steps = 0
    start = trainer.dense.theta.copy()
    for _ in range(3):
        for i in np.random.default_rng([0, trainer.epoch]).permutation(len(tr)):
            trainer.step(enc[i], heads[i], all_arcs(enc[i].n + 1))
            total += trainer.dense.theta
            total_w += trainer.w
            steps += 1
        trainer.epoch += 1
    moved = trainer.dense.scorer.layout.split(trainer.dense.theta - start)
    assert set(moved) == {"head", "mod", "prod"}
    assert all(np.abs(moved[k]).sum() > 0 for k in moved)
    np.testing.assert_allclose(trainer.dense_scorer().theta, total / steps, rtol=0, atol=1e-9)
    np.testing.assert_allclose(trainer.averaged(), total_w / steps, rtol=0, atol=1e-9)


def test_dense_term_fits_signal_in_vectors():
    """A signal only the vectors carry (each word's vector tells its head's direction) is
    learned when the sparse features cannot (16 hashed weights): the dense term alone then
    prefers each gold arc to the arc of the same length on the other side."""
    tr, vocab, enc = _synthetic_with_vectors(60, 6)
    cfg = ModelConfig(model="mst", bits=4, dense_layer=2, dense_scale=3.0)
    trainer = Trainer(cfg, vocab, pruner=None)
    trainer.dense = DenseLearner.start(cfg, [e.vectors for e in enc], seed=0)
    heads = [np.asarray(s.heads, dtype=np.int64) for s in tr]
    for _ in range(2):
        for i in range(len(tr)):
            trainer.step(enc[i], heads[i], all_arcs(enc[i].n + 1))
    term = trainer.dense_scorer()
    right = wrong = 0
    for e, h in zip(enc, heads, strict=True):
        sc = term.scores(e, all_arcs(e.n + 1))
        for m in range(1, e.n + 1):
            if h[m] == 0:
                continue
            gold_side = sc[h[m], m]
            mirror = 2 * m - h[m]  # the same distance on the other side
            if 1 <= mirror <= e.n:
                right += gold_side > sc[mirror, m]
                wrong += gold_side <= sc[mirror, m]
    assert right > 5 * wrong  # 219 against 28 when written; chance is 1 to 1


def test_dense_component_round_trip_and_checks(tmp_path):
    rng = np.random.default_rng(2)
    term, vectors, _, _ = _random_term(rng)
    back = DenseArcs.from_component(*term.to_component())
    assert back.layer == 3 and back.layout == term.layout and back.scale == term.scale
    np.testing.assert_array_equal(back.theta, term.theta.astype(np.float16))
    np.testing.assert_array_equal(back.mean, term.mean)
    np.testing.assert_array_equal(back.std, term.std)
    keep = all_arcs(vectors.shape[0] + 1)
    np.testing.assert_allclose(back.scores(_Enc(vectors), keep), term.scores(_Enc(vectors), keep),
                               atol=0.05 * np.abs(term.scores(_Enc(vectors), keep)).max())
    meta, arrays = term.to_component()
    with pytest.raises(ModelError, match="format version"):
        DenseArcs.from_component({**meta, "version": 99}, arrays)
    with pytest.raises(ModelError, match="corrupt"):
        DenseArcs.from_component(meta, {k: v for k, v in arrays.items() if k != "prod"})
    with pytest.raises(ModelError, match="corrupt"):
        DenseArcs.from_component(meta, {**arrays, "sib": np.zeros((2, 24), np.float16)})


def test_retired_dense_parts_are_refused_naming_their_patch():
    """A model file written before the low-rank tensor and the sibling and grandparent
    sections were retired loads where it holds them off (rank 0: empty U, V, W), and is
    refused, naming the patch, where it holds them; so are the settings and a checkpoint."""
    rng = np.random.default_rng(3)
    term, vectors, _, _ = _random_term(rng)
    meta, arrays = term.to_component()
    empty = {"U": np.zeros((0, 24), np.float16), "V": np.zeros((0, 24), np.float16),
             "W": np.zeros((BUCKETS, 0), np.float16)}
    old = DenseArcs.from_component({**meta, "rank": 0}, {**arrays, **empty})
    np.testing.assert_array_equal(old.theta, term.theta.astype(np.float16))
    patch = "dense-tensor-and-higher-parts.patch"
    for bad_meta, bad in (({**meta, "rank": 2}, {"U": np.ones((2, 24)), "V": np.ones((2, 24)),
                                                  "W": np.ones((BUCKETS, 2))}),
                          ({**meta, "version": 2}, {"sib": np.ones((2, 24)),
                                                    "grand": np.ones((4, 24))})):
        with pytest.raises(ModelError, match=patch):
            DenseArcs.from_component(bad_meta, {**arrays, **bad})
    for field, value in (("dense_rank", 2), ("dense_parts", "all")):
        with pytest.raises(ConfigError, match=patch):
            ModelConfig.from_dict({"model": "gs", "dense_layer": 3, field: value})
    off = ModelConfig.from_dict({"model": "gs", "dense_layer": 3, "dense_rank": 0,
                                 "dense_parts": "arc"})
    assert off == ModelConfig.from_dict({"model": "gs", "dense_layer": 3})
    learner = DenseLearner(term)
    state_meta, state_arrays = learner.state()
    for extra in ({"rank": 0, "higher": False}, {}):
        back = DenseLearner.from_state({**state_meta, **extra}, state_arrays)
        np.testing.assert_array_equal(back.theta, term.theta)
    with pytest.raises(ConfigError, match=patch):
        DenseLearner.from_state({**state_meta, "rank": 2}, state_arrays)


# ---------------------------------------------------------------------------------------
# with the encoder: training, model files, resume


@needs_encoder
def test_dense_model_trains_saves_loads_and_resumes(tmp_path):
    tr = synthetic.sentences(50, seed=7)
    te = synthetic.sentences(20, seed=8)
    kw = dict(model="gs", bits=14, pruner_bits=12, seed=4, progress=False, pruner_folds=2,
              tokenizer=False, labeler_epochs=0, dense_layer=2)
    full = train(tr, None, epochs=3, checkpoint=tmp_path / "a.ckpt.npz", **kw)
    train(tr, None, epochs=1, checkpoint=tmp_path / "b.ckpt.npz", **kw)
    resumed = train(tr, None, epochs=3, checkpoint=tmp_path / "b.ckpt.npz", resume=True, **kw)
    assert np.array_equal(full.weights, resumed.weights)
    for k, a in full.components["dense"].arrays.items():
        assert np.array_equal(a, resumed.components["dense"].arrays[k]), k
    assert full.vocab.vector_layer == 2
    # file round trip: the loaded parser scores and parses as the one in memory
    full.save(tmp_path / "m.npz")
    p = load(tmp_path / "m.npz")
    mem = Parser(full)
    a, b = p.engine, mem.engine
    assert a.dense is not None and a.dense.layout == DenseLayout(384)
    for s in te[:5]:
        e = p.model.vocab.encode(s)
        assert e.vectors.shape == (s.n, 384)
        keep = a.keep_mask(e)
        np.testing.assert_array_equal(a.dense.scores(e, keep), b.dense.scores(e, keep))
        np.testing.assert_allclose(a.part_table(e, keep).arc, b.part_table(e, keep).arc,
                                   atol=0.01)
    assert [s.heads.tolist() for s in p.parse(te)] == [s.heads.tolist() for s in mem.parse(te)]
    # a model whose configuration asks for the term but has no component is refused
    broken = Model(full.config, full.vocab, full.weights, full.pruner)
    with pytest.raises(ModelError, match="no 'dense' component"):
        Parser(broken)


@needs_encoder
def test_encoder_runs_once_for_classes_and_dense_vectors(monkeypatch):
    from depparse.encoding import minilm

    s = synthetic.sentences(1, seed=3)[0]
    enc = minilm.get_encoder(3)
    x2, x3 = enc.layer_vectors(s.forms[1:], (2, 3))
    np.testing.assert_array_equal(x3, enc.word_vectors(s.forms[1:]))
    np.testing.assert_array_equal(x2, minilm.get_encoder(2).word_vectors(s.forms[1:]))
    v = Vocabularies.build([s])
    v.vector_layer = 2
    calls = []
    real = minilm.MiniLM._forward
    monkeypatch.setattr(minilm.MiniLM, "_forward",
                        lambda self, ids, keep=None: calls.append(1) or real(self, ids, keep))
    e = v.encode(s)
    np.testing.assert_array_equal(e.vectors, x2)
    assert len(calls) == 1
    assert json.loads(json.dumps(v.to_json()))["vector_layer"] == 2
    assert Vocabularies.from_json(v.to_json()).vector_layer == 2


# ---------------------------------------------------------------------------------------
# models without the dense term: exactly as before (tests/data/parse_fixture_*, written by
# tests/data/parse_fixture.py with the code before dense arc scores)


@pytest.mark.parametrize("name", ["plain", pytest.param("context", marks=needs_encoder)])
def test_models_without_dense_term_parse_as_before(name):
    fixture = json.loads((DATA / "parse_fixture.json").read_text())[name]
    p = load(DATA / f"parse_fixture_{name}.npz")
    assert p.engine.dense is None and p.model.vocab.vector_layer == 0
    test = synthetic.sentences(30, seed=12)
    h = hashlib.sha256()
    for s in test:
        e = p.model.vocab.encode(s)
        assert e.vectors is None
        t = p.engine.part_table(e)
        h.update(t.arc.tobytes())
        h.update(t.tab.tobytes())
    assert h.hexdigest() == fixture["parts_sha256"]
    text = p.parse_conllu(synthetic.conllu_text(30, seed=12))
    assert text == (DATA / f"parse_fixture_{name}.conllu").read_text(encoding="utf-8")
    assert fixture["wrong_heads"] > 0  # the fixture model makes mistakes: scores matter
