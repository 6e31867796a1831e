"""Training of the DEPREL labeler: averaged structured perceptron on gold trees.

The model is that of :mod:`depparse.inference.labeling` (each head's children labelled
jointly); the perceptron decodes every head's children with the current weights and, where a
label is wrong, adds the gold labelling's features and subtracts the predicted one's.
Averaging is lazy, as for the parser (:mod:`depparse.learn.perceptron`).

:func:`learn_label_constraints` learns the penalties of the soft label constraints
(Anzaroot et al. 2014; :mod:`depparse.features.label_constraints`) on held-out labels: the
training trees are split into folds, each fold's heads get the emission and bigram scores of a
labeler trained on the other folds (jackknifing, so the scores are as wrong as on unseen
text), and an averaged perceptron over the penalties decodes each head under the current
penalties and moves them by the violations of its labels minus those of the gold labels
(clipped at zero).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numba as nb
import numpy as np

from ..decode.label_chain import children_of, label_chain, soft_label_chain
from ..encoding.ids import START
from ..encoding.minilm import one_blas_thread
from ..features.hashing import mix
from ..features.label_constraints import constraint_set
from ..features.label_dense import LabelDense, arc_label_features, dense_label_scores
from ..features.labels import (
    N_SPECIAL,
    fill_transitions,
    head_emissions,
    sentence_bases,
    trans_features,
    transition_tables,
)
from ..inference.labeling import CONSTRAINTS_VERSION
from ..model import Component
from .data import jackknife_folds

__all__ = ["HeldOut", "fit_label_constraints", "held_out_label_scores", "learn_label_constraints",
           "train_labeler", "train_labeler_dense"]

log = logging.getLogger(__name__)


@nb.njit(cache=True)
def _add_seq(children, h, labels, bases, counts, upos, w, acc, c, mask, scale):
    """Add ``scale`` x the features of one head's labelled children to the weights."""
    buf = np.empty(2, dtype=np.int64)
    hp = upos[h]
    yp = START
    prev = -1
    for i in range(children.shape[0]):
        m = children[i]
        y = labels[m]
        ul = np.uint64(y)
        for j in range(counts[m]):
            idx = np.int64(mix(bases[m, j], ul) & mask)
            w[idx] += scale
            acc[idx] += c * scale
        side = 3 if prev < 0 else (1 if prev > h else 0) + (1 if m > h else 0)
        trans_features(yp, y, hp, side, mask, buf)
        for j in range(2):
            w[buf[j]] += scale
            acc[buf[j]] += c * scale
        yp = y
        prev = m


@nb.njit(cache=True)
def train_step(heads, bases, counts, upos, gold, w, acc, c, mask, nlabels, extra, pred):
    """Structured perceptron step on every head's children; returns the number of errors.

    ``extra`` (N, labels): scores added to the emissions (the dense term, updated by the
    caller); ``pred`` (N,) receives the predicted labels.
    """
    N = bases.shape[0]
    T = np.zeros((4, nlabels, nlabels))
    ptr, kids = children_of(heads)
    err = 0
    for h in range(N):
        if ptr[h + 1] == ptr[h]:
            continue
        ch = kids[ptr[h]:ptr[h + 1]]
        # the bigram scores this head needs, from the current weights
        fill_transitions(upos[h], np.int64(3), w, mask, nlabels, T)  # (int64: no literal compile)
        done = np.zeros(3, dtype=np.bool_)
        for i in range(1, ch.shape[0]):
            side = (1 if ch[i - 1] > h else 0) + (1 if ch[i] > h else 0)
            if not done[side]:
                fill_transitions(upos[h], side, w, mask, nlabels, T)
                done[side] = True
        E = head_emissions(ch, bases, counts, w, mask, nlabels)
        for i in range(ch.shape[0]):
            for j in range(E.shape[1]):  # (a loop: no row assignment, slices.put)
                E[i, j] += extra[ch[i], j]
        label_chain(E, T[3, START], T, ch, h, np.int64(N_SPECIAL), pred)
        wrong = 0
        for m in ch:
            if pred[m] != gold[m]:
                wrong += 1
        if wrong:
            err += wrong
            _add_seq(ch, h, gold, bases, counts, upos, w, acc, c, mask, 1.0)
            _add_seq(ch, h, pred, bases, counts, upos, w, acc, c, mask, -1.0)
    return err


def _prepare(encoded, heads, rels, vocab):
    """Per sentence: gold heads, UPOS, emission hashes and gold label ids."""
    data = []
    for e, h, r in zip(encoded, heads, rels, strict=True):
        bases, counts = sentence_bases(h, e.form, e.lemma, e.upos, e.xpos, e.suffix, e.cluster,
                                       e.feat_ptr, e.feat_ids)
        gold = np.array([0] + [vocab.deprel.get(x) for x in r[1:]], dtype=np.int64)
        data.append((np.asarray(h, dtype=np.int64), e.upos, bases, counts, gold))
    return data


def _train(data, bits, nlabels, epochs, seed, what="labeler", dense=None):
    """Averaged perceptron over ``data`` (:func:`_prepare`); returns ``(w, W)``, ``W`` the
    averaged dense weights (buckets, labels, 3D) when ``dense = (z, pf, factor, buckets)``
    gives each sentence's standardised vectors ``z[i]`` (:mod:`depparse.features.label_dense`),
    else None."""
    mask = np.uint64((1 << bits) - 1)
    w = np.zeros(1 << bits)
    acc = np.zeros(1 << bits)
    W = accW = None
    if dense is not None:
        zs, pf, factor, buckets = dense
        W = np.zeros((buckets, nlabels, 3 * zs[0].shape[1]))
        accW = np.zeros_like(W)
    c = 0.0
    for ep in range(epochs):
        t0 = time.perf_counter()
        errors = words = 0
        for i in np.random.default_rng([seed, 77, ep]).permutation(len(data)):
            heads_, upos, bases, counts, gold = data[i]
            N = len(gold)
            pred = np.zeros(N, dtype=np.int64)
            if W is None:
                extra = np.zeros((N, nlabels))
            else:
                F, dirs = arc_label_features(zs[i], heads_, pf, factor, buckets)
                extra = dense_label_scores(F, dirs, W)
            errors += train_step(heads_, bases, counts, upos, gold, w, acc, c, mask, nlabels,
                                 extra, pred)
            if W is not None:
                bad = np.flatnonzero(pred[1:] != gold[1:]) + 1
                if len(bad):
                    for y, sign in ((gold, 1.0), (pred, -1.0)):
                        np.add.at(W, (dirs[bad], y[bad]), sign * F[bad])
                        np.add.at(accW, (dirs[bad], y[bad]), (sign * c) * F[bad])
            words += N - 1
            c += 1.0
        log.info("%s epoch %d/%d: %.2f%% of the training labels wrong, %.1f s", what, ep + 1,
                 epochs, 100.0 * errors / max(1, words), time.perf_counter() - t0)
    c = max(c, 1.0)
    return w - acc / c, (None if W is None else W - accW / c)


def train_labeler(encoded, heads, rels, vocab, bits=20, epochs=8, seed=0):
    """Train the labeler on gold trees; returns averaged weights ``(2**bits,)``.

    Parameters
    ----------
    encoded : list of Encoded
    heads : list of (n+1,) int64 gold heads
    rels : list of (n+1,) str arrays (gold DEPREL)
    vocab : Vocabularies (its ``deprel`` vocabulary defines the label set)
    """
    return _train(_prepare(encoded, heads, rels, vocab), bits, len(vocab.deprel), epochs,
                  seed)[0]


def train_labeler_dense(encoded, heads, rels, vocab, term, bits=20, epochs=8, seed=0,
                        factor=1.0, buckets=2):
    """:func:`train_labeler` with dense label scores over the vectors of the parser's dense
    arc term ``term`` (:class:`~depparse.features.dense.DenseArcs`; the sentences must be
    encoded with their vectors); ``buckets``: 2 (weights per direction) or 11 (per direction
    and distance, :func:`~depparse.features.label_dense.arc_bucket_of`); returns
    ``(w, LabelDense)``."""
    zs = [term.sentence(e).astype(np.float32) for e in encoded]
    with one_blas_thread():  # one small product per sentence: BLAS threads only contend
        w, W = _train(_prepare(encoded, heads, rels, vocab), bits, len(vocab.deprel), epochs,
                      seed, dense=(zs, np.float32(term.pf), np.float32(factor), buckets))
    return w, LabelDense(W, factor, term)


@nb.njit(cache=True)
def _held_out_heads(data_heads, data_bases, data_counts, data_upos, data_gold, w, mask,
                    nlabels, fold, out_E, out_kids, out_h, out_hpos, out_fold, out_gold, ptr, j, r):
    """Append the heads of one held-out sentence: emission rows from rows ``r``, heads from
    ``j``; returns the new ``(j, r)``."""
    p, kids = children_of(data_heads)
    for h in range(data_heads.shape[0]):
        if p[h + 1] == p[h]:
            continue
        ch = kids[p[h]:p[h + 1]]
        E = head_emissions(ch, data_bases, data_counts, w, mask, nlabels)
        for i in range(ch.shape[0]):
            out_E[r + i] = E[i]
            out_kids[r + i] = ch[i]
            out_gold[r + i] = data_gold[ch[i]]
        out_h[j] = h
        out_hpos[j] = data_upos[h]
        out_fold[j] = fold
        ptr[j + 1] = r + ch.shape[0]
        r += ch.shape[0]
        j += 1
    return j, r


@nb.njit(cache=True)
def _penalty_epoch(order, E_all, kids, hs, hpos, folds, tables, gold, ptr, A, b, rho, acc, c,
                   rate, max_iter, out, learn):
    """One pass over the held-out heads in ``order``: each is decoded under the penalties
    ``rho`` and, with ``learn``, a mislabelled one moves them (perceptron step; ``acc``, ``c``:
    the lazy average).  Returns ``(c, wrong labels)``."""
    K = A.shape[0]
    cp = np.empty(K)
    cg = np.empty(K)
    wrong_labels = 0
    for j in order:
        a, z = ptr[j], ptr[j + 1]
        ch = kids[a:z]
        T = tables[folds[j], hpos[j]]
        soft_label_chain(E_all[a:z], T[3, START], T, ch, hs[j], np.int64(N_SPECIAL), A, b, rho,
                         max_iter, out)
        wrong = 0
        for i in range(z - a):
            if out[ch[i]] != gold[a + i]:
                wrong += 1
        wrong_labels += wrong
        c += 1.0
        if wrong == 0 or not learn:
            continue
        for k in range(K):
            cp[k] = -b[k]
            cg[k] = -b[k]
        for i in range(z - a):
            for k in range(K):
                cp[k] += A[k, out[ch[i]]]
                cg[k] += A[k, gold[a + i]]
        for k in range(K):
            d = rate * (max(0.0, cp[k]) - max(0.0, cg[k]))
            if d == 0.0:
                continue
            new = max(0.0, rho[k] + d)
            acc[k] += c * (new - rho[k])
            rho[k] = new
    return c, wrong_labels


@dataclass
class HeldOut:
    """Jackknifed label scores of the training heads (:func:`held_out_label_scores`): head
    ``j``'s children ``kids[ptr[j]:ptr[j + 1]]`` of head word ``hs[j]`` (UPOS ``hpos[j]``),
    their emission rows in ``E`` and gold labels in ``gold``, scored by fold ``fold[j]``'s
    labeler (bigram tables ``tables[fold]``)."""

    E: np.ndarray
    kids: np.ndarray
    gold: np.ndarray
    hs: np.ndarray
    hpos: np.ndarray
    fold: np.ndarray
    ptr: np.ndarray
    tables: np.ndarray
    max_len: int


def held_out_label_scores(encoded, heads, rels, vocab, bits=20, epochs=8, seed=0, folds=5):
    """Score every training head's children with a labeler trained on the other folds (each
    fold's labeler trained like the model's: ``bits``, ``epochs``)."""
    nlabels = len(vocab.deprel)
    data = _prepare(encoded, heads, rels, vocab)
    mask = np.uint64((1 << bits) - 1)
    nwords = sum(len(d[4]) - 1 for d in data)
    nheads = sum(len(np.unique(d[0][1:])) for d in data)
    E_all = np.empty((nwords, nlabels))
    kids = np.empty(nwords, dtype=np.int64)
    gold = np.empty(nwords, dtype=np.int64)
    hs, hpos, fid = (np.empty(nheads, dtype=np.int64) for _ in range(3))
    ptr = np.zeros(nheads + 1, dtype=np.int64)
    assign = jackknife_folds(len(data), folds, seed, 78)
    tables = np.empty((folds, len(vocab.upos), 4, nlabels, nlabels))
    j = r = 0
    for f in range(folds):
        rest = [d for d, a in zip(data, assign, strict=True) if a != f]
        w = _train(rest, bits, nlabels, epochs, seed, what=f"labeler for fold {f + 1}/{folds}")[0]
        tables[f] = transition_tables(w, mask, nlabels, len(vocab.upos))
        for d, a in zip(data, assign, strict=True):
            if a == f:
                j, r = _held_out_heads(d[0], d[2], d[3], d[1], d[4], w, mask, nlabels, f, E_all,
                                       kids, hs, hpos, fid, gold, ptr, j, r)
    assert j == nheads and r == nwords
    return HeldOut(E_all, kids, gold, hs, hpos, fid, ptr, tables, max(len(d[4]) for d in data))


def fit_label_constraints(held, labels, penalty_epochs=5, rates=(0.03, 0.1, 0.3, 1.0),
                          max_iter=100, seed=0, require_gain=True):
    """The ``label_constraints`` component for the label strings ``labels``, penalties
    learned on ``held`` (:class:`HeldOut`): for each of ``rates`` (the perceptron's step per
    unit of violation) ``penalty_epochs`` averaged-perceptron passes; the rate whose averaged
    penalties leave the fewest held-out labels wrong is kept (no penalties at all when none
    beats that, unless ``require_gain`` is false).  ``max_iter``: the dual decomposition
    budget per head (stored for parsing too)."""
    names, A, b = constraint_set(labels, N_SPECIAL)
    h = held
    nheads = len(h.hs)
    out = np.zeros(h.max_len, dtype=np.int64)
    every = np.arange(nheads)

    def wrong(rho):
        return _penalty_epoch(every, h.E, h.kids, h.hs, h.hpos, h.fold, h.tables, h.gold, h.ptr,
                              A, b, rho, np.zeros(len(b)), 0.0, 0.0, max_iter, out, False)[1]

    best_rho, best_rate = np.zeros(len(b)), 0.0
    best = base = wrong(best_rho)
    if not require_gain:
        best = np.inf
    log.info("label constraints: %d of %d held-out labels wrong without penalties", base,
             len(h.gold))
    tried = {}
    for rate in rates:
        rho = np.zeros(len(b))
        acc = np.zeros(len(b))
        c = 0.0
        for ep in range(penalty_epochs):
            order = np.random.default_rng([seed, 79, ep]).permutation(nheads)
            c, _ = _penalty_epoch(order, h.E, h.kids, h.hs, h.hpos, h.fold, h.tables, h.gold,
                                  h.ptr, A, b, rho, acc, c, rate, max_iter, out, True)
        avg = np.maximum(rho - acc / max(c, 1.0), 0.0)
        n_wrong = wrong(avg)
        tried[str(rate)] = int(n_wrong)
        log.info("label constraints, rate %g: %d held-out labels wrong", rate, n_wrong)
        if n_wrong < best:
            best, best_rho, best_rate = n_wrong, avg, rate
    meta = {"version": CONSTRAINTS_VERSION, "names": names, "max_iter": int(max_iter),
            "epochs": penalty_epochs, "rate": best_rate,
            "held_out_wrong": {"none": int(base), **tried}, "held_out_labels": len(h.gold)}
    return Component(meta, {"A": A, "b": b, "rho": best_rho})


def learn_label_constraints(encoded, heads, rels, vocab, bits=20, epochs=8, seed=0, folds=5,
                            **fit):
    """Penalties of the soft label constraints, learned on jackknifed labels (module
    docstring): :func:`held_out_label_scores` then :func:`fit_label_constraints` (``fit``:
    its keywords)."""
    held = held_out_label_scores(encoded, heads, rels, vocab, bits, epochs, seed, folds)
    comp = fit_label_constraints(held, vocab.deprel.items, seed=seed, **fit)
    comp.meta["folds"] = folds
    return comp
