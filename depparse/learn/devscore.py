"""The dev scores of a training run: the per-epoch UAS and certificates, the finished model
decoded as ``depparse parse`` decodes it, and the weights of the learned network's views in
the tagger and the labeler chosen on dev (``train --expert-weights dev``)."""

from __future__ import annotations

import logging
import time

from ..evaluate import evaluate
from ..inference.parser import Parser

__all__ = ["LABEL_WEIGHTS", "TAG_WEIGHTS", "blank_tags", "choose_expert_weights",
           "evaluate_heads", "expert_weight_grid", "final_dev"]

#: The weights ``train --expert-weights dev`` tries for the network's ``log P(UPOS | word)`` in
#: the tagger (``ModelConfig.learned_tag_weight``) and its ``log P(DEPREL | h, m)`` in the
#: labeler (``learned_label_weight``): the range measured on en_ewt, pt_bosque and tr_imst dev
#: (benchmarks/experiments/README.md, "products of experts": above 3 and 20 the weaker expert
#: overrules the stronger; 0 is each model alone).
TAG_WEIGHTS = (0.0, 1.0, 1.5, 2.0, 3.0)
LABEL_WEIGHTS = (0.0, 4.0, 8.0, 12.0, 16.0)

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


def blank_tags(sentences) -> list:
    """The sentences with LEMMA, UPOS, XPOS and FEATS empty on every word, as ``depparse
    parse`` reads untagged CoNLL-U (the tagger predicts them)."""
    out = []
    for s in sentences:
        blank = ["_"] * (s.n + 1)
        out.append(s.with_tags(lemmas=blank, upos=blank, xpos=blank, feats=blank))
    return out


def expert_weight_grid(parser, gold, tag_weights=TAG_WEIGHTS, label_weights=LABEL_WEIGHTS):
    """Score every pair of weights of the network's views on ``gold`` with its tags blanked.

    For each tag weight the sentences are tagged and parsed once (the trees depend on the tags);
    for each label weight the trees are labelled again, the labeler's scores plus the weight
    times the network's ``log P(DEPREL | h, m)``, as :class:`~depparse.inference.parser.Parser`
    labels them.  ``parser`` needs a learned network, a tagger and a labeler; its own weights
    are restored afterwards.

    Yields
    ------
    (tag_weight, label_weight, Scores)
        The official scores (:func:`depparse.evaluate.evaluate`) of each pair, in grid order.
    """
    net, lab = parser.learned, parser.labeler
    vocab = parser.model.vocab
    blank = blank_tags(gold)
    saved = parser.tag_weight, parser.label_weight
    try:
        for a in tag_weights:
            parser.tag_weight, parser.label_weight = float(a), 0.0
            parsed = parser.parse(blank)
            encs = [vocab.encode(s) for s in parsed]
            net.remember(encs)  # the representations the label views read
            try:
                for b in label_weights:
                    out = []
                    for s, enc in zip(parsed, encs, strict=True):
                        extra = b * net.label_logprobs(enc, s.heads) if b else None
                        out.append(s.with_parse(s.heads, lab.label_strings(enc, s.heads, extra)))
                    yield float(a), float(b), evaluate(gold, out)
            finally:
                net.forget()
    finally:
        parser.tag_weight, parser.label_weight = saved


def choose_expert_weights(model, gold, tag_weights=TAG_WEIGHTS, label_weights=LABEL_WEIGHTS):
    """The pair of weights (:func:`expert_weight_grid`) with the best LAS on ``gold`` (dev
    sentences with gold tags and trees), the tags predicted.

    Ties go to the model's own pair when it is among them, else to the first in grid order.
    Returns ``(tag_weight, label_weight, rows)``, ``rows`` a dict per pair: its weights and
    UPOS, UAS, LAS.
    """
    p = Parser(model)
    if p.learned is None or p.tagger is None or p.labeler is None:
        raise ValueError("choosing the expert weights needs a learned network, a tagger and a "
                         "labeler")
    t0 = time.perf_counter()
    rows = [{"tag_weight": a, "label_weight": b, "upos": sc.upos,
             "uas": sc.uas, "las": sc.las}
            for a, b, sc in expert_weight_grid(p, gold, tag_weights, label_weights)]
    own = (float(model.config.learned_tag_weight), float(model.config.learned_label_weight))
    best = max(r["las"] for r in rows)
    tied = [(r["tag_weight"], r["label_weight"]) for r in rows if r["las"] == best]
    a, b = own if own in tied else tied[0]
    log.info("expert weights chosen on dev (tags predicted): tagger x %g, labeler x %g: LAS "
             "%.2f (%g, %g: %.2f), %d pairs in %.0f s", a, b, best, *own,
             next((r["las"] for r in rows if (r["tag_weight"], r["label_weight"]) == own),
                  float("nan")), len(rows), time.perf_counter() - t0)
    return a, b, rows
