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
tagger from the same data (Straka, Hajič and Straková 2016, Sec. 4.2).  The word-level
second stage (:mod:`depparse.features.boundaries`) learns, over the gold tokens, whether a
sentence ends after each token, from the margins of character classifiers that did not see
that text (jackknifing, as in stacked generalisation: Wolpert 1992), so that it learns
how far to trust the margins of unseen text; it is the mean of a few averaged perceptrons
trained in different orders.  The multiword-token dictionary is counted from the same
tokens.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

import numba as nb
import numpy as np

from ..conllu import Sentence, tokens_with_misc
from ..errors import TrainingDataError
from ..features.boundaries import N_GAP_FEATURES, gap_features, margin_buckets, token_table
from ..features.chars import (
    INSIDE,
    N_CLASSES,
    N_FEATURES,
    PARAGRAPH,
    SENTENCE_END,
    SPACE,
    TOKEN_END,
    bridges,
    char_classes,
    char_table,
    position_features,
    prepare,
    score_positions,
)
from ..inference.tokenizer import FORMAT, SPACES_VERSION, VERSION, Tokenizer
from ..model import Component
from .word_split_training import train_word_splitter

# a comment that starts a paragraph: "# newpar", "# newpar id = ...", "# newdoc ...", in any
# case (the regular expression of UD's tools/conllu_to_text.pl, which built the shared task's
# .txt files; "# newdoc_id" does not count there, so not here)
_NEW_PARAGRAPH = re.compile(r"new(par|doc)(\s|$)", re.IGNORECASE)

__all__ = ["SPACE_SHARE", "boundary_f1", "sentence_tokens", "space_share", "train_tokenizer",
           "treebank_paragraphs", "treebank_text"]

#: A tokenizer learns tokens that go on across a space (:func:`depparse.features.chars.
#: bridges`) where at least this share of the training tokens holds one.  Of the shared
#: treebanks only vi_vtb's do (22.4% of its training tokens: Vietnamese writes a space between
#: a word's syllables); every other has none.
SPACE_SHARE = 0.01


def space_share(sentences: Iterable[Sentence]) -> float:
    """The share of the tokens (multiword tokens counted once) whose form holds whitespace."""
    n = spaced = 0
    for s in sentences:
        for form, _, _ in sentence_tokens(s):
            n += 1
            spaced += any(c.isspace() for c in form)
    return spaced / n if n else 0.0


def sentence_tokens(s: Sentence) -> list[tuple[str, bool, list[str] | None]]:
    """The tokens of a sentence: ``(form, space_after, words)``.

    ``words`` is the list of word forms of a multiword token, None for a plain word;
    ``space_after`` is False where MISC has ``SpaceAfter=No``.  Empty nodes are skipped
    (:func:`depparse.conllu.tokens_with_misc`).
    """
    return [(form, "SpaceAfter=No" not in misc.split("|"), words)
            for form, misc, words in tokens_with_misc(s)]


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
        If a sentence's text does not spell its tokens (whitespace aside) — reported with the
        file and line of the sentence.  Whitespace inside a token (Vietnamese words) stays -1;
        the character before it is INSIDE.
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
def _epoch(tab, labels, bridge, order, w, u, t, bits):
    """One perceptron pass over the positions ``order``; returns (steps, errors).  Before a
    space a token ends, unless ``bridge`` there (then all three decisions are open)."""
    buf = np.empty(N_FEATURES, dtype=np.int64)
    mask = (1 << bits) - 1
    errors = 0
    sc = np.empty(N_CLASSES, dtype=np.float64)
    for idx in range(order.shape[0]):
        i = order[idx]
        y = labels[i]
        if y < 0 or tab[i + 1, 0] == PARAGRAPH:
            continue
        lo = TOKEN_END if tab[i + 1, 0] == SPACE and not bridge[i] else INSIDE
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


def _pieces(paras: list[tuple[str, np.ndarray]], max_sentences: int = 40, glued=False):
    """Paragraphs cut after every ``max_sentences`` sentences (at a sentence end followed by
    whitespace), so that treebanks without paragraph marks can be held out in parts.

    ``glued``: also at a sentence end that no whitespace follows: for writing systems without
    spaces between sentences (Chinese, Japanese: a treebank without paragraph marks is one
    run of text otherwise)."""
    out = []
    for text, lab in paras:
        a, count = 0, 0
        for i in np.flatnonzero(lab == SENTENCE_END).tolist():
            count += 1
            if count >= max_sentences and i + 1 < len(text) and (glued
                                                                 or text[i + 1].isspace()):
                j = i + 1
                while j < len(text) and text[j].isspace():
                    j += 1
                out.append((text[a:i + 1], lab[a:i + 1]))
                a, count = j, 0
        if a < len(text):
            out.append((text[a:], lab[a:]))
    return out


def _fit(pieces, epochs: int, bits: int, seeds: Sequence[int], verbose: bool,
         spaces: bool = False) -> np.ndarray:
    """Character classifier weights ``(2**bits, 3)`` over the pieces: the mean of the
    averaged perceptrons of one run per seed (each with its own paragraph orders), scaled
    to max 1.  ``spaces``: tokens may go on across a space (:func:`_bridges`)."""
    texts = [t for t, _ in pieces]
    codes, low, starts = prepare(texts)
    labels = np.full(codes.shape[0], -1, dtype=np.int8)
    for (_, lab), a in zip(pieces, starts.tolist(), strict=True):
        labels[a:a + len(lab)] = lab
    tab = char_table(low, char_classes(codes))
    bridge = _bridges(codes, low, spaces)
    ranges = [np.arange(a, a + len(t), dtype=np.int64)
              for t, a in zip(texts, starts.tolist(), strict=True)]
    total = np.zeros((1 << bits, N_CLASSES), dtype=np.float64)
    for seed in seeds:
        w = np.zeros((1 << bits, N_CLASSES), dtype=np.float64)
        u = np.zeros_like(w)
        rng = np.random.default_rng(seed)
        t = 0
        for e in range(epochs):
            order = np.concatenate([ranges[j] for j in rng.permutation(len(ranges))])
            t, errors = _epoch(tab, labels, bridge, order, w, u, t, bits)
            if verbose:
                print(f"tokenizer characters, seed {seed}, epoch {e + 1}: {errors} errors")
        total += _averaged(w, u, t)
    return _scaled(total)


def _bridges(codes, low, spaces: bool) -> np.ndarray:
    """Where a token may go on across a space: :func:`depparse.features.chars.bridges` for a
    tokenizer with ``spaces``, nowhere otherwise."""
    return bridges(codes, low) if spaces else np.zeros(codes.shape[0], dtype=bool)


def _forced_ends(codes, low, spaces: bool) -> np.ndarray:
    """Where a token must end: before whitespace (but where :func:`_bridges` lets it go on)
    and at a paragraph's end."""
    nxt = np.append(low[1:], PARAGRAPH)
    return (((nxt == SPACE) & ~_bridges(codes, low, spaces)) | (nxt == PARAGRAPH))


def _averaged(w: np.ndarray, u: np.ndarray, t: int) -> np.ndarray:
    """The averaged weights ``w - u / t`` scaled to max 1, computed in place in ``w`` (the
    tables are large: 2**20 x 3 for the character classifier)."""
    np.multiply(u, 1.0 / max(t, 1), out=u)
    w -= u
    return _scaled(w, out=w)


def _scaled(w: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``w`` divided by its largest magnitude (float32 unless ``out`` is given)."""
    m = max(float(w.max(initial=0.0)), -float(w.min(initial=0.0)), 1e-30)
    if out is None:
        return (w * (1.0 / m)).astype(np.float32)
    return np.multiply(w, 1.0 / m, out=out)


def tune_sentence_bias(weights: np.ndarray, pieces, spaces: bool = False
                       ) -> tuple[float, float]:
    """The bias added to the sentence-end score that maximises sentence-end F1 on held-out
    text; returns ``(bias, F1 in percent)``.

    The bias only tells the two kinds of token end apart: where the classifier ends a token
    (before whitespace, or where the larger of the token-end and sentence-end scores beats
    the inside score), a sentence ends when the sentence-end score plus the bias beats the
    token-end score.  Every threshold between two consecutive differences is tried
    (paragraph ends, always sentence ends, do not count; gold sentence ends where no token
    ends count as missed).
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
    ends = use & (_forced_ends(codes, low, spaces)
                  | (np.maximum(sc[:, TOKEN_END], sc[:, SENTENCE_END]) > sc[:, INSIDE]))
    positives = int((gold[use] == SENTENCE_END).sum())
    d = (sc[:, SENTENCE_END] - sc[:, TOKEN_END])[ends]
    y = gold[ends] == SENTENCE_END
    if not len(d) or not positives:
        return 0.0, 0.0
    order = np.argsort(-d, kind="stable")
    d, y = d[order], y[order]
    tp = np.cumsum(y)  # predicted: the first k+1 differences
    fp = np.cumsum(~y)
    f1 = 2 * tp / (2 * tp + fp + (positives - tp))
    k = int(np.argmax(f1))
    if f1[k] <= 0:
        return 0.0, 0.0
    # threshold halfway between the k-th and the next difference: predicted iff d + bias > 0
    below = d[k + 1] if k + 1 < len(d) else d[k] - 1.0
    return float(-(d[k] + below) / 2), float(100 * f1[k])


def _margins(pieces, weights: np.ndarray, spaces: bool = False) -> list[np.ndarray]:
    """The character classifier's raw sentence-end margin after every character of every
    piece (as :meth:`depparse.inference.tokenizer.Tokenizer.gaps` computes it)."""
    bits = int(weights.shape[0]).bit_length() - 1
    texts = [t for t, _ in pieces]
    codes, low, starts = prepare(texts)
    sc = score_positions(char_table(low, char_classes(codes)), weights, bits)
    other = np.where(_forced_ends(codes, low, spaces), sc[:, TOKEN_END],
                     np.maximum(sc[:, TOKEN_END], sc[:, INSIDE]))
    m = sc[:, SENTENCE_END] - other
    return [m[a:a + len(t)] for t, a in zip(texts, starts.tolist(), strict=True)]


def _jackknife_margins(pieces, folds: int, epochs: int, bits: int, seeds: Sequence[int],
                       verbose: bool, spaces: bool = False) -> list[np.ndarray]:
    """Margins of every piece from a character classifier that did not see it: the pieces,
    in order, in ``folds`` runs, each scored by a classifier trained on the others (so that
    the second stage learns from margins as good as those of unseen text)."""
    n = len(pieces)
    fold = np.arange(n) * folds // n
    out: list = [None] * n
    for k in range(folds):
        w = _fit([p for j, p in enumerate(pieces) if fold[j] != k], epochs, bits, seeds, False,
                 spaces)
        idx = np.flatnonzero(fold == k).tolist()
        for j, m in zip(idx, _margins([pieces[j] for j in idx], w, spaces), strict=True):
            out[j] = m
        if verbose:
            print(f"tokenizer jackknife fold {k + 1}/{folds}")
    return out


def _gold_gaps(pieces, margins):
    """The gold tokens of the pieces as second-stage training data: token table, paragraph
    token ranges, margin buckets, glued flags and the gold sentence ends."""
    texts = [t for t, _ in pieces]
    codes, low, offsets = prepare(texts)
    starts, ends, gold, para, mrg, glued = [], [], [], [0], [], []
    for (text, lab), off, m in zip(pieces, offsets.tolist(), margins, strict=True):
        e = np.flatnonzero(lab >= TOKEN_END)
        s = np.empty_like(e)
        if len(e):
            s[0] = 0
            s[1:] = e[:-1] + 1
            nonspace = np.flatnonzero(lab >= 0)
            s = nonspace[np.searchsorted(nonspace, s)]
        starts.append(s + off)
        ends.append(e + 1 + off)
        gold.append(lab[e] == SENTENCE_END)
        mrg.append(np.asarray(m, dtype=np.float32)[e])
        nxt = np.array([c.isspace() for c in text[1:]] + [True])
        glued.append((~nxt[e]).astype(np.int8))
        para.append(para[-1] + len(e))
    starts_a, ends_a = np.concatenate(starts), np.concatenate(ends)
    table = token_table(codes, low, char_classes(codes), starts_a, ends_a)
    return (table, np.array(para, dtype=np.int64), margin_buckets(np.concatenate(mrg)),
            np.concatenate(glued), np.concatenate(gold))


@nb.njit(cache=True)
def _gap_epoch(tt, para, mbs, glued, gold, order, w, u, t, bits):
    """One perceptron pass of the second stage over the paragraphs ``order`` (the distance
    feature from the gold sentence ends); returns (steps, errors)."""
    buf = np.empty(N_GAP_FEATURES, dtype=np.int64)
    mask = (1 << bits) - 1
    errors = 0
    for idx in range(order.shape[0]):
        p = order[idx]
        p0 = para[p]
        p1 = para[p + 1]
        first = p0
        for i in range(p0, p1 - 1):
            k = gap_features(tt, p0, p1, i, mbs[i], glued[i], i + 1 - first, buf, mask)
            s = 0.0
            for f in range(k):
                s += w[buf[f]]
            t += 1
            y = gold[i]
            if (s > 0.0) != y:
                errors += 1
                g = 1.0 if y else -1.0
                for f in range(k):
                    w[buf[f]] += g
                    u[buf[f]] += g * t
            if y:
                first = i + 1
    return t, errors


def _fit_gaps(pieces, margins, epochs: int, bits: int, seeds: Sequence[int],
              verbose: bool) -> np.ndarray:
    """Weights ``(2**bits,)`` of the second stage: the mean of the averaged perceptrons of
    one run per seed (each with its own paragraph orders), scaled to max 1."""
    tt, para, mbs, glued, gold = _gold_gaps(pieces, margins)
    total = np.zeros(1 << bits, dtype=np.float64)
    for seed in seeds:
        w = np.zeros(1 << bits, dtype=np.float64)
        u = np.zeros_like(w)
        rng = np.random.default_rng(seed)
        t = 0
        for e in range(epochs):
            t, errors = _gap_epoch(tt, para, mbs, glued, gold, rng.permutation(len(para) - 1),
                                   w, u, t, bits)
            if verbose:
                print(f"tokenizer sentence-end stage, seed {seed}, epoch {e + 1}: {errors} "
                      "errors")
        total += _averaged(w, u, t)
    return _scaled(total)


def boundary_f1(tok: Tokenizer, pieces, thresholds) -> list[float]:
    """Sentence-end F1 (percent) of a tokenizer on treebank pieces (:func:`treebank_paragraphs`)
    for every threshold of its second stage (None: the character classifier's own
    decisions); paragraph ends do not count."""
    offsets, g = tok.gaps([t for t, _ in pieces])
    gold = set()
    for (_, lab), off in zip(pieces, offsets.tolist(), strict=True):
        ends = np.flatnonzero(lab == SENTENCE_END)
        gold.update((ends[:-1] + off).tolist())
    last = set((g.ends[g.para_tokens[1:][g.para_tokens[1:] > g.para_tokens[:-1]] - 1] - 1)
               .tolist())
    out = []
    for thr in thresholds:
        ends = g.char_ends if thr is None else tok.decide(g, thr)[0]
        pred = set((g.ends[ends] - 1).tolist()) - last
        tp = len(pred & gold)
        out.append(200 * tp / max(len(pred) + len(gold), 1))
    return out


def train_tokenizer(sentences: Sequence[Sentence], dev: Sequence[Sentence] | None = None, *,
                    epochs: int = 8, bits: int = 20, seed: int = 0, seeds: int = 3,
                    max_words: int = 250,
                    holdout: int = 10, gap_stage: bool = True, gap_bits: int = 20,
                    gap_epochs: int = 6, gap_seeds: int = 3, gap_threshold: float = 0.0,
                    folds: int = 5, spaces: bool | None = None, splitter: bool = True,
                    verbose: bool = False) -> Component:
    """Train the tokenizer component on a treebank file.

    Parameters
    ----------
    sentences : sequence of Sentence
        The training treebank with its ``# text`` / ``SpaceAfter`` data, in file order
        (paragraph marks ``# newpar`` / ``# newdoc`` are used where present).
    dev : sequence of Sentence, optional
        Held-out treebank text on which the character classifier's sentence-end bias is tuned
        (:func:`tune_sentence_bias`).  Without it, the training text is cut into parts of up
        to 40 sentences, and every ``holdout``-th run of consecutive parts (whole documents,
        mostly; runs of ``len(parts) // (5 * holdout)`` parts, at least one) is held out for
        that; the classifiers learn from the rest.
    epochs : int, optional
        Perceptron passes of the character classifier; default 8.
    bits : int, optional
        Its ``2**bits`` hashed feature buckets (3 weights each); default 20.
    seed : int, optional
        Seed of the paragraph order of every pass.
    seeds : int, optional
        The character classifier is the mean of ``seeds`` averaged perceptrons, trained with
        the seeds ``seed, seed + 1, ...`` (one paragraph order each); default 3 (with one,
        Tokens F1 on the test sets of tr_imst, da_ddt, nl_alpino and sv_talbanken was
        0.05-0.26 lower, on en_ewt's 0.05 higher).
    max_words : int, optional
        Longest sentence the tokenizer will produce; default 250.
    holdout : int, optional
        Without ``dev``: hold out one run in ``holdout``; default 10.
    gap_stage : bool, optional
        Train the word-level second stage (:mod:`depparse.features.boundaries`) that decides
        where sentences end; default True (without it the character classifier does).
    gap_bits, gap_epochs, gap_seeds : int, optional
        Its ``2**gap_bits`` weights, perceptron passes, and the number of perceptrons (one per
        seed, each with its own paragraph orders) whose mean it is; defaults 20, 6 and 3.
    gap_threshold : float, optional
        A sentence ends where the second stage's score exceeds it (its weights are scaled to
        a largest magnitude of 1); default 0, the perceptron's own boundary (a threshold
        tuned on held-out text did 0.25 Sentences F1 better on en_ewt dev and 0.0-0.3 worse
        on the five other treebanks, see ``benchmarks/experiments/README.md``).
    spaces : bool, optional
        Tokens may go on across a space (:func:`depparse.features.chars.bridges`); default
        None: where at least :data:`SPACE_SHARE` of the training tokens hold one.
    splitter : bool, optional
        Train the word splitter (:mod:`depparse.learn.word_split_training`) for the tokens
        the multiword-token dictionary does not hold, and keep it where it splits held-out
        tokens better than leaving them whole (dev, else a tenth of the training sentences);
        default True.
    folds : int, optional
        The second stage learns from the character classifier's margins on text that
        classifier did not see: ``folds`` classifiers, each trained without one part of the
        training text, score that part; default 5.
    verbose : bool, optional
        Print the errors of every pass and the held-out sentence-end F1.

    Returns
    -------
    depparse.model.Component
        ``meta``: ``{"format": "depparse-tokenizer", "version": 2 (3 with
        ``"spaces_in_tokens": true`` and ``"space_share"``, where at least
        :data:`SPACE_SHARE` of the training tokens hold a space, or with the word splitter's
        ``arrays["split_weights"]``), "word_splitter": its held-out counts (where the
        training data has multiword tokens that their words spell), "bits", "epochs",
        "seeds", "max_words", "sentence_bias", "gap_threshold" (null without a second stage),
        "gap_bits", "gap_epochs", "gap_seeds", "folds", "held_out_f1": {"characters",
        "gaps"}, "tuned_on", "mwt": {form: [words]}, "labels"}``; ``arrays["weights"]``:
        float16 ``(2**bits, 3)`` averaged weights of the character classifier,
        ``arrays["gap_weights"]``: float16 ``(2**gap_bits,)`` of the second stage, each
        divided by its largest magnitude.

    Raises
    ------
    TrainingDataError
        If there is no text to learn from, or a sentence's text does not spell its tokens.
    """
    paras = treebank_paragraphs(sentences)
    if not paras:
        raise TrainingDataError("no sentences to train the tokenizer on")
    share = space_share(sentences)
    if spaces is None:
        spaces = share >= SPACE_SHARE
    if verbose and spaces:
        print(f"tokenizer: {100 * share:.1f}% of the training tokens hold a space; tokens "
              "may go on across one")
    if dev:
        kept = paras
        held = treebank_paragraphs(dev)
    else:
        pieces = _pieces(paras)
        if len(pieces) < holdout:  # too few cuts at whitespace: also where none follows
            pieces = _pieces(paras, glued=True)
        run = max(1, len(pieces) // (5 * holdout))
        group = np.arange(len(pieces)) // run
        held = [p for j, p in enumerate(pieces) if group[j] % holdout == holdout - 1]
        kept = [p for j, p in enumerate(pieces) if group[j] % holdout != holdout - 1]
        if not held or not kept:
            raise TrainingDataError(f"too little text to train the tokenizer on ({len(pieces)} "
                                    f"parts of up to 40 sentences; {holdout} needed)")
    char_runs = range(seed, seed + max(1, seeds))
    weights = _fit(kept, epochs, bits, char_runs, verbose, spaces)
    weights = weights.astype(np.float16).astype(np.float32)  # as stored
    bias, f1 = tune_sentence_bias(weights, held, spaces)
    if verbose:
        print(f"tokenizer sentence bias {bias:.4g} (held-out sentence-end F1 {f1:.2f})")
    mwt = mwt_dictionary(sentences)
    arrays = {"weights": weights.astype(np.float16)}
    split_w, split_info = (train_word_splitter(sentences, dev, mwt_dictionary, verbose=verbose)
                           if splitter else (None, {}))
    if split_w is not None:
        arrays["split_weights"] = split_w.astype(np.float16)
    threshold = None
    f1s: dict = {"characters": None, "gaps": None}
    parts = _pieces(kept)
    if gap_stage and len(parts) >= 2:
        margins = _jackknife_margins(parts, min(folds, len(parts)), epochs, bits, char_runs,
                                     verbose, spaces)
        gw = _fit_gaps(parts, margins, gap_epochs, gap_bits,
                       range(seed, seed + max(1, gap_seeds)), verbose)
        gw = gw.astype(np.float16)
        threshold = float(gap_threshold)
        arrays["gap_weights"] = gw
        tok = Tokenizer(weights, mwt, max_words, bias, gw.astype(np.float32), threshold,
                        spaces=spaces)
        f_chars, f_gaps = boundary_f1(tok, held, [None, threshold])
        f1s = {"characters": round(f_chars, 4), "gaps": round(f_gaps, 4)}
        if verbose:
            print(f"tokenizer held-out sentence-end F1: {f_gaps:.2f} with the second stage, "
                  f"{f_chars:.2f} without")
    # version 2 where no token holds a space: readable by depparse before tokens with spaces
    meta = {"format": FORMAT,
            "version": SPACES_VERSION if spaces or split_w is not None else VERSION,
            "bits": bits, "epochs": epochs,
            "max_words": max_words, "sentence_bias": bias, "gap_threshold": threshold,
            "seeds": seeds, "gap_bits": gap_bits, "gap_epochs": gap_epochs,
            "gap_seeds": gap_seeds,
            "folds": folds, "held_out_f1": f1s,
            "tuned_on": "dev" if dev else f"1/{holdout} of the training text", "mwt": mwt,
            "labels": ["inside", "token_end", "sentence_end"]}
    if spaces:
        meta["spaces_in_tokens"] = True
        meta["space_share"] = round(share, 4)
    if split_info:  # the word splitter's held-out counts, kept or not
        meta["word_splitter"] = {**split_info, "kept": split_w is not None}
    return Component(meta, arrays)
