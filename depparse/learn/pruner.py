"""Training of the arc-factored log-linear pruner (conditional likelihood, AdaGrad).

The model scores arcs with the arc features of :mod:`depparse.features.parts` and its own
hashed weight vector; its marginals (matrix-tree theorem, :mod:`depparse.decode.prune`) decide
which arcs the higher-order models see (:mod:`depparse.inference.pruning`; Koo et al. 2010,
Sec. 7; Koo et al. 2007).  The gradient of
``log p(y | x)`` is ``sum_{(h,m) in y} phi(h, m) - sum_{(h,m)} mu(h, m) phi(h, m)``.
"""

from __future__ import annotations

import logging
import time

import numba as nb
import numpy as np

from ..decode.prune import arc_marginals
from ..features.parts import MAX_FEATS, arc_features, score_all_arcs

__all__ = ["train_pruner"]

log = logging.getLogger(__name__)


@nb.njit(cache=True)
def _adagrad_step(form, lemma, upos, xpos, prefix, suffix, cluster, feat_ptr, feat_ids, w, G, mask,
                  mu, heads, lr):
    """One AdaGrad ascent step on ``log p(heads | x)`` given the marginals ``mu``."""
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
                             feat_ids, mask, buf)
            gg = g * g
            for i in range(k):
                j = buf[i]
                G[j] += gg
                w[j] += lr * g / np.sqrt(G[j])


def train_pruner(encoded, gold_heads, bits=22, epochs=1, lr=0.1, seed=0, label="pruner"):
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

    Returns
    -------
    w : (2**bits,) float64
    """
    w = np.zeros(1 << bits)
    G = np.full(1 << bits, 1e-8)
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
            mu = arc_marginals(s)
            hd = gold_heads[i]
            ll += float(np.log(np.maximum(mu[hd[1:], np.arange(1, e.n + 1)], 1e-300)).sum())
            _adagrad_step(*e.arrays(), w, G, mask, mu, hd, lr)
        log.info("%s epoch %d/%d: mean log-probability of a gold arc %.4f, %.1f s", label,
                 ep + 1, epochs, ll / max(1, sum(e.n for e in encoded)),
                 time.perf_counter() - t0)
    return w
