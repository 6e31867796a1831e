"""Load test of ``depparse serve``: concurrent UDPipe clients on the loopback address, every
answer checked against ``depparse parse`` of the same input.

    flock /work/heavy.lock nice -n 5 python benchmarks/bench_serve.py [--requests 2000]
        [--clients 16] [--workers 2] [--seed 0]

1. Inputs from UD English-EWT test (``DEPPARSE_CORPORA``): CoNLL-U requests of 1 to 10
   sentences (tagged as in the treebank, or with the tag columns blanked so that the server's
   tagger fills them), CoNLL-U sentences of 300 words (consecutive test sentences run
   together), plain-text requests (``tokenizer``) of one sentence to a 300-word paragraph, and
   malformed requests (broken CoNLL-U lines, a head that is not a number, text that is not
   UTF-8, an unknown model, an unknown parameter).
2. What the command line makes of each distinct input: ``depparse parse`` on all CoNLL-U
   inputs in one process, ``depparse parse --input text`` on all texts in another (their
   words/s are the CLI's figures), and, for each broken CoNLL-U input, the error line
   ``depparse parse`` prints for it in a file named ``data``.
3. ``depparse serve --port 0`` (a free port on 127.0.0.1 only), its memory (the server and
   its workers) measured after start; then ``--clients`` threads, each a keep-alive HTTP
   connection, send ``--requests`` requests drawn from the inputs (url-encoded POST, multipart
   POST as UDPipe's own client sends it, GET for small ones), while a rude client now and then
   sends half a body and hangs up, or a long request and hangs up before the answer; every
   answer is compared with the CLI's (the CoNLL-U byte for byte; the error's line); then the
   memory again, and one more request must be answered right.

Bounded: at most ``--requests`` requests, each with a 300 s timeout, the whole run with
``--deadline`` seconds.  Output: ``benchmarks/results/serve.md``.
"""

from __future__ import annotations

import argparse
import email.mime.multipart
import email.mime.nonmultipart
import email.policy
import http.client
import json
import os
import queue
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
sys.path.insert(0, str(REPO))

from depparse.conllu import read_conllu  # noqa: E402
from depparse.serve.workers import pss_mb  # noqa: E402

WRONG: list = []  # the first wrong answers, shown on stderr

# ---------------------------------------------------------------------------------------
# inputs


def _rows(s, blank):
    """The word lines of a sentence (multiword tokens and empty nodes kept), HEAD/DEPREL
    blanked, the tag columns too with ``blank``."""
    out = []
    for line in s.lines:
        if not line or line.startswith("#"):
            continue
        c = line.split("\t")
        if blank:
            c[2:6] = ["_"] * 4
        c[6:8] = ["_", "_"]
        out.append("\t".join(c))
    return out


def conllu_doc(sents, blank):
    blocks = []
    for s in sents:
        head = [f"# sent_id = {s.sent_id}"] if s.sent_id else []
        if s.text:
            head.append(f"# text = {s.text}")
        blocks.append("\n".join(head + _rows(s, blank)) + "\n\n")
    return "".join(blocks)


def long_sentence(sents, words=300):
    """One CoNLL-U sentence of ``words`` words: the words of consecutive sentences, renumbered
    (multiword tokens and empty nodes left out)."""
    rows = []
    for s in sents:
        for line in s.lines:
            c = line.split("\t")
            if line.startswith("#") or len(c) != 10 or not c[0].isdigit():
                continue
            rows.append(c)
            if len(rows) == words:
                break
        if len(rows) == words:
            break
    out = [f"{i}\t{c[1]}\t{c[2]}\t{c[3]}\t{c[4]}\t{c[5]}\t_\t_\t_\t_"
           for i, c in enumerate(rows, 1)]
    return f"# sent_id = long-{sents[0].sent_id}\n" + "\n".join(out) + "\n\n"


def make_inputs(sents, rng):
    """``[(kind, params, words)]``: the distinct requests (``params`` without the method)."""
    out = []
    by_len = sorted(range(len(sents)), key=lambda i: sents[i].n)
    picks = [by_len[0], by_len[1]] + rng.sample(by_len, 60)  # the 1-word sentences first
    for k, i in enumerate(picks):
        out.append(("conllu", {"parser": "", "data": conllu_doc([sents[i]], k % 3 == 0)},
                    sents[i].n))
    for _ in range(30):
        i = rng.randrange(len(sents) - 10)
        m = rng.randint(2, 10)
        out.append(("conllu", {"parser": "", "data": conllu_doc(sents[i:i + m], m % 2 == 0)},
                    sum(s.n for s in sents[i:i + m])))
    for _ in range(8):
        i = rng.randrange(len(sents) - 40)
        out.append(("conllu300", {"parser": "", "data": long_sentence(sents[i:i + 40])}, 300))
    texts = [s.text for s in sents if s.text]
    for _ in range(40):
        i = rng.randrange(len(texts) - 30)
        m = rng.choice([1, 1, 1, 2, 3, 5])
        text = " ".join(texts[i:i + m])
        out.append(("text", {"tokenizer": "", "tagger": "", "parser": "", "data": text},
                    len(text.split())))
    for _ in range(6):
        i = rng.randrange(len(texts) - 40)
        para, j = [], i
        while sum(len(t.split()) for t in para) < 300:
            para.append(texts[j])
            j += 1
        text = " ".join(para)
        out.append(("text300", {"tokenizer": "", "tagger": "", "parser": "", "data": text},
                    len(text.split())))
    good = conllu_doc(sents[:2], False)
    lines = good.split("\n")
    broken = [("bad-columns", "\n".join(lines[:2] + ["3\tbroken line"] + lines[2:])),
              ("bad-head", "1\tThe\tthe\tDET\tDT\t_\tX\tdet\t_\t_\n\n"),
              ("bad-id", good.replace("\n2\t", "\ntwo\t", 1))]
    for name, data in broken:
        out.append((name, {"parser": "", "data": data}, 0))
    out.append(("bad-model", {"parser": "", "model": "cs_pdt", "data": "x"}, 0))
    out.append(("bad-param", {"parser": "", "verbose": "1", "data": "x"}, 0))
    out.append(("bad-utf8", {"parser": "", "data": b"caf\xe9 au lait\n"}, 0))
    return out


# ---------------------------------------------------------------------------------------
# what the command line answers


def cli_answers(inputs, tmp: Path, env, skip_jobs2=False):
    """Expected answer of every input: ``("ok", CoNLL-U)`` or ``("error", line)``; and the
    CLI's words/s on the CoNLL-U and on the text inputs."""
    expected: dict[int, tuple] = {}
    speed = {}
    for kind, flag, ext in (("conllu", [], "conllu"), ("text", ["--input", "text"], "txt")):
        idx = [i for i, (k, _, _) in enumerate(inputs) if k.startswith(kind)]
        files = []
        for i in idx:
            f = tmp / f"in{i:04d}.{ext}"
            f.write_text(inputs[i][1]["data"], encoding="utf-8")
            files.append(f)
        out = tmp / f"out-{kind}.conllu"
        for jobs in ("2", "1")[skip_jobs2:]:  # the answers are --jobs 1's (--jobs 2's differ)
            t0 = time.perf_counter()
            r = subprocess.run([sys.executable, "-m", "depparse.cli", "parse", *flag, *files,
                                "-o", out, "--jobs", jobs], capture_output=True, text=True,
                               env=env, cwd=REPO)
            if jobs == "2":
                jobs2 = out.read_text(encoding="utf-8")
            if r.returncode:
                raise SystemExit(f"depparse parse failed: {r.stderr}")
            m = re.search(r"parsed ([\d,]+) sentences?, ([\d,]+) words? in ([\d.]+) s "
                          r"\(([\d,]+) words/s\)", r.stderr)
            speed[(kind, jobs)] = {"sentences": int(m.group(1).replace(",", "")),
                                   "words": int(m.group(2).replace(",", "")),
                                   "seconds": float(m.group(3)),
                                   "words_per_s": int(m.group(4).replace(",", "")),
                                   "wall": time.perf_counter() - t0}
        text = out.read_text(encoding="utf-8")
        if not skip_jobs2:
            speed[(kind, "2")]["same_as_1"] = jobs2 == text
        if kind == "text":
            docs = ["# newdoc\n" + d for d in text.split("# newdoc\n")[1:]]
        else:
            blocks = [b + "\n\n" for b in text.rstrip("\n").split("\n\n")]
            docs, k = [], 0
            for f in files:
                n = len(read_conllu(f))
                docs.append("".join(blocks[k:k + n]))
                k += n
            assert k == len(blocks)
        assert len(docs) == len(idx), (kind, len(docs), len(idx))
        for i, d in zip(idx, docs, strict=True):
            expected[i] = ("ok", d)
    for i, (kind, params, _) in enumerate(inputs):
        if kind.startswith("bad-") and kind not in ("bad-model", "bad-param", "bad-utf8"):
            d = tmp / f"bad{i}"
            d.mkdir()
            (d / "data").write_text(params["data"], encoding="utf-8")
            r = subprocess.run([sys.executable, "-m", "depparse.cli", "parse", "data"],
                               capture_output=True, text=True, env=env, cwd=d)
            assert r.returncode == 2, r.stderr
            expected[i] = ("error", r.stderr.strip().removeprefix("depparse: error: "))
        elif kind == "bad-model":
            expected[i] = ("error", "the requested model 'cs_pdt' does not exist")
        elif kind == "bad-param":
            expected[i] = ("error", "unknown parameter 'verbose'")
        elif kind == "bad-utf8":
            expected[i] = ("error", "not UTF-8")
    return expected, speed


# ---------------------------------------------------------------------------------------
# requests


def encode(params, how):
    """``(method, path, body, headers)`` of a request to /process."""
    if how == "multipart":
        message = email.mime.multipart.MIMEMultipart("form-data", policy=email.policy.HTTP)
        for name, value in params.items():
            part = email.mime.nonmultipart.MIMENonMultipart("text", "plain")
            part.add_header("Content-Disposition", f'form-data; name="{name}"')
            part.add_header("Content-Transfer-Encoding", "8bit")
            part.set_payload(value, charset="utf-8")
            message.attach(part)
        body = message.as_bytes().split(b"\r\n\r\n", maxsplit=1)[1]
        return "POST", "/process", body, {"Content-Type": message["Content-Type"]}
    pairs = []
    for k, v in params.items():
        pairs.append(f"{k}={urllib.parse.quote_plus(v)}" if isinstance(v, str)
                     else f"{k}={urllib.parse.quote_from_bytes(v)}")
    query = "&".join(pairs)
    if how == "get":
        return "GET", f"/process?{query}", None, {}
    return "POST", "/process", query.encode("ascii"), {
        "Content-Type": "application/x-www-form-urlencoded"}


def check(expected, status, body):
    kind, value = expected
    if kind == "ok":
        if status != 200:
            return False
        return json.loads(body)["result"] == value
    return status == 400 and value in body.decode("utf-8", "replace")


def client(url, jobs, inputs, expected, results, deadline):
    host, port = urllib.parse.urlsplit(url).netloc.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=300)
    while time.monotonic() < deadline:
        try:
            n, i, how = jobs.get_nowait()
        except queue.Empty:
            break
        method, path, body, headers = encode(inputs[i][1], how)
        t0 = time.perf_counter()
        try:
            conn.request(method, path, body=body, headers=headers)
            r = conn.getresponse()
            data = r.read()
            status = r.status
            if r.getheader("connection", "").lower() == "close":
                conn.close()
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            conn = http.client.HTTPConnection(host, int(port), timeout=300)
            results.append((n, i, how, None, time.perf_counter() - t0, repr(e)))
            continue
        dt = time.perf_counter() - t0
        ok = check(expected[i], status, data)
        results.append((n, i, how, status, dt, ok))
        if not ok and len(WRONG) < 3:
            WRONG.append((i, how, status, data))
    conn.close()


def rude(url, stop, log):
    """Every few seconds: half a body then hang up, or a long request and hang up."""
    host, port = urllib.parse.urlsplit(url).netloc.split(":")
    long_text = ("The parser reads a sentence and proves its tree. " * 60).encode()
    k = 0
    while not stop.wait(3.0):
        try:
            with socket.create_connection((host, int(port)), timeout=30) as s:
                if k % 2 == 0:
                    s.sendall(b"POST /process HTTP/1.1\r\nHost: x\r\nContent-Type: application/"
                              b"x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\ndata=Th")
                else:
                    body = b"tokenizer=&parser=&data=" + long_text
                    s.sendall(b"POST /process HTTP/1.1\r\nHost: x\r\nContent-Type: application/"
                              b"x-www-form-urlencoded\r\nContent-Length: "
                              + str(len(body)).encode() + b"\r\n\r\n" + body)
                    time.sleep(0.2)
            log.append("half body" if k % 2 == 0 else "gone before the answer")
        except OSError as e:
            log.append(f"rude client: {e!r}")
        k += 1


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))] if xs else float("nan")


# ---------------------------------------------------------------------------------------


def start_serve(flags, cwd, env):
    """``depparse serve --port 0 -q FLAGS`` from ``cwd``: ``(process, url, seconds until it
    listened)``; its stderr is drained on a thread."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "depparse.cli", "serve", "--port", "0", "-q",
                             *flags], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = None
    for line in proc.stderr:
        m = re.search(r"at (http://127\.0\.0\.1:\d+)/", line)
        if m:
            url = m.group(1)
            break
    if url is None:
        proc.kill()
        raise SystemExit(f"{cwd}: depparse serve did not start")
    threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
    return proc, url, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--deadline", type=float, default=3600.0, help="seconds for the load")
    ap.add_argument("--skip-jobs2", action="store_true",
                    help="do not time `depparse parse --jobs 2` (a shorter run)")
    ap.add_argument("--out", default=str(RESULTS / "serve.md"))
    args = ap.parse_args()
    corpora = Path(os.environ.get("DEPPARSE_CORPORA", REPO.parent / "shared" / "corpora"))
    test = corpora / "en_ewt" / "en_ewt-ud-test.conllu"
    if not test.is_file():
        raise SystemExit(f"{test}: not found (set DEPPARSE_CORPORA)")
    rng = random.Random(args.seed)
    sents = read_conllu(test)
    inputs = make_inputs(sents, rng)
    env = dict(os.environ)
    load0 = os.getloadavg()
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{len(inputs)} distinct inputs; depparse parse on them ...", file=sys.stderr)
        expected, speed = cli_answers(inputs, Path(tmp), env, args.skip_jobs2)
    print("starting depparse serve ...", file=sys.stderr)
    proc, url, startup = start_serve(["--workers", str(args.workers), "--queue", "64",
                                      "--time-limit", "60"], REPO, env)
    mem0, parent0 = pss_mb(proc.pid), _own_rss(proc.pid)
    # the stream of requests: inputs drawn with repetition, small ones more often
    weights = [{"conllu": 6, "conllu300": 1, "text": 5, "text300": 1}.get(k, 1.5)
               for k, _, _ in inputs]
    jobs: queue.Queue = queue.Queue()
    for n in range(args.requests):
        i = rng.choices(range(len(inputs)), weights)[0]
        data = inputs[i][1]["data"]
        how = ("form" if isinstance(data, bytes)  # not text: only as url-encoded bytes
               else rng.choice(["form", "multipart"] + (["get"] if len(data) < 4000 else [])))
        jobs.put((n, i, how))
    results: list = []
    stop = threading.Event()
    rude_log: list = []
    deadline = time.monotonic() + args.deadline
    threads = [threading.Thread(target=client, args=(url, jobs, inputs, expected, results,
                                                     deadline)) for _ in range(args.clients)]
    rt = threading.Thread(target=rude, args=(url, stop, rude_log))
    print(f"{args.requests} requests from {args.clients} clients ...", file=sys.stderr)
    t1 = time.perf_counter()
    for t in threads:
        t.start()
    rt.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t1
    stop.set()
    rt.join()
    time.sleep(2.0)
    mem1, parent1 = pss_mb(proc.pid), _own_rss(proc.pid)
    # still serving, and right
    k = next(i for i, (kind, _, _) in enumerate(inputs) if kind == "text")
    method, path, body, headers = encode(inputs[k][1], "form")
    host, port = urllib.parse.urlsplit(url).netloc.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=300)
    conn.request(method, path, body=body, headers=headers)
    r = conn.getresponse()
    after_ok = check(expected[k], r.status, r.read())
    conn.close()
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
    load1 = os.getloadavg()
    write(args, inputs, expected, speed, results, wall, startup, (mem0, parent0),
          (mem1, parent1), after_ok, rude_log, load0, load1, time.perf_counter() - t_all)


def _own_rss(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def write(args, inputs, expected, speed, results, wall, startup, mem0, mem1, after_ok,
          rude_log, load0, load1, total):
    sent = len(results)
    lost = [r for r in results if r[3] is None or r[3] in (500, 502, 503, 504)]
    wrong = [r for r in results if r[3] is not None and r not in lost and r[5] is not True]
    right = [r for r in results if r[5] is True]
    good = [r for r in right if expected[r[1]][0] == "ok"]
    words = sum(inputs[r[1]][2] for r in good)
    lat = [r[4] for r in results if r[3] is not None]
    small = [r[4] for r in results if r[3] is not None and inputs[r[1]][2] <= 40
             and expected[r[1]][0] == "ok"]
    big = [r[4] for r in results if r[3] is not None and inputs[r[1]][2] >= 300]
    kinds: dict = {}
    for r in results:
        kinds[inputs[r[1]][0]] = kinds.get(inputs[r[1]][0], 0) + 1
    hows: dict = {}
    for r in results:
        hows[r[2]] = hows.get(r[2], 0) + 1
    cmd = ("python benchmarks/bench_serve.py --requests "
           f"{args.requests} --clients {args.clients} --workers {args.workers} --seed {args.seed}"
           + (" --skip-jobs2" if args.skip_jobs2 else ""))
    if os.environ.get("BENCH_PREFIX"):  # how it was run, e.g. "flock /work/heavy.lock nice"
        cmd = f"{os.environ['BENCH_PREFIX']} {cmd}"
    c1, t1 = speed[("conllu", "1")], speed[("text", "1")]
    c2, t2 = speed.get(("conllu", "2")), speed.get(("text", "2"))
    lines = [
        "# depparse serve under load",
        "",
        f"`{cmd}` ({os.cpu_count()} CPUs; load average {load0[0]:.2f} before, "
        f"{load1[0]:.2f} after; {total:.0f} s in all).",
        "",
        f"{args.requests:,} requests to `/process` from {args.clients} concurrent clients "
        f"(keep-alive connections to 127.0.0.1), drawn from {len(inputs)} distinct inputs made "
        "from UD English-EWT test: " + ", ".join(f"{k} {v:,}" for k, v in sorted(kinds.items()))
        + "; sent as " + ", ".join(f"{k} {v:,}" for k, v in sorted(hows.items())) + ". "
        f"`depparse serve --workers {args.workers} --queue 64 --time-limit 60`. Every answer is "
        "compared with `depparse parse` of the same input (the CoNLL-U byte for byte; for a "
        "malformed input, the error line the CLI prints for it in a file named `data`).",
        "",
        "| | |",
        "|---|---|",
        f"| requests sent | {sent:,} of {args.requests:,} |",
        f"| right answers | {len(right):,} |",
        f"| wrong answers | {len(wrong):,} |",
        f"| lost (no answer, 5xx) | {len(lost):,} |",
        f"| latency p50 / p99, all requests | {pct(lat, 50):.3f} s / {pct(lat, 99):.3f} s |",
        f"| latency p50 / p99, inputs of at most 40 words | {pct(small, 50):.3f} s / "
        f"{pct(small, 99):.3f} s |",
        f"| latency p50 / p99, inputs of 300 words | {pct(big, 50):.3f} s / "
        f"{pct(big, 99):.3f} s |",
        f"| throughput | {sent / wall:.1f} requests/s, {words / wall:,.0f} words/s "
        f"({words:,} words parsed right in {wall:.1f} s) |",
        f"| `depparse parse`, same distinct inputs, one process | CoNLL-U {c1['words_per_s']:,} "
        f"words/s, text {t1['words_per_s']:,} words/s |",
        *([] if c2 is None else [
            f"| `depparse parse --jobs 2`, same inputs | CoNLL-U {c2['words_per_s']:,} words/s, "
            f"text {t2['words_per_s']:,} words/s (output the same as one process's: CoNLL-U "
            f"{'yes' if c2['same_as_1'] else 'NO'}, text {'yes' if t2['same_as_1'] else 'NO'})"
            " |"]),
        f"| server start (2 workers loading the model) | {startup:.1f} s |",
        f"| memory (PSS: shared pages divided), server and all its processes, before / after "
        f"| {mem0[0]:,.0f} MB / {mem1[0]:,.0f} MB |",
        f"| memory, server process alone, before / after | {mem0[1]:,.0f} MB / "
        f"{mem1[1]:,.0f} MB |",
        f"| clients that hung up midway (half a body, or before the answer) | "
        f"{len([x for x in rude_log if not x.startswith('rude')]):,} |",
        f"| answered right after all that | {'yes' if after_ok else 'NO'} |",
        "",
        "The CLI's words/s are its own summary line's (read, parse, write; the model loaded "
        "before), over the distinct inputs once; the server's throughput counts the words of "
        "the requests answered right over the wall time of the load, which includes HTTP, "
        "the encoding of requests and answers and the clients themselves on the same "
        "machine.",
    ]
    if c2 is not None and not (c2["same_as_1"] and t2["same_as_1"]):
        lines += ["", "`depparse parse --jobs 2` does not write what one process writes: the "
                  "tag columns its tagger predicted (LEMMA, UPOS, XPOS, FEATS of input that "
                  "has them empty) are missing from its output (the worker processes return "
                  "heads and labels only, depparse/inference/parallel.py).  The answers here "
                  "are compared with `depparse parse --jobs 1`."]
    if wrong:
        lines += ["", "Wrong answers (first 10): " + "; ".join(
            f"request {r[0]} ({inputs[r[1]][0]}, {r[2]}): status {r[3]}" for r in wrong[:10])]
    if lost:
        lines += ["", "Lost (first 10): " + "; ".join(
            f"request {r[0]} ({inputs[r[1]][0]}, {r[2]}): {r[3] or r[5]}" for r in lost[:10])]
    text = "\n".join(lines) + "\n"
    Path(args.out).write_text(text, encoding="utf-8")
    for i, how, status, data in WRONG:
        import difflib

        got = data.decode("utf-8", "replace")
        if status == 200:
            got = json.loads(got)["result"]
        print(f"--- wrong answer to input {i} ({inputs[i][0]}, {how}, status {status}):",
              file=sys.stderr)
        sys.stderr.writelines(list(difflib.unified_diff(
            expected[i][1].splitlines(True), got.splitlines(True), "cli", "server"))[:40])
    print(text)


if __name__ == "__main__":
    main()
