"""Parsing in worker processes: the server's event loop never parses.

A :class:`Workers` pool starts ``jobs`` processes with the ``forkserver`` start method (a
plain ``fork`` of the server could copy one of its threads' locks mid-hold): the fork server,
a process of its own started once, without the server's threads, loads the served models and
parses a short text with each (tokenizer, tagger, parser, labeler) so that every Numba kernel
is loaded (:mod:`.preload`), and every worker is forked from it.  The workers so share the
models' arrays, the encoder and the compiled kernels (copy-on-write) instead of holding a
copy each (``benchmarks/results/serve_memory.md``), and a worker started again after one died
is ready at once.  The fork server lives as long as the server.  Where there is none
(Windows), or one was already running in this process with other models, each worker loads
the models it was not given that way itself, in its initializer (:func:`_init`), with the
same warm-up.  A request is then worked on in two steps:

1. **read** (one task): its ``data`` is read as the CLI reads a file (CoNLL-U by
   :func:`~depparse.conllu.read_conllu`, plain text by the model's tokenizer), sentences over
   the word limit are refused, and the tag columns to predict are decided for each sentence
   (:mod:`depparse.inference.columns`, the request being the file),
   as ``depparse parse`` decides them;
2. **parse** (one task per chunk of about :data:`CHUNK_WORDS` words): tag and parse
   (:meth:`~depparse.inference.engine.Engine.iter_parsed`), or only tag.

Each request keeps at most ``jobs`` chunks waiting or running at a time, and :class:`Slots`
decides which waiting task runs next: short tasks before long ones, and long ones on at most
``jobs - 1`` workers, so a long request shares the workers with the short ones that come after
it instead of queueing its chunks ahead of them.  The answer is the same as one ``depparse
parse`` of the whole request (the tag columns are decided over the whole request; the
encoder's batching does not change a vector).

Limits: at most ``queue`` requests are worked on or waiting at once (another one is answered
503 at once); a sentence may have at most ``max_words`` words (400); each sentence's decoding
stops after the job's ``time_limit`` seconds (its tree then marked not proved).  A worker that
dies (killed, out of memory) fails the requests it was working on with a 500 and the pool is
started afresh; the server goes on.
"""

from __future__ import annotations

import asyncio
import heapq
import io
import itertools
import json
import logging
import multiprocessing as mp
import os
import warnings
from dataclasses import dataclass

from ..conllu import iter_words, read_conllu, write_conllu
from ..errors import DepparseError, InputWarning, ModelError
from ..inference.executor import ProcessBackend
from ..viewer import proof_badge, sentence_html, tree_from_sentence
from .preload import _load
from .protocol import Job, RequestError

__all__ = ["CHUNK_WORDS", "LONG_WORDS", "Answer", "ClientGone", "Slots", "WorkerDied", "Workers",
           "processes", "pss_mb", "rss_mb"]

log = logging.getLogger("depparse")

#: Words per parse task (a request's sentences are cut into chunks of about this many).
CHUNK_WORDS = 256
#: A task of more words is *long* (:class:`Slots`): it waits behind short ones and leaves
#: a worker free for them.
LONG_WORDS = 100
#: The name the request's data carries in messages (``data:3: ...``), as a file's name does.
SOURCE = "data"

_STATE: dict = {}  # in a worker: model name -> Parser


class WorkerDied(RuntimeError):
    """A worker process ended while working on the request (killed, out of memory)."""


class ClientGone(Exception):
    """The client went away before its answer was ready (no further chunk is parsed)."""


@dataclass
class Failed:
    """A :class:`~depparse.errors.DepparseError` in a worker: its one-line message."""

    message: str


@dataclass
class Answer:
    """What the workers made of a request."""

    sentences: list  # the output Sentences, in order
    info: list  # per sentence: a dict for the JSON answer (rich), else None
    warnings: list[str]

    def conllu(self) -> str:
        buf = io.BytesIO()
        write_conllu(self.sentences, buf)
        return buf.getvalue().decode("utf-8")


# ---------------------------------------------------------------------------------------
# in the worker processes


def _init(models: dict[str, str]) -> None:
    # Ctrl-C is the server's to handle (the executor's pool ignores it in its workers)
    from .preload import LOADED  # forked from the fork server: its models, loaded

    try:
        for name, path in models.items():
            got = LOADED.get(name)
            _STATE[name] = got[1] if got is not None and got[0] == path else _load(path)
    except DepparseError as e:  # told to the server by _describe
        _STATE.clear()
        _STATE[None] = " ".join(str(e).split())


def _shared() -> list[str]:
    """The served models this worker got from the fork server (:mod:`.preload`): loaded
    there, before this process was forked from it."""
    from .preload import LOADED, LOADED_IN

    return sorted(n for n, p in _STATE.items() if n is not None and n in LOADED
                  and LOADED[n][1] is p and LOADED_IN != os.getpid())


def _describe():
    if None in _STATE:
        return Failed(_STATE[None])
    return {name: {"tokenizer": p.tokenizer is not None, "tagger": p.tagger is not None,
                   "parser": True} for name, p in _STATE.items()}


def _warned(fn, *args):
    """``fn(*args)`` with the warnings it gives as one-line strings; a DepparseError becomes
    :class:`Failed`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(*args)
        except DepparseError as e:
            return Failed(" ".join(str(e).split())), []
    return out, [" ".join(str(w.message).split()) for w in caught]


def _read(job: Job, max_words: int):
    return _warned(_read_job, job, max_words)


def _read_job(job: Job, max_words: int):
    from ..inference.columns import TAG_COLUMNS

    parser = _STATE[job.model]
    if job.input == "text":
        sents = parser.read_text(job.data, source=SOURCE,
                                 normalized_spaces=job.normalized_spaces,
                                 presegmented=job.presegmented, ranges=job.ranges)
    else:
        f = io.BytesIO(job.data.encode("utf-8"))
        f.name = SOURCE
        sents = read_conllu(f) if job.input == "conllu" else list(iter_words(f, job.input))
    _check_language(parser, sents)
    for s in sents:
        if s.n > max_words:
            raise DepparseError(f"{SOURCE}:{s.line_no}: a sentence of {s.n:,} words; this "
                                f"server parses at most {max_words:,} words per sentence "
                                "(depparse serve --max-words)")
    if job.parse:  # per sentence (a model without a tagger warns about untagged input)
        columns = [cols for _, cols in parser.columns.assign(sents, job.tag)]
    elif job.tag:
        if parser.tagger is None:
            raise DepparseError(f"model {job.model} has no tagger")
        columns = [tuple(TAG_COLUMNS)] * len(sents)
    else:
        columns = [()] * len(sents)
    return sents, columns


def _check_language(parser, sents) -> None:
    """Warn (into the answer's ``warnings``) when the request's text does not look like the
    model's language (:func:`depparse.catalog.check_language`), naming the served model that
    fits it better, or the installed one the server could serve."""
    from ..catalog import check_language
    from ..encoding.language import sentence_text

    if parser.path is None:
        return
    fit = check_language(parser.path, (sentence_text(s) for s in sents))
    if fit is None or fit.fits:
        return
    served = {os.path.realpath(p.path): name for name, p in _STATE.items()
              if name is not None and p.path}

    def advice(entry):
        name = served.get(os.path.realpath(entry.path))
        if name is not None:
            return f"ask for model={name}"
        return (f"depparse has a model for it ({entry.name}), which this server does not "
                f"serve (depparse serve -m {entry.lang})")

    warnings.warn(fit.message(SOURCE, advice), InputWarning, stacklevel=2)


def _work(model, sents, columns, parse, time_limit, rich, prefix, first):
    parser = _STATE[model]
    if parse:
        pairs = parser.engine.iter_parsed(zip(sents, columns, strict=True), time_limit=time_limit,
                                   trace=False)
    else:
        pairs = [(parser.tag([s], cols)[0], None) for s, cols in zip(sents, columns, strict=True)]
    out, info = [], []
    for k, (s, r) in enumerate(pairs):
        out.append(s)
        info.append(_info(s, r, first + k, prefix) if rich else None)
    return out, info


def _info(s, r, index, prefix) -> dict:
    """The JSON of one sentence in ``/parse``'s answer."""
    proof = None
    if r is not None:
        proof = {"optimal": bool(r.optimal), "proof": r.proof, "certificate": bool(r.certificate),
                 "iterations": int(r.iterations), "nodes": int(r.nodes),
                 "seconds": round(float(r.seconds), 6), "timed_out": bool(r.timed_out),
                 "optimal_over": r.optimal_over}
    kind, words = proof_badge(proof)
    return {"index": index, "sent_id": s.sent_id, "text": s.text,
            "words": list(s.forms[1:]), "lemmas": list(s.lemmas[1:]), "upos": list(s.upos[1:]),
            "xpos": list(s.xpos[1:]), "feats": list(s.feats[1:]),
            "heads": [int(h) for h in s.heads[1:]], "labels": list(s.rels[1:]),
            **(proof or {"optimal": None, "proof": None}),
            "badge": {"kind": kind, "text": words},
            "html": sentence_html(tree_from_sentence(s, proof), index, prefix)}


# ---------------------------------------------------------------------------------------
# in the server


def _chunks(sents, words):
    out, cur, size = [], [], 0
    for s in sents:
        if cur and size + s.n > words:
            out.append(cur)
            cur, size = [], 0
        cur.append(s)
        size += s.n
    return out + ([cur] if cur else [])


class Slots:
    """Who runs next on the workers: at most ``jobs`` tasks in the pool at once; a waiting
    *short* task (at most :data:`LONG_WORDS` words) starts before every waiting long one (first
    come, first served within each kind); and long tasks take at most ``jobs - 1`` workers at
    once (with two or more), so that one is always free for short ones.  A task that is
    running cannot be stopped (a 300-word sentence decodes for seconds): this is what keeps
    the short requests' latency low while long ones run."""

    def __init__(self, jobs: int) -> None:
        self.free = jobs
        self.long_free = max(1, jobs - 1)
        self._waiting: list = []  # heap of (long, arrival, future)
        self._arrival = itertools.count()

    def _fits(self, long: bool) -> bool:
        return self.free > 0 and (not long or self.long_free > 0)

    def _take(self, long: bool) -> None:
        self.free -= 1
        self.long_free -= long

    async def acquire(self, long: bool) -> None:
        ahead = any(not f.done() and w <= long for w, _, f in self._waiting)
        if not ahead and self._fits(long):
            self._take(long)
            return
        fut = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (long, next(self._arrival), fut))
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # given a place just as it was cancelled
                self.release(long)
            raise

    def release(self, long: bool) -> None:
        self.free += 1
        self.long_free += long
        kept = []
        while self._waiting:
            long_, k, fut = heapq.heappop(self._waiting)
            if fut.done():  # cancelled while waiting
                continue
            if not self._fits(long_):  # then nothing behind it fits either
                kept.append((long_, k, fut))
                break
            self._take(long_)
            fut.set_result(None)
        for item in kept:
            heapq.heappush(self._waiting, item)


class Workers:
    """The pool of parsing processes (module docstring).

    Parameters
    ----------
    models : dict
        Served model name -> model file.
    jobs : int
        Worker processes.
    queue : int
        Requests worked on or waiting at once; one more is answered 503.
    max_words : int
        Words per sentence.
    """

    def __init__(self, models: dict[str, str], jobs: int, queue: int, max_words: int,
                 chunk_words: int = CHUNK_WORDS) -> None:
        self.models = {n: os.fspath(p) for n, p in models.items()}
        self.jobs = max(1, int(jobs))
        self.queue = max(1, int(queue))
        self.max_words = max_words
        self.chunk_words = chunk_words
        self.pending = 0
        self.capabilities: dict = {}
        self.restarts = 0
        self.slots = Slots(self.jobs)
        self._ex: ProcessBackend | None = None

    def _new_pool(self) -> ProcessBackend:
        if "forkserver" in mp.get_all_start_methods():
            ctx = mp.get_context("forkserver")
            _start_fork_server(ctx, self.models)
        else:
            ctx = mp.get_context("spawn")
        # Slots, not the backend's window, decides how many tasks are in the pool
        return ProcessBackend(self.jobs, ctx, _init, (self.models,))

    async def start(self) -> None:
        """Start the processes and wait until each has loaded the models."""
        self._ex = self._new_pool()
        caps = await asyncio.gather(*(self._call(_describe) for _ in range(self.jobs)))
        failed = next((c for c in caps if isinstance(c, Failed)), None)
        if failed is not None:
            raise ModelError(failed.message)
        self.capabilities = caps[0]

    def close(self) -> None:
        if self._ex is not None:
            self._ex.close()
            self._ex = None

    async def _call(self, fn, *args, words: int = 0):
        long = words > LONG_WORDS
        await self.slots.acquire(long)
        ex = self._ex
        try:
            # off the event loop: starting a worker waits for the fork server's fork
            future = await asyncio.to_thread(ex.submit, fn, *args)
            return await asyncio.wrap_future(future)
        except Exception as e:
            if not ex.died(e):
                raise
            if ex is self._ex:  # the first to notice starts a new pool
                log.error("a worker process died; starting the workers afresh")
                self.restarts += 1
                ex.close(wait=False)
                self._ex = self._new_pool()
            raise WorkerDied("a worker process died while parsing this request (killed or "
                             "out of memory); the request was not parsed") from None
        finally:
            self.slots.release(long)

    def admit(self) -> _Ticket:
        """A place in the queue (``with workers.admit(): ...``), or RequestError 503."""
        if self.pending >= self.queue:
            raise RequestError(503, f"the server is busy: {self.pending} requests are being "
                                    "parsed or waiting; try again shortly")
        return _Ticket(self)

    async def run(self, job: Job, rich: bool = False, prefix: str = "s",
                  gone=None) -> Answer:
        """Read, tag and parse ``job`` (see the module docstring).

        ``gone``: an async callable telling whether the client has gone away; no further
        chunk is started then (the answer would have no reader).

        Raises
        ------
        RequestError
            400 for input that cannot be read (the CLI's one-line message).
        WorkerDied
            When a worker process died.
        ClientGone
            When ``gone()`` said so before a chunk.
        """
        # the read step's size in words: a CoNLL-U (vertical) line is at most a word
        size = (job.data.count("\n") + 1 if job.input in ("conllu", "vertical")
                else len(job.data.split()))
        out, warned = await self._call(_read, job, self.max_words, words=size)
        if isinstance(out, Failed):
            raise RequestError(400, out.message)
        sents, columns = out
        chunks = _chunks(sents, self.chunk_words)
        results: list = [None] * len(chunks)
        firsts = [1]
        for c in chunks[:-1]:
            firsts.append(firsts[-1] + len(c))
        gate = asyncio.Semaphore(self.jobs)

        async def one(i):
            async with gate:
                if gone is not None and await gone():
                    raise ClientGone()
                cols = columns[firsts[i] - 1:firsts[i] - 1 + len(chunks[i])]
                results[i] = await self._call(_work, job.model, chunks[i], cols, job.parse,
                                              job.time_limit, rich, prefix, firsts[i],
                                              words=sum(s.n for s in chunks[i]))

        tasks = [asyncio.ensure_future(one(i)) for i in range(len(chunks))]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for t in tasks:  # chunks not started yet are dropped from the pool's queue
                t.cancel()
            raise
        answer = Answer([], [], list(job.warnings) + warned)
        for parsed, info in results:
            answer.sentences += parsed
            answer.info += info
        return answer


def _start_fork_server(ctx, models: dict[str, str]) -> None:
    """Start the fork server with ``models`` preloaded in it (:mod:`.preload`; the variable
    is set for its start only).  One already running is left as it is."""
    from multiprocessing import forkserver

    from .preload import ENV

    ctx.set_forkserver_preload(["depparse.serve.preload"])
    before = os.environ.get(ENV)
    os.environ[ENV] = json.dumps(models)
    try:
        forkserver.ensure_running()
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before


class _Ticket:
    def __init__(self, workers: Workers) -> None:
        self.workers = workers

    def __enter__(self) -> _Ticket:
        self.workers.pending += 1
        return self

    def __exit__(self, *exc) -> None:
        self.workers.pending -= 1


def processes() -> dict[int, tuple[int, bytes]]:
    """``pid -> (parent pid, command line)`` of every process this user can see (Linux
    ``/proc``; empty where there is none)."""
    out = {}
    for d in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    cmd = f.read()
            except (OSError, ValueError, IndexError):
                continue
            out[int(d)] = (ppid, cmd)
    return out


def _tree(pid: int) -> list[int]:
    """``pid`` and all its descendants (:func:`processes`; ``[pid]`` where none can be read)."""
    children: dict[int, list[int]] = {}
    for p, (ppid, _) in processes().items():
        children.setdefault(ppid, []).append(p)
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def _field_kb(path: str, key: str) -> int | None:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def rss_mb(pid: int | None = None) -> float:
    """Resident memory (MB) of a process and all its descendants, summed: pages shared by
    several of them (the workers' models, forked from one fork server) count once in each
    (Linux ``/proc``; 0 where it cannot be read)."""
    pid = os.getpid() if pid is None else pid
    return sum(_field_kb(f"/proc/{p}/status", "VmRSS:") or 0 for p in _tree(pid)) / 1024


def pss_mb(pid: int | None = None) -> float:
    """Proportional memory (MB) of a process and all its descendants: each page divided
    among the processes that share it, so the sum is what the tree holds (Linux 4.14's
    ``/proc/PID/smaps_rollup``; a process where it cannot be read counts its resident
    memory; 0 where nothing can be read)."""
    pid = os.getpid() if pid is None else pid
    total = 0
    for p in _tree(pid):
        kb = _field_kb(f"/proc/{p}/smaps_rollup", "Pss:")
        total += kb if kb is not None else (_field_kb(f"/proc/{p}/status", "VmRSS:") or 0)
    return total / 1024
