"""Features of the tagger and the lemmatizer (Numba), and the word atoms they are made of.

Every word is first turned into :data:`N_ATOMS` 64-bit *atoms* (:class:`Lexicon`, in Python,
cached per form): its lower-cased form, the form as written, its suffixes of length 1-5 and
prefixes of length 1-3 (lower-cased), its shape (character classes with runs collapsed:
*McDonald's* -> ``XxXx'x``) and orthographic flags with a length bucket.  The feature kernels
then hash templates of the atoms of a word and its neighbours (:mod:`.hashing`, ids from
:mod:`.templates`) — the features of Ratnaparkhi (1996) and Collins (2002) for tagging
(word, affixes, shape, a window of two words each side, word bigrams), Toutanova et al.
(2003) for unknown words — without the class: a class ``y`` of a task with salt ``s`` has the
weight ``w[(mix(f, s) + y) & mask]`` (:func:`candidate_scores`), so that the weights of one
feature for the classes of a task lie next to each other in memory.

Stage 1 (:func:`tag_features` without tags) scores UPOS; stage 2 adds the predicted UPOS of
the word and its neighbours (XPOS and FEATS are tagged after UPOS); the lemmatizer's
features (:func:`lemma_features`) add the predicted XPOS, the FEATS bundle and each of its
features.  Dense features (a contextual encoder's vector ``v`` of the word) enter
:func:`candidate_scores` as the scores ``W[y] . v``.

References
----------
A. Ratnaparkhi. A maximum entropy model for part-of-speech tagging. EMNLP 1996.
M. Collins. Discriminative training methods for hidden Markov models. EMNLP 2002.
K. Toutanova, D. Klein, C. Manning and Y. Singer. Feature-rich part-of-speech tagging with a
cyclic dependency network. NAACL 2003.
K. Weinberger, A. Dasgupta, J. Langford, A. Smola and J. Attenberg. Feature hashing for large
scale multitask learning. ICML 2009.
"""

from __future__ import annotations

import hashlib

import numba as nb
import numpy as np

from . import templates as T
from .hashing import fold, mix, start

__all__ = ["A_FLAGS", "A_FORM", "A_LOWER", "A_PRE", "A_SHAPE", "A_SUF", "Lexicon",
           "MAX_LEMMA_FEATS", "MAX_TAG_FEATS", "N_ATOMS", "TAG_OFFSET", "candidate_scores",
           "lemma_bases", "lemma_features", "shape", "string_hash", "tag_bases", "tag_features"]

A_LOWER, A_FORM = 0, 1
A_SUF = 2  # suffixes of length 1..5: columns 2..6
A_PRE = 7  # prefixes of length 1..3: columns 7..9
A_SHAPE = 10
A_FLAGS = 11
N_ATOMS = 12
N_SUF = 5
N_PRE = 3
ROOT_ATOM, BOS_ATOM, EOS_ATOM = 1, 2, 3
TAG_OFFSET = 16  # tag ids as atoms: id + TAG_OFFSET (below: the root / outside markers)
MAX_TAG_FEATS = 64
MAX_LEMMA_FEATS = 96
MAX_FEAT = 16  # features of a FEATS bundle used by the lemmatizer

_FLAG_BITS = 8  # bits 0-7 flags, 8-11 the length bucket


def string_hash(s: str) -> int:
    """A stable 64-bit hash of a string (BLAKE2b), never below 16 (the reserved atoms)."""
    h = int.from_bytes(hashlib.blake2b(s.encode("utf-8", "surrogatepass"),
                                       digest_size=8).digest(), "little")
    return h if h >= 16 else h + 16


def shape(form: str) -> str:
    """Character classes of ``form`` with runs collapsed: ``X`` upper, ``x`` other letters,
    ``d`` digits, ASCII punctuation as itself, ``o`` anything else (*U.S.* -> ``X.X.``,
    *1990s* -> ``dx``)."""
    out = []
    for c in form:
        if c.isupper():
            k = "X"
        elif c.isalpha():
            k = "x"
        elif c.isdigit():
            k = "d"
        elif c.isascii():
            k = c
        else:
            k = "o"
        if not out or out[-1] != k:
            out.append(k)
    return "".join(out[:12])


def _flags(form: str) -> int:
    letters = [c for c in form if c.isalpha()]
    f = 0
    f |= any(c.isdigit() for c in form) << 0
    f |= any(c.isupper() for c in form) << 1
    f |= (len(letters) > 1 and all(c.isupper() for c in letters)) << 2
    f |= form[:1].isupper() << 3
    f |= ("-" in form) << 4
    f |= ("." in form) << 5
    f |= (not letters) << 6
    f |= (not form.isascii()) << 7
    n = len(form)
    bucket = n if n <= 5 else 6 if n <= 7 else 7 if n <= 10 else 8
    return f | bucket << _FLAG_BITS


class Lexicon:
    """The atoms of word forms (module docstring), computed once per form and cached."""

    def __init__(self, max_cache: int = 500_000):
        self._cache: dict[str, np.ndarray] = {}
        self.max_cache = max_cache
        self._root = np.full(N_ATOMS, ROOT_ATOM, dtype=np.uint64)

    def word(self, form: str) -> np.ndarray:
        """(N_ATOMS,) uint64 atoms of one form."""
        got = self._cache.get(form)
        if got is not None:
            return got
        low = form.lower()
        a = [string_hash(low), string_hash(form)]
        for k in range(1, N_SUF + 1):
            a.append(string_hash(low[-k:] if len(low) >= k else "^" + low))
        for k in range(1, N_PRE + 1):
            a.append(string_hash(low[:k] if len(low) >= k else low + "$"))
        a.append(string_hash(shape(form)))
        a.append(_flags(form))
        got = np.array(a, dtype=np.uint64)
        if len(self._cache) < self.max_cache:
            self._cache[form] = got
        return got

    def sentence(self, forms) -> np.ndarray:
        """(n + 1, N_ATOMS) uint64 atoms of the words ``forms[1:]`` (row 0: the root)."""
        rows = [self._root]
        rows.extend(self.word(f) for f in forms[1:])
        return np.stack(rows)


@nb.njit(cache=True, inline="always")
def _atom(atoms, j, col):
    if j < 0:
        return np.uint64(BOS_ATOM)
    if j >= atoms.shape[0]:
        return np.uint64(EOS_ATOM)
    return atoms[j, col]


@nb.njit(cache=True, inline="always")
def _tag(tags, j):
    if j < 0:
        return BOS_ATOM
    if j == 0:
        return ROOT_ATOM
    if j >= tags.shape[0]:
        return EOS_ATOM
    return tags[j] + TAG_OFFSET


@nb.njit(cache=True)
def tag_features(atoms, tags, i, stage2, buf):
    """Class-free feature hashes of word ``i`` into ``buf``; returns how many.

    Parameters
    ----------
    atoms : (N, N_ATOMS) uint64
        :meth:`Lexicon.sentence`.
    tags : (N,) int64
        Predicted UPOS ids (read only if ``stage2``).
    i : int
        The word (1..N-1).
    stage2 : bool
        Add the UPOS templates (XPOS and FEATS tasks) after the others.
    buf : (MAX_TAG_FEATS,) uint64

    Returns
    -------
    k1, k : int
        The number of stage-1 features (they come first) and of all features.
    """
    w = atoms[i, A_LOWER]
    wl1 = _atom(atoms, i - 1, A_LOWER)
    wl2 = _atom(atoms, i - 2, A_LOWER)
    wr1 = _atom(atoms, i + 1, A_LOWER)
    wr2 = _atom(atoms, i + 2, A_LOWER)
    suf3 = atoms[i, A_SUF + 2]
    sh = atoms[i, A_SHAPE]
    k = 0
    buf[k] = start(T.TAG_BIAS, 0)
    k += 1
    buf[k] = start(T.TAG_W, w)
    k += 1
    buf[k] = start(T.TAG_FORM, atoms[i, A_FORM])
    k += 1
    for s in range(N_SUF):
        buf[k] = fold(start(T.TAG_SUFK, s), atoms[i, A_SUF + s])
        k += 1
    for s in range(N_PRE):
        buf[k] = fold(start(T.TAG_PREK, s), atoms[i, A_PRE + s])
        k += 1
    buf[k] = start(T.TAG_SHAPE, sh)
    k += 1
    fl = atoms[i, A_FLAGS]
    for b in range(_FLAG_BITS):
        if fl & (np.uint64(1) << np.uint64(b)):
            buf[k] = start(T.TAG_FLAG, b)
            k += 1
    buf[k] = start(T.TAG_LEN, fl >> np.uint64(_FLAG_BITS))
    k += 1
    buf[k] = start(T.TAG_WL1, wl1)
    k += 1
    buf[k] = start(T.TAG_WL2, wl2)
    k += 1
    buf[k] = start(T.TAG_WR1, wr1)
    k += 1
    buf[k] = start(T.TAG_WR2, wr2)
    k += 1
    buf[k] = fold(start(T.TAG_WL1_W, wl1), w)
    k += 1
    buf[k] = fold(start(T.TAG_W_WR1, w), wr1)
    k += 1
    buf[k] = fold(start(T.TAG_WL1_WR1, wl1), wr1)
    k += 1
    buf[k] = fold(start(T.TAG_WL2_WL1, wl2), wl1)
    k += 1
    buf[k] = fold(start(T.TAG_WR1_WR2, wr1), wr2)
    k += 1
    buf[k] = start(T.TAG_SUF3L1, _atom(atoms, i - 1, A_SUF + 2))
    k += 1
    buf[k] = start(T.TAG_SUF3R1, _atom(atoms, i + 1, A_SUF + 2))
    k += 1
    buf[k] = fold(fold(start(T.TAG_SHAPEL1_SHAPE_SHAPER1, _atom(atoms, i - 1, A_SHAPE)), sh),
                 _atom(atoms, i + 1, A_SHAPE))
    k += 1
    buf[k] = fold(start(T.TAG_FIRST_SHAPE, 1 if i == 1 else 0), sh)
    k += 1
    buf[k] = fold(start(T.TAG_SUF3_WL1, suf3), wl1)
    k += 1
    buf[k] = fold(start(T.TAG_SUF3_WR1, suf3), wr1)
    k += 1
    k1 = k
    if stage2:
        p = _tag(tags, i)
        pl1 = _tag(tags, i - 1)
        pr1 = _tag(tags, i + 1)
        buf[k] = start(T.TAG_P, p)
        k += 1
        buf[k] = fold(start(T.TAG_P_W, p), w)
        k += 1
        buf[k] = fold(start(T.TAG_P_FORM, p), atoms[i, A_FORM])
        k += 1
        for s in range(4):
            buf[k] = fold(fold(start(T.TAG_P_SUFK, s), p), atoms[i, A_SUF + s])
            k += 1
        buf[k] = fold(start(T.TAG_PL1_P, pl1), p)
        k += 1
        buf[k] = fold(start(T.TAG_P_PR1, p), pr1)
        k += 1
        buf[k] = fold(fold(start(T.TAG_PL1_P_PR1, pl1), p), pr1)
        k += 1
        buf[k] = fold(fold(start(T.TAG_PL2_PL1_P, _tag(tags, i - 2)), pl1), p)
        k += 1
        buf[k] = fold(fold(start(T.TAG_P_PR1_PR2, p), pr1), _tag(tags, i + 2))
        k += 1
        buf[k] = fold(start(T.TAG_P_WL1, p), wl1)
        k += 1
        buf[k] = fold(start(T.TAG_P_WR1, p), wr1)
        k += 1
        buf[k] = fold(start(T.TAG_P_SHAPE, p), sh)
        k += 1
    return k1, k


@nb.njit(cache=True)
def tag_bases(atoms, tags, stage2):
    """:func:`tag_features` of every word: ``(N, MAX_TAG_FEATS)`` uint64 and the counts of
    stage-1 features and of all features, (N,) int64 each."""
    N = atoms.shape[0]
    bases = np.zeros((N, MAX_TAG_FEATS), dtype=np.uint64)
    c1 = np.zeros(N, dtype=np.int64)
    c2 = np.zeros(N, dtype=np.int64)
    for i in range(1, N):
        c1[i], c2[i] = tag_features(atoms, tags, i, stage2, bases[i])
    return bases, c1, c2


@nb.njit(cache=True)
def lemma_features(atoms, upos, xpos, bundle, feat_ptr, feat_ids, i, buf):
    """Class-free feature hashes of word ``i`` for the lemmatizer; returns how many.

    ``upos``/``xpos`` are predicted tag ids, ``bundle`` the hash of each word's FEATS, and
    ``feat_ids[feat_ptr[i]:feat_ptr[i + 1]]`` the hashes of its single features.
    """
    w = atoms[i, A_LOWER]
    p = _tag(upos, i)
    x = _tag(xpos, i)
    fb = bundle[i]
    sh = atoms[i, A_SHAPE]
    suf2 = atoms[i, A_SUF + 1]
    suf3 = atoms[i, A_SUF + 2]
    k = 0
    buf[k] = start(T.LEM_BIAS, 0)
    k += 1
    buf[k] = start(T.LEM_W, w)
    k += 1
    buf[k] = start(T.LEM_FORM, atoms[i, A_FORM])
    k += 1
    for s in range(N_SUF):
        buf[k] = fold(start(T.LEM_SUFK, s), atoms[i, A_SUF + s])
        k += 1
        buf[k] = fold(fold(start(T.LEM_P_SUFK, s), p), atoms[i, A_SUF + s])
        k += 1
    for s in range(N_PRE):
        buf[k] = fold(start(T.LEM_PREK, s), atoms[i, A_PRE + s])
        k += 1
    buf[k] = start(T.LEM_SHAPE, sh)
    k += 1
    buf[k] = fold(start(T.LEM_FIRST_SHAPE, 1 if i == 1 else 0), sh)
    k += 1
    buf[k] = start(T.LEM_P, p)
    k += 1
    buf[k] = fold(start(T.LEM_P_W, p), w)
    k += 1
    buf[k] = start(T.LEM_FEATS, fb)
    k += 1
    buf[k] = fold(start(T.LEM_P_FEATS, p), fb)
    k += 1
    buf[k] = fold(start(T.LEM_FEATS_SUF3, fb), suf3)
    k += 1
    buf[k] = start(T.LEM_X, x)
    k += 1
    buf[k] = fold(start(T.LEM_X_SUF3, x), suf3)
    k += 1
    buf[k] = start(T.LEM_WL1, _atom(atoms, i - 1, A_LOWER))
    k += 1
    wr1 = _atom(atoms, i + 1, A_LOWER)
    buf[k] = start(T.LEM_WR1, wr1)
    k += 1
    buf[k] = fold(start(T.LEM_P_WR1, p), wr1)
    k += 1
    for j in range(feat_ptr[i], min(feat_ptr[i + 1], feat_ptr[i] + MAX_FEAT)):
        f = feat_ids[j]
        buf[k] = start(T.LEM_FEAT, f)
        k += 1
        buf[k] = fold(start(T.LEM_P_FEAT, p), f)
        k += 1
        buf[k] = fold(start(T.LEM_FEAT_SUF2, f), suf2)
        k += 1
    return k


@nb.njit(cache=True)
def lemma_bases(atoms, upos, xpos, bundle, feat_ptr, feat_ids):
    """:func:`lemma_features` of every word: ``(N, MAX_LEMMA_FEATS)`` uint64 and counts."""
    N = atoms.shape[0]
    bases = np.zeros((N, MAX_LEMMA_FEATS), dtype=np.uint64)
    counts = np.zeros(N, dtype=np.int64)
    for i in range(1, N):
        counts[i] = lemma_features(atoms, upos, xpos, bundle, feat_ptr, feat_ids, i, bases[i])
    return bases, counts


@nb.njit(cache=True, inline="always")
def _dot(a, b):
    """``a . b`` with eight running sums (independent additions pipeline; a single running
    sum is bound by the latency of each addition)."""
    D = a.shape[0]
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    d = 0
    while d + 8 <= D:
        s0 += a[d] * b[d]
        s1 += a[d + 1] * b[d + 1]
        s2 += a[d + 2] * b[d + 2]
        s3 += a[d + 3] * b[d + 3]
        s4 += a[d + 4] * b[d + 4]
        s5 += a[d + 5] * b[d + 5]
        s6 += a[d + 6] * b[d + 6]
        s7 += a[d + 7] * b[d + 7]
        d += 8
    while d < D:
        s0 += a[d] * b[d]
        d += 1
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))


# nogil: the parse's helper thread runs meanwhile (Engine.iter_parsed)
@nb.njit(cache=True, nogil=True)
def candidate_scores(bases, counts, salt, w, mask, full, vec, dense, ptr, ids, out):
    """Scores of the candidate classes of every word of a sentence for one task.

    Parameters
    ----------
    bases, counts : (N, F) uint64, (N,) int64
        Class-free feature hashes (:func:`tag_bases`, :func:`lemma_bases`).
    salt : uint64
        The task's salt: class ``y`` of feature ``f`` has weight ``w[(mix(f, salt) + y) & mask]``.
    w : (2**bits,) float
        Hashed weights.
    mask : uint64
    full : (N, C) float
        The dense features' scores of every word for every class (``V @ W.T``, one matrix
        product per sentence, for tasks whose candidates are all classes), or (N, 0).
    vec, dense : (N, D), (C, D) float
        Otherwise: the dense features ``V`` of the words and their weights ``W`` per class,
        multiplied here for the candidates only (D may be 0: no dense features).
    ptr, ids : (N + 1,) int64, (M,) int64
        Candidates of word ``i``: ``ids[ptr[i]:ptr[i + 1]]``.
    out : (M,) float64
        Receives the score of each candidate.
    """
    N = bases.shape[0]
    has_full = full.shape[1] > 0
    has_vec = vec.shape[1] > 0
    for i in range(1, N):
        a = ptr[i]
        b = ptr[i + 1]
        for c in range(a, b):
            if has_full:
                out[c] = full[i, ids[c]]
            elif has_vec:
                out[c] = _dot(dense[ids[c]], vec[i])
            else:
                out[c] = 0.0
        for f in range(counts[i]):
            row = mix(bases[i, f], salt)
            for c in range(a, b):
                out[c] += w[np.int64((row + np.uint64(ids[c])) & mask)]
