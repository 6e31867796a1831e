"""Training of the tagger and lemmatizer (:mod:`depparse.inference.tagging`), and jackknifing.

Every classifier of the pipeline is an averaged perceptron (Collins 2002): the UPOS and XPOS
models are structured (Viterbi over tag bigrams; the update adds the gold sequence's features
and subtracts the predicted one's), FEATS and the lemmatizer classify each word on its own.
Averaging is lazy, as for the parser (:mod:`depparse.learn.perceptron`).  The later stages
learn on the gold UPOS (and, for the lemmatizer, gold XPOS and FEATS) of the training data.

:func:`jackknife` re-tags a training set by k-fold cross-validation (each part tagged by a
tagger that did not see it: ``benchmarks/tagger_experiments.py --jackknife K``).

References
----------
M. Collins. Discriminative training methods for hidden Markov models: theory and experiments
with perceptron algorithms. EMNLP 2002.
B. Taskar, C. Guestrin and D. Koller. Max-margin Markov networks. NIPS 2004 (loss-augmented
decoding).
K. Crammer, O. Dekel, J. Keshet, S. Shalev-Shwartz and Y. Singer. Online passive-aggressive
algorithms. JMLR 7, 2006.
"""

from __future__ import annotations

import logging
import time
from collections import Counter, defaultdict

import numba as nb
import numpy as np

from ..decode.tag_chain import best_each, viterbi
from ..encoding.minilm import batch_word_vectors, one_blas_thread, word_vectors
from ..errors import TrainingDataError
from ..features.hashing import mix
from ..features.lemmas import derive, key
from ..features.tags import candidate_scores, lemma_bases, tag_bases
from ..inference.tagging import (
    Tagger,
    TaggerTask,
    all_candidates,
    allowed_candidates,
    feat_hashes,
)
from ..model import Component

__all__ = ["TAGGER_DEFAULTS", "column_accuracy", "fit_tagger", "jackknife", "train_step",
           "train_tagger", "training_tagger"]

log = logging.getLogger(__name__)


#: Default settings of :func:`fit_tagger` (chosen on en_ewt dev, benchmarks/experiments).
TAGGER_DEFAULTS = {"epochs": 8, "bits": 22, "feats": "bundle", "viterbi": True,
                   "encoder_layer": None, "vector_scale": 3.0,
                   "dense": ("upos", "xpos", "feats"), "script_types": 3, "margin": 1.0,
                   "seed": 0}


@nb.njit(cache=True)
def _add(bases, counts, i, salt, y, scale, w, acc, c, mask, vec, dense, dacc):
    for f in range(counts[i]):
        idx = np.int64((mix(bases[i, f], salt) + np.uint64(y)) & mask)
        w[idx] += scale
        acc[idx] += c * scale
    for d in range(vec.shape[1]):
        x = scale * vec[i, d]
        dense[y, d] += x
        dacc[y, d] += c * x


@nb.njit(cache=True)
def train_step(bases, counts, salt, w, acc, mask, full, vec, dense, dacc, trans, tacc,
               use_viterbi, ptr, ids, gold, c, margin):
    """One perceptron step of one task on one sentence; returns the number of wrong words.

    Parameters
    ----------
    bases, counts, salt, w, mask, ptr, ids
        As for :func:`depparse.features.tags.candidate_scores`.
    full, vec, dense
        The dense features, as for ``candidate_scores`` (``full`` may be (N, 0) while
        ``vec`` holds the vectors: the updates need them).
    acc, dacc, tacc
        The lazy-averaging sums of ``w``, ``dense`` and ``trans`` (``+= c * update``).
    trans : (C + 1, C + 1) float64
        Tag-bigram weights (used if ``use_viterbi``).
    use_viterbi : bool
    gold : (N,) int64
        Gold class of each word; -1: none among its candidates (no update there; only for
        tasks decoded word by word).
    c : float
        The number of steps so far (averaging).
    margin : float
        Loss-augmented decoding: every wrong candidate's score is raised by ``margin``
        before decoding (Hamming cost; Taskar et al. 2004, Crammer et al. 2006), so that
        the update also happens where the gold tags win by less than the margin.
    """
    N = ptr.shape[0] - 1
    E = np.empty(ids.shape[0])
    candidate_scores(bases, counts, salt, w, mask, full, vec, dense, ptr, ids, E)
    if margin != 0.0:
        for i in range(1, N):
            for k in range(ptr[i], ptr[i + 1]):
                if ids[k] != gold[i]:
                    E[k] += margin
    if use_viterbi:
        pred = viterbi(E, ptr, ids, trans)
    else:
        pred = best_each(E, ptr, ids)
    err = 0
    for i in range(1, N):
        g = gold[i]
        if g < 0 or pred[i] == g or pred[i] < 0:
            continue
        err += 1
        _add(bases, counts, i, salt, g, 1.0, w, acc, c, mask, vec, dense, dacc)
        _add(bases, counts, i, salt, pred[i], -1.0, w, acc, c, mask, vec, dense, dacc)
    if use_viterbi and err > 0:
        S = trans.shape[0] - 1
        pg = S
        pp = S
        for i in range(1, N + 1):
            g = gold[i] if i < N else S
            p = pred[i] if i < N else S
            if g != p or pg != pp:
                trans[pg, g] += 1.0
                tacc[pg, g] += c
                trans[pp, p] -= 1.0
                tacc[pp, p] -= c
            pg = g
            pp = p
    return err


def _feat_pairs(bundle: str) -> list[tuple[str, str]]:
    out = []
    for item in bundle.split("|") if bundle else ():
        name, _, value = item.partition("=")
        out.append((name, value))
    return out


def _build_tasks(sentences, feats_mode, use_viterbi, dim, dense, script_types):
    """The tasks of a tagger for these training sentences, and the lemma dictionary."""
    upos = sorted({u for s in sentences for u in s.upos[1:]})
    ui = {u: i for i, u in enumerate(upos)}
    xpos = sorted({x for s in sentences for x in s.xpos[1:]})
    xi = {x: i for i, x in enumerate(xpos)}
    ax = np.zeros((len(upos), len(xpos)), dtype=bool)
    bundles = sorted({f for s in sentences for f in s.feats[1:]})
    bi = {b: i for i, b in enumerate(bundles)}
    af = np.zeros((len(upos), len(bundles)), dtype=bool)
    values: dict[str, set] = defaultdict(set)
    seen_with: dict[str, set] = defaultdict(set)  # (name) -> {(upos, value)}
    scripts: dict[str, set] = defaultdict(set)  # script -> the forms it was seen with
    lemmas: dict[tuple[str, str], set] = defaultdict(set)
    for s in sentences:
        for i in range(1, s.n + 1):
            u = ui[s.upos[i]]
            ax[u, xi[s.xpos[i]]] = True
            af[u, bi[s.feats[i]]] = True
            for name, value in _feat_pairs(s.feats[i]):
                values[name].add(value)
                seen_with[name].add((u, value))
            if s.lemmas[i] != "_" or s.forms[i] == "_":
                scripts[derive(s.forms[i], s.lemmas[i])].add(s.forms[i].lower())
                lemmas[(s.forms[i], s.upos[i])].add(s.lemmas[i])

    def d(name):
        return dim if dense == "all" or name in dense else 0

    tasks = [TaggerTask("upos", upos, use_viterbi, None, d("upos")),
             TaggerTask("xpos", xpos, use_viterbi and len(xpos) > 1, ax, d("xpos"))]
    if feats_mode == "bundle":
        tasks.append(TaggerTask("feats", bundles, False, af, d("feats")))
    elif feats_mode == "split":
        for name in sorted(values, key=str.lower):
            classes = [""] + sorted(values[name])
            allowed = np.zeros((len(upos), len(classes)), dtype=bool)
            allowed[:, 0] = True
            for u, v in seen_with[name]:
                allowed[u, classes.index(v)] = True
            tasks.append(TaggerTask("feat=" + name, classes, False, allowed, d("feats")))
    else:
        raise ValueError(f"feats must be 'bundle' or 'split', got {feats_mode!r}")
    # a script that strips nothing applies to every word: a class only if productive
    kept = sorted(key(sc) for sc, forms in scripts.items()
                  if sc[1] or sc[3] or len(forms) >= script_types)
    tasks.append(TaggerTask("lemma", kept, False, None, d("lemma")))
    lemma_dict = {k: next(iter(v)) for k, v in lemmas.items() if len(v) == 1}
    return tasks, lemma_dict


def _gold(tagger, s):
    """Gold class ids of every task (-1 where a class is unknown to the task)."""
    out = {}
    for name, t in tagger.tasks.items():
        if name == "upos":
            col = s.upos
        elif name == "xpos":
            col = s.xpos
        elif name == "feats":
            col = s.feats
        elif name.startswith("feat="):
            col = [dict(_feat_pairs(f)).get(name[5:], "") for f in s.feats]
        else:
            continue
        out[name] = np.array([-1] + [t.index.get(v, -1) for v in col[1:]], dtype=np.int64)
    return out


def _prepare(tagger, s, vec):
    """Everything the training steps need of one sentence (gold inputs for later stages)."""
    N = s.n + 1
    atoms = tagger.lexicon.sentence(s.forms)
    gold = _gold(tagger, s)
    bases, c1, c2 = tag_bases(atoms, gold["upos"], True)
    cands = {}
    for name in tagger.order[:-1]:
        t = tagger.tasks[name]
        cands[name] = all_candidates(N, len(t.classes)) if t.allowed is None else \
            allowed_candidates(t.allowed, gold["upos"])
    # lemmatizer: gold tags in, candidates from the scripts that apply
    lem = tagger.tasks["lemma"]
    ptr = np.zeros(N + 1, dtype=np.int64)
    ids: list[int] = []
    lgold = np.full(N, -1, dtype=np.int64)
    for i in range(1, N):
        cid, _ = tagger.scripts.candidates(s.forms[i])
        if s.lemmas[i] != "_" or s.forms[i] == "_":
            g = lem.index.get(key(derive(s.forms[i], s.lemmas[i])), -1)
            lgold[i] = g if g in cid else -1
        ids.extend(cid)
        ptr[i + 1] = len(ids)
    bundle, fptr, fids = feat_hashes(s.feats)
    xg = np.maximum(gold["xpos"], 0)
    lbases, lcounts = lemma_bases(atoms, gold["upos"], xg, bundle, fptr, fids)
    gold["lemma"] = lgold
    cands["lemma"] = (ptr, np.array(ids, dtype=np.int64))
    return {"bases": bases, "c1": c1, "c2": c2, "lbases": lbases, "lcounts": lcounts,
            "gold": gold, "cands": cands, "vec": vec}


def _averaged(w, acc, c):
    return w - acc / max(c, 1.0)


def column_accuracy(predicted, sentences) -> dict:
    """Per-word accuracy (%) of predicted ``(lemmas, upos, xpos, feats)`` against gold
    sentences: UPOS, XPOS, FEATS (whole bundles), AllTags, LEMMA (words whose gold lemma is
    ``_`` count as right, as in the CoNLL 2018 scorer)."""
    right = Counter()
    n = 0
    for (lem, up, xp, fe), s in zip(predicted, sentences, strict=True):
        for i in range(1, s.n + 1):
            n += 1
            u, x, f = up[i] == s.upos[i], xp[i] == s.xpos[i], fe[i] == s.feats[i]
            right["upos"] += u
            right["xpos"] += x
            right["feats"] += f
            right["alltags"] += u and x and f
            right["lemma"] += s.lemmas[i] == "_" or lem[i] == s.lemmas[i]
    return {k: round(100.0 * right[k] / max(n, 1), 2)
            for k in ("upos", "xpos", "feats", "alltags", "lemma")}


def fit_tagger(sentences, *, dev=None, vectors=None, dev_vectors=None, **settings) -> Tagger:
    """Train a tagger and lemmatizer on gold-tagged sentences.

    Parameters
    ----------
    sentences : list of Sentence
        Training data (UPOS, XPOS, FEATS and LEMMA are read; a column that is ``_``
        everywhere becomes a single class, predicted as ``_``).
    dev : list of Sentence, optional
        Accuracies on it after every epoch go to the log and ``info["dev"]``.
    vectors, dev_vectors : list of (n, D) arrays, optional
        The encoder's word vectors of each sentence (layer ``encoder_layer``), if computed
        already; otherwise they are computed here when ``encoder_layer`` is set.
    **settings
        Override :data:`TAGGER_DEFAULTS`: ``epochs``; ``bits`` (hashed weights ``2**bits``);
        ``feats`` (``"bundle"``: one class per FEATS bundle, ``"split"``: one classifier per
        feature); ``viterbi`` (UPOS and XPOS decoded with tag bigrams, else word by word);
        ``encoder_layer`` (MiniLM layer of the dense features, None: none); ``vector_scale``
        (their norm); ``dense`` (``"all"`` or the task names that see them);
        ``script_types`` (an edit script that strips nothing from the form is a class of
        the lemmatizer only if seen with this many distinct forms; the others always are);
        ``margin`` (loss-augmented training, :func:`train_step`); ``seed``.

    Returns
    -------
    Tagger
    """
    unknown = set(settings) - set(TAGGER_DEFAULTS)
    if unknown:
        raise TypeError(f"unknown tagger settings {sorted(unknown)}")
    cfg = {**TAGGER_DEFAULTS, **settings}
    if not sentences:
        raise TrainingDataError("no training sentences for the tagger")
    layer = cfg["encoder_layer"]
    if layer is not None and vectors is None:
        t0 = time.perf_counter()
        vectors = [word_vectors(layer, list(s.forms[1:])) for s in sentences]
        log.info("tagger: encoder vectors of %d sentences, %.1f s", len(sentences),
                 time.perf_counter() - t0)
    dim = 0 if layer is None else int(np.asarray(vectors[0]).shape[1])
    tasks, lemma_dict = _build_tasks(sentences, cfg["feats"], cfg["viterbi"], dim, cfg["dense"],
                                     cfg["script_types"])
    size = 1 << int(cfg["bits"])
    encoder = None if layer is None else {"layer": int(layer),
                                          "scale": float(cfg["vector_scale"])}
    tagger = Tagger(tasks, np.zeros(size), lemma_dict, encoder, {"settings": cfg})
    t0 = time.perf_counter()
    data = []
    for k, s in enumerate(sentences):
        vec = tagger.vectors(s.forms, None if vectors is None else vectors[k]) \
            if layer is not None else np.zeros((s.n + 1, 0))
        data.append(_prepare(tagger, s, vec))
    log.info("tagger: features of %d sentences, %.1f s", len(data), time.perf_counter() - t0)
    mask = tagger.mask
    w = np.zeros(size)
    acc = np.zeros(size)
    sums = {n: (np.zeros_like(t.dense), np.zeros_like(t.trans)) for n, t in tagger.tasks.items()}
    live = [n for n in tagger.order if len(tagger.tasks[n].classes) > 1]
    c = 0.0
    history = []
    for ep in range(int(cfg["epochs"])):
        t0 = time.perf_counter()
        errors = Counter()
        with one_blas_thread():
            for j in np.random.default_rng([cfg["seed"], 12, ep]).permutation(len(data)):
                c = _epoch_step(tagger, data[j], live, w, acc, mask, sums, c, errors,
                                float(cfg["margin"]))
        words = sum(len(d["c1"]) - 1 for d in data)
        msg = ", ".join(f"{n} {100.0 * errors[n] / words:.2f}%" for n in live)
        entry = {"epoch": ep + 1, "seconds": round(time.perf_counter() - t0, 1)}
        if dev is not None:
            avg = _snapshot(tagger, w, acc, sums, c)
            entry["dev"] = column_accuracy(avg.tag(dev, dev_vectors), dev)
            msg += f"; dev {entry['dev']}"
        history.append(entry)
        log.info("tagger epoch %d: training errors %s (%.1f s)", ep + 1, msg, entry["seconds"])
    out = _snapshot(tagger, w, acc, sums, c)
    out.info = {"settings": cfg, "history": history,
                "train_words": int(sum(s.n for s in sentences))}
    return out


def _epoch_step(tagger, d, live, w, acc, mask, sums, c, errors, margin):
    """Perceptron steps of every task on one prepared sentence; returns ``c + 1``."""
    for name in live:
        t = tagger.tasks[name]
        if name == "lemma":
            bases, counts = d["lbases"], d["lcounts"]
        else:
            bases, counts = d["bases"], d["c1" if name == "upos" else "c2"]
        vec = d["vec"] if t.dense.shape[1] else d["vec"][:, :0]
        ptr, ids = d["cands"][name]
        full, _ = t.dense_args(vec)
        errors[name] += train_step(bases, counts, t.salt, w, acc, mask, full, vec, t.dense,
                                   sums[name][0], t.trans, sums[name][1], t.viterbi, ptr, ids,
                                   d["gold"][name], c, margin)
    return c + 1.0


def _snapshot(tagger, w, acc, sums, c) -> Tagger:
    """A tagger holding the averaged weights so far."""
    tasks = []
    for name in tagger.order:
        t = tagger.tasks[name]
        a = TaggerTask(t.name, t.classes, t.viterbi, t.allowed, t.dense.shape[1])
        a.dense = _averaged(t.dense, sums[name][0], c)
        a.trans = _averaged(t.trans, sums[name][1], c)
        tasks.append(a)
    return Tagger(tasks, _averaged(w, acc, c), tagger.lemma_dict, tagger.encoder, tagger.info)


def train_tagger(sentences, **kwargs) -> Component:
    """:func:`fit_tagger`, stored as the model component ``"tagger"``
    (:meth:`Tagger.to_component`); read it back with :meth:`Tagger.from_component`."""
    return fit_tagger(sentences, **kwargs).to_component()


def jackknife(sentences, folds: int = 10, vectors=None, columns=("lemmas", "upos", "xpos",
                                                                   "feats"), **settings):
    """The training sentences re-tagged by k-fold taggers (jackknifing).

    The sentences are split into ``folds`` contiguous parts; each part is tagged by a tagger
    trained on the other parts (:func:`fit_tagger` with ``settings``), so that a parser
    trained on the result sees tags as wrong as they will be at parse time.

    Parameters
    ----------
    sentences : list of Sentence
    folds : int
        At least 2.
    vectors : list of (n, D) arrays, optional
        The encoder's word vectors of each sentence (computed once here otherwise, when
        ``encoder_layer`` is set).
    columns : sequence of str
        The columns replaced (:meth:`Tagger.retag`).
    **settings
        As for :func:`fit_tagger`.

    Returns
    -------
    list of Sentence
        In the input order, copies carrying predicted columns (:meth:`Sentence.with_tags`).
    """
    if folds < 2 or folds > len(sentences):
        raise ValueError(f"folds must be between 2 and the number of sentences, got {folds}")
    layer = settings.get("encoder_layer")
    if layer is not None and vectors is None:
        vectors = [word_vectors(layer, list(s.forms[1:])) for s in sentences]
    bounds = np.linspace(0, len(sentences), folds + 1).astype(int)
    out: list = []
    for k in range(folds):
        a, b = int(bounds[k]), int(bounds[k + 1])
        train = sentences[:a] + sentences[b:]
        tv = None if vectors is None else list(vectors[:a]) + list(vectors[b:])
        t0 = time.perf_counter()
        tagger = fit_tagger(train, vectors=tv, **settings)
        out.extend(tagger.retag(sentences[a:b], None if vectors is None else vectors[a:b],
                                columns))
        log.info("jackknife fold %d/%d: %.1f s", k + 1, folds, time.perf_counter() - t0)
    return out


def training_tagger(train_sents, vectors, config, training) -> Component:
    """The tagger and lemmatizer of a training run, trained on its (gold) training data, as
    the model's component (the parser and labeler learn from the gold tags).

    The tagger sees the encoder's vectors of the contextual classes' layer when the model has
    them (the same vectors, computed once).
    """
    blank = [name for name, attr, b in (("UPOS", "upos", "_"), ("XPOS", "xpos", "_"),
                                        ("LEMMA", "lemmas", "_"), ("FEATS", "feats", ""))
             if all((getattr(s, attr)[1:] == b).all() for s in train_sents)]
    if blank:
        log.warning("the training data has no %s ('_' on every word): the tagger leaves %s "
                    "out, and the model writes '_' there", "/".join(blank),
                    "them" if len(blank) > 1 else "it")
    layer = config.context_layer or None
    if layer and any(v is None for v in vectors):  # resumed: the classes exist already
        vectors = batch_word_vectors(layer, [s.forms[1:] for s in train_sents])
    t0 = time.perf_counter()
    tagger = fit_tagger(train_sents, vectors=vectors if layer else None, encoder_layer=layer,
                        seed=training.seed)
    log.info("tagger and lemmatizer trained in %.1f s%s", time.perf_counter() - t0,
             f" (with the encoder's layer-{layer} vectors)" if layer else "")
    return tagger.to_component()
