"""Training of the dense contextual arc term (:mod:`depparse.features.dense`).

The term's parameters ``theta`` are updated by the same passive-aggressive (or perceptron)
steps as the sparse weights (:meth:`depparse.learn.perceptron.Trainer.step`): on a mistake,
``theta += tau * g`` with ``g`` the gradient of ``dense(gold) - dense(prediction)`` over the
arcs in which the gold structure and the prediction differ, and the PA step ``tau`` computed
from the joint margin and the joint squared norm of both feature differences.  For the linear
terms ``g`` is exactly their feature difference; for the low-rank tensor it is the gradient
at the current parameters, i.e. one joint linearised step on ``U``, ``V`` and ``W`` (Lei et
al. 2014 train their tensor with passive-aggressive steps too, one factor at a time).

Averaging is lazy, as for the sparse weights (Daume III 2006): ``acc`` receives
``c * tau * g``, and ``theta - acc / c`` is the average of the parameters after each example.
The tensor's factors start from a seeded random ``U``, ``V`` (normal, scaled as
:meth:`DenseLearner.start` says) and ``W = 0`` (at ``U = V = 0`` the gradient would vanish);
everything else starts at zero.
"""

from __future__ import annotations

import numpy as np

from ..features.dense import (
    DenseArcs,
    DenseLayout,
    dense_arc_gradient,
    dense_arc_sum,
    dense_structure_gradient,
)

__all__ = ["DenseLearner"]


class DenseLearner:
    """Parameters, lazy-averaging accumulator and updates of the dense arc term."""

    def __init__(self, scorer: DenseArcs, acc=None):
        self.scorer = scorer  # holds the live parameters (scorer.theta)
        self.acc = np.zeros_like(scorer.theta) if acc is None else acc

    @property
    def theta(self) -> np.ndarray:
        return self.scorer.theta

    @classmethod
    def start(cls, config, vectors, seed) -> DenseLearner:
        """A fresh term for ``config`` (``dense_layer``, ``dense_rank``, ``dense_scale``),
        standardised by the mean and standard deviation of the training words' vectors
        (a list of (n, D) arrays)."""
        dim = vectors[0].shape[1]
        s = np.zeros(dim)
        s2 = np.zeros(dim)
        count = 0
        for v in vectors:
            x = np.asarray(v, dtype=np.float64)
            s += x.sum(0)
            s2 += (x * x).sum(0)
            count += x.shape[0]
        mean = s / max(count, 1)
        std = np.sqrt(np.maximum(s2 / max(count, 1) - mean * mean, 0.0))
        layout = DenseLayout(dim, config.dense_rank, higher=config.dense_parts == "all")
        theta = np.zeros(layout.size)
        if layout.rank:
            # U, V ~ N(0, sd^2) with sd^2 = 1 / (s sqrt(R)): then the gradient of W at the
            # start, (U z_h) * (V z_m), has about the squared norm s^2 of each linear
            # section's, so the tensor neither swamps the PA step (with sd = 1 and s = 3 it
            # did: en_ewt dev 83.49 after 4 epochs of the 4,000-sentence screening, against
            # 88.06 without it) nor starts too small to learn
            sd = (config.dense_scale * np.sqrt(layout.rank)) ** -0.5
            rng = np.random.default_rng([seed, 7331])
            sec = layout.split(theta)
            sec["U"][:] = sd * rng.standard_normal(sec["U"].shape)
            sec["V"][:] = sd * rng.standard_normal(sec["V"].shape)
        return cls(DenseArcs(config.dense_layer, mean, std, config.dense_scale, layout, theta))

    # -- one update ------------------------------------------------------------------------
    def difference(self, enc, gold_mods, pred_mods, only, gold_par=None, pred_par=None,
                   order=2):
        """``(g, margin)``: the gradient of ``dense(gold) - dense(prediction)`` and that
        difference itself, over the arcs of the automata ``only`` in which the two differ
        (and, with the sibling and grandparent sections, over those automata's second-order
        parts: grandparents ``gold_par``, ``pred_par`` as in
        :func:`~depparse.features.parts.structure_features`)."""
        rows = only[:, None]
        gh, gm = np.nonzero(gold_mods & ~pred_mods & rows)
        ph, pm = np.nonzero(pred_mods & ~gold_mods & rows)
        heads = np.concatenate([gh, ph]).astype(np.int64)
        mods = np.concatenate([gm, pm]).astype(np.int64)
        sign = np.concatenate([np.ones(gh.shape[0]), -np.ones(ph.shape[0])])
        sc = self.scorer
        z = sc.sentence(enc)
        B, R = sc.layout.buckets, sc.layout.rank
        margin = dense_arc_sum(z, sc.theta, B, R, sc.pf, heads, mods, sign)
        g = np.zeros_like(sc.theta)
        dense_arc_gradient(z, sc.theta, B, R, sc.pf, heads, mods, sign, g)
        if sc.layout.higher and order > 0:
            osib, ogr = sc.layout.offset("sib"), sc.layout.offset("grand")
            for mods_of, par, sg in ((gold_mods, gold_par, 1.0), (pred_mods, pred_par, -1.0)):
                margin += dense_structure_gradient(z, sc.theta, osib, ogr, sc.pf, order,
                                                   mods_of, par, only, sg, g)
        return g, margin

    def update(self, g, scale, c) -> None:
        """``theta += scale * g``; ``acc += c * scale * g`` (``c``: examples seen before)."""
        step = scale * g
        self.scorer.theta += step
        self.acc += c * step

    # -- views -----------------------------------------------------------------------------
    def averaged(self, c) -> DenseArcs:
        """The term with the average of the parameters after each of ``c`` examples."""
        if c == 0:
            return self.scorer.with_theta(self.theta.copy())
        return self.scorer.with_theta(self.theta - self.acc / c)

    # -- checkpoints -----------------------------------------------------------------------
    def state(self) -> tuple[dict, dict]:
        """``(meta, arrays)`` for a checkpoint: exact (float64) parameters and accumulator."""
        sc = self.scorer
        meta = {"layer": sc.layer, "dim": sc.layout.dim, "rank": sc.layout.rank,
                "scale": sc.scale, "higher": sc.layout.higher}
        return meta, {"theta": sc.theta, "acc": self.acc, "mean": sc.mean, "std": sc.std}

    @classmethod
    def from_state(cls, meta, arrays) -> DenseLearner:
        layout = DenseLayout(int(meta["dim"]), int(meta["rank"]),
                             higher=bool(meta.get("higher", False)))
        sc = DenseArcs(meta["layer"], arrays["mean"], arrays["std"], meta["scale"], layout,
                       np.array(arrays["theta"], dtype=np.float64))
        return cls(sc, np.array(arrays["acc"], dtype=np.float64))
