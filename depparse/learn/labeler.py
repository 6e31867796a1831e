"""Dependency labels: a second-stage structured-perceptron labeler.

Given a tree, the children ``c_1 < ... < c_k`` of every head ``h`` are labelled jointly:
the labels maximise ``sum_i w . phi(h, c_i, l_i) + sum_i w . psi(l_{i-1}, l_i)``, found by
Viterbi over the label chain (McDonald et al. 2006 label the children of a head as a
sequence in the same way), so that, e.g., the first of two objects of a verb becomes
``iobj`` and a clause gets at most one subject.  The arc features ``phi(h, m, l)`` conjoin
``l`` with atoms of the head and the modifier (forms, lemmas, UPOS, XPOS, morphological
features, suffixes), direction and distance, the surrounding UPOS, the grandparent, the
nearest siblings of ``m`` on each side, and the UPOS and forms of ``m``'s own children (a
``case`` child tells ``obl`` from ``obj``) — information the first-order label models of
MSTParser lack, available here because the whole tree is known.  ``psi`` conjoins the two
labels with the head's UPOS and with whether the two children lie on the same side of it.

It is trained on gold trees (averaged structured perceptron with lazy averaging, like the
parser) and applied to predicted trees.
"""

from __future__ import annotations

import logging
import time

import numba as nb
import numpy as np

from ..features import _CFINE, _CSHIFT, _ctx, _dist_bucket, _mix, _t
from ..sentence import END, START

__all__ = ["LABELER_KIND", "Labeler", "label_arcs", "train_labeler"]

log = logging.getLogger(__name__)

# "seq": the children of each head are labelled jointly (first-order label chain, Viterbi);
# "arc" (depparse 0.1): every arc on its own
LABELER_KIND = "seq"
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
                   cluster, feat_ptr, feat_ids, buf):
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
    for j in range(feat_ptr[m], min(feat_ptr[m + 1], feat_ptr[m] + 16)):
        buf[k] = _mix(_mix(_t(125, feat_ids[j]), mp), d)
        k += 1
    for j in range(feat_ptr[h], min(feat_ptr[h + 1], feat_ptr[h] + 8)):
        buf[k] = _mix(_mix(_t(130, feat_ids[j]), mp), d)
        k += 1
    buf[k] = _mix(_mix(_t(126, hw), mw), d)
    k += 1
    buf[k] = _mix(_mix(_t(127, mw), hp), db)
    k += 1
    buf[k] = _mix(_mix(_mix(_t(128, lemma[h]), lemma[m]), mp), d)
    k += 1
    buf[k] = _mix(_mix(_t(131, lemma[h]), mp), d)
    k += 1
    lsp = START if ls < 0 else upos[ls]
    rsp = END if rs < 0 else upos[rs]
    buf[k] = _mix(_mix(_mix(_mix(_t(132, hp), lsp), mp), rsp), d)
    k += 1
    rs2 = END if rs < 0 or rsib[rs] < 0 else upos[rsib[rs]]
    buf[k] = _mix(_mix(_mix(_mix(_t(133, hp), mp), rsp), rs2), d)
    k += 1
    # the closest child of m on its left (a marker: "that", "if", "to", "of")
    for c in range(m - 1, 0, -1):
        if heads[c] == m:
            buf[k] = _mix(_mix(_mix(_t(134, lemma[h]), mp), form[c]), d)
            k += 1
            break
    # contextual word classes (depparse.encoder), when the model has them
    if cluster[0] != 0:
        mc = cluster[m] & _CFINE
        hc = cluster[h] & _CFINE
        buf[k] = _mix(_t(140, mc), d)
        k += 1
        buf[k] = _mix(_mix(_t(141, mc), hp), d)
        k += 1
        buf[k] = _mix(_mix(_t(142, hc), mp), d)
        k += 1
        buf[k] = _mix(_mix(_t(143, cluster[h] >> _CSHIFT), cluster[m] >> _CSHIFT), d)
        k += 1
        buf[k] = _mix(_mix(_mix(_t(144, cluster[m] >> _CSHIFT), mp), hp), db)
        k += 1
    return k


@nb.njit(cache=True)
def _sentence_bases(heads, form, lemma, upos, xpos, suffix, cluster, feat_ptr, feat_ids):
    """Base feature hashes of every arc of the tree: (N, MAX_BASE) uint64 and counts."""
    N = heads.shape[0]
    lsib, rsib, nl, nr, cmask = _tree_context(heads, upos)
    bases = np.zeros((N, MAX_BASE), dtype=np.uint64)
    counts = np.zeros(N, dtype=np.int64)
    for m in range(1, N):
        counts[m] = _base_features(heads[m], m, heads, lsib, rsib, nl, nr, cmask, form, lemma,
                                   upos, xpos, suffix, cluster, feat_ptr, feat_ids, bases[m])
    return bases, counts


@nb.njit(cache=True)
def _emissions(base, k, w, mask, nlabels, out):
    """``out[l] = w . phi(arc, l)`` for every label ``l`` (reserved ids get -inf)."""
    for lab in range(nlabels):
        if lab < N_SPECIAL:
            out[lab] = -np.inf
            continue
        t = 0.0
        ul = np.uint64(lab)
        for i in range(k):
            t += w[np.int64(_mix(base[i], ul) & mask)]
        out[lab] = t


@nb.njit(cache=True, inline="always")
def _trans_feats(yp, y, hp, side, mask, buf):
    """Indices of the label-bigram features of two consecutive children of one head.

    ``yp`` is the previous child's label (``START`` for the first child), ``side`` tells
    whether the two children are on the same side of the head (0: both left, 1: around the
    head, 2: both right; 3 for the first child).
    """
    buf[0] = np.int64(_mix(_mix(_t(140, yp), y), side) & mask)
    buf[1] = np.int64(_mix(_mix(_mix(_t(141, yp), y), side), hp) & mask)
    return 2


@nb.njit(cache=True)
def _fill_trans(hp, side, w, mask, nlabels, T):
    """``T[side, yp, y]``: score of the label bigram ``yp -> y`` of a head with UPOS ``hp``
    (for ``side == 3``, the first child, only the row ``yp = START``)."""
    buf = np.empty(2, dtype=np.int64)
    lo = START if side == 3 else N_SPECIAL
    hi = START + 1 if side == 3 else nlabels
    for yp in range(lo, hi):
        for y in range(N_SPECIAL, nlabels):
            _trans_feats(yp, y, hp, side, mask, buf)
            T[side, yp, y] = w[buf[0]] + w[buf[1]]


@nb.njit(cache=True)
def _trans_tables(w, mask, nlabels, n_upos):
    """Transition tables of every head UPOS: ``(n_upos, 4, nlabels, nlabels)``.

    The weights are fixed at prediction time, so the label bigram scores are computed once
    per model instead of once per head.
    """
    T = np.zeros((n_upos, 4, nlabels, nlabels))
    for hp in range(n_upos):
        for side in range(4):
            _fill_trans(hp, side, w, mask, nlabels, T[hp])
    return T


@nb.njit(cache=True)
def _viterbi(children, h, bases, counts, w, mask, nlabels, T, out):
    """Best label sequence of the children of ``h`` (in linear order) -> ``out[child]``.

    Score: the arc features of every child with its label plus the label-bigram scores
    ``T[side, yp, y]`` of consecutive children (see :func:`_fill_trans`), so that, e.g., two
    objects of one verb become ``iobj obj``.
    """
    k = children.shape[0]
    E = np.empty((k, nlabels))
    for i in range(k):
        c = children[i]
        _emissions(bases[c], counts[c], w, mask, nlabels, E[i])
    delta = np.full((k, nlabels), -np.inf)
    back = np.zeros((k, nlabels), dtype=np.int64)
    for y in range(N_SPECIAL, nlabels):
        delta[0, y] = E[0, y] + T[3, START, y]
    for i in range(1, k):
        side = (1 if children[i - 1] > h else 0) + (1 if children[i] > h else 0)
        Ts = T[side]
        for y in range(N_SPECIAL, nlabels):
            best = -np.inf
            arg = N_SPECIAL
            for yp in range(N_SPECIAL, nlabels):
                t = delta[i - 1, yp] + Ts[yp, y]
                if t > best:
                    best = t
                    arg = yp
            delta[i, y] = best + E[i, y]
            back[i, y] = arg
    y = N_SPECIAL
    best = -np.inf
    for lab in range(N_SPECIAL, nlabels):
        if delta[k - 1, lab] > best:
            best = delta[k - 1, lab]
            y = lab
    for i in range(k - 1, -1, -1):
        out[children[i]] = y
        y = back[i, y]


@nb.njit(cache=True)
def _children(heads):
    """Children of every word in linear order, CSR: ``(ptr, kids)``."""
    N = heads.shape[0]
    ptr = np.zeros(N + 1, dtype=np.int64)
    for m in range(1, N):
        ptr[heads[m] + 1] += 1
    for h in range(N):
        ptr[h + 1] += ptr[h]
    fill = ptr[:-1].copy()
    kids = np.empty(max(N - 1, 0), dtype=np.int64)
    for m in range(1, N):
        h = heads[m]
        kids[fill[h]] = m
        fill[h] += 1
    return ptr, kids


@nb.njit(cache=True)
def _predict(heads, bases, counts, upos, w, mask, nlabels, tables):
    N = bases.shape[0]
    out = np.zeros(N, dtype=np.int64)
    ptr, kids = _children(heads)
    for h in range(N):
        if ptr[h + 1] > ptr[h]:
            _viterbi(kids[ptr[h]:ptr[h + 1]], h, bases, counts, w, mask, nlabels,
                     tables[upos[h]], out)
    return out


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
            idx = np.int64(_mix(bases[m, j], ul) & mask)
            w[idx] += scale
            acc[idx] += c * scale
        side = 3 if prev < 0 else (1 if prev > h else 0) + (1 if m > h else 0)
        _trans_feats(yp, y, hp, side, mask, buf)
        for j in range(2):
            w[buf[j]] += scale
            acc[buf[j]] += c * scale
        yp = y
        prev = m


@nb.njit(cache=True)
def _train_step(heads, bases, counts, upos, gold, w, acc, c, mask, nlabels):
    """Structured perceptron step on every head's children; returns the number of errors."""
    N = bases.shape[0]
    pred = np.zeros(N, dtype=np.int64)
    T = np.zeros((4, nlabels, nlabels))
    ptr, kids = _children(heads)
    err = 0
    for h in range(N):
        if ptr[h + 1] == ptr[h]:
            continue
        ch = kids[ptr[h]:ptr[h + 1]]
        # the bigram scores this head needs, from the current weights
        _fill_trans(upos[h], 3, w, mask, nlabels, T)
        done = np.zeros(3, dtype=np.bool_)
        for i in range(1, ch.shape[0]):
            side = (1 if ch[i - 1] > h else 0) + (1 if ch[i] > h else 0)
            if not done[side]:
                _fill_trans(upos[h], side, w, mask, nlabels, T)
                done[side] = True
        _viterbi(ch, h, bases, counts, w, mask, nlabels, T, pred)
        wrong = 0
        for m in ch:
            if pred[m] != gold[m]:
                wrong += 1
        if wrong:
            err += wrong
            _add_seq(ch, h, gold, bases, counts, upos, w, acc, c, mask, 1.0)
            _add_seq(ch, h, pred, bases, counts, upos, w, acc, c, mask, -1.0)
    return err


class Labeler:
    """DEPREL labeler (joint over each head's children) bound to a vocabulary and weights."""

    def __init__(self, vocab, weights, bits):
        self.vocab = vocab
        self.w = np.ascontiguousarray(weights, dtype=np.float64)
        self.mask = np.uint64((1 << bits) - 1)
        self.nlabels = len(vocab.deprel)
        self.tables = _trans_tables(self.w, self.mask, self.nlabels, len(vocab.upos))

    def label(self, enc, heads):
        """Label ids for the arcs of ``heads`` (index 0 unused)."""
        return label_arcs(enc, heads, self.w, self.mask, self.nlabels, self.tables)

    def label_strings(self, enc, heads):
        ids = self.label(enc, heads)
        items = self.vocab.deprel.items
        out = np.empty(len(ids), dtype=object)
        out[0] = ""
        for m in range(1, len(ids)):
            out[m] = items[ids[m]]
        return out


def label_arcs(enc, heads, w, mask, nlabels, tables=None):
    """Best label id of every arc of the tree ``heads``.

    ``tables``: the transition tables of :func:`_trans_tables` for these weights (computed
    here when not given; pass them when labelling many sentences).
    """
    heads = np.asarray(heads, dtype=np.int64)
    if tables is None:
        tables = _trans_tables(w, mask, nlabels, int(enc.upos.max()) + 1)
    bases, counts = _sentence_bases(heads, enc.form, enc.lemma, enc.upos, enc.xpos, enc.suffix,
                                    enc.cluster, enc.feat_ptr, enc.feat_ids)
    return _predict(heads, bases, counts, enc.upos, w, mask, nlabels, tables)


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
        bases, counts = _sentence_bases(h, e.form, e.lemma, e.upos, e.xpos, e.suffix, e.cluster,
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
            errors += _train_step(heads_, bases, counts, upos, gold, w, acc, c, mask, nlabels)
            words += len(gold) - 1
            c += 1.0
        log.info("labeler epoch %d: %.2f%% training errors, %.1f s", ep + 1,
                 100.0 * errors / max(1, words), time.perf_counter() - t0)
    return w - acc / max(c, 1.0)
