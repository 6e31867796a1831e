"""The one executor (depparse.inference.executor): chunks mapped in order on a backend, the
window of chunks in flight, errors in their chunk's place, a dead worker named, and the
chunks in flight cancelled when the consumer stops."""

from __future__ import annotations

import multiprocessing as mp
import os
import time

import pytest

from depparse.inference.executor import LocalBackend, ProcessBackend, map_in_order

needs_fork = pytest.mark.skipif("fork" not in mp.get_all_start_methods(),
                                reason="the pool's tests fork their workers")


def _slow_square(delay, chunk):
    """``[x * x for x in chunk]``, the first chunk slowest: the chunks finish out of order."""
    time.sleep(delay * (chunk[0] == 0))
    return [x * x for x in chunk]


def _fail_on(bad, chunk):
    if bad in chunk:
        raise ValueError(f"bad item {bad}")
    return list(chunk)


def _die_on(bad, chunk):
    if bad in chunk:
        os._exit(3)  # a worker killed mid-chunk: no exception, no result
    return list(chunk)


class _Counting:
    """A backend that records how many chunks were submitted before each was taken back."""

    def __init__(self, window):
        self.window, self.inner, self.submitted, self.cancelled = window, LocalBackend(), 0, 0

    def submit(self, fn, *args):
        self.submitted += 1
        f = self.inner.submit(fn, *args)
        real = f.cancel
        f.cancel = lambda: setattr(self, "cancelled", self.cancelled + 1) or real()
        return f

    def died(self, error):
        return False

    def close(self, stop=False):
        pass


def _chunks(n, size=3):
    return [list(range(a, min(n, a + size))) for a in range(0, n, size)]


@pytest.mark.parametrize("window", [1, 2, 5, None])
def test_results_come_in_order_within_the_window(window):
    backend = _Counting(window)
    seen = []
    for chunk, res in map_in_order(backend, _slow_square, iter(_chunks(20)), (0.0,)):
        seen.append((chunk, res))
        # the chunks submitted beyond the ones taken: at most the window (all, for None)
        taken = len(seen)
        limit = len(_chunks(20)) if window is None else taken + window - 1
        assert backend.submitted <= limit
    assert [c for c, _ in seen] == _chunks(20)
    assert all(r == [x * x for x in c] for c, r in seen)


def test_an_error_is_raised_in_its_chunks_place():
    got = []
    with pytest.raises(ValueError, match="bad item 7"):
        for chunk, _ in map_in_order(LocalBackend(), _fail_on, _chunks(20), (7,)):
            got.append(chunk)
    assert got == _chunks(20)[:2]  # the chunks before the bad one, and none after it


def test_the_first_window_is_submitted_at_the_call():
    backend = _Counting(3)
    it = map_in_order(backend, _slow_square, iter(_chunks(30)), (0.0,))
    assert backend.submitted == 3  # before anything is taken: the workers start at once
    every = _Counting(None)
    map_in_order(every, _slow_square, iter(_chunks(30)), (0.0,))
    assert every.submitted == len(_chunks(30))
    it.close()


def test_a_consumer_that_stops_cancels_the_chunks_in_flight():
    backend = _Counting(4)
    it = map_in_order(backend, _slow_square, _chunks(30), (0.0,))
    next(it)
    it.close()
    assert backend.submitted == 4 and backend.cancelled == 3
    batched = _Counting(4)  # a backend with a cancel hook gets them in one call
    calls = []
    batched.cancel = lambda futures: calls.append(len(futures))
    it = map_in_order(batched, _slow_square, _chunks(30), (0.0,))
    next(it)
    it.close()
    assert calls == [3] and batched.cancelled == 0


@needs_fork
def test_a_process_pool_keeps_the_order_of_chunks_that_finish_out_of_order():
    pool = ProcessBackend(2, mp.get_context("fork"), window=4)
    try:
        got = list(map_in_order(pool, _slow_square, _chunks(12), (0.5,)))
    finally:
        pool.close()
    assert [c for c, _ in got] == _chunks(12)
    assert all(r == [x * x for x in c] for c, r in got)


@needs_fork
def test_a_dead_worker_is_named_by_the_first_chunk_not_returned():
    pool = ProcessBackend(2, mp.get_context("fork"), window=2)
    got = []
    try:
        with pytest.raises(RuntimeError, match=r"lost from \[6, 7, 8\]|lost from \[3, 4, 5\]"):
            for chunk, _ in map_in_order(pool, _die_on, _chunks(30), (7,),
                                         on_died=lambda c: RuntimeError(f"lost from {c}")):
                got.append(chunk)
    finally:
        pool.close(stop=True)
    assert got == _chunks(30)[:len(got)] and len(got) <= 2
