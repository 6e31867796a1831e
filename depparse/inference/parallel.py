"""Multi-core parsing: a stream of sentences parsed in worker processes, output in input order.

:func:`iter_parallel` is what ``Parser.iter_parse_results(..., jobs=N)`` (so ``parse``,
``parse_results`` and ``depparse parse --jobs N``) runs on; :func:`parse_parallel` is its list.
Properties:

* **Streaming, bounded memory.**  The input is read lazily and cut into chunks of
  consecutive sentences; at most a few chunks per worker are in flight (:data:`IN_FLIGHT`),
  and the results are yielded as soon as the chunks before them are done.  A stream of any
  length is parsed with the memory of the model and a window of sentences.
* **Same output as one process.**  Chunk ``i``'s results are yielded ``i``-th whatever the
  order in which workers finish, and decoding is deterministic, so the output is
  byte-identical to ``jobs=1`` (except under ``time_limit``, where how far dual
  decomposition gets depends on the clock).
* **No per-worker compilation.**  The parent parses a tiny sentence first (:func:`warmup`),
  which loads (or, on a cold cache, compiles and caches) the numba kernels; with the
  ``fork`` start method the workers inherit the loaded kernels and the model (copy-on-write,
  nothing is pickled), elsewhere they load both from disk / the pickled parser.
* **Small messages.**  A task is a chunk of sentences (with the tag columns to predict in
  each); the workers send back heads, relations, predicted tags and the
  :class:`~depparse.inference.parser.ParseResult` of each sentence, and the parent rebuilds the
  parsed sentences with :meth:`~depparse.conllu.Sentence.with_parse`.
* **Clean failures.**  An exception raised while parsing a sentence is re-raised in the
  parent as the same exception type (the worker's traceback is chained as its cause); a
  worker that dies (killed, out of memory, segfault) raises :class:`WorkerDiedError`; on
  any error, Ctrl-C or a consumer that stops reading, the pending chunks are cancelled and the
  workers are stopped.

The chunks go through the one executor (:func:`~depparse.inference.executor.map_in_order` on a
:class:`~depparse.inference.executor.ProcessBackend`), as the server's and Dask's do.
"""

from __future__ import annotations

import gc
import itertools
import multiprocessing as mp
import os

from ..conllu import read_sentence
from .executor import ProcessBackend, map_in_order

__all__ = ["IN_FLIGHT", "WorkerDiedError", "chunk_bounds", "chunk_sizes", "iter_parallel",
           "parse_parallel", "warmup"]

#: Chunks in flight per worker (submitted, not yet yielded): enough to keep every worker busy
#: while the parent collects, few enough to keep the memory bounded.
IN_FLIGHT = 3

#: Largest chunk (sentences per task); chunks grow to it from 1 so that a short input is
#: spread over the workers too.
MAX_CHUNK = 32

#: The tag columns and the keywords of ``Sentence.with_tags`` that set them.
_TAG_ATTRS = {"UPOS": "upos", "XPOS": "xpos", "LEMMA": "lemmas", "FEATS": "feats"}

#: State of a worker process (set by :func:`_init`, or inherited through ``fork``).
_STATE: dict = {}

#: A 3-word sentence used to load the numba kernels before the workers start.
_WARMUP = ("1\ta\ta\tNOUN\t_\t_\t2\tnsubj\t_\t_\n"
           "2\tb\tb\tVERB\t_\t_\t0\troot\t_\t_\n"
           "3\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_\n")


class WorkerDiedError(RuntimeError):
    """A worker process ended abruptly (killed by a signal, out of memory, crashed)."""


def warmup(parser, **kw):
    """Parse a 3-word sentence: loads (or compiles and caches) the kernels ``parser`` uses,
    the tagger's too when the model has one."""
    s = read_sentence(_WARMUP, "<warmup>")
    if parser.tagger is not None:
        parser.engine.parse_one(s, tag_columns=("UPOS", "XPOS", "LEMMA", "FEATS"), **kw)
    parser.engine.parse_one(s, **kw)


def chunk_bounds(n, jobs, chunk_size=None):
    """``(start, stop)`` of the chunks of a list of ``n`` sentences: about 8 per worker, 1 to
    32 sentences each."""
    if chunk_size is None:
        chunk_size = max(1, min(MAX_CHUNK, n // (8 * jobs)))
    return [(i, min(n, i + chunk_size)) for i in range(0, n, chunk_size)]


def chunk_sizes(jobs, chunk_size=None):
    """The sizes of the consecutive chunks of a stream (an endless iterator): ``chunk_size``
    each when given, else 1, 2, 4 ... up to :data:`MAX_CHUNK`, each size ``jobs`` times (a
    short input still reaches every worker; a long one goes in chunks big enough for the
    encoder's batches)."""
    if chunk_size is not None:
        return itertools.repeat(max(1, int(chunk_size)))
    ramp = []
    k = 1
    while k < MAX_CHUNK:
        ramp += [k] * jobs
        k *= 2
    return itertools.chain(ramp, itertools.repeat(MAX_CHUNK))


def _init(parser, kw):
    if parser is not None:  # not inherited through fork
        _STATE.update(parser=parser, kw=kw)


def _work(chunk):
    """Parse a chunk of ``(sentence, tag_columns)`` pairs: per sentence its heads, relations,
    the predicted tag columns (``{attribute: values}``) and the ParseResult."""
    parser, kw = _STATE["parser"], _STATE["kw"]
    out = []
    for parsed, r in parser.engine.iter_parsed(chunk, **kw):
        tags = {_TAG_ATTRS[c]: getattr(parsed, _TAG_ATTRS[c]) for c in r.tagged}
        out.append((parsed.heads, parsed.rels, tags, r))
    return out


def _rebuild(s, heads, rels, tags):
    """The parsed copy of ``s`` from what a worker sent back."""
    if tags:
        s = s.with_tags(**tags)
    return s.with_parse(heads, rels)


def _died(chunk) -> WorkerDiedError:
    """The error of a pool whose worker died: the sentences from ``chunk``'s first on (the
    first not returned) were not parsed."""
    s = chunk[0][0]
    return WorkerDiedError(f"a worker process died (killed, out of memory or crashed); the "
                           f"sentences from {s.source}:{s.line_no} on were not parsed")


def iter_parallel(parser, items, jobs, kw, chunk_size=None, start_method=None):
    """Parse a stream of ``(sentence, tag_columns)`` pairs with ``jobs`` worker processes.

    Parameters
    ----------
    parser : depparse.inference.parser.Parser
    items : iterable of (Sentence, tuple)
        The sentences and the tag columns to predict in each
        (:meth:`~depparse.inference.columns.ColumnPolicy.assign`), read lazily.
    jobs : int
        Worker processes (at least 1; the parent reads, distributes and collects).
    kw : dict
        Keywords of :meth:`~depparse.inference.engine.Engine.parse_one` (``max_iter``,
        ``single_root``, ``time_limit``, ``trace``).
    chunk_size : int, optional
        Sentences per task (default: :func:`chunk_sizes`).
    start_method : {"fork", "spawn", "forkserver"}, optional
        Default: ``fork`` where it exists, else ``spawn`` (the parser is then pickled to each
        worker, which loads the kernels from numba's disk cache).  Give ``"spawn"`` or
        ``"forkserver"`` when this process runs threads that may hold locks at the moment
        of the fork (forking a multi-threaded process can deadlock the child).

    Yields
    ------
    (Sentence, ParseResult)
        In input order; identical to ``parser.engine.parse_one(s, tag_columns=c, **kw)`` for each
        pair.  An input of a single chunk is parsed in this process (no workers started).

    Raises
    ------
    WorkerDiedError
        If a worker process died.
    Exception
        Whatever ``parse_one`` raised in a worker, re-raised here.
    """
    items = iter(items)
    sizes = chunk_sizes(max(1, int(jobs)), chunk_size)
    first = list(itertools.islice(items, next(sizes)))
    second = list(itertools.islice(items, next(sizes)))
    if not second:  # one chunk: no worker is worth starting
        yield from parser.engine.iter_parsed(first, **kw)
        return
    chunks = itertools.chain([first, second],
                             iter(lambda: list(itertools.islice(items, next(sizes))), []))
    warm_kw = {k: v for k, v in kw.items() if k != "time_limit"}
    warmup(parser, **warm_kw)
    if start_method is None:
        start_method = ("fork" if "fork" in mp.get_all_start_methods() and os.name == "posix"
                        else "spawn")
    fork = start_method == "fork"
    if fork:
        # the workers are forked when the first task is submitted: they inherit the parser
        # and the loaded numba kernels
        _STATE.update(parser=parser, kw=kw)
        initargs = (None, None)
        # keep the collector of the workers off the inherited objects: its bookkeeping
        # writes into every object it visits, which would copy their pages (copy-on-write)
        gc.freeze()
    else:
        initargs = (parser, kw)
    pool = ProcessBackend(jobs, mp.get_context(start_method), _init, initargs,
                          window=IN_FLIGHT * jobs)
    ok = False
    try:
        for done, res in map_in_order(pool, _work, chunks, on_died=_died):
            if len(res) != len(done):  # pragma: no cover - a bug, not bad input
                raise RuntimeError(f"a chunk of {len(done)} sentences came back with "
                                   f"{len(res)} results")
            for (s, _), (heads, rels, tags, r) in zip(done, res, strict=True):
                yield _rebuild(s, heads, rels, tags), r
        ok = True
    finally:
        if fork:
            _STATE.clear()
            gc.unfreeze()
        pool.close(stop=not ok)


def parse_parallel(parser, sentences, jobs, kw, chunk_size=None, start_method=None):
    """:func:`iter_parallel` of a list of sentences, as a list of ``(Sentence, ParseResult)``
    pairs; ``kw`` may hold ``tag_columns`` (the same for every sentence)."""
    kw = dict(kw)
    cols = tuple(kw.pop("tag_columns", ()))
    return list(iter_parallel(parser, ((s, cols) for s in sentences), jobs, kw,
                              chunk_size=chunk_size, start_method=start_method))
