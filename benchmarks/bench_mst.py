"""Benchmark: our Chu-Liu-Edmonds against TurboParser's (ufal.chu_liu_edmonds) and networkx,
plus the certificate rate of dual decomposition on random 10-word problems.

Usage::

    python benchmarks/bench_mst.py [--quick] [--out PATH] [--sizes 10 20 40 80]

The report is printed and written to ``benchmarks/results/bench_mst.md``
(``bench_mst_quick.md`` with ``--quick``).

What is timed
-------------
* ``ours``: :func:`depparse.decode.chu_liu_edmonds` on a C-contiguous float64 ``scores[h, m]``
  matrix, the public wrapper included (argument checks, output allocation).
* ``ufal``: ``ufal.chu_liu_edmonds.chu_liu_edmonds(M)``.  Its convention (docstring and
  README): ``M[i, j]`` is the score of word ``i`` taking ``j`` as its head, i.e. ``M = scores.T``,
  it maximises, and ``nan`` marks an arc to skip.  We pass ``scores.T`` (copied, contiguous) with
  ``nan`` on the diagonal and on row 0 (the root takes no head), built outside the timed region.
  It returns ``(heads list, tree score)``; it does not enforce a single root, so both solve the
  unconstrained problem.
* ``networkx``: ``networkx.maximum_spanning_arborescence(G)`` alone; the ``DiGraph`` (all arcs
  ``h -> m``, ``m >= 1``, ``h != m``, attribute ``weight``) is built *outside* the timed region
  (its build time is reported separately).  No arc enters node 0, so every spanning
  arborescence is rooted at 0.

Every instance is solved by all three and the tree scores (recomputed from ``scores``) must
agree to 1e-9 relative, else the benchmark stops.  Timings are per call: for each
implementation the same list of instances is solved ``number`` times per round, ``number``
chosen so that a round lasts about ``--round-s`` seconds, and the best of ``--rounds`` rounds
is kept (timeit style), after a warm-up call.

Compile time is measured in fresh subprocesses with ``NUMBA_CACHE_DIR`` set to an empty
temporary directory (the project's own ``__pycache__`` is neither read nor touched): the
first call then includes numba's type inference and LLVM compilation of the kernels (and the
writing of the cache); a second process on the same directory measures a cache load instead.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import networkx as nx
import numpy as np
from ufal.chu_liu_edmonds import chu_liu_edmonds as ufal_cle

import depparse
from depparse.decode import chu_liu_edmonds, dual_decompose_dense

HERE = Path(__file__).resolve().parent
PAPER_RAND = {"Sib": 35.6, "G+S": 6.8}  # Koo et al. 2010, Table 2, column Rand (DD-5000)


# ---------------------------------------------------------------------------------------------
# problem conversions and checks
# ---------------------------------------------------------------------------------------------


def to_ufal(scores):
    """``scores[h, m]`` -> ufal's ``M[dep, head]`` with ``nan`` on forbidden cells."""
    M = np.ascontiguousarray(scores.T, dtype=np.float64).copy()
    np.fill_diagonal(M, np.nan)
    M[0, :] = np.nan
    return M


def to_nx(scores):
    N = scores.shape[0]
    G = nx.DiGraph()
    G.add_nodes_from(range(N))
    G.add_weighted_edges_from((h, m, float(scores[h, m]))
                              for h in range(N) for m in range(1, N) if h != m)
    return G


def tree_score(heads, scores):
    return float(sum(scores[int(heads[m]), m] for m in range(1, scores.shape[0])))


def nx_heads(T, N):
    heads = np.full(N, -1, dtype=np.int64)
    for h, m in T.edges():
        heads[m] = h
    return heads


def check_same_problem(scores, M, G):
    """All three solvers must return trees of the same score on this instance."""
    a = tree_score(chu_liu_edmonds(scores), scores)
    uh, us = ufal_cle(M)
    b = tree_score(uh, scores)
    c = tree_score(nx_heads(nx.maximum_spanning_arborescence(G), scores.shape[0]), scores)
    tol = 1e-9 * max(1.0, abs(a))
    if not (abs(a - b) <= tol and abs(a - c) <= tol and abs(us - b) <= tol):
        raise SystemExit(f"solvers disagree: ours {a}, ufal {b} (reported {us}), networkx {c}")


# ---------------------------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------------------------


def best_per_call(fn, args, rounds, round_s):
    """Best-of-``rounds`` per-call seconds of ``fn(x) for x in args`` (timeit style)."""
    fn(args[0])  # warm-up
    number = 1
    while True:  # calibrate: how many passes over args fill one round
        t0 = time.perf_counter()
        for _ in range(number):
            for x in args:
                fn(x)
        dt = time.perf_counter() - t0
        if dt >= round_s / 4 or number >= 1 << 20:
            break
        number *= 2
    number = max(1, int(number * round_s / max(dt, 1e-9)))
    best = np.inf
    gcold = gc.isenabled()
    gc.disable()
    try:
        for _ in range(rounds):
            t0 = time.perf_counter()
            for _ in range(number):
                for x in args:
                    fn(x)
            best = min(best, (time.perf_counter() - t0) / (number * len(args)))
    finally:
        if gcold:
            gc.enable()
    return best


def time_mst(sizes, instances, rounds, round_s, seed):
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        S = [rng.standard_normal((n + 1, n + 1)) for _ in range(instances)]
        M = [to_ufal(s) for s in S]
        t0 = time.perf_counter()
        G = [to_nx(s) for s in S]
        build = (time.perf_counter() - t0) / len(S)
        for s, m, g in zip(S, M, G, strict=True):
            check_same_problem(s, m, g)
        ours = best_per_call(chu_liu_edmonds, S, rounds, round_s)
        ours_sr = best_per_call(lambda s: chu_liu_edmonds(s, single_root=True), S, rounds,
                                round_s)
        ufal = best_per_call(ufal_cle, M, rounds, round_s)
        nxt = best_per_call(nx.maximum_spanning_arborescence, G, max(2, rounds // 2), round_s)
        rows.append(dict(n=n, ours=ours, ours_sr=ours_sr, ufal=ufal, nx=nxt, nx_build=build))
        print(f"  n = {n}: ours {ours * 1e6:.1f} us, ufal {ufal * 1e6:.1f} us, "
              f"networkx {nxt * 1e6:.0f} us", file=sys.stderr)
    return rows


COMPILE_SNIPPET = r"""
import json, time
t0 = time.perf_counter()
import numpy as np
from depparse.decode import chu_liu_edmonds, dual_decompose_dense
t1 = time.perf_counter()
s = np.random.default_rng(0).standard_normal((11, 11))
chu_liu_edmonds(s)
t2 = time.perf_counter()
chu_liu_edmonds(s)
t3 = time.perf_counter()
N = 4
rng = np.random.default_rng(1)
dual_decompose_dense(rng.standard_normal((N, N)), rng.standard_normal((N, N, N + 1)),
                     rng.standard_normal((N, N, N)), rng.standard_normal((N, N, N, N + 1)))
t4 = time.perf_counter()
print(json.dumps(dict(imp=t1 - t0, first=t2 - t1, second=t3 - t2, dd_first=t4 - t3)))
"""


def compile_times():
    """First-call times in fresh processes: cold numba cache, then warm cache."""
    out = {}
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, NUMBA_CACHE_DIR=d)
        env.pop("NUMBA_DISABLE_JIT", None)
        for key in ("cold", "warm"):
            r = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET], env=env,
                               capture_output=True, text=True, check=True)
            out[key] = json.loads(r.stdout.strip().splitlines()[-1])
    return out


# ---------------------------------------------------------------------------------------------
# dual decomposition certificates on random problems
# ---------------------------------------------------------------------------------------------


def dd_rates(instances, n, max_iter, seed):
    rows = []
    for model in ("Sib", "G+S"):
        rng = np.random.default_rng(seed)
        N = n + 1
        certs, iters, secs, flags = 0, [], [], []
        for _ in range(instances):
            arc = rng.standard_normal((N, N))
            sib = rng.standard_normal((N, N, N + 1))
            gr = gs = None
            if model == "G+S":
                gr = rng.standard_normal((N, N, N))
                gs = rng.standard_normal((N, N, N, N + 1))
            t0 = time.perf_counter()
            r = dual_decompose_dense(arc, sib, gr, gs, max_iter=max_iter)
            secs.append(time.perf_counter() - t0)
            certs += r.certificate
            flags.append(r.certificate)
            iters.append(r.iterations)
        rows.append(dict(model=model, rate=100.0 * certs / instances, certs=certs,
                         iters=float(np.mean(iters)), ms=1e3 * float(np.mean(secs)),
                         ms_cert=1e3 * float(np.mean([s for s, c in zip(secs, flags, strict=True)
                                                      if c] or [np.nan]))))
        print(f"  {model}: {certs}/{instances} certified", file=sys.stderr)
    return rows


# ---------------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------------


def cpu_name():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def versions():
    import numba
    try:
        from importlib.metadata import version
        ufal_v = version("ufal.chu_liu_edmonds")
    except Exception:  # pragma: no cover
        ufal_v = "?"
    return (f"Python {platform.python_version()}, numpy {np.__version__}, numba "
            f"{numba.__version__}, networkx {nx.__version__}, ufal.chu_liu_edmonds {ufal_v}, "
            f"depparse {getattr(depparse, '__version__', '?')}")


def report(args, mst, comp, dd):
    L = []
    L.append("# bench_mst: maximum spanning arborescence and dual-decomposition certificates")
    L.append("")
    L.append(f"{time.strftime('%Y-%m-%d %H:%M')}; {cpu_name()}; {os.cpu_count()} logical CPUs; "
             f"{versions()}.  Mode: {'quick' if args.quick else 'full'}.")
    L.append("")
    L.append("## Per-call time of Chu-Liu-Edmonds (random standard-normal scores)")
    L.append("")
    L.append(f"{args.instances} instances per size, all three solvers checked to return trees "
             f"of equal score on each; best of {args.rounds} rounds of ~{args.round_s} s "
             f"(networkx: best of {max(2, args.rounds // 2)}), after warm-up.  networkx: the "
             "`maximum_spanning_arborescence` call alone, the DiGraph built outside the timed "
             "region.")
    L.append("")
    L.append("| n | ours µs | ufal µs | networkx µs | ours/ufal | networkx/ufal |")
    L.append("|---:|---:|---:|---:|---:|---:|")
    for r in mst:
        L.append(f"| {r['n']} | {r['ours'] * 1e6:.2f} | {r['ufal'] * 1e6:.2f} | "
                 f"{r['nx'] * 1e6:.0f} | {r['ours'] / r['ufal']:.2f} | "
                 f"{r['nx'] / r['ufal']:.0f} |")
    L.append("")
    target = [r for r in mst if r["n"] in (40, 80)]
    if target:
        ok = all(r["ours"] <= 1.0 * r["ufal"] for r in target)
        detail = ", ".join(f"n = {r['n']}: {r['ours'] / r['ufal']:.2f}x" for r in target)
        L.append(f"**{'PASS' if ok else 'FAIL'}**: target ours ≤ 1.0× ufal at n = 40 and "
                 f"n = 80 ({detail}).")
    else:
        L.append("Target ours ≤ 1.0× ufal at n = 40 and n = 80: not measured (sizes).")
    L.append("")
    L.append("Also measured (not part of the target):")
    L.append("")
    L.append("| n | ours single_root=True µs | networkx DiGraph build µs (untimed above) |")
    L.append("|---:|---:|---:|")
    for r in mst:
        L.append(f"| {r['n']} | {r['ours_sr'] * 1e6:.2f} | {r['nx_build'] * 1e6:.0f} |")
    L.append("")
    if comp:
        c, w = comp["cold"], comp["warm"]
        L.append("## Numba compile time (fresh processes, `NUMBA_CACHE_DIR` = empty temp dir)")
        L.append("")
        L.append("| | import depparse.decode | first `chu_liu_edmonds` (n=10) | second call | "
                 "first `dual_decompose_dense` (G+S, n=3) |")
        L.append("|---|---:|---:|---:|---:|")
        for name, x in (("cold cache (compile)", c), ("warm cache (load)", w)):
            L.append(f"| {name} | {x['imp'] * 1e3:.0f} ms | {x['first'] * 1e3:.0f} ms | "
                     f"{x['second'] * 1e6:.0f} µs | {x['dd_first'] * 1e3:.0f} ms |")
        L.append("")
        L.append("The cold first call includes numba type inference and LLVM compilation of "
                 "`_cle` and `_rescale` plus writing them to the cache; the first "
                 "`dual_decompose_dense` call additionally compiles the dual loop, head "
                 "automata, Eisner and the part-table kernels.  Warm: loading the cached "
                 "machine code instead.")
        L.append("")
    if dd:
        L.append(f"## Dual decomposition on random {args.dd_n}-word problems")
        L.append("")
        L.append(f"{args.dd_instances} instances per model, every part score (arcs included) "
                 f"standard normal, K = {args.dd_k}, alpha = 0.001, no single-root "
                 "constraint, no pruning.")
        L.append("")
        L.append("| model | certificates | Koo et al. Table 2 (Rand) | mean iterations | "
                 "ms / instance | ms / certified instance |")
        L.append("|---|---:|---:|---:|---:|---:|")
        for r in dd:
            L.append(f"| {r['model']} | {r['rate']:.1f}% ({r['certs']}/{args.dd_instances}) | "
                     f"{PAPER_RAND[r['model']]}% | {r['iters']:.0f} | {r['ms']:.2f} | "
                     f"{r['ms_cert']:.2f} |")
        L.append("")
    return "\n".join(L)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer instances, shorter rounds")
    ap.add_argument("--out", type=Path, default=None,
                    help="markdown report (default benchmarks/results/bench_mst.md, or "
                         "bench_mst_quick.md with --quick)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 40, 80])
    ap.add_argument("--no-compile", action="store_true", help="skip the compile-time probe")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.out is None:
        args.out = HERE / "results" / ("bench_mst_quick.md" if args.quick else "bench_mst.md")
    args.instances = 10 if args.quick else 30
    args.rounds = 3 if args.quick else 7
    args.round_s = 0.05 if args.quick else 0.25
    args.dd_n = 10
    args.dd_k = 5000
    args.dd_instances = 40 if args.quick else 200

    print("timing Chu-Liu-Edmonds ...", file=sys.stderr)
    mst = time_mst(args.sizes, args.instances, args.rounds, args.round_s, args.seed)
    comp = None
    if not args.no_compile:
        print("measuring compile time ...", file=sys.stderr)
        comp = compile_times()
    print("dual decomposition certificates ...", file=sys.stderr)
    dd = dd_rates(args.dd_instances, args.dd_n, args.dd_k, args.seed)
    text = report(args, mst, comp, dd)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n", encoding="utf-8")
    print(f"\nwritten to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
