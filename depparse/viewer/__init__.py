"""Dependency trees people can look at: SVG drawings (:mod:`.svg`) and the HTML around them
(:mod:`.page`).

One geometry for every picture of a tree in depparse: the server's page
(:mod:`depparse.serve`), ``depparse show`` and the report's tree page
(:mod:`depparse.report.render`) all draw with :func:`render_svg`.
"""

from .page import Link, page_html, section_id, sentence_html, stylesheet
from .svg import (
    Tree,
    is_rtl,
    layout,
    proof_badge,
    render_svg,
    tree_from_report,
    tree_from_sentence,
)

__all__ = ["Link", "Tree", "is_rtl", "layout", "page_html", "proof_badge", "render_svg",
           "section_id", "sentence_html", "stylesheet", "tree_from_report", "tree_from_sentence"]
