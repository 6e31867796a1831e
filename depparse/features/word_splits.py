"""Features of the tokenizer's word splitter: does a word end after this character of a token?

A multiword token whose words, concatenated, spell it (Coptic's bound groups, ``ⲁϥⲥⲱⲧⲙ`` =
``ⲁ ϥ ⲥⲱⲧⲙ``; Turkish ``değildir``-like copula tokens; English ``don't`` = ``do n't``) can be
split where no dictionary of the training data lists it: a binary linear classifier decides,
after each character of a token but its last, whether a word ends there, from

* the characters around the point (``-3 .. +3``, inside the token; padded outside it) and the
  pairs and triples across it;
* the token's part before the point and after it (hashed whole), their last and first one to
  four characters, and pairs of them across the point (what a morpheme boundary looks like);
* the whole token with the point's offset from its start and from its end, and the two
  lengths (capped).

The features are hashed into a table of ``2**bits`` weights of its own (the template ids below
share nothing with the other feature modules); a word ends where the score is above 0.
:func:`split_points` runs it over tokens; :mod:`depparse.learn.word_split_training` trains it
with the same :func:`split_features`.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .hashing import mix

__all__ = ["N_SPLIT_FEATURES", "split_features", "split_points", "split_words", "token_codes"]

_PAD = np.int64(-7)
_CAP = 8  # lengths counted up to here

# template ids (a namespace of the word splitter's own weight table)
_T_CHAR = 1          # + 0..6: the character at -3..+3 (the point is after character 0)
_T_BI = 8            # + 0..2: (-1, 0), (0, +1), (+1, +2)
_T_TRI = 11          # + 0..1: (-1..+1), (0..+2)
_T_LEFT = 13         # + 0..3: the left part's last 1..4 characters
_T_RIGHT = 17        # + 0..3: the right part's first 1..4 characters
_T_LEFT_RIGHT = 21   # + 0..2: (last k, first k) for k = 1..3
_T_LEFT_ALL, _T_RIGHT_ALL, _T_TOKEN_FROM_START, _T_TOKEN_FROM_END = 24, 25, 26, 27
_T_LENGTHS, _T_LEFT_ALL_RIGHT1, _T_LEFT1_RIGHT_ALL, _T_BIAS = 28, 29, 30, 31
#: Features per split point.
N_SPLIT_FEATURES = 31


def token_codes(forms: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The lower-cased code points of ``forms`` (one character per character: a lower case
    longer than one character keeps the original) and each form's start in them (one more
    entry: the end)."""
    joined = "".join(forms)
    low = joined.lower()
    if len(low) == len(joined):
        codes = np.frombuffer(low.encode("utf-32-le"), dtype=np.int32).astype(np.int64)
    else:
        codes = np.array([ord(c.lower()) if len(c.lower()) == 1 else ord(c) for c in joined],
                         dtype=np.int64)
    starts = np.zeros(len(forms) + 1, dtype=np.int64)
    np.cumsum([len(f) for f in forms], out=starts[1:])
    return codes, starts


@nb.njit(cache=True, inline="always")
def _h(t, a):
    return mix(mix(np.uint64(t), a), 13)


@nb.njit(cache=True, inline="always")
def _span(codes, a, b, seed):
    h = np.uint64(seed)
    for j in range(a, b):
        h = mix(h, codes[j])
    return h


@nb.njit(cache=True)
def split_features(codes, a, b, i, buf, mask):
    """Write the :data:`N_SPLIT_FEATURES` weight indices of the point after character ``i`` of
    the token ``codes[a:b]`` (``a <= i < b - 1``); returns their number."""
    m = np.uint64(mask)
    c = np.empty(7, dtype=np.int64)
    for o in range(7):
        j = i - 3 + o
        c[o] = codes[j] if a <= j < b else _PAD
    k = 0
    for o in range(7):
        buf[k] = np.int64(_h(_T_CHAR + o, c[o]) & m)
        k += 1
    for o in range(3):
        buf[k] = np.int64(mix(_h(_T_BI + o, c[2 + o]), c[3 + o]) & m)
        k += 1
    for o in range(2):
        buf[k] = np.int64(mix(mix(_h(_T_TRI + o, c[2 + o]), c[3 + o]), c[4 + o]) & m)
        k += 1
    left = np.empty(4, dtype=np.uint64)
    right = np.empty(4, dtype=np.uint64)
    for n in range(4):
        left[n] = _span(codes, max(a, i - n), i + 1, 17 + n)
        right[n] = _span(codes, i + 1, min(b, i + 2 + n), 29 + n)
        buf[k] = np.int64(_h(_T_LEFT + n, left[n]) & m)
        buf[k + 4] = np.int64(_h(_T_RIGHT + n, right[n]) & m)
        k += 1
    k += 4
    for n in range(3):
        buf[k] = np.int64(mix(_h(_T_LEFT_RIGHT + n, left[n]), right[n]) & m)
        k += 1
    left_all = _span(codes, a, i + 1, 41)
    right_all = _span(codes, i + 1, b, 43)
    token = _span(codes, a, b, 47)
    nl = min(i + 1 - a, _CAP)
    nr = min(b - i - 1, _CAP)
    buf[k] = np.int64(_h(_T_LEFT_ALL, left_all) & m)
    buf[k + 1] = np.int64(_h(_T_RIGHT_ALL, right_all) & m)
    buf[k + 2] = np.int64(mix(_h(_T_TOKEN_FROM_START, token), i - a) & m)
    buf[k + 3] = np.int64(mix(_h(_T_TOKEN_FROM_END, token), b - i) & m)
    buf[k + 4] = np.int64(mix(_h(_T_LENGTHS, nl), nr) & m)
    buf[k + 5] = np.int64(mix(_h(_T_LEFT_ALL_RIGHT1, left_all), right[0]) & m)
    buf[k + 6] = np.int64(mix(_h(_T_LEFT1_RIGHT_ALL, left[0]), right_all) & m)
    buf[k + 7] = np.int64(_h(_T_BIAS, 0) & m)
    return k + 8


@nb.njit(cache=True)
def split_points(codes, starts, weights, bits):
    """Where words end inside the tokens ``codes[starts[t]:starts[t + 1]]``: a boolean per
    character, True after a character (not a token's last) where the score is above 0."""
    out = np.zeros(codes.shape[0], dtype=np.bool_)
    buf = np.empty(N_SPLIT_FEATURES, dtype=np.int64)
    mask = (1 << bits) - 1
    for t in range(starts.shape[0] - 1):
        a = starts[t]
        b = starts[t + 1]
        for i in range(a, b - 1):
            k = split_features(codes, a, b, i, buf, mask)
            s = 0.0
            for f in range(k):
                s += weights[buf[f]]
            out[i] = s > 0.0
    return out


def split_words(weights: np.ndarray, forms: list[str]) -> list[list[str]]:
    """Each form as the words the splitter finds in it."""
    bits = int(weights.shape[0]).bit_length() - 1
    codes, starts = token_codes(forms)
    points = split_points(codes, starts, weights, bits)
    out = []
    for t, f in enumerate(forms):
        a = int(starts[t])
        cuts = (np.flatnonzero(points[a:a + len(f) - 1]) + 1).tolist() if len(f) > 1 else []
        out.append([f[x:y] for x, y in zip([0, *cuts], [*cuts, len(f)], strict=True)])
    return out
