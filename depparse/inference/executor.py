"""One executor: chunks of work mapped in order, on a backend.

:func:`map_in_order` submits ``fn(*args, chunk)`` for each chunk of an iterable to a backend,
keeps at most the backend's ``window`` chunks in flight, and yields ``(chunk, result)`` in the
chunks' order, whatever the order in which they finish.  The input is read lazily (a stream
of any length goes through in bounded memory); on an error, Ctrl-C or a consumer that stops
reading, the chunks in flight are cancelled.  A backend says which of its failures mean that
a worker died (:meth:`Backend.died`), and the caller names what was lost (``on_died``).

The backends:

* :class:`LocalBackend`: this process, one chunk at a time (an input of one chunk; tests);
* :class:`ProcessBackend`: a pool of worker processes (``fork``, ``spawn`` or
  ``forkserver``), started on the first chunk: ``parse --jobs N``
  (:mod:`depparse.inference.parallel`) and the server's pool
  (:class:`depparse.serve.workers.Workers`, which awaits the futures on its event loop);
* :class:`depparse.distributed.DaskBackend`: the tasks of a Dask cluster, sentence shards and
  byte-range shards alike (``parse --scheduler``, :func:`depparse.distributed.parse_distributed`).
"""

from __future__ import annotations

import collections
import itertools
import signal
import warnings
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Protocol

__all__ = ["Backend", "LocalBackend", "ProcessBackend", "map_in_order"]


class Backend(Protocol):
    """Where chunks run.  ``window``: chunks in flight at once (None: every chunk)."""

    window: int | None

    def submit(self, fn, *args) -> Future: ...

    def died(self, error: BaseException) -> bool:
        """Does ``error`` (raised by :meth:`submit` or by a future's ``result()``) mean that a
        worker died, rather than that ``fn`` raised?"""
        ...

    def close(self, stop: bool = False) -> None:
        """Release the workers (``stop``: after an error, stop them now)."""
        ...

    # optional: ``cancel(futures)``, the futures still in flight when a map stops early, in
    # one call (else each future's own ``cancel()``)


def map_in_order(backend: Backend, fn: Callable, chunks: Iterable, args: tuple = (),
                 on_died: Callable | None = None) -> Iterator[tuple]:
    """``(chunk, fn(*args, chunk))`` for each chunk, in the chunks' order (module docstring).

    The first window of chunks (every chunk, where the window is None) is submitted here, at
    the call, before anything is taken: the workers start while the caller does other work.
    ``on_died(chunk)``: the exception to raise, instead of the backend's own, when a worker
    died; ``chunk`` is the first one not returned.  What ``fn`` raised is raised here as it
    is, in its chunk's place in the order.  The backend is not closed here."""
    run = _map_in_order(backend, fn, iter(chunks), args, on_died)
    next(run)  # the first window submitted
    return run


def _map_in_order(backend, fn, chunks, args, on_died):
    window = backend.window
    pending: collections.deque = collections.deque()

    def submit(chunk) -> None:
        try:
            pending.append((chunk, backend.submit(fn, *args, chunk)))
        except BaseException as e:
            if on_died is not None and backend.died(e):
                raise on_died(pending[0][0] if pending else chunk) from None
            raise

    ok = False
    try:
        for chunk in chunks if window is None else itertools.islice(chunks, window):
            submit(chunk)
        yield None  # primed: map_in_order returns here
        while pending:
            done, future = pending.popleft()
            try:
                result = future.result()
            except BaseException as e:
                if on_died is not None and backend.died(e):
                    raise on_died(done) from None
                raise
            future = None  # the map keeps no finished future (a cluster may drop its result)
            yield done, result
            if window is not None:
                for chunk in itertools.islice(chunks, 1):  # one out, one in
                    submit(chunk)
        ok = True
    finally:
        if not ok and pending:
            futures = [f for _, f in pending]
            if hasattr(backend, "cancel"):
                backend.cancel(futures)  # in one call (a cluster's round trip)
            else:
                for f in futures:
                    f.cancel()


class LocalBackend:
    """This process: each chunk runs when it is submitted."""

    window = 1

    def submit(self, fn, *args) -> Future:
        f: Future = Future()
        try:
            f.set_result(fn(*args))
        except Exception as e:  # noqa: BLE001 - handed to the caller by result()
            f.set_exception(e)
        return f

    def died(self, error) -> bool:
        return False

    def close(self, stop: bool = False) -> None:
        pass


def _ignore_sigint(initializer, initargs):
    # Ctrl-C goes to the whole process group: the parent alone handles it (and stops us)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if initializer is not None:
        initializer(*initargs)


class ProcessBackend:
    """A pool of ``jobs`` worker processes (:class:`~concurrent.futures.ProcessPoolExecutor`),
    each started by ``initializer(*initargs)`` with Ctrl-C left to the parent; ``context``:
    a :mod:`multiprocessing` context; ``window``: chunks in flight (default ``3 * jobs``:
    every worker busy while the parent collects, the memory bounded)."""

    def __init__(self, jobs: int, context, initializer=None, initargs=(), window=None):
        self.jobs = max(1, int(jobs))
        self.window = 3 * self.jobs if window is None else window
        self._fork = context.get_start_method() == "fork"
        self._pool = ProcessPoolExecutor(self.jobs, mp_context=context,
                                         initializer=_ignore_sigint,
                                         initargs=(initializer, tuple(initargs)))

    def submit(self, fn, *args) -> Future:
        try:
            if not self._fork:
                return self._pool.submit(fn, *args)
            with warnings.catch_warnings():
                # JAX (imported where a learned network was trained in this process) warns
                # at every fork that its threads may deadlock the child; the workers never
                # call JAX (they run the network in NumPy), so the warning does not apply
                warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called",
                                        category=RuntimeWarning)
                return self._pool.submit(fn, *args)
        except (EOFError, ConnectionError) as e:  # a fork server that died
            raise BrokenProcessPool(str(e)) from e

    def died(self, error) -> bool:
        return isinstance(error, BrokenProcessPool)

    def close(self, stop: bool = False, wait: bool = True) -> None:
        """Shut the pool down (``wait``: until its processes have ended); ``stop`` (after an
        error, Ctrl-C): terminate the workers first instead of letting them finish."""
        if stop:
            for p in list((getattr(self._pool, "_processes", None) or {}).values()):
                try:
                    p.terminate()
                except (OSError, AttributeError, ValueError):
                    pass
        self._pool.shutdown(wait=wait, cancel_futures=True)
