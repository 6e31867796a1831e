"""Training of the learned network (:mod:`depparse.network.biaffine`) with JAX and optax.

The network is trained first, on its own, with local losses (Dozat and Manning 2017, Sec.
2.2: the cross-entropy of each word's gold head among all the sentence's words and the root,
plus that of its gold label under the gold head and of its UPOS tag, summed and averaged
over the words); the sparse parser is then trained over Z with the network's scores in its
part tables (:meth:`depparse.learn.perceptron.Trainer.step`).  Optimiser: Adam with
``beta2 = 0.9`` (Dozat and Manning), gradients clipped to global norm 5, the learning rate
constant or, with ``schedule="cosine"``, annealed from ``lr`` to 0 over the training's
``horizon`` epochs (``0.5 (1 + cos(pi t / T))`` at step ``t`` of ``T``; Loshchilov and
Hutter 2017, without restarts); dropout on the
inputs and between the BiLSTM layers, and each training word replaced by ``<UNK>`` with
probability ``word_dropout``.

The forward pass is the one of :mod:`depparse.network.biaffine`, run with ``jax.numpy`` and
``jax.lax.scan``; JAX is needed for training only (``pip install 'depparse[learned]'``).
Training is deterministic for a seed (batch order from ``default_rng([seed, epoch])``,
dropout keys ``fold_in(PRNGKey(seed), step)``) and resumable bit-identically: a checkpoint
holds the parameters and the optimiser's state (float32, as they are), the epoch, the step
and the history.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ..encoding.ids import SPECIALS, UNK
from ..errors import CheckpointError, ConfigError, extra_command
from ..model import atomic_savez
from ..network.biaffine import (
    CHAR_SPECIALS,
    MIX_DROP,
    Network,
    NetworkSpec,
    arc_scores,
    encode_batch,
    forward,
    init_params,
    label_scores,
    log_softmax_heads,
    tag_scores,
)
from .data import jackknife_folds

__all__ = ["NEEDS_JAX", "NetworkTrainer", "char_vocabulary", "gold_ids",
           "have_jax", "network_items", "require_jax", "standardisation", "train_learned"]

log = logging.getLogger(__name__)

CKPT_VERSION = 1
BATCH = 32  # sentences per step (a batch's rows beyond its sentences are empty)
_COMPILED: dict = {}  # (spec, lr, dropout, word dropout) -> the jitted step and prediction


def have_jax() -> bool:
    try:
        import jax  # noqa: F401
        import optax  # noqa: F401
    except ImportError:
        return False
    return True


#: Why training with ``learned_scale > 0`` stops when JAX is missing, and what installs it.
NEEDS_JAX = ("training the learned network needs JAX and optax, which are not installed: run "
             f"`{extra_command('learned')}`")


def require_jax() -> None:
    """Raise :class:`~depparse.errors.ConfigError` (``learned_scale``, with the pip command)
    unless JAX and optax can be imported: called when a training run starts
    (:func:`~depparse.learn.perceptron.setup_training`, ``depparse train`` before it reads
    the data), not when the network's turn comes after the tagger."""
    if not have_jax():
        raise ConfigError("learned_scale", NEEDS_JAX)


def _jax():
    try:
        import jax
        import jax.numpy as jnp
        import optax
    except ImportError:
        raise ConfigError("learned_scale", NEEDS_JAX) from None
    return jax, jnp, optax


def char_vocabulary(sentences, min_count=1) -> list[str]:
    """The characters of the training forms seen at least ``min_count`` times, most frequent
    first (ties by code point)."""
    c: Counter = Counter()
    for s in sentences:
        for f in s.forms[1:]:
            c.update(f)
    return [ch for ch, k in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])) if k >= min_count]


def standardisation(vectors):
    """``(mean, std)`` over the rows of a list of (n, V) arrays (std at least 1e-3)."""
    x = np.concatenate([np.asarray(v, dtype=np.float64) for v in vectors])
    return x.mean(0).astype(np.float32), np.maximum(x.std(0), 1e-3).astype(np.float32)


def network_items(net: Network, encoded):
    """:meth:`Network.item` of each encoded sentence."""
    return [net.item(e) for e in encoded]


def _empty(spec):
    """A batch's filler row: the root alone."""
    return (np.zeros(1, dtype=np.int64), ["<root>"],
            np.zeros((0, spec.vec_dim), np.float32) if spec.vec_dim else None,
            np.zeros((0, spec.mix_layers, spec.mix_dim), np.float16) if spec.mix_layers
            else None)


def _bucket(T):
    """Padded length of a batch whose longest sentence has ``T`` positions: multiples of 16
    up to 64, then of 32 (few distinct shapes, so few compilations)."""
    step = 16 if T <= 64 else 32
    return -(-T // step) * step


class NetworkTrainer:
    """Parameters, optimiser state and steps of a network's training (module docstring).

    Parameters
    ----------
    net : Network
        The network to train (its spec, characters, standardisation and scale; its
        parameters are the starting point).
    lr, dropout, word_dropout : float
    seed : int
    schedule : str
        ``"constant"`` (the learning rate ``lr`` throughout) or ``"cosine"`` (annealed to 0 at
        the end of epoch ``horizon``; module docstring).
    horizon : int or None
        The epochs the cosine schedule spans (the training's number of epochs).
    """

    SCHEDULES = ("constant", "cosine")

    def __init__(self, net: Network, lr=2e-3, dropout=0.33, word_dropout=0.1, seed=0,
                 schedule="constant", horizon=None):
        jax, jnp, optax = _jax()
        if schedule not in self.SCHEDULES:
            raise ValueError(f"schedule {schedule!r}: one of {self.SCHEDULES}")
        if schedule != "constant" and not (horizon and horizon > 0):
            raise ValueError(f"the {schedule} schedule needs a horizon of at least one epoch")
        self.net = net
        self.spec = net.spec
        self.lr, self.dropout, self.word_dropout, self.seed = lr, dropout, word_dropout, seed
        self.schedule, self.horizon = schedule, horizon
        self.params = {k: jnp.asarray(v) for k, v in net.params.items()}
        self.opt = optax.chain(optax.clip_by_global_norm(5.0),
                               optax.adam(lr, b1=0.9, b2=0.9))
        self.opt_state = self.opt.init(self.params)
        self.epoch = 0
        self.steps = 0
        self.history: list[dict] = []
        key = (self.spec, lr, dropout, word_dropout)
        if key not in _COMPILED:  # one compilation per process for the same settings
            _COMPILED[key] = (jax.jit(self._make_step()), jax.jit(self._make_predict()))
        self._step, self._predict = _COMPILED[key]

    @classmethod
    def fresh(cls, spec: NetworkSpec, chars, mean, std, scale, seed=0, **kw):
        return cls(Network(spec, init_params(spec, seed), chars, mean, std, scale), seed=seed,
                   **kw)

    # -- the jitted functions --------------------------------------------------------------
    def _loss_fn(self):
        jax, jnp, _ = _jax()
        spec, p_drop, p_word = self.spec, self.dropout, self.word_dropout

        def loss(params, batch, key):
            # 8 keys (0-2 inputs, 3+ BiLSTM layers, 7 <UNK>), 10 with the encoder's mix (its
            # key MIX_DROP = 8): networks without one are trained as before the mix existed
            keys = jax.random.split(key, MIX_DROP + 2 if spec.mix_layers else 8)

            def drop(x, k):
                keep = jax.random.bernoulli(keys[k], 1.0 - p_drop, x.shape)
                return jnp.where(keep, x / (1.0 - p_drop), 0.0)

            words = batch["words"]
            unk = jax.random.bernoulli(keys[7], p_word, words.shape)
            unk = unk & (jnp.arange(words.shape[1])[None, :] > 0)
            batch = dict(batch, words=jnp.where(unk, UNK, words))
            r = forward(jnp, jax.lax.scan, params, batch, spec, drop)
            lp = log_softmax_heads(jnp, arc_scores(jnp, params, r, batch["lengths"]))
            heads, mask = batch["heads"], batch["mask"]
            head_nll = -jnp.take_along_axis(lp, heads[:, None, :], axis=1)[:, 0, :]
            ls = jax.nn.log_softmax(label_scores(jnp, params, r, heads), axis=-1)
            lab_nll = -jnp.take_along_axis(ls, batch["labels"][..., None], axis=-1)[..., 0]
            ts = jax.nn.log_softmax(tag_scores(jnp, params, r), axis=-1)
            tag_nll = -jnp.take_along_axis(ts, batch["tags"][..., None], axis=-1)[..., 0]
            total = ((head_nll + lab_nll + tag_nll) * mask).sum()
            return total / jnp.maximum(mask.sum(), 1.0)

        return loss

    def _make_step(self):
        jax, _, optax = _jax()
        loss = self._loss_fn()
        opt = self.opt

        def step(params, opt_state, batch, key, rate):
            value, grads = jax.value_and_grad(loss)(params, batch, key)
            updates, opt_state = opt.update(grads, opt_state, params)
            # the schedule's factor on Adam's step (1.0 leaves it exactly as it is)
            updates = jax.tree_util.tree_map(lambda u: u * rate, updates)
            return optax.apply_updates(params, updates), opt_state, value

        return step

    def _make_predict(self):
        jax, jnp, _ = _jax()
        spec = self.spec

        def predict(params, batch):
            r = forward(jnp, jax.lax.scan, params, batch, spec)
            s = arc_scores(jnp, params, r, batch["lengths"])
            heads = s.argmax(axis=1)
            labels = label_scores(jnp, params, r, batch["heads"]).argmax(-1)
            tags = tag_scores(jnp, params, r).argmax(-1)
            return heads, labels, tags

        return predict

    # -- data ------------------------------------------------------------------------------
    def batches(self, items, gold, order=None):
        """Padded batches (dicts of arrays) of :data:`BATCH` sentences of similar length:
        ``items`` from :func:`network_items`, ``gold`` ``(heads, labels, tags)`` id arrays
        (length ``n + 1``) per sentence.  ``order``: a permutation of the batches."""
        by_len = sorted(range(len(items)), key=lambda i: (len(items[i][0]), i))
        groups = [by_len[i:i + BATCH] for i in range(0, len(by_len), BATCH)]
        if order is not None:
            groups = [groups[j] for j in order(len(groups))]
        for g in groups:
            T = _bucket(max(len(items[i][0]) for i in g))
            rows = [items[i] for i in g] + [_empty(self.spec)] * (BATCH - len(g))
            b = encode_batch(rows, self.spec, self.net.char_index, T)
            heads = np.zeros((BATCH, T), dtype=np.int32)
            labels = np.zeros((BATCH, T), dtype=np.int32)
            tags = np.zeros((BATCH, T), dtype=np.int32)
            mask = np.zeros((BATCH, T), dtype=np.float32)
            for r, i in enumerate(g):
                h, lab, t = gold[i]
                N = len(h)
                heads[r, 1:N] = h[1:]
                labels[r, 1:N] = lab[1:]
                tags[r, 1:N] = t[1:]
                mask[r, 1:N] = 1.0
            b.update(heads=heads, labels=labels, tags=tags, mask=mask)
            yield g, b

    # -- training --------------------------------------------------------------------------
    def rate(self, step, per_epoch) -> float:
        """The schedule's factor on the learning rate at global step ``step`` (from 0), with
        ``per_epoch`` steps an epoch: 1 throughout for ``constant``; for ``cosine``
        ``0.5 (1 + cos(pi t / T))`` over the ``T = horizon * per_epoch`` steps, 0 after."""
        if self.schedule == "constant":
            return 1.0
        t = min(step / (self.horizon * per_epoch), 1.0)
        return 0.5 * (1.0 + math.cos(math.pi * t))

    def train_epoch(self, items, gold) -> float:
        """One pass over the training data in the epoch's seeded batch order; the mean loss."""
        jax, jnp, _ = _jax()
        rng = np.random.default_rng([self.seed, self.epoch])
        base = jax.random.PRNGKey(self.seed)
        per_epoch = -(-len(items) // BATCH)
        total = 0.0
        count = 0
        for _, b in self.batches(items, gold, order=rng.permutation):
            key = jax.random.fold_in(base, self.steps)
            rate = jnp.float32(self.rate(self.steps, per_epoch))
            self.params, self.opt_state, value = self._step(self.params, self.opt_state, b,
                                                            key, rate)
            self.steps += 1
            total += float(value)
            count += 1
        self.epoch += 1
        return total / max(count, 1)

    def evaluate(self, items, gold) -> dict:
        """Head (argmax per word, no tree constraint), label (under the gold head) and UPOS
        accuracy, in %, over the words of ``items``."""
        right = np.zeros(3)
        words = 0
        for _, b in self.batches(items, gold):
            heads, labels, tags = (np.asarray(a) for a in self._predict(self.params, b))
            m = b["mask"] > 0
            right += [(heads == b["heads"])[m].sum(), (labels == b["labels"])[m].sum(),
                      (tags == b["tags"])[m].sum()]
            words += int(m.sum())
        return dict(zip(("uas", "label_acc", "upos"), 100.0 * right / max(words, 1),
                        strict=True))

    def network(self) -> Network:
        """The trained network, its parameters rounded to float16 as a model file keeps them."""
        n = self.net
        return Network(self.spec, {k: np.asarray(v) for k, v in self.params.items()}, n.chars,
                       n.mean, n.std, n.scale).rounded()

    def fit(self, items, gold, epochs, dev=None, checkpoint=None, label="learned network"):
        """Train to ``epochs`` (counting those done before a resume); log the loss and, with
        ``dev`` (``(items, gold)``), the dev accuracies per epoch; checkpoint after each."""
        while self.epoch < epochs:
            t0 = time.perf_counter()
            loss = self.train_epoch(items, gold)
            rec = {"epoch": self.epoch, "loss": loss, "seconds": time.perf_counter() - t0}
            msg = ""
            if dev is not None:
                rec.update({"dev_" + k: v for k, v in self.evaluate(*dev).items()})
                msg = (f"; dev heads {rec['dev_uas']:.2f}, labels {rec['dev_label_acc']:.2f}"
                       f", UPOS {rec['dev_upos']:.2f}")
            self.history.append(rec)
            log.info("%s, epoch %d/%d: %.0f s, loss %.4f%s", label, self.epoch, epochs,
                     rec["seconds"], loss, msg)
            if checkpoint:
                self.save_checkpoint(checkpoint)
        return self.network()

    # -- checkpoints -----------------------------------------------------------------------
    def save_checkpoint(self, path) -> None:
        """Parameters, optimiser state (float32 leaves, exact), epoch, step and history."""
        jax, _, _ = _jax()
        n = self.net
        leaves = jax.tree_util.tree_leaves(self.opt_state)
        meta = {"ckpt_version": CKPT_VERSION, "spec": asdict(self.spec), "chars": n.chars,
                "scale": n.scale, "epoch": self.epoch, "steps": self.steps,
                "history": self.history, "lr": self.lr, "dropout": self.dropout,
                "word_dropout": self.word_dropout, "seed": self.seed, "leaves": len(leaves),
                "schedule": self.schedule, "horizon": self.horizon}
        arrays = {f"p.{k}": np.asarray(v) for k, v in self.params.items()}
        arrays.update({f"o.{i}": np.asarray(v) for i, v in enumerate(leaves)})
        if n.mean is not None:
            arrays["mean"], arrays["std"] = n.mean, n.std
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        atomic_savez(path, arrays)

    @classmethod
    def load_checkpoint(cls, path) -> NetworkTrainer:
        """Resume a training; raises :class:`~depparse.errors.CheckpointError`."""
        jax, jnp, _ = _jax()
        try:
            with np.load(path, allow_pickle=False) as z:
                meta = json.loads(z["meta"].tobytes().decode())
                if meta.get("ckpt_version") != CKPT_VERSION:
                    raise CheckpointError(f"{path}: network checkpoint version "
                                          f"{meta.get('ckpt_version')}, this depparse writes "
                                          f"{CKPT_VERSION}: delete it to start over")
                spec = NetworkSpec(**meta["spec"])
                params = {k[2:]: z[k] for k in z.files if k.startswith("p.")}
                net = Network(spec, params, meta["chars"], z["mean"] if "mean" in z.files
                              else None, z["std"] if "std" in z.files else None, meta["scale"])
                t = cls(net, meta["lr"], meta["dropout"], meta["word_dropout"], meta["seed"],
                        meta.get("schedule", "constant"), meta.get("horizon"))
                treedef = jax.tree_util.tree_structure(t.opt_state)
                leaves = [jnp.asarray(z[f"o.{i}"]) for i in range(int(meta["leaves"]))]
                t.opt_state = jax.tree_util.tree_unflatten(treedef, leaves)
        except CheckpointError:
            raise
        except Exception as e:  # noqa: BLE001 - whatever is wrong, it cannot be resumed from
            raise CheckpointError(f"{path}: cannot resume from this network checkpoint "
                                  f"({type(e).__name__}: {e}); delete it to start over") from None
        t.epoch, t.steps, t.history = int(meta["epoch"]), int(meta["steps"]), meta["history"]
        return t


def encoder_layers(net: Network, encoded) -> None:
    """The encoder's layers of every sentence (:meth:`Network.attach_layers`) for a network
    with a mix of them, logged: the training's data encoded once."""
    if not net.spec.mix_layers or all(e.layers is not None for e in encoded):
        return
    t0 = time.perf_counter()
    words = sum(e.n for e in encoded)
    net.attach_layers(encoded)
    log.info("multilingual-e5-small layers 0-%d of %d words in %.0f s",
             net.spec.mix_layers - 1, words, time.perf_counter() - t0)


def gold_ids(vocab, sentence):
    """``(heads, labels, tags)`` int64 arrays (length ``n + 1``) of a gold sentence, labels and
    tags as ids of the model's vocabularies."""
    heads = np.asarray(sentence.heads, dtype=np.int64)
    labels = np.array([0] + [vocab.deprel.get(r) for r in sentence.rels[1:]], dtype=np.int64)
    tags = np.array([0] + [vocab.upos.get(t) for t in sentence.upos[1:]], dtype=np.int64)
    return heads, labels, tags


def held_out_logprobs(net: Network, training, encoded, gold, folds):
    """Each training sentence's ``log P(h | m)`` from a network that did not see it (the
    jackknife of stacked parsers: Nivre and McDonald 2008; Martins et al. 2008).

    The network trained on all the training sentences knows them far better than new text, so
    the sparse parser trained beside its scores learns to trust it more than it should.  With
    ``folds >= 2`` the sentences are split into ``folds`` parts (a seeded permutation); a
    network with ``net``'s sizes, characters and standardisation is trained on the other
    parts as ``training`` says (epochs, rate, schedule, dropout; seed ``seed + 1 + fold``) and
    scores the part; words it never saw in its training read as ``<UNK>``, as a new word does.
    Returns ``(logprobs per sentence, held-out head accuracy in %)``; ``(None, None)`` with
    fewer than two folds or sentences than ``2 * folds``.
    """
    if folds < 2 or len(encoded) < 2 * folds:
        return None, None
    fold_of = jackknife_folds(len(encoded), folds, training.seed, 992)
    out = [None] * len(encoded)
    for f in range(folds):
        tr = np.flatnonzero(fold_of != f)
        t = NetworkTrainer.fresh(net.spec, net.chars, net.mean, net.std, net.scale,
                                 seed=training.seed + 1 + f, lr=training.learned_lr,
                                 dropout=training.learned_dropout,
                                 schedule=training.learned_schedule,
                                 horizon=training.learned_epochs)
        items = network_items(t.net, [encoded[i] for i in tr])
        t.fit(items, [gold[i] for i in tr], training.learned_epochs,
              label=f"jackknife network {f + 1}/{folds}")
        seen = np.zeros(net.spec.words, dtype=bool)
        seen[:len(SPECIALS)] = True
        for w, *_ in items:
            seen[w] = True
        held = np.flatnonzero(fold_of == f)
        encs = [dataclasses.replace(e, form=np.where(seen[np.minimum(e.form, net.spec.words - 1)],
                                                     e.form, UNK))
                for e in (encoded[i] for i in held)]
        for i, lp in zip(held, t.network().batch_logprobs(encs), strict=True):
            out[i] = lp
    return out, _head_accuracy(out, gold)


def _head_accuracy(logprobs, gold) -> float:
    """% of the words of ``gold`` (:func:`gold_ids` per sentence) whose most probable head in
    ``logprobs`` (per sentence, ``log P(h | m)``) is the gold one."""
    right = sum(int((lp[:, 1:].argmax(0) == g[0][1:]).sum())
                for lp, g in zip(logprobs, gold, strict=True))
    return 100.0 * right / max(1, sum(len(g[0]) - 1 for g in gold))


def train_learned(learned, config, training, vocab, train_sents, encoded, dev_sents, dev_encoded,
                  checkpoint=None, resume=False):
    """The learned network of a training run (``config.learned_scale > 0``), with its
    ``log P(h | m)`` of the training and dev sentences attached to them for the sparse training:
    ``(network, history records)``; ``(None, [])`` for a model without one.

    ``learned`` is the network of a resumed run (it is not retrained); otherwise the network
    is trained here (:class:`NetworkTrainer`, checkpointed to ``<checkpoint>.network.npz``
    after every epoch and resumed from it)."""
    if not config.learned_scale:
        return None, []
    hist = []
    gold = [gold_ids(vocab, s) for s in train_sents]
    if learned is None:
        t0 = time.perf_counter()
        chars = char_vocabulary(train_sents)
        vec_dim = 0 if not vocab.vector_layer else encoded[0].vectors.shape[1]
        spec = NetworkSpec(words=len(vocab.form), chars=len(chars) + CHAR_SPECIALS,
                           labels=len(vocab.deprel), tags=len(vocab.upos), vec_dim=vec_dim,
                           hidden=training.learned_hidden, layers=training.learned_layers,
                           mix_layers=training.learned_encoder,
                           mix_proj=training.learned_mix_dim,
                           mix_pooling=training.learned_pooling)
        mean, std = (standardisation([e.vectors for e in encoded]) if vec_dim else (None, None))
        ck = None if not checkpoint else f"{checkpoint}.network.npz"
        if resume and ck and Path(ck).exists():
            t = NetworkTrainer.load_checkpoint(ck)
            log.info("resuming the learned network from %s after epoch %d", ck, t.epoch)
        else:
            t = NetworkTrainer.fresh(spec, chars, mean, std, config.learned_scale,
                                     seed=training.seed, lr=training.learned_lr,
                                     dropout=training.learned_dropout,
                                     schedule=training.learned_schedule,
                                     horizon=training.learned_epochs)
        encoder_layers(t.net, encoded + list(dev_encoded or []))
        items = network_items(t.net, encoded)
        dev = None
        if dev_encoded:
            dev = (network_items(t.net, dev_encoded), [gold_ids(vocab, s) for s in dev_sents])
        learned = t.fit(items, gold, training.learned_epochs, dev, ck)
        if ck and Path(ck).exists():
            Path(ck).unlink()
        hist = [{"learned_network": t.history, "seconds": time.perf_counter() - t0}]
        log.info("learned network trained in %.0f s", time.perf_counter() - t0)
    every = encoded + list(dev_encoded or [])
    logprobs = learned.batch_logprobs(every)
    if training.learned_folds >= 2:  # the training sentences scored by networks that did not
        t0 = time.perf_counter()     # see them (retrained on a resume: deterministic)
        held, acc = held_out_logprobs(learned, training, encoded, gold, training.learned_folds)
        if held is not None:
            own = _head_accuracy(logprobs[:len(encoded)], gold)
            logprobs[:len(encoded)] = held
            log.info("training sentences scored by %d jackknifed networks in %.0f s: their "
                     "heads %.2f%% right (argmax per word), against %.2f%% by the network "
                     "trained on them", training.learned_folds, time.perf_counter() - t0, acc,
                     own)
            hist.append({"learned_folds": training.learned_folds, "held_out_heads": acc,
                         "own_heads": own, "seconds": time.perf_counter() - t0})
    learned.attach(every, logprobs)
    return learned, hist

