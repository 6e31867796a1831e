"""The parse report written as the parse goes: one sentence entry at a time, never all in memory.

``depparse parse --report FILE`` streams its report with :class:`ReportWriter`: the keys that
are known at the start (format, version, model, decoding settings) and the opening of the
``"sentences"`` list are written first, each sentence's entry (:func:`~.schema.
sentence_entry`, its dual and primal traces included) as soon as the sentence is parsed, and
the inputs, the per-file counts and the summary at the end.  JSON objects are unordered, so
the file is the same report as :func:`~.schema.build_report` builds in memory; a run of any
length holds one entry at a time.  The file grows as ``FILE.partial``
(:class:`~depparse.atomic.PartialFile`) and is renamed to ``FILE`` at the end (a device or a
FIFO is written in place); a run that is stopped continues it (``--resume``) from the size and
entry count of its last commit.
"""

from __future__ import annotations

import json

from ..atomic import chunked_output
from .schema import report_header, report_summary, sentence_entry

__all__ = ["ReportWriter"]


class ReportWriter:
    """Write a parse report by chunks.

    Parameters
    ----------
    path : str or os.PathLike
        The report file.
    parser : depparse.inference.parser.Parser
        The parser whose settings the report records.
    max_iter, single_root : optional
        The decoding settings of the run (default: the parser's).
    keep : (int, int), optional
        Continue the report of an earlier run: the bytes and the number of entries of its
        last commit (:meth:`commit`).
    """

    def __init__(self, path, parser, max_iter=None, single_root=None, keep=None):
        self.path = path
        if keep is None:
            self.file = chunked_output(path)
            head = json.dumps(report_header(parser, max_iter, single_root))
            self.file.write((head[:-1] + ', "sentences": [').encode("utf-8"))
            self.entries = 0
        else:
            size, self.entries = keep
            self.file = chunked_output(path, keep=size)

    def add(self, fname, index, sentence, parsed, result) -> None:
        """Append the entry of a parsed sentence (see :func:`~.schema.sentence_entry`)."""
        self.add_json(json.dumps(sentence_entry(fname, index, sentence, parsed, result)))

    def add_json(self, entry: str) -> None:
        """Append an entry already in JSON (one line; ``depparse parse --scheduler`` joins
        the entries its workers wrote)."""
        self.file.write(((",\n" if self.entries else "\n") + entry).encode("utf-8"))
        self.entries += 1

    def commit(self) -> tuple[int, int]:
        """Flush and fsync; returns ``(bytes, entries)``, what ``keep`` takes to continue."""
        return self.file.commit(), self.entries

    def finish(self, inputs, files, counts, seconds) -> None:
        """Close the sentence list, write the inputs, the per-file counts (``files``:
        ``{file: {"sentences", "words", "tagged", "columns"}}``) and the summary (``counts``:
        sentences, words, certified, proved), and rename the file into place."""
        tail = {"inputs": list(inputs),
                "predicted_columns": {f: list(v["columns"]) for f, v in files.items()},
                "files": files,
                "summary": report_summary(counts["sentences"], counts["words"],
                                          counts["certified"], counts["proved"], seconds)}
        self.file.write(("\n], " + json.dumps(tail)[1:] + "\n").encode("utf-8"))
        self.file.finish()

    def close(self) -> None:
        """Stop without finishing (``FILE.partial`` stays)."""
        self.file.close()

    def discard(self) -> None:
        """Stop and remove ``FILE.partial``."""
        self.file.discard()
