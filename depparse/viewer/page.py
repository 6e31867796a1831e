"""HTML around the tree drawings: one sentence's section, and a stand-alone page of trees.

A sentence's section (:func:`sentence_html`) is what the server's page inserts for each parsed
sentence and what ``depparse show`` and the report's tree page list: a header (number,
``sent_id``, the badge saying how the tree was proved, :func:`~.svg.proof_badge`), the text,
and the drawing (:func:`~.svg.render_svg`).  :func:`page_html` is a whole page that needs
nothing else: the style sheet (``trees.css``, the same file the server serves) is inlined, no
script, no font or file from elsewhere.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from importlib import resources

from .svg import Tree, proof_badge, render_svg

__all__ = ["LEGEND", "Link", "page_html", "section_id", "sentence_html", "stylesheet"]

#: What the colours mean (shown on pages with crossing arcs or a gold tree).
LEGEND = ('<p class="legend">Arcs point from the head to the dependent; the dashed arrow marks '
          'the root. <span class="crossing">Orange</span>: arcs that cross another '
          '(non-projective). {gold}Hover over an arc for its head, dependent and label.</p>')
_GOLD = ('<span class="wrong">Red</span> arc: wrong head (the gold head is in its tooltip); '
         'red label: right head, wrong label. ')

_SECTION = ('<section class="sentence" id="{id}">\n<header><span class="num">{num}</span>'
            '{sid}<span class="badge {kind}">{badge}</span></header>\n{text}'
            '<div class="tree-box">{svg}</div>\n</section>\n')

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: "DejaVu Sans", "Noto Sans", Arial, sans-serif; margin: 1.5em; }}
h1 {{ font-size: 1.3em; }}
{css}</style>
</head>
<body>
<h1>{title}</h1>
{intro}{legend}
{sections}</body>
</html>
"""


class Link:
    """A table cell that links to a tree (the report's sentence table): plain ``text`` where
    text is written (``str``), an ``<a>`` to ``href`` in HTML (:meth:`html`)."""

    def __init__(self, text: str, href: str) -> None:
        self.text, self.href = text, href

    def __str__(self) -> str:
        return self.text

    def html(self) -> str:
        return f'<a href="{html.escape(self.href)}">{html.escape(self.text)}</a>'


def stylesheet() -> str:
    """The trees' style sheet (``trees.css``, shipped with the package)."""
    return resources.files(__package__).joinpath("trees.css").read_text(encoding="utf-8")


def section_id(prefix: str, index: int) -> str:
    """The ``id`` of sentence ``index`` (1-based) of a page: ``{prefix}{index}``."""
    return f"{prefix}{index}"


def sentence_html(tree: Tree, index: int, prefix: str = "s", rtl: bool | None = None) -> str:
    """One sentence's ``<section>``: number, ``sent_id`` (unless it is the number), proof badge,
    text and drawing.

    Parameters
    ----------
    tree : Tree
    index : int
        The sentence's number on the page (1-based); the section's id is
        :func:`section_id` ``(prefix, index)``, the drawing's that id plus ``-tree``.
    prefix : str
        Keeps the ids of several pages (or answers) in one document apart.
    rtl : bool, optional
        See :func:`~.svg.render_svg`.
    """
    e = html.escape
    sid = section_id(prefix, index)
    kind, words = proof_badge(tree.proof)
    return _SECTION.format(
        id=e(sid), num=index,
        sid=(f'<span class="sent-id">{e(tree.sent_id)}</span>'
             if tree.sent_id and tree.sent_id != str(index) else ""),
        kind=kind, badge=e(words),
        text=f'<p class="text">{e(tree.text)}</p>\n' if tree.text else "",
        svg=render_svg(tree, sid + "-tree", rtl))


def page_html(trees: Sequence[Tree], title: str, intro: str = "", prefix: str = "s",
              rtl: bool | None = None, numbers: Sequence[int] | None = None) -> str:
    """A stand-alone HTML page of ``trees`` (inlined style sheet, no script).

    Parameters
    ----------
    trees : sequence of Tree
    title : str
        The page's title (escaped).
    intro : str
        A line under the title (escaped).
    numbers : sequence of int, optional
        The sentences' numbers (default 1, 2, ...): the report numbers the sentences of its
        run, so that ``trees.html#s17`` is the run's 17th sentence.
    """
    e = html.escape
    gold = any(t.gold_heads is not None for t in trees)
    numbers = list(numbers) if numbers is not None else list(range(1, len(trees) + 1))
    sections = "".join(sentence_html(t, k, prefix, rtl)
                       for t, k in zip(trees, numbers, strict=True))
    return _PAGE.format(title=e(title), css=stylesheet(),
                        intro=f'<p class="intro">{e(intro)}</p>\n' if intro else "",
                        legend=LEGEND.format(gold=_GOLD if gold else ""), sections=sections)
