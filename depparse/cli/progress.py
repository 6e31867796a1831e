"""What ``depparse parse`` says while it works: the kernels compiled on first use, and progress.

* :class:`CompileWatch` listens to Numba's compile events (``numba.core.event``): the first
  compilation of a run prints a line saying that the kernels are being compiled, once, for
  this machine (on a terminal, a count of the kernels compiled so far and the time); the
  seconds spent compiling are kept apart, so that the words/s of the summary line measure
  parsing alone.
* :class:`Progress` shows the sentences and words parsed, words/s, the trees proved so far and
  (for files) the part of the input read: on a terminal one line rewritten in place, at most
  twice a second; elsewhere (stderr into a log file) a plain line every ``interval`` seconds.
"""

from __future__ import annotations

import sys
import threading
import time

__all__ = ["CompileWatch", "Progress", "duration"]


def duration(seconds: float) -> str:
    """``"48 s"``, ``"3 min 05 s"``, ``"2 h 04 min"``."""
    s = int(round(seconds))
    if s < 60:
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s // 60 % 60:02d} min"


def _terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class CompileWatch:
    """Count and time the Numba compilations of a block (a context manager).

    Parameters
    ----------
    quiet : bool
        Say nothing (the time is still measured).
    where : str, optional
        Where the compiled kernels are cached (named in the first line).

    Attributes
    ----------
    kernels : int
        Compilations finished (a kernel compiled for two argument types counts twice).
    seconds : float
        Wall-clock seconds spent compiling (nested compilations counted once).
    """

    def __init__(self, quiet=False, where=None):
        self.quiet = quiet
        self.where = where
        self.kernels = 0
        self.seconds = 0.0
        self.said = 0.0  # seconds compiled when the last line was printed
        self._depth = 0
        self._t0 = 0.0
        self._lock = threading.Lock()
        self._listener = None
        self._ctx = None
        self.stream = sys.stderr
        self.tty = _terminal(self.stream)

    def __enter__(self):
        from numba.core import event

        watch = self

        class _Listener(event.Listener):
            def on_start(self, ev):
                watch._start()

            def on_end(self, ev):
                watch._end(ev)

        self._listener = _Listener()
        self._ctx = event.install_listener("numba:compile", self._listener)
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        self._ctx.__exit__(*exc)
        return False

    def _start(self):
        with self._lock:
            if self._depth == 0:
                self._t0 = time.perf_counter()
                if self.kernels == 0 and not self.quiet:
                    where = f" (cached in {self.where})" if self.where else ""
                    print("depparse: compiling the parser's kernels for this machine: a few "
                          f"minutes, once; later runs load them{where}", file=self.stream,
                          flush=True)
            self._depth += 1

    def _end(self, ev):
        with self._lock:
            self._depth = max(0, self._depth - 1)
            self.kernels += 1
            if self._depth == 0:
                self.seconds += time.perf_counter() - self._t0
            if self.tty and not self.quiet:
                name = getattr(getattr(ev.data.get("dispatcher"), "py_func", None),
                               "__name__", "")
                spent = self.seconds + (time.perf_counter() - self._t0 if self._depth else 0)
                self.stream.write(f"\r\x1b[Kdepparse: compiling: {self.kernels} kernels, "
                                  f"{duration(spent)} ({name})")
                self.stream.flush()

    def done(self) -> None:
        """Say how long the compilation took, if anything was compiled since the last call."""
        if self.quiet or self.seconds == self.said:
            return
        if self.tty:
            self.stream.write("\r\x1b[K")
        print(f"depparse: kernels compiled in {duration(self.seconds - self.said)} "
              f"({self.kernels} compilations); words/s below do not count it",
              file=self.stream, flush=True)
        self.said = self.seconds


class Progress:
    """Progress of a parse on stderr (see the module docstring).

    Parameters
    ----------
    quiet : bool
        Show nothing.
    interval : float, optional
        Seconds between the plain lines written when stderr is not a terminal (default 60;
        0: none).
    total_bytes : int, optional
        The size of the inputs, when they are files: the line then shows the part read.
    words_before : int, optional
        Words parsed by the stopped run that this one continues (not in its words/s).
    """

    def __init__(self, quiet=False, interval=None, total_bytes=None, words_before=0):
        self.stream = sys.stderr
        self.tty = _terminal(self.stream)
        self.quiet = quiet
        self.interval = 60.0 if interval is None else float(interval)
        self.total = total_bytes or None
        self.words_before = words_before  # parsed by the run this one continues
        self.t0 = time.perf_counter()
        self.last = self.t0
        self.shown = False
        # update/clear/say come from the parse loop and, with the encoder a batch ahead,
        # from the thread that reads the input (parse --skip-bad's lines): one at a time
        self._lock = threading.RLock()

    def update(self, sentences, words, proved, read_bytes=None, paused=0.0, force=False):
        """Show the counts if it is time (``paused``: seconds not to count, e.g. compiling)."""
        if self.quiet:
            return
        now = time.perf_counter()
        if self.tty:
            if not force and now - self.last < 0.5:
                return
        elif not self.interval or (not force and now - self.last < self.interval):
            return
        self.last = now
        spent = max(now - self.t0 - paused, 1e-9)
        rate = (words - self.words_before) / spent
        line = (f"{sentences:,} sentences, {words:,} words, {rate:,.0f} words/s, "
                f"proved optimal {proved:,} ({100.0 * proved / max(1, sentences):.1f}%)")
        if self.total and read_bytes is not None:
            frac = min(1.0, read_bytes / self.total)
            line += f", {100.0 * frac:.0f}% of the input"
            if 0.02 < frac < 1.0:
                line += f", {duration(spent * (1 - frac) / frac)} left"
        with self._lock:
            if self.tty:
                self.stream.write(f"\r\x1b[Kdepparse: {line}")
                self.stream.flush()
                self.shown = True
            else:
                print(f"depparse: {line}", file=self.stream, flush=True)

    def clear(self):
        """Remove the line of a terminal (before other output)."""
        with self._lock:
            if self.tty and self.shown:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
                self.shown = False

    def say(self, text: str) -> None:
        """A line of its own on stderr (the terminal's progress line removed first)."""
        with self._lock:
            self.clear()
            print(text, file=self.stream, flush=True)
