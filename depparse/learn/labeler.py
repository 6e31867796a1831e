"""Dependency labels: a second-stage averaged-perceptron arc labeler.

Given a tree, every arc ``h -> m`` gets the label ``argmax_l w . phi(h, m, l)``.  The features
``phi(h, m, l)`` conjoin ``l`` with atoms of the head and the modifier (forms, lemmas, UPOS,
XPOS, morphological features, suffixes), direction and distance, the surrounding UPOS, the
grandparent, the nearest siblings of ``m`` on each side of ``h``, and the UPOS of ``m``'s own
children (a ``case`` child tells ``obl`` from ``obj``) — information the first-order label
models of MSTParser lack, available here because the whole tree is known.

It is trained on gold trees (averaged perceptron with lazy averaging, like the parser) and
applied to predicted trees.
"""

from __future__ import annotations

import logging
import time

import numba as nb
import numpy as np

from ..features import _ctx, _dist_bucket, _mix, _t
from ..sentence import END, START

__all__ = ["Labeler", "label_arcs", "train_labeler"]

log = logging.getLogger(__name__)

MAX_BASE = 256
N_SPECIAL = 6  # label ids below this are the vocabulary's reserved ids


@nb.njit(cache=True)
def _tree_context(heads, upos):
    """Per word: nearest left/right sibling, left/right child counts, child-UPOS bitmask."""
    N = heads.shape[0]
    lsib = np.full(N, -1, dtype=np.int64)
    rsib = np.full(N, -1, dtype=np.int64)
    nl = np.zeros(N, dtype=np.int64)
    nr = np.zeros(N, dtype=np.int64)
    cmask = np.zeros(N, dtype=np.uint64)
    one = np.uint64(1)
    for m in range(1, N):
        h = heads[m]
        if m < h:
            nl[h] += 1
        else:
            nr[h] += 1
        cmask[h] |= one << np.uint64(upos[m] & 63)
        # nearest sibling on each side of m (same head)
        for s in range(m - 1, 0, -1):
            if heads[s] == h:
                lsib[m] = s
                break
        for s in range(m + 1, N):
            if heads[s] == h:
                rsib[m] = s
                break
    return lsib, rsib, nl, nr, cmask


@nb.njit(cache=True)
def _base_features(h, m, heads, lsib, rsib, nl, nr, cmask, form, lemma, upos, xpos, suffix,
                   feat_ptr, feat_ids, buf):
    """Label-independent feature hashes of arc ``h -> m`` (conjoined with the label later)."""
    N = heads.shape[0]
    d = 1 if m > h else 0
    db = np.uint64(d * 16 + _dist_bucket(abs(m - h)))
    hw = form[h]
    hp = upos[h]
    mw = form[m]
    mp = upos[m]
    g = heads[h] if h > 0 else -1
    gp = END if g < 0 else upos[g]
    k = 0
    buf[k] = _t(100, db)
    k += 1
    buf[k] = _mix(_t(101, mw), d)
    k += 1
    buf[k] = _mix(_t(102, mp), d)
    k += 1
    buf[k] = _mix(_t(103, lemma[m]), d)
    k += 1
    buf[k] = _mix(_t(104, xpos[m]), d)
    k += 1
    buf[k] = _mix(_mix(_t(105, hp), mp), db)
    k += 1
    buf[k] = _mix(_mix(_t(106, hw), mp), d)
    k += 1
    buf[k] = _mix(_mix(_t(107, hp), mw), d)
    k += 1
    buf[k] = _mix(_mix(_t(108, lemma[h]), lemma[m]), d)
    k += 1
    buf[k] = _mix(_mix(_t(109, xpos[h]), xpos[m]), d)
    k += 1
    buf[k] = _mix(_t(110, hw), d)
    k += 1
    buf[k] = _mix(_t(111, hp), d)
    k += 1
    buf[k] = _mix(_mix(_t(112, suffix[m]), mp), d)
    k += 1
    buf[k] = _mix(_mix(_mix(_t(113, gp), hp), mp), d)
    k += 1
    buf[k] = _mix(_mix(_mix(_t(114, _ctx(upos, m - 1)), mp), _ctx(upos, m + 1)), d)
    k += 1
    buf[k] = _mix(_mix(_mix(_t(115, hp), _ctx(upos, m - 1)), mp), d)
    k += 1
    buf[k] = _mix(_mix(_mix(_t(116, hp), mp), _ctx(upos, m + 1)), d)
    k += 1
    ls = lsib[m]
    rs = rsib[m]
    buf[k] = _mix(_mix(_mix(_t(117, hp), START if ls < 0 else upos[ls]), mp), d)
    k += 1
    buf[k] = _mix(_mix(_mix(_t(118, hp), mp), END if rs < 0 else upos[rs]), d)
    k += 1
    buf[k] = _mix(_mix(_t(119, mp), min(nl[m], 3)), min(nr[m], 3))
    k += 1
    buf[k] = _mix(_mix(_t(120, hp), min(nl[h], 4)), min(nr[h], 4))
    k += 1
    buf[k] = _mix(_mix(_t(121, hp), mp), h == 0)
    k += 1
    # UPOS of m's children, each once
    cm = cmask[m]
    for b in range(64):
        if cm & (np.uint64(1) << np.uint64(b)):
            buf[k] = _mix(_mix(_t(122, mp), b), d)
            k += 1
            buf[k] = _mix(_mix(_mix(_t(123, hp), mp), b), d)
            k += 1
    # the forms of m's closest left children matter for case marking (e.g. "of", "to")
    for c in range(m - 1, max(0, m - 4), -1):
        if heads[c] == m:
            buf[k] = _mix(_mix(_t(124, form[c]), mp), hp)
            k += 1
    for c in range(m + 1, min(N, m + 4)):
        if heads[c] == m:
            buf[k] = _mix(_mix(_t(129, form[c]), mp), hp)
            k += 1
    cnt = 0
    for j in range(feat_ptr[m], feat_ptr[m + 1]):
        if cnt >= 16:
            break
        cnt += 1
        buf[k] = _mix(_mix(_t(125, feat_ids[j]), mp), d)
        k += 1
    cnt = 0
    for j in range(feat_ptr[h], feat_ptr[h + 1]):
        if cnt >= 8:
            break
        cnt += 1
        buf[k] = _mix(_mix(_t(130, feat_ids[j]), mp), d)
        k += 1
    buf[k] = _mix(_mix(_t(126, hw), mw), d)
    k += 1
    buf[k] = _mix(_mix(_t(127, mw), hp), db)
    k += 1
    buf[k] = _mix(_mix(_mix(_t(128, lemma[h]), lemma[m]), mp), d)
    k += 1
    return k


@nb.njit(cache=True)
def _sentence_bases(heads, form, lemma, upos, xpos, suffix, feat_ptr, feat_ids):
    """Base feature hashes of every arc of the tree: (N, MAX_BASE) uint64 and counts."""
    N = heads.shape[0]
    lsib, rsib, nl, nr, cmask = _tree_context(heads, upos)
    bases = np.zeros((N, MAX_BASE), dtype=np.uint64)
    counts = np.zeros(N, dtype=np.int64)
    for m in range(1, N):
        counts[m] = _base_features(heads[m], m, heads, lsib, rsib, nl, nr, cmask, form, lemma,
                                   upos, xpos, suffix, feat_ptr, feat_ids, bases[m])
    return bases, counts


@nb.njit(cache=True)
def _best_label(base, k, w, mask, nlabels):
    best = -np.inf
    bl = N_SPECIAL
    for lab in range(N_SPECIAL, nlabels):
        t = 0.0
        ul = np.uint64(lab)
        for i in range(k):
            t += w[np.int64(_mix(base[i], ul) & mask)]
        if t > best:
            best = t
            bl = lab
    return bl


@nb.njit(cache=True)
def _predict(bases, counts, w, mask, nlabels):
    N = bases.shape[0]
    out = np.zeros(N, dtype=np.int64)
    for m in range(1, N):
        out[m] = _best_label(bases[m], counts[m], w, mask, nlabels)
    return out


@nb.njit(cache=True)
def _train_step(bases, counts, gold, w, acc, c, mask, nlabels):
    """Perceptron step on every arc of one sentence; returns the number of errors."""
    N = bases.shape[0]
    err = 0
    for m in range(1, N):
        k = counts[m]
        p = _best_label(bases[m], k, w, mask, nlabels)
        g = gold[m]
        if p != g:
            err += 1
            for i in range(k):
                j = np.int64(_mix(bases[m, i], np.uint64(g)) & mask)
                w[j] += 1.0
                acc[j] += c
                j = np.int64(_mix(bases[m, i], np.uint64(p)) & mask)
                w[j] -= 1.0
                acc[j] -= c
    return err


class Labeler:
    """Arc labeler bound to a vocabulary and a weight vector."""

    def __init__(self, vocab, weights, bits):
        self.vocab = vocab
        self.w = np.ascontiguousarray(weights, dtype=np.float64)
        self.mask = np.uint64((1 << bits) - 1)
        self.nlabels = len(vocab.deprel)

    def label(self, enc, heads):
        """Label ids for the arcs of ``heads`` (index 0 unused)."""
        return label_arcs(enc, heads, self.w, self.mask, self.nlabels)

    def label_strings(self, enc, heads):
        ids = self.label(enc, heads)
        items = self.vocab.deprel.items
        out = np.empty(len(ids), dtype=object)
        out[0] = ""
        for m in range(1, len(ids)):
            out[m] = items[ids[m]]
        return out


def label_arcs(enc, heads, w, mask, nlabels):
    """Best label id of every arc of the tree ``heads``."""
    heads = np.asarray(heads, dtype=np.int64)
    bases, counts = _sentence_bases(heads, enc.form, enc.lemma, enc.upos, enc.xpos, enc.suffix,
                                    enc.feat_ptr, enc.feat_ids)
    return _predict(bases, counts, w, mask, nlabels)


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
        bases, counts = _sentence_bases(h, e.form, e.lemma, e.upos, e.xpos, e.suffix,
                                        e.feat_ptr, e.feat_ids)
        gold = np.array([0] + [vocab.deprel.get(x) for x in r[1:]], dtype=np.int64)
        data.append((bases, counts, gold))
    w = np.zeros(1 << bits)
    acc = np.zeros(1 << bits)
    c = 0.0
    for ep in range(epochs):
        t0 = time.perf_counter()
        errors = words = 0
        for i in np.random.default_rng([seed, 77, ep]).permutation(len(data)):
            bases, counts, gold = data[i]
            errors += _train_step(bases, counts, gold, w, acc, c, mask, nlabels)
            words += len(gold) - 1
            c += 1.0
        log.info("labeler epoch %d: %.2f%% training errors, %.1f s", ep + 1,
                 100.0 * errors / max(1, words), time.perf_counter() - t0)
    return w - acc / max(c, 1.0)
