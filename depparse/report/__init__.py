"""Reports of a parse run: the JSON format (:mod:`.schema`), its statistics (:mod:`.stats`)
and the HTML/PNG/Markdown rendering (:mod:`.render`)."""

from .render import FIGURES, write_report
from .schema import FORMAT, VERSION, build_report, load_report, validate_report
from .stats import ITERATION_BUCKETS, LENGTH_BUCKETS, cap_grid, summarize_report

__all__ = ["FIGURES", "FORMAT", "ITERATION_BUCKETS", "LENGTH_BUCKETS", "VERSION", "build_report",
           "cap_grid", "load_report", "summarize_report", "validate_report", "write_report"]
