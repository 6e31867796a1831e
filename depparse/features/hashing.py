"""Feature hashing (Numba): every feature is a tuple of small integers, hashed to a weight.

A feature is a template id (:mod:`depparse.features.templates`) followed by the ids of its
atoms (words, tags, classes, distances ...).  :func:`template` starts the hash of a template,
:func:`mix` folds in one atom after another (the splitmix64 finaliser, a 64-bit
multiply-xorshift).  The parser's kernels call :func:`emit` / :func:`emit_pair` with a template id
and a tuple of atoms; they write the final index ``hash & mask`` into a buffer, once per
conjunction (direction, direction and distance ...), unless the model leaves that template
out (the switches ``on``, one per template id: structured sparsity, Martins et al. 2011).
The small helpers here are Numba's ``inline="always"`` (the feature kernels compile to
straight-line arithmetic), but :func:`emit` and :func:`emit_pair` are kernels of their own,
called: inlined at the level of Numba's IR into the more than a hundred places that call them,
they made :func:`~.parts.arc_features` alone take 48 s of CPU to compile instead of 3.9 s, and
no faster afterwards (20,000 calls: 0.17 s inlined, 0.11 s called; ``benchmarks/compile_time.py``
gives the compile time per kernel).

Since the hash folds the atoms in order, the atoms that many parts share at the front of a
template (the head's, for every modifier of a head) can be folded once: the part kernels of
:mod:`.parts` keep such prefix states and finish each part with :func:`fold` and
:func:`emit_hashed` / :func:`emit_pair_hashed`, the same indices as :func:`emit` /
:func:`emit_pair` with every atom.  :func:`start` and :func:`fold` are :func:`template` and
:func:`mix` as called kernels, for the same reason as :func:`emit`.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..encoding.ids import BOS, CLUSTER_SHIFT, EOS

__all__ = ["CFINE", "CSHIFT", "RECORD", "TID_SHIFT", "ctx", "dist_bucket", "dot", "mix", "emit",
           "emit_hashed", "emit_pair", "emit_pair_hashed", "fold", "split_recorded", "start",
           "tags_between", "template"]

#: The fine class of a contextual class code is ``code & CFINE``, the coarse ``code >> CSHIFT``
#: (:func:`depparse.encoding.ids.cluster_code`).
CSHIFT = np.int64(CLUSTER_SHIFT)
CFINE = np.int64((1 << CLUSTER_SHIFT) - 1)

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)

#: ``on[tid]`` (the template switches of :func:`emit`): emit and record the template's id
#: in the bits from :data:`TID_SHIFT` up (weight indices have at most 30 bits).
RECORD = 2
TID_SHIFT = 40


@nb.njit(cache=True, inline="always")
def mix(hv, x):
    """Fold the integer ``x`` into the running hash ``hv`` (splitmix64 finaliser)."""
    z = (hv ^ np.uint64(x)) * _M1
    z = (z ^ (z >> _S30)) * _M2
    z = (z ^ (z >> _S27)) * _M3
    return z ^ (z >> _S31)


@nb.njit(cache=True, inline="always")
def template(tmpl, a):
    """The hash of template ``tmpl`` with its first atom ``a``."""
    return mix(mix(np.uint64(tmpl), a), 7)


@nb.njit(cache=True, inline="always")
def _hash(tid, atoms):
    """The hash of template ``tid`` with the atoms of the tuple ``atoms`` (all integers)."""
    hv = template(tid, atoms[0])
    for i in range(1, len(atoms)):
        hv = mix(hv, atoms[i])
    return hv


@nb.njit(cache=True, inline="always")
def _index(hv, att, mask, tid, on):
    v = np.int64(mix(hv, att) & mask)
    if on[tid] == RECORD:
        v |= np.int64(tid) << TID_SHIFT
    return v


@nb.njit(cache=True)
def emit(buf, k, on, tid, atoms, att, mask):
    """Emit one feature: ``buf[k] =`` the weight index of template ``tid`` over ``atoms``
    conjoined with ``att``; returns the new count.  Nothing is written when ``on[tid]`` is 0
    (a template the model leaves out); with ``on[tid] == RECORD`` the index carries ``tid``
    above :data:`TID_SHIFT` (group-lasso training: :func:`split_recorded`)."""
    if on[tid] == 0:
        return k
    buf[k] = _index(_hash(tid, atoms), att, mask, tid, on)
    return k + 1


@nb.njit(cache=True)
def emit_pair(buf, k, on, tid, atoms, att1, att2, mask):
    """Emit one feature twice (:func:`emit`): conjoined with ``att1`` and with ``att2``."""
    if on[tid] == 0:
        return k
    hv = _hash(tid, atoms)
    buf[k] = _index(hv, att1, mask, tid, on)
    buf[k + 1] = _index(hv, att2, mask, tid, on)
    return k + 2


@nb.njit(cache=True)
def emit_hashed(buf, k, on, tid, hv, att, mask):
    """:func:`emit` for a feature whose atoms are already folded into ``hv``
    (``template(tid, a0)`` and :func:`mix` of every further atom, in order): the same index,
    for kernels that hash the atoms shared by many parts once (a prefix) and finish each
    part from there."""
    if on[tid] == 0:
        return k
    buf[k] = _index(hv, att, mask, tid, on)
    return k + 1


@nb.njit(cache=True)
def emit_pair_hashed(buf, k, on, tid, hv, att1, att2, mask):
    """:func:`emit_pair` for a feature whose atoms are already folded into ``hv``
    (:func:`emit_hashed`)."""
    if on[tid] == 0:
        return k
    buf[k] = _index(hv, att1, mask, tid, on)
    buf[k + 1] = _index(hv, att2, mask, tid, on)
    return k + 2


@nb.njit(cache=True)
def start(tmpl, a):
    """:func:`template` as a called kernel, and :func:`fold` likewise :func:`mix`: for the
    kernels with many hash steps in one body (the part kernels of :mod:`.parts`; the label,
    tag and lemma features), whose calls would each be inlined at the level of Numba's IR.
    Inlined there, they tripled the compile time of the part kernels, and
    ``labels.sentence_bases`` took 12.6 s of CPU to compile instead of 4.8 s
    (``benchmarks/compile_time.py``); LLVM still inlines them, at no cost to run time."""
    return template(tmpl, a)


@nb.njit(cache=True)
def fold(hv, x):
    """:func:`mix` as a called kernel (:func:`start`)."""
    return mix(hv, x)


def split_recorded(idx):
    """Weight indices and template ids of indices written with ``on[tid] == RECORD``."""
    return idx & ((1 << TID_SHIFT) - 1), idx >> TID_SHIFT


@nb.njit(cache=True, inline="always")
def dot(w, buf, k):
    """``sum(w[buf[:k]])``: the score of the features in the buffer."""
    t = 0.0
    for i in range(k):
        t += w[buf[i]]
    return t


@nb.njit(cache=True, inline="always")
def dist_bucket(d):
    """Distance buckets 0-5, 6-7, 8-10, 11-14, 15-20, 21-30, 31+ as 0..11."""
    if d <= 5:
        return d
    if d <= 7:
        return 6
    if d <= 10:
        return 7
    if d <= 14:
        return 8
    if d <= 20:
        return 9
    if d <= 30:
        return 10
    return 11


@nb.njit(cache=True, inline="always")
def ctx(tags, i):
    """``tags[i]``, or ``<BOS>`` / ``<EOS>`` outside the sentence."""
    if i < 0:
        return BOS
    if i >= tags.shape[0]:
        return EOS
    return tags[i]


@nb.njit(cache=True, inline="always")
def tags_between(upos, i, j, tags, cnts, count):
    """The distinct UPOS strictly between positions ``i`` and ``j``, in order of first
    occurrence, into ``tags``, with their counts in ``cnts`` if ``count``; returns how many.

    Tags are told apart by their id modulo 64 (vocabularies hold far fewer UPOS).
    """
    lo = min(i, j)
    hi = max(i, j)
    seen = np.uint64(0)
    one = np.uint64(1)
    n = 0
    for b in range(lo + 1, hi):
        bp = upos[b]
        bit = one << np.uint64(bp & 63)
        if seen & bit:
            continue
        seen |= bit
        cnt = 0
        if count:
            for b2 in range(b, hi):
                if upos[b2] == bp:
                    cnt += 1
        tags[n] = bp
        cnts[n] = cnt
        n += 1
    return n
