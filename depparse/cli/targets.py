"""What ``depparse parse`` reads and where it writes: inputs, globs and folders; outputs.

Inputs (:func:`expand_inputs`): files, ``-`` (stdin), folders (their ``*.conllu`` files, or
``*.txt`` with ``--input text``, in name order) and glob patterns the shell left alone
(``'corpus/*.txt'``).

Outputs (:func:`plan_outputs`), one :class:`Target` per output:

* no ``-o``, or ``-o -``: stdout;
* ``-o FILE``: all inputs, in order, into FILE (written as ``FILE.partial`` and renamed at the
  end); a FILE that is not a regular file (``/dev/null``, a FIFO, ``/dev/stdout``) is written
  in place (:func:`depparse.atomic.is_special`);
* ``-o FOLDER/`` (an existing folder, or a name ending in ``/``): one output per input, named
  by :func:`output_name` (the input's name with its extension replaced by ``.conllu``);
* ``--in-place``: each input is replaced by its parse.

An output that is one of the inputs (the same file, by any spelling or link:
``os.path.samefile``) is refused unless ``--force`` or ``--in-place`` says so.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..atomic import is_special
from ..errors import UsageError

__all__ = ["EXTENSIONS", "Target", "expand_inputs", "output_name", "plan_outputs",
           "same_file"]

#: The files of a folder given as input, by input kind.
EXTENSIONS = {"conllu": (".conllu", ".conll"), "text": (".txt",), "horizontal": (".txt",),
              "vertical": (".txt", ".vert")}


@dataclass
class Target:
    """One output: ``path`` (None: stdout), whether it is written in place (``special``: a
    device, a FIFO, stdout), and the inputs that go into it, in order."""

    path: str | None
    inputs: list = field(default_factory=list)
    special: bool = False

    @property
    def name(self) -> str:
        return "<stdout>" if self.path is None else self.path


def expand_inputs(inputs, kind: str) -> list[str]:
    """The input files of the command line, in order (see the module docstring).

    Raises
    ------
    UsageError
        For a missing file, a folder without input files, a pattern that matches nothing,
        or stdin given twice.
    """
    out: list[str] = []
    exts = EXTENSIONS[kind]
    for a in map(str, inputs):
        if a == "-":
            if "-" in out:
                raise UsageError("stdin ('-') can be read only once")
            out.append(a)
        elif os.path.isdir(a):
            files = sorted(str(p) for p in Path(a).iterdir()
                           if p.is_file() and p.suffix in exts and not p.name.startswith("."))
            if not files:
                pattern = " or ".join(f"*{e}" for e in exts)
                raise UsageError(f"{a}: is a folder with no {pattern} file in it; give the "
                                 "files, or a glob such as FOLDER/*.txt")
            out += files
        elif os.path.exists(a):
            out.append(a)
        elif glob.has_magic(a):
            files = sorted(p for p in glob.glob(a) if os.path.isfile(p))
            if not files:
                raise UsageError(f"{a}: no file matches")
            out += files
        else:
            raise UsageError(f"{a}: no such file")
    return out


def output_name(inp: str) -> str:
    """The name of the output of ``inp`` in an output folder: ``a.txt`` -> ``a.conllu``,
    ``a.conllu`` -> ``a.conllu``, stdin -> ``stdin.conllu``."""
    if inp == "-":
        return "stdin.conllu"
    base = os.path.basename(inp)
    stem, ext = os.path.splitext(base)
    return (stem if ext else base) + ".conllu"


def same_file(a, b) -> bool:
    """Whether two paths name the same existing file (also through links or ``..``)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _is_folder_output(out: str) -> bool:
    return os.path.isdir(out) or out.endswith(("/", os.sep))


def plan_outputs(inputs, output, in_place=False, force=False) -> tuple[str, list[Target]]:
    """``(mode, targets)``: mode ``"stdout"``, ``"file"``, ``"folder"`` or ``"in-place"``.

    Raises
    ------
    UsageError
        For an output that is an input (without ``--force``), two inputs with the same
        output name in a folder, ``--in-place`` with stdin or with ``-o``, and an output
        folder that cannot be made.
    """
    if in_place:
        if output is not None:
            raise UsageError("--in-place writes each input's parse over it: give no -o")
        if "-" in inputs:
            raise UsageError("--in-place: stdin ('-') has no file to replace")
        return "in-place", [Target(f, [f]) for f in inputs]
    if output is None or output == "-":
        return "stdout", [Target(None, list(inputs), special=True)]
    if _is_folder_output(output):
        folder = Path(output)
        if folder.exists() and not folder.is_dir():
            raise UsageError(f"{output}: is not a folder")
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UsageError(f"{output}: cannot make the output folder: "
                             f"{e.strerror or e}") from None
        if not os.access(folder, os.W_OK):
            raise UsageError(f"{output}: cannot write the outputs: the folder is not writable")
        targets, seen = [], {}
        for f in inputs:
            path = str(folder / output_name(f))
            if path in seen:
                raise UsageError(f"{seen[path]} and {f} would both be written to {path}: "
                                 "parse them into different folders")
            seen[path] = f
            if f != "-" and same_file(path, f) and not force:
                raise UsageError(f"{path}: is the input {f} itself: the parse would replace "
                                 "it; choose another output folder, or give --in-place (or "
                                 "--force) to replace the input")
            targets.append(Target(path, [f]))
        return "folder", targets
    for f in inputs:
        if f != "-" and same_file(output, f) and not force:
            raise UsageError(f"{output}: is also an input ({f}): the parse would replace it "
                             "and its trees would be lost; give another -o, or --in-place "
                             "(or --force) to replace the input")
    return "file", [Target(output, list(inputs), special=is_special(output))]
