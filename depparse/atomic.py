"""Safe file output: whole files atomically, long outputs by chunks, devices in place.

Every file depparse writes (parsed CoNLL-U, models, checkpoints, reports) goes through
:func:`atomic_output` or :class:`PartialFile`, so an error or a kill never leaves a
half-written file under the name the user gave and never damages an existing one:

* :func:`atomic_output` writes a temporary file beside the target, fsyncs it and renames it
  over the target.
* :class:`PartialFile` writes a long output by chunks to ``PATH.partial`` (each chunk flushed
  and fsynced when committed, so that a killed run can be continued from its last complete
  chunk: ``depparse parse --resume``) and renames it to ``PATH`` at the end.
* What is not a regular file — a character device such as ``/dev/null``, a FIFO, a socket,
  ``/dev/stdout`` or another ``/dev/fd/N`` — is written in place (:func:`is_special`): a
  rename would replace the device node by a regular file, and ``/dev/stdout`` may be a pipe
  or a terminal beside which no temporary file can be made.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
import tempfile

from .errors import UsageError

__all__ = ["PARTIAL_SUFFIX", "InPlaceFile", "PartialFile", "atomic_output", "chunked_output",
           "is_special", "open_special"]

#: The suffix of an output being written by chunks (:class:`PartialFile`).
PARTIAL_SUFFIX = ".partial"

# /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: an open file descriptor of this process
_FD_PATH = re.compile(r"^/(?:dev/fd|proc/self/fd)/(\d+)$")
_STD_PATHS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}


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


def _fd_of(path) -> int | None:
    """The file descriptor that ``path`` names (``/dev/stdout``: 1, ``/dev/fd/3``: 3), else
    None."""
    p = os.path.normpath(os.fspath(path))
    if p in _STD_PATHS:
        return _STD_PATHS[p]
    m = _FD_PATH.match(p)
    return int(m.group(1)) if m else None


def is_special(path) -> bool:
    """Whether ``path`` is written in place rather than replaced: a file descriptor of this
    process (``/dev/stdout``, ``/dev/fd/N``), or an existing path that is not a regular file
    (a character or block device, a FIFO, a socket; symbolic links followed)."""
    if _fd_of(path) is not None:
        return True
    try:
        mode = os.stat(os.fspath(path)).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def open_special(path, mode: str = "wb", encoding: str | None = None):
    """Open a path of :func:`is_special` for writing, in place: a file descriptor it names is
    duplicated (so that closing the file leaves ``sys.stdout`` open, and a file that stdout
    appends to is not truncated); anything else is opened as it is (no temporary file, no
    rename)."""
    fd = _fd_of(path)
    if fd is not None:
        if fd == 1:  # what Python has buffered for stdout goes first
            with contextlib.suppress(OSError, ValueError, AttributeError):
                sys.stdout.flush()
        return os.fdopen(os.dup(fd), mode, encoding=encoding)
    return open(path, mode, encoding=encoding)


def _permissions(target: str) -> int:
    """An existing file's permission bits, else those ``open`` gives a new file."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _folder(path) -> tuple[str, str]:
    """``(target, folder)``: the real path of ``path`` (symlinks followed) and its folder,
    which must exist."""
    target = os.path.realpath(os.fspath(path))
    directory = os.path.dirname(target) or "."
    if not os.path.isdir(directory):
        raise UsageError(f"{os.fspath(path)}: cannot write: folder {directory} does not exist")
    return target, directory


@contextlib.contextmanager
def atomic_output(path, mode: str = "wb", encoding: str | None = None):
    """Context manager yielding a file object whose content replaces ``path`` on success.

    The new file keeps the permissions of the file it replaces (a new file gets
    ``0o666 & ~umask``, like ``open``); symlinks are followed.  On any exception the
    temporary file is removed and ``path`` is left as it was.  A missing folder is a
    :class:`~depparse.errors.UsageError` naming it (not a bare ``FileNotFoundError``).  A path
    that is not a regular file (:func:`is_special`: ``/dev/null``, a FIFO, ``/dev/stdout``)
    is written in place: never renamed over.
    """
    if is_special(path):
        f = open_special(path, mode, encoding)
        with f:
            yield f
            f.flush()
        return
    target, directory = _folder(path)
    perm = _permissions(target)
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


class PartialFile:
    """A long output written by chunks to ``PATH.partial``, renamed to ``PATH`` at the end.

    Parameters
    ----------
    path : str or os.PathLike
        The output (a regular file or a new name: see :func:`is_special` for the others).
    keep : int, optional
        Continue an earlier run: ``PATH.partial`` must hold at least ``keep`` bytes, the
        ones of the chunks that run committed; what follows them (a chunk written but not
        committed when the run was killed) is cut off.  Default: start afresh (an existing
        ``PATH.partial`` is replaced).

    Notes
    -----
    :meth:`write` buffers in the file object; :meth:`commit` flushes and fsyncs and returns
    the size on disk, which the caller records (in its own state file, written after the
    commit) as the point to continue from; :meth:`finish` commits and renames the file over
    ``PATH`` (the permissions of an existing ``PATH`` are kept) and fsyncs the folder;
    :meth:`close` without :meth:`finish` leaves ``PATH.partial`` for a later run.
    """

    def __init__(self, path, keep: int | None = None):
        self.path = os.fspath(path)
        self.target, self.directory = _folder(path)
        self.partial = self.target + PARTIAL_SUFFIX
        self.perm = _permissions(self.target)
        if keep is None:
            self.file = open(self.partial, "wb")
        else:
            self.file = open(self.partial, "r+b")
            size = os.fstat(self.file.fileno()).st_size
            if size < keep:
                self.file.close()
                raise UsageError(f"{self.partial}: holds {size:,} bytes, fewer than the "
                                 f"{keep:,} of its last complete chunk: it was changed since; "
                                 "remove it (and its .state file) to start again")
            self.file.truncate(keep)
            self.file.seek(keep)
        self.size = self.file.tell()

    def write(self, data: bytes) -> None:
        self.file.write(data)
        self.size += len(data)

    def commit(self) -> int:
        """Flush and fsync what was written; returns the committed size in bytes."""
        self.file.flush()
        os.fsync(self.file.fileno())
        return self.size

    def finish(self) -> None:
        """Commit, close and rename ``PATH.partial`` to ``PATH``."""
        self.commit()
        self.file.close()
        os.chmod(self.partial, self.perm)
        os.replace(self.partial, self.target)
        _fsync_dir(self.directory)

    def close(self) -> None:
        """Close without renaming (``PATH.partial`` stays, for ``--resume``)."""
        if not self.file.closed:
            with contextlib.suppress(OSError):
                self.file.close()

    def discard(self) -> None:
        """Close and remove ``PATH.partial`` (``PATH`` is left as it was)."""
        self.close()
        with contextlib.suppress(OSError):
            os.unlink(self.partial)


class InPlaceFile:
    """The :class:`PartialFile` interface for a path of :func:`is_special` (a device, a
    FIFO, ``/dev/stdout``): written in place as it comes, nothing renamed, nothing to
    continue."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self.file = open_special(path, "wb")
        self.size = 0

    def write(self, data: bytes) -> None:
        self.file.write(data)
        self.size += len(data)

    def commit(self) -> int:
        self.file.flush()
        return self.size

    def finish(self) -> None:
        self.file.flush()
        self.file.close()

    def close(self) -> None:
        if not self.file.closed:
            with contextlib.suppress(OSError):
                self.file.close()

    discard = close


def chunked_output(path, keep: int | None = None):
    """A :class:`PartialFile` for ``path``, or an :class:`InPlaceFile` where ``path`` is not
    a regular file (:func:`is_special`; ``keep`` must then be None)."""
    if is_special(path):
        if keep is not None:
            raise UsageError(f"{os.fspath(path)}: is not a regular file: a run written into it "
                             "cannot be continued")
        return InPlaceFile(path)
    return PartialFile(path, keep)
