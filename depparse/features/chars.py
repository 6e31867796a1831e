"""Character features of the tokenizer and sentence segmenter (Numba).

The tokenizer (:mod:`depparse.inference.tokenizer`) decides, after every non-space character
of a paragraph, one of three things: the token goes on (:data:`INSIDE`), the token ends
(:data:`TOKEN_END`), or the token and the sentence end (:data:`SENTENCE_END`).  This is the
formulation of UDPipe's tokenizer (Straka, Hajič and Straková 2016, *UDPipe: Trainable
Pipeline for Processing CoNLL-U Files*, LREC, Sec. 4.2: a per-character classifier over the
labels "token continues / token ends / sentence ends"); here the classifier is linear over
hashed features instead of a GRU:

* the lower-cased characters at offsets -3..+3 of the decision point, and the bigrams,
  trigrams and 4-grams around it;
* the character classes (:func:`char_classes`) in windows around it;
* the whitespace-delimited chunk that holds the character (the part up to the character,
  the whole chunk, the part after it), its shape (collapsed classes), and the chunks before
  and after it (abbreviations, "Mr." + a capitalised word, a lower-cased next word ...).

A text is prepared once (:func:`prepare`) into a table of per-position values
(:func:`char_table`); :func:`position_features` writes the weight indices of one decision
point into a buffer; :func:`score_positions` scores every decision point of a text.  The
weights are a separate table ``(2**bits, 3)`` of the tokenizer, so the template ids below
are a namespace of their own (they share no weights with the parser's
:mod:`depparse.features.templates`).
"""

from __future__ import annotations

import unicodedata

import numba as nb
import numpy as np

from .hashing import mix

__all__ = ["INSIDE", "N_CLASSES", "N_FEATURES", "PARAGRAPH", "SENTENCE_END", "SPACE",
           "TOKEN_END", "bridges", "char_classes", "char_table", "position_features", "prepare",
           "score_positions"]

#: Decision labels after a character.
INSIDE, TOKEN_END, SENTENCE_END = 0, 1, 2
#: Number of labels.
N_CLASSES = 3
#: The code of whitespace and of a paragraph break in the prepared text.
SPACE, PARAGRAPH = 32, -1

# character classes
_PAD, _SPACE, _UPPER, _LOWER, _LETTER, _DIGIT, _PERIOD, _COMMA, _PUNCT, _SYMBOL, _MARK, \
    _OTHER, _NUMBER = range(13)
_CATEGORY = {"Lu": _UPPER, "Lt": _UPPER, "Ll": _LOWER, "Lm": _LETTER, "Lo": _LETTER,
             "Nd": _DIGIT, "Nl": _NUMBER, "No": _NUMBER, "Mn": _MARK, "Mc": _MARK,
             "Me": _MARK, "Sm": _SYMBOL, "Sc": _SYMBOL, "Sk": _SYMBOL, "So": _SYMBOL}

# columns of the position table
_LOW, _CLS, _HPRE, _HCHUNK, _HSUF, _SHAPE, _NEXT, _PREV, _FLAGS = range(9)

# template ids (a namespace of the tokenizer's own weight table; unique, checked below)
_T_CHAR = 1          # + offset 0..6: the character at -3..+3
_T_BI = 10           # + 0..2
_T_TRI = 13          # + 0..2
_T_FOUR = 16         # + 0..1
_T_CLS7, _T_CLS3 = 18, 19
_T_PRE, _T_CHUNK, _T_SUF, _T_PRE_NEXTCLS = 20, 21, 22, 23
_T_NEXT, _T_NEXTSHAPE, _T_PREV, _T_CHAR_CLS_NEXTCLS = 24, 25, 26, 27
_T_SHAPE_NEXTSHAPE, _T_CHUNK_NEXT, _T_BIAS, _T_PREV_PRE = 28, 29, 30, 31
_T_FLAGS_BI, _T_FLAGS_NEXTFLAGS, _T_NEXT_NEXTCLS_CLS, _T_PREV_CHUNK_NEXTCLS = 32, 33, 34, 35
_TEMPLATES = ([_T_CHAR + k for k in range(7)] + [_T_BI + k for k in range(3)]
              + [_T_TRI + k for k in range(3)] + [_T_FOUR, _T_FOUR + 1]
              + [_T_CLS7, _T_CLS3, _T_PRE, _T_CHUNK, _T_SUF, _T_PRE_NEXTCLS, _T_NEXT,
                 _T_NEXTSHAPE, _T_PREV, _T_CHAR_CLS_NEXTCLS, _T_SHAPE_NEXTSHAPE, _T_CHUNK_NEXT,
                 _T_BIAS, _T_PREV_PRE, _T_FLAGS_BI, _T_FLAGS_NEXTFLAGS, _T_NEXT_NEXTCLS_CLS,
                 _T_PREV_CHUNK_NEXTCLS])
if len(set(_TEMPLATES)) != len(_TEMPLATES):  # pragma: no cover - a programming error
    raise ImportError("tokenizer feature templates share an id")
#: Features per decision point.
N_FEATURES = len(_TEMPLATES)

_ASCII_CLASSES = np.full(128, _OTHER, dtype=np.int8)


def _class_of(c: str) -> int:
    if c.isspace():
        return _SPACE
    if c == ".":
        return _PERIOD
    if c == ",":
        return _COMMA
    cat = unicodedata.category(c)
    if cat[0] == "P":
        return _PUNCT
    return _CATEGORY.get(cat, _OTHER)


for _c in range(128):
    _ASCII_CLASSES[_c] = _class_of(chr(_c))


def char_classes(codes: np.ndarray) -> np.ndarray:
    """Character class of every code point (whitespace, upper, lower, other letter, digit,
    period, comma, other punctuation, symbol, mark, number, other).

    Parameters
    ----------
    codes : numpy.ndarray of int32
        Code points; :data:`PARAGRAPH` (-1) gets the padding class.

    Returns
    -------
    numpy.ndarray of int8
    """
    out = np.full(codes.shape, _PAD, dtype=np.int8)
    ascii_ = (codes >= 0) & (codes < 128)
    out[ascii_] = _ASCII_CLASSES[codes[ascii_]]
    high = codes >= 128
    if high.any():
        uniq, inv = np.unique(codes[high], return_inverse=True)
        out[high] = np.array([_class_of(chr(int(c))) for c in uniq], dtype=np.int8)[inv]
    return out


def prepare(paragraphs: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Turn paragraphs into the arrays of :func:`char_table`.

    Parameters
    ----------
    paragraphs : list of str
        Paragraph texts.  Every whitespace character becomes :data:`SPACE`.

    Returns
    -------
    codes : numpy.ndarray of int32
        The code points of all paragraphs, each paragraph followed by :data:`PARAGRAPH`.
    low : numpy.ndarray of int32
        The same, lower-cased where lower-casing keeps one character.
    starts : numpy.ndarray of int64
        Index of the first character of every paragraph in ``codes``.
    """
    joined = "\x00".join(paragraphs) + "\x00" if paragraphs else ""
    codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.int32).copy()
    lowered = joined.lower()
    if len(lowered) == len(joined):
        low = np.frombuffer(lowered.encode("utf-32-le"), dtype=np.int32).copy()
    else:  # a character whose lower case is longer (e.g. U+0130): map one by one
        low = np.array([ord(c.lower()) if len(c.lower()) == 1 else ord(c) for c in joined],
                       dtype=np.int32)
    codes[codes == 0] = PARAGRAPH
    low[low == 0] = PARAGRAPH
    space = np.array([c.isspace() for c in map(chr, np.unique(codes[codes > 0]).tolist())])
    if space.any():
        sp = np.unique(codes[codes > 0])[space]
        low[np.isin(codes, sp)] = SPACE
    lens = np.array([len(p) + 1 for p in paragraphs], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    return codes, low, starts


def bridges(codes: np.ndarray, low: np.ndarray) -> np.ndarray:
    """Where a token may go on across a space: after a character that one U+0020 space and
    then a character follow (not a run of whitespace, a tab or a line break), for tokenizers
    of writing systems whose words hold spaces (Vietnamese writes a space between the
    syllables of a word).

    Parameters
    ----------
    codes, low : numpy.ndarray of int32
        As :func:`prepare` returns them.

    Returns
    -------
    numpy.ndarray of bool, one per position.
    """
    out = np.zeros(codes.shape[0], dtype=bool)
    if codes.shape[0] > 2:
        solid = (low != SPACE) & (low != PARAGRAPH)
        out[:-2] = solid[:-2] & (codes[1:-1] == 32) & solid[2:]
    return out


@nb.njit(cache=True)
def char_table(low, cls):
    """The per-position table of a prepared text (Numba).

    Parameters
    ----------
    low : numpy.ndarray of int32
        Lower-cased code points, :data:`SPACE` for whitespace, :data:`PARAGRAPH` after each
        paragraph.
    cls : numpy.ndarray of int8
        :func:`char_classes` of the original (not lower-cased) code points.

    Returns
    -------
    numpy.ndarray of int64, shape (n, 9)
        Per position: the lower-cased code point, the class, the hash of its chunk up to and
        including it, of the whole chunk, of the rest of the chunk after it, the chunk's
        shape, the start of the next chunk in the paragraph (-1: none) and of the previous
        chunk (-1: none), and the chunk's flags (it holds ``/``, ``@``, ``:``, a period
        before its last character, a digit, an upper-case letter, a lower-case letter: what
        tells URLs, e-mail addresses, numbers and abbreviations apart).  Chunks are maximal
        runs without whitespace.
    """
    n = low.shape[0]
    tab = np.zeros((n, 9), dtype=np.int64)
    i = 0
    prev_start = -1  # start of the chunk before the current one, within the paragraph
    while i < n:
        c = low[i]
        tab[i, _LOW] = c
        tab[i, _CLS] = cls[i]
        if c == PARAGRAPH:
            tab[i, _NEXT] = -1
            tab[i, _PREV] = -1
            prev_start = -1
            i += 1
            continue
        if c == SPACE:
            tab[i, _NEXT] = -1
            tab[i, _PREV] = -1
            i += 1
            continue
        s = i
        e = i
        while e < n and low[e] != SPACE and low[e] != PARAGRAPH:
            e += 1
        h = np.uint64(1469598103934665603)
        shape = np.uint64(7)
        last = -1
        nshape = 0
        for j in range(s, e):
            tab[j, _LOW] = low[j]
            tab[j, _CLS] = cls[j]
            h = mix(h, low[j])
            tab[j, _HPRE] = np.int64(h)
            if cls[j] != last and nshape < 6:
                shape = mix(shape, cls[j])
                last = cls[j]
                nshape += 1
        hs = np.uint64(99991)
        for j in range(e - 1, s - 1, -1):
            tab[j, _HSUF] = np.int64(hs)  # the part after j
            hs = mix(hs, low[j])
        flags = 0
        for j in range(s, e):
            lj = low[j]
            if lj == 47:  # /
                flags |= 1
            elif lj == 64:  # @
                flags |= 2
            elif lj == 58:  # :
                flags |= 4
            elif lj == 46 and j < e - 1:  # . inside
                flags |= 8
            if cls[j] == _DIGIT:
                flags |= 16
            elif cls[j] == _UPPER:
                flags |= 32
            elif cls[j] == _LOWER:
                flags |= 64
        for j in range(s, e):
            tab[j, _FLAGS] = flags
            tab[j, _HCHUNK] = np.int64(h)
            tab[j, _SHAPE] = np.int64(shape)
            tab[j, _PREV] = prev_start
        # the next chunk of the paragraph
        k = e
        while k < n and low[k] == SPACE:
            k += 1
        nxt = k if k < n and low[k] != PARAGRAPH else -1
        for j in range(s, e):
            tab[j, _NEXT] = nxt
        prev_start = s
        i = e
    return tab


@nb.njit(cache=True)
def _at(tab, i, col, pad):
    if i < 0 or i >= tab.shape[0]:
        return pad
    return tab[i, col]


# One typed signature: the template ids are global constants, literals to Numba, and without
# it each of them compiled a version of its own (19, 2.2 s of CPU).  Integer atoms convert to
# int64, which ``mix`` folds bit for bit as before.
@nb.njit(nb.uint64(nb.int64, nb.int64), cache=True)
def _h(t, a):
    return mix(mix(np.uint64(t), a), 11)


@nb.njit(cache=True)
def position_features(tab, i, buf, mask):
    """Write the :data:`N_FEATURES` weight indices of the decision after character ``i``.

    Parameters
    ----------
    tab : numpy.ndarray of int64
        :func:`char_table` of the text.
    i : int
        A position whose character is neither whitespace nor a paragraph break.
    buf : numpy.ndarray of int64
        At least :data:`N_FEATURES` entries; filled from index 0.
    mask : int
        ``2**bits - 1``.

    Returns
    -------
    int
        The number of features written (:data:`N_FEATURES`).
    """
    m = np.uint64(mask)
    k = 0
    c = np.empty(7, dtype=np.int64)
    q = np.empty(7, dtype=np.int64)
    for o in range(7):
        j = i - 3 + o
        v = _at(tab, j, _LOW, PARAGRAPH)
        c[o] = v
        q[o] = _at(tab, j, _CLS, 0)
        buf[k] = np.int64(_h(_T_CHAR + o, v) & m)
        k += 1
    for o in range(3):  # (i-1, i), (i, i+1), (i+1, i+2)
        buf[k] = np.int64(mix(_h(_T_BI + o, c[2 + o]), c[3 + o]) & m)
        k += 1
    for o in range(3):  # (i-2..i), (i-1..i+1), (i..i+2)
        buf[k] = np.int64(mix(mix(_h(_T_TRI + o, c[1 + o]), c[2 + o]), c[3 + o]) & m)
        k += 1
    for o in range(2):  # (i-2..i+1), (i-1..i+2)
        buf[k] = np.int64(mix(mix(mix(_h(_T_FOUR + o, c[1 + o]), c[2 + o]), c[3 + o]),
                              c[4 + o]) & m)
        k += 1
    h = _h(_T_CLS7, q[0])
    for o in range(1, 7):
        h = mix(h, q[o])
    buf[k] = np.int64(h & m)
    k += 1
    buf[k] = np.int64(mix(mix(_h(_T_CLS3, q[2]), q[3]), q[4]) & m)
    k += 1
    pre = tab[i, _HPRE]
    nxt = tab[i, _NEXT]
    prv = tab[i, _PREV]
    ncls = tab[nxt, _CLS] if nxt >= 0 else -1
    nh = tab[nxt, _HCHUNK] if nxt >= 0 else -1
    nshape = tab[nxt, _SHAPE] if nxt >= 0 else -1
    ph = tab[prv, _HCHUNK] if prv >= 0 else -1
    buf[k] = np.int64(_h(_T_PRE, pre) & m)
    buf[k + 1] = np.int64(_h(_T_CHUNK, tab[i, _HCHUNK]) & m)
    buf[k + 2] = np.int64(_h(_T_SUF, tab[i, _HSUF]) & m)
    buf[k + 3] = np.int64(mix(_h(_T_PRE_NEXTCLS, pre), ncls) & m)
    buf[k + 4] = np.int64(_h(_T_NEXT, nh) & m)
    buf[k + 5] = np.int64(_h(_T_NEXTSHAPE, nshape) & m)
    buf[k + 6] = np.int64(_h(_T_PREV, ph) & m)
    buf[k + 7] = np.int64(mix(mix(_h(_T_CHAR_CLS_NEXTCLS, c[3]), q[4]), ncls) & m)
    buf[k + 8] = np.int64(mix(_h(_T_SHAPE_NEXTSHAPE, tab[i, _SHAPE]), nshape) & m)
    buf[k + 9] = np.int64(mix(_h(_T_CHUNK_NEXT, pre), nh) & m)
    buf[k + 10] = np.int64(_h(_T_BIAS, 0) & m)
    buf[k + 11] = np.int64(mix(_h(_T_PREV_PRE, ph), pre) & m)
    fl = tab[i, _FLAGS]
    buf[k + 12] = np.int64(mix(mix(_h(_T_FLAGS_BI, fl), c[3]), c[4]) & m)
    nfl = tab[nxt, _FLAGS] if nxt >= 0 else -1
    buf[k + 13] = np.int64(mix(mix(mix(_h(_T_FLAGS_NEXTFLAGS, fl), nfl), c[3]), ncls) & m)
    # the next word with its case, after this character's class ("... level | If you're")
    buf[k + 14] = np.int64(mix(mix(_h(_T_NEXT_NEXTCLS_CLS, nh), ncls), q[3]) & m)
    buf[k + 15] = np.int64(mix(mix(_h(_T_PREV_CHUNK_NEXTCLS, ph), tab[i, _HCHUNK]), ncls) & m)
    return k + 16


@nb.njit(cache=True)
def score_positions(tab, weights, bits):
    """Scores of the three labels after every character of a prepared text.

    Parameters
    ----------
    tab : numpy.ndarray of int64
        :func:`char_table` of the text.
    weights : numpy.ndarray, shape (2**bits, 3)
        The tokenizer's weights (float32: Numba has no float16).
    bits : int
        Hash bits.

    Returns
    -------
    numpy.ndarray of float32, shape (n, 3)
        Zero rows at whitespace and paragraph breaks.
    """
    n = tab.shape[0]
    out = np.zeros((n, N_CLASSES), dtype=np.float32)
    buf = np.empty(N_FEATURES, dtype=np.int64)
    mask = (1 << bits) - 1
    for i in range(n):
        c = tab[i, _LOW]
        if c == SPACE or c == PARAGRAPH:
            continue
        k = position_features(tab, i, buf, mask)
        for f in range(k):
            for y in range(N_CLASSES):
                out[i, y] += np.float32(weights[buf[f], y])
    return out
