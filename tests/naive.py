"""Slow, obviously-correct twins of the decoders in :mod:`depparse.decode`, used as test oracles.

Pure Python and numpy, no numba, and no code from ``depparse``: the part semantics below are
written from the tensor encoding documented in :mod:`depparse.decode.part_table`, independently of
``score_tree`` (the tests check that the two agree).

Conventions: ``scores[h, m]``, root 0, ``N = n + 1``, ``heads[0] = -1``.

Full model (Koo et al. 2010, Sec. 3 Example 1 and Sec. 5 Example 3).  For every head ``h`` and
every side, the modifiers of ``h`` on that side are read *outwards* (closest first) and framed
by START (encoded as ``h`` itself) and END (``0`` on the left side, ``N`` on the right side).
Each consecutive pair ``(s, m)`` of that sequence scores ``sibling[h, s, m]`` and, for
``h >= 1`` with head ``g = heads[h]``, also ``grandsib[g, h, s, m]``; every modifier ``m`` of
``h >= 1`` scores ``grand[g, h, m]``.  The root has only a right side and no grandparent.
"""

from __future__ import annotations

import itertools

import numpy as np

__all__ = [
    "all_trees",
    "all_projective_trees",
    "is_tree",
    "is_projective",
    "naive_arc_score",
    "naive_score",
    "head_parts",
    "tree_parts",
    "best_arc_factored",
    "best_full",
    "tree_scores_full",
    "brute_head_automaton",
]

_TREES: dict = {}
_INDEX: dict = {}


# ---------------------------------------------------------------------------------------------
# trees
# ---------------------------------------------------------------------------------------------


def is_tree(heads) -> bool:
    """True when ``heads`` is a tree rooted at 0: ``heads[0] == -1``, every word has a head in
    ``0..n`` other than itself, and following heads from any word reaches 0 (no cycle)."""
    heads = [int(x) for x in heads]
    N = len(heads)
    if N < 1 or heads[0] != -1:
        return False
    for m in range(1, N):
        if not (0 <= heads[m] < N) or heads[m] == m:
            return False
    for m in range(1, N):
        seen = set()
        v = m
        while v != 0:
            if v in seen:
                return False
            seen.add(v)
            v = heads[v]
    return True



def assert_tree(heads, N, single_root=False, arc=None, projective=False):
    """Assert that a decoder's output is a valid int64 tree of ``N`` nodes (optionally with one
    root child, only finite arcs of ``arc``, projective)."""
    assert heads.dtype == np.int64 and heads.shape == (N,)
    assert heads[0] == -1 and is_tree(heads), heads
    if single_root:
        assert int((heads[1:] == 0).sum()) == 1, heads
    if arc is not None:
        assert all(np.isfinite(arc[heads[m], m]) for m in range(1, N)), heads
    if projective:
        assert is_projective(heads), heads

def _ancestors(heads, m):
    out = set()
    v = m
    while v != -1:
        out.add(v)
        v = heads[v]
    return out  # m itself and everything above it, root included


def is_projective(heads) -> bool:
    """True when every arc ``h -> m`` dominates every word strictly between ``h`` and ``m``
    (the root is at position 0, left of every word)."""
    heads = [int(x) for x in heads]
    for m in range(1, len(heads)):
        h = heads[m]
        for k in range(min(h, m) + 1, max(h, m)):
            if h not in _ancestors(heads, k):
                return False
    return True


def all_trees(n: int, single_root: bool = False) -> np.ndarray:
    """Every tree rooted at 0 over ``n`` words, as an ``(T, n+1)`` int64 array (cached,
    read-only: copy rows before handing them to a kernel, for which a read-only array is
    another signature to compile).

    Enumerates all ``n^n`` head assignments with :func:`itertools.product` and keeps trees;
    with ``single_root`` only those with exactly one word attached to the root.
    """
    key = ("all", n, bool(single_root))
    if key not in _TREES:
        if single_root:
            full = all_trees(n, False)
            trees = full[(full[:, 1:] == 0).sum(axis=1) == 1]
        else:
            choices = [[h for h in range(n + 1) if h != m] for m in range(1, n + 1)]
            rows = [(-1,) + hs for hs in itertools.product(*choices) if is_tree((-1,) + hs)]
            trees = np.array(rows, dtype=np.int64).reshape(len(rows), n + 1)
        trees.setflags(write=False)
        _TREES[key] = trees
    return _TREES[key]


def all_projective_trees(n: int, single_root: bool = False) -> np.ndarray:
    """Every projective tree over ``n`` words (filtered from :func:`all_trees`; cached)."""
    key = ("proj", n, bool(single_root))
    if key not in _TREES:
        full = all_trees(n, single_root)
        trees = full[[is_projective(t) for t in full]]
        trees.setflags(write=False)
        _TREES[key] = trees
    return _TREES[key]


# ---------------------------------------------------------------------------------------------
# parts and scores
# ---------------------------------------------------------------------------------------------


def head_parts(h: int, mods, N: int, g=None):
    """The higher-order parts of head ``h`` with modifier set ``mods`` and head ``g`` of ``h``.

    Returns ``(sib, grand, gsib)``: lists of index tuples into ``sibling`` ``(h, s, m)``,
    ``grand`` ``(g, h, m)`` and ``grandsib`` ``(g, h, s, m)``.  ``g = None`` means no
    grandparent (the root, or a sibling-only model): then ``grand`` and ``gsib`` are empty.
    """
    mods = set(int(m) for m in mods)
    left = [m for m in range(h - 1, 0, -1) if m in mods]  # outwards
    right = [m for m in range(h + 1, N) if m in mods]
    sides = [(right, N)] if h == 0 else [(left, 0), (right, N)]
    sib, grand, gsib = [], [], []
    for side_mods, end in sides:
        seq = [h] + side_mods + [end]  # START is encoded as h
        for s, m in zip(seq[:-1], seq[1:], strict=True):
            sib.append((h, s, m))
            if g is not None:
                gsib.append((g, h, s, m))
        if g is not None:
            grand.extend((g, h, m) for m in side_mods)
    return sib, grand, gsib


def tree_parts(heads, use_g: bool):
    """All parts of a tree: ``(arcs, sib, grand, gsib)`` as lists of index tuples."""
    heads = [int(x) for x in heads]
    N = len(heads)
    arcs = [(heads[m], m) for m in range(1, N)]
    sib, grand, gsib = [], [], []
    for h in range(N):
        mods = [m for m in range(1, N) if heads[m] == h]
        g = heads[h] if (use_g and h > 0) else None
        s, gr, gs = head_parts(h, mods, N, g)
        sib += s
        grand += gr
        gsib += gs
    return arcs, sib, grand, gsib


def naive_arc_score(heads, scores) -> float:
    """Sum of ``scores[heads[m], m]`` over the words."""
    return float(sum(scores[int(heads[m]), m] for m in range(1, len(heads))))


def naive_score(heads, arc, sibling=None, grand=None, grandsib=None) -> float:
    """Full-model score of a tree, one part at a time (missing tensors count as zero; the
    grandparent parts are used when ``grand`` or ``grandsib`` is given)."""
    use_g = grand is not None or grandsib is not None
    arcs, sib, gr, gs = tree_parts(heads, use_g)
    total = 0.0
    for i in arcs:
        total += arc[i]
    if sibling is not None:
        for i in sib:
            total += sibling[i]
    if grand is not None:
        for i in gr:
            total += grand[i]
    if grandsib is not None:
        for i in gs:
            total += grandsib[i]
    return float(total)


def _flat(idx_lists, shape, width):
    """Flat indices into ``array.ravel()`` padded with ``prod(shape)`` (a zero slot)."""
    size = int(np.prod(shape))
    out = np.full((len(idx_lists), max(width, 1)), size, dtype=np.int64)
    for r, idx in enumerate(idx_lists):
        if idx:
            out[r, : len(idx)] = np.ravel_multi_index(tuple(np.array(idx).T), shape)
    return out


def _index(trees: np.ndarray, use_g: bool):
    """Per-tree padded flat part indices (cached per tree set), built from :func:`tree_parts`."""
    key = (id(trees), trees.shape, use_g)
    if key not in _INDEX:
        N = trees.shape[1]
        parts = [tree_parts(t, use_g) for t in trees]
        width = 3 * N + 1
        _INDEX[key] = (
            trees,  # keep the array alive so its id stays unique
            _flat([p[0] for p in parts], (N, N), width),
            _flat([p[1] for p in parts], (N, N, N + 1), width),
            _flat([p[2] for p in parts], (N, N, N), width),
            _flat([p[3] for p in parts], (N, N, N, N + 1), width),
        )
    return _INDEX[key][1:]


def _gather(tensor, idx):
    padded = np.append(np.asarray(tensor, dtype=np.float64).ravel(), 0.0)
    return padded[idx].sum(axis=1)


def tree_scores_full(trees, arc, sibling=None, grand=None, grandsib=None) -> np.ndarray:
    """Full-model scores of every tree in ``trees`` (vectorised :func:`naive_score`)."""
    use_g = grand is not None or grandsib is not None
    ia, isib, igr, igs = _index(trees, use_g)
    total = _gather(arc, ia)
    if sibling is not None:
        total = total + _gather(sibling, isib)
    if grand is not None:
        total = total + _gather(grand, igr)
    if grandsib is not None:
        total = total + _gather(grandsib, igs)
    return total


def _argmax(trees, scores):
    if len(trees) == 0:
        return None, -np.inf
    k = int(np.argmax(scores))
    if scores[k] == -np.inf:
        return None, -np.inf
    return trees[k].copy(), float(scores[k])


def best_arc_factored(scores, single_root=False, projective=False):
    """Brute-force best tree under arc scores: ``(heads, value)``, or ``(None, -inf)`` when no
    tree has a finite score."""
    scores = np.asarray(scores, dtype=np.float64)
    n = scores.shape[0] - 1
    trees = (all_projective_trees if projective else all_trees)(n, single_root)
    if n == 0:
        return np.array([-1], dtype=np.int64), 0.0
    vals = scores[trees[:, 1:], np.arange(1, n + 1)].sum(axis=1)
    return _argmax(trees, vals)


def best_full(arc, sibling=None, grand=None, grandsib=None, single_root=False, projective=False):
    """Brute-force best tree under the full model: ``(heads, value)`` or ``(None, -inf)``."""
    n = np.asarray(arc).shape[0] - 1
    trees = (all_projective_trees if projective else all_trees)(n, single_root)
    return _argmax(trees, tree_scores_full(trees, arc, sibling, grand, grandsib))


# ---------------------------------------------------------------------------------------------
# head automata
# ---------------------------------------------------------------------------------------------


def automaton_value(h, mods, g, arc, sibling, grand=None, grandsib=None, u=None, v=None):
    """Objective of the automaton of head ``h`` for modifier set ``mods`` and grandparent ``g``
    (``None`` for none): ``f_h + sum_m (arc[h, m] - u[h, m]) - v[g, h]``."""
    N = arc.shape[0]
    sib, gr, gs = head_parts(h, mods, N, g)
    total = 0.0
    for i in sib:
        total += sibling[i]
    for i in gr:
        total += 0.0 if grand is None else grand[i]
    for i in gs:
        total += 0.0 if grandsib is None else grandsib[i]
    for m in mods:
        total += arc[h, m] - (0.0 if u is None else u[h, m])
    if g is not None and v is not None:
        total -= v[g, h]
    return float(total)


def brute_head_automaton(h, arc, sibling, grand=None, grandsib=None, u=None, v=None,
                         single_root=False, grandparents=False):
    """Best ``(mods, g, value)`` of the automaton of head ``h`` by enumeration.

    Modifier sets range over all subsets of the words ``m >= 1``, ``m != h`` with a finite
    ``arc[h, m]`` (exactly one of them for ``h = 0`` with ``single_root``).  With
    ``grandparents`` and ``h >= 1``, ``g`` ranges over the words with finite ``arc[g, h]``;
    otherwise ``g`` is ``None``.  ``mods`` is a sorted tuple; ``(None, None, -inf)`` when
    there is no feasible choice.
    """
    arc = np.asarray(arc, dtype=np.float64)
    N = arc.shape[0]
    cands = [m for m in range(1, N) if m != h and np.isfinite(arc[h, m])]
    if h == 0 and single_root:
        subsets = [(m,) for m in cands]
    else:
        subsets = [c for r in range(len(cands) + 1) for c in itertools.combinations(cands, r)]
    if grandparents and h > 0:
        gps = [g for g in range(N) if g != h and np.isfinite(arc[g, h])]
    else:
        gps = [None]
    best = (None, None, -np.inf)
    for g in gps:
        for mods in subsets:
            val = automaton_value(h, mods, g, arc, sibling, grand, grandsib, u, v)
            if best[0] is None or val > best[2]:
                best = (mods, g, val)
    return best


# ---------------------------------------------------------------------------------------------
# part tables (the production layout): an independent scorer and an exact ILP oracle
# ---------------------------------------------------------------------------------------------
#
# Written from the layout documented in depparse/decode/part_table.py, not from its code: for head
# ``h``, grandparent slot ``gi`` (grandparent ``gp[gp_off[h] + gi]``, or -1 for none) and side
# ``d``, the ``L = cand_len[h, d]`` candidates ``cand[cand_off[h, d]:][:L]`` are listed outwards;
# the table ``T`` at ``tab_off[gp_off[h] + gi, d]`` is ``(L+1) x (L+1)`` row-major and
# ``T[p, q]`` scores taking candidate ``q`` (``q = L``: END) right after state ``p`` (0 START,
# ``i + 1`` after candidate ``i``).  A tree scores its arcs plus, for every head, the
# transitions of both sides in the slot of its own head (slot 0 for the root and sibling
# models).


def _slot(h, heads, gp, gp_off, gp_len):
    if gp_len[h] == 1 and gp[gp_off[h]] == -1:
        return 0
    for gi in range(gp_len[h]):
        if gp[gp_off[h] + gi] == heads[h]:
            return gi
    return None


def table_score(heads, arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off):
    """Full-model score of ``heads`` from a part table (``-inf`` if it uses a pruned arc)."""
    heads = [int(x) for x in heads]
    N = len(heads)
    total = 0.0
    for m in range(1, N):
        total += arc[heads[m], m]
    for h in range(N):
        gi = _slot(h, heads, gp, gp_off, gp_len)
        if gi is None:
            return -np.inf
        for d in range(2):
            L = int(cand_len[h, d])
            c = [int(x) for x in cand[cand_off[h, d]:cand_off[h, d] + L]]
            o = int(tab_off[gp_off[h] + gi, d])
            T = np.asarray(tab[o:o + (L + 1) * (L + 1)]).reshape(L + 1, L + 1)
            p = 0
            for q in range(L):
                if heads[c[q]] == h:
                    total += T[p, q]
                    p = q + 1
            total += T[p, L]
    return float(total)


def ilp_best(arc, cand, cand_off, cand_len, gp, gp_off, gp_len, tab, tab_off, single_root,
             time_limit=600.0, tags=None):
    """Exact best tree of a part table as an integer linear program, solved by HiGHS.

    Variables: ``a[h, m]`` (binary) for the kept arcs, one head per word; and for every
    automaton (head, grandparent slot, side) a transition variable ``t[p, q]`` in ``[0, 1]``
    for each finite ``T[p, q]``: a path from START to END whose flow enters the slot iff the
    slot's grandparent arc is chosen (always for slot -1), passes through candidate ``i`` of
    ``h`` iff ``a[h, c_i]`` (summed over the slots), and conserves flow at every candidate.
    Given integral arcs the path is unique, so ``t`` needs no integrality.  Objective:
    ``sum arc * a + sum T * t``.  Acyclicity by cutting planes (Riedel and Clarke 2006): solve,
    and while the arcs contain a cycle ``C``, add ``sum_{h, m in C} a[h, m] <= |C| - 1`` and
    solve again; an optimum of a relaxation that is a tree is an optimum of the ILP.

    Returns ``(heads, value, rounds)``, ``(None, -inf, rounds)`` when there is no tree;
    raises RuntimeError when HiGHS does not prove optimality.

    ``tags``: joint tagging and parsing (the layout of ``depparse.decode.joint``'s tag table,
    as a tuple ``(ptr, ids, emit, trans, doff, dtab, ok)``, ``ok`` None for all allowed).
    Then the objective adds the tag chain and the tag-dependent arc scores ``D``: a binary
    ``x[i, j]`` per candidate ``j`` of word ``i`` (one per word; ``ok`` false: fixed to 0),
    scored ``emit`` (plus ``trans`` from START for word 1 and to END for word n); a transition
    variable ``q[i, j', j]`` in ``[0, 1]`` between consecutive words with
    ``sum_j q = x[i-1, j']`` and ``sum_j' q = x[i, j]``, scored ``trans``; and for every kept
    arc a pair variable ``p[h, m, a, b]`` in ``[0, 1]`` scored ``D(h, m, a, b)`` with
    ``sum_{a, b} p = arc[h, m]``, ``sum_b p <= x[h, a]`` and ``sum_a p <= x[m, b]``: given
    integral arcs and tags, ``p`` is 1 exactly on the arc's chosen tags, so neither ``q`` nor
    ``p`` needs integrality.  Returns ``(heads, tags, value, rounds)`` then (``tags[i]``: the
    chosen candidate index of word ``i``, ``-1`` at the root).
    """
    import highspy

    arc = np.asarray(arc, dtype=np.float64)
    N = arc.shape[0]
    cost, lo, hi, integ = [], [], [], []
    rows = []  # (lower, upper, {col: coef})

    def var(c, lower, upper, integer):
        cost.append(float(c))
        lo.append(lower)
        hi.append(upper)
        integ.append(integer)
        return len(cost) - 1

    a = {}
    for h in range(N):
        for m in range(1, N):
            if h != m and np.isfinite(arc[h, m]):
                a[h, m] = var(arc[h, m], 0.0, 1.0, True)
    for m in range(1, N):
        rows.append((1.0, 1.0, {a[h, m]: 1.0 for h in range(N) if (h, m) in a}))
    x = {}
    if tags is not None:
        ptr, ids, emit, trans, doff, dtab, ok = tags
        S = trans.shape[0] - 1
        K = [1] + [int(ptr[i + 1] - ptr[i]) for i in range(1, N)]
        for i in range(1, N):
            for j in range(K[i]):
                c = int(ptr[i]) + j
                cost_ = emit[c] + (trans[S, ids[c]] if i == 1 else 0.0)
                cost_ += trans[ids[c], S] if i == N - 1 else 0.0
                x[i, j] = var(cost_, 0.0, 0.0 if ok is not None and not ok[c] else 1.0, True)
            rows.append((1.0, 1.0, {x[i, j]: 1.0 for j in range(K[i])}))
        for i in range(2, N):
            out_ = {jp: {x[i - 1, jp]: -1.0} for jp in range(K[i - 1])}
            in_ = {j: {x[i, j]: -1.0} for j in range(K[i])}
            for jp in range(K[i - 1]):
                for j in range(K[i]):
                    q = var(trans[ids[ptr[i - 1] + jp], ids[ptr[i] + j]], 0.0, 1.0, False)
                    out_[jp][q] = 1.0
                    in_[j][q] = 1.0
            rows.extend((0.0, 0.0, r) for r in out_.values())
            rows.extend((0.0, 0.0, r) for r in in_.values())
        for (h, m), j in a.items():
            o = int(doff[h, m])
            total = {j: -1.0}
            by_a = {ah: {x[h, ah]: -1.0} for ah in range(K[h])} if h else {}
            by_b = {bm: {x[m, bm]: -1.0} for bm in range(K[m])}
            for ah in range(K[h]):
                for bm in range(K[m]):
                    pv = var(dtab[o + ah * K[m] + bm], 0.0, 1.0, False)
                    total[pv] = 1.0
                    if h:
                        by_a[ah][pv] = 1.0
                    by_b[bm][pv] = 1.0
            rows.append((0.0, 0.0, total))
            rows.extend((-np.inf, 0.0, r) for r in by_a.values())
            rows.extend((-np.inf, 0.0, r) for r in by_b.values())
    if single_root:
        rows.append((1.0, 1.0, {a[0, m]: 1.0 for m in range(1, N) if (0, m) in a}))
    for h in range(N):
        for d in range(2):
            L = int(cand_len[h, d])
            c = [int(x) for x in cand[cand_off[h, d]:cand_off[h, d] + L]]
            link = [{a[h, c[i]]: -1.0} for i in range(L)]  # sum over slots of inflow = a
            for gi in range(int(gp_len[h])):
                g = int(gp[gp_off[h] + gi])
                o = int(tab_off[gp_off[h] + gi, d])
                T = np.asarray(tab[o:o + (L + 1) * (L + 1)]).reshape(L + 1, L + 1)
                t = {}
                for p in range(L + 1):
                    for q in range(p, L + 1):
                        if np.isfinite(T[p, q]):
                            t[p, q] = var(T[p, q], 0.0, 1.0, False)
                start = {t[0, q]: 1.0 for q in range(L + 1) if (0, q) in t}
                if g >= 0:
                    start[a[g, h]] = -1.0
                    rows.append((0.0, 0.0, start))
                else:
                    rows.append((1.0, 1.0, start))
                for i in range(L):
                    cons = {}
                    for p in range(i + 1):
                        if (p, i) in t:
                            cons[t[p, i]] = cons.get(t[p, i], 0.0) + 1.0
                            link[i][t[p, i]] = 1.0
                    for q in range(i + 1, L + 1):
                        if (i + 1, q) in t:
                            cons[t[i + 1, q]] = cons.get(t[i + 1, q], 0.0) - 1.0
                    rows.append((0.0, 0.0, cons))
            for i in range(L):
                rows.append((0.0, 0.0, link[i]))
    lp = highspy.HighsLp()
    lp.num_col_ = len(cost)
    lp.num_row_ = len(rows)
    lp.col_cost_ = np.array(cost)
    lp.col_lower_ = np.array(lo)
    lp.col_upper_ = np.array(hi)
    lp.row_lower_ = np.array([r[0] for r in rows])
    lp.row_upper_ = np.array([r[1] for r in rows])
    lp.sense_ = highspy.ObjSense.kMaximize
    start, index, value = [0], [], []
    for r in rows:
        for j, v in r[2].items():
            index.append(j)
            value.append(v)
        start.append(len(index))
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.array(start, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(value)
    lp.integrality_ = [highspy.HighsVarType.kInteger if k else highspy.HighsVarType.kContinuous
                       for k in integ]
    solver = highspy.Highs()
    solver.setOptionValue("output_flag", False)
    solver.setOptionValue("mip_rel_gap", 0.0)
    solver.setOptionValue("mip_abs_gap", 1e-9)
    solver.setOptionValue("time_limit", float(time_limit))
    solver.setOptionValue("threads", 1)
    solver.setOptionValue("presolve", "off")  # measured: 2x faster on these LPs
    solver.passModel(lp)
    rounds = 0
    while True:
        rounds += 1
        solver.run()
        status = solver.getModelStatus()
        if status == highspy.HighsModelStatus.kInfeasible:
            return (None, -np.inf, rounds) if tags is None else (None, None, -np.inf, rounds)
        if status != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError("HiGHS did not prove optimality: "
                               + solver.modelStatusToString(status))
        sol = np.asarray(solver.getSolution().col_value)
        heads = np.full(N, -1, dtype=np.int64)
        for (h, m), j in a.items():
            if sol[j] > 0.5:
                heads[m] = h
        cycles = _cycles(heads)
        if not cycles:
            value = float(solver.getInfo().objective_function_value)
            if tags is None:
                return heads, value, rounds
            chosen = np.full(N, -1, dtype=np.int64)
            for (i, j), col in x.items():
                if sol[col] > 0.5:
                    chosen[i] = j
            return heads, chosen, value, rounds
        for cyc in cycles:
            members = set(cyc)
            idx = [a[h, m] for (h, m) in a if h in members and m in members]
            solver.addRow(-np.inf, float(len(cyc) - 1), len(idx), np.array(idx, dtype=np.int32),
                          np.ones(len(idx)))


def _cycles(heads):
    """The cycles of a head assignment (lists of words); empty for a tree."""
    N = len(heads)
    state = [0] * N  # 0 new, 1 on the current walk, 2 done
    out = []
    for s in range(1, N):
        walk = []
        v = s
        while v > 0 and state[v] == 0:
            state[v] = 1
            walk.append(v)
            v = int(heads[v])
        if v > 0 and state[v] == 1:
            out.append(walk[walk.index(v):])
        for w in walk:
            state[w] = 2
    return out


# ---------------------------------------------------------------------------------------------
# joint tagging and parsing (depparse.decode.joint)
# ---------------------------------------------------------------------------------------------


def chain_value(tags, emit, trans):
    """The tag chain's score of the candidate indices ``tags[1:]`` (``tags[0]`` ignored):
    ``trans[START, t_1] + sum_i emit[i][k_i] + sum trans[t_{i-1}, t_i] + trans[t_n, END]``
    with START / END the last row / column of ``trans``; ``emit[i][k]`` and the tag ids
    ``ids[i][k]`` are passed as pairs ``emit[i] = [(id, score), ...]``."""
    S = trans.shape[0] - 1
    prev = S
    total = 0.0
    for i in range(1, len(tags)):
        t, e = emit[i][tags[i]]
        total += trans[prev, t] + e
        prev = t
    return float(total + trans[prev, S]) if len(tags) > 1 else 0.0


def joint_best(arc, sibling, grand, grandsib, emit, trans, D, single_root=False, allowed=None):
    """Brute force over every (tree, tag sequence): the best ``(heads, tags, value)`` of
    ``F = full model(heads) + chain(tags) + sum_m D[h_m, m, k_{h_m}, k_m]`` (``k_0 = 0``),
    ``emit`` as in :func:`chain_value`, ``allowed[i]`` the allowed candidate indices of word
    ``i`` (default: all).  ``(None, None, -inf)`` when there is none."""
    n = arc.shape[0] - 1
    trees = all_trees(n, single_root)
    if len(trees) == 0:
        return None, None, -np.inf
    tscores = tree_scores_full(trees, arc, sibling, grand, grandsib)
    choices = [range(len(emit[i])) if allowed is None else allowed[i] for i in range(1, n + 1)]
    best = (None, None, -np.inf)
    for ks in itertools.product(*choices):
        tags = (0,) + tuple(ks)
        c = chain_value(tags, emit, trans)
        total = tscores + c
        for m in range(1, n + 1):
            h = trees[:, m]
            kh = np.where(h == 0, 0, np.array(tags)[h])
            total = total + D[h, m, kh, tags[m]]
        k = int(np.argmax(total))
        if total[k] > best[2]:
            best = (trees[k], np.array((-1,) + tuple(ks)), float(total[k]))
    return best
