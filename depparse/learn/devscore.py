"""The dev scores of a training run: the per-epoch UAS and certificates, the finished model
decoded as ``depparse parse`` decodes it, and the weights of the learned network's views in
the tagger and the labeler chosen on dev (``train --expert-weights dev``)."""

from __future__ import annotations

import logging
import time

from ..evaluate import evaluate
from ..inference.columns import TAG_COLUMNS
from ..inference.engine import Engine
from ..inference.parser import Parser
from .stage_progress import EpochProgress

__all__ = ["LABEL_WEIGHTS", "TAG_WEIGHTS", "blank_tags", "choose_expert_weights",
           "evaluate_heads", "expert_weight_grid", "final_dev", "given_tags_grid", "grid_steps",
           "tagged_upos"]

#: The weights ``train --expert-weights dev`` tries for the network's ``log P(UPOS | word)`` in
#: the tagger (``ModelConfig.learned_tag_weight``) and its ``log P(DEPREL | h, m)`` in the
#: labeler (``learned_label_weight``): the label weights the range measured on en_ewt,
#: pt_bosque and tr_imst dev (benchmarks/experiments/README.md, "products of experts": above 20
#: the weaker expert overrules the stronger; 0 is each model alone); the tag weights up to 8
#: since the network reads multilingual-e5-small, whose UPOS view gains up to there on 14 of 19
#: shipped models' dev (the experiments README, "The tag weight chosen by UPOS").
TAG_WEIGHTS = (0.0, 1.0, 2.0, 4.0, 8.0)
LABEL_WEIGHTS = (0.0, 4.0, 8.0, 12.0, 16.0)

log = logging.getLogger("depparse.learn.perceptron")


def evaluate_heads(engine, dev, weights, max_iter=None, dense=None):
    """UAS, certificate rate and seconds/sentence on (enc, heads, keep) triples (``dense``:
    the dense arc term to score with, for models with one)."""
    correct = total = cert = 0
    t0 = time.perf_counter()
    for enc, heads, keep in dev:
        r = engine.decode(enc, keep=keep, weights=weights, max_iter=max_iter, dense=dense,
                          arc_weight=1.0)  # as the weights learn
        correct += int((r.heads[1:] == heads[1:]).sum())
        total += enc.n
        cert += r.certificate
    n = max(1, len(dev))
    return {"uas": 100.0 * correct / max(1, total), "cert": 100.0 * cert / n,
            "sec_per_sent": (time.perf_counter() - t0) / n}


def final_dev(model, dev, dev_sents, progress=False):
    """The finished model (averaged weights, labeler) on the dev data (its tags given),
    decoded and labelled as ``depparse parse`` does it: UAS, LAS (when there is a labeler),
    the trees proved optimal and those with a dual certificate.  ``progress``:
    show it per sentence (:class:`~.progress.EpochProgress`); the stage says when it starts
    in any case (it took 70 s on de_gsd dev)."""
    t0 = time.perf_counter()
    p = Engine(model)
    parsed, cert, proved = [], 0, 0
    log.info("final model on dev: parsing %s sentences as 'depparse parse' does (at most %s "
             "iterations)", f"{len(dev):,}", f"{model.decoding.max_iter:,}")
    bar = EpochProgress("final model on dev", len(dev), progress)
    for (enc, _, keep), s in zip(dev, dev_sents, strict=True):
        r = p.decode(enc, keep=keep)
        cert += r.certificate
        proved += r.optimal
        rels = p.labels(enc, r.heads) if p.labeler else s.rels
        parsed.append(s.with_parse(r.heads, rels))
        bar.step(enc.n)
    bar.close()
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


def _relabelled(parser, parsed, gold, label_weights, vectors=None, tick=None):
    """``(label_weight, Scores)`` of the trees of ``parsed`` labelled again for each weight:
    the labeler's scores plus the weight times the network's ``log P(DEPREL | h, m)``, as
    :class:`~depparse.inference.parser.Parser` labels them.  ``vectors``: the sentences'
    encoder vectors (:meth:`~depparse.encoding.vocab.Vocabularies.iter_context_vectors`), when
    the caller has them; they do not depend on the tags, so one pass serves every grid.
    ``tick``: called after each sentence labelled (progress)."""
    net, vocab = parser.learned, parser.model.vocab
    if vectors is None:
        vectors = [None] * len(parsed)
    encs = [vocab.encode(s, v) for s, v in zip(parsed, vectors, strict=True)]
    net.attach(encs)  # the representations the label views read
    try:
        for b in label_weights:
            out = []
            for s, enc in zip(parsed, encs, strict=True):
                out.append(s.with_parse(s.heads, parser.engine.labels(enc, s.heads, weight=b)))
                if tick is not None:
                    tick()
            yield float(b), evaluate(gold, out)
    finally:
        net.detach(encs)


def _parsed(parser, sentences, tick=None):
    """``parser.parse(sentences)``, calling ``tick`` after each sentence (progress)."""
    out = []
    for p, _ in parser.iter_parse_results(sentences, trace=False):
        out.append(p)
        if tick is not None:
            tick()
    return out


def tagged_upos(parser, gold, tag_weights=TAG_WEIGHTS, vectors=None):
    """``{tag_weight: dev UPOS}``: the tagger alone on ``gold`` with its tags blanked, for each
    weight of the network's UPOS view, as parsing tags a sentence before it parses it
    (:meth:`~depparse.inference.engine.Engine.tag_one`; the network's outputs computed once,
    many sentences per forward pass, as parsing computes them; ``vectors`` as
    :func:`_relabelled` takes them).  The tags do not depend on the arc and label weights: a
    parse per tag weight is needed only for the tag weights whose UPOS is best
    (:func:`choose_expert_weights`).  ``parser``'s own weights are restored afterwards."""
    eng = parser.engine
    blank = blank_tags(gold)
    if vectors is None:
        vectors = [None] * len(blank)
    outs = [None] * len(blank)
    if any(tag_weights):
        outs = eng.learned.batch_outputs([parser.model.vocab.encode(s, v)
                                          for s, v in zip(blank, vectors, strict=True)])
    got = {}
    saved = eng.set_experts()
    try:
        for a in tag_weights:
            eng.set_experts(tag=float(a))
            tagged = [eng.tag_one(s, TAG_COLUMNS, v, o)[0]
                      for s, v, o in zip(blank, vectors, outs, strict=True)]
            got[float(a)] = evaluate(gold, tagged).upos
    finally:
        eng.set_experts(**saved)
    return got


def expert_weight_grid(parser, gold, tag_weights=TAG_WEIGHTS, label_weights=LABEL_WEIGHTS,
                       vectors=None, arc_weights=(1.0,), tick=None):
    """Score every triple of weights of the network's views on ``gold`` with its tags blanked.

    For each tag weight and arc weight the sentences are tagged and parsed once (the trees
    depend on both); for each label weight the trees are labelled again.  ``parser`` needs a
    learned network, a tagger and a labeler; its own weights are restored afterwards.
    ``vectors``: as :func:`_relabelled` takes them; ``tick``: called after each sentence
    parsed or labelled (progress).

    Yields
    ------
    (tag_weight, arc_weight, label_weight, Scores)
        The official scores (:func:`depparse.evaluate.evaluate`) of each triple, in grid order.
    """
    blank = blank_tags(gold)
    saved = parser.engine.set_experts()
    try:
        for a in tag_weights:
            for c in arc_weights:
                parser.engine.set_experts(tag=float(a), label=0.0, arc=float(c))
                parsed = _parsed(parser, blank, tick)
                for b, sc in _relabelled(parser, parsed, gold, label_weights, vectors, tick):
                    yield float(a), float(c), b, sc
    finally:
        parser.engine.set_experts(**saved)


def given_tags_grid(parser, gold, label_weights=LABEL_WEIGHTS, vectors=None,
                    arc_weights=(1.0,), tick=None):
    """:func:`expert_weight_grid` for sentences whose tags are given: ``gold`` parsed as it is
    for each arc weight, labelled again for each label weight; yields ``(arc_weight,
    label_weight, Scores)``."""
    saved = parser.engine.set_experts()
    try:
        for c in arc_weights:
            parser.engine.set_experts(label_given=0.0, arc_given=float(c))
            parsed = _parsed(parser, gold, tick)
            for b, sc in _relabelled(parser, parsed, gold, label_weights, vectors, tick):
                yield float(c), b, sc
    finally:
        parser.engine.set_experts(**saved)


def _best(rows, key, own):
    """The row of ``rows`` with the best LAS: ties go to the one whose ``key(row)`` is ``own``,
    else to the first."""
    best = max(r["las"] for r in rows)
    tied = [r for r in rows if r["las"] == best]
    return next((r for r in tied if key(r) == own), tied[0])


def _best_tagged(rows, own):
    """The row of the tags-predicted grid :func:`choose_expert_weights` keeps: the tag weight
    whose best dev UPOS is highest (ties: the one whose best LAS is higher, then the model's
    own, then the first), then, among that tag weight's rows, the arc and label weights with
    the best LAS (:func:`_best`).  The tag weight is the tagger's, so it is chosen by what
    the tagger is for.  Chosen by dev LAS alone, three of the twenty shipped models took a
    weight that cost over a point of UPOS (dev, mr_ufal 91.78 -> 85.39, de_gsd 96.66 -> 93.04,
    is_modern 96.61 -> 95.46) for at most 0.14 LAS; by UPOS first the twenty models' dev UPOS
    is 0.62 higher and their LAS 0.02 lower on average, at most 0.19 (af_afribooms)
    (``benchmarks/experiments/tag_weight_rule.py``)."""
    tags = list(dict.fromkeys(r["tag_weight"] for r in rows))
    of = {a: [r for r in rows if r["tag_weight"] == a] for a in tags}
    rank = {a: (max(r["upos"] for r in of[a]), max(r["las"] for r in of[a]), a == own[0])
            for a in tags}
    best = max(rank.values())
    a = next(a for a in tags if rank[a] == best)
    return _best(of[a], lambda r: (r["tag_weight"], r["arc_weight"], r["label_weight"]), own)


def grid_steps(n, tag_weights=TAG_WEIGHTS, label_weights=LABEL_WEIGHTS, arc_weights=(1.0,)):
    """``(parses, steps)`` of :func:`choose_expert_weights` on ``n`` sentences once the tag
    weights to parse are known (``tag_weights``: those whose dev UPOS is best, usually one):
    the passes over the dev data that parse it (one per such tag weight and arc weight with
    the tags predicted, one per arc weight with them given), and the sentences parsed or
    labelled in all (each parse is labelled again once per label weight)."""
    parses = (len(tag_weights) + 1) * len(arc_weights)
    return parses, n * parses * (1 + len(label_weights))


def choose_expert_weights(model, gold, tag_weights=TAG_WEIGHTS, label_weights=LABEL_WEIGHTS,
                          arc_weights=(1.0,), progress=False):
    """The weights of the network's views chosen on ``gold`` (dev sentences with gold tags and
    trees): with the tags predicted, the tag weight with the best dev UPOS (the tagger alone,
    :func:`tagged_upos`), then the arc and label weights with the best LAS under it
    (:func:`expert_weight_grid` for that tag weight, :func:`_best_tagged`; where several tag
    weights tie on UPOS, each is parsed and the best LAS decides); for sentences whose tags
    are given (:func:`given_tags_grid`; ``ModelConfig.learned_arc_weight_given``,
    ``learned_label_weight_given``), the arc and label weights with the best LAS.  The tags
    do not depend on the arc and label weights, so the other tag weights need no parse: the
    choice is the one the whole grid gives, for ``1 / len(tag_weights)`` of its parses
    (de_gsd's grid took 250 s when every tag weight was parsed).

    Ties keep the model's own weights when they are among them, else the first in grid order.
    ``model`` is scored as it is in memory: a model about to be stored with 8-bit weights
    (``storage="int8"``) parses a little differently once stored (tr_imst dev, the defaults:
    LAS 58.55 before, 58.56 after).
    Returns a dict: ``tag_weight``, ``arc_weight``, ``label_weight``, ``arc_weight_given``,
    ``label_weight_given``, ``tag_weight_by`` (``"upos"``: the rule; models whose record lacks
    it chose every weight by LAS), ``tag_upos`` (a dict per tag weight with its dev UPOS),
    and the rows of both grids (``grid``: a dict per triple parsed, with its weights and UPOS,
    UAS, LAS; records without ``tag_upos`` parsed every tag weight; ``given_grid``: per pair,
    UAS and LAS).
    ``progress``: show the sentences parsed and labelled (:class:`~.progress.EpochProgress`);
    the stage says when it starts in any case.
    """
    p = Parser(model)
    if p.learned is None or p.tagger is None or p.engine.labeler is None:
        raise ValueError("choosing the expert weights needs a learned network, a tagger and a "
                         "labeler")
    t0 = time.perf_counter()
    log.info("choosing the expert weights on dev: the tag weight by UPOS from %d (%s sentences "
             "tagged alone), then %d arc and label weightings with the tags predicted and %d "
             "with them given", len(tag_weights), f"{len(gold):,}",
             len(arc_weights) * len(label_weights), len(arc_weights) * len(label_weights))
    vectors = list(model.vocab.iter_context_vectors(gold))  # one encoder pass for the grids
    own = (p.engine.tag_weight, p.engine.arc_weight, p.engine.label_weight)
    upos = tagged_upos(p, gold, tag_weights, vectors)
    best = max(upos.values())
    tied = tuple(a for a in upos if upos[a] == best)
    parses, steps = grid_steps(len(gold), tied, label_weights, arc_weights)
    log.info("dev UPOS by tag weight: %s; parsing with %s: %d parses of %s sentences, each "
             "labelled %d times", ", ".join(f"{a:g}: {u:.2f}" for a, u in upos.items()),
             " and ".join(f"{a:g}" for a in tied), parses, f"{len(gold):,}",
             len(label_weights))
    bar = EpochProgress("expert weights on dev", steps, progress,
                        unit="sentences parsed or labelled")
    rows = [{"tag_weight": a, "arc_weight": c, "label_weight": b, "upos": sc.upos,
             "uas": sc.uas, "las": sc.las}
            for a, c, b, sc in expert_weight_grid(p, gold, tied, label_weights, vectors,
                                                  arc_weights, bar.step)]
    pick = _best_tagged(rows, own)
    given = [{"arc_weight": c, "label_weight": b, "uas": sc.uas, "las": sc.las}
             for c, b, sc in given_tags_grid(p, gold, label_weights, vectors, arc_weights,
                                            bar.step)]
    bar.close()
    pick_given = _best(given, lambda r: (r["arc_weight"], r["label_weight"]),
                       (p.engine.arc_weight_given, p.engine.label_weight_given))
    log.info("expert weights chosen on dev: tags predicted, tagger x %g, arcs x %g, labeler x "
             "%g: UPOS %.2f, LAS %.2f; tags given, arcs x %g, labeler x %g: LAS %.2f (%d + %d "
             "weightings in %.0f s)", pick["tag_weight"], pick["arc_weight"],
             pick["label_weight"], pick["upos"], pick["las"], pick_given["arc_weight"],
             pick_given["label_weight"], pick_given["las"], len(rows), len(given),
             time.perf_counter() - t0)
    return {"tag_weight": pick["tag_weight"], "arc_weight": pick["arc_weight"],
            "label_weight": pick["label_weight"], "arc_weight_given": pick_given["arc_weight"],
            "label_weight_given": pick_given["label_weight"], "tag_weight_by": "upos",
            "tag_upos": [{"tag_weight": a, "upos": u} for a, u in upos.items()],
            "grid": rows,
            "given_grid": given}
