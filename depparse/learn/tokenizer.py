"""Training the tokenizer and sentence segmenter from a treebank (see
:mod:`depparse.inference.tokenizer`).

The raw text of a treebank is rebuilt the way the CoNLL 2018 shared task built its ``.txt``
files (Zeman et al. 2018, Sec. 2.2): every sentence's ``# text`` (or, without one, its tokens
joined by the ``SpaceAfter`` of their MISC), the sentences of a paragraph joined by a space
(by nothing where the last token of a sentence has ``SpaceAfter=No``), a paragraph starting
at every ``# newpar`` and ``# newdoc``; :func:`treebank_text` gives the text with paragraphs
separated by blank lines.  Every character then gets its gold decision (token goes on / token
ends / sentence ends), and an averaged perceptron (Collins 2002; averaged with the
"running sum of updates" trick of Daumé 2006) learns the character classifier over the
hashed features of :mod:`depparse.features.chars`, as UDPipe's tokenizer learns its GRU
tagger from the same data (Straka, Hajič and Straková 2016, Sec. 4.2).  The multiword-token
dictionary is counted from the same tokens.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

import numba as nb
import numpy as np

from ..conllu import Sentence
from ..errors import TrainingDataError
from ..features.chars import (
    INSIDE,
    N_CLASSES,
    N_FEATURES,
    PARAGRAPH,
    SENTENCE_END,
    SPACE,
    TOKEN_END,
    char_classes,
    char_table,
    position_features,
    prepare,
    score_positions,
)
from ..inference.tokenizer import FORMAT, VERSION
from ..model import Component

# a comment that starts a paragraph: "# newpar", "# newpar id = ...", "# newdoc ...", in any
# case (the regular expression of UD's tools/conllu_to_text.pl, which built the shared task's
# .txt files; "# newdoc_id" does not count there, so not here)
_NEW_PARAGRAPH = re.compile(r"new(par|doc)(\s|$)", re.IGNORECASE)

__all__ = ["sentence_tokens", "train_tokenizer", "treebank_paragraphs", "treebank_text"]


def sentence_tokens(s: Sentence) -> list[tuple[str, bool, list[str] | None]]:
    """The tokens of a sentence: ``(form, space_after, words)``.

    ``words`` is the list of word forms of a multiword token, None for a plain word;
    ``space_after`` is False where MISC has ``SpaceAfter=No``.  Empty nodes are skipped.
    """
    out: list[tuple[str, bool, list[str] | None]] = []
    inside = 0
    for line in s.lines:
        if line[:1] == "#":
            continue
        cols = line.split("\t")
        tid = cols[0]
        if "." in tid:
            continue
        if inside:
            out[-1][2].append(cols[1])  # type: ignore[union-attr]
            inside -= 1
            continue
        space = "SpaceAfter=No" not in cols[9].split("|")
        if "-" in tid:
            a, b = tid.split("-")
            inside = int(b) - int(a) + 1
            out.append((cols[1], space, []))
        else:
            out.append((cols[1], space, None))
    return out


def _sentence_text(s: Sentence, toks) -> str:
    """``# text`` when it spells the tokens (whitespace aside), else the tokens joined by
    their SpaceAfter."""
    built = "".join(f + ("" if not sp or j == len(toks) - 1 else " ")
                    for j, (f, sp, _) in enumerate(toks))
    text = s.text
    if text is not None and "".join(text.split()) == "".join(built.split()):
        return text.strip()
    return built


def treebank_paragraphs(sentences: Sequence[Sentence]) -> list[tuple[str, np.ndarray]]:
    """The paragraphs of a treebank file with the gold decision after every character.

    Parameters
    ----------
    sentences : sequence of Sentence
        A treebank file, in order.

    Returns
    -------
    list of (str, numpy.ndarray of int8)
        Paragraph text (see the module docstring) and, per character, -1 for whitespace,
        else :data:`~depparse.features.chars.INSIDE`, ``TOKEN_END`` or ``SENTENCE_END``.

    Raises
    ------
    TrainingDataError
        If a token has whitespace inside (it could never be produced) — reported with the
        file and line of its sentence.
    """
    paras: list[tuple[list[str], list[int]]] = []
    cur_text: list[str] = []
    cur_lab: list[int] = []
    glue = False
    for s in sentences:
        if (paras or cur_text) and any(map(_NEW_PARAGRAPH.match, s.metadata)):
            paras.append((cur_text, cur_lab))
            cur_text, cur_lab = [], []
        toks = sentence_tokens(s)
        text = _sentence_text(s, toks)
        if cur_text and not glue:
            cur_text.append(" ")
            cur_lab.append(-1)
        labels = [-1] * len(text)
        k = 0
        for j, (form, _, _) in enumerate(toks):
            for ch in form:
                if ch.isspace():
                    continue
                while k < len(text) and text[k].isspace():
                    k += 1
                if k >= len(text) or text[k] != ch:
                    raise TrainingDataError(f"{s.source}:{s.line_no}: the sentence text does "
                                            f"not spell its tokens at {form!r}")
                labels[k] = INSIDE
                k += 1
            labels[k - 1] = SENTENCE_END if j == len(toks) - 1 else TOKEN_END
        cur_text.append(text)
        cur_lab.extend(labels)
        glue = not toks[-1][1]
    if cur_text:
        paras.append((cur_text, cur_lab))
    return [("".join(t), np.array(lab, dtype=np.int8)) for t, lab in paras]


def treebank_text(sentences: Sequence[Sentence]) -> str:
    """The raw text of a treebank file (paragraphs separated by a blank line, a final
    newline), as the CoNLL 2018 shared task's ``.txt`` files."""
    paras = treebank_paragraphs(sentences)
    return "\n\n".join(t for t, _ in paras) + "\n" if paras else ""


def mwt_dictionary(sentences: Iterable[Sentence], min_share: float = 0.5) -> dict[str, list]:
    """Lower-cased token form -> lower-cased words, for the forms that are a multiword token
    more often than ``min_share`` of their occurrences (the most frequent analysis)."""
    seen: Counter = Counter()
    analyses: dict[str, Counter] = defaultdict(Counter)
    for s in sentences:
        for form, _, words in sentence_tokens(s):
            key = form.lower()
            seen[key] += 1
            if words:
                analyses[key][tuple(w.lower() for w in words)] += 1
    out = {}
    for key, c in analyses.items():
        words, n = c.most_common(1)[0]
        if n > min_share * seen[key]:
            out[key] = list(words)
    return dict(sorted(out.items()))


@nb.njit(cache=True)
def _epoch(tab, labels, order, w, u, t, bits):
    """One perceptron pass over the positions ``order``; returns (steps, errors)."""
    buf = np.empty(N_FEATURES, dtype=np.int64)
    mask = (1 << bits) - 1
    errors = 0
    sc = np.empty(N_CLASSES, dtype=np.float64)
    for idx in range(order.shape[0]):
        i = order[idx]
        y = labels[i]
        if y < 0 or tab[i + 1, 0] == PARAGRAPH:
            continue
        lo = TOKEN_END if tab[i + 1, 0] == SPACE else INSIDE
        k = position_features(tab, i, buf, mask)
        best = lo
        for c in range(lo, N_CLASSES):
            s = 0.0
            for f in range(k):
                s += w[buf[f], c]
            sc[c] = s
            if s > sc[best]:
                best = c
        t += 1
        if best != y:
            errors += 1
            for f in range(k):
                w[buf[f], y] += 1.0
                u[buf[f], y] += t
                w[buf[f], best] -= 1.0
                u[buf[f], best] -= t
    return t, errors


def _pieces(paras: list[tuple[str, np.ndarray]], max_sentences: int = 40):
    """Paragraphs cut after every ``max_sentences`` sentences (at a sentence end followed by
    whitespace), so that treebanks without paragraph marks can be held out in parts."""
    out = []
    for text, lab in paras:
        a, count = 0, 0
        for i in np.flatnonzero(lab == SENTENCE_END).tolist():
            count += 1
            if count >= max_sentences and i + 1 < len(text) and text[i + 1].isspace():
                j = i + 1
                while j < len(text) and text[j].isspace():
                    j += 1
                out.append((text[a:i + 1], lab[a:i + 1]))
                a, count = j, 0
        if a < len(text):
            out.append((text[a:], lab[a:]))
    return out


def _fit(pieces, epochs: int, bits: int, seed: int, verbose: bool) -> np.ndarray:
    """Averaged perceptron weights ``(2**bits, 3)`` over the pieces (scaled to max 1)."""
    texts = [t for t, _ in pieces]
    codes, low, starts = prepare(texts)
    labels = np.full(codes.shape[0], -1, dtype=np.int8)
    for (_, lab), a in zip(pieces, starts.tolist(), strict=True):
        labels[a:a + len(lab)] = lab
    tab = char_table(low, char_classes(codes))
    w = np.zeros((1 << bits, N_CLASSES), dtype=np.float64)
    u = np.zeros_like(w)
    rng = np.random.default_rng(seed)
    ranges = [np.arange(a, a + len(t), dtype=np.int64)
              for t, a in zip(texts, starts.tolist(), strict=True)]
    t = 0
    for e in range(epochs):
        order = np.concatenate([ranges[j] for j in rng.permutation(len(ranges))])
        t, errors = _epoch(tab, labels, order, w, u, t, bits)
        if verbose:
            print(f"tokenizer epoch {e + 1}: {errors} errors")
    avg = w - u / max(t, 1)
    return (avg / max(float(np.abs(avg).max()), 1e-30)).astype(np.float32)


def tune_sentence_bias(weights: np.ndarray, pieces) -> tuple[float, float]:
    """The bias added to the sentence-end score that maximises sentence-end F1 on held-out
    text; returns ``(bias, F1 in percent)``.

    A sentence ends after a character when its sentence-end score plus the bias beats the
    other labels allowed there; every threshold between two consecutive margins is tried
    (paragraph ends, always sentence ends, do not count).
    """
    bits = int(weights.shape[0]).bit_length() - 1
    texts = [t for t, _ in pieces]
    codes, low, starts = prepare(texts)
    tab = char_table(low, char_classes(codes))
    sc = score_positions(tab, weights, bits)
    gold = np.full(codes.shape[0], -1, dtype=np.int8)
    for (_, lab), a in zip(pieces, starts.tolist(), strict=True):
        gold[a:a + len(lab)] = lab
    nxt = np.append(low[1:], PARAGRAPH)
    use = (gold >= 0) & (nxt != PARAGRAPH)
    other = np.where(nxt == SPACE, sc[:, TOKEN_END], np.maximum(sc[:, TOKEN_END], sc[:, INSIDE]))
    d = (sc[:, SENTENCE_END] - other)[use]
    y = gold[use] == SENTENCE_END
    order = np.argsort(-d, kind="stable")
    d, y = d[order], y[order]
    tp = np.cumsum(y)  # predicted: the first k+1 margins
    fp = np.cumsum(~y)
    f1 = 2 * tp / (2 * tp + fp + (y.sum() - tp))
    k = int(np.argmax(f1))
    if f1[k] <= 0:
        return 0.0, 0.0
    # threshold halfway between the k-th and the next margin: predicted iff d + bias > 0
    below = d[k + 1] if k + 1 < len(d) else d[k] - 1.0
    return float(-(d[k] + below) / 2), float(100 * f1[k])


def train_tokenizer(sentences: Sequence[Sentence], dev: Sequence[Sentence] | None = None, *,
                    epochs: int = 8, bits: int = 20, seed: int = 0, max_words: int = 250,
                    holdout: int = 10, verbose: bool = False) -> Component:
    """Train the tokenizer component on a treebank file.

    Parameters
    ----------
    sentences : sequence of Sentence
        The training treebank with its ``# text`` / ``SpaceAfter`` data, in file order
        (paragraph marks ``# newpar`` / ``# newdoc`` are used where present).
    dev : sequence of Sentence, optional
        Held-out treebank text on which the sentence-end bias is tuned
        (:func:`tune_sentence_bias`).  Without it, every ``holdout``-th part of the training
        text (parts of up to 40 sentences) is held out for that, and the classifier is
        trained on the rest.
    epochs : int, optional
        Perceptron passes; default 8.
    bits : int, optional
        ``2**bits`` hashed feature buckets (3 weights each); default 20 (0.5 MB in the
        compressed model file for en_ewt; 18 buckets: 0.4 MB, en_ewt test Tokens / Sentences
        F1 98.91 / 72.76 instead of 98.97 / 73.81).
    seed : int, optional
        Seed of the paragraph order of every pass.
    max_words : int, optional
        Longest sentence the tokenizer will produce; default 250.
    holdout : int, optional
        Without ``dev``: hold out one part in ``holdout``; default 10.
    verbose : bool, optional
        Print the errors of every pass.

    Returns
    -------
    depparse.model.Component
        ``meta``: ``{"format": "depparse-tokenizer", "version": 1, "bits", "epochs",
        "max_words", "sentence_bias", "tuned_on", "mwt": {form: [words]}, "labels"}``;
        ``arrays["weights"]``: float16 ``(2**bits, 3)`` averaged weights, divided by their
        largest magnitude (the decisions are argmaxes, which no positive scale changes).

    Raises
    ------
    TrainingDataError
        If there is no text to learn from, or a sentence's text does not spell its tokens.
    """
    paras = treebank_paragraphs(sentences)
    if not paras:
        raise TrainingDataError("no sentences to train the tokenizer on")
    if dev:
        weights = _fit(paras, epochs, bits, seed, verbose)
        held = treebank_paragraphs(dev)
    else:
        pieces = _pieces(paras)
        held = pieces[holdout - 1::holdout]
        kept = [p for j, p in enumerate(pieces) if j % holdout != holdout - 1]
        if not held or not kept:
            raise TrainingDataError(f"too little text to train the tokenizer on ({len(pieces)} "
                                    f"parts of up to 40 sentences; {holdout} needed)")
        weights = _fit(kept, epochs, bits, seed, verbose)
    bias, f1 = tune_sentence_bias(weights, held)
    if verbose:
        print(f"tokenizer sentence bias {bias:.4g} (held-out sentence-end F1 {f1:.2f})")
    meta = {"format": FORMAT, "version": VERSION, "bits": bits, "epochs": epochs,
            "max_words": max_words, "sentence_bias": bias, "tuned_on": "dev" if dev else
            f"1/{holdout} of the training text", "mwt": mwt_dictionary(sentences),
            "labels": ["inside", "token_end", "sentence_end"]}
    return Component(meta, {"weights": weights.astype(np.float16)})
