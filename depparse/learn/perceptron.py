"""Training of the parser's weights over Z (Koo et al. 2010, Sec. 6), with lazily averaged
online updates: by default passive-aggressive steps (PA-I, Crammer et al. 2006) against the
cost-augmented maximiser (``update="pa"``, ``loss_aug=1``); the structured perceptron of
Collins (2002) exactly with ``update="perceptron"``, ``loss_aug=0``.

For the ``sib`` and ``gs`` models the decoding step of training is ``argmax_{z in Z} w . phi``:
every head automaton on its own, no spanning-tree constraint, so training needs dynamic
programming only.  The ``mst`` model trains over Y with Chu-Liu-Edmonds.  With
``train_over="Y"`` the sib/gs models decode with full dual decomposition instead.

The ``gsh`` model's Z also holds the head-bigram chain on its own (:mod:`.chain`).

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

import copy
import dataclasses
import json
import logging
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..config import DecodeConfig, ModelConfig, TrainConfig, check_solver, network_epochs
from ..decode.dual import dual_decompose
from ..decode.trees import arc_matrix
from ..encoding.context import ContextClasses
from ..encoding.minilm import batch_word_vectors
from ..encoding.vocab import Vocabularies
from ..errors import CheckpointError, ConfigError, InputWarning, TrainingDataError
from ..features.dense import DenseArcs
from ..features.parts import model_families, structure_features, template_switches
from ..features.scoring import model_scorers, score
from ..inference.engine import Engine, tree_decoder
from ..model import Component, Model, atomic_savez
from ..network.biaffine import Network
from .chain import chain_mistakes, chain_terms, decode_relaxed
from .data import check_training_sentences
from .dense_training import DenseLearner
from .devscore import choose_expert_weights, evaluate_heads, final_dev
from .labeler import learn_label_constraints, train_labeler, train_labeler_dense
from .network_training import require_jax, train_learned
from .pruner import fresh_pruner_dense, jackknife_keep_masks, keep_masks, train_pruner
from .sparsity import TemplateGroups
from .stage_progress import EpochProgress
from .tagger import training_tagger
from .tokenizer_training import train_tokenizer
from .updates import feature_stats, update

__all__ = ["Trainer", "gold_structure", "train"]

log = logging.getLogger(__name__)

CKPT_VERSION = 2  # 2: decoding and training settings apart from the model's configuration


def gold_structure(heads):
    """The Z-representation of a tree: ``mods[h, m] = heads[m] == h`` and ``gpar = heads``."""
    return arc_matrix(heads), heads.astype(np.int64)


class Trainer:
    """State of a perceptron training run (see the module docstring)."""

    def __init__(self, config: ModelConfig, vocab: Vocabularies, pruner=None,
                 decoding: DecodeConfig | None = None, training: TrainConfig | None = None):
        self.config = config
        self.decoding = decoding or DecodeConfig()
        self.training = training or TrainConfig()
        self.vocab = vocab
        self.pruner = pruner
        self.seed = self.training.seed
        self.ipm_shards = None  # iterative parameter mixing (depparse.distributed): shards
        D = 1 << config.bits
        self.w = np.zeros(D)
        self.acc = np.zeros(D)
        self.c = 0.0  # examples seen so far
        self.epoch = 0
        self.history: list[dict] = []
        self.dense = None  # DenseLearner of models with dense_layer (set by setup_training)
        self.pruner_dense = None  # the pruner's DenseArcs (train --pruner-dense)
        self.learned = None  # the learned network (train --learned-scale), fixed here
        self.groups = None  # TemplateGroups while choosing templates (train --template-budget)
        self.templates_on = self.update_on = template_switches(config.templates_off)

    def leave_out(self, names):
        """From now on the model has no templates ``names`` (a list; ``templates_off``)."""
        self.config = dataclasses.replace(self.config, templates_off=",".join(names))
        self.templates_on = self.update_on = template_switches(self.config.templates_off)

    def group_lasso(self, budget, every=1000):
        """Train with budget-driven group-lasso steps over the templates from now on
        (:mod:`depparse.learn.sparsity`)."""
        self.groups = TemplateGroups(self.w.shape[0], budget, every,
                                     model_families(self.config.head_bigrams))
        self.update_on = template_switches(self.config.templates_off, record=True)

    # -- model views -----------------------------------------------------------------------
    def averaged(self):
        """Average of the weights after each example so far: ``w - acc / c``."""
        if self.c == 0:
            return self.w.copy()
        return self.w - self.acc / self.c

    def model(self, averaged=True, info=None) -> Model:
        w = self.averaged() if averaged else self.w.copy()
        m = Model(self.config, self.vocab, w, self.pruner, None, info or {}, self.decoding)
        if self.dense is not None:
            m.components["dense"] = Component(*self.dense_scorer(averaged).to_component())
        if self.pruner_dense is not None:
            m.components["pruner_dense"] = Component(*self.pruner_dense.to_component())
        if self.learned is not None:
            m.components["network"] = Component(*self.learned.to_component())
        return m

    def dense_scorer(self, averaged=True):
        """The dense arc term (None without one), averaged like :meth:`averaged`."""
        if self.dense is None:
            return None
        return self.dense.averaged(self.c) if averaged else self.dense.scorer

    # -- one example -----------------------------------------------------------------------
    def step(self, enc, heads, keep):
        """Decode one example with the current weights and update on a mistake.

        Returns ``(mistake, correct)``: whether the prediction differed, and how many of its
        arcs are gold arcs.
        """
        cfg, dec, tr = self.config, self.decoding, self.training
        order = cfg.order
        mask = np.uint64((1 << cfg.bits) - 1)
        gmods, gpar = gold_structure(heads)
        dense = self.dense
        # the network's scores, fixed, beside the sparse ones (the parser's scorers, their order)
        parts = score([(enc, keep)],
                      model_scorers(self.w, cfg.bits, order, self.templates_on,
                                    None if dense is None else dense.scorer, self.learned),
                      order, cfg.head_bigrams)[0]
        if tr.loss_aug > 0:
            # cost-augmented decoding: every wrong arc looks better by loss_aug, so the update
            # happens until the gold tree wins by a margin (Hamming loss)
            good = np.isfinite(parts.arc)
            parts.arc[good] += tr.loss_aug
            parts.arc[heads[1:], np.arange(1, enc.n + 1)] -= tr.loss_aug
        pchain = None  # the head-bigram chain's heads (gsh models)
        share = tr.chain_share if parts.bigrams and tr.train_over == "Z" else 0.0
        if order == 0:
            pheads = tree_decoder(dec.projective)(parts.arc, single_root=dec.single_root)
            pmods, ppar = gold_structure(pheads)
        elif tr.train_over == "Y":
            r = dual_decompose(parts, alpha=dec.alpha, max_iter=dec.max_iter,
                               single_root=dec.single_root, projective=dec.projective)
            pmods, ppar = gold_structure(r.heads)
            pchain = r.heads if parts.bigrams else None
        else:
            pmods, ppar, pchain = decode_relaxed(parts, share, dec.single_root)
        diff = (pmods != gmods).any(axis=1)
        if order == 2:
            diff[1:] |= ppar[1:] != gpar[1:]
        cdiff = chain_mistakes(heads, pchain)
        if diff.any() or cdiff.any():
            a = enc.arrays()
            on = self.update_on
            scale = 1.0
            terms = [(structure_features(*a, mask, on, order, gmods, gpar, diff), 1.0),
                     (structure_features(*a, mask, on, order, pmods, ppar, diff), -1.0)]
            if pchain is not None:
                terms += chain_terms(a, mask, on, heads, pchain, cdiff, pmods, share)
            if self.groups is not None:
                terms = [(self.groups.record(idx), coef) for idx, coef in terms]
            if dense is not None:  # its gradient and margin join the sparse ones
                dg, dmargin = dense.difference(enc, gmods, pmods, diff)
                if share > 0.0:  # its arcs are split like the sparse ones (learn/chain.py)
                    dz, mz = dense.difference(enc, pmods, arc_matrix(pchain),
                                              np.ones(enc.n + 1, dtype=bool))
                    dg, dmargin = dg + share * dz, dmargin + share * mz
            if tr.update == "pa":
                # PA-I: the smallest step that makes gold beat the prediction by its loss
                dot, norm = feature_stats(self.w, terms)
                if dense is not None:
                    dot, norm = dot + dmargin, norm + float(dg @ dg)
                if self.learned is not None:  # part of the margin, not of the step
                    dot += self.learned.difference(enc, gmods, pmods, diff)
                loss = float((pmods != gmods).sum())
                if order == 2:
                    loss += float((ppar[1:] != gpar[1:]).sum())
                if pchain is not None:
                    loss += float((pchain[1:] != heads[1:]).sum())
                scale = min(tr.pa_c, max(0.0, loss - dot) / max(norm, 1e-12))
            if scale > 0:
                for idx, coef in terms:
                    update(self.w, self.acc, self.c, idx, coef * scale)
                if dense is not None:
                    dense.update(dg, scale, self.c)
        self.c += 1.0
        return bool(diff.any() or cdiff.any()), int((pmods & gmods).sum())

    def run_epoch(self, data, progress=None):
        """One pass over ``data`` (list of (enc, heads, keep)) in the epoch's seeded order.

        Returns ``(mistakes, correct)``: the sentences whose prediction differed from the
        gold structure (and caused an update), and the predicted arcs that were gold (the
        training UAS of the epoch is ``correct / words``; predictions are made before each
        update, by cost-augmented decoding).
        """
        order = np.random.default_rng([self.seed, self.epoch]).permutation(len(data))
        mistakes = correct = 0
        for j, i in enumerate(order):
            enc, heads, keep = data[i]
            wrong, right = self.step(enc, heads, keep)
            mistakes += wrong
            correct += right
            if self.groups is not None and self.c % self.groups.every == 0:
                self.groups.prox(self.w, self.acc, self.c)
            if progress is not None:
                progress(j + 1, enc.n)
        self.epoch += 1
        return mistakes, correct

    # -- checkpoints -----------------------------------------------------------------------
    def save_checkpoint(self, path):
        meta = {"ckpt_version": CKPT_VERSION, "epoch": self.epoch, "c": self.c,
                "config": self.config.to_dict(), "decoding": self.decoding.to_dict(),
                "training": self.training.to_dict(), "ipm_shards": self.ipm_shards,
                "vocab": self.vocab.to_json(), "history": self.history}
        arrays = {"w": self.w, "acc": self.acc}
        if self.pruner is not None:
            arrays["pruner"] = self.pruner
        if self.dense is not None:
            meta["dense"], darrays = self.dense.state()
            arrays.update({f"dense.{k}": v for k, v in darrays.items()})
        if self.pruner_dense is not None:
            meta["pruner_dense"], parrays = self.pruner_dense.to_component()
            parrays.update(self.pruner_dense.layout.split(self.pruner_dense.theta))  # float64
            arrays.update({f"pruner_dense.{k}": v for k, v in parrays.items()})
        if self.learned is not None:
            meta["network"], narrays = self.learned.to_component()
            arrays.update({f"network.{k}": v for k, v in narrays.items()})
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        atomic_savez(path, arrays)

    @classmethod
    def load_checkpoint(cls, path) -> Trainer:
        """Read a checkpoint; raises :class:`~depparse.errors.CheckpointError` when it cannot
        be resumed from (missing, corrupt, written by another version)."""
        try:
            with np.load(path, allow_pickle=False) as z:
                meta = json.loads(z["meta"].tobytes().decode())
                if meta.get("ckpt_version") != CKPT_VERSION:
                    raise CheckpointError(
                        f"{path}: checkpoint version {meta.get('ckpt_version')}, this depparse "
                        f"writes {CKPT_VERSION}: delete it to start over")
                t = cls(ModelConfig.from_dict(meta["config"]),
                        Vocabularies.from_json(meta["vocab"]),
                        z["pruner"] if "pruner" in z.files else None,
                        DecodeConfig.from_dict(meta["decoding"]),
                        TrainConfig.from_dict(meta["training"]))
                t.w = z["w"].copy()
                t.acc = z["acc"].copy()
                if meta.get("dense"):
                    t.dense = DenseLearner.from_state(meta["dense"], _section(z, "dense."))
                if meta.get("pruner_dense"):
                    t.pruner_dense = DenseArcs.from_component(meta["pruner_dense"],
                                                              _section(z, "pruner_dense."))
                if meta.get("network"):
                    t.learned = Network.from_component(meta["network"], _section(z, "network."))
        except CheckpointError:
            raise
        except Exception as e:  # noqa: BLE001 - whatever is wrong, it cannot be resumed from
            raise CheckpointError(f"{path}: cannot resume from this checkpoint "
                                  f"({type(e).__name__}: {e}); delete it to start over") from None
        t.c = float(meta["c"])
        t.epoch = int(meta["epoch"])
        t.history = list(meta["history"])
        t.ipm_shards = meta.get("ipm_shards")
        return t


def _section(npz, prefix):
    """The arrays of an open ``.npz`` whose names start with ``prefix``, without it."""
    return {k[len(prefix):]: npz[k] for k in npz.files if k.startswith(prefix)}


def train(train_sents, dev_sents=None, config: ModelConfig | None = None,
          decoding: DecodeConfig | None = None, training: TrainConfig | None = None, *,
          checkpoint=None, resume=False, progress=True) -> Model:
    """Train a model on gold-annotated sentences.

    Parameters
    ----------
    train_sents, dev_sents : list of :class:`~depparse.conllu.Sentence`
    config : ModelConfig
        What the weights mean (model kind, hash sizes ...).
    decoding : DecodeConfig
        How to decode (the model keeps them as its defaults; ``train_over="Y"`` and the dev
        evaluation decode with them).
    training : TrainConfig
        Epochs (total, counting epochs done before a resume), seed, update rule, labeler
        and pruner epochs, dev iteration cap.
    checkpoint : path, optional
        Written atomically after every epoch.
    resume : bool
        Continue from ``checkpoint`` when it exists (its settings win).
    progress : bool
        Show progress on stderr (:class:`~.progress.EpochProgress`: a bar on a terminal, a
        log line a minute elsewhere).

    Returns
    -------
    Model
        With averaged weights; ``info`` holds the per-epoch history, timings and settings.
    """
    t_start = time.perf_counter()
    setup = setup_training(train_sents, dev_sents, config, decoding, training, checkpoint, resume)
    trainer, data = setup.trainer, setup.data
    epochs = trainer.training.epochs
    if trainer.training.template_budget and trainer.epoch == 0:
        choose_templates(setup)
    while trainer.epoch < epochs:
        t0 = time.perf_counter()
        bar = EpochProgress(f"epoch {trainer.epoch + 1}/{epochs}", len(data), progress)
        mistakes, correct = trainer.run_epoch(data, progress=bar.update)
        bar.close()
        record_epoch(setup, mistakes, correct, time.perf_counter() - t0, checkpoint)
    return finish_model(setup, train_sents, t_start, progress=progress)


def choose_templates(setup: Setup) -> list[dict]:
    """Structured sparsity (``train --template-budget B``; :mod:`.sparsity`): train a copy of
    the fresh trainer with group-lasso steps for ``template_epochs`` epochs, keep the templates
    whose weights are non-zero at the end (at most B), and make the trainer (and the dev
    parser) leave the others out.  Returns the per-template report, also recorded in the
    history."""
    main = setup.trainer
    tr = main.training
    t0 = time.perf_counter()
    sel = Trainer(main.config, main.vocab, main.pruner, main.decoding, tr)
    sel.dense = copy.deepcopy(main.dense)
    sel.group_lasso(tr.template_budget)
    epochs = []
    for e in range(tr.template_epochs):
        t1 = time.perf_counter()
        mistakes, _ = sel.run_epoch(setup.data)
        live = sel.groups.prox(sel.w, sel.acc, sel.c)
        rec = {"epoch": e + 1, "templates": live, "mistakes": mistakes,
               "seconds": time.perf_counter() - t1}
        msg = ""
        if setup.dev is not None:
            rec["dev_uas"] = evaluate_heads(setup.engine, setup.dev, sel.averaged(),
                                            tr.dev_max_iter, sel.dense_scorer())["uas"]
            msg = f", dev UAS {rec['dev_uas']:.2f} (penalised weights)"
        epochs.append(rec)
        log.info("choosing templates, epoch %d/%d: %d of %d templates non-zero%s", e + 1,
                 tr.template_epochs, live, len(sel.groups.names), msg)
    report = sel.groups.report(sel.w)
    off = [r["template"] for r in report if not r["kept"]]
    main.leave_out(off)
    setup.engine = Engine(main.model(averaged=False))
    main.history.append({"template_selection": {
        "budget": tr.template_budget, "kept": len(report) - len(off), "left_out": off,
        "epochs": epochs, "seconds": time.perf_counter() - t0, "templates": report}})
    log.info("kept %d of %d templates (group lasso, budget %d) in %.0f s; training on them",
             len(report) - len(off), len(report), tr.template_budget, time.perf_counter() - t0)
    return report


@dataclass
class Setup:
    """Everything a training run needs once the data is encoded and pruned."""

    trainer: Trainer
    engine: Engine
    data: list  # (encoded, heads, keep) per training sentence
    dev: list | None
    dev_sents: list | None
    encoded: list
    heads: list
    t_prune: float
    nwords: int
    tagger: Component | None = None  # the tagger and lemmatizer trained on all the data


def _context_classes(vocab, sentences, config, seed):
    """Cluster the encoder vectors of the training words into the vocabulary's contextual
    classes (:mod:`depparse.encoding.context`); returns the per-sentence vectors."""
    t0 = time.perf_counter()
    vectors = batch_word_vectors(config.context_layer, [s.forms[1:] for s in sentences])
    vocab.context = ContextClasses.train(np.concatenate(vectors), config.context_layer,
                                         config.context_classes, config.context_coarse, seed)
    log.info("contextual classes (layer %d, %d / %d) in %.1f s", config.context_layer,
             config.context_classes, config.context_coarse, time.perf_counter() - t0)
    return vectors


def setup_training(train_sents, dev_sents, config=None, decoding=None, training=None,
                   checkpoint=None, resume=False) -> Setup:
    """Check the data, build (or resume) the trainer, train the pruner, prune every sentence.

    Shared by :func:`train` and the Dask trainer (:mod:`depparse.distributed`).
    """
    config = config or ModelConfig()
    decoding = decoding or DecodeConfig()
    training = training or TrainConfig()
    trainer = None
    if resume and not (checkpoint and Path(checkpoint).exists()):
        where = f"no checkpoint at {checkpoint}" if checkpoint else "no checkpoint file given"
        warnings.warn(f"resume: {where}, so training starts from the beginning",
                      InputWarning, stacklevel=3)
    if resume and checkpoint and Path(checkpoint).exists():
        trainer = Trainer.load_checkpoint(checkpoint)
        log.info("resuming from %s after epoch %d", checkpoint, trainer.epoch)
        # the checkpoint's settings, but the number of epochs asked for now
        trainer.training = dataclasses.replace(trainer.training, epochs=training.epochs)
        config, decoding, training = trainer.config, trainer.decoding, trainer.training
        vocab = trainer.vocab
    if config.learned_scale and training.learned_epochs == 0:  # from the training set's size
        training = dataclasses.replace(training,
                                       learned_epochs=network_epochs(len(train_sents)))
        log.info("the network's epochs from the training set's size: %d for %d sentences "
                 "(--learned-epochs 0)", training.learned_epochs, len(train_sents))
    for name in ("labeler_dense", "pruner_dense"):
        if getattr(training, name) and not config.dense_layer:
            raise ConfigError(name, "reads the vectors of the dense arc term: it needs "
                                    "dense_layer > 0")
    if config.learned_scale:  # refused now, not after the tagger has trained
        require_jax()
    if training.expert_weights == "dev":  # refused now, not after an hour of training
        if not config.learned_scale:
            raise ConfigError("expert_weights", "chooses the weights of the learned network's "
                                                "views: it needs learned_scale > 0")
        if not training.tagger:
            raise ConfigError("expert_weights", "chooses the weight of the network's UPOS view "
                                                "in the tagger: not with --no-tagger")
        if training.labeler_epochs == 0:
            raise ConfigError("expert_weights", "chooses the weight of the network's DEPREL "
                                                "view in the labeler: not with labeler_epochs 0")
        if not dev_sents:
            raise ConfigError("expert_weights", "chooses the weights on the dev data: give "
                                                "dev sentences")
    check_solver(config, decoding)
    check_training_sentences(train_sents, "training", decoding.single_root)
    if dev_sents:
        check_training_sentences(dev_sents, "dev", decoding.single_root)
    seed = training.seed
    if trainer is None:
        vocab = Vocabularies.build(train_sents, config.min_count)
        vocab.vector_layer = config.dense_layer  # Encoded.vectors for the dense arc term
    vectors = [None] * len(train_sents)
    if config.context_layer and vocab.context is None:
        vectors = _context_classes(vocab, train_sents, config, seed)
    tagger = training_tagger(train_sents, vectors, config, training) if training.tagger else None
    encoded = [vocab.encode(s, v) for s, v in zip(train_sents, vectors, strict=True)]
    heads = [np.asarray(s.heads, dtype=np.int64) for s in train_sents]
    denc = [vocab.encode(s, v) for s, v in zip(dev_sents, vocab.iter_context_vectors(
        dev_sents), strict=True)] if dev_sents else None
    learned, hist = train_learned(None if trainer is None else trainer.learned, config,
                                  training, vocab, train_sents, encoded, dev_sents, denc,
                                  checkpoint, resume)
    t_prune = 0.0
    if trainer is None:
        pruner = pruner_dense = dense = None
        if config.dense_layer:
            dense = DenseLearner.start(config, [e.vectors for e in encoded], seed)
        if config.order > 0:
            t0 = time.perf_counter()
            if training.pruner_dense:
                pruner_dense = fresh_pruner_dense(dense.scorer)
            pruner = train_pruner(encoded, heads, bits=config.pruner_bits, label="arc pruner",
                                  epochs=training.pruner_epochs, seed=seed, dense=pruner_dense,
                                  lr_dense=training.pruner_dense)
            t_prune = time.perf_counter() - t0
            log.info("pruner trained in %.1f s", t_prune)
        trainer = Trainer(config, vocab, pruner, decoding, training)
        trainer.dense = dense
        trainer.pruner_dense = pruner_dense
        trainer.learned, trainer.history = learned, hist
    engine = Engine(trainer.model(averaged=False))
    engine.learned = trainer.learned  # with the scores computed above
    train_keep = jackknife_keep_masks(
        config, decoding, encoded, heads, training.pruner_folds, training.pruner_epochs, seed,
        trainer.pruner_dense, training.pruner_dense) if config.order > 0 else None
    if train_keep is None:
        train_keep = keep_masks(engine, encoded, heads)
    data = list(zip(encoded, heads, train_keep, strict=True))
    dev = None
    if dev_sents:
        dheads = [np.asarray(s.heads, dtype=np.int64) for s in dev_sents]
        dkeep = keep_masks(engine, denc)
        dev = list(zip(denc, dheads, dkeep, strict=True))
        kept = sum(int(k.sum()) for k in dkeep)
        hit = sum(int(k[h[1:], np.arange(1, e.n + 1)].sum()) for e, h, k in dev)
        words = sum(e.n for e in denc)
        if not any("pruner_dev_recall" in h for h in trainer.history):
            trainer.history.append({"pruner_dev_recall": 100.0 * hit / words,
                                    "pruner_heads_per_word": kept / words,
                                    # the network's heads kept beside (Engine.pruner_recall)
                                    "pruner_network": (decoding.prune_network
                                                       if engine.learned is not None else 0.0),
                                    # the network's heads capped at prune_max_heads (from
                                    # 2026-12-06; records without the key measured them
                                    # uncapped: docs/proofs.md)
                                    "pruner_network_capped": True})
        log.info("pruner on dev: gold-arc recall %.2f%%, %.2f heads per word",
                 100.0 * hit / words, kept / words)
    return Setup(trainer, engine, data, dev, dev_sents or None, encoded, heads, t_prune,
                 sum(e.n for e in encoded), tagger)


def record_epoch(setup: Setup, mistakes, correct, seconds, checkpoint, label="", **extra):
    """Record an epoch (dev UAS and certificates when there is dev data), log, checkpoint."""
    trainer = setup.trainer
    epochs = trainer.training.epochs
    n = len(setup.data)
    rec = {"epoch": trainer.epoch, "mistakes": mistakes,
           "train_uas": 100.0 * correct / max(1, setup.nwords), "train_seconds": seconds,
           "sent_per_sec": n / seconds, "words_per_sec": setup.nwords / seconds, **extra}
    K = trainer.training.dev_max_iter
    if setup.dev is not None:
        rec.update({"dev_" + k: v for k, v in
                    evaluate_heads(setup.engine, setup.dev, trainer.averaged(), K,
                                   trainer.dense_scorer()).items()})
        rec["dev_max_iter"] = K
    trainer.history.append(rec)
    msg = (f"epoch {trainer.epoch}/{epochs}{label}: {seconds:.0f} s; training sentences "
           f"parsed wrong {100.0 * mistakes / max(1, n):.1f}% ({mistakes:,} of {n:,}), "
           f"training UAS {rec['train_uas']:.2f}")
    if setup.dev is not None:
        msg += (f"; dev UAS {rec['dev_uas']:.2f}, certified {rec['dev_cert']:.1f}% "
                f"(at most {K:,} iterations; parsing allows {trainer.decoding.max_iter:,})")
    log.info(msg)
    if checkpoint:
        trainer.save_checkpoint(checkpoint)


def finish_model(setup: Setup, train_sents, t_start, progress=False, **extra) -> Model:
    """Train the labeler (and the plain-text tokenizer) and return the model with averaged
    weights and training info."""
    labeler = constraints = label_dense = None
    t_lab = 0.0
    tr = setup.trainer.training
    lab_epochs = tr.epochs if tr.labeler_epochs is None else tr.labeler_epochs
    if lab_epochs > 0:
        t0 = time.perf_counter()
        if tr.labeler_dense:
            labeler, label_dense = train_labeler_dense(
                setup.encoded, setup.heads, [s.rels for s in train_sents], setup.trainer.vocab,
                setup.trainer.dense_scorer(), bits=setup.trainer.config.labeler_bits,
                epochs=lab_epochs, seed=tr.seed, factor=tr.labeler_dense)
        else:
            labeler = train_labeler(setup.encoded, setup.heads, [s.rels for s in train_sents],
                                    setup.trainer.vocab, bits=setup.trainer.config.labeler_bits,
                                    epochs=lab_epochs, seed=tr.seed)
        t_lab = time.perf_counter() - t0
        log.info("labeler trained in %.1f s", t_lab)
        if tr.label_constraints:
            t0 = time.perf_counter()
            constraints = learn_label_constraints(
                setup.encoded, setup.heads, [s.rels for s in train_sents], setup.trainer.vocab,
                bits=setup.trainer.config.labeler_bits, epochs=lab_epochs, seed=tr.seed)
            log.info("label constraints learned in %.1f s", time.perf_counter() - t0)
    info = {"history": setup.trainer.history, "train_sentences": len(setup.data),
            "train_words": setup.nwords, "pruner_seconds": setup.t_prune, "labeler_seconds": t_lab,
            "training": tr.to_dict(), "seed": tr.seed, "epochs": tr.epochs, **extra}
    model = setup.trainer.model(averaged=True, info=info)
    model.labeler = labeler
    if constraints is not None:
        model.components["label_constraints"] = constraints
    if label_dense is not None:
        model.components["label_dense"] = Component(*label_dense.to_component())
    if setup.tagger is not None:
        model.components["tagger"] = setup.tagger
    if tr.tokenizer:
        t0 = time.perf_counter()
        try:
            if not any(s.text for s in train_sents):
                raise TrainingDataError("the training data has no '# text' lines")
            model.components["tokenizer"] = train_tokenizer(train_sents, setup.dev_sents)
            info["tokenizer_seconds"] = time.perf_counter() - t0
            log.info("plain-text tokenizer trained in %.1f s", info["tokenizer_seconds"])
        except TrainingDataError as e:
            log.warning("no plain-text tokenizer (the model will read CoNLL-U only): %s", e)
    if tr.expert_weights == "dev":
        got = choose_expert_weights(model, setup.dev_sents,
                                    arc_weights=tr.arc_weight_grid(), progress=progress)
        model.config = dataclasses.replace(
            model.config, learned_tag_weight=got["tag_weight"],
            learned_arc_weight=got["arc_weight"], learned_label_weight=got["label_weight"],
            learned_arc_weight_given=got["arc_weight_given"],
            learned_label_weight_given=got["label_weight_given"])
        info["expert_weights"] = got
    if setup.dev is not None:
        info["final_dev"] = final_dev(model, setup.dev, setup.dev_sents, progress=progress)
    info["total_seconds"] = time.perf_counter() - t_start
    return model
