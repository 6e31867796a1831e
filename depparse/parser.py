"""The parsing pipeline: encode -> prune -> score parts -> decode (-> label).

``mst`` models decode with Chu-Liu-Edmonds (or Eisner when projective) over all arcs; ``sib``
and ``gs`` models prune with the matrix-tree marginals of their arc-factored pruner and decode
with dual decomposition (Koo et al. 2010, Fig. 1 / Fig. 2).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .decode.dual import dual_decompose
from .decode.eisner import eisner
from .decode.mst import chu_liu_edmonds
from .decode.prune import arc_marginals, prune_mask
from .features import build_parts
from .learn.pruner import score_all_arcs
from .model import Model

__all__ = ["ParseResult", "Parser"]


@dataclass
class ParseResult:
    """Decoding outcome of one sentence."""

    heads: np.ndarray
    certificate: bool
    iterations: int
    seconds: float
    dual: np.ndarray | None = None
    primal: np.ndarray | None = None
    recomputed: np.ndarray | None = None
    kept_arcs: int = 0


class Parser:
    """Parse encoded sentences with a :class:`~depparse.model.Model`."""

    def __init__(self, model: Model):
        self.model = model
        self.config = model.config
        self.order = model.config.order
        self.w = np.ascontiguousarray(model.weights, dtype=np.float64)
        self.pw = (None if model.pruner is None
                   else np.ascontiguousarray(model.pruner, dtype=np.float64))

    # -- pruning ---------------------------------------------------------------------------
    def keep_mask(self, enc, single_root=None):
        """Arcs the decoder may use: all for ``mst`` models, else the pruner's kept arcs."""
        N = enc.n + 1
        single = self.config.single_root if single_root is None else single_root
        if self.order == 0 or self.pw is None:
            keep = np.ones((N, N), dtype=bool)
            keep[:, 0] = False
            np.fill_diagonal(keep, False)
            return keep
        cfg = self.config
        s = score_all_arcs(*enc.arrays(), self.pw, np.uint64((1 << cfg.pruner_bits) - 1))
        mu = arc_marginals(s)
        return prune_mask(s, mu, cfg.prune_threshold, cfg.prune_max_heads, single)

    # -- decoding --------------------------------------------------------------------------
    def decode(self, enc, keep=None, max_iter=None, single_root=None, weights=None,
               trace=False) -> ParseResult:
        """Best tree of one encoded sentence.

        Parameters
        ----------
        enc : depparse.sentence.Encoded
        keep : (N, N) bool, optional
            Kept arcs (computed by :meth:`keep_mask` when not given).
        max_iter : int, optional
            Iteration cap K of dual decomposition (default: the model's).
        single_root : bool, optional
            Default: the model's setting (True for UD).
        weights : array, optional
            Use these parser weights instead of the model's (training-time evaluation).
        trace : bool
            Keep the per-iteration dual/primal/recomputed traces.
        """
        cfg = self.config
        t0 = time.perf_counter()
        single = cfg.single_root if single_root is None else bool(single_root)
        K = cfg.max_iter if max_iter is None else int(max_iter)
        w = self.w if weights is None else weights
        if keep is None:
            keep = self.keep_mask(enc, single)
        parts = build_parts(enc, keep, w, cfg.bits, self.order)
        if self.order == 0:
            dec = eisner if cfg.projective else chu_liu_edmonds
            heads = dec(parts.arc, single_root=single)
            return ParseResult(heads, True, 1, time.perf_counter() - t0,
                               kept_arcs=int(keep.sum()))
        r = dual_decompose(parts, alpha=cfg.alpha, max_iter=K, single_root=single,
                           projective=cfg.projective)
        res = ParseResult(r.heads, r.certificate, r.iterations, time.perf_counter() - t0,
                          kept_arcs=int(keep.sum()))
        if trace:
            res.dual, res.primal, res.recomputed = r.dual, r.primal, r.recomputed
        return res

    def parse_heads(self, sentences, **kwargs):
        """Decode a list of :class:`~depparse.conllu_io.Sentence`; returns ParseResults."""
        enc = self.model.vocab.encode
        return [self.decode(enc(s), **kwargs) for s in sentences]
