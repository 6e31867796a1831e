"""Score containers of :mod:`depparse.evaluate`: one :class:`Metric` per CoNLL 2018 metric and
the :class:`Scores` of a system file.

Every metric is, as in the official CoNLL 2018 script (Zeman et al. 2018), an F1 score
``2c / (g + s)`` over the gold and system totals ``g`` and ``s`` and the ``c`` correct
units; precision ``c / s``, recall ``c / g``.  With identical tokenization ``g == s`` and F1
equals the accuracy ``c / g``, bit for bit (``2c`` and ``2g`` are exact).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["METRICS", "Metric", "Scores"]

#: The metrics of :class:`Scores` in the order they are printed (CoNLL 2018 names).
METRICS = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas",
           "UAS", "LAS")


def _pct(correct: int, total: int) -> float:
    """``100 * correct / total`` (0.0 for an empty total, as the official script does)."""
    return 100.0 * (correct / total) if total else 0.0


@dataclass(frozen=True)
class Metric:
    """Counts of one metric.

    Attributes
    ----------
    gold, system : int
        Units in the gold and in the system file.
    correct : int
        Correct system units.
    aligned : int
        Gold words aligned to a system word (the denominator of the official "aligned
        accuracy"); for the span metrics Tokens and Sentences, the matched spans.
    """

    gold: int
    system: int
    correct: int
    aligned: int

    @property
    def f1(self) -> float:
        """F1 in percent: ``100 * 2c / (g + s)`` (0.0 when both totals are 0)."""
        total = self.gold + self.system
        return 100.0 * (2 * self.correct / total) if total else 0.0

    @property
    def precision(self) -> float:
        """``100 * c / s``."""
        return _pct(self.correct, self.system)

    @property
    def recall(self) -> float:
        """``100 * c / g``."""
        return _pct(self.correct, self.gold)


@dataclass(frozen=True)
class Scores:
    """Scores of a system file against a gold file.

    Attributes
    ----------
    sentences : int
        Number of gold sentences.
    words : int
        Number of gold syntactic words (multiword-token ranges and empty nodes excluded).
    uas, las : float
        Unlabeled / labeled attachment score in percent, punctuation included (CoNLL 2018 F1;
        the accuracy when the tokenization is the gold one).
    uas_nopunct, las_nopunct : float
        The same over the words whose gold UPOS is not ``PUNCT`` (see
        :func:`depparse.evaluate.evaluate` for the system total when tokenizations differ).
    punct_words : int
        Gold words whose UPOS is ``PUNCT``.
    uas_correct, las_correct : int
        Correctly attached (and labeled) words.
    uas_nopunct_correct, las_nopunct_correct : int
        The same among the non-punctuation words.
    tokens, sentences_f1, words_f1 : float or None
        Tokens, Sentences and Words F1 (100.0 each with the gold tokenization).
    upos, xpos, ufeats, alltags, lemmas : float or None
        The tagging metrics (F1; the accuracy with gold tokenization).  ``UFeats`` compares
        only the universal features, as the official script does.
    counts : dict
        ``{metric: {"gold", "system", "correct", "aligned"}}`` for every name of
        :data:`METRICS` (plain ints, JSON-serialisable).
    same_tokenization : bool or None
        True when both files have the same sentences and words (the alignment is the
        identity), False when they were aligned through the text.

    Notes
    -----
    The fields after ``las_nopunct_correct`` are None for scores built by
    :meth:`from_counts` alone.  Percentages are ``100 * (correct / total)``, computed exactly
    as the official script's ``100 * f1`` when the tokenizations agree.
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
    tokens: float | None = None
    sentences_f1: float | None = None
    words_f1: float | None = None
    upos: float | None = None
    xpos: float | None = None
    ufeats: float | None = None
    alltags: float | None = None
    lemmas: float | None = None
    counts: dict = field(default_factory=dict)
    same_tokenization: bool | None = None
    nopunct_system: int | None = None

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
        """Build attachment scores from counts with the gold tokenization (percentages are
        derived; the other metrics stay None).

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

    @classmethod
    def from_metrics(cls, metrics: dict[str, Metric], *, sentences: int, punct_words: int,
                     nopunct_system: int, uas_nopunct_correct: int, las_nopunct_correct: int,
                     same_tokenization: bool) -> Scores:
        """Build scores from one :class:`Metric` per name of :data:`METRICS`.

        Parameters
        ----------
        metrics : dict of str to Metric
            All of :data:`METRICS`.
        sentences, punct_words : int
            Gold sentences and gold ``PUNCT`` words.
        nopunct_system : int
            The system total of the "no punct" scores.
        uas_nopunct_correct, las_nopunct_correct : int
            Correct non-punctuation words.
        same_tokenization : bool
            Whether the alignment was the identity.

        Returns
        -------
        Scores
        """
        words = metrics["Words"].gold
        nopunct = words - punct_words

        def f1(c: int) -> float:
            total = nopunct + nopunct_system
            return 100.0 * (2 * c / total) if total else 0.0

        return cls(
            sentences=sentences,
            words=words,
            uas=metrics["UAS"].f1,
            las=metrics["LAS"].f1,
            uas_nopunct=f1(uas_nopunct_correct),
            las_nopunct=f1(las_nopunct_correct),
            punct_words=punct_words,
            uas_correct=metrics["UAS"].correct,
            las_correct=metrics["LAS"].correct,
            uas_nopunct_correct=uas_nopunct_correct,
            las_nopunct_correct=las_nopunct_correct,
            tokens=metrics["Tokens"].f1,
            sentences_f1=metrics["Sentences"].f1,
            words_f1=metrics["Words"].f1,
            upos=metrics["UPOS"].f1,
            xpos=metrics["XPOS"].f1,
            ufeats=metrics["UFeats"].f1,
            alltags=metrics["AllTags"].f1,
            lemmas=metrics["Lemmas"].f1,
            counts={k: asdict(metrics[k]) for k in METRICS},
            same_tokenization=same_tokenization,
            nopunct_system=nopunct_system,
        )

    @property
    def nopunct_words(self) -> int:
        """Gold words whose UPOS is not ``PUNCT``."""
        return self.words - self.punct_words

    def metric(self, name: str) -> Metric:
        """The counts of metric ``name`` (one of :data:`METRICS`) as a :class:`Metric`.

        Raises
        ------
        KeyError
            For scores built by :meth:`from_counts` (no counts) or an unknown name.
        """
        return Metric(**self.counts[name])

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
            A header line, then one line per metric: name, percentage (2 decimals, as the
            official script prints it) and ``correct/total`` (with different gold and
            system totals: F1, precision, recall and the three counts).  Tokens, Sentences
            and Words are shown only when the tokenization differs from the gold one.
        """
        lines = [f"{self.sentences} sentences, {self.words} words ({self.punct_words} PUNCT)"]
        if self.counts:
            # UAS and LAS come below, with their no-punctuation twins (once each)
            names = METRICS[:8] if not self.same_tokenization else METRICS[3:8]
            for name in names:
                lines.append(_metric_line(name, self.metric(name)))
        nps = self.nopunct_words if self.nopunct_system is None else self.nopunct_system
        rows = [
            ("UAS", self.uas_correct, self.words, self.counts.get("UAS", {}).get("system")),
            ("LAS", self.las_correct, self.words, self.counts.get("LAS", {}).get("system")),
            ("UAS (no punct)", self.uas_nopunct_correct, self.nopunct_words, nps),
            ("LAS (no punct)", self.las_nopunct_correct, self.nopunct_words, nps),
        ]
        for name, c, g, s in rows:
            lines.append(_metric_line(name, Metric(g, g if s is None else s, c, g)))
        return "\n".join(lines)


def _metric_line(name: str, m: Metric) -> str:
    if m.gold == m.system:
        return f"{name:<15} {m.f1:6.2f}  ({m.correct}/{m.gold})"
    return (f"{name:<15} {m.f1:6.2f}  (P {m.precision:.2f}, R {m.recall:.2f}; {m.correct} "
            f"correct, {m.gold} gold, {m.system} system)")
