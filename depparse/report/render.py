"""HTML/Markdown/JSON reports of a parse run: certificates, iterations, accuracy.

Input is the parse report written by ``depparse parse --report`` (format ``depparse-report``,
version 1; see :func:`validate_report`).  :func:`write_report` writes into one directory:

``cap_curve.png``
    Certificates, UAS and agreement with the final tree as a function of the iteration cap
    ``K`` (Koo et al. 2010, Fig. 4 and Sec. 7.5).
``recomputed.png``
    Average percentage of head automata re-decoded per iteration (lazy decoding; Koo et al.
    2010, Fig. 3 and Sec. 7.4), with the number of sentences still running.
``iterations_histogram.png``
    Iterations needed for a certificate, in the buckets of Rush et al. 2010, Table 1.
``uas_by_length.png``
    UAS by sentence length (only when the report carries gold heads).
``traces.png``
    Dual ``L(u^(k))`` and primal ``f(y^(k))`` traces of the hardest sentences.
``report.md``, ``summary.json``, ``index.html``
    The same numbers as Markdown tables and JSON; the HTML page shows the figures.

Every file is written to a temporary file in the output directory and renamed into place;
``index.html`` is written last, so it never references an image that is not there, and a
reader never sees a half-written page.

Definitions of the numbers: :mod:`.stats`.
"""

from __future__ import annotations

import html
import io
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..atomic import atomic_output
from .schema import ReportSentence, read_sentences
from .stats import hardest, summarize

__all__ = ["FIGURES", "write_report"]

#: Every figure file name this module may write, in page order.
FIGURES = (
    "cap_curve.png",
    "recomputed.png",
    "iterations_histogram.png",
    "uas_by_length.png",
    "traces.png",
)


def _figure(width: float = 7.0, height: float = 4.2, layout: str | None = "constrained") -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout=layout)
    FigureCanvasAgg(fig)
    return fig


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def _plot_cap_curve(summary: dict[str, Any]) -> bytes:
    curve = summary["cap_curve"]
    ks = [row["K"] for row in curve]
    fig = _figure()
    ax = fig.add_subplot()
    ax.plot(ks, [row["cert_pct"] for row in curve], "o-", label="% certificates")
    ax.plot(ks, [row["match_pct"] for row in curve], "s--", label=f"% match K={ks[-1]}")
    if summary["uas"] is not None:
        ax.plot(ks, [row["uas"] for row in curve], "^-", label="UAS")
    ax.set_xscale("log")
    ax.set_xlabel("iteration cap K")
    ax.set_ylabel("percentage")
    ax.set_title("Certificates and accuracy vs. the iteration cap (Koo et al. 2010, Fig. 4)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right")
    return _png(fig)


def _plot_recomputed(summary: dict[str, Any]) -> bytes:
    from matplotlib.ticker import LogFormatter

    rec = summary["recomputed"]
    its = rec["iterations"]
    fig = _figure()
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
    ax2.yaxis.set_major_formatter(LogFormatter())
    ax2.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False))
    ax.set_title("Lazy decoding: head automata recomputed (Koo et al. 2010, Fig. 3)")
    ax.grid(True, alpha=0.3)
    return _png(fig)


def _plot_histogram(summary: dict[str, Any]) -> bytes:
    rows = summary["iteration_histogram"]
    labels = [r["bucket"] for r in rows]
    pcts = [r["pct"] or 0.0 for r in rows]
    colors = ["C3" if r["bucket"] == "not certified" else "C0" for r in rows]
    fig = _figure()
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
    ax.set_xlabel("iterations to certificate")
    ax.set_ylabel("% of sentences")
    ax.set_title("Iterations to certificate (buckets of Rush et al. 2010, Table 1)")
    ax.grid(True, axis="y", alpha=0.3)
    return _png(fig)


def _plot_uas_by_length(summary: dict[str, Any]) -> bytes:
    rows = summary["uas_by_length"]
    fig = _figure()
    ax = fig.add_subplot()
    vals = [r["uas"] if r["uas"] is not None else 0.0 for r in rows]
    bars = ax.bar(range(len(rows)), vals, color="C2")
    for bar, r in zip(bars, rows, strict=True):
        ax.annotate(
            f"{r['sentences']} sent.",
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    ax.set_xticks(range(len(rows)), [r["bucket"] for r in rows])
    ax.set_xlabel("sentence length (words)")
    ax.set_ylabel("UAS (%)")
    ax.set_ylim(0, 105)
    ax.set_title("UAS by sentence length (punctuation included)")
    ax.grid(True, axis="y", alpha=0.3)
    return _png(fig)


def _plot_traces(hardest: list[ReportSentence]) -> bytes:
    cols = 2 if len(hardest) > 1 else 1
    rows = (len(hardest) + 1) // 2
    fig = _figure(5.0 * cols, 3.6 * rows, layout=None)  # fixed margins: much faster here
    fig.subplots_adjust(left=0.08, right=0.97, bottom=0.1, top=0.86, wspace=0.25, hspace=0.55)
    for i, s in enumerate(hardest):
        ax = fig.add_subplot(rows, cols, i + 1)
        its = np.arange(1, s.dual.size + 1)
        dual = np.where(np.isfinite(s.dual), s.dual, np.nan)
        ax.plot(its, dual, "-", label="dual L(u)")
        if s.primal.size:
            primal = np.where(np.isfinite(s.primal), s.primal, np.nan)
            ax.plot(its, primal, ".", ms=3, alpha=0.6, label="primal f(y)")
            ax.plot(its, np.fmax.accumulate(primal), "--", label="best primal")
        if its.size > 100:
            ax.set_xscale("log")
        cert = "certified" if s.certificate else "no certificate"
        ax.set_title(f"{s.label}\nn={s.n}, {s.iterations} it., {cert}", fontsize=9)
        ax.set_xlabel("iteration")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("Dual and primal traces of the hardest sentences")
    return _png(fig)


def _image(figures, name: str) -> str | None:
    """``name`` if that plot was written, else None (the section then has no image)."""
    return name if name in figures else None


def _f(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _md_table(header: Sequence[str], rows: list[Sequence[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out + [""]


def _recomputed_rows(rec: dict[str, Any], caps: list[int]) -> list[tuple[int, str, int]]:
    its = rec["iterations"]
    return [(k, _f(rec["mean_pct"][k - 1]), rec["running"][k - 1]) for k in caps if k <= len(its)]


@dataclass
class _Section:
    title: str
    figure: str | None
    caption: str
    note: str | None
    header: Sequence[str]
    rows: list[Sequence[Any]]


def _sections(summary: dict[str, Any], figures: set[str]) -> list[_Section]:
    has_gold = summary["uas"] is not None
    caps = [row["K"] for row in summary["cap_curve"]]
    out = []

    note = None
    if summary["sentences"] and not has_gold:
        note = "The input had no gold heads: only certificates and agreement are plotted."
    elif summary["sentences"] and summary["gold_sentences"] < summary["sentences"]:
        note = (
            f"UAS over the {summary['gold_sentences']} of {summary['sentences']} sentences "
            "that have gold heads."
        )
    out.append(
        _Section(
            "Certificates and UAS vs. the iteration cap K",
            _image(figures, "cap_curve.png"),
            "For each cap K: the percentage of sentences certified within K iterations "
            "(certificate and iterations ≤ K), the UAS of the best-primal trees found within "
            "the first K iterations, and the percentage of sentences whose tree at cap K is "
            "already the final tree (Koo et al. 2010, Fig. 4 and Sec. 7.5).",
            note,
            ("K", "certified", "% certified", "UAS", f"% match K={caps[-1]}"),
            [
                (r["K"], r["certified"], _f(r["cert_pct"]), _f(r["uas"]), _f(r["match_pct"]))
                for r in summary["cap_curve"]
            ],
        )
    )

    rec = summary["recomputed"]
    out.append(
        _Section(
            "Head automata recomputed per iteration",
            _image(figures, "recomputed.png"),
            "Average percentage of head automata that lazy decoding had to re-decode at each "
            "iteration, over the sentences still running at that iteration (right axis: how "
            "many). Koo et al. 2010, Fig. 3 and Sec. 7.4."
            + (f" Overall mean: {_f(rec['overall_mean_pct'])}%." if rec else ""),
            None if rec else "No dual-decomposition traces in the report (e.g. an mst model).",
            ("iteration", "% recomputed", "sentences running"),
            _recomputed_rows(rec, caps) if rec else [],
        )
    )

    out.append(
        _Section(
            "Iterations to certificate",
            _image(figures, "iterations_histogram.png"),
            "Percentage of sentences certified after a number of iterations in each bucket of "
            "Rush et al. 2010, Table 1 (its last bucket, printed 20-50, is read as 21-50; 51+ "
            f"is added for caps above 50), and the sentences without a certificate at the cap "
            f"K = {summary['max_iter']} (Table 1's **). Bar labels are sentence counts.",
            None,
            ("iterations", "sentences", "%"),
            [(r["bucket"], r["count"], _f(r["pct"])) for r in summary["iteration_histogram"]],
        )
    )

    out.append(
        _Section(
            "UAS by sentence length",
            _image(figures, "uas_by_length.png"),
            "UAS of the final trees by sentence length (words), punctuation included, with "
            "the certificate rate of each bucket.",
            None if has_gold else "No gold heads in the input: UAS by length is not plotted.",
            ("length", "sentences", "words", "% certified", "UAS"),
            [
                (r["bucket"], r["sentences"], r["words"], _f(r["cert_pct"]), _f(r["uas"]))
                for r in summary["uas_by_length"]
            ],
        )
    )

    hard = summary["hardest"]
    out.append(
        _Section(
            "Dual and primal traces of the hardest sentences",
            _image(figures, "traces.png"),
            "The sentences that ran the most iterations: the dual objective L(u^(k)) (an upper "
            "bound on the best tree score) and the full-model score f(y^(k)) of each "
            "iteration's tree, with the best primal so far. A certificate closes the gap.",
            None if hard else "No dual-decomposition traces in the report.",
            ("sentence", "n", "iterations", "certified", "final dual", "best primal", "gap"),
            [
                (
                    f"{os.path.basename(h['file'])}#{h['index']}"
                    + (f" ({h['sent_id']})" if h["sent_id"] else ""),
                    h["n"],
                    h["iterations"],
                    "yes" if h["certificate"] else "no",
                    _f(h["final_dual"], 4),
                    _f(h["best_primal"], 4),
                    _f(h["gap"], 4),
                )
                for h in hard
            ],
        )
    )
    return out


def _overview(summary: dict[str, Any]) -> list[tuple[str, str]]:
    model = summary["model"]
    given = summary["input_summary"]
    rows = [
        ("model", f"{model.get('model', '?')} ({model.get('path', '?')})"),
        ("inputs", ", ".join(summary["inputs"]) or "–"),
        ("iteration cap K", str(summary["max_iter"])),
        ("single root", "yes" if summary["single_root"] else "no"),
        ("sentences", str(summary["sentences"])),
        ("words", str(summary["words"])),
        ("certified", f"{summary['certified']} ({_f(summary['cert_rate'])}%)"),
        ("mean iterations", _f(summary["mean_iterations"])),
        (
            "UAS (punctuation included)",
            "– (no gold heads)"
            if summary["uas"] is None
            else f"{_f(summary['uas'])} ({summary['uas_correct']}/{summary['uas_words']})",
        ),
        ("parse time", f"{_f(given['seconds'])} s ({_f(given['words_per_sec'], 1)} words/s)"),
    ]
    return rows


def _markdown(summary: dict[str, Any], sections: list[_Section]) -> str:
    lines = ["# depparse parse report", ""]
    lines += _md_table(("", ""), _overview(summary))
    for i, sec in enumerate(sections, 1):
        lines += [f"## {i}. {sec.title}", ""]
        if sec.figure:
            lines += [f"![{sec.title}]({sec.figure})", ""]
        lines += [sec.caption, ""]
        if sec.note:
            lines += [f"*{sec.note}*", ""]
        if sec.rows:
            lines += _md_table(sec.header, sec.rows)
    return "\n".join(lines)


_CSS = """
body { font-family: sans-serif; max-width: 60em; margin: 2em auto; padding: 0 1em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
td, th { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th { background: #f0f0f0; }
td:first-child { text-align: left; }
figure { margin: 1em 0; }
figure img { max-width: 100%; }
figcaption { color: #333; font-size: 0.95em; margin-top: 0.4em; }
.note { color: #8a4b00; font-style: italic; }
"""


def _html_table(header: Sequence[str] | None, rows: list[Sequence[Any]]) -> list[str]:
    e = html.escape
    out = ["<table>"]
    if header:
        out.append("<tr>" + "".join(f"<th>{e(str(h))}</th>" for h in header) + "</tr>")
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in row) + "</tr>")
    return out + ["</table>"]


def _html(summary: dict[str, Any], sections: list[_Section]) -> str:
    e = html.escape
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        "<title>depparse parse report</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        "<h1>depparse parse report</h1>",
    ]
    out += _html_table(None, _overview(summary))
    for i, sec in enumerate(sections, 1):
        out.append(f"<h2>{i}. {e(sec.title)}</h2>")
        if sec.figure:
            out += [
                "<figure>",
                f'<img src="{e(sec.figure)}" alt="{e(sec.title)}">',
                f"<figcaption>{e(sec.caption)}</figcaption>",
                "</figure>",
            ]
        else:
            out.append(f"<p>{e(sec.caption)}</p>")
        if sec.note:
            out.append(f'<p class="note">{e(sec.note)}</p>')
        if sec.rows:
            out += _html_table(sec.header, sec.rows)
    out += ["</body>", "</html>", ""]
    return "\n".join(out)


def _write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path`` and rename it into place."""
    with atomic_output(path, "wb") as f:
        f.write(data)


def write_report(report: Mapping[str, Any], out_dir: str | os.PathLike[str]) -> Path:
    """Write the HTML report, its PNG figures, ``report.md`` and ``summary.json``.

    Parameters
    ----------
    report : dict
        A parse report (see :func:`validate_report`).
    out_dir : str or os.PathLike
        Output directory, created (with parents) when missing.  Files of the same names are
        replaced; a figure of a previous report that this one does not draw (e.g.
        ``uas_by_length.png`` when there are no gold heads) is removed.

    Returns
    -------
    pathlib.Path
        The path of ``index.html``.

    Raises
    ------
    ValueError
        If the report is invalid (nothing is written then).
    OSError
        If the directory or a file cannot be written.

    Notes
    -----
    Figures are drawn with matplotlib's object-oriented API on the Agg canvas (no pyplot
    state, no display needed).  Every file goes through a temporary file and ``os.replace``;
    ``index.html`` comes last and references exactly the figures written by this call.
    The figures follow Koo et al. 2010 (Fig. 3, Fig. 4) and Rush et al. 2010 (Table 1); see
    the module docstring for the definitions.
    """
    sents = read_sentences(report)
    summary = summarize(report, sents)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)

    images: dict[str, bytes] = {}
    if sents:
        images["cap_curve.png"] = _plot_cap_curve(summary)
        if summary["recomputed"] is not None:
            images["recomputed.png"] = _plot_recomputed(summary)
        images["iterations_histogram.png"] = _plot_histogram(summary)
        if summary["uas"] is not None:
            images["uas_by_length.png"] = _plot_uas_by_length(summary)
        hard = hardest(sents)
        if hard:
            images["traces.png"] = _plot_traces(hard)
    summary["figures"] = [name for name in FIGURES if name in images]

    for name in summary["figures"]:
        _write_atomic(out / name, images[name])
    sections = _sections(summary, set(images))
    _write_atomic(out / "report.md", _markdown(summary, sections).encode("utf-8"))
    text = json.dumps(summary, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    _write_atomic(out / "summary.json", text.encode("utf-8"))
    index = out / "index.html"
    _write_atomic(index, _html(summary, sections).encode("utf-8"))
    for name in FIGURES:
        if name not in images:
            stale = out / name
            if stale.is_file():
                stale.unlink()
    return index
