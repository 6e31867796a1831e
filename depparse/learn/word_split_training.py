"""Training the tokenizer's word splitter (:mod:`depparse.features.word_splits`).

Every token of the training file teaches it: a plain token, that no word ends inside it; a
multiword token whose words spell it (case aside), that words end after each of its words but
the last.  A multiword token whose words do not spell it (Portuguese ``do`` = ``de o``) is left
to the dictionary (:func:`depparse.learn.tokenizer_training.mwt_dictionary`), and so is every
token the dictionary holds: the splitter is asked only about the others.  It is an averaged
perceptron (as the tokenizer's other classifiers), kept only where it splits held-out tokens
that the dictionary does not know better than leaving them whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numba as nb
import numpy as np

from ..conllu import Sentence, tokens_with_misc
from ..features.word_splits import N_SPLIT_FEATURES, split_features, split_words, token_codes

__all__ = ["split_examples", "split_score", "train_word_splitter"]


def split_examples(sentences: Sequence[Sentence]) -> tuple[list[str], list[list[str]]]:
    """The tokens the splitter learns from, and their words: every plain token (one word)
    and every multiword token whose words, concatenated, spell it (case aside)."""
    forms: list[str] = []
    words: list[list[str]] = []
    for s in sentences:
        for form, _, ws in tokens_with_misc(s):
            if not ws:
                forms.append(form)
                words.append([form])
            elif len(ws) > 1 and "".join(ws).lower() == form.lower() and all(ws):
                forms.append(form)
                words.append([form[a:a + len(w)] for a, w in zip(
                    np.cumsum([0] + [len(w) for w in ws[:-1]]).tolist(), ws, strict=True)])
    return forms, words


def _gold(forms: list[str], words: list[list[str]], codes_len: int) -> np.ndarray:
    gold = np.zeros(codes_len, dtype=np.bool_)
    a = 0
    for f, ws in zip(forms, words, strict=True):
        e = a
        for w in ws[:-1]:
            e += len(w)
            gold[e - 1] = True
        a += len(f)
    return gold


@nb.njit(cache=True)
def _epoch(codes, starts, gold, order, w, u, t, bits):
    """One perceptron pass over the tokens ``order``; returns (steps, errors)."""
    buf = np.empty(N_SPLIT_FEATURES, dtype=np.int64)
    mask = (1 << bits) - 1
    errors = 0
    for idx in range(order.shape[0]):
        tok = order[idx]
        a = starts[tok]
        b = starts[tok + 1]
        for i in range(a, b - 1):
            k = split_features(codes, a, b, i, buf, mask)
            s = 0.0
            for f in range(k):
                s += w[buf[f]]
            t += 1
            if (s > 0.0) != gold[i]:
                errors += 1
                g = 1.0 if gold[i] else -1.0
                for f in range(k):
                    w[buf[f]] += g
                    u[buf[f]] += g * t
    return t, errors


def _fit(forms, words, epochs: int, bits: int, seed: int) -> np.ndarray:
    codes, starts = token_codes(forms)
    gold = _gold(forms, words, codes.shape[0])
    w = np.zeros(1 << bits, dtype=np.float64)
    u = np.zeros_like(w)
    rng = np.random.default_rng(seed)
    t = 0
    for _ in range(epochs):
        t, _errors = _epoch(codes, starts, gold, rng.permutation(len(forms)).astype(np.int64),
                            w, u, t, bits)
    w -= u / max(t, 1)
    m = max(float(np.abs(w).max(initial=0.0)), 1e-30)
    return (w / m).astype(np.float16).astype(np.float32)  # as stored


def split_score(weights: np.ndarray | None, forms: list[str], words: list[list[str]],
                known: dict) -> tuple[int, int, int]:
    """On tokens the dictionary ``known`` does not hold: ``(tokens, right with the splitter,
    right left whole)``, a token right when all its words are."""
    pairs = [(f, ws) for f, ws in zip(forms, words, strict=True) if f.lower() not in known]
    if not pairs:
        return 0, 0, 0
    whole = sum(len(ws) == 1 for _, ws in pairs)
    if weights is None:
        return len(pairs), whole, whole
    got = split_words(weights, [f for f, _ in pairs])
    right = sum(g == ws for g, (_, ws) in zip(got, pairs, strict=True))
    return len(pairs), right, whole


def train_word_splitter(sentences: Sequence[Sentence], dev: Sequence[Sentence] | None,
                        dictionary: Callable[[Sequence[Sentence]], dict], *, bits: int = 18,
                        epochs: int = 5, seed: int = 0,
                        verbose: bool = False) -> tuple[np.ndarray | None, dict]:
    """The splitter's weights ``(2**bits,)`` (scaled to max 1, float16 values), or None where
    it does not split held-out tokens better than leaving them whole, and the held-out
    counts: ``{"tokens", "right", "right_whole", "on"}``.

    Held-out: ``dev`` where given, else every tenth training sentence (the kept weights are
    then trained again on all).  ``dictionary``: the multiword-token dictionary of sentences
    (:func:`depparse.learn.tokenizer_training.mwt_dictionary`), which decides the tokens it
    holds: the training sentences' one, without the held-out ones where they come from
    training.  None too where no training token splits into spelled words."""
    forms, words = split_examples(sentences)
    if not any(len(ws) > 1 for ws in words):
        return None, {}
    if dev:
        held_forms, held_words = split_examples(dev)
        train_forms, train_words = forms, words
        known = dictionary(sentences)
        on = "dev"
    else:
        fit_sents = [s for j, s in enumerate(sentences) if j % 10 != 9]
        train_forms, train_words = split_examples(fit_sents)
        known = dictionary(fit_sents)
        held_forms, held_words = split_examples(
            [s for j, s in enumerate(sentences) if j % 10 == 9])
        on = "1/10 of the training sentences"
    w = _fit(train_forms, train_words, epochs, bits, seed)
    n, right, whole = split_score(w, held_forms, held_words, known)
    info = {"tokens": n, "right": right, "right_whole": whole, "on": on}
    if verbose:
        print(f"tokenizer word splitter, held-out tokens the dictionary does not hold: {n}, "
              f"right {right} split, {whole} whole")
    if right <= whole:
        return None, info
    if not dev:
        w = _fit(forms, words, epochs, bits, seed)
    return w, info
