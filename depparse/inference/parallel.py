"""Multi-core parsing: sentences are parsed in worker processes, output in input order.

:func:`parse_parallel` is what ``Parser.parse(..., jobs=N)`` and ``depparse parse --jobs N``
use.  Properties:

* **Same output as one process.**  The input is cut into chunks of consecutive sentences;
  chunk ``i``'s results go to slot ``i`` whatever the order in which workers finish, and
  decoding is deterministic, so the output is byte-identical to ``jobs=1`` (except under
  ``time_limit``, where how far dual decomposition gets depends on the clock).
* **No per-worker compilation.**  The parent parses a tiny sentence first, which loads (or,
  on a cold cache, compiles and caches) every numba kernel; with the ``fork`` start method
  the workers inherit the loaded kernels and the model (copy-on-write, nothing is pickled),
  elsewhere they load both from disk / the pickled parser.
* **Small messages.**  With ``fork`` the workers inherit the sentence list too and receive
  only ``(start, stop)`` index ranges; they send back heads, relations and the
  :class:`~depparse.inference.parser.ParseResult` of each sentence, and the parent rebuilds the
  parsed sentences with :meth:`~depparse.conllu.Sentence.with_parse`.
* **Clean failures.**  An exception raised while parsing a sentence is re-raised in the
  parent as the same exception type (the worker's traceback is chained as its cause); a
  worker that dies (killed, out of memory, segfault) raises :class:`WorkerDiedError`; on
  any error or Ctrl-C the pending chunks are cancelled and the workers are stopped.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import signal
import warnings
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from ..conllu import read_sentence

__all__ = ["WorkerDiedError", "chunk_bounds", "parse_parallel", "warmup"]

#: State of a worker process (set by :func:`_init`, or inherited through ``fork``).
_STATE: dict = {}

#: A 3-word sentence used to load the numba kernels before the workers start.
_WARMUP = ("1\ta\ta\tNOUN\t_\t_\t2\tnsubj\t_\t_\n"
           "2\tb\tb\tVERB\t_\t_\t0\troot\t_\t_\n"
           "3\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_\n")


class WorkerDiedError(RuntimeError):
    """A worker process ended abruptly (killed by a signal, out of memory, crashed)."""


def warmup(parser, **kw):
    """Parse a 3-word sentence: loads (or compiles and caches) every kernel ``parser`` uses."""
    parser.parse_one(read_sentence(_WARMUP, "<warmup>"), **kw)


def chunk_bounds(n, jobs, chunk_size=None):
    """``(start, stop)`` of the chunks: about 8 per worker, 1 to 32 sentences each."""
    if chunk_size is None:
        chunk_size = max(1, min(32, n // (8 * jobs)))
    return [(i, min(n, i + chunk_size)) for i in range(0, n, chunk_size)]


def _init(parser, kw, sentences):
    # Ctrl-C goes to the whole process group: the parent alone handles it (and stops us).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if parser is not None:  # not inherited through fork
        _STATE.update(parser=parser, kw=kw, sentences=sentences)


def _work(task):
    start, stop, chunk = task
    state = _STATE
    if chunk is None:
        chunk = state["sentences"][start:stop]
    parser, kw = state["parser"], state["kw"]
    # the chunk's encoder vectors in one batch (Parser.parse_many)
    out = [(parsed.heads, parsed.rels, r) for parsed, r in parser.parse_many(chunk, **kw)]
    return start, out


def _stop_workers(ex):
    """Terminate the pool's processes (after an error or Ctrl-C; never on success)."""
    procs = getattr(ex, "_processes", None) or {}
    for p in list(procs.values()):
        try:
            p.terminate()
        except (OSError, AttributeError, ValueError):
            pass


def parse_parallel(parser, sentences, jobs, kw, chunk_size=None, start_method=None):
    """Parse ``sentences`` with ``jobs`` worker processes.

    Parameters
    ----------
    parser : depparse.inference.parser.Parser
    sentences : list of Sentence
    jobs : int
        Worker processes (at least 1; the parent only distributes work and collects).
    kw : dict
        Keywords of :meth:`~depparse.inference.parser.Parser.parse_one` (``max_iter``,
        ``single_root``, ``time_limit``, ``trace``).
    chunk_size : int, optional
        Sentences per task (default: about 8 tasks per worker, at most 32 sentences each).
    start_method : {"fork", "spawn", "forkserver"}, optional
        Default: ``fork`` where it exists, else ``spawn`` (the parser is then pickled to each
        worker, which loads the kernels from numba's disk cache).  Give ``"spawn"`` or
        ``"forkserver"`` when this process runs threads that may hold locks at the moment
        of the fork (forking a multi-threaded process can deadlock the child).

    Returns
    -------
    list of (Sentence, ParseResult)
        In input order; identical to ``[parser.parse_one(s, **kw) for s in sentences]``.

    Raises
    ------
    WorkerDiedError
        If a worker process died.
    Exception
        Whatever ``parse_one`` raised in a worker, re-raised here.
    """
    sentences = list(sentences)
    n = len(sentences)
    if n == 0:
        return []
    jobs = max(1, min(int(jobs), n))
    bounds = chunk_bounds(n, jobs, chunk_size)
    warm_kw = {k: v for k, v in kw.items() if k != "time_limit"}
    warmup(parser, **warm_kw)
    if start_method is None:
        start_method = ("fork" if "fork" in mp.get_all_start_methods() and os.name == "posix"
                        else "spawn")
    fork = start_method == "fork"
    if fork:
        # the workers are forked when the pool starts: they inherit the parser, the
        # sentences and the loaded numba kernels
        ctx = mp.get_context("fork")
        _STATE.update(parser=parser, kw=kw, sentences=sentences)
        initargs = (None, None, None)
        tasks = [(a, b, None) for a, b in bounds]
    else:
        ctx = mp.get_context(start_method)
        initargs = (parser, kw, None)
        tasks = [(a, b, sentences[a:b]) for a, b in bounds]
    out: list = []
    if fork:
        # keep the collector of the workers off the inherited objects: its bookkeeping
        # writes into every object it visits, which would copy their pages (copy-on-write)
        gc.freeze()
    ex = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init,
                             initargs=initargs)
    ok = False
    futures: list = []
    try:
        with warnings.catch_warnings():
            # JAX (imported where a learned network was trained in this process) warns at
            # every fork that its threads may deadlock the child; the workers never call JAX
            # (they run the network in NumPy), so the warning does not apply to them
            warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called",
                                    category=RuntimeWarning)
            futures = [ex.submit(_work, t) for t in tasks]
        for i, f in enumerate(futures):
            try:
                start, res = f.result()
            except BrokenProcessPool:
                a, b = bounds[i]
                where = f"{sentences[a].source}:{sentences[a].line_no}"
                raise WorkerDiedError(
                    f"a worker process died (killed, out of memory or crashed); sentences "
                    f"{a + 1}-{b} of the input (from {where}) and later ones were not "
                    "parsed") from None
            a, b = bounds[i]
            if start != a or len(res) != b - a:  # pragma: no cover - a bug, not bad input
                raise RuntimeError(f"chunk {i}: got results for {start}+{len(res)}, "
                                   f"expected {a}-{b}")
            # rebuilt here while the workers parse the next chunks
            for s, (heads, rels, r) in zip(sentences[a:b], res, strict=True):
                out.append((s.with_parse(heads, rels), r))
        ok = True
    finally:
        if fork:
            _STATE.clear()
            gc.unfreeze()
        if not ok:
            for f in futures:
                f.cancel()
            _stop_workers(ex)
        ex.shutdown(wait=True, cancel_futures=True)
    return out
