"""Several parse runs of the same input on one plot: the share of sentences with a dual
certificate against the iteration cap ``K`` (Koo et al. 2010, Fig. 4), one curve per run.

Made for comparing the solvers of dual decomposition (``--solver subgradient`` against
``--solver ad3``; Martins et al. 2015 compare AD3 with subgradient the same way) or their
settings: parse the same file once per setting with ``--no-proof --report RUN.json`` (with
proofs, dual decomposition stops after ``--budget`` iterations and branch and bound takes
over, so the curve would end there), then ``depparse report RUN1.json --compare RUN2.json``.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["compare_runs", "figure", "plot_compare", "png", "run_curve", "run_label"]


def figure(width: float = 7.0, height: float = 4.2, layout: str | None = "constrained") -> Any:
    """A matplotlib figure on the Agg canvas (no pyplot state, no display needed)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout=layout)
    FigureCanvasAgg(fig)
    return fig


def png(fig: Any) -> bytes:
    """The figure as PNG bytes (no timestamp or software metadata: reproducible files)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def run_label(report: Mapping[str, Any], fallback: str) -> str:
    """``"ad3, no proofs (ad3.json)"``: the run's solver and proof setting as the report
    records them (reports written before they were recorded: the file name only)."""
    dec = report.get("decoding")
    if not isinstance(dec, Mapping) or not isinstance(dec.get("solver"), str):
        return fallback
    proofs = "proofs" if dec.get("proof") else "no proofs"
    return f"{dec['solver']}, {proofs} ({fallback})"


def run_curve(label: str, summary: Mapping[str, Any]) -> dict[str, Any]:
    """``{"label", "sentences", "words", "cap_curve"}`` of a run's summary
    (:func:`~depparse.report.stats.summarize`): what the comparison shows of it."""
    return {"label": label, "sentences": summary["sentences"], "words": summary["words"],
            "cap_curve": [{"K": r["K"], "certified": r["certified"], "cert_pct": r["cert_pct"]}
                          for r in summary["cap_curve"]]}


def compare_runs(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """:func:`run_curve` of each ``(label, report)`` pair, in order; raises
    :class:`~depparse.errors.ReportError` for an invalid report."""
    from .schema import read_sentences
    from .stats import summarize

    return [run_curve(label, summarize(rep, read_sentences(rep))) for label, rep in runs]


def plot_compare(runs: Sequence[Mapping[str, Any]]) -> bytes:
    """PNG: % certified against the iteration cap, one curve per run of :func:`compare_runs`."""
    fig = figure()
    ax = fig.add_subplot()
    marks = "os^vD<>p*h"
    for i, run in enumerate(runs):
        curve = run["cap_curve"]
        ax.plot([r["K"] for r in curve], [r["cert_pct"] for r in curve],
                marks[i % len(marks)] + "-", label=run["label"])
    ax.set_xscale("log")
    ax.set_xlabel("iteration cap K")
    ax.set_ylabel("% of sentences with a dual certificate")
    ax.set_ylim(0, 102)
    ax.set_title("Runs compared: certificates vs. the iteration cap (Koo et al. 2010, Fig. 4)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right")
    return png(fig)
