"""HTML/Markdown/JSON reports of a parse run: certificates, iterations, accuracy.

Input is the parse report written by ``depparse parse --report`` (format ``depparse-report``,
version 1; see :func:`validate_report`).  :func:`write_report` writes into one directory:

``cap_curve.png``
    Certificates, UAS and agreement with the final tree as a function of the iteration cap
    ``K`` (Koo et al. 2010, Fig. 4 and Sec. 7.5).
``compare.png``
    Only with ``compare``: certificates against ``K`` of this run and of the compared runs
    (e.g. the solvers, :mod:`.compare`).
``recomputed.png``
    Average percentage of head automata re-decoded per iteration (lazy decoding; Koo et al.
    2010, Fig. 3 and Sec. 7.4), with the number of sentences still running.
``iterations_histogram.png``
    Iterations needed for a certificate, in the buckets of Rush et al. 2010, Table 1.
``uas_by_length.png``
    UAS by sentence length (only when the report carries gold heads).
``traces.png``
    Dual ``L(u^(k))`` and primal ``f(y^(k))`` traces of the hardest sentences.
``report.md``, ``summary.json``, ``index.html``, ``trees.html``
    The numbers as Markdown and JSON; the page shows the figures, trees.html section 6's trees.

Every file is written to a temporary file in the output directory and renamed into place;
``index.html`` is written last, so it never references an image that is not there, and a
reader never sees a half-written page.

Definitions of the numbers: :mod:`.stats`.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..atomic import atomic_output
from ..errors import ReportError, require_extra
from ..viewer import Link, page_html, tree_from_report
from .compare import compare_runs, plot_compare, run_curve
from .figures import (
    plot_cap_curve,
    plot_histogram,
    plot_recomputed,
    plot_traces,
    plot_uas_by_length,
    sentence_name,
)
from .schema import read_sentences
from .stats import hardest, summarize

__all__ = ["FIGURES", "INTRO", "write_report"]

#: Every figure file name this module may write, in page order.
FIGURES = (
    "cap_curve.png",
    "compare.png",
    "recomputed.png",
    "iterations_histogram.png",
    "uas_by_length.png",
    "traces.png",
)


def _proof_cell(h: Mapping[str, Any]) -> str:
    """``"certificate"``, ``"branch and bound, 12 nodes"``, ``"exact"`` or ``"not proved"``."""
    if h.get("proof") == "branch-and-bound":
        return f"branch and bound, {h.get('nodes', 1):,} nodes"
    return {"dual": "certificate", "exact": "exact"}.get(h.get("proof"), "not proved")


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


def _compare_rows(runs: Sequence[Mapping[str, Any]]) -> list[Sequence[Any]]:
    """Rows K, % certified of each run ('–' past a run's own iteration cap)."""
    by_k = [{r["K"]: r["cert_pct"] for r in run["cap_curve"]} for run in runs]
    ks = sorted(set().union(*by_k))
    return [(k, *(_f(c[k]) if k in c else "–" for c in by_k)) for k in ks]


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
            "Proofs and accuracy against the iteration cap K",
            _image(figures, "cap_curve.png"),
            "If dual decomposition were stopped after K iterations (--max-iter K, --no-proof): "
            "the percentage of sentences with a certificate by then, the UAS of the trees it "
            "would return (for each sentence the highest-scoring tree found in the first K "
            "iterations), and the percentage of sentences whose tree would already be the "
            "final one (Koo et al. 2010, Fig. 4 and Sec. 7.5). Sentences without a "
            "certificate are then proved by branch and bound (section 2).",
            note,
            ("K", "certified", "% certified", "UAS", f"% same tree as K={caps[-1]:,}"),
            [
                (r["K"], r["certified"], _f(r["cert_pct"]), _f(r["uas"]), _f(r["match_pct"]))
                for r in summary["cap_curve"]
            ],
        )
    )

    if summary.get("compare"):
        runs = summary["compare"]
        out.append(
            _Section(
                "Runs compared: certificates against the iteration cap",
                _image(figures, "compare.png"),
                "The percentage of sentences with a dual certificate by iteration K, for this "
                "run and the runs given with --compare (parse the same input with "
                "--no-proof, once per --solver or setting).",
                None,
                ("K", *(r["label"] for r in runs)),
                _compare_rows(runs),
            )
        )

    out.append(
        _Section(
            "How the trees were proved optimal",
            None,
            "Dual decomposition proves a tree optimal with a certificate when its two halves "
            "agree (Koo et al. 2010, Theorem 1). When they have not agreed after a budget of "
            "iterations, branch and bound finishes the proof: it splits the candidate heads "
            "of a word in two, bounds each half by dual decomposition again, and discards "
            "every half whose bound is below the best tree found. 'not proved': stopped by "
            "a time or node limit, or decoded with --no-proof. 'joint': the tree and the "
            "UPOS decoded together (parse --joint), proved optimal together; 'UPOS changed': "
            "the tags the joint decoder changed from the tagger's.",
            None,
            ("proof", "sentences", "%", "words", "seconds", "branch-and-bound seconds",
             "nodes", "most nodes", "joint", "UPOS changed"),
            [(r["proof"].replace("-", " "), f"{r['sentences']:,}", _f(r["pct"]),
              f"{r['words']:,}", _f(r["seconds"]), _f(r["bnb_seconds"]), f"{r['nodes']:,}",
              f"{r['max_nodes']:,}", f"{r.get('joint', 0):,}", f"{r.get('tags_changed', 0):,}")
             for r in summary.get("proofs", [])],
        )
    )

    rec = summary["recomputed"]
    out.append(
        _Section(
            "Work per iteration: head automata recomputed",
            _image(figures, "recomputed.png"),
            "Each iteration re-decodes only the head automata (one per word: its children) "
            "whose scores changed; the curve is the average percentage re-decoded at each "
            "iteration, over the sentences still running then (right axis: how many). Koo "
            "et al. 2010, Fig. 3 and Sec. 7.4."
            + (f" Overall mean: {_f(rec['overall_mean_pct'])}%." if rec else ""),
            None if rec else "No dual-decomposition traces in the report (e.g. an mst model).",
            ("iteration", "% recomputed", "sentences running"),
            _recomputed_rows(rec, caps) if rec else [],
        )
    )

    out.append(
        _Section(
            "How many iterations the certificates took",
            _image(figures, "iterations_histogram.png"),
            "Percentage of sentences whose dual certificate came after 1, 2, 3, 4, 5-10, "
            "11-20, 21-50 or more iterations (the ranges of Rush et al. 2010, Table 1, with "
            "51+ added for caps above 50), and of the sentences without one (proved by "
            "branch and bound instead, or not proved). Bar labels are sentence counts.",
            None,
            ("iterations", "sentences", "%"),
            [(r["bucket"], r["count"], _f(r["pct"])) for r in summary["iteration_histogram"]],
        )
    )

    out.append(
        _Section(
            "Accuracy by sentence length",
            _image(figures, "uas_by_length.png"),
            "UAS (and LAS, when the input has gold labels and the model a labeler) of the "
            "final trees by sentence length in words, punctuation included; the table adds "
            "each length's percentage of sentences with a dual certificate.",
            None if has_gold else "No gold heads in the input: accuracy is not plotted.",
            ("length", "sentences", "words", "% certified", "UAS", "LAS"),
            [
                (r["bucket"], r["sentences"], r["words"], _f(r["cert_pct"]), _f(r["uas"]),
                 _f(r.get("las")))
                for r in summary["uas_by_length"]
            ],
        )
    )

    hard = summary["hardest"]
    out.append(
        _Section(
            "The sentences that took longest",
            _image(figures, "traces.png"),
            "The sentences that ran the most iterations. At every iteration dual "
            "decomposition has an upper bound on the score of any tree (the dual value "
            "L(u)) and proposes a tree; the plot shows the gap between the bound and the "
            "best tree proposed so far, on a log scale. A gap of zero proves that tree "
            "optimal; a sentence stopped at the cap with a gap left is returned unproved "
            "(its tree is the best one found).",
            None if hard else "No dual-decomposition traces in the report.",
            ("sentence", "words", "iterations", "proof", "upper bound", "best tree score",
             "gap"),
            [
                (
                    Link(sentence_name(h["file"], h["index"], h["sent_id"]),  # its tree
                         f"trees.html#s{i}"),
                    h["n"],
                    h["iterations"],
                    _proof_cell(h),
                    _f(h["final_dual"], 4),
                    _f(h["best_primal"], 4),
                    _f(h["gap"], 4),
                )
                for i, h in enumerate(hard, 1)
            ],
        )
    )
    return out


def _bnb_overview(summary: dict[str, Any]) -> str:
    row = next((r for r in summary.get("proofs", []) if r["proof"] == "branch-and-bound"), None)
    if row is None or not row["sentences"]:
        return "0"
    return (f"{row['sentences']:,} ({_f(row['pct'])}%; {row['nodes']:,} nodes, "
            f"{_f(row['bnb_seconds'])} s)")


def _tagged_overview(summary: dict[str, Any]) -> str:
    """``"mixed.conllu: UPOS/XPOS/LEMMA/FEATS in 50 of 100 sentences"`` per file (reports
    before the per-file counts: the columns only)."""
    files = summary.get("files") or {}
    parts = []
    for f, cols in summary.get("predicted_columns", {}).items():
        if not cols:
            continue
        c = files.get(f)
        count = (f" in {c['tagged']:,} of {c['sentences']:,} sentences" if c else "")
        parts.append(f"{os.path.basename(f)}: {'/'.join(cols)}{count}")
    return "; ".join(parts) or "none (the input's own tags)"


def _overview(summary: dict[str, Any]) -> list[tuple[str, str]]:
    model = summary["model"]
    given = summary["input_summary"]
    rows = [
        ("model", f"{model.get('model', '?')} ({model.get('path', '?')})"),
        ("inputs", ", ".join(summary["inputs"]) or "–"),
        ("tags predicted by the model's tagger", _tagged_overview(summary)),
        ("iteration cap K", f"{summary['max_iter']:,}"),
        ("single root", "yes" if summary["single_root"] else "no"),
        ("sentences", f"{summary['sentences']:,}"),
        ("words", f"{summary['words']:,}"),
        ("proved optimal", f"{summary['proved']:,} ({_f(summary['proved_pct'])}%)"),
        ("  over all arcs", f"{summary.get('proved_over_all', 0):,}"),
        (f"  {pruned_arcs_words(model)}", f"{summary.get('proved_over_pruned', 0):,}"),
        ("  by the dual certificate", f"{summary['certified']:,} ({_f(summary['cert_rate'])}%)"),
        ("  by branch and bound", _bnb_overview(summary)),
        ("mean iterations", _f(summary["mean_iterations"])),
        (
            "UAS (punctuation included)",
            "– (no gold heads)"
            if summary["uas"] is None
            else f"{_f(summary['uas'])} ({summary['uas_correct']:,}/{summary['uas_words']:,})",
        ),
        (
            "LAS (punctuation included)",
            "– (no gold labels, or no labeler)"
            if summary.get("las") is None
            else f"{_f(summary['las'])} ({summary['las_correct']:,}/{summary['las_words']:,})",
        ),
        ("parse time", f"{_f(given['seconds'])} s ({_f(given['words_per_sec'], 1)} words/s)"),
    ]
    return rows


def pruned_arcs_words(model: Mapping[str, Any]) -> str:
    """``"over the arcs the pruner keeps (at least 99.61% of gold arcs on dev)"``: what a
    proof over the pruned arcs holds over, with the pruner's dev recall where the report's
    ``model`` gives it (:meth:`~depparse.inference.engine.Engine.pruner_recall`)."""
    recall = model.get("pruner_dev_recall")
    if not isinstance(recall, (int, float)):
        return "over the arcs the pruner keeps"
    least = "at least " if model.get("pruner_dev_recall_at_least") else ""
    return f"over the arcs the pruner keeps ({least}{recall:.2f}% of gold arcs on dev)"


def _markdown(summary: dict[str, Any], sections: list[_Section]) -> str:
    lines = ["# depparse parse report", "", INTRO, ""]
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


#: What a certificate is, in plain words, at the top of the page.
INTRO = (
    "'Proved optimal' means that the tree depparse returned is provably the highest-scoring "
    "tree under the model over the arcs it decoded. 'Over all arcs' (parse --proof all, "
    "arc-factored models): no other tree of the sentence scores higher. 'Over the arcs the "
    "pruner keeps' (the default): no tree made of the candidate heads the first-order "
    "pruner keeps scores higher; a tree using a pruned arc might. The proof is a "
    "certificate of dual decomposition or, when that does not come within a budget of "
    "iterations, branch and bound. It does not mean the tree is correct, only that the "
    "parser found the best answer its model allows; the accuracy (UAS, LAS) against the gold "
    "trees says how often that answer is right. A sentence not proved (a time limit, or "
    "--no-proof) got the best tree found, which may or may not be the highest-scoring one."
)

_CSS = """
body { font-family: sans-serif; max-width: 60em; margin: 2em auto; padding: 0 1em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
td, th { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
td { white-space: nowrap; }
th { background: #f0f0f0; }
td:first-child { text-align: left; white-space: normal; overflow-wrap: anywhere; }
figure { margin: 1em 0; }
figure img { max-width: 100%; }
figcaption { color: #333; font-size: 0.95em; margin-top: 0.4em; }
.note { color: #8a4b00; font-style: italic; }
.intro { background: #f4f8ff; border-left: 4px solid #4a78c2; padding: 0.6em 0.9em; }
"""


def _html_table(header: Sequence[str] | None, rows: list[Sequence[Any]]) -> list[str]:
    e = html.escape
    out = ["<table>"]
    if header:
        out.append("<tr>" + "".join(f"<th>{e(str(h))}</th>" for h in header) + "</tr>")
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{c.html() if isinstance(c, Link) else e(str(c))}</td>"
                                    for c in row) + "</tr>")
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
        f'<p class="intro">{e(INTRO)}</p>',
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


def write_report(report: Mapping[str, Any], out_dir: str | os.PathLike[str],
                 compare: Sequence[tuple[str, Mapping[str, Any]]] = (),
                 label: str = "this run") -> Path:
    """Write the HTML report, its PNG figures, ``report.md`` and ``summary.json``.

    Parameters
    ----------
    report : dict
        A parse report (see :func:`validate_report`).
    out_dir : str or os.PathLike
        Output directory, created (with parents) when missing.
    compare : sequence of (label, report)
        Other parse runs of the same input: their certificates against the iteration cap
        are drawn beside this run's (``compare.png``, :mod:`.compare`), this run's curve
        labelled ``label``.  Files of the same names are
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
    MissingExtraError
        If matplotlib is not installed (``pip install 'depparse[report]'``).
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
    require_extra("matplotlib", "report", "the HTML report's plots")
    sents = read_sentences(report)
    summary = summarize(report, sents)
    if compare:
        summary["compare"] = [run_curve(label, summary), *compare_runs(compare)]
        if any(r["sentences"] != summary["sentences"] for r in summary["compare"]):
            raise ReportError("the compared reports are not of the same input (their numbers "
                              "of sentences differ)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)

    images: dict[str, bytes] = {}
    if sents:
        images["cap_curve.png"] = plot_cap_curve(summary)
        if compare:
            images["compare.png"] = plot_compare(summary["compare"])
        if summary["recomputed"] is not None:
            images["recomputed.png"] = plot_recomputed(summary)
        images["iterations_histogram.png"] = plot_histogram(summary)
        if summary["uas"] is not None:
            images["uas_by_length.png"] = plot_uas_by_length(summary)
        hard = hardest(sents)
        if hard:
            images["traces.png"] = plot_traces(hard)
    summary["figures"] = [name for name in FIGURES if name in images]

    for name in summary["figures"]:
        _write_atomic(out / name, images[name])
    sections = _sections(summary, set(images))
    _write_atomic(out / "report.md", _markdown(summary, sections).encode("utf-8"))
    if trees := [tree_from_report(s) for s in hardest(sents)]:  # section 6 links to them
        _write_atomic(out / "trees.html", page_html(trees, "The sentences that took longest")
                      .encode("utf-8"))
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
