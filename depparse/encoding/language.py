"""Character trigram profiles of a language: does a text look like a model's training data?

A model parses well only the language of its treebank: German text through the English model
is mis-tokenised (``im`` split as in "I'm") and tagged ``X``, with no error anywhere.  A
*profile* is the character trigram statistics of a model's training treebank, kept in a small
JSON file beside the model (``en_ewt_gs.chars.json`` beside ``en_ewt_gs.npz``; written by
``benchmarks/language_profiles.py`` from the treebank, so a shipped model needs no rebuild).
:func:`bits_per_trigram` scores a text against it: the mean ``-log2 P(trigram)`` of the text's
character trigrams under the profile's unigram-of-trigrams model (naive Bayes over character
n-grams, the classic language-identification statistic: Cavnar and Trenkle 1994; Dunning 1994).
:func:`excess` subtracts what the model's own held-out text scores (``held_out_bits``, its
dev file, stored in the profile), so that one threshold serves every language: a text of the
model's language scores near 0, another language several bits more per trigram.  The
threshold and the sample size are measured, not chosen: ``benchmarks/results/
language_check.md`` and :mod:`depparse.catalog` (:data:`~depparse.catalog.LANGUAGE_EXCESS`).

Text is read as :func:`sentence_text` gives it (``# text``, else the tokens' forms with
spaces), whitespace runs as one space, digits as ``0`` and web addresses and e-mail addresses
left out (they say nothing of the language: an English e-mail full of them scored as far
from English as Italian does), case kept (German capitalises its nouns); each sentence
padded with a space at both ends.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..conllu import tokens_with_misc

__all__ = ["FORMAT", "ORDER", "TOP", "Profile", "bits_per_trigram", "excess", "known_share",
           "profile_path", "sentence_text", "trigrams"]

#: The ``format`` of a profile file.
FORMAT = "depparse-chars"
VERSION = 1
#: The n of the character n-grams.
ORDER = 3
#: The trigrams a profile keeps, the most frequent first (the rest are counted as a mass:
#: ``rest``, ``rest_types``); 5,000 keeps a profile near 100 KB of JSON.
TOP = 5000
_SPACES = re.compile(r"\s+")
_DIGITS = re.compile(r"\d")


def sentence_text(sentence) -> str:
    """The text of a sentence as the profiles read it: its ``# text``, else its tokens' forms
    (a multiword token's surface form, not its words) joined by spaces."""
    text = sentence.text
    if not text:
        text = " ".join(form for form, _, _ in tokens_with_misc(sentence))
    return text


def _language_neutral(word: str) -> bool:
    return "://" in word or "@" in word or word.lower().startswith("www.")


def trigrams(text: str) -> list[str]:
    """The character trigrams of one sentence's text (normalised as the module says)."""
    words = [w for w in _SPACES.split(text) if w and not _language_neutral(w)]
    if not words:
        return []
    t = " " + _DIGITS.sub("0", " ".join(words)) + " "
    return [t[i:i + ORDER] for i in range(len(t) - ORDER + 1)]


def profile_path(model_path) -> Path:
    """The profile file of a model file: beside it, ``<stem>.chars.json``."""
    p = Path(model_path)
    return p.with_name(p.stem + ".chars.json")


@dataclass(frozen=True)
class Profile:
    """The character trigram statistics of a treebank (see the module docstring).

    Attributes
    ----------
    grams : dict
        The :data:`TOP` most frequent trigrams -> their counts.
    total : int
        Trigram tokens counted.
    rest, rest_types : int
        Tokens and distinct trigrams outside ``grams``.
    held_out_bits : float or None
        :func:`bits_per_trigram` of the model's own held-out text (its dev file), the level
        :func:`excess` measures from.
    source, held_out : str
        The files counted and scored.
    """

    grams: dict
    total: int
    rest: int
    rest_types: int
    held_out_bits: float | None = None
    source: str = ""
    held_out: str = ""

    @classmethod
    def count(cls, texts, source="", top=TOP) -> Profile:
        """The profile of an iterable of sentence texts."""
        c: Counter = Counter()
        for t in texts:
            c.update(trigrams(t))
        kept = dict(c.most_common(top))
        total = sum(c.values())
        return cls(kept, total, total - sum(kept.values()), len(c) - len(kept), None, source)

    def _unstored(self) -> float:
        # a trigram the profile does not keep is one of the rest's types or one never seen:
        # each gets half the rest's mean probability (one count where the rest is empty)
        return max(self.rest, 1) / (self.total * 2.0 * max(self.rest_types, 1))

    def bits(self, grams) -> float:
        """Mean ``-log2 P`` of trigrams under the profile (``nan`` for none)."""
        if not grams:
            return math.nan
        floor = -math.log2(self._unstored())
        logn = math.log2(self.total)
        total = 0.0
        for g in grams:
            c = self.grams.get(g)
            total += floor if c is None else logn - math.log2(c)
        return total / len(grams)

    def known(self, grams) -> float:
        """The share of ``grams`` the profile keeps (``nan`` for none)."""
        if not grams:
            return math.nan
        return sum(g in self.grams for g in grams) / len(grams)

    def to_json(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "order": ORDER, "source": self.source,
                "held_out": self.held_out, "held_out_bits": self.held_out_bits,
                "total": self.total, "rest": self.rest, "rest_types": self.rest_types,
                "grams": self.grams}

    def save(self, path) -> None:
        from ..atomic import atomic_output

        with atomic_output(path, "w", encoding="utf-8") as f:
            json.dump(self.to_json(), f, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def load(cls, path) -> Profile:
        """Read a profile file (``ValueError`` if it is not one)."""
        d = json.loads(Path(path).read_text(encoding="utf-8"))
        if d.get("format") != FORMAT or d.get("version") != VERSION or d.get("order") != ORDER:
            raise ValueError(f"{path}: not a depparse character profile (format {FORMAT} "
                             f"version {VERSION})")
        return cls(dict(d["grams"]), int(d["total"]), int(d["rest"]), int(d["rest_types"]),
                   d.get("held_out_bits"), d.get("source", ""), d.get("held_out", ""))


def bits_per_trigram(profile: Profile, texts) -> float:
    """Mean ``-log2 P(trigram)`` of the texts (one string per sentence) under ``profile``."""
    grams = [g for t in texts for g in trigrams(t)]
    return profile.bits(grams)


def known_share(profile: Profile, texts) -> float:
    """The share of the texts' trigrams that ``profile`` keeps (``nan`` for none): a profile
    of another script knows few of them, whatever its :func:`excess` (Korean's, of a
    high-entropy script, scores Latin text evenly)."""
    return profile.known([g for t in texts for g in trigrams(t)])


def excess(profile: Profile, texts) -> float:
    """:func:`bits_per_trigram` above the profile's own held-out level (``held_out_bits``):
    near 0 for the model's language, more for others."""
    return bits_per_trigram(profile, texts) - (profile.held_out_bits or 0.0)
