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

Definitions (iterations are counted from 1, as in :class:`depparse.decode.dual.DualResult`):

* a sentence is **certified at cap K** when it has a certificate and ``iterations <= K``;
* its **tree at cap K** is the best-primal tree found within the first ``K`` iterations: the
  heads of the last entry of ``best_changes`` whose iteration is ``<= K``.  When there is no
  such entry (``mst`` models, or no change recorded by ``K``) the final ``heads`` are used;
* UAS counts every word, punctuation included (the report has no UPOS), against
  ``gold_heads``; words whose gold head is ``-1`` (unannotated) are not counted.
"""

from __future__ import annotations

import html
import io
import json
import math
import os
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .atomic import atomic_output

__all__ = [
    "FIGURES",
    "FORMAT",
    "ITERATION_BUCKETS",
    "LENGTH_BUCKETS",
    "VERSION",
    "cap_grid",
    "load_report",
    "summarize_report",
    "validate_report",
    "write_report",
]

#: The ``format`` value of a parse report.
FORMAT = "depparse-report"
#: The newest report version this module reads.
VERSION = 1

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

#: Every figure file name this module may write, in page order.
FIGURES = (
    "cap_curve.png",
    "recomputed.png",
    "iterations_histogram.png",
    "uas_by_length.png",
    "traces.png",
)

_TOP_KEYS = ("model", "max_iter", "single_root", "inputs", "summary", "sentences")
_SUMMARY_KEYS = ("sentences", "words", "certified", "cert_rate", "seconds", "words_per_sec")
_SENTENCE_KEYS = (
    "file",
    "index",
    "sent_id",
    "n",
    "certificate",
    "iterations",
    "seconds",
    "dual",
    "primal",
    "recomputed",
    "best_changes",
    "heads",
    "gold_heads",
)
_HARDEST = 4


# ---------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(
        x, (bool, np.bool_)
    )


class _Invalid(ValueError):
    pass


def _floats(value: Any, what: str) -> np.ndarray:
    if not isinstance(value, (list, tuple)) or not all(_is_num(v) for v in value):
        raise _Invalid(f"{what} must be a list of numbers")
    return np.asarray(value, dtype=np.float64)


def _heads(value: Any, n: int, what: str) -> np.ndarray:
    if not isinstance(value, (list, tuple)) or not all(_is_int(v) for v in value):
        raise _Invalid(f"{what} must be a list of integers")
    if len(value) != n + 1:
        raise _Invalid(f"{what} has length {len(value)}, expected n + 1 = {n + 1} (root at 0)")
    arr = np.asarray(value, dtype=np.int64)
    if arr[0] != -1:
        raise _Invalid(f"{what}[0] is {int(arr[0])}, expected -1 (the root has no head)")
    bad = np.flatnonzero((arr[1:] < -1) | (arr[1:] > n))
    if bad.size:
        m = int(bad[0]) + 1
        raise _Invalid(f"{what}[{m}] = {int(arr[m])} is out of range -1..{n}")
    return arr


@dataclass
class _Sent:
    """One sentence of a validated report, as arrays."""

    file: str
    index: int
    sent_id: str | None
    n: int
    certificate: bool
    iterations: int
    seconds: float
    dual: np.ndarray
    primal: np.ndarray
    recomputed: np.ndarray
    change_iters: list[int]
    change_heads: list[np.ndarray]
    heads: np.ndarray
    gold: np.ndarray | None

    def tree_at(self, cap: int) -> np.ndarray:
        """Best-primal tree within the first ``cap`` iterations (see module docstring)."""
        i = bisect_right(self.change_iters, cap)
        return self.change_heads[i - 1] if i else self.heads

    @property
    def label(self) -> str:
        sid = f" ({self.sent_id})" if self.sent_id else ""
        return f"{os.path.basename(self.file)}#{self.index}{sid}"


def _sentence(raw: Any) -> _Sent:
    if not isinstance(raw, Mapping):
        raise _Invalid(f"must be an object, got {type(raw).__name__}")
    missing = [k for k in _SENTENCE_KEYS if k not in raw]
    if missing:
        raise _Invalid(f"missing key(s) {', '.join(repr(k) for k in missing)}")
    n = raw["n"]
    if not _is_int(n) or n < 1:
        raise _Invalid(f"'n' must be a positive integer, got {n!r}")
    iters = raw["iterations"]
    if not _is_int(iters) or iters < 0:
        raise _Invalid(f"'iterations' must be a non-negative integer, got {iters!r}")
    if not isinstance(raw["certificate"], bool):
        raise _Invalid(f"'certificate' must be true or false, got {raw['certificate']!r}")
    if not isinstance(raw["file"], str):
        raise _Invalid("'file' must be a string")
    if not _is_int(raw["index"]):
        raise _Invalid("'index' must be an integer")
    if raw["sent_id"] is not None and not isinstance(raw["sent_id"], str):
        raise _Invalid("'sent_id' must be a string or null")
    if not _is_num(raw["seconds"]):
        raise _Invalid("'seconds' must be a number")
    traces = {}
    for key in ("dual", "primal", "recomputed"):
        arr = _floats(raw[key], repr(key))
        if arr.size not in (0, iters):
            raise _Invalid(
                f"{key!r} has {arr.size} values, expected 'iterations' = {iters} (or none)"
            )
        traces[key] = arr
    rec = traces["recomputed"]
    if rec.size and not ((rec >= 0.0) & (rec <= 1.0)).all():
        raise _Invalid("'recomputed' values must be fractions in [0, 1]")
    changes = raw["best_changes"]
    if not isinstance(changes, (list, tuple)):
        raise _Invalid("'best_changes' must be a list of [iteration, heads] pairs")
    change_iters: list[int] = []
    change_heads: list[np.ndarray] = []
    for j, pair in enumerate(changes):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not _is_int(pair[0]):
            raise _Invalid(f"best_changes[{j}] must be a pair [iteration, heads]")
        k = int(pair[0])
        if change_iters and k < change_iters[-1]:
            raise _Invalid(
                f"best_changes iterations must not decrease (entry {j}: {k} after "
                f"{change_iters[-1]})"
            )
        change_iters.append(k)
        change_heads.append(_heads(pair[1], n, f"best_changes[{j}] heads"))
    gold = raw["gold_heads"]
    return _Sent(
        file=raw["file"],
        index=int(raw["index"]),
        sent_id=raw["sent_id"],
        n=int(n),
        certificate=raw["certificate"],
        iterations=int(iters),
        seconds=float(raw["seconds"]),
        dual=traces["dual"],
        primal=traces["primal"],
        recomputed=rec,
        change_iters=change_iters,
        change_heads=change_heads,
        heads=_heads(raw["heads"], n, "'heads'"),
        gold=None if gold is None else _heads(gold, n, "'gold_heads'"),
    )


def _parse(report: Any, source: str | None = None) -> list[_Sent]:
    """Validate a report and return its sentences as arrays."""
    where = f" {source}" if source else ""
    pre = f"invalid depparse report{where}: "
    if not isinstance(report, Mapping):
        raise ValueError(f"{pre}expected a JSON object, got {type(report).__name__}")
    fmt = report.get("format")
    if fmt != FORMAT:
        raise ValueError(f"{pre}'format' is {fmt!r}, expected {FORMAT!r}")
    version = report.get("version")
    if not _is_int(version) or version < 1:
        raise ValueError(f"{pre}'version' must be a positive integer, got {version!r}")
    if version > VERSION:
        raise ValueError(
            f"depparse report{where} has version {version}, newer than this depparse reads "
            f"(up to {VERSION}); upgrade depparse"
        )
    missing = [k for k in _TOP_KEYS if k not in report]
    if missing:
        raise ValueError(f"{pre}missing key(s) {', '.join(repr(k) for k in missing)}")
    if not isinstance(report["model"], Mapping):
        raise ValueError(f"{pre}'model' must be an object")
    if not _is_int(report["max_iter"]) or report["max_iter"] < 0:
        raise ValueError(f"{pre}'max_iter' must be a non-negative integer")
    if not isinstance(report["single_root"], bool):
        raise ValueError(f"{pre}'single_root' must be true or false")
    inputs = report["inputs"]
    if not isinstance(inputs, (list, tuple)) or not all(isinstance(p, str) for p in inputs):
        raise ValueError(f"{pre}'inputs' must be a list of file names")
    summary = report["summary"]
    if not isinstance(summary, Mapping):
        raise ValueError(f"{pre}'summary' must be an object")
    missing = [k for k in _SUMMARY_KEYS if k not in summary]
    if missing:
        raise ValueError(f"{pre}'summary' is missing key(s) {', '.join(map(repr, missing))}")
    for k in _SUMMARY_KEYS:
        if not _is_num(summary[k]):
            raise ValueError(f"{pre}summary {k!r} must be a number, got {summary[k]!r}")
    raw_sentences = report["sentences"]
    if not isinstance(raw_sentences, (list, tuple)):
        raise ValueError(f"{pre}'sentences' must be a list")
    out = []
    for i, raw in enumerate(raw_sentences):
        try:
            out.append(_sentence(raw))
        except _Invalid as err:
            ident = ""
            if isinstance(raw, Mapping) and "file" in raw and "index" in raw:
                ident = f" (file {raw['file']}, index {raw['index']})"
            raise ValueError(f"{pre}sentence {i}{ident}: {err}") from None
    return out


def validate_report(report: Mapping[str, Any], source: str | None = None) -> None:
    """Check that ``report`` is a parse report this module can read.

    Parameters
    ----------
    report : dict
        The decoded JSON of ``depparse parse --report``::

            {"format": "depparse-report", "version": 1,
             "model": {"path": str, "model": "gs" | "sib" | "mst", ...},
             "max_iter": int, "single_root": bool, "inputs": [str, ...],
             "summary": {"sentences", "words", "certified", "cert_rate" (percent),
                         "seconds", "words_per_sec"},
             "sentences": [{"file", "index", "sent_id", "n", "certificate", "iterations",
                            "seconds", "dual", "primal", "recomputed",
                            "best_changes": [[iteration, heads], ...],
                            "heads", "gold_heads" (or null)}, ...]}

        ``dual``, ``primal`` and ``recomputed`` hold one value per iteration (``recomputed``
        as a fraction in [0, 1]) or are empty (``mst`` models); every heads list has length
        ``n + 1`` with ``heads[0] = -1``.  Extra keys are allowed.
    source : str, optional
        File name for the error messages.

    Raises
    ------
    ValueError
        On a wrong ``format``, a ``version`` newer than :data:`VERSION`, a missing key or a
        malformed value; the message names the key and, for a sentence, its position, file
        and index.
    """
    _parse(report, source)


def load_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a parse report JSON file.

    Parameters
    ----------
    path : str or os.PathLike
        The file written by ``depparse parse --report``.

    Returns
    -------
    dict
        The decoded report.

    Raises
    ------
    ValueError
        If the file is not valid JSON or not a valid report (see :func:`validate_report`).
    OSError
        If the file cannot be read.
    """
    with open(path, encoding="utf-8") as f:
        try:
            report = json.load(f)
        except json.JSONDecodeError as err:
            raise ValueError(f"{os.fspath(path)}: not valid JSON ({err})") from None
    validate_report(report, os.fspath(path))
    return report


# ---------------------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------------------


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


def _pct(part: float, total: float) -> float | None:
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


def _correct(heads: np.ndarray, gold: np.ndarray) -> tuple[int, int]:
    g = gold[1:]
    scored = g >= 0
    return int(((heads[1:] == g) & scored).sum()), int(scored.sum())


def _hardest(sents: list[_Sent]) -> list[_Sent]:
    """The sentences with traces that ran the most iterations (then the longest), at most 4."""
    traced = [s for s in sents if s.dual.size]
    return sorted(traced, key=lambda s: (-s.iterations, -s.n, s.file, s.index))[:_HARDEST]


def _summarize(report: Mapping[str, Any], sents: list[_Sent]) -> dict[str, Any]:
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
                "cert_pct": _pct(cert, total),
                "match_pct": _pct(match, total),
                "uas": _pct(ok, words) if gold else None,
            }
        )

    # final UAS
    uas_ok = uas_words = 0
    for s in gold:
        c, w = _correct(s.heads, s.gold)
        uas_ok += c
        uas_words += w

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
                "pct": _pct(count, total),
            }
        )
    # a certificate after 0 iterations cannot happen with the loop of Fig. 1; keep it counted
    zero = sum(1 for s in sents if s.certificate and s.iterations < 1)
    if zero:
        histogram.insert(
            0, {"bucket": "0", "lo": 0, "hi": 0, "count": zero, "pct": _pct(zero, total)}
        )
    histogram.append(
        {
            "bucket": "not certified",
            "lo": None,
            "hi": None,
            "count": total - certified,
            "pct": _pct(total - certified, total),
        }
    )

    # (d) UAS (and certificates) by sentence length
    by_length = []
    for lo, hi in LENGTH_BUCKETS:
        group = [s for s in sents if _in_bucket(s.n, lo, hi)]
        ggroup = [s for s in group if s.gold is not None]
        ok = words = 0
        for s in ggroup:
            c, w = _correct(s.heads, s.gold)
            ok += c
            words += w
        by_length.append(
            {
                "bucket": _bucket_label(lo, hi),
                "lo": lo,
                "hi": hi,
                "sentences": len(group),
                "words": sum(s.n for s in group),
                "cert_pct": _pct(sum(s.certificate for s in group), len(group)),
                "gold_words": words,
                "uas_correct": ok,
                "uas": _pct(ok, words) if ggroup else None,
            }
        )

    # (e) the hardest sentences: most iterations (then longest), with traces
    hardest = _hardest(sents)
    hard = []
    for s in hardest:
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
                "final_dual": _finite(final),
                "best_primal": _finite(best),
                "gap": _finite(final - best),
            }
        )

    given = report["summary"]
    return _jsonable(
        {
            "format": "depparse-report-summary",
            "version": VERSION,
            "model": dict(report["model"]),
            "max_iter": int(report["max_iter"]),
            "single_root": bool(report["single_root"]),
            "inputs": list(report["inputs"]),
            "input_summary": {k: given[k] for k in _SUMMARY_KEYS},
            "sentences": total,
            "words": sum(s.n for s in sents),
            "certified": certified,
            "uncertified": total - certified,
            "cert_rate": 100.0 * (certified / total) if total else 0.0,  # as certificate_rate
            "mean_iterations": float(np.mean([s.iterations for s in sents])) if sents else None,
            "gold_sentences": len(gold),
            "uas_words": uas_words,
            "uas_correct": uas_ok,
            "uas": _pct(uas_ok, uas_words) if gold else None,
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

    Raises
    ------
    ValueError
        If the report is invalid.
    """
    return _summarize(report, _parse(report))


# ---------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------


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


def _plot_traces(hardest: list[_Sent]) -> bytes:
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


# ---------------------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------


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
    sents = _parse(report)
    summary = _summarize(report, sents)
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
        hardest = _hardest(sents)
        if hardest:
            images["traces.png"] = _plot_traces(hardest)
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
