"""Attachment scores (CoNLL 2018 shared-task definition) and certificate statistics.

Definitions (Zeman et al. 2018, the CoNLL 2018 UD shared task, and its evaluation script
``conll18_ud_eval.py``, whose UAS/LAS code survives unchanged in the ``udeval`` module of the
UD ``udtools`` package):

* the scored units are the **syntactic words**: lines with an integer ID.  Multiword-token
  range lines (``1-2``) and empty nodes (``8.1``) are not words and are never scored;
* **UAS** is the percentage of words whose HEAD is correct.  The official script aligns the
  system words to the gold words and calls a head correct when the system head word is aligned
  to the gold head word; with identical tokenization (required here) the alignment is the
  identity, so this is ``system.heads[m] == gold.heads[m]``;
* **LAS** also requires the DEPREL to match, comparing only the *universal* part of the
  relation, i.e. the part before the first ``:`` (``nmod:poss`` and ``nmod`` match);
* punctuation is **included** in UAS/LAS.  The "no punct" variants, for comparing with older
  papers, leave out the words whose *gold* UPOS is ``PUNCT``.

The official script reports each metric as an F1 score ``2c / (g + s)`` over gold and system
word counts; with identical tokenization ``g == s`` and this equals the accuracy ``c / g``,
bit for bit.  Unlike the official script, :func:`evaluate` does not reject system parses that
are not trees (cycles, several root words, ``_`` heads): such words simply count as wrong.

Certificates (Koo et al. 2010, Sec. 7.5 and Table 1): :func:`certificate_rate` gives the
percentage of sentences of a parse report whose tree carries a certificate of optimality.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from os import PathLike
from typing import Any

import numpy as np

from .conllu import Sentence, read_conllu
from .errors import EvaluationError
from .report.schema import validate_report

__all__ = [
    "PUNCT",
    "Scores",
    "certificate_rate",
    "check_tokenization",
    "evaluate",
    "evaluate_files",
]

#: The UPOS tag left out by the "no punct" scores.
PUNCT = "PUNCT"


def _pct(correct: int, total: int) -> float:
    """``100 * correct / total`` (0.0 for an empty total, as the official script does)."""
    return 100.0 * (correct / total) if total else 0.0


@dataclass(frozen=True)
class Scores:
    """Attachment scores of a system file against a gold file.

    Attributes
    ----------
    sentences : int
        Number of sentences.
    words : int
        Number of syntactic words (multiword-token ranges and empty nodes excluded).
    uas, las : float
        Unlabeled / labeled attachment score in percent, punctuation included (CoNLL 2018).
    uas_nopunct, las_nopunct : float
        The same over the words whose gold UPOS is not ``PUNCT``.
    punct_words : int
        Words whose gold UPOS is ``PUNCT``.
    uas_correct, las_correct : int
        Correctly attached (and labeled) words.
    uas_nopunct_correct, las_nopunct_correct : int
        The same among the non-punctuation words.

    Notes
    -----
    Percentages are ``100 * (correct / total)``, computed exactly as the official script's
    ``100 * f1`` when gold and system tokenization agree; 0.0 when the total is 0.
    """

    sentences: int
    words: int
    uas: float
    las: float
    uas_nopunct: float
    las_nopunct: float
    punct_words: int
    uas_correct: int
    las_correct: int
    uas_nopunct_correct: int
    las_nopunct_correct: int

    @classmethod
    def from_counts(
        cls,
        *,
        sentences: int,
        words: int,
        punct_words: int,
        uas_correct: int,
        las_correct: int,
        uas_nopunct_correct: int,
        las_nopunct_correct: int,
    ) -> Scores:
        """Build scores from counts (the percentages are derived).

        Parameters
        ----------
        sentences, words, punct_words : int
            Totals.
        uas_correct, las_correct, uas_nopunct_correct, las_nopunct_correct : int
            Correct counts.

        Returns
        -------
        Scores
        """
        nopunct = words - punct_words
        return cls(
            sentences=sentences,
            words=words,
            uas=_pct(uas_correct, words),
            las=_pct(las_correct, words),
            uas_nopunct=_pct(uas_nopunct_correct, nopunct),
            las_nopunct=_pct(las_nopunct_correct, nopunct),
            punct_words=punct_words,
            uas_correct=uas_correct,
            las_correct=las_correct,
            uas_nopunct_correct=uas_nopunct_correct,
            las_nopunct_correct=las_nopunct_correct,
        )

    @property
    def nopunct_words(self) -> int:
        """Words whose gold UPOS is not ``PUNCT``."""
        return self.words - self.punct_words

    def as_dict(self) -> dict[str, Any]:
        """Return the fields as a plain (JSON-serialisable) dict.

        Returns
        -------
        dict
        """
        return asdict(self)

    def format(self) -> str:
        """Return a small human-readable table of the scores.

        Returns
        -------
        str
            One line per metric: name, percentage (2 decimals, as the official script
            prints it) and ``correct/total``.
        """
        rows = [
            ("UAS", self.uas, self.uas_correct, self.words),
            ("LAS", self.las, self.las_correct, self.words),
            ("UAS (no punct)", self.uas_nopunct, self.uas_nopunct_correct, self.nopunct_words),
            ("LAS (no punct)", self.las_nopunct, self.las_nopunct_correct, self.nopunct_words),
        ]
        lines = [f"{self.sentences} sentences, {self.words} words ({self.punct_words} PUNCT)"]
        lines += [f"{name:<15} {pct:6.2f}  ({c}/{t})" for name, pct, c, t in rows]
        return "\n".join(lines)


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


def _universal(rels: np.ndarray) -> list[str]:
    """Universal part of each DEPREL (before the first ``:``)."""
    return [r.split(":", 1)[0] for r in rels.tolist()]


def evaluate(gold_sentences: Iterable[Sentence], system_sentences: Iterable[Sentence]) -> Scores:
    """Score a system parse against gold trees (CoNLL 2018 UAS/LAS).

    Parameters
    ----------
    gold_sentences : iterable of Sentence
        The gold file's sentences; every word must have a HEAD (not ``_``).
    system_sentences : iterable of Sentence
        The system file's sentences, with the same tokenization.

    Returns
    -------
    Scores

    Raises
    ------
    EvaluationError
        If the tokenization differs (see :func:`check_tokenization`), or if a gold word has
        no HEAD.

    Notes
    -----
    A system word with HEAD ``_`` (``heads[m] == -1``) counts as wrong.  See the module
    docstring for the definitions and their agreement with ``conll18_ud_eval.py``.
    """
    gold = list(gold_sentences)
    system = list(system_sentences)
    check_tokenization(gold, system)
    words = punct = uas = las = uas_np = las_np = 0
    for g, s in zip(gold, system, strict=True):
        gh = np.asarray(g.heads)[1:]
        missing = np.flatnonzero(gh < 0)
        if missing.size:
            m = int(missing[0]) + 1
            raise EvaluationError(
                f"gold file {g.source} has no HEAD for word {m} ({_where(g, m)}); "
                "gold trees are required for evaluation"
            )
        head_ok = gh == np.asarray(s.heads)[1:]
        rel_ok = np.array(
            [a == b for a, b in zip(_universal(g.rels[1:]), _universal(s.rels[1:]), strict=True)],
            dtype=bool,
        )
        label_ok = head_ok & rel_ok
        is_punct = np.asarray(g.upos[1:] == PUNCT, dtype=bool)
        words += g.n
        punct += int(is_punct.sum())
        uas += int(head_ok.sum())
        las += int(label_ok.sum())
        uas_np += int((head_ok & ~is_punct).sum())
        las_np += int((label_ok & ~is_punct).sum())
    return Scores.from_counts(
        sentences=len(gold),
        words=words,
        punct_words=punct,
        uas_correct=uas,
        las_correct=las,
        uas_nopunct_correct=uas_np,
        las_nopunct_correct=las_np,
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
