"""Dense arc scores in the pruner (train --pruner-dense): the gradient against finite
differences of the log-likelihood enumerated over all trees, the training loop, model files."""

from __future__ import annotations

import numpy as np
import pytest
import synthetic
from naive import all_trees
from test_dense import needs_encoder

from depparse.decode.marginals import arc_marginals
from depparse.features.dense import BUCKETS, DenseArcs, DenseLayout
from depparse.learn.pruner import fresh_pruner_dense, pruner_dense_gradient

D = 6


def _term(rng):
    layout = DenseLayout(D)
    return DenseArcs(3, np.zeros(D), np.ones(D), 3.0, layout, rng.normal(size=layout.size) * 0.3)


def _log_lik(base, z, term, heads):
    """log p(heads) under base + dense scores, by enumerating every single-root tree."""
    N = base.shape[0]
    s = base.copy()
    from depparse.features.dense import add_dense_scores

    add_dense_scores(z, term.theta, BUCKETS, term.pf, np.ones((N, N), dtype=bool), s)
    trees = all_trees(N - 1, single_root=True)
    m = np.arange(1, N)
    tot = np.array([s[t[1:], m].sum() for t in trees])
    mx = tot.max()
    return s[heads[1:], m].sum() - (mx + np.log(np.exp(tot - mx).sum())), s


@pytest.mark.parametrize("seed", range(4))
def test_gradient_equals_finite_differences(seed):
    rng = np.random.default_rng(seed)
    n = 4
    N = n + 1
    z = np.vstack([np.zeros(D), rng.normal(size=(n, D))])
    base = rng.normal(size=(N, N))
    term = _term(rng)
    heads = all_trees(n, single_root=True)[int(rng.integers(0, 20))]
    ll, s = _log_lik(base, z, term, heads)
    grad = pruner_dense_gradient(z, term, arc_marginals(s), heads)
    eps = 1e-6
    for j in rng.choice(term.theta.shape[0], size=25, replace=False):
        th = term.theta.copy()
        term.theta[j] += eps
        up = _log_lik(base, z, term, heads)[0]
        term.theta[:] = th
        term.theta[j] -= eps
        down = _log_lik(base, z, term, heads)[0]
        term.theta[:] = th
        assert grad[j] == pytest.approx((up - down) / (2 * eps), abs=1e-5)


def test_fresh_term_is_zero_and_linear():
    rng = np.random.default_rng(1)
    t = _term(rng)
    f = fresh_pruner_dense(t)
    assert f.layout == DenseLayout(D) and not f.theta.any()
    assert np.array_equal(f.mean, t.mean) and np.array_equal(f.std, t.std) and f.scale == t.scale


def test_pruner_dense_needs_the_dense_arc_term():
    from depparse import train
    from depparse.errors import ConfigError

    with pytest.raises(ConfigError, match="pruner_dense reads"):
        train(synthetic.sentences(5, seed=1), None, pruner_dense=0.1, progress=False)


@needs_encoder
def test_trained_model_with_pruner_dense(tmp_path):
    """train --pruner-dense stores the term, the loaded parser prunes and parses as the one in
    memory, and a checkpointed run resumes to the same weights."""
    from depparse import load, train
    from depparse.inference.parser import Parser

    tr = synthetic.sentences(50, seed=7)
    te = synthetic.sentences(15, seed=8)
    kw = dict(model="sib", bits=14, pruner_bits=12, labeler_epochs=0, progress=False,
              pruner_folds=2, tokenizer=False, tagger=False, dense_layer=2, pruner_dense=0.1,
              storage="float32")  # (8-bit pruner weights would move marginals at the edge)
    m = train(tr, None, epochs=2, checkpoint=tmp_path / "a.ckpt.npz", **kw)
    assert m.components["pruner_dense"].meta["rank"] == 0
    assert np.abs(m.components["pruner_dense"].arrays["head"]).max() > 0  # it learned
    train(tr, None, epochs=1, checkpoint=tmp_path / "b.ckpt.npz", **kw)
    resumed = train(tr, None, epochs=2, checkpoint=tmp_path / "b.ckpt.npz", resume=True, **kw)
    assert np.array_equal(m.weights, resumed.weights)
    m.save(tmp_path / "m.npz")
    p, mem = load(tmp_path / "m.npz"), Parser(m)
    assert p.engine.pruner_dense is not None
    for s in te:
        e = p.model.vocab.encode(s)
        assert np.array_equal(p.engine.keep_mask(e), mem.engine.keep_mask(e))
    assert [s.heads.tolist() for s in p.parse(te)] == [s.heads.tolist() for s in mem.parse(te)]
