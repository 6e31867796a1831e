"""Memory of ``depparse serve`` with several models: this checkout against another.

    flock /work/heavy.lock nice -n 5 python benchmarks/serve_memory.py REF \\
        [-m en_ewt_gs -m pt_bosque_gs -m tr_imst_gs] [--workers 2] [--rounds 2]

``REF`` is another checkout (e.g. ``git worktree add /tmp/ref HEAD~3``); both run with this
Python, each from its own folder (its ``depparse`` first on the path).  For each round, in
alternating order: ``depparse serve --port 0 --workers N -m ...``, its start time, then
``--requests`` plain-text requests to each model (two at a time, so that every worker parses
with every model), then the memory of the server and all its processes (workers, fork
server) two ways:

* **RSS**, summed: a page shared by several processes counts once in each;
* **PSS**, summed (``/proc/PID/smaps_rollup``): each page divided among the processes that
  share it, so the sum is what the server holds in all.

Every answer must be HTTP 200 with CoNLL-U of the text's words.  Output:
``benchmarks/results/serve_memory.{md,json}``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from bench_serve import start_serve  # noqa: E402

from depparse.serve.workers import pss_mb, rss_mb  # noqa: E402

TEXTS = {"en": "The cat sat on the mat. It purred, and then it slept for an hour.",
         "pt": "O gato sentou-se no tapete. Depois dormiu durante uma hora.",
         "tr": "Kedi halının üstüne oturdu. Sonra bir saat uyudu."}


def ask(url: str, model: str, text: str) -> None:
    body = urllib.parse.urlencode({"model": model, "tokenizer": "", "tagger": "",
                                   "parser": "", "data": text}).encode()
    with urllib.request.urlopen(url + "/process", data=body, timeout=300) as r:
        result = json.loads(r.read())["result"]
    words = [ln for ln in result.splitlines() if ln and not ln.startswith("#")]
    if r.status != 200 or len(words) < len(text.split()):
        raise SystemExit(f"{model}: a wrong answer: {result[:200]!r}")


def one_run(checkout: Path, models: list[str], workers: int, requests: int) -> dict:
    flags = ["--workers", str(workers), *[a for m in models for a in ("-m", m)]]
    proc, url, start = start_serve(flags, checkout, {**os.environ, "PYTHONPATH": str(checkout)})
    try:
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            futures = [pool.submit(ask, url, m, TEXTS.get(m.split("_")[0], TEXTS["en"]))
                       for m in models for _ in range(requests)]
            for f in futures:
                f.result()
        time.sleep(1.0)
        return {"start_seconds": round(start, 1), "rss_mb": round(rss_mb(proc.pid), 1),
                "pss_mb": round(pss_mb(proc.pid), 1)}
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ref", type=Path, help="the other checkout")
    ap.add_argument("-m", "--model", action="append", dest="models")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--requests", type=int, default=4, help="requests per model")
    args = ap.parse_args(argv)
    models = args.models or ["en_ewt_gs", "pt_bosque_gs", "tr_imst_gs"]
    runs: dict = {"this": [], "ref": []}
    for k in range(args.rounds):
        order = ("ref", "this") if k % 2 == 0 else ("this", "ref")
        for who in order:
            r = one_run(REPO if who == "this" else args.ref.resolve(), models, args.workers,
                        args.requests)
            runs[who].append(r)
            print(f"round {k + 1} {who}: {r}", file=sys.stderr)
    med = {w: {f: statistics.median(r[f] for r in rs) for f in rs[0]}
           for w, rs in runs.items()}
    out = {"command": "python benchmarks/serve_memory.py " + " ".join(sys.argv[1:] if argv is None
                                                                       else argv),
           "models": models, "workers": args.workers, "ref": str(args.ref), "runs": runs,
           "median": med, "load_average": os.getloadavg()}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "serve_memory.json").write_text(json.dumps(out, indent=1) + "\n")
    lines = ["# `depparse serve` with several models: memory", "",
             f"`{out['command']}` ({len(models)} models: {', '.join(models)}; "
             f"`--workers {args.workers}`; {args.requests} plain-text requests per model; "
             f"{args.rounds} rounds in alternating order, REF first; REF: `{args.ref}`).  "
             "Every round is shown: a checkout's first round may be cold (its Numba kernels "
             "compiled).", "",
             "| round | checkout | server start | RSS, summed | PSS, summed (what it holds) |",
             "|---|---|---|---|---|"]
    for k in range(args.rounds):
        for w, label in (("ref", "REF"), ("this", "this checkout")):
            r = runs[w][k]
            lines.append(f"| {k + 1} | {label} | {r['start_seconds']:.1f} s | "
                         f"{r['rss_mb']:,.0f} MB | {r['pss_mb']:,.0f} MB |")
    lines += ["", "RSS counts a page shared by several processes once in each; PSS divides it "
              "among them (`/proc/PID/smaps_rollup`), so its sum is the memory the server and "
              "its processes hold together; the medians are in the JSON."]
    (RESULTS / "serve_memory.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
