"""Training of the DEPREL labeler: averaged structured perceptron on gold trees.

The model is that of :mod:`depparse.inference.labeling` (each head's children labelled
jointly); the perceptron decodes every head's children with the current weights and, where a
label is wrong, adds the gold labelling's features and subtracts the predicted one's.
Averaging is lazy, as for the parser (:mod:`depparse.learn.perceptron`).
"""

from __future__ import annotations

import logging
import time

import numba as nb
import numpy as np

from ..decode.labels import children_of, label_chain
from ..encoding.ids import START
from ..features.hashing import mix
from ..features.labels import (
    N_SPECIAL,
    fill_transitions,
    head_emissions,
    sentence_bases,
    trans_features,
)

__all__ = ["train_labeler"]

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
def train_step(heads, bases, counts, upos, gold, w, acc, c, mask, nlabels):
    """Structured perceptron step on every head's children; returns the number of errors."""
    N = bases.shape[0]
    pred = np.zeros(N, dtype=np.int64)
    T = np.zeros((4, nlabels, nlabels))
    ptr, kids = children_of(heads)
    err = 0
    for h in range(N):
        if ptr[h + 1] == ptr[h]:
            continue
        ch = kids[ptr[h]:ptr[h + 1]]
        # the bigram scores this head needs, from the current weights
        fill_transitions(upos[h], 3, w, mask, nlabels, T)
        done = np.zeros(3, dtype=np.bool_)
        for i in range(1, ch.shape[0]):
            side = (1 if ch[i - 1] > h else 0) + (1 if ch[i] > h else 0)
            if not done[side]:
                fill_transitions(upos[h], side, w, mask, nlabels, T)
                done[side] = True
        E = head_emissions(ch, bases, counts, w, mask, nlabels)
        label_chain(E, T[3, START], T, ch, h, N_SPECIAL, pred)
        wrong = 0
        for m in ch:
            if pred[m] != gold[m]:
                wrong += 1
        if wrong:
            err += wrong
            _add_seq(ch, h, gold, bases, counts, upos, w, acc, c, mask, 1.0)
            _add_seq(ch, h, pred, bases, counts, upos, w, acc, c, mask, -1.0)
    return err


def train_labeler(encoded, heads, rels, vocab, bits=20, epochs=8, seed=0):
    """Train the labeler on gold trees; returns averaged weights ``(2**bits,)``.

    Parameters
    ----------
    encoded : list of Encoded
    heads : list of (n+1,) int64 gold heads
    rels : list of (n+1,) str arrays (gold DEPREL)
    vocab : Vocabularies (its ``deprel`` vocabulary defines the label set)
    """
    mask = np.uint64((1 << bits) - 1)
    nlabels = len(vocab.deprel)
    data = []
    for e, h, r in zip(encoded, heads, rels, strict=True):
        bases, counts = sentence_bases(h, e.form, e.lemma, e.upos, e.xpos, e.suffix, e.cluster,
                                       e.feat_ptr, e.feat_ids)
        gold = np.array([0] + [vocab.deprel.get(x) for x in r[1:]], dtype=np.int64)
        data.append((np.asarray(h, dtype=np.int64), e.upos, bases, counts, gold))
    w = np.zeros(1 << bits)
    acc = np.zeros(1 << bits)
    c = 0.0
    for ep in range(epochs):
        t0 = time.perf_counter()
        errors = words = 0
        for i in np.random.default_rng([seed, 77, ep]).permutation(len(data)):
            heads_, upos, bases, counts, gold = data[i]
            errors += train_step(heads_, bases, counts, upos, gold, w, acc, c, mask, nlabels)
            words += len(gold) - 1
            c += 1.0
        log.info("labeler epoch %d/%d: %.2f%% of the training labels wrong, %.1f s", ep + 1,
                 epochs, 100.0 * errors / max(1, words), time.perf_counter() - t0)
    return w - acc / max(c, 1.0)
