"""An iterable worked through on a helper thread, a few items ahead of its consumer.

The parse path spends about a quarter of its time in the encoder's forward passes (NumPy
matrix products, which release the GIL), a fifth in the learned network's, and most of the
rest in Python and in Numba kernels (the hottest of which release the GIL too).
:func:`run_ahead` lets the encoder and the network compute the next batch on the second core
while the parser decodes the current one: the same arrays, in the same order, so the output
is the same; on en_ewt test's raw text, 1.2-1.4 times the words per second on the 2-core
machine with the encoder alone ahead, and 1.2 times that with the network too
(benchmarks/experiments/README.md, "The encoder a batch ahead" and "The learned network
ahead too").
"""

from __future__ import annotations

import queue
import threading

__all__ = ["JOIN_SECONDS", "run_ahead"]

JOIN_SECONDS = 10.0  # how long a closed run_ahead waits for its thread (see run_ahead)
_POLL = 0.05  # seconds between the helper's checks that its consumer has stopped
_ITEM, _END, _RAISED = range(3)


def run_ahead(iterable, depth: int = 2, name: str = "depparse-ahead"):
    """Yield the items of ``iterable`` in order, the iterable itself being run on a helper
    thread at most ``depth`` items ahead of the consumer (a generator: the thread starts
    with the first ``next``).

    Whatever the iterable raises (a bad input line, say) is raised here, at the place of
    the item it failed to give, with its own type, message and traceback.  When the
    consumer stops early (``close``, an error, Ctrl-C), the helper stops at its next item,
    closes the iterable in its own thread and is joined; a helper blocked longer than
    :data:`JOIN_SECONDS` inside the iterable (reading a terminal, say) is left to finish
    alone (a daemon thread: it never keeps the process from exiting).
    """
    if depth < 1:
        raise ValueError(f"depth {depth}: must be >= 1")
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(kind, value) -> bool:
        while not stop.is_set():
            try:
                q.put((kind, value), timeout=_POLL)
                return True
            except queue.Full:
                continue
        return False

    def work():
        it = None
        try:
            it = iter(iterable)
            for item in it:
                if not put(_ITEM, item):
                    return
            put(_END, None)
        except BaseException as e:  # noqa: BLE001 -- handed to the consumer, raised there
            put(_RAISED, e)
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=work, name=name, daemon=True)
    thread.start()
    try:
        while True:
            kind, value = q.get()
            if kind == _ITEM:
                yield value
            elif kind == _END:
                return
            else:
                try:
                    raise value
                finally:
                    value = None  # no cycle through the traceback
    finally:
        stop.set()
        thread.join(JOIN_SECONDS)
