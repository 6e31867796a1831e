"""Training of the arc-factored log-linear pruner (conditional likelihood, AdaGrad).

The model scores arcs with the arc features of :mod:`depparse.features.parts` and its own
hashed weight vector; its marginals (matrix-tree theorem, :mod:`depparse.decode.marginals`) decide
which arcs the higher-order models see (:mod:`depparse.inference.candidates`; Koo et al. 2010,
Sec. 7; Koo et al. 2007).  The gradient of
``log p(y | x)`` is ``sum_{(h,m) in y} phi(h, m) - sum_{(h,m)} mu(h, m) phi(h, m)``.

With ``dense`` (``train --pruner-dense R``) the pruner's arc scores also get a dense term over
the encoder's vectors, the linear sections of :mod:`depparse.features.dense` with parameters
of its own, learned by the same AdaGrad steps (rate ``R``) from the same gradient.
"""

from __future__ import annotations

import logging
import time

import numba as nb
import numpy as np

from ..decode.marginals import arc_marginals
from ..features.dense import DenseArcs, DenseLayout, dense_arc_gradient
from ..features.parts import ALL_TEMPLATES, MAX_FEATS, all_arcs, arc_features, score_all_arcs
from ..inference.candidates import candidate_arcs
from .data import jackknife_folds

__all__ = ["fresh_pruner_dense", "jackknife_keep_masks", "keep_masks", "pruner_dense_gradient",
           "train_pruner"]

log = logging.getLogger(__name__)


@nb.njit(cache=True)
def _adagrad_step(form, lemma, upos, xpos, prefix, suffix, cluster, feat_ptr, feat_ids, w, G, mask,
                  on, mu, heads, lr):
    """One AdaGrad ascent step on ``log p(heads | x)`` given the marginals ``mu`` (``on``: the
    template switches, an argument rather than the global ``ALL_TEMPLATES``: a global array is
    a read-only constant to Numba, so the feature kernels would compile a second time for
    it)."""
    N = form.shape[0]
    buf = np.empty(MAX_FEATS, dtype=np.int64)
    for h in range(N):
        for m in range(1, N):
            if m == h:
                continue
            g = (1.0 if heads[m] == h else 0.0) - mu[h, m]
            if abs(g) < 1e-6:
                continue
            k = arc_features(h, m, form, lemma, upos, xpos, prefix, suffix, cluster, feat_ptr,
                             feat_ids, mask, on, buf)
            gg = g * g
            for i in range(k):
                j = buf[i]
                G[j] += gg
                w[j] += lr * g / np.sqrt(G[j])


def fresh_pruner_dense(term: DenseArcs) -> DenseArcs:
    """A zero dense term for the pruner with the standardisation of ``term`` (the parser's
    dense arc term), its own parameters."""
    layout = DenseLayout(term.layout.dim)
    return DenseArcs(term.layer, term.mean, term.std, term.scale, layout, np.zeros(layout.size))


def pruner_dense_gradient(z, dense: DenseArcs, mu, heads):
    """Gradient of ``log p(heads | x)`` with respect to ``dense.theta``: ``sum_{h,m} (y(h, m) -
    mu(h, m)) d dense(h, m) / d theta`` (``z``: the standardised vectors, root row zero)."""
    N = mu.shape[0]
    g = -mu.copy()
    g[heads[1:], np.arange(1, N)] += 1.0
    np.fill_diagonal(g, 0.0)
    g[:, 0] = 0.0
    hs, ms = np.nonzero(np.abs(g) > 1e-6)
    grad = np.zeros(dense.theta.shape[0])
    dense_arc_gradient(z, dense.layout.buckets, dense.pf, hs.astype(np.int64),
                       ms.astype(np.int64), g[hs, ms], grad)
    return grad


def train_pruner(encoded, gold_heads, bits=22, epochs=1, lr=0.1, seed=0, label="pruner",
                 dense=None, lr_dense=0.1):
    """Train the pruner by AdaGrad on the conditional log-likelihood.

    Parameters
    ----------
    encoded : list of :class:`depparse.encoding.Encoded`
    gold_heads : list of (n+1,) int64
    bits : int
        The weight vector has ``2**bits`` entries.
    epochs : int
    lr : float
        AdaGrad learning rate.
    seed : int
        Seed of the per-epoch shuffles.
    label : str
        Name in the log lines (e.g. which jackknife fold).
    dense : DenseArcs, optional
        The pruner's dense term (:func:`fresh_pruner_dense`), trained in place (its ``theta``)
        at AdaGrad rate ``lr_dense``; the sentences must carry their encoder vectors.

    Returns
    -------
    w : (2**bits,) float64
    """
    w = np.zeros(1 << bits)
    G = np.full(1 << bits, 1e-8)
    Gd = None if dense is None else np.full(dense.theta.shape[0], 1e-8)
    mask = np.uint64((1 << bits) - 1)
    rng = np.random.default_rng(seed)
    for ep in range(epochs):
        t0 = time.perf_counter()
        ll = 0.0
        for i in rng.permutation(len(encoded)):
            e = encoded[i]
            if e.n == 0:
                continue
            s = score_all_arcs(e, w, bits)
            if dense is not None:
                z = dense.sentence(e)
                dense.add_scores(e, all_arcs(e.n + 1), s, z)
            mu = arc_marginals(s)
            hd = gold_heads[i]
            ll += float(np.log(np.maximum(mu[hd[1:], np.arange(1, e.n + 1)], 1e-300)).sum())
            _adagrad_step(*e.arrays(), w, G, mask, ALL_TEMPLATES, mu, hd, lr)
            if dense is not None:
                gd = pruner_dense_gradient(z, dense, mu, hd)
                Gd += gd * gd
                dense.theta += lr_dense * gd / np.sqrt(Gd)
        log.info("%s epoch %d/%d: mean log-probability of a gold arc %.4f, %.1f s", label,
                 ep + 1, epochs, ll / max(1, sum(e.n for e in encoded)),
                 time.perf_counter() - t0)
    return w


def keep_masks(engine, encoded, heads=None):
    """Kept arcs of every sentence by ``engine`` (an
    :class:`~depparse.inference.engine.Engine`); with ``heads``, the gold arcs are always
    kept."""
    out = []
    for i, e in enumerate(encoded):
        k = engine.keep_mask(e)
        if heads is not None:
            hd = heads[i]
            k[hd[1:], np.arange(1, e.n + 1)] = True
        out.append(k)
    return out


def jackknife_keep_masks(config, decoding, encoded, heads, folds, pruner_epochs, seed,
                          pruner_dense=None, lr_dense=0.0):
    """Kept arcs of the training sentences, each pruned by a pruner that did not see it.

    A pruner trained on all of the training data is far more confident on it than on new
    text, so the higher-order model would train on candidate sets much smaller than it meets
    at test time.  With ``folds >= 2`` the training data is split into ``folds`` parts and each
    part is pruned by a pruner trained on the others (jackknifing).  Gold arcs are always kept.
    ``pruner_dense``: the final pruner's dense term, whose standardisation each fold's pruner
    reuses with parameters of its own (rate ``lr_dense``).
    """
    if folds < 2 or len(encoded) < 2 * folds:
        return None
    fold_of = jackknife_folds(len(encoded), folds, seed, 991)
    keep = [None] * len(encoded)
    log.info("pruning the training data with %d jackknifed pruners, each trained on the "
             "other %d folds", folds, folds - 1)
    for f in range(folds):
        tr = [i for i in range(len(encoded)) if fold_of[i] != f]
        pd = None if pruner_dense is None else fresh_pruner_dense(pruner_dense)
        weights = train_pruner([encoded[i] for i in tr], [heads[i] for i in tr],
                          bits=config.pruner_bits, epochs=pruner_epochs, seed=seed + 1 + f,
                          label=f"jackknife pruner {f + 1}/{folds}", dense=pd,
                          lr_dense=lr_dense)
        for i in np.flatnonzero(fold_of == f):
            k = candidate_arcs(encoded[i], weights, config.pruner_bits, decoding.prune_threshold,
                               decoding.prune_max_heads, decoding.single_root, pd)
            k[heads[i][1:], np.arange(1, encoded[i].n + 1)] = True
            keep[i] = k
    return keep
