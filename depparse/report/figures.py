"""The figures of a parse report (PNG, matplotlib's object-oriented API on the Agg canvas):
certificates and accuracy against the iteration cap, re-decoded automata, iterations needed,
UAS by length, the traces of the hardest sentences (:mod:`.render` puts them on the page).

The names of sentences in the figures and tables are kept short enough to read
(:data:`TITLE_CHARS`): long file names and sent_ids (en_ewt's run to 60 characters) are cut
in the middle, where they are least distinctive.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .compare import figure, png
from .schema import ReportSentence

__all__ = ["TITLE_CHARS", "plot_cap_curve", "plot_histogram", "plot_recomputed", "plot_traces",
           "plot_uas_by_length", "sentence_name", "short", "trace_title", "traces_figure"]


def plot_cap_curve(summary: dict[str, Any]) -> bytes:
    curve = summary["cap_curve"]
    ks = [row["K"] for row in curve]
    fig = figure()
    ax = fig.add_subplot()
    ax.plot(ks, [row["cert_pct"] for row in curve], "o-", label="% with a dual certificate")
    ax.plot(ks, [row["match_pct"] for row in curve], "s--",
            label=f"% same tree as with K={ks[-1]:,}")
    if summary["uas"] is not None:
        ax.plot(ks, [row["uas"] for row in curve], "^-", label="UAS")
    ax.set_xscale("log")
    ax.set_xlabel("iteration cap K")
    ax.set_ylabel("percentage")
    ax.set_title("Certificates and accuracy vs. the iteration cap (Koo et al. 2010, Fig. 4)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right")
    return png(fig)


def plot_recomputed(summary: dict[str, Any]) -> bytes:
    from matplotlib.ticker import NullFormatter

    rec = summary["recomputed"]
    its = rec["iterations"]
    fig = figure()
    ax = fig.add_subplot()
    ax.plot(its, rec["mean_pct"], "-", color="C0", label="% head automata recomputed")
    ax.set_xlabel("iteration of dual decomposition")
    ax.set_ylabel("% of head automata recomputed", color="C0")
    ax.set_ylim(0, 105)
    if len(its) > 50:
        ax.set_xscale("log")
    ax2 = ax.twinx()
    ax2.step(its, rec["running"], where="post", color="C1", alpha=0.7)
    ax2.set_ylabel("sentences still running", color="C1")
    ax2.set_yscale("log")
    top = max(rec["running"])
    # ticks at the powers of ten below the number of sentences, and at that number itself
    ticks = [10 ** e for e in range(len(str(top))) if 10 ** e < top] + [top]
    ax2.set_ylim(0.8, top * 1.25)
    ax2.set_yticks(ticks, [f"{t:,}" for t in ticks])
    ax2.yaxis.set_minor_formatter(NullFormatter())
    ax.set_title("Lazy decoding: head automata recomputed (Koo et al. 2010, Fig. 3)")
    ax.grid(True, alpha=0.3)
    return png(fig)


def plot_histogram(summary: dict[str, Any]) -> bytes:
    rows = summary["iteration_histogram"]
    labels = [r["bucket"] for r in rows]
    pcts = [r["pct"] or 0.0 for r in rows]
    colors = ["C3" if r["bucket"] == "not certified" else "C0" for r in rows]
    fig = figure()
    ax = fig.add_subplot()
    bars = ax.bar(range(len(rows)), pcts, color=colors)
    for bar, r in zip(bars, rows, strict=True):
        ax.annotate(
            str(r["count"]),
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    ax.set_xticks(range(len(rows)), labels, rotation=30)
    ax.set_xlabel("iterations until the dual certificate")
    ax.set_ylabel("% of sentences")
    ax.set_title("How many iterations the certificates took")
    ax.grid(True, axis="y", alpha=0.3)
    return png(fig)


def plot_uas_by_length(summary: dict[str, Any]) -> bytes:
    rows = summary["uas_by_length"]
    fig = figure()
    ax = fig.add_subplot()
    labeled = any(r.get("las") is not None for r in rows)
    width = 0.4 if labeled else 0.8
    x = np.arange(len(rows))
    vals = [r["uas"] if r["uas"] is not None else 0.0 for r in rows]
    bars = ax.bar(x - (width / 2 if labeled else 0), vals, width, color="C2", label="UAS")
    if labeled:
        ax.bar(x + width / 2, [r["las"] or 0.0 for r in rows], width, color="C4", label="LAS")
        ax.legend(loc="lower left")
    for bar, r in zip(bars, rows, strict=True):
        ax.annotate(
            f"{r['sentences']} sent.",
            (bar.get_x() + (bar.get_width() if labeled else bar.get_width() / 2),
             bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    ax.set_xticks(x, [r["bucket"] for r in rows])
    ax.set_xlabel("sentence length (words)")
    ax.set_ylabel("%")
    ax.set_ylim(0, 105)
    ax.set_title(("UAS and LAS" if labeled else "UAS") + " by sentence length "
                 "(punctuation included)")
    ax.grid(True, axis="y", alpha=0.3)
    return png(fig)


def plot_traces(hardest: list[ReportSentence]) -> bytes:
    return png(traces_figure(hardest))


def traces_figure(hardest: list[ReportSentence]) -> Any:
    """The figure of ``traces.png``: per sentence, the gap between the dual bound and the best
    tree found so far, titled by :func:`trace_title`."""
    cols = 2 if len(hardest) > 1 else 1
    rows = (len(hardest) + 1) // 2
    fig = figure(5.0 * cols, 3.6 * rows, layout=None)  # fixed margins: much faster here
    fig.subplots_adjust(left=0.1, right=0.97, bottom=0.1, top=0.86, wspace=0.3, hspace=0.6)
    for i, s in enumerate(hardest):
        ax = fig.add_subplot(rows, cols, i + 1)
        its = np.arange(1, s.dual.size + 1)
        dual = np.where(np.isfinite(s.dual), s.dual, np.nan)
        primal = np.where(np.isfinite(s.primal), s.primal, np.nan) if s.primal.size else None
        if primal is not None and primal.size == dual.size:
            # the gap between the upper bound and the best tree so far: zero is a proof
            gap = dual - np.fmax.accumulate(primal)
            floor = 1e-6 * max(1.0, float(np.nanmax(np.abs(dual))))
            ax.plot(its, np.maximum(gap, floor), "-", color="C0")
            ax.set_yscale("log")
            ax.set_ylabel("gap (bound - best tree)")
            closed = np.flatnonzero(gap <= floor)
            if closed.size:
                ax.axvline(its[closed[0]], color="C2", ls="--", lw=1, label="gap closed")
                ax.legend(fontsize=7)
        else:
            ax.plot(its, dual, "-", label="upper bound L(u)")
            ax.legend(fontsize=7)
        if its.size > 100:
            ax.set_xscale("log")
        ax.set_title(trace_title(s), fontsize=9)
        ax.set_xlabel("iteration")
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle("The sentences that took longest: gap between the upper bound and the best "
                 "tree found so far (log scale)", fontsize=10)
    return fig


#: Characters of a subplot title line of ``traces.png`` and of the sentence cell of section
#: 6's table: at 100 dpi a subplot and the gap beside it are about 435 pixels wide, some 60
#: characters of 9-point text, so neighbouring titles never overlap; in the table, the page
#: (60em wide, readable in a 1280-pixel window) keeps the other columns on one line.
TITLE_CHARS = 54


def short(text: str, n: int = TITLE_CHARS) -> str:
    """``text`` cut to ``n`` characters in the middle (the start and the end of an id are
    what tells it apart)."""
    if len(text) <= n:
        return text
    head = (n - 1) // 2
    return text[:head] + "…" + text[len(text) - (n - 1 - head):]


def sentence_name(file: str, index: int, sent_id: str | None) -> str:
    """``"sample.conllu, sentence 6 (demo-6)"``, at most :data:`TITLE_CHARS` characters:
    the file, the 1-based position and the sent_id, cut in the middle where long."""
    where = f"{short(os.path.basename(file), 18)}, sentence {index + 1}"
    if not sent_id:
        return where
    return f"{where} ({short(sent_id, max(8, TITLE_CHARS - len(where) - 3))})"


_PROOF_NAMES = {"dual": "certificate", "branch-and-bound": "branch and bound",
                "exact": "exact decoder"}


def trace_title(s: ReportSentence) -> str:
    """The two lines over a sentence's trace in ``traces.png``, each at most
    :data:`TITLE_CHARS` characters."""
    how = _PROOF_NAMES.get(s.proof, "not proved")
    return (f"{sentence_name(s.file, s.index, s.sent_id)}\n"
            f"{s.n} words, {s.iterations:,} iterations, {how}")
