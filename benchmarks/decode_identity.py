"""Does a change to decode/ leave every decoding exactly as it was?  Record, then compare.

Usage::

    python benchmarks/decode_identity.py record OUT.json [--limit N]
    python benchmarks/decode_identity.py compare BEFORE.json AFTER.json [--prefix]
    python benchmarks/decode_identity.py compile        # cold compile time (fresh cache)
    python benchmarks/decode_identity.py time [--repeat 3]   # CPU seconds of decoding alone

``record``: every en_ewt dev sentence parsed (heads only) with the shipped model
(``depparse.load()``) under four decodings: the default (proofs: dual decomposition, then
branch and bound), ``--no-proof`` (``proof=False``, K = 5000, Koo et al.'s steps),
``solver="ad3"`` with proofs and AD3 without them (K = 5000: the first
:data:`AD3_NO_PROOF_SENTENCES` sentences only).  For each sentence and decoding: the heads,
the iterations (first run and branch and bound), the certificate, the proof kind, the
branch-and-bound nodes, ``timed_out``, and a hash of the bit patterns of the dual, primal and
recomputed traces and of the best-tree history (any change of rounding shows).  Then the
synthetic part tables of ``synthetic_cases`` (sibling, grandparent+sibling and head-bigram
models, projective, single- and multi-root, forbidden arcs, tied scores): every field of
:class:`~depparse.decode.DualResult` (multipliers and counts hashed) for subgradient runs
with both step rules and for AD3, and of :class:`~depparse.decode.ExactResult` for the
proofs with both solvers and both split rules.

Joint tagging and parsing (:mod:`depparse.decode.joint`): the first :data:`JOINT_SENTENCES`
dev sentences (of ``--limit``) through ``Engine.joint_table`` (the tagger's candidate UPOS,
the defaults of ``JointSettings``), decoded by ``decode_joint`` (proofs) and by
``joint_decompose`` (K = 5000, no proofs), and random joint tables (every model, ties,
forbidden arcs and candidates, one to three candidates per word) under ``joint_decompose``
with both step rules and ``decode_joint``: every field of ``JointResult`` (the warm start's
multipliers and counts and the traces hashed) and of ``JointExact`` but its seconds.

``compare``: the number of differing fields, per decoding, and the first differences; exit
status 1 when anything differs.  With ``--prefix``, a record of the first sentences only
(``record --limit``) is compared with the same sentences of a full one, and the decodings
that one record holds alone (an older record without joint decoding) are left out.

``compile``: CPU seconds (and wall seconds) of the first parse of a sentence (every kernel
of the parse compiled, a fresh ``NUMBA_CACHE_DIR``; run it in a fresh process), then of the
first ``--no-proof`` parse, the first AD3 parse and the first decodings of a head-bigram
table (kernels not yet compiled by the parse); the second parse for comparison.  Compiling
is single-threaded: its CPU time is the figure to compare on a shared machine.

``time``: CPU seconds (``time.process_time``, less sensitive than the wall clock to the other
jobs of a shared machine) of decoding alone, the part tables of en_ewt dev built beforehand:
``decode_exact`` (the default proofs), ``dual_decompose`` with K = 5000 (``--no-proof``) and
``decode_exact`` with AD3; then ``decode_joint`` and ``joint_decompose`` (K = 5000) on the
joint tables of the first :data:`JOINT_SENTENCES`; best of ``--repeat`` passes (``--limit N``:
the first ``N`` dev sentences only).  Run it for
two versions back to back (the other with ``PYTHONPATH`` at its checkout: this script's
``time`` runs an older checkout's package too) to compare their speed.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import sys
import tempfile
import time

import numpy as np

NEG_INF = -np.inf


def digest(*arrays) -> str:
    """Hash of the exact bytes (dtype and shape included) of some arrays (None allowed)."""
    h = hashlib.sha1()
    for a in arrays:
        if a is None:
            h.update(b"None")
            continue
        a = np.ascontiguousarray(a)
        h.update(str(a.dtype).encode() + str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]


def fhex(x) -> str:
    return float(x).hex()


def parse_record(r) -> dict:
    """The fields of a ParseResult that decoding decides (not its seconds)."""
    changes = r.best_changes or []
    return {"heads": [int(h) for h in r.heads], "certificate": bool(r.certificate),
            "iterations": int(r.iterations), "proof": r.proof, "optimal": bool(r.optimal),
            "nodes": int(r.nodes), "bnb_iterations": int(r.bnb_iterations),
            "timed_out": bool(r.timed_out),
            "traces": digest(r.dual, r.primal, r.recomputed),
            "changes": [int(k) for k, _ in changes],
            "change_heads": digest(*[h for _, h in changes])}


def dual_record(r) -> dict:
    """Every field of a DualResult."""
    return {"heads": [int(h) for h in r.heads], "certificate": bool(r.certificate),
            "iterations": int(r.iterations), "score": fhex(r.score), "bound": fhex(r.bound),
            "pruned": bool(r.pruned), "timed_out": bool(r.timed_out),
            "oracle_calls": int(r.oracle_calls),
            "traces": digest(r.dual, r.primal, r.recomputed),
            "multipliers": digest(r.u, r.v, r.r), "counts": digest(r.counts),
            "changes": [int(k) for k, _ in r.best_changes],
            "change_heads": digest(*[h for _, h in r.best_changes])}


def exact_record(r) -> dict:
    """Every field of an ExactResult but its seconds."""
    return {"heads": [int(h) for h in r.heads], "score": fhex(r.score),
            "optimal": bool(r.optimal), "proof": r.proof, "certificate": bool(r.certificate),
            "iterations": int(r.iterations), "root_iterations": int(r.root_iterations),
            "nodes": int(r.nodes), "bound": fhex(r.bound), "timed_out": bool(r.timed_out),
            "traces": digest(r.dual, r.primal, r.recomputed),
            "changes": [int(k) for k, _ in r.best_changes],
            "change_heads": digest(*[h for _, h in r.best_changes])}


def joint_record(r) -> dict:
    """Every field of a JointResult or a JointExact but the seconds (arrays, the warm start's
    multipliers and counts hashed, floats by their bit pattern)."""
    out = {}
    for f in dataclasses.fields(r):
        x = getattr(r, f.name)
        if f.name.startswith("seconds"):
            continue
        if isinstance(x, tuple):  # the warm start, a named tuple of arrays and a count
            out[f.name] = digest(*[np.asarray(a) for a in x])
        elif x is None or isinstance(x, np.ndarray):
            out[f.name] = digest(x)
        elif isinstance(x, float):
            out[f.name] = fhex(x)
        else:
            out[f.name] = x if isinstance(x, str) else int(x)
    return out


#: joint decoding (tagging included) is recorded on the first dev sentences only
JOINT_SENTENCES = 400

#: AD3 without proofs runs to K = 5000 on every sentence it does not certify (about 0.5 s
#: each): it is recorded on the first sentences only
AD3_NO_PROOF_SENTENCES = 300


def decodings(default):
    return {"default": default,
            "no-proof": dataclasses.replace(default, proof=False),
            "ad3": dataclasses.replace(default, solver="ad3"),
            "ad3-no-proof": dataclasses.replace(default, solver="ad3", proof=False)}


def record_dev(limit=None) -> dict:
    import depparse
    from depparse.conllu import read_conllu
    from depparse.paths import treebank_file

    parser = depparse.load()
    sents = read_conllu(treebank_file("en_ewt", "dev"))[:limit]
    vocab = parser.model.vocab
    encs = [vocab.encode(s, v) for s, v in zip(sents, vocab.iter_context_vectors(sents),
                                                 strict=True)]
    keeps = [parser.engine.keep_mask(e) for e in encs]
    out = {}
    default = parser.decoding
    for name, dec in decodings(default).items():
        parser.set_decoding(dec)
        t0 = time.perf_counter()
        stop = AD3_NO_PROOF_SENTENCES if name == "ad3-no-proof" else len(encs)
        out[name] = [parse_record(parser.engine.decode(e, keep=k, trace=True))
                     for e, k in zip(encs[:stop], keeps[:stop], strict=True)]
        print(f"{name}: {len(out[name])} sentences in {time.perf_counter() - t0:.1f} s",
              file=sys.stderr, flush=True)
    parser.set_decoding(default)
    out.update(record_dev_joint(parser, sents[:JOINT_SENTENCES]))
    return out


def record_dev_joint(parser, sents) -> dict:
    """``decode_joint`` and ``joint_decompose`` on the joint tables of the shipped model."""
    from depparse.decode.joint import decode_joint, joint_decompose

    d = parser.decoding
    t0 = time.perf_counter()
    tables = [parser.engine.joint_table(s, single_root=d.single_root) for s in sents]
    print(f"joint tables: {len(tables)} sentences in {time.perf_counter() - t0:.1f} s",
          file=sys.stderr, flush=True)
    kw = dict(alpha=d.alpha, single_root=d.single_root, projective=d.projective)
    runs = {"joint": lambda ji: decode_joint(ji.parts, ji.tags,
                                             budget=d.first_budget(ji.parts.n), **kw),
            "joint-no-proof": lambda ji: joint_decompose(ji.parts, ji.tags,
                                                         max_iter=d.max_iter, **kw)}
    out = {}
    for name, f in runs.items():
        t0 = time.perf_counter()
        out[name] = [joint_record(f(ji)) for ji in tables]
        print(f"{name}: {len(out[name])} sentences in {time.perf_counter() - t0:.1f} s",
              file=sys.stderr, flush=True)
    return out


def synthetic_cases():
    """``(name, PartTable, single_root, projective)``: small random tables of every model."""
    from depparse.decode import compile_dense

    rng = np.random.default_rng(2024)
    cases = []
    for i in range(240):
        n = 2 + i % 9
        N = n + 1
        model = ("sib", "gs", "gsh")[i % 3]
        ties = i % 4 == 3
        draw = ((lambda s: rng.integers(-1, 2, size=s).astype(float)) if ties
                else rng.standard_normal)
        arc = draw((N, N))
        if i % 5 == 4:  # pruned arcs (a root arc kept for every word)
            forbid = rng.random((N, N)) < 0.3
            forbid[0, :] = False
            arc[forbid] = NEG_INF
        sib = draw((N, N, N + 1))
        gr = draw((N, N, N)) if model != "sib" else None
        gs = draw((N, N, N, N + 1)) if model != "sib" else None
        bg = draw((N, N, N)) if model == "gsh" else None
        single = i % 2 == 0
        projective = i % 7 == 6
        cases.append((f"{i}:{model}{'-ties' if ties else ''}", compile_dense(arc, sib, gr, gs, bg),
                      single, projective))
    return cases


def record_synthetic() -> dict:
    from depparse.decode import NoSpanningTreeError, ad3_decompose, decode_exact, dual_decompose

    runs = {
        "dual-koo": lambda t, kw: dual_record(dual_decompose(t, max_iter=300, **kw)),
        "dual-koo-K7": lambda t, kw: dual_record(dual_decompose(t, max_iter=7, **kw)),
        "dual-polyak": lambda t, kw: dual_record(dual_decompose(
            t, max_iter=300, step_rule="polyak", lam0=1.5, patience=5, max_halvings=3,
            incumbent=-1.0, **kw)),
        "ad3": lambda t, kw: dual_record(ad3_decompose(t, max_iter=200, **kw)),
        "exact": lambda t, kw: exact_record(decode_exact(t, budget=10, **kw)),
        "exact-heads": lambda t, kw: exact_record(decode_exact(t, budget=5, split="heads",
                                                               **kw)),
        "exact-koo": lambda t, kw: exact_record(decode_exact(t, budget=20, step_rule="koo",
                                                             **kw)),
        "exact-ad3": lambda t, kw: exact_record(decode_exact(t, budget=10, solver="ad3", **kw)),
    }
    out = {k: [] for k in runs}
    for name, table, single, projective in synthetic_cases():
        kw = dict(single_root=single, projective=projective)
        for run, f in runs.items():
            if run.endswith("ad3") and table.bigrams:
                continue  # AD3 has no head-bigram factor
            try:
                rec = f(table, kw)
            except NoSpanningTreeError:
                rec = "no tree"
            out[run].append([name, rec])
    out.update(record_synthetic_joint())
    return out


def synthetic_joint_cases():
    """``(name, PartTable, TagTable, single_root, projective)``: the tables of
    :func:`synthetic_cases` (head bigrams left out: joint decoding has none) with random
    candidate tags (one to three of ``S = 4`` per word), chain and tag-arc scores."""
    from depparse.decode.joint import TagTable

    rng = np.random.default_rng(2025)
    S = 4
    cases = []
    for name, table, single, projective in synthetic_cases():
        if table.bigrams:
            continue
        N = table.arc.shape[0]
        ties = "ties" in name
        draw = ((lambda s: rng.integers(-1, 2, size=s).astype(float)) if ties
                else rng.standard_normal)
        cands = [[]] + [list(rng.permutation(S)[:rng.integers(1, 4)]) for _ in range(N - 1)]
        escore = [[]] + [list(draw(len(c))) for c in cands[1:]]
        D = draw((N, N, 3, 3))
        D[0, :, 1:, :] = 0.0  # the root has one "candidate"
        tags = TagTable.dense(cands, escore, draw((S + 1, S + 1)), D)
        if len(cases) % 6 == 5:  # forbidden candidates (one kept per word)
            ok = rng.random(tags.ids.shape[0]) >= 0.3
            ok[tags.ptr[1:-1]] = True
            tags = dataclasses.replace(tags, ok=ok)
        cases.append((name, table, tags, single, projective))
    return cases


def record_synthetic_joint() -> dict:
    from depparse.decode import NoSpanningTreeError
    from depparse.decode.joint import decode_joint, joint_decompose

    runs = {
        "joint-koo": lambda p, t, kw: joint_decompose(p, t, max_iter=300, **kw),
        "joint-koo-K7": lambda p, t, kw: joint_decompose(p, t, max_iter=7, **kw),
        "joint-polyak": lambda p, t, kw: joint_decompose(
            p, t, max_iter=300, step_rule="polyak", lam0=1.5, patience=5, max_halvings=3,
            incumbent=-1.0, **kw),
        "joint-exact": lambda p, t, kw: decode_joint(p, t, budget=10, **kw),
        "joint-exact-n8": lambda p, t, kw: decode_joint(p, t, budget=3, node_iter=8, **kw),
    }
    out = {k: [] for k in runs}
    for name, parts, tags, single, projective in synthetic_joint_cases():
        kw = dict(single_root=single, projective=projective)
        for run, f in runs.items():
            try:
                rec = joint_record(f(parts, tags, kw))
            except NoSpanningTreeError:
                rec = "no tree"
            out[run].append([name, rec])
    return out


def cmd_record(args):
    out = {"dev": record_dev(args.limit), "synthetic": record_synthetic()}
    with open(args.out, "w") as f:
        json.dump(out, f)
    n = sum(len(v) for part in out.values() for v in part.values())
    print(f"recorded {n} decodings into {args.out}")


def cmd_compare(args):
    with open(args.before) as f:
        a = json.load(f)
    with open(args.after) as f:
        b = json.load(f)
    bad = 0
    total = 0
    for part in ("dev", "synthetic"):
        for run in sorted(set(a[part]) | set(b[part])):
            ra, rb = a[part].get(run), b[part].get(run)
            if args.prefix and (ra is None) != (rb is None):
                print(f"{part}/{run}: in one record only (not compared)")
                continue
            if args.prefix and part == "dev" and ra is not None and rb is not None:
                ra, rb = ra[:len(rb)], rb[:len(ra)]
            if ra is None or rb is None or len(ra) != len(rb):
                print(f"{part}/{run}: missing or different length")
                bad += 1
                continue
            diff = 0
            fields = 0
            for i, (x, y) in enumerate(zip(ra, rb, strict=True)):
                x = x[1] if part == "synthetic" else x
                y = y[1] if part == "synthetic" else y
                if isinstance(x, dict) and isinstance(y, dict):
                    for k in sorted(set(x) | set(y)):
                        fields += 1
                        if x.get(k) != y.get(k):
                            diff += 1
                            if diff <= 5:
                                print(f"{part}/{run}[{i}].{k}: {x.get(k)!r} != {y.get(k)!r}")
                else:
                    fields += 1
                    if x != y:
                        diff += 1
                        if diff <= 5:
                            print(f"{part}/{run}[{i}]: {x!r} != {y!r}")
            total += fields
            bad += diff
            print(f"{part}/{run}: {len(ra)} decodings, {fields} fields, {diff} differ")
    print(f"{'IDENTICAL' if bad == 0 else 'DIFFERENT'}: {bad} of {total} fields differ")
    return 1 if bad else 0


class _Clock:
    """Wall and CPU seconds since the last reading (compiling is single-threaded and CPU-bound:
    its CPU time is the figure to compare on a shared machine)."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def read(self):
        w, c = time.perf_counter(), time.process_time()
        out = (c - self.cpu, w - self.wall)
        self.wall, self.cpu = w, c
        return out


def cmd_compile(args):
    if "NUMBA_CACHE_DIR" not in os.environ:
        d = tempfile.mkdtemp(prefix="depparse-cold-")
        os.environ["NUMBA_CACHE_DIR"] = d
    print(f"NUMBA_CACHE_DIR={os.environ['NUMBA_CACHE_DIR']}; load {os.getloadavg()[0]:.1f}")
    clock = _Clock()
    import depparse
    from depparse.conllu import read_conllu
    from depparse.paths import treebank_file

    def show(what):
        cpu, wall = clock.read()
        print(f"{what}: {cpu:.1f} s CPU ({wall:.1f} s wall)", flush=True)
        return cpu

    parser = depparse.load()
    sents = read_conllu(treebank_file("en_ewt", "dev"))
    long = max(sents[:200], key=lambda s: s.n)
    show("import + load")
    enc = parser.model.vocab.encode(long)
    keep = parser.engine.keep_mask(enc)
    show("first encode + candidate arcs")
    parser.engine.part_table(enc, keep)
    show("first part table (fill_scores)")
    default = parser.decoding
    total = 0.0
    for name, dec in decodings(default).items():
        parser.set_decoding(dec)
        parser.engine.decode(enc, keep=keep)
        total += show(f"first decode, {name}")
    parser.set_decoding(default)
    from depparse.decode import compile_dense, decode_exact

    rng = np.random.default_rng(0)
    N = 5
    decode_exact(compile_dense(rng.standard_normal((N, N)), rng.standard_normal((N, N, N + 1)),
                               rng.standard_normal((N, N, N)),
                               rng.standard_normal((N, N, N, N + 1)),
                               rng.standard_normal((N, N, N))), budget=3)
    total += show("first proof of a head-bigram table")
    parser.engine.decode(enc, keep=keep)
    show("second decode, default")
    print(f"total compile of decoding: {total:.1f} s CPU; load {os.getloadavg()[0]:.1f}")


def cmd_time(args):
    import depparse
    from depparse.conllu import read_conllu
    from depparse.decode import decode_exact, dual_decompose
    from depparse.decode.joint import decode_joint, joint_decompose
    from depparse.paths import treebank_file

    parser = depparse.load()
    d = parser.decoding
    sents = read_conllu(treebank_file("en_ewt", "dev"))[:args.limit]
    vocab = parser.model.vocab
    tables = [parser.engine.part_table(vocab.encode(s, v))
              for s, v in zip(sents, vocab.iter_context_vectors(sents), strict=True)]
    kw = dict(alpha=d.alpha, single_root=d.single_root, projective=d.projective)
    runs = {"default (proofs)": lambda t: decode_exact(t, budget=d.first_budget(t.n),
                                                       history=False, **kw),
            "--no-proof (K = 5000)": lambda t: dual_decompose(t, max_iter=d.max_iter, **kw),
            "AD3 (proofs)": lambda t: decode_exact(t, budget=d.first_budget(t.n),
                                                   solver="ad3", history=False, **kw)}
    for f in runs.values():
        f(tables[0])  # compile
    print(f"depparse from {depparse.__file__}; {len(tables)} sentences; load "
          f"{os.getloadavg()[0]:.1f}")
    joint = [parser.engine.joint_table(s, single_root=d.single_root)
             for s in sents[:JOINT_SENTENCES]]
    jruns = {f"joint (proofs, {len(joint)} sentences)": lambda ji: decode_joint(
                 ji.parts, ji.tags, budget=d.first_budget(ji.parts.n), **kw),
             f"joint --no-proof (K = 5000, {len(joint)} sentences)": lambda ji: joint_decompose(
                 ji.parts, ji.tags, max_iter=d.max_iter, **kw)}
    for f in jruns.values():
        f(joint[0])  # compile
    for name, f, inputs in ([(k, f, tables) for k, f in runs.items()]
                            + [(k, f, joint) for k, f in jruns.items()]):
        best = np.inf
        for _ in range(args.repeat):
            t0 = time.process_time()
            for t in inputs:
                f(t)
            best = min(best, time.process_time() - t0)
        print(f"{name}: {best:.3f} s CPU (best of {args.repeat})", flush=True)
    print(f"load {os.getloadavg()[0]:.1f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("record")
    p.add_argument("out")
    p.add_argument("--limit", type=int)
    p = sub.add_parser("compare")
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--prefix", action="store_true")
    sub.add_parser("compile")
    p = sub.add_parser("time")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--limit", type=int, help="the first N dev sentences only")
    args = ap.parse_args(argv)
    return {"record": cmd_record, "compare": cmd_compare, "compile": cmd_compile,
            "time": cmd_time}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
