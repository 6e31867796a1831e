"""Word-level features of the tokenizer's second stage: does a sentence end after this token?

The character classifier of :mod:`depparse.features.chars` cuts a paragraph into tokens and
gives every token end a sentence-end margin.  What it cannot see well are the boundaries that
no punctuation marks (e-mail greetings and signatures, list items, headlines, informal text
without full stops): those depend on the words around the gap, on how far the last sentence
end is, on where the paragraph starts and ends.  The second stage is a linear classifier over
the tokens (compare the word-level sentence segmenters of Gillick 2009, *Sentence Boundary
Detection and the Problem with the U.S.*, NAACL, and Read et al. 2012, *Sentence Boundary
Detection: A Long Solved Problem?*, COLING): for the gap after token ``i`` of a paragraph

* the character model's margin (bucketed), and whether whitespace follows the token;
* the lower-cased forms and the shapes (:func:`token_table`) of tokens ``i-2 .. i+3``, and
  pairs and runs of them across the gap, the last character of token ``i`` with the first of
  token ``i+1``;
* how many tokens are left in the paragraph, and (decided left to right, so from the
  classifier's own earlier decisions) the number of tokens since the last sentence end.

The features are hashed into a table of ``2**bits`` weights of its own (the template ids below
share nothing with the other feature modules); a sentence ends where the score exceeds a
threshold tuned on held-out text.  :func:`decide` runs the classifier over paragraphs;
:mod:`depparse.learn.tokenizer_training` trains it with the same :func:`gap_features`.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .chars import _DIGIT, _LETTER, _LOWER, _UPPER
from .hashing import mix

__all__ = ["N_GAP_FEATURES", "decide", "dist_bucket", "gap_features", "margin_bucket",
           "margin_buckets", "token_table"]

# columns of the token table
_FORM, _SHAPE, _FIRST, _LAST = range(4)
# shape symbols (other characters stand for themselves: their code point + _LITERAL)
_S_UPPER, _S_LOWER, _S_DIGIT, _S_LETTER = 1, 2, 3, 4
_LITERAL = 16
_MAX_SHAPE = 5
# padding outside the paragraph
_BOS, _EOS = np.int64(-2), np.int64(-3)

# template ids (a namespace of the second stage's own weight table)
_T_BIAS, _T_MARGIN, _T_GLUED, _T_MARGIN_GLUED = 1, 2, 3, 4
_T_FORM = 5           # + 0..5: tokens i-2 .. i+3
_T_SHAPE = 11         # + 0..5
_T_FORM01, _T_SHAPE01, _T_FORM0_SHAPE1, _T_SHAPE0_FORM1 = 17, 18, 19, 20
_T_SHAPE_M1_0_1_2, _T_SHAPE_0_1_2, _T_SHAPE_M1_0_1 = 21, 22, 23
_T_FORM12, _T_FORM_M1_0, _T_MARGIN_SHAPE1, _T_MARGIN_FORM0 = 24, 25, 26, 27
_T_MARGIN_FORM0_SHAPE1, _T_LAST_FIRST, _T_SHAPE1_FORM2, _T_FORM1_SHAPE2 = 28, 29, 30, 31
_T_LEFT_SHAPE1, _T_DIST, _T_DIST_SHAPES = 32, 33, 34
#: Features per gap (the last two depend on the decisions before it).
N_GAP_FEATURES = 34


@nb.njit(cache=True)
def token_table(codes, low, cls, starts, ends):
    """Per token: the hash of its lower-cased form, of its shape, its first and last code
    point (Numba).

    Parameters
    ----------
    codes, low : numpy.ndarray of int32
        Code points of the prepared text and their lower case
        (:func:`depparse.features.chars.prepare`).
    cls : numpy.ndarray of int8
        Their character classes (:func:`depparse.features.chars.char_classes`).
    starts, ends : numpy.ndarray of int64
        Every token's first position and the position after its last.

    Returns
    -------
    numpy.ndarray of int64, shape (n_tokens, 4)
        The shape is the token's characters as upper / lower / digit / other letter, every
        other character as itself, runs of one symbol collapsed, the first five symbols kept
        (``Mr.`` -> ``Xx.``, ``2005`` -> ``d``, ``e-mail`` -> ``x-x``).
    """
    n = starts.shape[0]
    out = np.zeros((n, 4), dtype=np.int64)
    for k in range(n):
        a = starts[k]
        b = ends[k]
        h = np.uint64(1469598103934665603)
        sh = np.uint64(40503)
        last = -1
        ns = 0
        for j in range(a, b):
            h = mix(h, low[j])
            c = cls[j]
            if c == _UPPER:
                s = _S_UPPER
            elif c == _LOWER:
                s = _S_LOWER
            elif c == _DIGIT:
                s = _S_DIGIT
            elif c == _LETTER:
                s = _S_LETTER
            else:
                s = _LITERAL + codes[j]
            if s != last and ns < _MAX_SHAPE:
                sh = mix(sh, s)
                ns += 1
            last = s
        out[k, _FORM] = np.int64(h)
        out[k, _SHAPE] = np.int64(sh)
        out[k, _FIRST] = codes[a]
        out[k, _LAST] = codes[b - 1]
    return out


@nb.njit(cache=True, inline="always")
def margin_bucket(m):
    """The character model's sentence-end margin in 25 buckets (-12 .. 12) of width 1/40 (its
    weights are scaled to a largest magnitude of 1)."""
    v = np.floor(m * 40.0)
    if v < -12.0:
        return -12
    if v > 12.0:
        return 12
    return int(v)


@nb.njit(cache=True)
def margin_buckets(margins):
    """:func:`margin_bucket` of every entry of a float32 array (one place for training and
    tokenizing, so that both round alike)."""
    out = np.empty(margins.shape[0], dtype=np.int64)
    for k in range(margins.shape[0]):
        out[k] = margin_bucket(margins[k])
    return out


@nb.njit(cache=True, inline="always")
def dist_bucket(d):
    """Tokens since the last sentence end: 1-7 as themselves, then 8-11, 12-15, 16-23, 24-39,
    40+ as 8 .. 12."""
    if d < 8:
        return d
    if d < 12:
        return 8
    if d < 16:
        return 9
    if d < 24:
        return 10
    if d < 40:
        return 11
    return 12


# One typed signature, called rather than inlined (as chars._h)
@nb.njit(nb.uint64(nb.int64, nb.int64), cache=True)
def _h(t, a):
    return mix(mix(np.uint64(t), a), 13)


@nb.njit(cache=True, inline="always")
def _col(tt, k, p0, p1, col):
    if k < p0:
        return _BOS
    if k >= p1:
        return _EOS
    return tt[k, col]


@nb.njit(cache=True)
def gap_features(tt, p0, p1, i, mb, glued, dist, buf, mask):
    """Write the :data:`N_GAP_FEATURES` weight indices of the gap after token ``i``.

    Parameters
    ----------
    tt : numpy.ndarray of int64
        :func:`token_table` of the tokens.
    p0, p1 : int
        The paragraph's tokens are ``p0 .. p1-1``; ``p0 <= i < p1 - 1``.
    mb : int
        :func:`margin_bucket` of the character model's margin after token ``i``.
    glued : int
        1 if no whitespace follows token ``i``, else 0.
    dist : int
        Tokens since the last sentence end (``i + 1`` minus the index of the first token of
        the current sentence).
    buf : numpy.ndarray of int64
        At least :data:`N_GAP_FEATURES` entries.
    mask : int
        ``2**bits - 1``.

    Returns
    -------
    int
        :data:`N_GAP_FEATURES`.
    """
    m = np.uint64(mask)
    w = np.empty(6, dtype=np.int64)
    s = np.empty(6, dtype=np.int64)
    for o in range(6):
        w[o] = _col(tt, i - 2 + o, p0, p1, _FORM)
        s[o] = _col(tt, i - 2 + o, p0, p1, _SHAPE)
    # w[2], s[2]: token i; w[3], s[3]: token i + 1
    buf[0] = np.int64(_h(_T_BIAS, 0) & m)
    buf[1] = np.int64(_h(_T_MARGIN, mb) & m)
    buf[2] = np.int64(_h(_T_GLUED, glued) & m)
    buf[3] = np.int64(mix(_h(_T_MARGIN_GLUED, mb), glued) & m)
    for o in range(6):
        buf[4 + o] = np.int64(_h(_T_FORM + o, w[o]) & m)
        buf[10 + o] = np.int64(_h(_T_SHAPE + o, s[o]) & m)
    buf[16] = np.int64(mix(_h(_T_FORM01, w[2]), w[3]) & m)
    buf[17] = np.int64(mix(_h(_T_SHAPE01, s[2]), s[3]) & m)
    buf[18] = np.int64(mix(_h(_T_FORM0_SHAPE1, w[2]), s[3]) & m)
    buf[19] = np.int64(mix(_h(_T_SHAPE0_FORM1, s[2]), w[3]) & m)
    buf[20] = np.int64(mix(mix(mix(_h(_T_SHAPE_M1_0_1_2, s[1]), s[2]), s[3]), s[4]) & m)
    buf[21] = np.int64(mix(mix(_h(_T_SHAPE_0_1_2, s[2]), s[3]), s[4]) & m)
    buf[22] = np.int64(mix(mix(_h(_T_SHAPE_M1_0_1, s[1]), s[2]), s[3]) & m)
    buf[23] = np.int64(mix(_h(_T_FORM12, w[3]), w[4]) & m)
    buf[24] = np.int64(mix(_h(_T_FORM_M1_0, w[1]), w[2]) & m)
    buf[25] = np.int64(mix(_h(_T_MARGIN_SHAPE1, mb), s[3]) & m)
    buf[26] = np.int64(mix(_h(_T_MARGIN_FORM0, mb), w[2]) & m)
    buf[27] = np.int64(mix(mix(_h(_T_MARGIN_FORM0_SHAPE1, mb), w[2]), s[3]) & m)
    buf[28] = np.int64(mix(_h(_T_LAST_FIRST, tt[i, _LAST]), tt[i + 1, _FIRST]) & m)
    buf[29] = np.int64(mix(_h(_T_SHAPE1_FORM2, s[3]), w[4]) & m)
    buf[30] = np.int64(mix(_h(_T_FORM1_SHAPE2, w[3]), s[4]) & m)
    buf[31] = np.int64(mix(_h(_T_LEFT_SHAPE1, min(p1 - 1 - i, 6)), s[3]) & m)
    d = dist_bucket(dist)
    buf[32] = np.int64(_h(_T_DIST, d) & m)
    buf[33] = np.int64(mix(mix(_h(_T_DIST_SHAPES, d), s[2]), s[3]) & m)
    return N_GAP_FEATURES


@nb.njit(cache=True)
def decide(tt, para_tokens, mbs, glued, weights, bits, threshold):
    """Sentence ends of paragraphs, decided left to right (Numba).

    Parameters
    ----------
    tt : numpy.ndarray of int64
        :func:`token_table` of all tokens.
    para_tokens : numpy.ndarray of int64, shape (n_paragraphs + 1,)
        Paragraph ``p`` holds tokens ``para_tokens[p] .. para_tokens[p + 1] - 1``.
    mbs : numpy.ndarray of int64
        :func:`margin_bucket` after every token.
    glued : numpy.ndarray of int8
        1 where no whitespace follows a token.
    weights : numpy.ndarray of float32, shape (2**bits,)
        The second stage's weights.
    bits : int
        Hash bits.
    threshold : float
        A sentence ends after a token whose score exceeds it.

    Returns
    -------
    ends : numpy.ndarray of bool
        Per token: a sentence ends after it (always after a paragraph's last token).
    scores : numpy.ndarray of float32
        Per token: its score (``inf`` after a paragraph's last token).
    """
    n = tt.shape[0]
    ends = np.zeros(n, dtype=np.bool_)
    scores = np.full(n, np.inf, dtype=np.float32)
    buf = np.empty(N_GAP_FEATURES, dtype=np.int64)
    mask = (1 << bits) - 1
    for p in range(para_tokens.shape[0] - 1):
        p0 = para_tokens[p]
        p1 = para_tokens[p + 1]
        first = p0
        for i in range(p0, p1 - 1):
            k = gap_features(tt, p0, p1, i, mbs[i], glued[i], i + 1 - first, buf, mask)
            s = np.float32(0.0)
            for f in range(k):
                s += weights[buf[f]]
            scores[i] = s
            if s > threshold:
                ends[i] = True
                first = i + 1
        if p1 > p0:
            ends[p1 - 1] = True
    return ends, scores
