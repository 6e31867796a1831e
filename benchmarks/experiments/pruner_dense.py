"""Dense arc scores in the pruner (``train --pruner-dense R`` in the product; this script is
the screening run that chose to try it): the arc-factored pruner trained on en_ewt train with
and without a dense term over the encoder's standardised layer-3 vectors, compared on dev by
gold-arc recall against kept heads per word.

    python pruner_dense.py [--code DIR] [--lr-dense R]

The dense term is the parser's linear one (features/dense.py, no tensor): per arc bucket b
(direction x distance, root) ``a_b . z_h + c_b . z_m + pf d_b . (z_h * z_m)``, learned with the
sparse weights by the same AdaGrad steps on the conditional log-likelihood (gradient
``sum_{h,m} (y - mu)(h, m) phi(h, m)``).  The vectors and their standardisation are the
shipped model's.
"""
import logging
import time

import numpy as np
from _common import REPO, corpus, parser, use_code

ap = parser(__doc__)
ap.add_argument("--lr-dense", type=float, nargs="+", default=[0.1])
ap.add_argument("--train-limit", type=int, default=0)
args = ap.parse_args()
use_code(args)
from depparse.conllu import read_conllu  # noqa: E402
from depparse.decode.marginals import arc_marginals, prune_mask  # noqa: E402
from depparse.features.dense import BUCKETS  # noqa: E402
from depparse.features.label_dense import arc_bucket_of  # noqa: E402
from depparse.features.parts import score_all_arcs  # noqa: E402
from depparse.inference.parser import Parser  # noqa: E402
from depparse.learn.pruner import _adagrad_step  # noqa: E402
from depparse.model import Model  # noqa: E402

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
model = Model.load(REPO / "models" / "en_ewt_gs.npz")
v, term = model.vocab, Parser(model).engine.dense
bits = model.config.pruner_bits
train, dev = read_conllu(corpus("train")), read_conllu(corpus("dev"))
if args.train_limit:
    train = train[:args.train_limit]
t0 = time.perf_counter()
enc_tr = [v.encode(s, x) for s, x in zip(train, v.iter_context_vectors(train), strict=True)]
enc_dv = [v.encode(s, x) for s, x in zip(dev, v.iter_context_vectors(dev), strict=True)]
z_tr = [term.sentence(e) for e in enc_tr]
z_dv = [term.sentence(e) for e in enc_dv]
print(f"encoded in {time.perf_counter() - t0:.0f} s", flush=True)
B, D, pf = BUCKETS, term.layout.dim, term.pf


def buckets(N):
    """(N, N) bucket of every arc h -> m (h rows), as the dense arc term's."""
    out = np.zeros((N, N), dtype=np.int64)
    for h in range(N):
        heads = np.full(N, h)
        heads[0] = -1
        out[h] = arc_bucket_of(heads, B)
    return out


def dense_scores(z, theta):
    a, c, d = theta
    N = z.shape[0]
    bk = buckets(N)
    H = z @ a.T                    # (N, B): a_b . z_h
    M = z @ c.T                    # (N, B): c_b . z_m
    S = np.empty((N, N))
    for b in range(B):
        P = pf * (z * d[b]) @ z.T  # (N, N): pf d_b . (z_h * z_m)
        sel = bk == b
        S[sel] = (H[:, b][:, None] + M[:, b][None, :] + P)[sel]
    return S


def dense_grad(z, g):
    """Gradient of sum g(h, m) dense(h, m) for the three sections."""
    N = z.shape[0]
    bk = buckets(N)
    ga, gc, gd = np.zeros((B, D)), np.zeros((B, D)), np.zeros((B, D))
    for b in range(B):
        gb = np.where(bk == b, g, 0.0)
        if not gb.any():
            continue
        ga[b] = gb.sum(1) @ z
        gc[b] = gb.sum(0) @ z
        gd[b] = pf * np.einsum("hd,hd->d", z, gb @ z)
    return ga, gc, gd


def train_pruner(lr_dense):
    w = np.zeros(1 << bits)
    G = np.full(1 << bits, 1e-8)
    mask = np.uint64((1 << bits) - 1)
    theta = [np.zeros((B, D)) for _ in range(3)]
    Gt = [np.full((B, D), 1e-8) for _ in range(3)]
    rng = np.random.default_rng(0)
    for i in rng.permutation(len(enc_tr)):
        e, z = enc_tr[i], z_tr[i]
        if e.n == 0:
            continue
        s = score_all_arcs(e, w, bits)
        if lr_dense:
            s = s + dense_scores(z, theta)
        mu = arc_marginals(s)
        hd = np.asarray(train[i].heads)
        _adagrad_step(*e.arrays(), w, G, mask, mu, hd, 0.1)
        if lr_dense:
            y = np.zeros_like(mu)
            y[hd[1:], np.arange(1, e.n + 1)] = 1.0
            g = y - mu
            np.fill_diagonal(g, 0.0)
            g[:, 0] = 0.0
            for k, gk in enumerate(dense_grad(z, g)):
                Gt[k] += gk * gk
                theta[k] += lr_dense * gk / np.sqrt(Gt[k])
    return w, theta


def evaluate(w, theta, settings):
    out = []
    for thr, mh in settings:
        kept = hit = total = 0
        for e, z, s in zip(enc_dv, z_dv, dev, strict=True):
            sc = score_all_arcs(e, w, bits)
            if theta is not None:
                sc = sc + dense_scores(z, theta)
            keep = prune_mask(sc, arc_marginals(sc), thr, mh, True)
            hd = np.asarray(s.heads)
            hit += int(keep[hd[1:], np.arange(1, e.n + 1)].sum())
            kept += int(keep[:, 1:].sum())
            total += e.n
        out.append((thr, mh, 100.0 * hit / total, kept / total))
    return out


SETTINGS = [(1e-5, 20), (1e-4, 10), (1e-3, 5), (1e-2, 3)]
for lr in [0.0] + args.lr_dense:
    t0 = time.perf_counter()
    w, theta = train_pruner(lr)
    t_train = time.perf_counter() - t0
    res = evaluate(w, theta if lr else None, SETTINGS)
    print(f"lr_dense {lr} (training {t_train:.0f} s): " + "; ".join(
        f"threshold {t:g} / {mh} heads: recall {r:.2f}% at {h:.2f} heads per word"
        for t, mh, r, h in res), flush=True)
