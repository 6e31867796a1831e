"""One dependency tree as SVG: the geometry (:func:`layout`) and the drawing (:func:`render_svg`).

The one drawing of a tree in depparse: the server's page (:mod:`depparse.serve`), ``depparse
show`` and the report's tree page all call :func:`render_svg`, so a tree looks the same
everywhere.  Modelled on spaCy's displaCy (``spacy/displacy/render.py``): the geometry is
computed in a few documented functions, the markup is kept in templates apart from it, every
piece of user text is escaped before it enters the markup, right-to-left scripts are one flag,
and every drawing carries a unique id.

Geometry (user units, 1 unit = 1 CSS pixel; :class:`Layout`)
------------------------------------------------------------
* **Words** stand on one baseline, left to right, FORM over UPOS over LEMMA.  A word's column
  is as wide as the longest of its three texts (:func:`text_width`: an estimate, with wide
  East Asian characters counted twice), plus :data:`GAP`.  With ``rtl`` the x axis is mirrored
  (the first word is rightmost), the texts themselves keep their own direction.
* **Arcs** are drawn above the words as rectangles with rounded top corners: up from the
  head, across at the arc's height, down to the dependent, ending in an arrowhead.  Each arc
  spans the words ``lo < hi`` it joins.
* **Levels (heights).**  Arcs are taken shortest first (then left to right); an arc's level is
  one more than the highest level among the arcs already placed whose span overlaps the inside
  of its own (``o.lo < hi`` and ``o.hi > lo``), and 1 when there is none.  So an arc is always
  higher than every arc nested inside it (displaCy's rule that height grows with length, made
  exact for nesting), arcs that only meet at a word can share a level, and two arcs that
  *cross* (``a < c < b < d``: a non-projective pair) always get different levels.  The height
  of level ``k`` is ``k * LEVEL_HEIGHT``.
* **Crossing arcs show.**  Where two arcs cross, one of them is higher, so the lower one's
  horizontal stroke and the higher one's vertical stroke intersect on the page: the crossing is
  drawn, never hidden by two strokes lying on each other.  Arcs that take part in a crossing
  (the root's arrow counts as an arc from a point left of the first word) carry the class
  ``crossing`` and are drawn in another colour.
* **Anchors.**  The arcs meeting at a word end at distinct points of its column, ``ANCHOR``
  units apart: those going left on the left, those going right on the right, the root's arrow
  in the middle, and on each side the shortest outermost (its stroke ends before the taller
  ones rise); so arcs meeting at a word do not cross there.
* **The root** is an arrow down from above the highest arc to the root word, labelled with
  its relation, and the root word's form is drawn bold (class ``root``).
* **Gold comparison** (``gold_heads``): an arc whose head is wrong is drawn red (``wrong``),
  with the gold head in its tooltip; a right head with a wrong label has its label drawn red
  (``wrong-label``).  Labels are compared as the CoNLL 2018 LAS compares them: the universal
  part before the ``:`` subtype.

The markup uses CSS classes only (``trees.css`` beside this module holds the rules); the
shapes carry ``data-head``/``data-dep`` attributes, so a test or a script can read the tree
back from the drawing.

References
----------
Explosion AI, spaCy, ``spacy/displacy/render.py`` (``DependencyRenderer``: ``get_levels``,
``get_arc``, ``get_arrowhead``).
"""

from __future__ import annotations

import html
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["ANCHOR", "GAP", "LEVEL_HEIGHT", "Arc", "Layout", "Tree", "is_rtl", "layout",
           "proof_badge", "render_svg", "text_width", "tree_from_report", "tree_from_sentence"]

#: Font size of the forms (the CSS says the same); UPOS and lemma are :data:`SMALL` of it.
FONT = 14.0
SMALL = 0.8
#: Average advance of one character as a fraction of the font size (an overestimate for
#: most Latin text in a sans-serif font, so columns are rather too wide than overlapping).
CHAR = 0.62
#: Horizontal space between two word columns, and the margin around the drawing.
GAP = 22.0
MARGIN = 12.0
#: Height of one arc level, the space between anchors at one word, the top corners' radius.
LEVEL_HEIGHT = 28.0
ANCHOR = 5.0
RADIUS = 6.0
#: Arrowhead length and half width.
HEAD_LEN, HEAD_HALF = 7.0, 4.0
#: Space above the highest arc for the root's arrow and its label.
ROOT_SPACE = 34.0
#: Baselines of the three text rows below the arcs' feet.
ROWS = (18.0, 35.0, 51.0)


@dataclass(frozen=True)
class Tree:
    """What a drawing shows: the words of one sentence, its parse and, optionally, its proof
    and its gold tree.

    Attributes
    ----------
    words : sequence of str, length n
        FORM of words ``1..n``.
    heads : sequence of int, length n
        Head of word ``i + 1``: ``0`` the root, ``1..n`` a word, ``-1`` none (no arc drawn).
    labels, upos, lemmas : sequence of str, length n or empty
        DEPREL, UPOS, LEMMA (``""`` or ``"_"``: not shown).
    gold_heads, gold_labels : sequence, length n, optional
        The gold tree, for ``depparse show --gold``.
    sent_id, text : str, optional
        Shown above the drawing by the pages.
    proof : dict, optional
        ``optimal``, ``proof`` (``"dual"``, ``"branch-and-bound"``, ``"exact"`` or None),
        ``optimal_over`` (``"pruned"``, ``"all"``), ``timed_out``, ``nodes``, ... of the
        sentence's parse (:func:`proof_badge`).
    """

    words: Sequence[str]
    heads: Sequence[int]
    labels: Sequence[str] = ()
    upos: Sequence[str] = ()
    lemmas: Sequence[str] = ()
    gold_heads: Sequence[int] | None = None
    gold_labels: Sequence[str] | None = None
    sent_id: str | None = None
    text: str | None = None
    proof: dict | None = None

    @property
    def n(self) -> int:
        return len(self.words)


@dataclass
class Arc:
    """One arc of a :class:`Layout` (``head == 0``: the root's arrow; ``lo``/``hi`` are then
    0 and the root word)."""

    head: int
    dep: int
    label: str
    lo: int
    hi: int
    level: int = 0
    x_head: float = 0.0
    x_dep: float = 0.0
    crossing: bool = False
    wrong: bool = False
    wrong_label: bool = False
    gold: str = ""


@dataclass
class Layout:
    """Positions of one drawing (before mirroring for right-to-left scripts)."""

    xs: list[float]  # centre of word i's column (index 0 unused)
    arcs: list[Arc]
    levels: int
    width: float
    height: float
    baseline: float  # y of the arcs' feet; the text rows hang below it
    top: float  # y where the root arrows start


def text_width(s: str, size: float = FONT) -> float:
    """Estimated width of ``s`` at font size ``size``: wide and full-width East Asian
    characters count twice, combining marks not at all."""
    units = 0.0
    for ch in s:
        if unicodedata.combining(ch):
            continue
        units += 2.0 if unicodedata.east_asian_width(ch) in ("W", "F") else 1.0
    return units * CHAR * size


def is_rtl(words: Sequence[str]) -> bool:
    """True when most letters of ``words`` belong to right-to-left scripts (Hebrew, Arabic,
    Syriac, Thaana ...: Unicode bidirectional classes R and AL)."""
    rtl = ltr = 0
    for w in words:
        for ch in w:
            b = unicodedata.bidirectional(ch)
            rtl += b in ("R", "AL")
            ltr += b == "L"
    return rtl > ltr


def _shown(x: str) -> str:
    return "" if x in ("_", "") else x


def _universal(label: str) -> str:
    return label.split(":", 1)[0]


def _levels(arcs: list[Arc]) -> int:
    """Set ``arc.level`` for the word-to-word arcs (module docstring, Levels); returns the
    highest level (0 when there is no arc)."""
    placed: list[Arc] = []
    top = 0
    for a in sorted(arcs, key=lambda a: (a.hi - a.lo, a.lo, a.hi)):
        a.level = 1 + max((o.level for o in placed if o.lo < a.hi and o.hi > a.lo), default=0)
        top = max(top, a.level)
        placed.append(a)
    return top


def _mark_crossings(arcs: list[Arc]) -> None:
    """``crossing`` on every arc that crosses another (``a < c < b < d``; the root's arrow
    spans ``0 .. root``)."""
    for i, a in enumerate(arcs):
        for b in arcs[i + 1:]:
            if a.lo < b.lo < a.hi < b.hi or b.lo < a.lo < b.hi < a.hi:
                a.crossing = b.crossing = True


def _columns(tree: Tree, arcs: list[Arc]) -> tuple[list[float], float]:
    """Centre x of every word's column and the right edge of the last: each column as wide as
    its widest text and its arcs' anchors, and every arc at least as wide as its label (the
    columns right of a short arc are pushed right until it is)."""
    n = tree.n
    ends = [0] * (n + 1)
    for a in arcs:
        ends[a.dep] += 1
        ends[a.head] += 1
    widths = [0.0] * (n + 1)
    for i in range(1, n + 1):
        texts = [text_width(tree.words[i - 1]), ends[i] * ANCHOR]
        for col in (tree.upos, tree.lemmas):
            if len(col) == n:
                texts.append(text_width(_shown(col[i - 1]), FONT * SMALL))
        widths[i] = max(texts) + GAP
    xs = [0.0] * (n + 1)
    x = MARGIN
    for i in range(1, n + 1):
        xs[i] = x + widths[i] / 2
        x += widths[i]
    for a in sorted((a for a in arcs if a.head), key=lambda a: (a.hi - a.lo, a.lo)):
        need = text_width(a.label, FONT * SMALL) + 2 * RADIUS + 8
        short = need - (xs[a.hi] - xs[a.lo])
        if short > 0:
            for j in range(a.hi, n + 1):
                xs[j] += short
            x += short
    return xs, x


def _anchors(tree: Tree, arcs: list[Arc], xs: list[float]) -> None:
    """Where each arc meets its two words (module docstring, Anchors)."""
    ends: list[list[tuple[tuple, Arc, str]]] = [[] for _ in range(tree.n + 1)]
    for a in arcs:
        if a.head == 0:
            ends[a.dep].append(((1, 0), a, "dep"))  # the root's arrow: in the middle
            continue
        for w, other, side in ((a.head, a.dep, "head"), (a.dep, a.head, "dep")):
            # left-going arcs first, then right-going ones; on each side the shortest
            # outermost, so a short arc's stroke stops before a longer one's rises
            ends[w].append(((0 if other < w else 2, -other), a, side))
    for w in range(1, tree.n + 1):
        k = len(ends[w])
        for j, (_, a, side) in enumerate(sorted(ends[w], key=lambda e: e[0])):
            x = xs[w] + (j - (k - 1) / 2) * ANCHOR
            if side == "head":
                a.x_head = x
            else:
                a.x_dep = x


def layout(tree: Tree) -> Layout:
    """The geometry of ``tree`` (module docstring), left to right.

    Returns
    -------
    Layout
        ``xs[i]``: the centre of word ``i``'s column; ``arcs``: one per word with a head
        (the root's arrows included), each with its level, its anchors' x and its marks.
    """
    n = tree.n
    arcs = []
    labels = list(tree.labels) if len(tree.labels) == n else [""] * n
    for i in range(1, n + 1):
        h = int(tree.heads[i - 1])
        if h < 0 or h > n or h == i:
            continue
        a = Arc(h, i, _shown(labels[i - 1]), min(h, i), max(h, i))
        if tree.gold_heads is not None and len(tree.gold_heads) == n:
            g = int(tree.gold_heads[i - 1])
            gl = ""
            if tree.gold_labels is not None and len(tree.gold_labels) == n:
                gl = _shown(tree.gold_labels[i - 1])
            a.gold = f"gold: {'root' if g == 0 else f'head {g}'}{' ' + gl if gl else ''}"
            a.wrong = g >= 0 and g != h
            a.wrong_label = (not a.wrong and bool(gl)
                             and _universal(gl) != _universal(a.label))
        arcs.append(a)
    levels = _levels([a for a in arcs if a.head])
    _mark_crossings(arcs)
    xs, right = _columns(tree, arcs)
    _anchors(tree, arcs, xs)
    top = MARGIN + ROOT_SPACE / 2
    baseline = MARGIN + ROOT_SPACE + levels * LEVEL_HEIGHT
    width = right + MARGIN
    return Layout(xs, arcs, levels, width, baseline + ROWS[-1] + MARGIN, baseline, top)


# ---------------------------------------------------------------------------------------
# markup (templates apart from the geometry)

_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" class="depparse-tree" id="{id}" '
        'width="{w:.0f}" height="{h:.0f}" viewBox="0 0 {w:.0f} {h:.0f}" role="img" '
        'aria-label="{label}"{dir}>\n{body}</svg>')
_ARC = ('<g class="{cls}" data-head="{head}" data-dep="{dep}" data-label="{label}">'
        '<title>{title}</title><path class="arc-line" d="{d}"/>'
        '<path class="arrowhead" d="{arrow}"/>{text}</g>')
_LABEL = '<text class="arc-label{cls}" x="{x:.1f}" y="{y:.1f}">{label}</text>'
_WORD = ('<g class="word{cls}" data-id="{i}"><text class="form" x="{x:.1f}" y="{y0:.1f}">{form}'
         '</text><text class="upos" x="{x:.1f}" y="{y1:.1f}">{upos}</text>'
         '<text class="lemma" x="{x:.1f}" y="{y2:.1f}">{lemma}</text></g>')


def _arc_path(a: Arc, lay: Layout, mirror) -> tuple[str, str, float, float]:
    """Path of an arc (up, across with rounded corners, down), its arrowhead, and where its
    label goes."""
    foot = lay.baseline
    xd = mirror(a.x_dep)
    if a.head == 0:
        y0 = lay.top
        d = f"M{xd:.1f},{y0:.1f} L{xd:.1f},{foot - HEAD_LEN:.1f}"
        label_at = (xd, y0 - 4)
    else:
        xh = mirror(a.x_head)
        y = foot - a.level * LEVEL_HEIGHT
        s = 1.0 if xd > xh else -1.0
        r = min(RADIUS, abs(xd - xh) / 2)
        d = (f"M{xh:.1f},{foot:.1f} L{xh:.1f},{y + r:.1f} "
             f"Q{xh:.1f},{y:.1f} {xh + s * r:.1f},{y:.1f} L{xd - s * r:.1f},{y:.1f} "
             f"Q{xd:.1f},{y:.1f} {xd:.1f},{y + r:.1f} L{xd:.1f},{foot - HEAD_LEN:.1f}")
        label_at = ((xh + xd) / 2, y)
    arrow = (f"M{xd - HEAD_HALF:.1f},{foot - HEAD_LEN:.1f} L{xd + HEAD_HALF:.1f},"
             f"{foot - HEAD_LEN:.1f} L{xd:.1f},{foot:.1f} Z")
    return d, arrow, label_at[0], label_at[1]


def render_svg(tree: Tree, svg_id: str, rtl: bool | None = None) -> str:
    """The SVG markup of ``tree``.

    Parameters
    ----------
    tree : Tree
    svg_id : str
        The drawing's ``id`` (unique in the page that shows it; escaped here).
    rtl : bool, optional
        Lay the words out right to left; default: when most letters are in right-to-left
        scripts (:func:`is_rtl`).

    Returns
    -------
    str
        One ``<svg>`` element; every text from ``tree`` is escaped.  One ``g.arc`` per word
        with a head (the root's arrow is ``g.arc.root-arc``), one ``g.word`` per word.
    """
    e = html.escape
    lay = layout(tree)
    if rtl is None:
        rtl = is_rtl(tree.words)

    def mirror(x: float) -> float:
        return lay.width - x if rtl else x

    words = {i: w for i, w in enumerate(tree.words, 1)}
    body = []
    for a in lay.arcs:
        cls = ["arc"] + [c for c, on in (("root-arc", a.head == 0), ("crossing", a.crossing),
                                         ("wrong", a.wrong)) if on]
        d, arrow, lx, ly = _arc_path(a, lay, mirror)
        head = "root" if a.head == 0 else f"{a.head} {words[a.head]}"
        title = f"{a.label or '(no label)'}: {head} \u2192 {a.dep} {words[a.dep]}"
        if a.gold:
            title += f" ({a.gold})"
        text = ""
        if a.label:
            text = _LABEL.format(cls=" wrong-label" if a.wrong_label else "", x=lx, y=ly,
                                 label=e(a.label))
        body.append(_ARC.format(cls=" ".join(cls), head=a.head, dep=a.dep, label=e(a.label),
                                title=e(title), d=d, arrow=arrow, text=text))
    roots = {a.dep for a in lay.arcs if a.head == 0}
    upos = list(tree.upos) if len(tree.upos) == tree.n else [""] * tree.n
    lemmas = list(tree.lemmas) if len(tree.lemmas) == tree.n else [""] * tree.n
    for i in range(1, tree.n + 1):
        y = lay.baseline
        body.append(_WORD.format(cls=" root" if i in roots else "", i=i, x=mirror(lay.xs[i]),
                                 y0=y + ROWS[0], y1=y + ROWS[1], y2=y + ROWS[2],
                                 form=e(tree.words[i - 1]), upos=e(_shown(upos[i - 1])),
                                 lemma=e(_shown(lemmas[i - 1]))))
    label = f"dependency tree of {tree.n} words" + (f": {tree.text}" if tree.text else "")
    return _SVG.format(id=e(svg_id), w=lay.width, h=lay.height, label=e(label),
                       dir=' direction="rtl"' if rtl else "",
                       body="".join(b + "\n" for b in body))


def proof_badge(proof: dict | None) -> tuple[str, str]:
    """``(kind, words)``: how a tree was proved, in plain words, for the badge shown beside it.

    ``kind`` is the badge's CSS class: ``proved`` (dual certificate, branch and bound or an
    exact decoder), ``unproved`` or ``unknown`` (no proof information, e.g. a CoNLL-U file).
    The words say what is proved: optimal *over all arcs* (``optimal_over = "all"``: no tree
    of the sentence scores higher; an exact decoder always) or *over the arcs the pruner
    keeps* (otherwise: a tree using a pruned arc might score higher), with the pruner's
    gold-arc recall on dev where ``pruner_dev_recall`` gives it (``pruner_dev_recall_at_least``:
    at least that much).
    """
    if not proof:
        return "unknown", "proof not known (no parse report)"
    kind = proof.get("proof")
    how = {"dual": "dual decomposition certificate", "branch-and-bound": "branch and bound",
           "exact": "exact decoder (arc-factored model)"}.get(kind)
    if how is not None:
        nodes = proof.get("nodes")
        if kind == "branch-and-bound" and isinstance(nodes, int):
            how += f" ({nodes:,} nodes)"
        return "proved", f"proved optimal {_over_words(proof)}: {how}"
    if proof.get("timed_out"):
        return "unproved", "not proved within the time limit: the best tree found"
    return "unproved", "not proved: the best tree found (decoded without a proof)"


def _over_words(proof: dict) -> str:
    """``"over all arcs"`` or ``"over the arcs the pruner keeps (99.61% of gold arcs on
    dev)"``: the graph a proof holds over (:func:`proof_badge`)."""
    if proof.get("optimal_over") == "all" or (proof.get("optimal_over") is None
                                              and proof.get("proof") == "exact"):
        return "over all arcs"
    recall = proof.get("pruner_dev_recall")
    if not isinstance(recall, (int, float)):
        return "over the arcs the pruner keeps"
    least = "at least " if proof.get("pruner_dev_recall_at_least") else ""
    return f"over the arcs the pruner keeps ({least}{recall:.2f}% of gold arcs on dev)"


def tree_from_sentence(sentence, proof: dict | None = None, gold=None) -> Tree:
    """A :class:`Tree` of a :class:`~depparse.conllu.Sentence` (its FORM, HEAD, DEPREL, UPOS,
    LEMMA), with ``proof`` and the gold sentence ``gold`` (same words) when given."""
    s = sentence
    return Tree(words=[str(w) for w in s.forms[1:]], heads=[int(h) for h in s.heads[1:]],
                labels=[str(r) for r in s.rels[1:]], upos=[str(u) for u in s.upos[1:]],
                lemmas=[str(x) for x in s.lemmas[1:]],
                gold_heads=None if gold is None else [int(h) for h in gold.heads[1:]],
                gold_labels=None if gold is None else [str(r) for r in gold.rels[1:]],
                sent_id=s.sent_id, text=s.text, proof=proof)


def tree_from_report(s) -> Tree:
    """A :class:`Tree` of a sentence of a parse report (a
    :class:`~depparse.report.schema.ReportSentence`: heads, labels, gold tree, proof, and the
    words where the report has them, else the words' numbers)."""
    n = s.n

    def col(values):
        return [] if values is None else [str(v) for v in values[1:]]

    words = col(s.forms) or [str(i) for i in range(1, n + 1)]
    proof = {"optimal": s.optimal, "proof": s.proof, "nodes": s.nodes,
             "timed_out": s.timed_out, "optimal_over": s.optimal_over}
    return Tree(words=words, heads=[int(h) for h in s.heads[1:]], labels=col(s.rels),
                upos=col(s.upos), lemmas=col(s.lemmas),
                gold_heads=None if s.gold is None else [int(h) for h in s.gold[1:]],
                gold_labels=None if s.gold_rels is None else col(s.gold_rels),
                sent_id=s.sent_id, proof=proof)
