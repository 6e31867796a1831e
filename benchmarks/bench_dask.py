"""``depparse parse --scheduler`` (issue 27, item 4): words/s with 1 and 2 Dask workers, the
client's peak memory against the input's size, and the output against a local run's.

    python benchmarks/bench_dask.py FILE [FILE ...] [--workers 1 2] [-m MODEL] [--no-local]

For each FILE a local ``depparse parse FILE -o OUT`` (one process) gives the reference output
and words/s.  Then, for each worker count N, a ``dask scheduler`` and N ``dask worker
--nthreads 1 --no-nanny`` processes are started on 127.0.0.1; a first small run loads the
kernels in the workers (as a long-lived cluster has them), then ``depparse parse FILE -o OUT
--scheduler ADDRESS`` runs on each file.  Each row gives the words/s of the summary line (wall
clock, from the client's start of parsing to the joined output), the CPU seconds of the
workers during the run (psutil) and the words per worker CPU-second (the fair measure on a
shared machine), the client's CPU seconds and peak resident memory (psutil, sampled every
0.05 s; the local run's are those of the parsing process), and
whether the output is byte-identical to the local run's.  The load average is printed with
each row.  Prints Markdown.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
DASK = Path(sys.executable).parent / "dask"


def _cmd(*args):
    return [sys.executable, "-m", "depparse.cli", *map(str, args)]


def _run(cmd):
    """Run, sampling the process's resident memory and CPU time: ``(stderr, CPU seconds,
    peak bytes)``."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak, cpu = 0, 0.0
    ps = psutil.Process(p.pid)
    while p.poll() is None:
        try:
            peak = max(peak, ps.memory_info().rss)
            t = ps.cpu_times()
            cpu = t.user + t.system
        except psutil.Error:
            pass
        time.sleep(0.05)
    err = p.stderr.read().decode()
    if p.returncode:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(map(str, cmd))}\n{err}")
    return err, cpu, peak


def _words_per_s(err):
    m = re.search(r"parsed ([\d,]+) sentences?, ([\d,]+) words? in ([\d.]+) s \((\d+) words/s",
                  err)
    return int(m.group(2).replace(",", "")), float(m.group(3)), int(m.group(4))


class Cluster:
    def __init__(self, n, root):
        self.file = Path(root) / "scheduler.json"
        quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs = [subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port",
                                        "0", "--no-dashboard", "--scheduler-file", self.file],
                                       **quiet)]
        while not self.file.exists():
            time.sleep(0.1)
        time.sleep(0.2)
        self.address = json.loads(self.file.read_text())["address"]
        self.workers = [subprocess.Popen([DASK, "worker", "--scheduler-file", self.file,
                                          "--nthreads", "1", "--no-nanny", "--host",
                                          "127.0.0.1", "--no-dashboard", "--local-directory",
                                          root], **quiet) for _ in range(n)]
        self.procs += self.workers
        from distributed import Client

        with Client(self.address, timeout=30, set_as_default=False) as c:
            c.wait_for_workers(n, timeout=120)

    def cpu(self):
        total = 0.0
        for w in self.workers:
            t = psutil.Process(w.pid).cpu_times()
            total += t.user + t.system
        return total

    def close(self):
        for p in self.workers:
            p.terminate()
        for p in self.workers:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        self.procs[0].terminate()
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:  # a worker whose scheduler went first
                p.kill()
                p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("-m", "--model", default=str(REPO / "models" / "en_ewt_gs.npz"))
    ap.add_argument("--no-local", action="store_true",
                    help="no local run (no reference output: the last column says '-')")
    args = ap.parse_args()
    print(f"model {args.model}; {os.cpu_count()} CPUs")
    print()
    print("| run | input | words | load | seconds | words/s (wall) | worker CPU s "
          "| words per worker CPU-s | client CPU s | client peak RSS (MB) | output = local |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(dir="/tmp") as d:
        d = Path(d)
        refs = {}
        for f in [] if args.no_local else args.files:
            refs[f] = d / f"ref-{Path(f).name}"
            load = os.getloadavg()[0]
            err, ccpu, peak = _run(_cmd("parse", f, "-m", args.model, "-o", refs[f]))
            words, secs, wps = _words_per_s(err)
            print(f"| local, 1 process | {Path(f).name} | {words:,} | {load:.1f} | {secs:.1f} "
                  f"| {wps:,} | - | - | {ccpu:.1f} (parsing) | {peak / 2**20:.0f} (parsing) "
                  "| - |", flush=True)
        warm = d / "warm.conllu"
        warm.write_bytes(Path(args.files[0]).read_bytes()[:20000].rsplit(b"\n\n", 1)[0]
                         + b"\n\n")
        for n in args.workers:
            c = Cluster(n, d)
            try:
                _run(_cmd("parse", warm, "-m", args.model, "-o", d / "warm.out",
                          "--scheduler", c.address, "--shard-size", "2K"))
                for f in args.files:
                    out = d / f"dask{n}-{Path(f).name}"
                    load = os.getloadavg()[0]
                    cpu0 = c.cpu()
                    err, ccpu, peak = _run(_cmd("parse", f, "-m", args.model, "-o", out,
                                                "--scheduler", c.address))
                    cpu = c.cpu() - cpu0
                    words, secs, wps = _words_per_s(err)
                    same = out.read_bytes() == refs[f].read_bytes() if f in refs else "-"
                    print(f"| Dask, {n} worker{'s' if n > 1 else ''} | {Path(f).name} "
                          f"| {words:,} | {load:.1f} | {secs:.1f} | {wps:,} | {cpu:.1f} "
                          f"| {words / cpu:,.0f} | {ccpu:.1f} | {peak / 2**20:.0f} | {same} |",
                          flush=True)
            finally:
                c.close()


if __name__ == "__main__":
    main()
