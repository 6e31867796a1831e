"""Progress of a training epoch or of another long stage (the expert-weight grid, the final
dev evaluation): a bar on a terminal, plain log lines elsewhere.

On a terminal a tqdm bar (its carriage returns would be noise in a log file); when stderr is
not a terminal (``depparse train 2> log``, a notebook, a batch job) a log line every
:data:`LOG_SECONDS` within the stage, so that a long stage shows progress too, besides the
line per epoch that :func:`~depparse.learn.perceptron.record_epoch` writes (and the line a
stage writes when it starts and when it ends).
"""

from __future__ import annotations

import logging
import sys
import time

__all__ = ["LOG_SECONDS", "EpochProgress"]

log = logging.getLogger("depparse.learn.perceptron")

#: Seconds between two progress lines of an epoch in a log (stderr not a terminal).
LOG_SECONDS = 60.0


def _terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


class EpochProgress:
    """``update(j)`` after the j-th of ``total`` sentences of an epoch; ``close()`` at its end.

    Parameters
    ----------
    what : str
        The epoch, e.g. ``"epoch 2/6"``, or the stage (``"final model on dev"``).
    total : int
        Sentences in the epoch (or steps of the stage).
    on : bool
        Show progress at all.
    unit : str
        What is counted, in the log lines (``"sentences"``; the bar says ``sent``).
    """

    def __init__(self, what, total, on, unit="sentences"):
        from tqdm import tqdm

        bar = on and _terminal(sys.stderr)
        self.what, self.total, self.lines, self.unit = what, total, on and not bar, unit
        self.t0 = self.last = time.perf_counter()
        self.done = 0
        self.bar = tqdm(total=total, desc=what, unit="sent", disable=not bar, leave=False,
                        mininterval=1.0)

    def step(self, n=0):
        """One more sentence (or step) done: :meth:`update` with the count kept here."""
        self.done += 1
        self.update(self.done, n)

    def update(self, j, n=0):
        self.bar.update(1)
        if not self.lines:
            return
        now = time.perf_counter()
        if now - self.last >= LOG_SECONDS and j < self.total:
            self.last = now
            log.info("%s: %s of %s %s (%.0f%%) in %.0f s", self.what, f"{j:,}",
                     f"{self.total:,}", self.unit, 100.0 * j / max(1, self.total),
                     now - self.t0)

    def close(self):
        self.bar.close()
