"""Atomic file output: write a temporary file beside the target, fsync, rename.

Every file depparse writes (parsed CoNLL-U, models, checkpoints, reports) goes through
:func:`atomic_output`, so an error or a kill never leaves a half-written file and never
damages an existing one.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile

from .errors import UsageError

__all__ = ["atomic_output"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_output(path, mode: str = "wb", encoding: str | None = None):
    """Context manager yielding a file object whose content replaces ``path`` on success.

    The new file keeps the permissions of the file it replaces (a new file gets
    ``0o666 & ~umask``, like ``open``); symlinks are followed.  On any exception the
    temporary file is removed and ``path`` is left as it was.  A missing folder is a
    :class:`~depparse.errors.UsageError` naming it (not a bare ``FileNotFoundError``).
    """
    target = os.path.realpath(os.fspath(path))
    directory = os.path.dirname(target) or "."
    if not os.path.isdir(directory):
        raise UsageError(f"{os.fspath(path)}: cannot write: folder {directory} does not exist")
    try:
        perm = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        perm = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp",
                               dir=directory)
    try:
        with os.fdopen(fd, mode, encoding=encoding) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, perm)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)
