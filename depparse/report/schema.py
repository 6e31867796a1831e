"""The parse report: its JSON format (version, keys, values), built, read and validated.

``depparse parse --report FILE`` writes a report (:func:`build_report`); ``depparse report``
and ``depparse evaluate --report`` read it (:func:`load_report`, :func:`validate_report`,
:func:`read_sentences`).  :func:`validate_report` documents every key.  Statistics over a
report are in :mod:`.stats`, its HTML/PNG/Markdown rendering in :mod:`.render`.
"""

from __future__ import annotations

import json
import os
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ReportError

__all__ = ["FORMAT", "OPTIMAL_OVER", "PROOF_KINDS", "ReportSentence", "SUMMARY_KEYS", "VERSION",
           "build_report", "load_report", "read_sentences", "report_header", "report_summary",
           "sentence_entry", "validate_report"]

#: The ``format`` value of a parse report.
FORMAT = "depparse-report"
#: The newest report version this module reads (2: optional per-sentence ``rels`` and
#: ``gold_rels``; 3: per-sentence ``optimal``, ``proof`` and ``nodes``, the proof of
#: optimality; older reports are read as they are, their proof being the certificate).
VERSION = 3

#: What can prove a tree optimal (``proof`` of a sentence; null: not proved): the dual
#: decomposition certificate, branch and bound, or an exact first-order decoder (``mst``).
PROOF_KINDS = ("dual", "branch-and-bound", "exact")

#: The graphs a proof can hold over (``optimal_over`` of a sentence, optional in version 3):
#: the arcs the pruner kept, or every arc of the sentence (``parse --proof all``, an ``mst``
#: model).  A proved sentence without the key was proved over the kept arcs (over all of them
#: for ``"exact"``: an ``mst`` model prunes nothing).
OPTIMAL_OVER = ("pruned", "all")

_TOP_KEYS = ("model", "max_iter", "single_root", "inputs", "summary", "sentences")
SUMMARY_KEYS = ("sentences", "words", "certified", "cert_rate", "seconds", "words_per_sec")
PROOF_SUMMARY_KEYS = ("proved", "proved_rate")  # version 3
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
_PROOF_KEYS = ("optimal", "proof", "nodes")  # version 3


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(
        x, (bool, np.bool_)
    )


class _Invalid(ReportError):
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
class ReportSentence:
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
    rels: list | None = None  # predicted DEPREL (index 0 ""), when the report has them
    gold_rels: list | None = None
    optimal: bool | None = None  # None: read from the certificate (reports before version 3)
    proof: str | None = None
    nodes: int = 1
    bnb_iterations: int = 0
    bnb_seconds: float = 0.0
    timed_out: bool = False
    forms: list | None = None  # FORM, UPOS, LEMMA (index 0 the root), when the report has them
    upos: list | None = None
    lemmas: list | None = None
    joint: bool = False  # tree and UPOS decoded jointly (parse --joint); its proof is theirs
    tags_changed: int = 0  # UPOS the joint decoder changed from the tagger's
    optimal_over: str | None = None  # "pruned" or "all" where proved (OPTIMAL_OVER)

    def __post_init__(self):
        if self.optimal is None:
            self.optimal = bool(self.certificate)
            self.proof = "dual" if self.certificate else None
        if self.optimal and self.optimal_over is None:
            self.optimal_over = "all" if self.proof == "exact" else "pruned"

    def tree_at(self, cap: int) -> np.ndarray:
        """Best-primal tree within the first ``cap`` iterations (see module docstring)."""
        i = bisect_right(self.change_iters, cap)
        return self.change_heads[i - 1] if i else self.heads

    @property
    def label(self) -> str:
        """``"sample.conllu, sentence 6 (demo-6)"``: the file, the 1-based position, the id."""
        sid = f" ({self.sent_id})" if self.sent_id else ""
        return f"{os.path.basename(self.file)}, sentence {self.index + 1}{sid}"


def _proof(raw: Mapping, version: int) -> dict:
    """The proof keys of a sentence (version 3), checked against each other."""
    if version < 3:
        return {}
    missing = [k for k in _PROOF_KEYS if k not in raw]
    if missing:
        raise _Invalid(f"missing key(s) {', '.join(repr(k) for k in missing)}")
    optimal, proof, nodes = raw["optimal"], raw["proof"], raw["nodes"]
    if not isinstance(optimal, bool):
        raise _Invalid(f"'optimal' must be true or false, got {optimal!r}")
    if proof is not None and proof not in PROOF_KINDS:
        raise _Invalid(f"'proof' must be null or one of {', '.join(PROOF_KINDS)}, got {proof!r}")
    if optimal != (proof is not None):
        raise _Invalid(f"'optimal' is {str(optimal).lower()} but 'proof' is "
                       f"{'null' if proof is None else repr(proof)}")
    if proof == "dual" and not raw["certificate"]:
        raise _Invalid("'proof' is 'dual' but 'certificate' is false")
    if not _is_int(nodes) or nodes < 0:
        raise _Invalid(f"'nodes' must be a non-negative integer, got {nodes!r}")
    out = {"optimal": optimal, "proof": proof, "nodes": int(nodes)}
    over = raw.get("optimal_over")
    if over is not None and over not in OPTIMAL_OVER:
        raise _Invalid(f"'optimal_over' must be null or one of {', '.join(OPTIMAL_OVER)}, got "
                       f"{over!r}")
    if over is not None and not optimal:
        raise _Invalid(f"'optimal_over' is {over!r} but 'optimal' is false")
    out["optimal_over"] = over
    it, sec = raw.get("bnb_iterations", 0), raw.get("bnb_seconds", 0.0)
    if not _is_int(it) or it < 0:
        raise _Invalid(f"'bnb_iterations' must be a non-negative integer, got {it!r}")
    if not _is_num(sec) or not sec >= 0:
        raise _Invalid(f"'bnb_seconds' must be a non-negative number, got {sec!r}")
    out.update(bnb_iterations=int(it), bnb_seconds=float(sec))
    joint, changed = raw.get("joint", False), raw.get("tags_changed", 0)
    if not isinstance(joint, (bool, np.bool_)):
        raise _Invalid(f"'joint' must be true or false, got {joint!r}")
    if not _is_int(changed) or changed < 0 or (changed and not joint):
        raise _Invalid(f"'tags_changed' must be a non-negative integer (0 unless 'joint'), "
                       f"got {changed!r}")
    out.update(joint=bool(joint), tags_changed=int(changed))
    return out


def _sentence(raw: Any, version: int = VERSION) -> ReportSentence:
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
    rels = {k: _rels(raw.get(k), n, repr(k))
            for k in ("rels", "gold_rels", "forms", "upos", "lemmas")}
    return ReportSentence(
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
        rels=rels["rels"],
        gold_rels=rels["gold_rels"],
        timed_out=bool(raw.get("timed_out", False)),
        forms=rels["forms"],
        upos=rels["upos"],
        lemmas=rels["lemmas"],
        **_proof(raw, version),
    )


def _rels(value: Any, n: int, what: str) -> list | None:
    """An optional DEPREL list (length n + 1, strings; version 2 reports have them)."""
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise _Invalid(f"{what} must be a list of strings or null")
    if len(value) != n + 1:
        raise _Invalid(f"{what} has length {len(value)}, expected n + 1 = {n + 1} (root at 0)")
    return list(value)


def read_sentences(report: Any, source: str | None = None) -> list[ReportSentence]:
    """Validate a report and return its sentences as arrays."""
    where = f" {source}" if source else ""
    pre = f"invalid depparse report{where}: "
    if not isinstance(report, Mapping):
        raise ReportError(f"{pre}expected a JSON object, got {type(report).__name__}")
    fmt = report.get("format")
    if fmt != FORMAT:
        raise ReportError(f"{pre}'format' is {fmt!r}, expected {FORMAT!r}")
    version = report.get("version")
    if not _is_int(version) or version < 1:
        raise ReportError(f"{pre}'version' must be a positive integer, got {version!r}")
    if version > VERSION:
        raise ReportError(
            f"depparse report{where} has version {version}, newer than this depparse reads "
            f"(up to {VERSION}); upgrade depparse"
        )
    missing = [k for k in _TOP_KEYS if k not in report]
    if missing:
        raise ReportError(f"{pre}missing key(s) {', '.join(repr(k) for k in missing)}")
    if not isinstance(report["model"], Mapping):
        raise ReportError(f"{pre}'model' must be an object")
    if not _is_int(report["max_iter"]) or report["max_iter"] < 0:
        raise ReportError(f"{pre}'max_iter' must be a non-negative integer")
    if not isinstance(report["single_root"], bool):
        raise ReportError(f"{pre}'single_root' must be true or false")
    inputs = report["inputs"]
    if not isinstance(inputs, (list, tuple)) or not all(isinstance(p, str) for p in inputs):
        raise ReportError(f"{pre}'inputs' must be a list of file names")
    summary = report["summary"]
    if not isinstance(summary, Mapping):
        raise ReportError(f"{pre}'summary' must be an object")
    missing = [k for k in SUMMARY_KEYS if k not in summary]
    if missing:
        raise ReportError(f"{pre}'summary' is missing key(s) {', '.join(map(repr, missing))}")
    for k in SUMMARY_KEYS + (PROOF_SUMMARY_KEYS if version >= 3 else ()):
        if k not in summary:
            raise ReportError(f"{pre}'summary' is missing key {k!r}")
        if not _is_num(summary[k]):
            raise ReportError(f"{pre}summary {k!r} must be a number, got {summary[k]!r}")
    raw_sentences = report["sentences"]
    if not isinstance(raw_sentences, (list, tuple)):
        raise ReportError(f"{pre}'sentences' must be a list")
    out = []
    for i, raw in enumerate(raw_sentences):
        try:
            out.append(_sentence(raw, version))
        except _Invalid as err:
            ident = ""
            if isinstance(raw, Mapping) and "file" in raw and "index" in raw:
                ident = f" (file {raw['file']}, index {raw['index']})"
            raise ReportError(f"{pre}sentence {i}{ident}: {err}") from None
    return out


def validate_report(report: Mapping[str, Any], source: str | None = None) -> None:
    """Check that ``report`` is a parse report this module can read.

    Parameters
    ----------
    report : dict
        The decoded JSON of ``depparse parse --report``::

            {"format": "depparse-report", "version": 2,
             "model": {"path": str, "model": "gs" | "gsh" | "sib" | "mst", ...},
             "max_iter": int, "single_root": bool, "inputs": [str, ...],
             "summary": {"sentences", "words", "certified", "cert_rate" (percent),
                         "proved", "proved_rate" (percent; version 3),
                         "seconds", "words_per_sec"},
             "sentences": [{"file", "index", "sent_id", "n", "certificate", "iterations",
                            "seconds", "dual", "primal", "recomputed",
                            "best_changes": [[iteration, heads], ...],
                            "heads", "gold_heads" (or null),
                            "rels", "gold_rels" (optional, or null),
                            "forms", "upos", "lemmas" (optional: the words, for the
                            report's tree page),
                            "optimal", "proof", "nodes" (version 3),
                            "optimal_over" (optional: "pruned" or "all", null where not
                            proved),
                            "bnb_iterations", "bnb_seconds" (optional),
                            "joint", "tags_changed" (optional: tree and UPOS decoded
                            jointly, the UPOS changed from the tagger's),
                            "tagged" (optional: the columns the tagger predicted)}, ...],
             "files": {file: {"sentences", "words", "tagged" (sentences whose tags the
                              model predicted), "columns",
                              "language" (optional: the language check of the file's
                              first sentences, depparse.catalog.LanguageFit.to_json: "model",
                              "fits", "better" and "better_option" (a shipped model that
                              fits better, "-m pt"), "chars", "excess", "threshold",
                              "warning" (null when it fits))}} (optional)}

        ``certificate`` is the plain dual decomposition certificate of the first run
        (``iterations`` long, the traces are its); ``optimal`` says whether the tree is
        proved optimal and ``proof`` how: ``"dual"`` (that certificate), ``"branch-and-bound"``
        (the search of :mod:`depparse.decode.bnb` finished the proof), ``"exact"`` (an ``mst``
        model, decoded exactly) or null (not proved: ``--no-proof`` or ``--time-limit``);
        ``optimal_over`` over which arcs: ``"pruned"`` (the arcs the pruner kept: no tree
        over them scores higher, a tree using a pruned arc might) or ``"all"`` (every arc:
        no tree of the sentence scores higher; ``parse --proof all``, ``mst`` models);
        ``nodes`` counts the dual decomposition runs (the first one and every branch and bound
        node), ``bnb_iterations``/``bnb_seconds`` what the branch and bound nodes took
        (``bnb_seconds`` is part of ``seconds``).

        ``dual``, ``primal`` and ``recomputed`` hold one value per iteration (``recomputed``
        as a fraction in [0, 1]) or are empty (``mst`` models); every heads list has length
        ``n + 1`` with ``heads[0] = -1``; ``rels``/``gold_rels`` are the predicted and gold
        DEPREL strings (length ``n + 1``, ``""`` at 0; null when the parser has no labeler or
        the input no gold labels); ``forms``/``upos``/``lemmas`` the parsed words' columns
        (length ``n + 1``, ``"<ROOT>"`` at 0).  Extra keys are allowed.
    source : str, optional
        File name for the error messages.

    Raises
    ------
    ReportError
        On a wrong ``format``, a ``version`` newer than :data:`VERSION`, a missing key or a
        malformed value; the message names the key and, for a sentence, its position, file
        and index.
    """
    read_sentences(report, source)


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
    ReportError
        If the file is not valid JSON or not a valid report (see :func:`validate_report`).
    OSError
        If the file cannot be read.
    """
    with open(path, encoding="utf-8") as f:
        try:
            report = json.load(f)
        except json.JSONDecodeError as err:
            raise ReportError(f"{os.fspath(path)}: not valid JSON ({err})") from None
    validate_report(report, os.fspath(path))
    return report


def report_header(parser, max_iter=None, single_root=None) -> dict:
    """The keys of a report that come before its sentences: format, version, the model and
    the decoding settings of ``parser`` (a :class:`~depparse.inference.parser.Parser`)."""
    cfg, dec = parser.config, parser.decoding
    recall, at_least = parser.engine.pruner_recall()
    return {
        "format": FORMAT, "version": VERSION,
        "model": {"path": parser.path, "model": cfg.model, "projective": dec.projective,
                  "bits": cfg.bits, "prune_threshold": dec.prune_threshold,
                  "prune_max_heads": dec.prune_max_heads,
                  "prune_network": dec.prune_network,
                  # the pruner's gold-arc recall on dev (a percentage, or null when not known
                  # for these settings; "at least" that much: Engine.pruner_recall)
                  "pruner_dev_recall": recall, "pruner_dev_recall_at_least": at_least,
                  "context_layer": cfg.context_layer},
        "max_iter": int(dec.max_iter if max_iter is None else max_iter),
        "single_root": bool(dec.single_root if single_root is None else single_root),
        "decoding": {"solver": dec.solver, "proof": bool(dec.proof), "budget": int(dec.budget),
                     "budget_per_word": int(dec.budget_per_word),
                     "proof_over": dec.proof_over,
                     "proof_max_words": int(dec.proof_max_words)}}


def sentence_entry(fname, index, sentence, parsed, r) -> dict:
    """The report entry of one sentence: ``sentence`` as read (its gold heads and labels,
    where it has them), ``parsed`` and ``r`` (a ParseResult) what the parser made of it, the
    ``index``-th sentence (from 0) of the file ``fname``."""
    gold = sentence.heads.tolist() if sentence.has_gold_heads else None
    gold_rels = list(sentence.rels) if sentence.n and all(sentence.rels[1:]) else None
    return {
        "file": fname, "index": index, "sent_id": sentence.sent_id, "n": sentence.n,
        "certificate": bool(r.certificate), "iterations": int(r.iterations),
        "optimal": bool(r.optimal), "proof": r.proof, "nodes": int(r.nodes),
        "optimal_over": getattr(r, "optimal_over", None),
        "bnb_iterations": int(r.bnb_iterations), "bnb_seconds": float(r.bnb_seconds),
        "joint": bool(getattr(r, "joint", False)),
        "tags_changed": int(getattr(r, "tags_changed", 0)),
        "seconds": float(r.seconds), "timed_out": bool(r.timed_out),
        "kept_arcs": int(r.kept_arcs), "tagged": list(getattr(r, "tagged", ()) or ()),
        "dual": _round(r.dual), "primal": _round(r.primal),
        "recomputed": _round(r.recomputed),
        "best_changes": [[int(k), h.tolist()] for k, h in (r.best_changes or [])],
        "heads": r.heads.tolist(), "gold_heads": gold,
        "rels": list(parsed.rels) if any(parsed.rels[1:]) else None,
        "gold_rels": gold_rels, "forms": list(parsed.forms),
        "upos": list(parsed.upos), "lemmas": list(parsed.lemmas)}


def report_summary(sentences, words, certified, proved, seconds) -> dict:
    """The ``summary`` of a report from its counts."""
    return {"sentences": sentences, "words": words, "certified": certified,
            "cert_rate": 100.0 * certified / max(1, sentences),
            "proved": proved, "proved_rate": 100.0 * proved / max(1, sentences),
            "seconds": float(seconds), "words_per_sec": words / max(float(seconds), 1e-9)}


def build_report(parser, docs, results, seconds, max_iter=None, single_root=None,
                 predicted=None):
    """The JSON parse report of a run (per-sentence certificates, iterations, times, traces),
    built in memory (``depparse parse --report`` writes the same by chunks:
    :class:`~depparse.report.report_writer.ReportWriter`).

    ``parser`` is the :class:`~depparse.inference.parser.Parser` that parsed; ``docs`` is a
    list of ``(file name, sentences)``; ``predicted`` maps a file name to the columns the
    model's tagger predicted for it (``"predicted_columns"``; default: from the results);
    ``results`` the matching ``(parsed sentence, ParseResult)`` pairs in the same order.
    """
    sents = []
    files = {}
    i = 0
    for fname, ss in docs:
        f = files.setdefault(fname, {"sentences": 0, "words": 0, "tagged": 0, "columns": []})
        for j, s in enumerate(ss):
            parsed, r = results[i]
            i += 1
            sents.append(sentence_entry(fname, j, s, parsed, r))
            f["sentences"] += 1
            f["words"] += s.n
            tagged = list(getattr(r, "tagged", ()) or ())
            f["tagged"] += bool(tagged)
            f["columns"] += [c for c in tagged if c not in f["columns"]]
    if predicted is None:
        predicted = {k: v["columns"] for k, v in files.items()}
    rep = report_header(parser, max_iter, single_root)
    rep.update({
        "inputs": [f for f, _ in docs],
        "predicted_columns": predicted or {},
        "files": files,
        "summary": report_summary(len(sents), sum(s["n"] for s in sents),
                                  sum(s["certificate"] for s in sents),
                                  sum(s["optimal"] for s in sents), seconds),
        "sentences": sents})
    return rep


def _round(a):
    return [] if a is None else [float(f"{x:.8g}") for x in np.asarray(a, dtype=float)]
