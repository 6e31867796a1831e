"""Training the tag-dependent parts of joint tagging and parsing over Z (issue 30, item 2).

The joint model of :mod:`depparse.decode.joint` scores an analysis (tree ``y``, tags ``t``) by

    F(y, t) = weight * chain(t) + f(y) + sum_m D(h_m, m, t_{h_m}, t_m),

where ``D`` re-scores the parser's sparse arc features under candidate UPOS
(:mod:`depparse.features.tag_arcs`).  A parser trained on gold tags has never had to *choose*
tags with those weights; this stage teaches it, continuing from a trained model:

* **Candidate sets as at parse time, with the tagger's real ambiguity.**  The training
  sentences are split into ``folds`` contiguous parts; each part is tagged by a tagger trained
  on the other parts (:func:`~depparse.learn.tagger.jackknife_taggers`, the model's own tagger
  settings), which gives the pipeline's tags (encoded as the parse path encodes them) and the
  candidate UPOS through the same :func:`~depparse.inference.joint.tag_candidates` the parse
  path uses.  The gold UPOS is added to a word's candidates where it is missing: without it
  the gold analysis is outside the search space and no update could make it win (as the
  perceptron keeps every gold arc in the pruned training sets,
  :func:`~depparse.learn.pruner.keep_masks`).  The cost: such words have one candidate more
  than at parse time; their number is reported (``gold_added``).
* **Decoding over Z, cost-augmented** (Koo et al. 2010, Sec. 6, as
  :class:`~depparse.learn.perceptron.Trainer` does for trees): every head automaton on its
  own, each choosing its own tag and its modifiers' tags (the automata slave of
  :mod:`depparse.decode.joint`: :func:`~depparse.decode.joint.joint_decompose` with
  ``alpha = 0``, zero multipliers and one iteration decodes exactly it; the tree and the
  chain it also decodes are not read).  Every wrong arc, and every modifier copy of a tag
  that is not the gold tag, looks better by ``loss_aug`` (Hamming loss over arcs and tags;
  in a tree every word is a modifier once, so this counts each wrong tag once).  The tagger's
  chain plays no part: in Z the tags of the automata need not agree, so the chain (held
  fixed, its weight tuned on dev afterwards) could not change their choice.
* **PA-I update** (Crammer et al. 2006) of the sparse weights on ``phi(gold tree, gold tags)
  - phi(predicted z, predicted tags)``: the arc features read the tags chosen for the arc's
  two words (the gold tags on the gold side), the sibling and grandparent features the
  pipeline's tags, as in ``F``.  The learned network's and the dense term's arc scores
  (tag-blind) enter the part tables and the margin as they are, fixed.
* **Averaging** as the perceptron averages (lazy, :func:`~depparse.learn.updates.update`): the
  result is the average of the weight vectors after each example of the fine-tuning,
  starting from the model's.

Deterministic for a seed: epoch ``e`` visits the examples in the order of
``default_rng([seed, 30, e]).permutation``, the fold taggers are trained with that seed.

References
----------
A. M. Rush, D. Sontag, M. Collins, T. Jaakkola. On dual decomposition and linear programming
relaxations for natural language processing. EMNLP 2010 (Sec. 4.1).
T. Koo, A. M. Rush, M. Collins, T. Jaakkola, D. Sontag. Dual decomposition for parsing with
non-projective head automata. EMNLP 2010 (Sec. 6: training over Z).
K. Crammer, O. Dekel, J. Keshet, S. Shalev-Shwartz, Y. Singer. Online passive-aggressive
algorithms. JMLR 7, 2006 (PA-I).
"""

from __future__ import annotations

import dataclasses
import logging
import time

import numpy as np

from ..decode.joint import decode_z_tags
from ..decode.tags import best_each, viterbi
from ..encoding.minilm import batch_word_vectors
from ..errors import ConfigError
from ..features.parts import (
    MAX_FEATS,
    WordArrays,
    arc_features,
    build_parts,
    structure_features,
)
from ..features.tag_arcs import tag_arc_table
from ..inference.joint import JointSettings, tag_candidates
from ..inference.parser import Parser
from ..model import Model
from .progress import EpochProgress
from .tagger import jackknife_taggers
from .updates import feature_stats, update

__all__ = ["JOINT_FOLDS", "JointExample", "JointTrainer", "check_joint_training",
           "joint_examples", "train_joint"]

log = logging.getLogger(__name__)

JOINT_FOLDS = 5  # jackknife folds of the candidate sets (5 taggers: a tagger is ~3 minutes)


@dataclasses.dataclass
class JointExample:
    """One training sentence as joint training reads it.

    ``enc`` is the sentence tagged by its fold's tagger (the pipeline's tags), ``heads`` the
    gold tree, ``keep`` the kept arcs (the model's pruner, gold arcs added), ``fixed`` the arc
    scores that do not learn here (learned network, dense term; zero off ``keep``);
    ``cptr`` / ``cand_upos`` the candidate UPOS of every word (the parser's UPOS ids; CSR as
    :class:`~depparse.decode.joint.TagTable`'s ``ptr``, the tagger's best first) and
    ``gold[i]`` the index of word ``i``'s gold UPOS among its candidates (``gold[0] = -1``).
    """

    enc: object
    heads: np.ndarray
    keep: np.ndarray
    fixed: np.ndarray
    cptr: np.ndarray
    cand_upos: np.ndarray
    gold: np.ndarray
    gold_added: int = 0  # words whose gold UPOS was not among the tagger's candidates


def check_joint_training(model: Model) -> None:
    """Raise :class:`~depparse.errors.ConfigError` where joint training cannot apply: a model
    without a tagger (nothing to choose tags from), with head bigrams (``gsh``: joint decoding
    does not combine with them), an ``mst`` model (no head automata), or dense scores on the
    sibling parts (their fixed share of the margin is not kept apart)."""
    cfg = model.config
    if cfg.order == 0:
        raise ConfigError("joint_epochs", "joint training decodes with head automata: not for "
                                          "an mst model")
    if cfg.head_bigrams:
        raise ConfigError("joint_epochs", "joint tagging does not combine with head bigrams "
                                          "(a gsh model)")
    if "tagger" not in model.components:
        raise ConfigError("joint_epochs", "joint training learns to choose among the tagger's "
                                          "candidate tags: the model has no tagger (train "
                                          "without --no-tagger)")
    if cfg.dense_layer and cfg.dense_parts != "arc":
        raise ConfigError("joint_epochs", "joint training keeps the dense term fixed on arcs "
                                          "only: not with --dense-parts all")


def joint_examples(model: Model, sentences, folds: int = JOINT_FOLDS, seed: int = 0,
                   settings: JointSettings | None = None, progress=False,
                   only=None) -> list[JointExample]:
    """The :class:`JointExample` of every training sentence (module docstring): each fold
    tagged by a tagger trained on the other folds (``folds`` >= 2, the model's tagger
    settings, ``seed``), its candidates chosen by ``settings`` (the defaults of
    :class:`~depparse.inference.joint.JointSettings` when None), gold UPOS added.
    ``only``: the indices of the folds to make (default: all; the examples of several calls
    with the same arguments and disjoint ``only``, concatenated in fold order, are those of
    one call)."""
    check_joint_training(model)
    js = settings or JointSettings()
    parser = Parser(model)
    vocab = model.vocab
    tg0 = parser.tagger
    tset = dict((tg0.info or {}).get("settings") or {})
    tset["seed"] = seed
    if tg0.encoder is not None:
        tset["encoder_layer"] = int(tg0.encoder["layer"])
    t0 = time.perf_counter()
    sentences = list(sentences)
    ctx = list(vocab.iter_context_vectors(sentences))  # None each without classes
    layer = tset.get("encoder_layer")
    if layer is None:
        tvec = None
    elif vocab.context is not None and vocab.context.layer == layer:
        tvec = ctx
    else:
        tvec = batch_word_vectors(layer, [s.forms[1:] for s in sentences])
    log.info("joint training: encoder vectors of %d sentences in %.1f s", len(sentences),
             time.perf_counter() - t0)
    out: list[JointExample] = []
    bar = EpochProgress("joint training: candidate sets", len(sentences), progress)
    for a, b, tg, vec in jackknife_taggers(sentences, folds, tvec, only, **tset):
        task = tg.tasks["upos"]
        fold = []
        for j, s in enumerate(sentences[a:b]):
            lat = tg.upos_lattice(s.forms, None if vec is None else vec[j])
            best = (viterbi(lat.emit, lat.ptr, lat.ids, task.trans) if task.viterbi
                    else best_each(lat.emit, lat.ptr, lat.ids))
            lem, up, xp, fe = tg.tag_given_upos(s.forms, lat, best)
            pipe = s.with_tags(lemmas=lem, upos=up, xpos=xp, feats=fe)
            cptr, sel = tag_candidates(lat.emit, lat.ptr, lat.ids, task.trans, best, js.k,
                                       js.margin)
            fold.append((s, vocab.encode(pipe, ctx[a + j]), cptr,
                         [vocab.upos.get(tg.upos[t]) for t in lat.ids[sel]]))
        if parser.learned is not None:  # the network's scores, many sentences per pass
            parser.learned.attach([f[1] for f in fold])
        for s, enc, cptr, cand in fold:
            out.append(_example(parser, s, enc, cptr, cand))
            bar.update(len(out), enc.n)
        if parser.learned is not None:
            parser.learned.detach([f[1] for f in fold])
    bar.close()
    return out


def _example(parser, s, enc, cptr, cand) -> JointExample:
    """The :class:`JointExample` of the gold sentence ``s`` encoded with the pipeline's tags
    (``enc``), its candidates ``cptr`` / ``cand`` (parser UPOS ids) with the gold UPOS
    added."""
    vocab = parser.model.vocab
    heads = np.asarray(s.heads, dtype=np.int64)
    keep = parser.keep_mask(enc)
    keep[heads[1:], np.arange(1, enc.n + 1)] = True
    full = parser.part_table(enc, keep)
    sparse = build_parts(enc, keep, parser.w, parser.config.bits, parser.order, None,
                         parser.templates_on)
    fixed = np.zeros(keep.shape)
    fixed[keep] = full.arc[keep] - sparse.arc[keep]
    ptr, ups, gold, added = [0, 0], [], [-1], 0
    for w in range(1, enc.n + 1):
        mine = cand[cptr[w]:cptr[w + 1]]
        g = vocab.upos.get(s.upos[w])
        if g not in mine:
            mine = [*mine, g]
            added += 1
        gold.append(mine.index(g))
        ups.extend(mine)
        ptr.append(len(ups))
    return JointExample(enc, heads, keep, fixed, np.array(ptr, dtype=np.int64),
                        np.array(ups, dtype=np.int64), np.array(gold, dtype=np.int64), added)


def _arc_tag_features(arrays, mask, on, h, m, uh, um, buf):
    """Feature indices of the arc ``h -> m`` with ``upos[h] = uh``, ``upos[m] = um``."""
    upos = arrays.upos
    keep_h, keep_m = upos[h], upos[m]
    if h > 0:
        upos[h] = uh
    upos[m] = um
    k = arc_features(h, m, arrays.form, arrays.lemma, upos, arrays.xpos, arrays.prefix,
                     arrays.suffix, arrays.cluster, arrays.feat_ptr, arrays.feat_ids, mask, on,
                     buf)
    upos[h], upos[m] = keep_h, keep_m
    return buf[:k].copy()


class JointTrainer:
    """Fine-tuning of a model's sparse parser weights for the joint model (module docstring).

    ``w`` starts from the model's weights; ``acc`` and ``c`` average them lazily as
    :class:`~depparse.learn.perceptron.Trainer` does.
    """

    def __init__(self, model: Model, loss_aug: float = 1.0, pa_c: float = 1.0, seed: int = 0):
        check_joint_training(model)
        self.model = model
        self.w = np.array(model.weights, dtype=np.float64, copy=True)
        self.acc = np.zeros_like(self.w)
        self.c = 0.0
        self.epoch = 0
        self.seed = seed
        self.loss_aug = float(loss_aug)
        self.pa_c = float(pa_c)
        parser = Parser(model)
        self.on = parser.templates_on
        self.single_root = parser.decoding.single_root
        self.history: list[dict] = []

    def averaged(self):
        """``w - acc / c``: the average of the weights after each example so far."""
        return self.w.copy() if self.c == 0 else self.w - self.acc / self.c

    def step(self, ex: JointExample):
        """Decode ``ex`` over Z with tags (cost-augmented) and update on a mistake.

        Returns ``(mistake, right_arcs, right_tags)``: whether the prediction differed from
        the gold analysis, its gold arcs and the modifier tags it got right."""
        cfg = self.model.config
        bits, order, on = cfg.bits, cfg.order, self.on
        mask = np.uint64((1 << bits) - 1)
        enc, heads, keep, cptr, gold = ex.enc, ex.heads, ex.keep, ex.cptr, ex.gold
        n = enc.n
        parts = build_parts(enc, keep, self.w, bits, order, None, on)
        parts.arc[keep] += ex.fixed[keep]
        doff, dtab = tag_arc_table(enc, keep, self.w, bits, cptr, ex.cand_upos, on)
        cols = np.arange(1, n + 1)
        if self.loss_aug > 0:
            good = np.isfinite(parts.arc)
            parts.arc[good] += self.loss_aug
            parts.arc[heads[1:], cols] -= self.loss_aug
            for h, m in zip(*np.nonzero(doff >= 0), strict=True):
                kh = 1 if h == 0 else cptr[h + 1] - cptr[h]
                km = cptr[m + 1] - cptr[m]
                block = dtab[doff[h, m]:doff[h, m] + kh * km].reshape(kh, km)
                block += self.loss_aug
                block[:, gold[m]] -= self.loss_aug
        pmods, ppar, own, mtag = decode_z_tags(parts, doff, dtab, cptr, self.single_root)
        gmods = np.zeros_like(pmods)
        gmods[heads[1:], cols] = True
        gpar = heads
        diff = (pmods != gmods).any(axis=1)
        if order == 2:
            diff[1:] |= ppar[1:] != gpar[1:]
        taken = np.nonzero(pmods)
        wrong_tag = np.zeros_like(pmods)
        wrong_tag[taken] = mtag[taken] != gold[taken[1]]
        diff |= wrong_tag.any(axis=1)
        diff[1:] |= (own[1:] != gold[1:]) & (pmods[1:].any(axis=1) | gmods[1:].any(axis=1))
        right_arcs = int((pmods & gmods).sum())
        right_tags = int(len(taken[0]) - wrong_tag.sum())
        if diff.any():
            a = enc.arrays()
            arrays = WordArrays(*a)._replace(upos=np.array(a[2], copy=True))
            terms = [(structure_features(*a, mask, on, order, gmods, gpar, diff), 1.0),
                     (structure_features(*a, mask, on, order, pmods, ppar, diff), -1.0)]
            ups = ex.cand_upos
            buf = np.empty(MAX_FEATS, dtype=np.int64)
            plus, minus = [], []
            fixed_margin = 0.0
            for m in range(1, n + 1):  # the gold arcs in the differing automata, gold tags
                h = int(heads[m])
                if not diff[h]:
                    continue
                fixed_margin += ex.fixed[h, m]
                if (h > 0 and gold[h] != 0) or gold[m] != 0:
                    uh = ups[cptr[h] + gold[h]] if h > 0 else 0
                    plus.append(_arc_tag_features(arrays, mask, on, h, m, uh,
                                                  ups[cptr[m] + gold[m]], buf))
                    minus.append(_arc_tag_features(arrays, mask, on, h, m, a[2][h], a[2][m],
                                                   buf))
            for h, m in zip(*taken, strict=True):  # the predicted arcs, predicted tags
                if not diff[h]:
                    continue
                fixed_margin -= ex.fixed[h, m]
                th = own[h] if h > 0 else 0
                if th != 0 or mtag[h, m] != 0:
                    uh = ups[cptr[h] + th] if h > 0 else 0
                    minus.append(_arc_tag_features(arrays, mask, on, h, m, uh,
                                                   ups[cptr[m] + mtag[h, m]], buf))
                    plus.append(_arc_tag_features(arrays, mask, on, h, m, a[2][h], a[2][m],
                                                  buf))
            if plus:
                terms += [(np.concatenate(plus), 1.0), (np.concatenate(minus), -1.0)]
            dot, norm = feature_stats(self.w, terms)
            dot += fixed_margin
            loss = float((pmods != gmods).sum()) + float(wrong_tag.sum())
            if order == 2:
                loss += float((ppar[1:] != gpar[1:]).sum())
            scale = min(self.pa_c, max(0.0, loss - dot) / max(norm, 1e-12))
            if scale > 0:
                for idx, coef in terms:
                    update(self.w, self.acc, self.c, idx, coef * scale)
        self.c += 1.0
        return bool(diff.any()), right_arcs, right_tags

    def run_epoch(self, data, progress=None):
        """One pass over ``data`` (:class:`JointExample` list) in the epoch's seeded order;
        returns ``(mistakes, right_arcs, right_tags)`` summed over it."""
        order = np.random.default_rng([self.seed, 30, self.epoch]).permutation(len(data))
        mistakes = arcs = tags = 0
        for j, i in enumerate(order):
            wrong, ra, rt = self.step(data[i])
            mistakes += wrong
            arcs += ra
            tags += rt
            if progress is not None:
                progress(j + 1, data[i].enc.n)
        self.epoch += 1
        return mistakes, arcs, tags

    def result(self, info=None) -> Model:
        """A copy of the model with the averaged weights (``info["joint_training"]`` records
        the run)."""
        return dataclasses.replace(self.model, weights=self.averaged(),
                                   info={**(self.model.info or {}),
                                         "joint_training": info or {}},
                                   components=dict(self.model.components))


def train_joint(model: Model, sentences, epochs: int, *, folds: int = JOINT_FOLDS,
                seed: int = 0, settings: JointSettings | None = None, loss_aug: float = 1.0,
                pa_c: float = 1.0, examples=None, progress=False) -> Model:
    """Fine-tune ``model``'s sparse parser weights for joint tagging and parsing for
    ``epochs`` epochs over the gold-annotated ``sentences`` (module docstring); returns a new
    model (the input is not changed).  ``examples``: the :func:`joint_examples` of
    ``sentences``, if made already.

    Raises
    ------
    ConfigError
        Where joint training cannot apply (:func:`check_joint_training`).
    """
    check_joint_training(model)
    if epochs < 1:
        raise ConfigError("joint_epochs", f"must be >= 1 here, got {epochs}")
    t0 = time.perf_counter()
    data = examples if examples is not None else joint_examples(
        model, sentences, folds, seed, settings, progress)
    t_prep = time.perf_counter() - t0
    words = sum(e.enc.n for e in data)
    added = sum(e.gold_added for e in data)
    cands = sum(int(e.cptr[-1]) for e in data)
    log.info("joint training: %d sentences, %.2f candidate UPOS per word (gold added to %d "
             "words), prepared in %.0f s", len(data), cands / max(words, 1), added, t_prep)
    tr = JointTrainer(model, loss_aug, pa_c, seed)
    history = []
    for e in range(epochs):
        t1 = time.perf_counter()
        bar = EpochProgress(f"joint epoch {e + 1}/{epochs}", len(data), progress)
        mistakes, arcs, tags = tr.run_epoch(data, progress=bar.update)
        bar.close()
        rec = {"epoch": e + 1, "mistakes": mistakes, "train_uas": 100.0 * arcs / words,
               "train_upos": 100.0 * tags / words, "seconds": time.perf_counter() - t1}
        history.append(rec)
        log.info("joint epoch %d/%d: %.0f s; sentences wrong over Z %d of %d, arcs right "
                 "%.2f%%, tags right %.2f%%", e + 1, epochs, rec["seconds"], mistakes,
                 len(data), rec["train_uas"], rec["train_upos"])
    info = {"epochs": epochs, "folds": folds, "seed": seed, "loss_aug": loss_aug,
            "pa_c": pa_c, "k": (settings or JointSettings()).k,
            "margin": (settings or JointSettings()).margin, "sentences": len(data),
            "words": words, "candidates_per_word": cands / max(words, 1),
            "gold_added": added, "prepare_seconds": t_prep, "history": history}
    return tr.result(info)
