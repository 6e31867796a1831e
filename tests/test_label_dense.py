"""Dense contextual label scores (depparse.features.label_dense): scores against a direct
computation, the labeler's learning of a label that only the vectors tell, storage."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import synthetic
from test_dense import needs_encoder

from depparse.encoding.vocab import Vocabularies
from depparse.errors import ModelError
from depparse.features.dense import DenseArcs, DenseLayout
from depparse.features.label_dense import (
    LabelDense,
    arc_label_features,
    dense_label_scores,
)
from depparse.inference.labeling import Labeler
from depparse.learn.labeler import train_labeler, train_labeler_dense
from depparse.model import Component

D = 8


def _term(scale=3.0):
    layout = DenseLayout(D)
    return DenseArcs(3, np.zeros(D), np.ones(D), scale, layout, np.zeros(layout.size))


def test_scores_equal_direct_computation():
    rng = np.random.default_rng(0)
    n, L = 7, 5
    heads = np.array([-1, 2, 0, 2, 3, 2, 7, 5])
    z = np.vstack([np.zeros(D), rng.normal(size=(n, D))])
    W = rng.normal(size=(2, L, 3 * D))
    pf, k = 1.7, 0.5
    F, dirs = arc_label_features(z, heads, pf, k)
    S = dense_label_scores(F, dirs, W)
    assert np.all(S[0] == 0)
    for m in range(1, n + 1):
        h = heads[m]
        f = k * np.concatenate([z[m], z[h], pf * z[h] * z[m]])
        e = int(m > h)
        assert dirs[m] == e
        for y in range(L):
            assert S[m, y] == pytest.approx(W[e, y] @ f)
    assert np.all(F[[m for m in range(1, n + 1) if heads[m] == 0], D:] == 0)  # z_0 = 0


def _vector_labelled(n_sent, seed):
    """Synthetic trees whose every label is ``hi`` or ``lo`` by the sign of the modifier's
    vector's first coordinate: nothing the sparse features see tells them apart."""
    rng = np.random.default_rng(seed)
    sents, vecs = [], []
    for s in synthetic.sentences(n_sent, seed=seed):
        x = rng.normal(size=(s.n, D))
        for m in range(1, s.n + 1):
            s.rels[m] = "hi" if x[m - 1, 0] > 0 else "lo"
        sents.append(s)
        vecs.append(x)
    return sents, vecs


def _encode(v, sents, vecs):
    return [dataclasses.replace(v.encode(s), vectors=x) for s, x in zip(sents, vecs, strict=True)]


def test_labeler_learns_what_only_the_vectors_tell():
    """Measured when written (8 epochs): the sparse labeler gets 48.9% of such labels right
    (chance), the dense one 94.6% (a linear rule, learned by perceptron steps)."""
    tr, trv = _vector_labelled(150, 1)
    te, tev = _vector_labelled(40, 2)
    v = Vocabularies.build(tr)
    enc, enc_te = _encode(v, tr, trv), _encode(v, te, tev)
    heads = [np.asarray(s.heads) for s in tr]
    rels = [s.rels for s in tr]
    term = _term()

    def accuracy(lab):
        ok = total = 0
        for s, e in zip(te, enc_te, strict=True):
            got = lab.label_strings(e, np.asarray(s.heads))
            ok += sum(got[m] == s.rels[m] for m in range(1, s.n + 1))
            total += s.n
        return ok / total

    w0 = train_labeler(enc, heads, rels, v, bits=14, epochs=8)
    w, ld = train_labeler_dense(enc, heads, rels, v, term, bits=14, epochs=8)
    sparse, dense = accuracy(Labeler(v, w0, 14)), accuracy(Labeler(v, w, 14, dense=ld))
    print(f"sparse {sparse:.3f}, dense {dense:.3f}")
    assert sparse < 0.75
    assert dense > 0.85


def test_zero_factor_is_the_sparse_labeler():
    tr, trv = _vector_labelled(60, 3)
    v = Vocabularies.build(tr)
    enc = _encode(v, tr, trv)
    heads = [np.asarray(s.heads) for s in tr]
    rels = [s.rels for s in tr]
    w0 = train_labeler(enc, heads, rels, v, bits=14, epochs=2)
    w, ld = train_labeler_dense(enc, heads, rels, v, _term(), bits=14, epochs=2, factor=0.0)
    assert np.array_equal(w, w0)
    assert not ld.W.any()


def test_component_round_trip_and_errors():
    rng = np.random.default_rng(4)
    term = _term()
    ld = LabelDense(rng.normal(size=(2, 9, 3 * D)), 0.5, term)
    meta, arrays = ld.to_component()
    back = LabelDense.from_component(Component(meta, arrays), term, 9)
    assert np.array_equal(back.W, ld.W.astype(np.float16).astype(np.float64))
    assert back.factor == 0.5
    with pytest.raises(ModelError, match="9 labels, the model 10"):
        LabelDense.from_component(Component(meta, arrays), term, 10)
    with pytest.raises(ModelError, match="no dense arc term"):
        LabelDense.from_component(Component(meta, arrays), None, 9)
    with pytest.raises(ModelError, match="format version"):
        LabelDense.from_component(Component({**meta, "version": 7}, arrays), term, 9)


def test_labeler_dense_needs_the_dense_arc_term():
    from depparse import train
    from depparse.errors import ConfigError

    with pytest.raises(ConfigError, match="needs dense_layer > 0"):
        train(synthetic.sentences(5, seed=1), None, labeler_dense=1.0, progress=False)


@needs_encoder
def test_trained_model_with_labeler_dense_round_trip(tmp_path):
    """train --labeler-dense stores the term; the loaded model labels as the one in memory."""
    from depparse import load, train
    from depparse.inference.parser import Parser

    tr = synthetic.sentences(60, seed=7)
    te = synthetic.sentences(15, seed=8)
    m = train(tr, None, model="sib", bits=14, pruner_bits=12, labeler_bits=14, epochs=2,
              labeler_epochs=3, progress=False, pruner_folds=0, tokenizer=False, tagger=False,
              dense_layer=2, labeler_dense=1.0)
    assert m.components["label_dense"].arrays["W"].shape == (2, len(m.vocab.deprel), 3 * 384)
    m.save(tmp_path / "m.npz")
    p, mem = load(tmp_path / "m.npz"), Parser(m)
    assert p.engine.labeler.dense is not None
    got = [list(s.rels) for s in p.parse(te)]
    assert got == [list(s.rels) for s in mem.parse(te)]
    right = sum(a == b for s, g in zip(te, got, strict=True) for a, b in zip(s.rels[1:], g[1:],
                                                                            strict=True))
    assert right / sum(s.n for s in te) > 0.95


def test_buckets_are_the_dense_arc_terms():
    from depparse.features.dense import BUCKETS, arc_bucket
    from depparse.features.label_dense import arc_bucket_of

    heads = np.array([-1, 3, 0, 2, 2, 3, 3, 1, 1, 1, 2, 2, 2, 12, 2])
    b11, b2 = arc_bucket_of(heads, BUCKETS), arc_bucket_of(heads, 2)
    for m in range(1, len(heads)):
        assert b11[m] == arc_bucket(heads[m], m)
        assert b2[m] == int(m > heads[m])
    with pytest.raises(ValueError):
        arc_bucket_of(heads, 5)
