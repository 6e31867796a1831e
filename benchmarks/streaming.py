"""Streaming parse at corpus scale (issue 27): peak memory against input size, words/s, and
kills at random moments followed by ``--resume``.

    python benchmarks/streaming.py rss FILE [FILE ...] [--jobs 1] [--limit SECONDS] [-m MODEL]
    python benchmarks/streaming.py kill FILE [--kills 5] [--seed 0] [-m MODEL]

``rss`` runs ``depparse parse FILE -o OUT --jobs J`` on each file and samples the resident
memory of the process and its workers every 0.2 s (psutil): the peak, with the words/s of
the summary line, and the memory once a minute.  ``--limit S`` stops a run after S seconds
(SIGTERM): the peak is then that of the part parsed, which the row says.  ``kill`` parses FILE
once without interruption, then ``--kills`` times starts the same run, kills it with SIGKILL at
a moment drawn uniformly from its first commit to the end of a run's duration, continues it
with ``--resume`` and compares the output with the uninterrupted one, byte for byte.  Both
print Markdown rows.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent


def _cmd(*args):
    return [sys.executable, "-m", "depparse.cli", *map(str, args)]


def _tree_rss(proc):
    """Resident memory (bytes) of a process and its children."""
    total = 0
    try:
        p = psutil.Process(proc.pid)
        for q in [p, *p.children(recursive=True)]:
            try:
                total += q.memory_info().rss
            except psutil.Error:
                pass
    except psutil.Error:
        pass
    return total


def rss(args):
    print("| input | words | seconds | words/s | peak RSS (MB) | note |")
    print("|---|---|---|---|---|---|")
    for f in args.files:
        with tempfile.TemporaryDirectory(dir="/tmp") as d:
            out = Path(d) / "out.conllu"
            cmd = _cmd("parse", f, "-o", out, "--jobs", args.jobs,
                       *(["-m", args.model] if args.model else []))
            t0 = time.monotonic()
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    cwd=REPO, text=True)
            peak, note, series, next_mark = 0, "", [], 60.0
            while proc.poll() is None:
                now = _tree_rss(proc)
                peak = max(peak, now)
                t = time.monotonic() - t0
                if t >= next_mark:  # RSS over time: flat when nothing grows with the input
                    series.append(f"{t / 60:.0f} min: {now / 1e6:.0f} MB")
                    next_mark += 60.0
                if args.limit and t > args.limit:
                    # (SIGTERM: a job started in the background of a shell ignores SIGINT)
                    proc.send_signal(signal.SIGTERM)
                    note = f"stopped after {args.limit:.0f} s"
                    break
                time.sleep(0.2)
            if series:
                print(f"<!-- {f}: RSS " + ", ".join(series) + " -->", flush=True)
            err = proc.communicate()[1]
            wall = time.monotonic() - t0
            m = re.search(r"parsed ([\d,]+) sentences?, ([\d,]+) words? in ([\d.]+) s "
                          r"\((\d+) words/s\)", err)
            if m:
                words, secs, wps = m.group(2), m.group(3), m.group(4)
            else:  # stopped: count what was committed
                partial = Path(str(out) + ".partial")
                n = sum(1 for line in open(partial, "rb") if line[:1].isdigit()
                        and b"\t" in line and b"-" not in line.split(b"\t")[0]
                        and b"." not in line.split(b"\t")[0]) if partial.exists() else 0
                words, secs, wps = f"{n:,} (committed)", f"{wall:.0f} (wall)", "–"
            print(f"| {f} | {words} | {secs} | {wps} | {peak / 1e6:.0f} | {note} |",
                  flush=True)


def kill(args):
    rng = random.Random(args.seed)
    model = ["-m", args.model] if args.model else []
    with tempfile.TemporaryDirectory(dir="/tmp") as d:
        d = Path(d)
        ref = d / "ref.conllu"
        t0 = time.monotonic()
        subprocess.run(_cmd("parse", args.file, "-o", ref, "-q", *model), check=True, cwd=REPO)
        total = time.monotonic() - t0
        print(f"uninterrupted run: {total:.0f} s", flush=True)
        print("| kill | killed after its first commit (s) | resumed: identical |")
        print("|---|---|---|")
        ok = 0
        for k in range(args.kills):
            out = d / f"out{k}.conllu"
            state = Path(str(out) + ".partial.state")
            proc = subprocess.Popen(_cmd("parse", args.file, "-o", out, "-q", *model),
                                    cwd=REPO, start_new_session=True)
            t1 = time.monotonic()
            while not state.exists() and proc.poll() is None:
                time.sleep(0.01)
            first = time.monotonic() - t1
            delay = rng.uniform(0.0, max(0.0, total - first))
            time.sleep(delay)
            if proc.poll() is not None:
                print(f"| {k + 1} | finished before the kill | – |")
                continue
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            subprocess.run(_cmd("parse", args.file, "-o", out, "-q", "--resume", *model),
                           check=True, cwd=REPO)
            same = out.read_bytes() == ref.read_bytes()
            ok += same
            print(f"| {k + 1} | {delay:.1f} | {'yes' if same else 'NO'} |", flush=True)
        print(f"\n{ok} of {args.kills} resumed runs identical to the uninterrupted one")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    r = sub.add_parser("rss")
    r.add_argument("files", nargs="+")
    r.add_argument("--jobs", default="1")
    r.add_argument("--limit", type=float, default=None)
    r.add_argument("-m", "--model")
    k = sub.add_parser("kill")
    k.add_argument("file")
    k.add_argument("--kills", type=int, default=5)
    k.add_argument("--seed", type=int, default=0)
    k.add_argument("-m", "--model")
    args = ap.parse_args()
    {"rss": rss, "kill": kill}[args.what](args)


if __name__ == "__main__":
    main()
