"""The dev scores of a training run: the per-epoch UAS and certificates, and the finished
model decoded as ``depparse parse`` decodes it."""

from __future__ import annotations

import logging
import time

from ..evaluate import evaluate
from ..inference.parser import Parser

__all__ = ["evaluate_heads", "final_dev"]

log = logging.getLogger("depparse.learn.perceptron")


def evaluate_heads(parser, dev, weights, max_iter=None, dense=None):
    """UAS, certificate rate and seconds/sentence on (enc, heads, keep) triples (``dense``:
    the dense arc term to score with, for models with one)."""
    correct = total = cert = 0
    t0 = time.perf_counter()
    for enc, heads, keep in dev:
        r = parser.decode(enc, keep=keep, weights=weights, max_iter=max_iter, dense=dense)
        correct += int((r.heads[1:] == heads[1:]).sum())
        total += enc.n
        cert += r.certificate
    n = max(1, len(dev))
    return {"uas": 100.0 * correct / max(1, total), "cert": 100.0 * cert / n,
            "sec_per_sent": (time.perf_counter() - t0) / n}


def final_dev(model, dev, dev_sents):
    """The finished model (averaged weights, labeler) on the dev data, decoded as ``depparse
    parse`` decodes: UAS, LAS (when there is a labeler), the trees proved optimal and those
    with a dual certificate."""
    t0 = time.perf_counter()
    p = Parser(model)
    parsed, cert, proved = [], 0, 0
    for (enc, _, keep), s in zip(dev, dev_sents, strict=True):
        r = p.decode(enc, keep=keep)
        cert += r.certificate
        proved += r.optimal
        rels = p.labeler.label_strings(enc, r.heads) if p.labeler else s.rels
        parsed.append(s.with_parse(r.heads, rels))
    sc = evaluate(dev_sents, parsed)
    n = max(1, len(dev))
    out = {"uas": sc.uas, "las": sc.las if p.labeler else None, "cert": 100.0 * cert / n,
           "proved": 100.0 * proved / n, "max_iter": model.decoding.max_iter,
           "seconds": time.perf_counter() - t0}
    las = "" if out["las"] is None else f", LAS {out['las']:.2f}"
    log.info("final model on dev: UAS %.2f%s, proved optimal %.1f%% (dual certificates "
             "%.1f%%), as in parsing, %.0f s", out["uas"], las, out["proved"], out["cert"],
             out["seconds"])
    return out
