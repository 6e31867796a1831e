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
The parameters start at zero.
"""

from __future__ import annotations

import numpy as np

from ..config import RETIRED, without_retired
from ..features.dense import DenseArcs, DenseLayout, dense_arc_gradient, dense_arc_sum

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
        """A fresh term for ``config`` (``dense_layer``, ``dense_scale``),
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
        layout = DenseLayout(dim)
        theta = np.zeros(layout.size)
        return cls(DenseArcs(config.dense_layer, mean, std, config.dense_scale, layout, theta))

    # -- one update ------------------------------------------------------------------------
    def difference(self, enc, gold_mods, pred_mods, only):
        """``(g, margin)``: the gradient of ``dense(gold) - dense(prediction)`` and that
        difference itself, over the arcs of the automata ``only`` in which the two differ."""
        rows = only[:, None]
        gh, gm = np.nonzero(gold_mods & ~pred_mods & rows)
        ph, pm = np.nonzero(pred_mods & ~gold_mods & rows)
        heads = np.concatenate([gh, ph]).astype(np.int64)
        mods = np.concatenate([gm, pm]).astype(np.int64)
        sign = np.concatenate([np.ones(gh.shape[0]), -np.ones(ph.shape[0])])
        sc = self.scorer
        z = sc.sentence(enc)
        B = sc.layout.buckets
        margin = dense_arc_sum(z, sc.theta, B, sc.pf, heads, mods, sign)
        g = np.zeros_like(sc.theta)
        dense_arc_gradient(z, B, sc.pf, heads, mods, sign, g)
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
        meta = {"layer": sc.layer, "dim": sc.layout.dim, "scale": sc.scale}
        return meta, {"theta": sc.theta, "acc": self.acc, "mean": sc.mean, "std": sc.std}

    @classmethod
    def from_state(cls, meta, arrays) -> DenseLearner:
        """Inverse of :meth:`state`; a checkpoint written before the tensor and the
        second-order sections were retired loads where it holds them off (rank 0, no
        ``higher``), else :class:`~depparse.errors.ConfigError` names their patch."""
        without_retired({"dense_rank": meta.get("rank", RETIRED["dense_rank"][0]),
                         "dense_parts": "all" if meta.get("higher") else "arc"})
        layout = DenseLayout(int(meta["dim"]))
        sc = DenseArcs(meta["layer"], arrays["mean"], arrays["std"], meta["scale"], layout,
                       np.array(arrays["theta"], dtype=np.float64))
        return cls(sc, np.array(arrays["acc"], dtype=np.float64))
