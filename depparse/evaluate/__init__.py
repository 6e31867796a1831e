"""Evaluation with the CoNLL 2018 shared-task definitions, and certificate statistics.

Definitions (Zeman et al. 2018, *CoNLL 2018 Shared Task: Multilingual Parsing from Raw Text to
Universal Dependencies*, and its evaluation script ``conll18_ud_eval.py``, which survives in
the ``udeval`` module of the UD ``udtools`` package; depparse re-implements it and is tested
against it in ``tests/test_evaluate.py``):

* the scored units are the **syntactic words**: lines with an integer ID.  Multiword-token
  range lines (``1-2``) and empty nodes (``8.1``) are not words and are never scored;
* when the system file has the gold tokenization the words are paired one to one; otherwise
  (a system that tokenized raw text) both files must hold the same text, whitespace aside,
  and the words are aligned through it (:mod:`depparse.evaluate.align`);
* **Tokens**, **Sentences** and **Words** are F1 scores of the system's segmentation;
  **UPOS**, **XPOS**, **UFeats** (universal features only), **AllTags** (all three),
  **Lemmas** (a gold lemma ``_`` matches anything) compare the aligned words' columns;
* **UAS** asks that the system head word be aligned to the gold head word; **LAS** also
  that the DEPREL match, comparing only the *universal* part of the relation, i.e. the part
  before the first ``:`` (``nmod:poss`` and ``nmod`` match);
* punctuation is **included** in UAS/LAS.  The "no punct" variants, for comparing with older
  papers, leave out the words whose *gold* UPOS is ``PUNCT`` (on the system side: the words
  aligned to a gold ``PUNCT`` word, and unaligned words whose own UPOS is ``PUNCT``).

Every metric is an F1 score ``2c / (g + s)`` over gold and system counts; with identical
tokenization ``g == s`` and this equals the accuracy ``c / g``, bit for bit.  Unlike the
official script, :func:`evaluate` does not reject system parses that are not trees (cycles,
several root words, ``_`` heads): such words simply count as wrong.

Certificates (Koo et al. 2010, Sec. 7.5 and Table 1): :func:`certificate_rate` gives the
percentage of sentences of a parse report whose tree carries a certificate of optimality.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from os import PathLike
from typing import Any

import numpy as np

from ..conllu import Sentence, read_conllu
from ..errors import EvaluationError
from ..report.schema import validate_report
from .align import Tokenized, align_words, first_difference, spans_correct
from .scores import METRICS, Metric, Scores

__all__ = [
    "METRICS",
    "PUNCT",
    "Metric",
    "Scores",
    "certificate_rate",
    "check_tokenization",
    "evaluate",
    "evaluate_files",
]

#: The UPOS tag left out by the "no punct" scores.
PUNCT = "PUNCT"

#: The universal features compared by UFeats (the others are dropped, as in the official
#: script).
UNIVERSAL_FEATURES = frozenset({
    "PronType", "NumType", "Poss", "Reflex", "Foreign", "Abbr", "Gender", "Animacy", "Number",
    "Case", "Definite", "Degree", "VerbForm", "Mood", "Tense", "Aspect", "Voice", "Evident",
    "Polarity", "Person", "Polite",
})


def _pct(correct: int, total: int) -> float:
    """``100 * correct / total`` (0.0 for an empty total, as the official script does)."""
    return 100.0 * (correct / total) if total else 0.0


def _where(s: Sentence, m: int | None = None) -> str:
    """``path:line`` of a sentence (or of its word ``m``)."""
    line = s.line_no if m is None else int(s.word_line_nos[m])
    sid = f" (sent_id {s.sent_id})" if s.sent_id is not None and m is None else ""
    return f"{s.source}:{line}{sid}"


def _gold_system_names(gold: list[Sentence], system: list[Sentence]) -> str:
    g = gold[0].source if gold else "<no sentences>"
    s = system[0].source if system else "<no sentences>"
    return f"gold file {g} and system file {s}"


def check_tokenization(gold: Iterable[Sentence], system: Iterable[Sentence]) -> None:
    """Check that two parsed files have identical tokenization.

    Parameters
    ----------
    gold, system : iterable of Sentence
        The two files' sentences, in order.

    Raises
    ------
    EvaluationError
        Naming both files and the first difference: the first sentence whose number of
        syntactic words differs, or the first word whose FORM differs (with ``path:line`` in
        both files), or, when all common sentences agree, the different sentence counts and
        the first sentence without a counterpart.
    """
    gold = list(gold)
    system = list(system)
    names = _gold_system_names(gold, system)
    for i, (g, s) in enumerate(zip(gold, system, strict=False)):
        if g.n != s.n:
            raise EvaluationError(
                f"tokenization differs between {names}: sentence {i + 1} has {g.n} words in "
                f"gold ({_where(g)}) but {s.n} in system ({_where(s)}); identical tokenization "
                "is required"
            )
        gf = g.forms
        sf = s.forms
        for m in range(1, g.n + 1):
            if gf[m] != sf[m]:
                raise EvaluationError(
                    f"tokenization differs between {names}: sentence {i + 1}, word {m}: gold "
                    f"FORM {gf[m]!r} ({_where(g, m)}) but system FORM {sf[m]!r} "
                    f"({_where(s, m)}); identical tokenization is required"
                )
    if len(gold) != len(system):
        k = min(len(gold), len(system))
        extra = gold[k] if len(gold) > k else system[k]
        side = "gold" if len(gold) > k else "system"
        raise EvaluationError(
            f"tokenization differs between {names}: gold has {len(gold)} sentences, system has "
            f"{len(system)}; the first sentence without a counterpart is {side} sentence "
            f"{k + 1} ({_where(extra)})"
        )


def _universal(rels: Iterable[str]) -> list[str]:
    """Universal part of each DEPREL (before the first ``:``)."""
    return [r.split(":", 1)[0] for r in rels]


def _ufeats(feats: str) -> str:
    """The universal features of a FEATS value, sorted (what UFeats compares)."""
    if not feats:
        return ""
    return "|".join(sorted(f for f in feats.split("|")
                           if f.split("=", 1)[0] in UNIVERSAL_FEATURES))


class _Columns:
    """The scored columns of all words of a file, concatenated, as object arrays; ``parent``
    is the file-wide index of each word's head word (-2: the root, -3: HEAD ``_``)."""

    def __init__(self, sentences: list[Sentence], offsets: list[int]) -> None:
        def cat(name: str) -> np.ndarray:
            out = np.empty(sum(s.n for s in sentences), dtype=object)
            if out.size:
                out[:] = [x for s in sentences for x in getattr(s, name)[1:].tolist()]
            return out

        self.upos = cat("upos")
        self.xpos = cat("xpos")
        self.lemma = cat("lemmas")
        self.ufeats = np.array([_ufeats(f) for f in cat("feats")], dtype=object)
        self.deprel = np.array(_universal(cat("rels")), dtype=object)
        parts = [np.zeros(0, dtype=np.int64)]
        for s, off in zip(sentences, offsets, strict=True):
            h = np.asarray(s.heads)[1:]
            parts.append(np.where(h > 0, off + h - 1, np.where(h == 0, -2, -3)))
        self.parent = np.concatenate(parts).astype(np.int64)


def _same_tokenization(g: Tokenized, s: Tokenized) -> bool:
    return (g.chars == s.chars and g.tok_start == s.tok_start and g.tok_end == s.tok_end
            and g.sent_start == s.sent_start and g.sent_end == s.sent_end
            and g.w_start == s.w_start and g.w_multi == s.w_multi and g.w_lower == s.w_lower)


def _missing_sentences(gold: list[Sentence], system: list[Sentence]) -> None:
    """Raise a clear error when the system file is the gold file with whole sentences left
    out (or added): which ones, by number, id and line."""
    def text(s):
        return "".join("".join(f.split()) for f in s.forms[1:])

    g, s = [text(x) for x in gold], [text(x) for x in system]
    ops = difflib.SequenceMatcher(None, g, s, autojunk=False).get_opcodes()
    changes = [op for op in ops if op[0] != "equal"]
    if not changes or len({op[0] for op in changes}) > 1 or changes[0][0] == "replace":
        return  # not only sentences left out, or only added: the texts' difference is named
    tag, i1, _, j1, _ = changes[0]
    if tag == "delete":
        x, what = gold[i1], f"lacks gold sentence {i1 + 1}"
    else:
        x, what = system[j1], f"has an extra sentence (its sentence {j1 + 1})"
    sid = f", sent_id {x.sent_id}" if x.sent_id else ""
    more = sum(max(b - a, d - c) for _, a, b, c, d in changes) - 1
    raise EvaluationError(
        f"{_gold_system_names(gold, system)}: the system file {what} ({x.source}:{x.line_no}"
        f"{sid}){f' and differs in {more} more' if more else ''}; evaluation needs the same "
        "sentences in both files")


def evaluate(gold_sentences: Iterable[Sentence], system_sentences: Iterable[Sentence]) -> Scores:
    """Score a system file against a gold file (all CoNLL 2018 metrics).

    Parameters
    ----------
    gold_sentences : iterable of Sentence
        The gold file's sentences; every word must have a HEAD (not ``_``).
    system_sentences : iterable of Sentence
        The system file's sentences: the gold tokenization, or any tokenization of the same
        text (whitespace aside), e.g. the output of a parse of raw text.

    Returns
    -------
    Scores
        With the gold tokenization the attachment scores are accuracies as before and
        Tokens/Sentences/Words are 100; otherwise every metric is the official F1.

    Raises
    ------
    EvaluationError
        If the texts of the files differ (the message names the first difference in both
        files; for files with the same number of sentences and words the message of
        :func:`check_tokenization`), or if a gold word has no HEAD.

    Notes
    -----
    A system word with HEAD ``_`` (``heads[m] == -1``) counts as wrong.  See the module
    docstring for the definitions and :mod:`depparse.evaluate.align` for the alignment.

    References
    ----------
    Zeman et al. (2018), CoNLL 2018 shared task, Sec. 2.5 (evaluation metrics).
    """
    gold = list(gold_sentences)
    system = list(system_sentences)
    gtok, stok = Tokenized(gold), Tokenized(system)
    diff = first_difference(gtok, stok)
    if diff is not None:
        if len(gold) == len(system) and all(a.n == b.n for a, b in zip(gold, system, strict=True)):
            check_tokenization(gold, system)
        _missing_sentences(gold, system)
        raise EvaluationError(
            f"the texts of {_gold_system_names(gold, system)} differ {diff}; evaluation aligns "
            "system words to gold words through the text, so the system file must hold the "
            "gold text (whitespace aside)")
    for g in gold:
        missing = np.flatnonzero(np.asarray(g.heads)[1:] < 0)
        if missing.size:
            m = int(missing[0]) + 1
            raise EvaluationError(
                f"gold file {g.source} has no HEAD for word {m} ({_where(g, m)}); "
                "gold trees are required for evaluation"
            )
    same = _same_tokenization(gtok, stok)
    if same:
        ga = sa = np.arange(gtok.n_words, dtype=np.int64)
    else:
        pairs = np.array(align_words(gtok, stok), dtype=np.int64).reshape(-1, 2)
        ga, sa = pairs[:, 0], pairs[:, 1]
    gc, sc = _Columns(gold, gtok.offsets), _Columns(system, stok.offsets)
    sys2gold = np.full(stok.n_words, -1, dtype=np.int64)
    sys2gold[sa] = ga
    sp = sc.parent[sa]
    mapped = np.where(sp >= 0, sys2gold[np.maximum(sp, 0)], sp)
    head_ok = gc.parent[ga] == mapped
    label_ok = head_ok & (gc.deprel[ga] == sc.deprel[sa])
    upos_ok = gc.upos[ga] == sc.upos[sa]
    xpos_ok = gc.xpos[ga] == sc.xpos[sa]
    feats_ok = gc.ufeats[ga] == sc.ufeats[sa]
    lemma_ok = (gc.lemma[ga] == "_") | (gc.lemma[ga] == sc.lemma[sa])
    g_words, s_words, n_al = gtok.n_words, stok.n_words, int(ga.size)

    def word_metric(ok: np.ndarray) -> Metric:
        return Metric(g_words, s_words, int(np.count_nonzero(ok)), n_al)

    tokens = spans_correct(gtok.tok_start, gtok.tok_end, stok.tok_start, stok.tok_end)
    sents = spans_correct(gtok.sent_start, gtok.sent_end, stok.sent_start, stok.sent_end)
    metrics = {
        "Tokens": Metric(len(gtok.tok_start), len(stok.tok_start), tokens, tokens),
        "Sentences": Metric(len(gtok.sent_start), len(stok.sent_start), sents, sents),
        "Words": Metric(g_words, s_words, n_al, n_al),
        "UPOS": word_metric(upos_ok),
        "XPOS": word_metric(xpos_ok),
        "UFeats": word_metric(feats_ok),
        "AllTags": word_metric(upos_ok & xpos_ok & feats_ok),
        "Lemmas": word_metric(lemma_ok),
        "UAS": word_metric(head_ok),
        "LAS": word_metric(label_ok),
    }
    gold_punct = np.asarray(gc.upos == PUNCT, dtype=bool)
    aligned_punct = gold_punct[ga]
    unaligned = np.ones(s_words, dtype=bool)
    unaligned[sa] = False
    sys_punct = np.asarray(sc.upos == PUNCT, dtype=bool)
    nopunct_system = int(np.count_nonzero(~aligned_punct)
                         + np.count_nonzero(unaligned & ~sys_punct))
    return Scores.from_metrics(
        metrics,
        sentences=len(gold),
        punct_words=int(np.count_nonzero(gold_punct)),
        nopunct_system=nopunct_system,
        uas_nopunct_correct=int(np.count_nonzero(head_ok & ~aligned_punct)),
        las_nopunct_correct=int(np.count_nonzero(label_ok & ~aligned_punct)),
        same_tokenization=same,
    )


def evaluate_files(gold_path: str | PathLike[str], system_path: str | PathLike[str]) -> Scores:
    """Read two CoNLL-U files and score the second against the first.

    Parameters
    ----------
    gold_path, system_path : str or os.PathLike
        Gold and system CoNLL-U files.

    Returns
    -------
    Scores

    Raises
    ------
    EvaluationError
        As :func:`evaluate`, or if the gold file holds no sentence.
    depparse.conllu.ConlluError
        If a file is malformed.
    OSError
        If a file cannot be read.
    """
    gold = read_conllu(gold_path)
    if not gold:
        raise EvaluationError(f"gold file {gold_path} holds no sentence")
    return evaluate(gold, read_conllu(system_path))


def certificate_rate(report_dict: Mapping[str, Any]) -> float:
    """Percentage of sentences of a parse report whose tree has a certificate.

    Parameters
    ----------
    report_dict : dict
        A parse report (``"format": "depparse-report"``, see :mod:`depparse.report`).

    Returns
    -------
    float
        ``100 * certified / sentences`` over ``report_dict["sentences"]`` (0.0 for a report
        without sentences).  A certificate means dual decomposition proved the tree to be the
        exact argmax of the full model (Koo et al. 2010, Theorem 1; Table 1 "%Cert").

    Raises
    ------
    ReportError
        If ``report_dict`` is not a valid report (see :func:`depparse.report.validate_report`).
    """
    validate_report(report_dict)
    sentences = report_dict["sentences"]
    certified = sum(1 for s in sentences if s["certificate"])
    return _pct(certified, len(sentences))
