"""Statistics of a parse report: certificates and UAS against the iteration cap, re-decoded
head automata per iteration, iterations needed, UAS by length (the content of
``summary.json``).

Definitions (iterations are counted from 1, as in :class:`depparse.decode.dual.DualResult`):

* a sentence is **certified at cap K** when it has a certificate and ``iterations <= K``;
* its **tree at cap K** is the best-primal tree found within the first ``K`` iterations: the
  heads of the last entry of ``best_changes`` whose iteration is ``<= K``.  When there is no
  such entry (``mst`` models, or no change recorded by ``K``) the final ``heads`` are used;
* UAS counts every word, punctuation included (the report has no UPOS), against
  ``gold_heads``; words whose gold head is ``-1`` (unannotated) are not counted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .schema import PROOF_KINDS, SUMMARY_KEYS, VERSION, ReportSentence, read_sentences

__all__ = ["ITERATION_BUCKETS", "LENGTH_BUCKETS", "cap_grid", "hardest", "pct", "summarize",
           "summarize_report"]

#: Iteration buckets of Rush et al. 2010, Table 1 (``(lo, hi)``, inclusive).  The paper prints
#: the last one as "20-50" and caps at K = 50; it is read as 21-50, and a ``51+`` bucket is
#: added for the larger caps used here (K = 5000 by default, Koo et al. 2010, Sec. 7.5).
ITERATION_BUCKETS: tuple[tuple[int, int | None], ...] = (
    (1, 1),
    (2, 2),
    (3, 3),
    (4, 4),
    (5, 10),
    (11, 20),
    (21, 50),
    (51, None),
)

#: Sentence-length buckets (words, inclusive) of the UAS-by-length table.
LENGTH_BUCKETS: tuple[tuple[int, int | None], ...] = (
    (1, 10),
    (11, 20),
    (21, 30),
    (31, 40),
    (41, None),
)

_HARDEST = 4



def cap_grid(top: int) -> list[int]:
    """Log-spaced iteration caps ``1, 2, 3, 5, 7, 10, 15, 20, 30, ...`` up to ``top``.

    Parameters
    ----------
    top : int
        The largest cap (included).

    Returns
    -------
    list of int
        Increasing caps from 1 to ``max(top, 1)``.
    """
    top = max(int(top), 1)
    caps = set()
    scale = 1
    while scale <= top:
        for mant in (1, 1.5, 2, 3, 5, 7):
            k = int(round(mant * scale))
            if k <= top:
                caps.add(k)
        scale *= 10
    caps.add(top)
    return sorted(caps)


def pct(part: float, total: float) -> float | None:
    return 100.0 * part / total if total else None


def _finite(x: float) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _jsonable(x: Any) -> Any:
    """Plain JSON types, non-finite floats replaced by None."""
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return _finite(x)
    return x


def _bucket_label(lo: int, hi: int | None) -> str:
    if hi is None:
        return f"{lo}+"
    return str(lo) if lo == hi else f"{lo}-{hi}"


def _in_bucket(x: int, lo: int, hi: int | None) -> bool:
    return x >= lo and (hi is None or x <= hi)


def _labeled(s: ReportSentence) -> tuple[int, int]:
    """Words with the gold head and the gold universal label (the part of DEPREL before
    ``:``, as the CoNLL 2018 LAS), and the words scored (gold head annotated)."""
    g = s.gold[1:]
    scored = g >= 0
    ok = (s.heads[1:] == g) & scored
    same = np.array([a.split(":")[0] == b.split(":")[0]
                     for a, b in zip(s.rels[1:], s.gold_rels[1:], strict=True)], dtype=bool)
    return int((ok & same).sum()), int(scored.sum())


def _correct(heads: np.ndarray, gold: np.ndarray) -> tuple[int, int]:
    g = gold[1:]
    scored = g >= 0
    return int(((heads[1:] == g) & scored).sum()), int(scored.sum())


def hardest(sents: list[ReportSentence]) -> list[ReportSentence]:
    """The sentences with traces that ran the most iterations (then the longest), at most 4."""
    traced = [s for s in sents if s.dual.size]
    return sorted(traced, key=lambda s: (-s.iterations, -s.n, s.file, s.index))[:_HARDEST]


def summarize(report: Mapping[str, Any], sents: list[ReportSentence]) -> dict[str, Any]:
    total = len(sents)
    certified = sum(s.certificate for s in sents)
    gold = [s for s in sents if s.gold is not None]
    top = max([int(report["max_iter"]), 1, *(s.iterations for s in sents)])

    # (a) certificates / UAS / agreement with the final tree as a function of the cap K
    cap_curve = []
    for cap in cap_grid(top):
        cert = sum(1 for s in sents if s.certificate and s.iterations <= cap)
        match = sum(1 for s in sents if np.array_equal(s.tree_at(cap), s.heads))
        ok = words = 0
        for s in gold:
            c, w = _correct(s.tree_at(cap), s.gold)
            ok += c
            words += w
        cap_curve.append(
            {
                "K": cap,
                "certified": cert,
                "cert_pct": pct(cert, total),
                "match_pct": pct(match, total),
                "uas": pct(ok, words) if gold else None,
            }
        )

    # final UAS, and LAS over the sentences with predicted and gold labels
    uas_ok = uas_words = 0
    for s in gold:
        c, w = _correct(s.heads, s.gold)
        uas_ok += c
        uas_words += w
    labeled = [s for s in gold if s.rels is not None and s.gold_rels is not None]
    las_ok = las_words = 0
    for s in labeled:
        c, w = _labeled(s)
        las_ok += c
        las_words += w

    # (b) head automata recomputed per iteration, over the sentences still running
    traced = [s for s in sents if s.recomputed.size]
    recomputed = None
    if traced:
        length = max(s.recomputed.size for s in traced)
        sums = np.zeros(length)
        running = np.zeros(length, dtype=np.int64)
        for s in traced:
            sums[: s.recomputed.size] += s.recomputed
            running[: s.recomputed.size] += 1
        every = np.concatenate([s.recomputed for s in traced])
        recomputed = {
            "iterations": list(range(1, length + 1)),
            "mean_pct": (100.0 * sums / running).tolist(),
            "running": running.tolist(),
            "overall_mean_pct": float(100.0 * every.mean()),
        }

    # (c) iterations to certificate (Rush et al. 2010, Table 1)
    histogram = []
    for lo, hi in ITERATION_BUCKETS:
        if hi is None and top <= 50:
            continue
        count = sum(1 for s in sents if s.certificate and _in_bucket(s.iterations, lo, hi))
        histogram.append(
            {
                "bucket": _bucket_label(lo, hi),
                "lo": lo,
                "hi": hi,
                "count": count,
                "pct": pct(count, total),
            }
        )
    # a certificate after 0 iterations cannot happen with the loop of Fig. 1; keep it counted
    zero = sum(1 for s in sents if s.certificate and s.iterations < 1)
    if zero:
        histogram.insert(
            0, {"bucket": "0", "lo": 0, "hi": 0, "count": zero, "pct": pct(zero, total)}
        )
    histogram.append(
        {
            "bucket": "not certified",
            "lo": None,
            "hi": None,
            "count": total - certified,
            "pct": pct(total - certified, total),
        }
    )

    # (d) UAS (and certificates) by sentence length
    by_length = []
    for lo, hi in LENGTH_BUCKETS:
        group = [s for s in sents if _in_bucket(s.n, lo, hi)]
        ggroup = [s for s in group if s.gold is not None]
        ok = words = lok = lwords = 0
        for s in ggroup:
            c, w = _correct(s.heads, s.gold)
            ok += c
            words += w
            if s.rels is not None and s.gold_rels is not None:
                c, w = _labeled(s)
                lok += c
                lwords += w
        by_length.append(
            {
                "bucket": _bucket_label(lo, hi),
                "lo": lo,
                "hi": hi,
                "sentences": len(group),
                "words": sum(s.n for s in group),
                "cert_pct": pct(sum(s.certificate for s in group), len(group)),
                "gold_words": words,
                "uas_correct": ok,
                "uas": pct(ok, words) if ggroup else None,
                "las": pct(lok, lwords) if lwords else None,
            }
        )

    # (e) the hardest sentences: most iterations (then longest), with traces
    hard = []
    for s in hardest(sents):
        best = float(np.max(s.primal)) if s.primal.size else float("nan")
        final = float(s.dual[-1])
        hard.append(
            {
                "file": s.file,
                "index": s.index,
                "sent_id": s.sent_id,
                "n": s.n,
                "iterations": s.iterations,
                "certificate": s.certificate,
                "proof": s.proof,
                "nodes": s.nodes,
                "final_dual": _finite(final),
                "best_primal": _finite(best),
                "gap": _finite(final - best),
            }
        )

    # (f) proofs of optimality: how many trees each kind of proof gave, and what it cost
    proofs = []
    for kind in (*PROOF_KINDS, None):
        group = [s for s in sents if s.proof == kind]
        if not group and kind == "exact":
            continue
        proofs.append(
            {
                "proof": kind if kind is not None else "not proved",
                "sentences": len(group),
                "pct": pct(len(group), total),
                "words": sum(s.n for s in group),
                "seconds": sum(s.seconds for s in group),
                "bnb_seconds": sum(s.bnb_seconds for s in group),
                "nodes": sum(s.nodes for s in group),
                "max_nodes": max((s.nodes for s in group), default=0),
                "iterations": sum(s.iterations + s.bnb_iterations for s in group),
                "joint": sum(s.joint for s in group),
                "tags_changed": sum(s.tags_changed for s in group),
            }
        )
    proved = sum(bool(s.optimal) for s in sents)
    over_all = sum(bool(s.optimal) and s.optimal_over == "all" for s in sents)

    given = report["summary"]
    return _jsonable(
        {
            "format": "depparse-report-summary",
            "version": VERSION,
            "model": dict(report["model"]),
            "max_iter": int(report["max_iter"]),
            "single_root": bool(report["single_root"]),
            "inputs": list(report["inputs"]),
            "predicted_columns": {str(k): list(v) for k, v in
                                  (report.get("predicted_columns") or {}).items()},
            "files": {str(k): dict(v) for k, v in (report.get("files") or {}).items()},
            "input_summary": {k: given[k] for k in SUMMARY_KEYS},
            "sentences": total,
            "words": sum(s.n for s in sents),
            "certified": certified,
            "uncertified": total - certified,
            "cert_rate": 100.0 * (certified / total) if total else 0.0,  # as certificate_rate
            "proved": proved,
            "unproved": total - proved,
            "proved_pct": pct(proved, total),
            "proved_over_all": over_all,
            "proved_over_pruned": proved - over_all,
            "proofs": proofs,
            "bnb_sentences": sum(s.proof == "branch-and-bound" for s in sents),
            "bnb_nodes": sum(s.nodes - 1 for s in sents if s.nodes > 1),
            "bnb_seconds": sum(s.bnb_seconds for s in sents),
            "mean_iterations": float(np.mean([s.iterations for s in sents])) if sents else None,
            "gold_sentences": len(gold),
            "uas_words": uas_words,
            "uas_correct": uas_ok,
            "uas": pct(uas_ok, uas_words) if gold else None,
            "las_words": las_words,
            "las_correct": las_ok,
            "las": pct(las_ok, las_words) if labeled else None,
            "cap_curve": cap_curve,
            "recomputed": recomputed,
            "iteration_histogram": histogram,
            "uas_by_length": by_length,
            "hardest": hard,
        }
    )


def summarize_report(report: Mapping[str, Any]) -> dict[str, Any]:
    """Compute every number of the report (the content of ``summary.json``).

    Parameters
    ----------
    report : dict
        A parse report (see :func:`validate_report`).

    Returns
    -------
    dict
        JSON-serialisable; percentages are in percent, ``None`` where undefined (no gold
        heads, no sentences).  Keys: ``sentences``, ``words``, ``certified``,
        ``uncertified``, ``cert_rate``, ``uas`` (final trees, punctuation included),
        ``cap_curve`` (per cap ``K``: ``certified``, ``cert_pct``, ``uas``, ``match_pct``),
        ``recomputed`` (per iteration: ``mean_pct`` and ``running``; ``None`` without
        traces), ``iteration_histogram`` (Rush et al. 2010, Table 1 buckets plus ``not
        certified``), ``uas_by_length``, ``hardest`` and a copy of the input's metadata.
        Proofs of optimality: ``proved``/``unproved`` (sentences whose tree is / is not
        proved optimal), ``proved_pct``, ``proved_over_all``/``proved_over_pruned`` (of
        them, those proved over every arc of the sentence / over the arcs the pruner kept),
        ``proofs`` (one entry per kind: ``proof`` = ``"dual"``, ``"branch-and-bound"``,
        ``"exact"`` (``mst`` models only) or ``"not proved"``, with its ``sentences``,
        ``pct``, ``words``, ``seconds`` (decoding time of those sentences, first run
        included), ``bnb_seconds`` (the branch and bound part), ``nodes`` (dual
        decomposition runs, the first ones included), ``max_nodes``, ``iterations`` (all
        runs)), ``bnb_sentences``, ``bnb_nodes`` (branch and bound nodes beyond the first
        runs) and ``bnb_seconds``.

    Raises
    ------
    ValueError
        If the report is invalid.
    """
    return summarize(report, read_sentences(report))
