"""Progress of a training epoch: a bar on a terminal, plain log lines elsewhere.

On a terminal a tqdm bar (its carriage returns would be noise in a log file); when stderr is
not a terminal (``depparse train 2> log``, a notebook, a batch job) a log line every
:data:`LOG_SECONDS` within an epoch, so that a long epoch shows progress too, besides the line
per epoch that :func:`~depparse.learn.perceptron.record_epoch` writes.
"""

from __future__ import annotations

import logging
import sys
import time

__all__ = ["LOG_SECONDS", "EpochProgress"]

log = logging.getLogger("depparse.learn.perceptron")

#: Seconds between two progress lines of an epoch in a log (stderr not a terminal).
LOG_SECONDS = 60.0


class EpochProgress:
    """``update(j)`` after the j-th of ``total`` sentences of an epoch; ``close()`` at its end.

    Parameters
    ----------
    what : str
        The epoch, e.g. ``"epoch 2/6"``.
    total : int
        Sentences in the epoch.
    on : bool
        Show progress at all.
    """

    def __init__(self, what, total, on):
        from tqdm import tqdm

        bar = on and sys.stderr.isatty()
        self.what, self.total, self.lines = what, total, on and not bar
        self.t0 = self.last = time.perf_counter()
        self.bar = tqdm(total=total, desc=what, unit="sent", disable=not bar, leave=False,
                        mininterval=1.0)

    def update(self, j, n=0):
        self.bar.update(1)
        if not self.lines:
            return
        now = time.perf_counter()
        if now - self.last >= LOG_SECONDS and j < self.total:
            self.last = now
            log.info("%s: %s of %s sentences (%.0f%%) in %.0f s", self.what, f"{j:,}",
                     f"{self.total:,}", 100.0 * j / max(1, self.total), now - self.t0)

    def close(self):
        self.bar.close()
