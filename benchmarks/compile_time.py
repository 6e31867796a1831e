"""What the first parse on a fresh install spends compiling: Numba's compile time per kernel.

    python benchmarks/compile_time.py [FILE.conllu] [--top 25] [-- PARSE FLAGS]

Runs ``depparse parse FILE`` (default: corpora/sample.conllu with the shipped model) in a fresh
process with an empty Numba cache (``NUMBA_CACHE_DIR`` set to a new temporary folder), and
prints the CPU seconds Numba spent compiling each kernel (inclusive: a kernel's time holds that
of the kernels compiled while compiling it), the whole run's CPU and wall seconds, then the same
parse again with the cache just written (what every later run pays).  CPU seconds, not wall
seconds, so that a busy machine changes the figures little.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

CHILD = r"""
import collections, json, sys, time
from numba.core import event

cpu = collections.Counter()
started = {}


class Listener(event.Listener):
    def on_start(self, e):
        started[id(e.data["dispatcher"])] = time.process_time()

    def on_end(self, e):
        d = e.data["dispatcher"]
        name = d.py_func.__module__ + "." + d.py_func.__qualname__
        cpu[name] += time.process_time() - started.pop(id(d), time.process_time())


event.register("numba:compile", Listener())
t0, c0 = time.perf_counter(), time.process_time()
from depparse.cli import main

rc = main(["parse", *sys.argv[1:], "-q"])
print(json.dumps({"rc": rc, "wall": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                  "kernels": cpu.most_common()}))
"""


def run(args, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", CHILD, *args], env=env, capture_output=True,
                         text=True, check=True, cwd=REPO)
    import json

    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?", default=str(REPO / "corpora" / "sample.conllu"))
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("flags", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    flags = [f for f in a.flags if f != "--"]
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
        args = [a.file, "-o", str(Path(out) / "out.conllu"), *flags]
        t = time.strftime("%Y-%m-%d %H:%M")
        cold = run(args, cache)
        warm = run(args, cache)
    load = os.getloadavg()[0]
    print(f"# {t}, load {load:.1f}: depparse parse {Path(a.file).name} {' '.join(flags)}")
    print(f"cold cache: {cold['cpu']:.1f} s CPU, {cold['wall']:.1f} s wall; "
          f"warm cache: {warm['cpu']:.1f} s CPU, {warm['wall']:.1f} s wall")
    print(f"kernels compiled: {len(cold['kernels'])} (CPU seconds, inclusive)")
    for name, sec in cold["kernels"][:a.top]:
        print(f"{sec:8.2f}  {name}")


if __name__ == "__main__":
    main()
