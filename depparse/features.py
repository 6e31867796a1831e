"""Hashed part features (Numba), close to McDonald et al. (2005) and Carreras (2007).

Every feature is a tuple of small integers (a template id and the ids of its atoms), hashed
with a 64-bit multiply-xorshift mix into ``[0, 2^bits)``, the index of its weight.  Four part
families, as used by Koo et al. (2010, Sec. 6):

* **arc** ``(h, m)``: lower-cased forms, UPOS, lemmas, 3-letter prefixes and suffixes, their
  conjunctions (McDonald et al. 2005 unigram and bigram templates), the UPOS of the words in
  between (each distinct tag once), the surrounding UPOS ``h-1, h+1, m-1, m+1`` and the UD
  morphological features (FEATS) of each word paired with both UPOS.  Every template is
  emitted twice: conjoined with the direction alone, and with direction and bucketed distance.
* **sibling** ``(h, s, m)`` on one side of ``h``: ``s`` is the previous modifier or START,
  ``m`` the next or END (Koo et al. Example 1); conjoined with the direction.
* **grandparent** ``(g, h, m)``, conjoined with both directions.
* **grand-sibling** ``(g, h, s, m)``, at UPOS level.

Models with contextual word classes (:mod:`depparse.encoder`) add templates over the fine and
coarse classes of the words to the arc, sibling and grandparent families.

A single enumeration per family writes feature indices into a buffer; scoring (a dot product
with the weights) and learning (adding to the weights) both use it, so they cannot disagree.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .sentence import BOS, CLUSTER_SHIFT, END, EOS, START

__all__ = ["ARC", "SIB", "GRAND", "GSIB", "FEATURE_SET", "MAX_FEATS", "add_structure",
           "build_parts", "fill_scores", "structure_features"]

# Version of the feature templates.  Weights are only meaningful for the templates they were
# trained with: change this number whenever a template is added, removed or changed (model
# files record it and refuse to load under another one).
#   1: depparse 0.1 (first shipped model)
#   2: + sentence-boundary flags of arcs; UPOS between consecutive siblings, sibling
#      distance, (hp, sw, mw), (head lemma, sp, mp), distance of the last modifier to the
#      sentence edge; grandparent distances, lexicalised, contextual and morphological
#      grandparent templates, m beyond g; lexicalised and distance grand-sibling templates
# The templates of contextual word classes (depparse.encoder) are emitted only for models
# with ``context_layer > 0`` (``cluster[0] != 0``): for all other models the features are
# exactly those of set 2, so the number did not change when they were added.
FEATURE_SET = 2

# part families
ARC, SIB, GRAND, GSIB = 0, 1, 2, 3
MAX_FEATS = 1024  # size of the index buffer; no part has more features than this
MAX_MORPH = 24  # morphological features of a word that are used

_CSHIFT = np.int64(CLUSTER_SHIFT)
_CFINE = np.int64((1 << CLUSTER_SHIFT) - 1)

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)


@nb.njit(cache=True, inline="always")
def _mix(hv, x):
    """Fold the integer ``x`` into the running hash ``hv`` (splitmix64 finaliser)."""
    z = (hv ^ np.uint64(x)) * _M1
    z = (z ^ (z >> _S30)) * _M2
    z = (z ^ (z >> _S27)) * _M3
    return z ^ (z >> _S31)


@nb.njit(cache=True, inline="always")
def _t(tmpl, a):
    return _mix(_mix(np.uint64(tmpl), a), 7)


@nb.njit(cache=True, inline="always")
def _put(buf, k, hv, att, mask):
    buf[k] = np.int64(_mix(hv, att) & mask)
    return k + 1


@nb.njit(cache=True, inline="always")
def _put2(buf, k, hv, att1, att2, mask):
    buf[k] = np.int64(_mix(hv, att1) & mask)
    buf[k + 1] = np.int64(_mix(hv, att2) & mask)
    return k + 2


@nb.njit(cache=True, inline="always")
def _dist_bucket(d):
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
def _ctx(upos, i):
    if i < 0:
        return BOS
    if i >= upos.shape[0]:
        return EOS
    return upos[i]


@nb.njit(cache=True, inline="always")
def _tags_between(upos, i, j, tags, cnts, count):
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


@nb.njit(cache=True)
def arc_features(h, m, form, lemma, upos, xpos, prefix, suffix, cluster, feat_ptr, feat_ids,
                 mask, buf):
    """Write the indices of the features of arc ``h -> m`` into ``buf``; return their count."""
    d = 1 if m > h else 0
    dist = abs(m - h)
    a1 = np.uint64(1 + d)  # direction
    a2 = np.uint64(16 + d * 32 + _dist_bucket(dist))  # direction and distance
    hw = form[h]
    hp = upos[h]
    hl = lemma[h]
    mw = form[m]
    mp = upos[m]
    ml = lemma[m]
    k = 0
    k = _put2(buf, k, _t(1, 0), a1, a2, mask)  # bias
    k = _put2(buf, k, _mix(_t(2, hw), hp), a1, a2, mask)
    k = _put2(buf, k, _t(3, hw), a1, a2, mask)
    k = _put2(buf, k, _t(4, hp), a1, a2, mask)
    k = _put2(buf, k, _mix(_t(5, mw), mp), a1, a2, mask)
    k = _put2(buf, k, _t(6, mw), a1, a2, mask)
    k = _put2(buf, k, _t(7, mp), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_mix(_t(8, hw), hp), mw), mp), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_t(9, hp), mw), mp), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_t(10, hw), mw), mp), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_t(11, hw), hp), mp), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_t(12, hw), hp), mw), a1, a2, mask)
    k = _put2(buf, k, _mix(_t(13, hw), mw), a1, a2, mask)
    k = _put2(buf, k, _mix(_t(14, hp), mp), a1, a2, mask)
    # lemmas
    k = _put2(buf, k, _mix(_t(15, hl), ml), a1, a2, mask)
    k = _put2(buf, k, _mix(_t(16, hl), mp), a1, a2, mask)
    k = _put2(buf, k, _mix(_t(17, hp), ml), a1, a2, mask)
    k = _put2(buf, k, _mix(_t(18, hl), hp), a1, a2, mask)
    k = _put2(buf, k, _mix(_t(19, ml), mp), a1, a2, mask)
    # affixes
    k = _put2(buf, k, _mix(_t(20, suffix[h]), suffix[m]), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_t(21, suffix[h]), hp), mp), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_t(22, hp), suffix[m]), mp), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_t(23, prefix[h]), hp), mp), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_t(24, hp), prefix[m]), mp), a1, a2, mask)
    # XPOS (language-specific tags)
    hx = xpos[h]
    mx = xpos[m]
    k = _put2(buf, k, _mix(_t(70, hx), mx), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_t(71, hw), hx), mx), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_t(72, hx), mw), mx), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_t(73, hx), mx), hp), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_mix(_t(74, hx), _ctx(xpos, h + 1)), _ctx(xpos, m - 1)), mx),
              a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_mix(_t(75, _ctx(xpos, h - 1)), hx), mx), _ctx(xpos, m + 1)),
              a1, a2, mask)
    # word clusters (Koo et al. 2008), when the model has them: fine and coarse classes
    if cluster[0] != 0:
        hc = cluster[h] & _CFINE
        mc = cluster[m] & _CFINE
        hcc = cluster[h] >> _CSHIFT
        mcc = cluster[m] >> _CSHIFT
        k = _put2(buf, k, _mix(_t(200, hc), mc), a1, a2, mask)
        k = _put2(buf, k, _mix(_t(201, hcc), mcc), a1, a2, mask)
        k = _put2(buf, k, _mix(_mix(_t(202, hc), hp), mp), a1, a2, mask)
        k = _put2(buf, k, _mix(_mix(_t(203, hp), mc), mp), a1, a2, mask)
        k = _put2(buf, k, _mix(_mix(_mix(_t(204, hcc), hp), mcc), mp), a1, a2, mask)
        k = _put2(buf, k, _mix(_mix(_mix(_t(205, hc), hp), mc), mp), a1, a2, mask)
        k = _put2(buf, k, _mix(_t(206, hc), mw), a1, a2, mask)
        k = _put2(buf, k, _mix(_t(207, hw), mc), a1, a2, mask)
        k = _put2(buf, k, _mix(_mix(_t(208, hcc), hp), mp), a1, a2, mask)
        k = _put2(buf, k, _mix(_mix(_t(209, hp), mcc), mp), a1, a2, mask)
        k = _put2(buf, k, _mix(_t(210, hc), hp), a1, a2, mask)
        k = _put2(buf, k, _mix(_t(211, mc), mp), a1, a2, mask)
    # surrounding UPOS
    hpl = _ctx(upos, h - 1)
    hpr = _ctx(upos, h + 1)
    mpl = _ctx(upos, m - 1)
    mpr = _ctx(upos, m + 1)
    k = _put2(buf, k, _mix(_mix(_mix(_t(25, hp), hpr), mpl), mp), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_mix(_t(26, hpl), hp), mpl), mp), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_mix(_t(27, hp), hpr), mp), mpr), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_mix(_t(28, hpl), hp), mp), mpr), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_t(29, hp), hpr), mp), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_t(30, hp), mpl), mp), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_t(31, hpl), hp), mp), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_t(32, hp), mp), mpr), a1, a2, mask)
    # lexical context
    k = _put2(buf, k, _mix(_mix(_t(76, hw), mpl), mp), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_t(77, hw), mp), mpr), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_t(78, hpl), hp), mw), a1, a2, mask)
    k = _put2(buf, k, _mix(_mix(_t(79, hp), hpr), mw), a1, a2, mask)
    # sentence boundaries: the first and the last word (final punctuation, fronted phrases)
    N = form.shape[0]
    hb = 0 if h == 0 else (1 if h == 1 else 0) + (2 if h == N - 1 else 0)
    mb = (1 if m == 1 else 0) + (2 if m == N - 1 else 0)
    k = _put2(buf, k, _mix(_mix(_mix(_t(37, hp), mp), hb), mb), a1, a2, mask)
    k = _put(buf, k, _mix(_mix(_mix(_t(38, hp), mw), hb), mb), a1, mask)
    # UPOS in between (each distinct tag once), and how often each tag occurs (capped at 3)
    if dist > 1:
        tags = np.empty(64, dtype=np.int64)
        cnts = np.empty(64, dtype=np.int64)
        for j in range(_tags_between(upos, h, m, tags, cnts, True)):
            bp = tags[j]
            k = _put2(buf, k, _mix(_mix(_t(33, hp), bp), mp), a1, a2, mask)
            k = _put(buf, k, _mix(_mix(_mix(_t(36, hp), bp), mp), min(cnts[j], 3)), a1, mask)
    # morphology
    for j in range(feat_ptr[m], min(feat_ptr[m + 1], feat_ptr[m] + MAX_MORPH)):
        k = _put(buf, k, _mix(_mix(_t(34, hp), mp), feat_ids[j]), a1, mask)
    for j in range(feat_ptr[h], min(feat_ptr[h + 1], feat_ptr[h] + MAX_MORPH)):
        k = _put(buf, k, _mix(_mix(_t(35, hp), feat_ids[j]), mp), a1, mask)
    return k


@nb.njit(cache=True)
def sib_features(h, s, m, d, form, lemma, upos, xpos, cluster, mask, buf):
    """Features of the sibling transition ``s -> m`` of head ``h`` on side ``d``.

    ``s = -1`` is START, ``m = -1`` is END.
    """
    a = np.uint64(64 + d)
    hp = upos[h]
    hw = form[h]
    sp = START if s < 0 else upos[s]
    sw = START if s < 0 else form[s]
    mp = END if m < 0 else upos[m]
    mw = END if m < 0 else form[m]
    k = 0
    k = _put(buf, k, _mix(_mix(_t(40, hp), sp), mp), a, mask)
    k = _put(buf, k, _mix(_t(41, sp), mp), a, mask)
    k = _put(buf, k, _mix(_t(42, sw), mw), a, mask)
    k = _put(buf, k, _mix(_t(43, sw), mp), a, mask)
    k = _put(buf, k, _mix(_t(44, sp), mw), a, mask)
    k = _put(buf, k, _mix(_mix(_t(45, hw), sp), mp), a, mask)
    k = _put(buf, k, _mix(_mix(_t(46, hp), sw), mp), a, mask)
    k = _put(buf, k, _mix(_mix(_t(47, hp), sp), mw), a, mask)
    if s >= 0 and m >= 0:
        k = _put(buf, k, _mix(_mix(_mix(_t(48, hp), sp), mp), _dist_bucket(abs(m - s))), a,
                 mask)
    sx = START if s < 0 else xpos[s]
    mx = END if m < 0 else xpos[m]
    k = _put(buf, k, _mix(_mix(_t(49, xpos[h]), sx), mx), a, mask)
    k = _put(buf, k, _mix(_mix(_t(95, hp), sw), mw), a, mask)
    if m < 0:
        # how far the last modifier (or the head) is from the sentence edge on that side
        last = h if s < 0 else s
        rest = last - 1 if d == 0 else form.shape[0] - 1 - last
        k = _put(buf, k, _mix(_mix(_mix(_t(97, hp), sp), _dist_bucket(rest)), 0), a, mask)
    k = _put(buf, k, _mix(_mix(_t(96, lemma[h]), sp), mp), a, mask)
    if cluster[0] != 0:
        sc = START if s < 0 else cluster[s] & _CFINE
        mc = END if m < 0 else cluster[m] & _CFINE
        scc = START if s < 0 else cluster[s] >> _CSHIFT
        mcc = END if m < 0 else cluster[m] >> _CSHIFT
        k = _put(buf, k, _mix(_mix(_t(220, hp), sc), mc), a, mask)
        k = _put(buf, k, _mix(_t(221, sc), mc), a, mask)
        k = _put(buf, k, _mix(_mix(_t(222, hp), scc), mcc), a, mask)
        k = _put(buf, k, _mix(_mix(_t(223, cluster[h] & _CFINE), sp), mp), a, mask)
        k = _put(buf, k, _mix(_mix(_t(224, hp), sp), mc), a, mask)
        k = _put(buf, k, _mix(_mix(_t(225, hp), sc), mp), a, mask)
    if m >= 0:
        # the UPOS between the previous sibling (or the head) and m, each distinct tag once:
        # punctuation and conjunctions there are the evidence of coordination and clause
        # boundaries
        prev = h if s < 0 else s
        if abs(m - prev) > 1:
            tags = np.empty(64, dtype=np.int64)
            cnts = np.empty(64, dtype=np.int64)
            for j in range(_tags_between(upos, prev, m, tags, cnts, False)):
                bp = tags[j]
                k = _put(buf, k, _mix(_mix(_mix(_t(80, hp), sp), mp), bp), a, mask)
                k = _put(buf, k, _mix(_mix(_t(81, sp), mp), bp), a, mask)
        if s >= 0:
            k = _put(buf, k, _mix(_mix(_t(82, sp), mp), _dist_bucket(abs(m - s))), a, mask)
    return k


@nb.njit(cache=True)
def grand_features(g, h, m, form, upos, xpos, cluster, feat_ptr, feat_ids, mask, buf):
    """Features of the grandparent part ``g -> h -> m``."""
    a = np.uint64(128 + (2 if h > g else 0) + (1 if m > h else 0))
    gp = upos[g]
    gw = form[g]
    hp = upos[h]
    hw = form[h]
    mp = upos[m]
    mw = form[m]
    k = 0
    k = _put(buf, k, _mix(_mix(_t(50, gp), hp), mp), a, mask)
    k = _put(buf, k, _mix(_t(51, gp), mp), a, mask)
    k = _put(buf, k, _mix(_t(52, gw), mp), a, mask)
    k = _put(buf, k, _mix(_t(53, gp), mw), a, mask)
    k = _put(buf, k, _mix(_mix(_t(54, gw), hp), mp), a, mask)
    k = _put(buf, k, _mix(_mix(_t(55, gp), hw), mp), a, mask)
    k = _put(buf, k, _mix(_mix(_t(56, gp), hp), mw), a, mask)
    k = _put(buf, k, _mix(_t(57, gw), mw), a, mask)
    k = _put(buf, k, _mix(_mix(_t(58, xpos[g]), xpos[h]), xpos[m]), a, mask)
    k = _put(buf, k, _mix(_mix(_mix(_t(84, gp), hp), mp), _dist_bucket(abs(h - m))), a, mask)
    k = _put(buf, k, _mix(_mix(_mix(_t(85, gp), hp), mp), _dist_bucket(abs(g - h))), a, mask)
    k = _put(buf, k, _mix(_mix(_t(86, gw), hw), mp), a, mask)
    k = _put(buf, k, _mix(_mix(_t(87, gp), hw), mw), a, mask)
    k = _put(buf, k, _mix(_mix(_t(88, gw), hp), mw), a, mask)
    # does m lie between g and h, or beyond g (the configuration non-projectivity needs)?
    k = _put(buf, k, _mix(_mix(_mix(_t(89, gp), hp), mp), (m > g) == (h > g)), a, mask)
    k = _put(buf, k, _mix(_mix(_mix(_mix(_t(90, gp), hp), mp), _ctx(upos, m - 1)),
                          _ctx(upos, m + 1)), a, mask)
    k = _put(buf, k, _mix(_mix(_mix(_mix(_t(91, gp), _ctx(upos, h - 1)), hp), _ctx(upos, h + 1)),
                          mp), a, mask)
    k = _put(buf, k, _mix(_mix(_t(92, gw), hw), mw), a, mask)
    if cluster[0] != 0:
        gc = cluster[g] & _CFINE
        hc = cluster[h] & _CFINE
        mc = cluster[m] & _CFINE
        k = _put(buf, k, _mix(_mix(_t(230, gc), hp), mc), a, mask)
        k = _put(buf, k, _mix(_mix(_t(231, gp), hc), mc), a, mask)
        k = _put(buf, k, _mix(_mix(_t(232, gc), hc), mp), a, mask)
        k = _put(buf, k, _mix(_mix(_t(233, cluster[g] >> _CSHIFT), cluster[h] >> _CSHIFT),
                              cluster[m] >> _CSHIFT), a, mask)
        k = _put(buf, k, _mix(_t(234, gc), mc), a, mask)
    # morphology of m (VerbForm, PronType, Case ...) with the UPOS of g and h
    for j in range(feat_ptr[m], min(feat_ptr[m + 1], feat_ptr[m] + 6)):
        k = _put(buf, k, _mix(_mix(_mix(_t(93, gp), hp), mp), feat_ids[j]), a, mask)
    return k


@nb.njit(cache=True)
def gsib_features(g, h, s, m, d, form, upos, mask, buf):
    """UPOS-level features of the grand-sibling part ``(g, h, s, m)`` (START/END as -1)."""
    a = np.uint64(256 + (2 if h > g else 0) + d)
    gp = upos[g]
    hp = upos[h]
    sp = START if s < 0 else upos[s]
    mp = END if m < 0 else upos[m]
    k = 0
    k = _put(buf, k, _mix(_mix(_mix(_t(60, gp), hp), sp), mp), a, mask)
    k = _put(buf, k, _mix(_mix(_t(61, gp), sp), mp), a, mask)
    k = _put(buf, k, _mix(_mix(_mix(_t(62, form[g]), hp), sp), mp), a, mask)
    sw = START if s < 0 else form[s]
    mw = END if m < 0 else form[m]
    k = _put(buf, k, _mix(_mix(_t(63, gp), sp), mw), a, mask)
    k = _put(buf, k, _mix(_mix(_t(64, gp), sw), mp), a, mask)
    k = _put(buf, k, _mix(_mix(_mix(_t(65, gp), hp), sw), mw), a, mask)
    if s >= 0 and m >= 0:
        k = _put(buf, k, _mix(_mix(_mix(_mix(_t(66, gp), hp), sp), mp), _dist_bucket(abs(m - s))),
                 a, mask)
    return k


@nb.njit(cache=True, inline="always")
def _dot(w, buf, k):
    t = 0.0
    for i in range(k):
        t += w[buf[i]]
    return t


@nb.njit(cache=True)
def fill_scores(form, lemma, upos, xpos, prefix, suffix, cluster, feat_ptr, feat_ids, w, mask,
                order, keep, cand, cand_off, cand_len, gp, gp_off, gp_len, tab_off, arc, tab):
    """Score every kept part of a sentence: ``arc`` (N, N) and the automaton tables ``tab``.

    ``order`` is 0 (arcs only), 1 (+ siblings) or 2 (+ grandparents and grand-siblings).
    Layout of the tables: :mod:`depparse.decode.parts`.
    """
    N = form.shape[0]
    buf = np.empty(MAX_FEATS, dtype=np.int64)
    for h in range(N):
        for m in range(N):
            if m != 0 and m != h and keep[h, m]:
                k = arc_features(h, m, form, lemma, upos, xpos, prefix, suffix, cluster, feat_ptr,
                                 feat_ids, mask, buf)
                arc[h, m] = _dot(w, buf, k)
            else:
                arc[h, m] = -np.inf
    if order == 0:
        return
    Wm = 1
    for h in range(N):
        for d in range(2):
            if cand_len[h, d] + 1 > Wm:
                Wm = cand_len[h, d] + 1
    S = np.empty((Wm, Wm))
    G = np.empty(Wm)
    for h in range(N):
        for d in range(2):
            L = cand_len[h, d]
            c0 = cand_off[h, d]
            W1 = L + 1
            if h == 0 and d == 0:
                for gi in range(gp_len[h]):
                    tab[tab_off[gp_off[h] + gi, d]] = 0.0  # the root has no left side
                continue
            for p in range(W1):
                s = -1 if p == 0 else cand[c0 + p - 1]
                for q in range(p, W1):
                    m = -1 if q == L else cand[c0 + q]
                    k = sib_features(h, s, m, d, form, lemma, upos, xpos, cluster, mask, buf)
                    S[p, q] = _dot(w, buf, k)
            for gi in range(gp_len[h]):
                g = gp[gp_off[h] + gi]
                o = tab_off[gp_off[h] + gi, d]
                if order == 2 and g >= 0:
                    for q in range(L):
                        k = grand_features(g, h, cand[c0 + q], form, upos, xpos, cluster,
                                           feat_ptr, feat_ids, mask, buf)
                        G[q] = _dot(w, buf, k)
                    G[L] = 0.0
                for p in range(W1):
                    s = -1 if p == 0 else cand[c0 + p - 1]
                    for q in range(W1):
                        if q < p:
                            tab[o + p * W1 + q] = -np.inf
                            continue
                        v = S[p, q]
                        if order == 2 and g >= 0:
                            m = -1 if q == L else cand[c0 + q]
                            k = gsib_features(g, h, s, m, d, form, upos, mask, buf)
                            v += G[q] + _dot(w, buf, k)
                        tab[o + p * W1 + q] = v


@nb.njit(cache=True, inline="always")
def _append(out, n, buf, k):
    if n + k > out.shape[0]:
        new = np.empty(max(2 * out.shape[0], n + k), dtype=np.int64)
        new[:n] = out[:n]
        out = new
    out[n:n + k] = buf[:k]
    return out, n + k


@nb.njit(cache=True)
def structure_features(form, lemma, upos, xpos, prefix, suffix, cluster, feat_ptr, feat_ids, mask,
                       order, mods, gpar, only):
    """Feature indices (with repetitions) of a structure in Z, for the automata ``only[h]``.

    The structure is given per head automaton: ``mods[h, m]`` (is ``m`` a modifier of ``h``)
    and ``gpar[h]`` (the grandparent chosen by automaton ``h``; ignored unless ``order == 2``).
    Its parts are those scored by :func:`fill_scores`: every chosen arc, the sibling
    transitions START -> m_1 -> ... -> END on each side, and the grandparent and
    grand-sibling parts.
    """
    N = form.shape[0]
    buf = np.empty(MAX_FEATS, dtype=np.int64)
    out = np.empty(4096, dtype=np.int64)
    n = 0
    for h in range(N):
        if not only[h]:
            continue
        g = gpar[h] if (order == 2 and h > 0) else -1
        for d in range(2):
            s = -1
            if d == 0:
                start, stop, step = h - 1, 0, -1
            else:
                start, stop, step = h + 1, N, 1
            for m in range(start, stop, step):
                if not mods[h, m]:
                    continue
                k = arc_features(h, m, form, lemma, upos, xpos, prefix, suffix, cluster, feat_ptr,
                                 feat_ids, mask, buf)
                out, n = _append(out, n, buf, k)
                if order >= 1:
                    k = sib_features(h, s, m, d, form, lemma, upos, xpos, cluster, mask, buf)
                    out, n = _append(out, n, buf, k)
                if g >= 0:
                    k = grand_features(g, h, m, form, upos, xpos, cluster, feat_ptr, feat_ids, mask,
                                           buf)
                    out, n = _append(out, n, buf, k)
                    k = gsib_features(g, h, s, m, d, form, upos, mask, buf)
                    out, n = _append(out, n, buf, k)
                s = m
            if order >= 1 and not (h == 0 and d == 0):
                k = sib_features(h, s, -1, d, form, lemma, upos, xpos, cluster, mask, buf)
                out, n = _append(out, n, buf, k)
                if g >= 0:
                    k = gsib_features(g, h, s, -1, d, form, upos, mask, buf)
                    out, n = _append(out, n, buf, k)
    return out[:n]


@nb.njit(cache=True)
def _update(w, acc, c, idx, scale):
    for i in range(idx.shape[0]):
        j = idx[i]
        w[j] += scale
        acc[j] += c * scale


@nb.njit(cache=True)
def _diff_stats(w, plus, minus):
    """``(w . (phi+ - phi-), ||phi+ - phi-||^2)`` for two lists of feature indices."""
    a = np.sort(plus)
    b = np.sort(minus)
    dot = 0.0
    for i in range(a.shape[0]):
        dot += w[a[i]]
    for i in range(b.shape[0]):
        dot -= w[b[i]]
    # merge the sorted lists to get the count of each feature in the difference
    norm = 0.0
    i = 0
    j = 0
    while i < a.shape[0] or j < b.shape[0]:
        if j >= b.shape[0] or (i < a.shape[0] and a[i] < b[j]):
            x = a[i]
        else:
            x = b[j]
        cnt = 0
        while i < a.shape[0] and a[i] == x:
            cnt += 1
            i += 1
        while j < b.shape[0] and b[j] == x:
            cnt -= 1
            j += 1
        norm += cnt * cnt
    return dot, norm


def add_structure(form, lemma, upos, xpos, prefix, suffix, cluster, feat_ptr, feat_ids, mask, order,
                  mods, gpar, only, w, acc, c, scale):
    """Add ``scale`` times the feature vector of a structure in Z to the weights.

    Arguments as in :func:`structure_features`.  For averaging, ``acc`` receives
    ``c * scale`` for each feature (Daume's trick: the average is ``w - acc / c``).
    """
    idx = structure_features(form, lemma, upos, xpos, prefix, suffix, cluster, feat_ptr, feat_ids,
                             mask, order, mods, gpar, only)
    _update(w, acc, c, idx, scale)


def build_parts(enc, keep, w, bits, order):
    """Score the kept parts of an encoded sentence into a :class:`~depparse.decode.PartTable`.

    Parameters
    ----------
    enc : depparse.sentence.Encoded
    keep : (N, N) bool
        Kept arcs (pruning).
    w : float64 array of size ``2**bits``
    order : int
        0 arcs only, 1 bigram siblings, 2 grandparent + siblings.
    """
    from .decode.parts import PartTable, build_layout

    N = enc.n + 1
    cand, cand_off, cand_len, gp, gp_off, gp_len, tab_off, size = build_layout(keep, order == 2)
    arc = np.empty((N, N))
    tab = np.zeros(size) if order == 0 else np.empty(size)  # order 0: no transition scores
    fill_scores(*enc.arrays(), w, np.uint64((1 << bits) - 1), order, keep, cand, cand_off,
                cand_len, gp, gp_off, gp_len, tab_off, arc, tab)
    return PartTable(arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off, order == 2)
