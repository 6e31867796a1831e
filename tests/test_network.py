"""The learned network (depparse/network/biaffine.py, depparse/learn/network_training.py): the NumPy
and JAX forward passes equal to float32 round-off, the loss's gradient against finite
differences, deterministic and bit-identically resumable training, the component's round
trip, part tables holding sparse + learned scores, decoders on them against brute force, and
the whole path in a tiny configuration (train, save, load, parse, every tree proved)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import synthetic
from blas_rows import NETWORK_TOL, SCORE_TOL, assert_rows_equal
from fixtures_models import live_threads
from naive import all_trees, table_score

from depparse.config import TrainConfig
from depparse.learn.network_training import have_jax
from depparse.network.biaffine import (
    Network,
    NetworkSpec,
    arc_scores,
    encode_batch,
    forward,
    init_params,
    label_scores,
    log_softmax_heads,
    numpy_arc_scores,
    numpy_forward,
    numpy_forward_packed,
    numpy_scan,
    tag_scores,
)

needs_jax = pytest.mark.skipif(
    not have_jax(), reason="JAX and optax are not installed (the learned network trains with "
                           "them): pip install 'depparse[learned]'")

SPEC = NetworkSpec(words=30, chars=20, labels=7, tags=6, vec_dim=5, word_dim=6, char_dim=4,
                   char_filters=5, hidden=7, layers=2, arc_dim=8, label_dim=3, max_chars=6)
#: SPEC with the multilingual encoder's mix of 3 layers (of 5 dimensions here)
MIX_SPEC = dataclasses.replace(SPEC, mix_layers=3, mix_dim=5, mix_proj=4)


def _items(seed=0, lengths=(4, 7, 2), spec=SPEC):
    rng = np.random.default_rng(seed)
    out = []
    for n in lengths:
        words = np.concatenate([[1], rng.integers(2, spec.words, n)])
        forms = ["<root>"] + ["".join(rng.choice(list("abcdeéxyz"), rng.integers(1, 10)))
                              for _ in range(n)]
        item = (words, forms, rng.standard_normal((n, spec.vec_dim)).astype(np.float32))
        if spec.mix_layers:
            item += (rng.standard_normal((n, spec.mix_layers, spec.mix_dim)).astype(np.float16),)
        out.append(item)
    return out


def _params(seed=0, spec=SPEC):
    p = init_params(spec, seed)
    rng = np.random.default_rng([seed, 1])
    # the zero-initialised bilinear forms and biases made non-zero, so that every term counts
    return {k: (v + 0.3 * rng.standard_normal(v.shape)).astype(np.float32) for k, v in p.items()}


def _numpy_outputs(p, batch, heads, packed=False, spec=SPEC):
    r = numpy_forward(p, batch, spec) if packed else forward(np, numpy_scan, p, batch, spec)
    return (log_softmax_heads(np, arc_scores(np, p, r, batch["lengths"])),
            label_scores(np, p, r, heads), tag_scores(np, p, r))


def test_padding_and_batching_do_not_change_a_sentence():
    """A sentence's outputs are the same alone and in a padded batch with others (the
    backward LSTM reads it within its own length)."""
    p = _params()
    index = {c: i + 3 for i, c in enumerate("abcdeéxyz")}
    items = _items()
    batch = encode_batch(items, SPEC, index, T=10)
    heads = np.zeros((3, 10), dtype=np.int64)
    lp, ls, ts = _numpy_outputs(p, batch, heads)
    for b, it in enumerate(items):
        one = encode_batch([it], SPEC, index)
        N = len(it[0])
        lp1, ls1, ts1 = _numpy_outputs(p, one, heads[:1, :N])
        np.testing.assert_allclose(lp[b, :N, :N], lp1[0], atol=2e-5)
        np.testing.assert_allclose(ts[b, :N], ts1[0], atol=2e-5)
        np.testing.assert_allclose(ls[b, :N], ls1[0], atol=2e-5)


def _padded_and_packed(p, batch, spec):
    """``(forward, numpy_forward, arc_scores of forward, numpy_arc_scores of the packed
    pass)`` of a batch: the padded definition and the parse path's two fast versions."""
    want = forward(np, numpy_scan, p, batch, spec)
    got = numpy_forward(p, batch, spec)
    x, at = numpy_forward_packed(p, batch, spec)
    return (want, got, arc_scores(np, p, want, batch["lengths"]),
            numpy_arc_scores(p, x, at, batch["words"].shape, batch["lengths"]))


def test_numpy_forward_is_forward_on_the_real_positions():
    """The parser's forward pass (packed, both directions in one scan, the real positions
    only) against the shared definition run with NumPy: equal on every real position, zero
    beyond; batches of one sentence, of a one-word sentence, of equal lengths, padded wider
    than needed."""
    p = _params(4)
    index = {c: i + 3 for i, c in enumerate("abcdeéxyz")}
    for lengths, T in (((4, 7, 2), None), ((5,), None), ((1, 6), 9), ((3, 3, 3), None),
                       ((1,), None)):
        batch = encode_batch(_items(5, lengths), SPEC, index, T)
        want, got, s_want, s_got = _padded_and_packed(p, batch, SPEC)
        for b, N in enumerate(batch["lengths"]):
            # to float32 round-off: at these tiny sizes BLAS products take a small-matrix
            # path whose rows may depend on the number of rows (below: bit for bit)
            np.testing.assert_allclose(got[b, :N], want[b, :N], rtol=0, atol=1e-6)
            assert not got[b, N:].any()
            np.testing.assert_allclose(s_got[b, :N, :N], s_want[b, :N, :N], rtol=0, atol=1e-5)


def _shipped_hidden() -> int:
    """The BiLSTM's units per direction in the shipped English model's network."""
    with np.load(Path(__file__).resolve().parents[1] / "models" / "en_ewt_gs.npz") as z:
        # stored as float16 (network component version 1) or int8 codes (version 2: q)
        w = z["network.p.lstm0f_w"] if "network.p.lstm0f_w" in z.files else z[
            "network.q.lstm0f_w"]
        return int(w.shape[1]) // 4


@pytest.mark.parametrize("hidden", sorted({TrainConfig().learned_hidden, _shipped_hidden()}))
def test_numpy_forward_bit_for_bit_at_the_shipped_sizes(hidden):
    """At the shipped model's sizes (and the default units of ``train --learned-hidden``) the
    packed pass and its arc scores give the very bits of the padded ones (the parser's
    outputs do not change with them): every product either keeps its shape or is one whose
    rows OpenBLAS's sgemm computes alike whatever their number (numpy_forward's note), where
    this machine's sgemm does that (tests/blas_rows.py; elsewhere to float32 round-off)."""
    spec = NetworkSpec(words=50, chars=20, labels=5, tags=4, vec_dim=384, word_dim=100,
                       char_dim=32, char_filters=100, hidden=hidden, layers=2, arc_dim=256,
                       label_dim=8, max_chars=16)
    rng = np.random.default_rng(7)
    p = {k: (v + 0.1 * rng.standard_normal(v.shape)).astype(np.float32)
         for k, v in init_params(spec, 7).items()}
    index = {c: i + 3 for i, c in enumerate("abcdeéxyz")}
    items = []
    for n in (1, 3, 9, 9, 20, 25, 4, 2, 30, 12, 17, 6, 1, 15, 16, 40):
        forms = ["<root>"] + ["".join(rng.choice(list("abcdeéxyz"), rng.integers(1, 20)))
                              for _ in range(n)]
        items.append((np.concatenate([[1], rng.integers(2, 50, n)]), forms,
                      rng.standard_normal((n, 384)).astype(np.float32)))
    for batch_items in (items, items[:2], items[5:6], items[-4:], items[1:8]):
        batch = encode_batch(batch_items, spec, index)
        want, got, s_want, s_got = _padded_and_packed(p, batch, spec)
        for b, N in enumerate(batch["lengths"]):
            assert_rows_equal(got[b, :N], want[b, :N], NETWORK_TOL)
            assert_rows_equal(s_got[b, :N, :N], s_want[b, :N, :N], SCORE_TOL)


@needs_jax
@pytest.mark.parametrize("spec", [SPEC, MIX_SPEC], ids=["words", "encoder mix"])
def test_numpy_and_jax_forward_agree(spec):
    """One definition of the maths, two array modules: equal to float32 round-off."""
    import jax
    import jax.numpy as jnp

    p = _params(1, spec)
    index = {c: i + 3 for i, c in enumerate("abcdeéxyz")}
    batch = encode_batch(_items(1, spec=spec), spec, index, T=9)
    heads = np.random.default_rng(0).integers(0, 3, (3, 9))
    want = _numpy_outputs(p, batch, heads, spec=spec)
    packed = _numpy_outputs(p, batch, heads, packed=True, spec=spec)
    jp = {k: jnp.asarray(v) for k, v in p.items()}
    jb = {k: jnp.asarray(v) for k, v in batch.items()}
    r = forward(jnp, jax.lax.scan, jp, jb, spec)
    got = (log_softmax_heads(jnp, arc_scores(jnp, jp, r, jb["lengths"])),
           label_scores(jnp, jp, r, jnp.asarray(heads)), tag_scores(jnp, jp, r))
    for name, a, a2, b in zip(("arcs", "labels", "tags"), want, packed, got, strict=True):
        ok = np.asarray(a) > -1e8  # the impossible arcs are -1e9 - logsumexp in both
        np.testing.assert_allclose(np.asarray(b)[ok], np.asarray(a)[ok], rtol=1e-5, atol=1e-5)
        for k, N in enumerate(batch["lengths"]):  # the parser's pass, on the real positions
            real = np.s_[k, :N, :N] if name == "arcs" else np.s_[k, :N]
            np.testing.assert_allclose(np.asarray(b)[real][ok[real]], a2[real][ok[real]],
                                       rtol=1e-5, atol=1e-5)


def _gold(items, seed=0):
    rng = np.random.default_rng([seed, 5])
    out = []
    for w, *_ in items:
        N = len(w)
        heads = np.array([0] + [int(rng.integers(0, N)) for _ in range(N - 1)])
        heads[1:][heads[1:] == np.arange(1, N)] = 0
        out.append((heads, rng.integers(0, SPEC.labels, N), rng.integers(0, SPEC.tags, N)))
    return out


@needs_jax
# 11 s each, XLA's compilation of the float64 gradient (measured); the encoder mix's network
# has every parameter of the other and more, so the plain one is in the slow suite
@pytest.mark.parametrize("spec", [pytest.param(SPEC, marks=pytest.mark.slow), MIX_SPEC],
                         ids=["words", "encoder mix"])
def test_loss_gradient_matches_finite_differences(spec):
    """The training loss's gradient (jax.grad through the shared forward pass) against central
    differences, in float64, for a sample of coordinates of every parameter (the encoder
    mix's weights, scale and projection among them)."""
    import jax
    import jax.numpy as jnp

    from depparse.learn.network_training import NetworkTrainer

    items = _items(2, spec=spec)
    gold = _gold(items)
    with jax.enable_x64(True):
        net = Network(spec, _params(2, spec), list("abcdeéxyz"), np.zeros(5), np.ones(5))
        t = NetworkTrainer(net, dropout=0.0, word_dropout=0.0)
        loss = t._loss_fn()
        _, batch = next(t.batches(items, gold))
        batch = {k: jnp.asarray(v) for k, v in batch.items()}
        p64 = {k: jnp.asarray(v, dtype=jnp.float64) for k, v in net.params.items()}
        key = jax.random.PRNGKey(0)
        vg = jax.jit(jax.value_and_grad(lambda q: loss(q, batch, key)))  # one compilation

        def f(q):
            return vg(q)[0]

        grads = vg(p64)[1]
        rng = np.random.default_rng(3)
        eps = 1e-6
        for name, v in p64.items():
            flat = np.asarray(v).ravel()
            for j in rng.choice(flat.size, min(3, flat.size), replace=False):
                if name == "word" and j // SPEC.word_dim not in set(
                        np.asarray(batch["words"]).ravel()):
                    continue
                d = np.zeros_like(flat)
                d[j] = eps
                up = dict(p64, **{name: jnp.asarray((flat + d).reshape(v.shape))})
                dn = dict(p64, **{name: jnp.asarray((flat - d).reshape(v.shape))})
                fd = (float(f(up)) - float(f(dn))) / (2 * eps)
                g = float(np.asarray(grads[name]).ravel()[j])
                assert abs(fd - g) <= 1e-6 + 1e-4 * abs(g), (name, j, fd, g)


@needs_jax
def test_training_is_deterministic_and_resumes_bit_identically(tmp_path):
    from depparse.learn.network_training import NetworkTrainer

    items = _items(4, lengths=(3, 5, 4, 6, 2))
    gold = _gold(items, 4)
    chars = list("abcdeéxyz")

    def fresh():
        return NetworkTrainer.fresh(SPEC, chars, np.zeros(5, np.float32),
                                    np.ones(5, np.float32), 1.0, seed=7)

    a = fresh()
    a.fit(items, gold, 3)
    b = fresh()
    ck = tmp_path / "net.ckpt.npz"
    b.fit(items, gold, 2, checkpoint=ck)
    c = NetworkTrainer.load_checkpoint(ck)
    c.fit(items, gold, 3)
    for k in a.params:
        assert np.array_equal(np.asarray(a.params[k]), np.asarray(c.params[k])), k
    assert a.history[-1]["loss"] == c.history[-1]["loss"]
    assert a.history[0]["loss"] != a.history[-1]["loss"]  # it did learn something


@needs_jax
def test_cosine_schedule_anneals_to_zero_and_resumes_bit_identically(tmp_path):
    """The cosine schedule's factor is 1 at the first step, 1/2 half-way and 0 after its
    horizon (so an epoch beyond it moves no parameter); training with it resumes from a
    checkpoint bit-identically, and it trains differently from the constant rate."""
    from depparse.learn.network_training import NetworkTrainer

    items = _items(4, lengths=(3, 5, 4, 6, 2))
    gold = _gold(items, 4)
    chars = list("abcdeéxyz")

    def fresh(**kw):
        return NetworkTrainer.fresh(SPEC, chars, np.zeros(5, np.float32),
                                    np.ones(5, np.float32), 1.0, seed=7, **kw)

    t = fresh(schedule="cosine", horizon=4)
    assert [t.rate(k, 10) for k in (0, 20, 40, 55)] == [1.0, 0.5, 0.0, 0.0]
    assert fresh().rate(39, 10) == 1.0
    assert 0.0 < t.rate(399, 100) < 1e-4  # the last step's is small, not 0

    a = fresh(schedule="cosine", horizon=3)
    a.fit(items, gold, 3)
    b = fresh(schedule="cosine", horizon=3)
    ck = tmp_path / "net.ckpt.npz"
    b.fit(items, gold, 2, checkpoint=ck)
    c = NetworkTrainer.load_checkpoint(ck)
    assert (c.schedule, c.horizon) == ("cosine", 3)
    c.fit(items, gold, 3)
    for k in a.params:
        assert np.array_equal(np.asarray(a.params[k]), np.asarray(c.params[k])), k
    flat = fresh()
    flat.fit(items, gold, 3)
    assert any(not np.array_equal(np.asarray(a.params[k]), np.asarray(flat.params[k]))
               for k in a.params)
    before = {k: np.asarray(v).copy() for k, v in a.params.items()}
    a.fit(items, gold, 4)  # an epoch past the horizon: factor 0
    for k in before:
        assert np.array_equal(before[k], np.asarray(a.params[k])), k
    with pytest.raises(ValueError, match="horizon"):
        fresh(schedule="cosine")


@needs_jax
def test_held_out_scores_come_from_networks_that_did_not_see_the_sentence():
    """The jackknife (``train --learned-folds K``): a sentence's held-out scores do not change
    when its own gold tree does (no network that scores it trained on it, and training is
    deterministic), while the other fold's do; too few sentences for the folds, none."""
    from depparse.config import TrainConfig
    from depparse.encoding.vocab import Vocabularies
    from depparse.learn.network_training import char_vocabulary, gold_ids, held_out_logprobs
    from depparse.network.biaffine import CHAR_SPECIALS

    sents = synthetic.sentences(8, seed=4)
    vocab = Vocabularies.build(sents, 1)
    enc = [vocab.encode(s) for s in sents]
    gold = [gold_ids(vocab, s) for s in sents]
    chars = char_vocabulary(sents)
    spec = NetworkSpec(words=len(vocab.form), chars=len(chars) + CHAR_SPECIALS,
                       labels=len(vocab.deprel), tags=len(vocab.upos), word_dim=6, char_dim=4,
                       char_filters=5, hidden=7, layers=1, arc_dim=8, label_dim=3, max_chars=6)
    net = Network(spec, init_params(spec, 0), chars)
    training = TrainConfig(learned_epochs=2, learned_hidden=7, seed=3)
    held, acc = held_out_logprobs(net, training, enc, gold, 2)
    assert len(held) == len(sents) and 0.0 <= acc <= 100.0
    for lp, e in zip(held, enc, strict=True):
        assert lp.shape == (e.n + 1, e.n + 1)
        np.testing.assert_allclose(np.exp(lp[:, 1:]).sum(0), 1.0, atol=1e-5)  # per word
    changed = list(gold)
    changed[0] = (np.zeros_like(gold[0][0]),) + gold[0][1:]  # every word on the root
    moved, _ = held_out_logprobs(net, training, enc, changed, 2)
    same = [np.array_equal(a, b) for a, b in zip(held, moved, strict=True)]
    assert same[0]  # its scorer never saw its tree (and the same seed gave the same bits)
    assert not all(same)  # the other fold's scorer did
    assert held_out_logprobs(net, training, enc[:3], gold[:3], 2) == (None, None)


def test_a_network_that_pools_first_pieces_is_refused_naming_the_patch():
    """A model file whose network pooled a word's first piece (retired) is a ModelError that
    says which patch brings it back, not a failure at the first parse."""
    from depparse.errors import PATCHES, ModelError

    meta, arrays = Network(SPEC, _params(5), list("abc"), np.zeros(5), np.ones(5),
                           1.0).to_component()
    meta = dict(meta, spec=dict(meta["spec"], mix_pooling="first"))
    with pytest.raises(ModelError, match=f"{PATCHES}/first-piece-pooling.patch"):
        Network.from_component(meta, arrays)


def test_component_round_trip_and_scores():
    net = Network(SPEC, _params(5), list("abcdeéxyz"), np.zeros(5), np.ones(5), 2.0).rounded()
    meta, arrays = net.to_component()
    back = Network.from_component(meta, arrays)
    for k in net.params:
        assert np.array_equal(net.params[k], back.params[k])
    assert back.scale == 2.0 and back.chars == net.chars


def test_a_stored_matrix_is_8_bit_within_half_a_step_of_each_weight():
    """Version 2 of the component: every matrix as int8 codes and a float16 scale per row
    (the row's largest magnitude / 127), each weight restored within half its row's step;
    vectors as float16."""
    from depparse.network.biaffine import restored_params, stored_params

    params = _params(5)
    params["word"][2] = 0.0  # a zero row: codes 0, restored exactly
    arrays = stored_params(params)
    back = restored_params(arrays)
    assert set(back) == set(params)
    for k, a in params.items():
        if a.ndim < 2:
            assert arrays[f"p.{k}"].dtype == np.float16 and f"q.{k}" not in arrays
            assert np.array_equal(back[k], a.astype(np.float16).astype(np.float32))
            continue
        q, sc = arrays[f"q.{k}"], arrays[f"s.{k}"].astype(np.float32)
        assert q.dtype == np.int8 and arrays[f"s.{k}"].dtype == np.float16
        assert sc.shape == a.shape[:-1] + (1,) and int(np.abs(q).max()) <= 127
        assert np.all(np.abs(back[k] - a) <= 0.5 * sc * (1 + 1e-6) + 1e-12), k
        assert np.abs(q).max(axis=-1).max() >= 126  # the scale uses the codes' whole range
    assert not back["word"][2].any()
    # rounding twice is rounding once: a model file re-saved keeps its bits
    again = restored_params(stored_params(back))
    assert all(np.array_equal(again[k], back[k]) for k in back)


def test_a_version_1_network_float16_still_reads_and_a_newer_one_is_refused():
    from depparse.errors import ModelError

    net = Network(SPEC, _params(5), list("abc"), np.zeros(5), np.ones(5), 1.0)
    meta, arrays = net.to_component()
    old = {f"p.{k}": v.astype(np.float16) for k, v in net.params.items()}
    old.update(mean=arrays["mean"], std=arrays["std"])
    back = Network.from_component(dict(meta, version=1), old)
    for k, v in net.params.items():
        assert np.array_equal(back.params[k], v.astype(np.float16).astype(np.float32))
    with pytest.raises(ModelError, match="format version 3 is not supported"):
        Network.from_component(dict(meta, version=3), arrays)


# -- the learned scores in the part tables, and the whole path ----------------------------

TINY = dict(model="gs", learned_scale=1.0, learned_epochs=3, learned_hidden=8,
            learned_layers=1, learned_folds=2, epochs=2, tagger=True,
            tokenizer=False,
            labeler_epochs=1, bits=16, pruner_bits=14, labeler_bits=14, seed=3)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A gs model with a learned network (trained first, then fixed beside the sparse weights
    over Z), trained on 40 synthetic sentences, saved and loaded back: ``(path, parser, dev
    sentences)``."""
    if not have_jax():
        pytest.skip("JAX and optax are not installed (the learned network trains with them): "
                    "pip install 'depparse[learned]'")
    from depparse.api import load, train

    tr, dev = synthetic.sentences(40, seed=1), synthetic.sentences(10, seed=2)
    model = train(tr, dev, progress=False, **TINY)
    path = tmp_path_factory.mktemp("learned") / "m.npz"
    model.save(path)
    return path, load(path), dev


def test_tiny_model_trains_saves_loads_and_proves_every_tree(tiny):
    path, parser, dev = tiny
    assert parser.learned is not None and parser.learned.scale == 1.0
    hist = [h for h in parser.model.info["history"] if "learned_network" in h][0]
    assert len(hist["learned_network"]) == TINY["learned_epochs"]
    folds = [h for h in parser.model.info["history"] if "learned_folds" in h]
    assert [h["learned_folds"] for h in folds] == [2]  # the parser trained on held-out scores
    assert 0.0 <= folds[0]["held_out_heads"] <= 100.0
    results = parser.parse_results(dev)
    assert all(r.optimal for _, r in results)
    uas = np.mean([(p.heads[1:] == g.heads[1:]).mean() for (p, _), g in
                   zip(results, dev, strict=True)])
    assert uas > 0.8, uas  # the synthetic grammar is easy


def test_parse_with_the_network_ahead_is_the_same_as_one_thread(tiny, monkeypatch):
    """threads=2 runs the network's forward passes (a chunk of LEARNED_CHUNK sentences each)
    on the helper thread, ahead of the decoding; the trees, labels, tags, iterations and
    proofs are those of threads=1, and no helper is left when the stream ends or is
    closed."""
    import threading

    from depparse.inference.engine import LEARNED_CHUNK
    from depparse.network import biaffine as network

    _, parser, _ = tiny
    sents = synthetic.sentences(2 * LEARNED_CHUNK + 5, seed=4)  # three chunks
    where = []
    real = network.numpy_forward_packed
    monkeypatch.setattr(network, "numpy_forward_packed", lambda *a: where.append(
        threading.current_thread().name) or real(*a))

    one = parser.parse_results(sents, threads=1, retag=True)
    assert len(where) == 3 and set(where) == {"MainThread"}
    where.clear()
    two = parser.parse_results(sents, threads=2, retag=True)
    assert len(where) == 3 and set(where) == {"depparse-encoder"}
    assert not live_threads("depparse-encoder")
    for (x, rx), (y, ry) in zip(one, two, strict=True):
        assert np.array_equal(x.heads, y.heads) and list(x.rels) == list(y.rels)
        assert list(x.upos) == list(y.upos) and rx.tagged == ry.tagged != ()
        assert rx.iterations == ry.iterations and rx.proof == ry.proof
    stream = parser.iter_parse_results(sents, threads=2)
    next(stream)
    stream.close()  # a consumer that stops early
    assert not live_threads("depparse-encoder")


def test_part_table_holds_sparse_plus_learned_scores(tiny):
    """Every kept arc's table score is the sparse (and dense) score plus scale * log P(h|m)
    of the NumPy forward pass of the stored network; the transition tables are untouched."""
    _, parser, dev = tiny
    enc = parser.model.vocab.encode(dev[0])
    keep = parser.engine.keep_mask(enc)
    with_net = parser.engine.part_table(enc, keep)
    engine = parser.engine
    net, engine.learned = engine.learned, None
    try:
        without = engine.part_table(enc, keep)
    finally:
        engine.learned = net
    r, b = net.represent([net.item(enc)])
    lp = log_softmax_heads(np, arc_scores(np, net.params, r, b["lengths"]))[0]
    np.testing.assert_allclose(with_net.arc[keep], without.arc[keep] + lp[keep], rtol=1e-12)
    assert np.array_equal(with_net.tab, without.tab)
    assert np.isneginf(with_net.arc[~keep]).all()


def test_a_batchs_tables_are_the_sum_of_their_scorers(tiny):
    """score(batch, scorers) for a batch of sentences: every table is the sum of each
    scorer's terms alone (each adds, none overwrites); the network's term of the sentences
    with no outputs attached comes from one forward pass over the batch and equals
    factor * scale * log P(h | m) of each sentence alone (to the BLAS's round-off,
    tests/blas_rows.py); with outputs attached, it is those outputs' bits."""
    from depparse.features.scoring import NetworkScorer, empty_tables, score

    _, parser, dev = tiny
    eng, net = parser.engine, parser.learned
    encs = [parser.model.vocab.encode(s) for s in dev[:6]]
    assert len({e.n for e in encs}) > 1  # sentences of different lengths share the pass
    batch = [(e, eng.keep_mask(e)) for e in encs]
    order, bigrams = eng.order, eng.config.head_bigrams
    scorers = [s for s in eng.scorers(arc_weight=1.5) if s is not None]
    assert len(scorers) == 2 + (eng.dense is not None)
    calls = []
    real = net.batch_logprobs
    net.batch_logprobs = lambda es, *a: calls.append(len(es)) or real(es, *a)
    try:
        every = score(batch, scorers, order, bigrams)
        alone = [score(batch, [s], order, bigrams) for s in scorers]
    finally:
        del net.batch_logprobs
    assert calls == [len(encs), len(encs)]  # one forward pass per batch, nothing kept
    assert all(e.network is None for e in encs)
    for i, ((enc, keep), t) in enumerate(zip(batch, every, strict=True)):
        assert np.isneginf(t.arc[~keep]).all()
        total = sum(a[i].arc[keep] for a in alone)
        np.testing.assert_allclose(t.arc[keep], total, rtol=1e-12)
        np.testing.assert_array_equal(t.tab, alone[0][i].tab)  # arcs alone for the others
        assert not any(a[i].tab.any() for a in alone[1:])
        r, b = net.represent([net.item(enc)])
        lp = log_softmax_heads(np, arc_scores(np, net.params, r, b["lengths"]))[0]
        got = alone[-1][i].arc[keep]
        np.testing.assert_allclose(got, 1.5 * net.scale * lp[keep].astype(np.float64),
                                   rtol=SCORE_TOL, atol=SCORE_TOL)
    # in another order every scorer adds (the sparse one into scratch tables, not in place):
    # the same sums to rounding
    backwards = score(batch, scorers[::-1], order, bigrams)
    for (_, keep), t, b in zip(batch, every, backwards, strict=True):
        np.testing.assert_allclose(b.arc[keep], t.arc[keep], rtol=1e-12, atol=1e-12)
        assert np.isneginf(b.arc[~keep]).all()
        np.testing.assert_array_equal(b.tab, t.tab)
    net.attach(encs[:2])  # attached outputs are read as they are
    try:
        t = score(batch[:2], [NetworkScorer(net, 1.5)], order, bigrams)
        for (enc, keep), ti in zip(batch[:2], t, strict=True):
            assert np.array_equal(ti.arc[keep], (1.5 * net.scale) * enc.network[0][keep])
    finally:
        net.detach(encs)
    with pytest.raises(ValueError, match="kept arcs of shape"):
        empty_tables([(encs[0], next(k for e, k in batch if e.n != encs[0].n))], order)


def test_decoding_with_learned_scores_equals_brute_force(tiny):
    """Dual decomposition + branch and bound on tables with learned scores finds the best
    tree of all (brute force over every single-root tree, n <= 6; compared by score)."""
    _, parser, _ = tiny
    checked = 0
    for s in synthetic.sentences(30, seed=9):
        if s.n > 6:
            continue
        enc = parser.model.vocab.encode(s)
        keep = np.ones((s.n + 1, s.n + 1), dtype=bool)
        keep[:, 0] = False
        np.fill_diagonal(keep, False)
        parts = parser.engine.part_table(enc, keep)
        r = parser.engine.decode(enc, keep=keep)
        assert r.optimal
        a = parts.arrays()
        best = max(table_score(t, *a) for t in all_trees(s.n, single_root=True))
        assert table_score(r.heads, *a) == pytest.approx(best, abs=1e-9)
        checked += 1
    assert checked >= 5


def test_model_without_network_component_is_refused(tiny):
    from depparse.errors import ModelError
    from depparse.model import Model

    path, _, _ = tiny
    m = Model.load(path)
    del m.components["network"]
    from depparse.inference.parser import Parser
    with pytest.raises(ModelError, match="no 'network' component"):
        Parser(m)


def test_parsing_a_learned_model_needs_no_jax(tiny, tmp_path):
    """The parse path runs the network in NumPy: a fresh process parses with the tiny model
    and never imports JAX, optax or depparse.learn."""
    import subprocess
    import sys

    path, _, dev = tiny
    src = tmp_path / "dev.conllu"
    src.write_text(synthetic.conllu_text(5, seed=2), encoding="utf-8")
    code = ("import sys, depparse\n"
            f"p = depparse.load({str(path)!r})\n"
            f"out = p.parse(depparse.read_conllu({str(src)!r}))\n"
            "assert len(out) == 5\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('jax', 'optax')\n"
            "       or m.startswith('depparse.learn')]\n"
            "assert not bad, bad\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]


# -- the network's UPOS and DEPREL views in the tagger and the labeler --------------------

def _log_softmax(s):
    s = s - s.max(-1, keepdims=True)
    return s - np.log(np.exp(s).sum(-1, keepdims=True))


def test_network_outputs_kept_equal_those_of_one_sentence(tiny):
    """The tag and label log-probabilities the parse path reads (kept for a batch of
    sentences, or computed for one alone) are those of the module's maths, each row a
    distribution."""
    _, parser, dev = tiny
    net, vocab = parser.learned, parser.model.vocab
    encs = [vocab.encode(s) for s in dev[:6]]
    for enc in encs:  # alone: nothing attached
        r, _ = net.represent([net.item(enc)])
        want = _log_softmax(tag_scores(np, net.params, r)[0])
        np.testing.assert_allclose(net.tag_logprobs(enc), want, atol=1e-5)
    net.attach(encs)  # computed with each other: the same to float32 round-off
    try:
        for enc, s in zip(encs, dev[:6], strict=True):
            assert enc.network is not None
            r, _ = net.represent([net.item(enc)])
            np.testing.assert_allclose(net.tag_logprobs(enc),
                                       _log_softmax(tag_scores(np, net.params, r)[0]),
                                       atol=1e-5)
            heads = np.asarray(s.heads)
            got = net.label_logprobs(enc, heads)
            want = _log_softmax(label_scores(np, net.params, r, np.maximum(heads, 0)[None])[0])
            np.testing.assert_allclose(got, want, atol=1e-5)
            np.testing.assert_allclose(np.exp(got).sum(-1), 1.0, atol=1e-6)  # float32
    finally:
        net.detach(encs)
    assert all(e.network is None for e in encs)
    # the outputs go with the encoded sentence, not with its words: another encoding of
    # the same sentence has none (a hidden cache keyed on the forms would answer for it)
    net.attach(encs[:1])
    assert vocab.encode(dev[0]).network is None


def test_labels_are_the_product_of_labeler_and_network(tiny):
    """DEPREL = the labeler's best labelling of its scores + weight * log P(label | h, m):
    weight 0 is the labeler alone, a weight that swamps the labeler's scores gives the
    network's own best label of every arc."""
    _, parser, dev = tiny
    net, vocab, lab = parser.learned, parser.model.vocab, parser.engine.labeler
    assert parser.engine.label_weight == parser.model.config.learned_label_weight > 0
    # a model without its own weight for given tags uses the one weight for both
    assert parser.model.config.learned_label_weight_given is None
    assert parser.engine.label_weight_given == parser.engine.label_weight
    old = parser.engine.label_weight
    differ = 0
    try:
        for s in dev:
            enc = vocab.encode(s)
            lp = net.label_logprobs(enc, s.heads)
            parser.engine.set_experts(label=0.0)
            alone = parser.engine.labels(enc, s.heads, True)
            assert list(alone) == list(lab.label_strings(enc, s.heads))
            parser.engine.set_experts(label=old)
            assert list(parser.engine.labels(enc, s.heads, True)) == list(
                lab.label_strings(enc, s.heads, old * lp))
            parser.engine.set_experts(label=1e6)
            swamped = parser.engine.labels(enc, s.heads, True)
            assert list(swamped[1:]) == [vocab.deprel.items[j] for j in lp[1:].argmax(-1)]
            # tags given: the other weight (here 0: the labeler alone)
            parser.engine.set_experts(label_given=0.0)
            assert list(parser.engine.labels(enc, s.heads, False)) == list(alone)
            parser.engine.set_experts(label_given=old)
            differ += sum(a != b for a, b in zip(alone[1:], swamped[1:], strict=True))
    finally:
        parser.engine.set_experts(label=old, label_given=old)
    assert differ > 0  # the two experts disagree somewhere, so the test can tell them apart


def test_set_experts_sets_checks_and_gives_back_the_weights(tiny):
    """Engine.set_experts: the one way to weigh the network's views otherwise; it returns
    the weights before (to go back with), refuses a bad weight and then changes nothing."""
    from depparse.errors import UsageError

    _, parser, _ = tiny
    old = parser.engine.set_experts()
    assert old == dict(tag=parser.engine.tag_weight, label=parser.engine.label_weight,
                       arc=parser.engine.arc_weight, label_given=parser.engine.label_weight_given,
                       arc_given=parser.engine.arc_weight_given)
    try:
        assert parser.engine.set_experts(label=3.0, arc_given=2.0) == old
        assert (parser.engine.label_weight, parser.engine.arc_weight_given) == (3.0, 2.0)
        assert parser.engine.tag_weight == old["tag"] and parser.engine.arc_weight == old["arc"]
        for bad in (dict(tag=-1.0), dict(arc=float("nan")), dict(label=float("inf"))):
            with pytest.raises(UsageError, match="must be finite"):
                parser.engine.set_experts(label_given=5.0, **bad)
            assert parser.engine.label_weight_given == old["label_given"]
    finally:
        parser.engine.set_experts(**old)
    assert parser.engine.set_experts() == old


def test_upos_is_the_product_of_tagger_and_network(tiny):
    """UPOS of untagged input = the tagger's Viterbi over its emissions + weight * log
    P(UPOS | word) of the network: weight 0 is the tagger alone, a weight that swamps the
    tagger gives the network's own best tag of every word; the batched parse path reads the
    same scores as one sentence alone."""
    from depparse.decode.tag_chain import viterbi

    _, parser, dev = tiny
    tg, net, vocab = parser.tagger, parser.learned, parser.model.vocab
    assert parser.engine.tag_weight == parser.model.config.learned_tag_weight > 0
    blank = [s.with_tags(upos=np.array(["_"] * (s.n + 1), dtype=object)) for s in dev]
    old = parser.engine.tag_weight
    try:
        parsed = parser.parse(blank)  # the file lacks UPOS: the tagger predicts it
        for s, out in zip(blank, parsed, strict=True):
            lp = net.tag_logprobs(vocab.encode(s))[:, parser.engine._net_upos]
            lat = tg.upos_lattice(s.forms, None, old * lp)
            want = viterbi(lat.emit, lat.ptr, lat.ids, tg.tasks["upos"].trans)
            assert list(out.upos[1:]) == [tg.upos[t] for t in want[1:]]
        parser.engine.set_experts(tag=1e6)
        differ = 0
        for s in blank:
            lp = net.tag_logprobs(vocab.encode(s))
            got = parser.engine._tag_extra(s)
            assert got.shape == (s.n + 1, len(tg.upos))
            out, _ = parser.engine.parse_one(s, tag_columns=("UPOS",))
            assert list(out.upos[1:]) == [vocab.upos.items[j] for j in
                                          parser.engine._net_upos[got[1:].argmax(-1)]]
            parser.engine.set_experts(tag=0.0)
            alone, _ = parser.engine.parse_one(s, tag_columns=("UPOS",))
            assert list(alone.upos) == list(tg.tag_forms(s.forms)[1])
            differ += sum(a != b for a, b in zip(alone.upos[1:], out.upos[1:], strict=True))
            parser.engine.set_experts(tag=1e6)
    finally:
        parser.engine.set_experts(tag=old)
    assert differ > 0


def test_tagger_extra_scores_are_checked_and_added(tiny):
    """Tagger.upos_lattice adds extra scores to the emissions of their classes and refuses
    an array of the wrong shape."""
    _, parser, dev = tiny
    tg = parser.tagger
    forms = dev[0].forms
    base = tg.upos_lattice(forms)
    extra = np.random.default_rng(0).standard_normal((len(forms), len(tg.upos)))
    got = tg.upos_lattice(forms, None, extra)
    word = np.repeat(np.arange(len(forms)), np.diff(base.ptr))
    np.testing.assert_allclose(got.emit, base.emit + extra[word, base.ids])
    with pytest.raises(ValueError, match="extra UPOS scores of shape"):
        tg.upos_lattice(forms, None, extra[:, 1:])


def test_arc_scores_are_weighted_at_parse_time(tiny):
    """The network's arc scores enter the part table times the parse-time factor; parsing uses
    ModelConfig.learned_arc_weight where the tagger predicts the tags and
    learned_arc_weight_given (by default the same) where they are given."""
    import dataclasses

    from depparse.inference.parser import Parser
    from depparse.learn.devscore import blank_tags

    _, parser, dev = tiny
    net, model = parser.learned, parser.model
    assert parser.engine.arc_weight == parser.engine.arc_weight_given == 1.0
    for s in dev[:3]:
        enc = model.vocab.encode(s)
        keep = parser.engine.keep_mask(enc)
        alone = parser.engine.part_table(enc, keep, arc_weight=0.0).arc
        lp = net.arc_logprobs(enc)
        for w in (1.0, 2.5):
            got = parser.engine.part_table(enc, keep, arc_weight=w).arc
            np.testing.assert_allclose(got[keep], alone[keep] + w * net.scale * lp[keep],
                                       rtol=1e-12, atol=1e-9)
        # the default is the model's own as it was trained beside: 1
        assert np.array_equal(parser.engine.part_table(enc, keep).arc,
                              parser.engine.part_table(enc, keep, arc_weight=1.0).arc)

    def trees(data, **weights):
        p = Parser(dataclasses.replace(model, config=dataclasses.replace(model.config,
                                                                         **weights)))
        return [s.heads.tolist() for s in p.parse(data)], p

    blank = blank_tags(dev)
    own_given, _ = trees(dev)
    own_pred, _ = trees(blank)
    got, p = trees(dev, learned_arc_weight=1e3)
    assert p.engine.arc_weight_given == 1e3  # no weight of its own for given tags: the one weight
    swamped_given = got
    assert swamped_given != own_given
    # each weight acts only on its own kind of sentence
    assert trees(dev, learned_arc_weight=1e3, learned_arc_weight_given=1.0)[0] == own_given
    assert trees(blank, learned_arc_weight_given=1e3)[0] == own_pred
    assert trees(blank, learned_arc_weight=1e3)[0] != own_pred


def test_numpy_label_scores_equal_the_shared_definition():
    """numpy_label_scores (the parse path's one-sentence label scores, the bilinear form as
    one matrix product) equals label_scores, the definition JAX trains, to float32
    round-off, for any heads."""
    from depparse.network.biaffine import numpy_label_scores

    p = _params(7)
    items = _items(7, lengths=(5, 9))
    batch = encode_batch(items, SPEC, {c: i + 3 for i, c in enumerate("abcdeéxyz")})
    r = forward(np, numpy_scan, p, batch, SPEC)
    rng = np.random.default_rng(3)
    for b, (w, _, _) in enumerate(items):
        N = len(w)
        heads = rng.integers(0, N, N)
        want = label_scores(np, p, r[b:b + 1, :N], heads[None])[0]
        got = numpy_label_scores(p, r[b, :N], heads)
        assert got.shape == (N, SPEC.labels)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# -- the experts' weights chosen on dev (train --expert-weights dev) -----------------------

def test_tag_weight_is_chosen_by_upos_then_the_rest_by_las():
    """The tags-predicted grid's choice: the tag weight whose best UPOS is highest, even where
    another tag weight has the best LAS (the case mr_ufal's and de_gsd's dev grids show), then
    the arc and label weights with the best LAS under it; equal UPOS goes to the better LAS,
    then to the model's own tag weight."""
    from depparse.learn.devscore import _best_tagged

    def row(a, c, b, upos, las):
        return {"tag_weight": a, "arc_weight": c, "label_weight": b, "upos": upos, "uas": 0.0,
                "las": las}

    rows = [row(0.0, 1.0, 4.0, 85.4, 66.0), row(0.0, 1.5, 4.0, 85.4, 65.5),
            row(2.0, 1.0, 4.0, 91.8, 65.0), row(2.0, 1.5, 8.0, 91.8, 65.9),
            row(3.0, 1.0, 4.0, 91.0, 65.99)]
    got = _best_tagged(rows, (1.0, 1.0, 8.0))
    assert (got["tag_weight"], got["arc_weight"], got["label_weight"]) == (2.0, 1.5, 8.0)
    # equal best UPOS: the tag weight with the better LAS ...
    rows2 = rows + [row(4.0, 1.0, 4.0, 91.8, 65.95)]
    assert _best_tagged(rows2, (1.0, 1.0, 8.0))["tag_weight"] == 4.0
    # ... and on a full tie, the model's own
    rows3 = rows + [row(1.0, 1.0, 8.0, 91.8, 65.9)]
    assert _best_tagged(rows3, (1.0, 1.0, 8.0))["tag_weight"] == 1.0
    assert _best_tagged(rows3, (5.0, 1.0, 8.0))["tag_weight"] == 2.0  # else the first


def test_expert_weights_chosen_on_dev_are_the_best_pair(tiny):
    """choose_expert_weights picks what the whole grid would: every triple of tag, arc and
    label weights scored on the dev sentences with their tags blanked, every pair of arc and
    label weights on them with their tags given, the best of each kept (the tag weight by
    UPOS, the rest by LAS).  It tags alone for each tag weight (the tags do not depend on the
    other weights) and parses only the tag weights of the best UPOS: its UPOS per tag weight
    is the whole grid's, its rows the whole grid's rows of those tag weights; each row is what
    the parser gives with those weights as the model's own (its own tagging, parsing and
    labelling path), and ties keep the model's own weights."""
    import dataclasses
    import itertools

    from depparse.evaluate import evaluate
    from depparse.inference.columns import blank_columns
    from depparse.inference.parser import Parser
    from depparse.learn.devscore import (
        _best_tagged,
        blank_tags,
        choose_expert_weights,
        expert_weight_grid,
    )

    _, parser, dev = tiny
    model = parser.model
    own = (model.config.learned_tag_weight, model.config.learned_label_weight)
    assert (model.config.learned_arc_weight, model.config.learned_arc_weight_given) == (1.0, None)
    tags, labels, arcs = (0.0, own[0], 1e3), (0.0, own[1], 1e3), (1.0, 1e3)
    got = choose_expert_weights(model, dev, tags, labels, arcs)
    rows, given = got["grid"], got["given_grid"]
    # the whole grid, every tag weight parsed
    whole = [{"tag_weight": a, "arc_weight": c, "label_weight": b, "upos": sc.upos,
              "uas": sc.uas, "las": sc.las}
             for a, c, b, sc in expert_weight_grid(Parser(model), dev, tags, labels,
                                                   arc_weights=arcs)]
    assert [(r["tag_weight"], r["arc_weight"], r["label_weight"]) for r in whole] == list(
        itertools.product(tags, arcs, labels))
    upos = {a: {r["upos"] for r in whole if r["tag_weight"] == a} for a in tags}
    assert all(len(u) == 1 for u in upos.values())  # the tags: the tag weight's alone
    assert got["tag_upos"] == [{"tag_weight": a, "upos": upos[a].pop()} for a in tags]
    assert len({r["upos"] for r in got["tag_upos"]}) > 1  # the tag weight matters
    top = max(r["upos"] for r in got["tag_upos"])
    parsed = [r["tag_weight"] for r in got["tag_upos"] if r["upos"] == top]
    assert rows == [r for r in whole if r["tag_weight"] in parsed]
    assert (got["tag_weight"], got["arc_weight"], got["label_weight"]) == tuple(
        _best_tagged(whole, (own[0], 1.0, own[1]))[k] for k in ("tag_weight", "arc_weight",
                                                                 "label_weight"))
    assert [(r["arc_weight"], r["label_weight"]) for r in given] == list(
        itertools.product(arcs, labels))
    # the arc factor changes the trees, with the tags predicted and with them given
    for grid in (whole, given):
        by_arc = [[r["uas"] for r in grid if r["arc_weight"] == c] for c in arcs]
        assert by_arc[0] != by_arc[1]
    # tags predicted: the tag weight by its best UPOS (then its best LAS), then by LAS
    top = max((max(r["upos"] for r in whole if r["tag_weight"] == a),
               max(r["las"] for r in whole if r["tag_weight"] == a)) for a in tags)
    tag_tied = [a for a in tags if (max(r["upos"] for r in whole if r["tag_weight"] == a),
                                    max(r["las"] for r in whole if r["tag_weight"] == a)) == top]
    assert got["tag_weight"] == (own[0] if own[0] in tag_tied else tag_tied[0])
    assert got["tag_weight_by"] == "upos"
    for grid, key, chosen, mine in (
            ([r for r in whole if r["tag_weight"] == got["tag_weight"]],
             lambda r: (r["tag_weight"], r["arc_weight"], r["label_weight"]),
             (got["tag_weight"], got["arc_weight"], got["label_weight"]),
             (got["tag_weight"], 1.0, own[1])),
            (given, lambda r: (r["arc_weight"], r["label_weight"]),
             (got["arc_weight_given"], got["label_weight_given"]), (1.0, own[1]))):
        best = max(r["las"] for r in grid)
        assert len({r["las"] for r in grid}) > 1  # the weights matter: the choice means something
        tied = [key(r) for r in grid if r["las"] == best]
        assert chosen == (mine if mine in tied else tied[0])
    # a weight that labels as the model's own does (1e-9 larger) but comes first in the grid:
    # the tie goes to the model's own
    near = own[1] * (1 + 1e-9)
    got2 = choose_expert_weights(model, dev, (own[0],), (near, own[1]))
    assert got2["grid"][0]["las"] == got2["grid"][1]["las"]
    assert (got2["tag_weight"], got2["label_weight"], got2["label_weight_given"]) == (
        own[0], own[1], own[1])
    assert (got2["arc_weight"], got2["arc_weight_given"]) == (1.0, 1.0)  # the default grid
    blank = blank_tags(dev)
    assert all(len(blank_columns(s)) == 4 for s in blank)
    assert [s.heads.tolist() for s in blank] == [s.heads.tolist() for s in dev]

    def parsed_with(data, **weights):
        cfg = dataclasses.replace(model.config, **weights)
        return evaluate(dev, Parser(dataclasses.replace(model, config=cfg)).parse(data))

    for r in whole[::4]:  # the given-tags weights stay out of it
        sc = parsed_with(blank, learned_tag_weight=r["tag_weight"],
                         learned_arc_weight=r["arc_weight"], learned_arc_weight_given=0.0,
                         learned_label_weight=r["label_weight"], learned_label_weight_given=0.0)
        assert (sc.upos, sc.uas, sc.las) == (r["upos"], r["uas"], r["las"]), r
    for r in given:  # and the predicted-tags weights out of this
        sc = parsed_with(dev, learned_arc_weight=0.0, learned_arc_weight_given=r["arc_weight"],
                         learned_label_weight=0.0, learned_label_weight_given=r[
                             "label_weight"])
        assert (sc.uas, sc.las) == (r["uas"], r["las"]), r
    # train's final dev report labels as parsing does, with the weight for given tags
    from depparse.learn.devscore import final_dev

    reported = set()
    for w in (0.0, 1e3):
        m = dataclasses.replace(model, config=dataclasses.replace(
            model.config, learned_label_weight_given=w))
        p = Parser(m)
        encs = [m.vocab.encode(s) for s in dev]
        triples = [(e, np.asarray(s.heads), p.engine.keep_mask(e)) for e, s in zip(encs, dev,
                                                                           strict=True)]
        las = final_dev(m, triples, dev)["las"]
        assert las == evaluate(dev, p.parse(dev)).las
        reported.add(las)
    assert len(reported) == 2


def _log_lines():
    """The messages of depparse's training log (``depparse.learn.perceptron``), collected by a
    handler of its own (the CLI turns the propagation to the root logger off)."""
    import logging

    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())

    log = logging.getLogger("depparse.learn.perceptron")
    h, level = Collect(logging.INFO), log.level
    log.addHandler(h)
    log.setLevel(logging.INFO)

    def done():
        log.removeHandler(h)
        log.setLevel(level)

    return lines, done


def test_expert_weight_grid_shows_progress(tiny, monkeypatch):
    """Issue 51 item 5: the grid (250 s on de_gsd dev with no output) says when it starts,
    the dev UPOS of each tag weight and which it parses, and shows the sentences parsed and
    labelled as an epoch shows its sentences (a log line every LOG_SECONDS off a terminal; 0
    here: one per step but the last); without progress, those lines alone."""
    import re

    from depparse.learn import stage_progress as progress
    from depparse.learn.devscore import choose_expert_weights, grid_steps

    monkeypatch.setattr(progress, "LOG_SECONDS", 0.0)
    _, parser, dev = tiny
    tags, labels, arcs = (0.0, 1.0), (0.0, 4.0, 8.0), (1.0,)
    tick = re.compile(r"expert weights on dev: (\d+) of (\d+) sentences parsed or labelled \(")
    for on in (True, False):
        lines, done = _log_lines()
        try:
            got = choose_expert_weights(parser.model, dev, tags, labels, arcs, progress=on)
        finally:
            done()
        # a parse per tag weight of the best UPOS (tags predicted) and one with the tags
        # given, each labelled again per label weight
        parsed = tuple(dict.fromkeys(r["tag_weight"] for r in got["grid"]))
        steps = len(dev) * (len(parsed) + 1) * (1 + len(labels))
        assert grid_steps(len(dev), parsed, labels, arcs) == (len(parsed) + 1, steps)
        assert lines[0].startswith("choosing the expert weights on dev: the tag weight by UPOS "
                                   f"from 2 ({len(dev)} sentences tagged alone), then 3 arc "
                                   "and label weightings with the tags predicted and 3 with "
                                   "them given")
        assert lines[1] == ("dev UPOS by tag weight: " + ", ".join(
            f"{r['tag_weight']:g}: {r['upos']:.2f}" for r in got["tag_upos"])
            + f"; parsing with {' and '.join(f'{a:g}' for a in parsed)}: {len(parsed) + 1} "
            f"parses of {len(dev)} sentences, each labelled 3 times")
        assert lines[-1].startswith("expert weights chosen on dev: ")
        ticks = [m.groups() for x in lines if (m := tick.match(x))]
        assert ticks == ([(str(j), str(steps)) for j in range(1, steps)] if on else [])
        assert len(lines) == 3 + len(ticks)


def test_expert_weights_on_dev_need_a_network_and_dev_data():
    from depparse.api import train
    from depparse.errors import ConfigError

    tr = synthetic.sentences(5)
    with pytest.raises(ConfigError, match="expert_weights.*learned_scale"):
        train(tr, tr, progress=False, expert_weights="dev", tokenizer=False)
    with pytest.raises(ConfigError, match="expert_weights.*dev sentences"):
        train(tr, None, progress=False, expert_weights="dev", learned_scale=1.0,
              tokenizer=False)
    with pytest.raises(ConfigError, match="expert_weights.*--no-tagger"):
        train(tr, tr, progress=False, expert_weights="dev", learned_scale=1.0, tagger=False,
              tokenizer=False)
    from depparse.config import TrainConfig

    assert TrainConfig(expert_arc_weights="1,1.5, 2").arc_weight_grid() == (1.0, 1.5, 2.0)
    for bad in ("", "1,x", "1,-0.5", "nan", "1,,2"):
        with pytest.raises(ConfigError, match="expert_arc_weights"):
            TrainConfig(expert_arc_weights=bad)


@pytest.mark.slow
def test_train_chooses_expert_weights_on_dev_and_stores_them(tmp_path):
    """train --expert-weights dev: the model file keeps the pair chosen on dev, and its
    training record keeps the grid it was chosen from."""
    if not have_jax():
        pytest.skip("JAX and optax are not installed: pip install 'depparse[learned]'")
    from depparse.api import load, train
    from depparse.learn.devscore import LABEL_WEIGHTS, TAG_WEIGHTS

    tr, dev = synthetic.sentences(40, seed=1), synthetic.sentences(10, seed=2)
    model = train(tr, dev, progress=False, **dict(TINY, expert_weights="dev",
                                                  expert_arc_weights="1,2"))
    model.save(tmp_path / "m.npz")
    back = load(tmp_path / "m.npz").model
    got = back.info["expert_weights"]
    assert [r["tag_weight"] for r in got["tag_upos"]] == list(TAG_WEIGHTS)
    assert len(got["given_grid"]) == 2 * len(LABEL_WEIGHTS)
    c = back.config
    assert (c.learned_tag_weight, c.learned_arc_weight, c.learned_label_weight,
            c.learned_arc_weight_given, c.learned_label_weight_given) == (
        got["tag_weight"], got["arc_weight"], got["label_weight"], got["arc_weight_given"],
        got["label_weight_given"])
    key = ("tag_weight", "arc_weight", "label_weight")
    mine = [r for r in got["grid"] if r["tag_weight"] == got["tag_weight"]]
    assert len(mine) == 2 * len(LABEL_WEIGHTS)
    assert next(r["las"] for r in mine if all(r[k] == got[k] for k in key)) == max(
        r["las"] for r in mine)
    assert got["tag_weight"] in {r["tag_weight"] for r in got["tag_upos"]
                                 if r["upos"] == max(x["upos"] for x in got["tag_upos"])}
    given = next(r["las"] for r in got["given_grid"]
                 if (r["arc_weight"], r["label_weight"]) == (c.learned_arc_weight_given,
                                                             c.learned_label_weight_given))
    assert given == max(r["las"] for r in got["given_grid"])
    # the final dev report labels as parsing does, with the weight chosen for given tags
    assert back.info["final_dev"]["las"] == given
