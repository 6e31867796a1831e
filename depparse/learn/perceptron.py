"""Averaged structured perceptron over Z (Koo et al. 2010, Sec. 6; Collins 2002).

For the ``sib`` and ``gs`` models the decoding step of training is ``argmax_{z in Z} w . phi``:
every head automaton on its own, no spanning-tree constraint, so training needs dynamic
programming only.  The ``mst`` model trains over Y with Chu-Liu-Edmonds.  With
``train_over="Y"`` the sib/gs models decode with full dual decomposition instead.

Averaging is lazy (Daume III 2006): besides the weights ``w`` we keep ``acc``, which receives
``c * delta`` for every update ``delta`` made while processing example ``c + 1`` (``c``
examples seen before it).  After ``C`` examples the average of the ``C`` weight vectors
``w_1 .. w_C`` (the weights after each example) is ``sum_s delta_s (C - c_s) / C =
w - acc / C``: equal to the eager average, without touching every weight at every step.

Training is deterministic for a given seed (epoch ``e`` visits the examples in the order of
``default_rng([seed, e]).permutation``), writes a checkpoint atomically after every epoch, and
``resume`` continues from it with bit-identical results.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..conllu_io import validate_tree
from ..decode.automata import decode_z
from ..features import _diff_stats, _update, build_parts, structure_features
from ..model import Model, ModelConfig, atomic_savez
from ..parser import Parser, tree_decoder
from ..sentence import Vocabularies
from .pruner import train_pruner

__all__ = ["TrainingDataError", "Trainer", "gold_structure", "train"]

log = logging.getLogger(__name__)

CKPT_VERSION = 1


class TrainingDataError(ValueError):
    """Training data that cannot be learned from (no gold tree); names file and line."""


def gold_structure(heads):
    """The Z-representation of a tree: ``mods[h, m] = heads[m] == h`` and ``gpar = heads``."""
    N = heads.shape[0]
    mods = np.zeros((N, N), dtype=bool)
    mods[heads[1:], np.arange(1, N)] = True
    return mods, heads.astype(np.int64)


def check_training_sentences(sentences, what="training"):
    """Raise :class:`TrainingDataError` for a sentence without a valid gold tree."""
    for s in sentences:
        if not s.has_gold_heads:
            raise TrainingDataError(f"{s.source}:{s.line_no}: {what} sentence has no gold HEAD")
        msg = validate_tree(s)
        if msg:
            raise TrainingDataError(f"{s.source}:{s.line_no}: {what} sentence: {msg}")


class Trainer:
    """State of a perceptron training run (see the module docstring)."""

    def __init__(self, config: ModelConfig, vocab: Vocabularies, pruner=None, seed=0):
        self.config = config
        self.vocab = vocab
        self.pruner = pruner
        self.seed = int(seed)
        D = 1 << config.bits
        self.w = np.zeros(D)
        self.acc = np.zeros(D)
        self.c = 0.0  # examples seen so far
        self.epoch = 0
        self.history: list[dict] = []

    # -- model views -----------------------------------------------------------------------
    def averaged(self):
        """Average of the weights after each example so far: ``w - acc / c``."""
        if self.c == 0:
            return self.w.copy()
        return self.w - self.acc / self.c

    def model(self, averaged=True, info=None) -> Model:
        w = self.averaged() if averaged else self.w.copy()
        return Model(self.config, self.vocab, w, self.pruner, None, info or {})

    # -- one example -----------------------------------------------------------------------
    def step(self, enc, heads, keep):
        """Decode one example with the current weights and update on a mistake."""
        cfg = self.config
        order = cfg.order
        mask = np.uint64((1 << cfg.bits) - 1)
        gmods, gpar = gold_structure(heads)
        parts = build_parts(enc, keep, self.w, cfg.bits, order)
        if cfg.loss_aug > 0:
            # cost-augmented decoding: every wrong arc looks better by loss_aug, so the update
            # happens until the gold tree wins by a margin (Hamming loss)
            good = np.isfinite(parts.arc)
            parts.arc[good] += cfg.loss_aug
            parts.arc[heads[1:], np.arange(1, enc.n + 1)] -= cfg.loss_aug
        if order == 0:
            pheads = tree_decoder(cfg.projective)(parts.arc, single_root=cfg.single_root)
            pmods, ppar = gold_structure(pheads)
        elif cfg.train_over == "Y":
            from ..decode.dual import dual_decompose
            r = dual_decompose(parts, alpha=cfg.alpha, max_iter=cfg.max_iter,
                               single_root=cfg.single_root, projective=cfg.projective)
            pmods, ppar = gold_structure(r.heads)
        else:
            pmods, ppar = decode_z(*parts.arrays(), cfg.single_root)
        diff = (pmods != gmods).any(axis=1)
        if order == 2:
            diff[1:] |= ppar[1:] != gpar[1:]
        if diff.any():
            a = enc.arrays()
            scale = 1.0
            gidx = structure_features(*a, mask, order, gmods, gpar, diff)
            pidx = structure_features(*a, mask, order, pmods, ppar, diff)
            if cfg.update == "pa":
                # PA-I: the smallest step that makes gold beat the prediction by its loss
                dot, norm = _diff_stats(self.w, gidx, pidx)
                loss = float((pmods != gmods).sum())
                if order == 2:
                    loss += float((ppar[1:] != gpar[1:]).sum())
                scale = min(cfg.pa_c, max(0.0, loss - dot) / max(norm, 1e-12))
            if scale > 0:
                _update(self.w, self.acc, self.c, gidx, scale)
                _update(self.w, self.acc, self.c, pidx, -scale)
        self.c += 1.0
        return bool(diff.any())

    def run_epoch(self, data, progress=None):
        """One pass over ``data`` (list of (enc, heads, keep)) in the epoch's seeded order."""
        order = np.random.default_rng([self.seed, self.epoch]).permutation(len(data))
        mistakes = 0
        for j, i in enumerate(order):
            enc, heads, keep = data[i]
            mistakes += self.step(enc, heads, keep)
            if progress is not None:
                progress(j + 1, enc.n)
        self.epoch += 1
        return mistakes

    # -- checkpoints -----------------------------------------------------------------------
    def save_checkpoint(self, path):
        meta = {"ckpt_version": CKPT_VERSION, "epoch": self.epoch, "c": self.c,
                "seed": self.seed, "config": asdict(self.config),
                "vocab": self.vocab.to_json(), "history": self.history}
        arrays = {"meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
                  "w": self.w, "acc": self.acc}
        if self.pruner is not None:
            arrays["pruner"] = self.pruner
        atomic_savez(path, arrays)

    @classmethod
    def load_checkpoint(cls, path) -> Trainer:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes().decode())
            if meta.get("ckpt_version") != CKPT_VERSION:
                raise ValueError(f"{path}: unsupported checkpoint version")
            cfg = ModelConfig.from_dict(meta["config"])
            t = cls(cfg, Vocabularies.from_json(meta["vocab"]),
                    z["pruner"] if "pruner" in z.files else None, meta["seed"])
            t.w = z["w"].copy()
            t.acc = z["acc"].copy()
        t.c = float(meta["c"])
        t.epoch = int(meta["epoch"])
        t.history = list(meta["history"])
        return t


def _keep_masks(parser, encoded, heads=None):
    """Kept arcs of every sentence; with ``heads``, the gold arcs are always kept."""
    out = []
    for i, e in enumerate(encoded):
        k = parser.keep_mask(e)
        if heads is not None:
            hd = heads[i]
            k[hd[1:], np.arange(1, e.n + 1)] = True
        out.append(k)
    return out


def _jackknife_keep_masks(config, encoded, heads, folds, pruner_epochs, seed):
    """Kept arcs of the training sentences, each pruned by a pruner that did not see it.

    A pruner trained on all of the training data is far more confident on it than on new
    text, so the higher-order model would train on candidate sets much smaller than it meets
    at test time.  With ``folds >= 2`` the training data is split into ``folds`` parts and each
    part is pruned by a pruner trained on the others (jackknifing).  Gold arcs are always kept.
    """
    if folds < 2 or len(encoded) < 2 * folds:
        return None
    fold_of = np.random.default_rng([seed, 991]).permutation(len(encoded)) % folds
    keep = [None] * len(encoded)
    for f in range(folds):
        tr = [i for i in range(len(encoded)) if fold_of[i] != f]
        pw = train_pruner([encoded[i] for i in tr], [heads[i] for i in tr],
                          bits=config.pruner_bits, epochs=pruner_epochs, seed=seed + 1 + f)
        idx = np.flatnonzero(fold_of == f)
        masks = _keep_masks(Parser(Model(config, None, np.zeros(1), pw)),
                            [encoded[i] for i in idx], [heads[i] for i in idx])
        for i, k in zip(idx, masks, strict=True):
            keep[i] = k
    return keep


def evaluate_heads(parser, dev, weights, max_iter=None):
    """UAS, certificate rate and seconds/sentence on (enc, heads, keep) triples."""
    correct = total = cert = 0
    t0 = time.perf_counter()
    for enc, heads, keep in dev:
        r = parser.decode(enc, keep=keep, weights=weights, max_iter=max_iter)
        correct += int((r.heads[1:] == heads[1:]).sum())
        total += enc.n
        cert += r.certificate
    n = max(1, len(dev))
    return {"uas": 100.0 * correct / max(1, total), "cert": 100.0 * cert / n,
            "sec_per_sent": (time.perf_counter() - t0) / n}


def train(train_sents, dev_sents=None, config: ModelConfig | None = None, epochs=10, seed=0,
          checkpoint=None, resume=False, progress=True, dev_max_iter=None,
          pruner_epochs=1, pruner_folds=4, labeler_epochs=8) -> Model:
    """Train a model on gold-annotated sentences.

    Parameters
    ----------
    train_sents, dev_sents : list of :class:`~depparse.conllu_io.Sentence`
    config : ModelConfig
    epochs : int
        Perceptron epochs (total, counting epochs done before a resume).
    seed : int
    checkpoint : path, optional
        Written atomically after every epoch.
    resume : bool
        Continue from ``checkpoint`` when it exists.
    progress : bool
        Show a progress bar (tqdm, on stderr).
    dev_max_iter : int, optional
        Iteration cap for the per-epoch dev evaluation (default: the model's).
    pruner_epochs : int
        Epochs of the pruner's training.
    pruner_folds : int
        Jackknife folds for pruning the training data (0 or 1: prune it with the final
        pruner).
    labeler_epochs : int
        Epochs of the DEPREL labeler (:mod:`depparse.learn.labeler`); 0 trains none.

    Returns
    -------
    Model
        With averaged weights; ``info`` holds the per-epoch history and timings.
    """
    from tqdm import tqdm

    t_start = time.perf_counter()
    st = prepare(train_sents, dev_sents, config, seed, checkpoint, resume, pruner_epochs,
                 pruner_folds)
    trainer, data = st.trainer, st.data
    while trainer.epoch < epochs:
        t0 = time.perf_counter()
        bar = tqdm(total=len(data), desc=f"epoch {trainer.epoch + 1}/{epochs}", unit="sent",
                   disable=not progress, leave=False, mininterval=1.0)
        mistakes = trainer.run_epoch(data, progress=lambda j, n, bar=bar: bar.update(1))
        bar.close()
        end_epoch(st, mistakes, time.perf_counter() - t0, epochs, dev_max_iter, checkpoint)
    return finish(st, train_sents, labeler_epochs, seed, epochs, t_start)


@dataclass
class Setup:
    """Everything a training run needs once the data is encoded and pruned."""

    trainer: Trainer
    parser: Parser
    data: list  # (encoded, heads, keep) per training sentence
    dev: list | None
    encoded: list
    heads: list
    t_prune: float
    nwords: int


def _context_classes(vocab, sentences, config, seed):
    """Cluster the encoder vectors of the training words into the vocabulary's contextual
    classes (:mod:`depparse.encoder`); returns the per-sentence vectors."""
    from ..encoder import ContextClasses, word_vectors

    t0 = time.perf_counter()
    vectors = [word_vectors(config.context_layer, s.forms[1:]) for s in sentences]
    vocab.context = ContextClasses.train(np.concatenate(vectors), config.context_layer,
                                         config.context_classes, config.context_coarse, seed)
    log.info("contextual classes (layer %d, %d / %d) in %.1f s", config.context_layer,
             config.context_classes, config.context_coarse, time.perf_counter() - t0)
    return vectors


def prepare(train_sents, dev_sents, config, seed, checkpoint, resume, pruner_epochs,
            pruner_folds) -> Setup:
    """Check the data, build (or resume) the trainer, train the pruner, prune every sentence.

    Shared by :func:`train` and the Dask trainer (:mod:`depparse.distributed`).
    """
    config = config or ModelConfig()
    check_training_sentences(train_sents)
    if dev_sents:
        check_training_sentences(dev_sents, "dev")
    trainer = None
    if resume and checkpoint and Path(checkpoint).exists():
        trainer = Trainer.load_checkpoint(checkpoint)
        log.info("resuming from %s after epoch %d", checkpoint, trainer.epoch)
        config = trainer.config
        vocab = trainer.vocab
    else:
        vocab = Vocabularies.build(train_sents, config.min_count)
    vectors = [None] * len(train_sents)
    if config.context_layer and vocab.context is None:
        vectors = _context_classes(vocab, train_sents, config, seed)
    encoded = [vocab.encode(s, v) for s, v in zip(train_sents, vectors, strict=True)]
    heads = [np.asarray(s.heads, dtype=np.int64) for s in train_sents]
    t_prune = 0.0
    if trainer is None:
        pruner = None
        if config.order > 0:
            t0 = time.perf_counter()
            pruner = train_pruner(encoded, heads, bits=config.pruner_bits, epochs=pruner_epochs,
                                  seed=seed)
            t_prune = time.perf_counter() - t0
            log.info("pruner trained in %.1f s", t_prune)
        trainer = Trainer(config, vocab, pruner, seed)
    parser = Parser(trainer.model(averaged=False))
    train_keep = _jackknife_keep_masks(config, encoded, heads, pruner_folds, pruner_epochs,
                                       seed) if config.order > 0 else None
    if train_keep is None:
        train_keep = _keep_masks(parser, encoded, heads)
    data = list(zip(encoded, heads, train_keep, strict=True))
    dev = None
    if dev_sents:
        denc = [vocab.encode(s) for s in dev_sents]
        dheads = [np.asarray(s.heads, dtype=np.int64) for s in dev_sents]
        dkeep = _keep_masks(parser, denc)
        dev = list(zip(denc, dheads, dkeep, strict=True))
        kept = sum(int(k.sum()) for k in dkeep)
        hit = sum(int(k[h[1:], np.arange(1, e.n + 1)].sum()) for e, h, k in dev)
        words = sum(e.n for e in denc)
        if not any("pruner_dev_recall" in h for h in trainer.history):
            trainer.history.append({"pruner_dev_recall": 100.0 * hit / words,
                                    "pruner_heads_per_word": kept / words})
        log.info("pruner on dev: gold-arc recall %.2f%%, %.2f heads per word",
                 100.0 * hit / words, kept / words)
    return Setup(trainer, parser, data, dev, encoded, heads, t_prune,
                 sum(e.n for e in encoded))


def end_epoch(st: Setup, mistakes, seconds, epochs, dev_max_iter, checkpoint, label="",
              **extra):
    """Record an epoch (dev UAS and certificates when there is dev data), log, checkpoint."""
    trainer = st.trainer
    n = len(st.data)
    rec = {"epoch": trainer.epoch, "mistakes": mistakes, "train_seconds": seconds,
           "sent_per_sec": n / seconds, "words_per_sec": st.nwords / seconds, **extra}
    if st.dev is not None:
        rec.update({"dev_" + k: v for k, v in
                    evaluate_heads(st.parser, st.dev, trainer.averaged(), dev_max_iter).items()})
    trainer.history.append(rec)
    msg = (f"epoch {trainer.epoch}/{epochs}{label}: {n / seconds:.0f} sent/s, "
           f"{mistakes} mistakes")
    if st.dev is not None:
        msg += f", dev UAS {rec['dev_uas']:.2f}, dev cert {rec['dev_cert']:.1f}%"
    log.info(msg)
    if checkpoint:
        trainer.save_checkpoint(checkpoint)


def finish(st: Setup, train_sents, labeler_epochs, seed, epochs, t_start, **extra) -> Model:
    """Train the labeler and return the model with averaged weights and training info."""
    labeler = None
    t_lab = 0.0
    if labeler_epochs > 0:
        from .labeler import train_labeler

        t0 = time.perf_counter()
        labeler = train_labeler(st.encoded, st.heads, [s.rels for s in train_sents],
                                st.trainer.vocab, bits=st.trainer.config.labeler_bits,
                                epochs=labeler_epochs, seed=seed)
        t_lab = time.perf_counter() - t0
        log.info("labeler trained in %.1f s", t_lab)
    info = {"history": st.trainer.history, "train_sentences": len(st.data),
            "train_words": st.nwords, "pruner_seconds": st.t_prune, "labeler_seconds": t_lab,
            "seed": seed, "epochs": epochs, "total_seconds": time.perf_counter() - t_start,
            **extra}
    model = st.trainer.model(averaged=True, info=info)
    model.labeler = labeler
    return model
