"""The tree drawing (depparse/viewer/): its geometry against the tree it draws (brute force over
random trees: two arcs' strokes meet exactly when the arcs cross), escaping, ids, right-to-left
layout, gold marks, proof badges, and `depparse show`."""

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from fixtures_models import run_cli

from depparse.viewer import Tree, is_rtl, layout, page_html, proof_badge, render_svg
from depparse.viewer.svg import LEVEL_HEIGHT

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "corpora" / "sample.conllu"
NS = {"s": "http://www.w3.org/2000/svg"}


def random_tree(rng, n, projective=None):
    """Heads of a random tree over words 1..n with one root (a random attachment order)."""
    order = list(range(1, n + 1))
    rng.shuffle(order)
    heads = [0] * (n + 1)
    placed = [0]
    for w in order:
        heads[w] = rng.choice(placed) if len(placed) > 1 else 0
        placed.append(w)
    return heads[1:]


def crosses(a, b):
    """Tree crossing of two spans (lo, hi): a < c < b < d."""
    (p, q), (r, s) = a, b
    return p < r < q < s or r < p < s < q


def strokes(arc, lay):
    """An arc as its straight strokes (the rounded corners left out): ('v', x, y_top, y_bottom)
    and ('h', y, x_left, x_right)."""
    foot = lay.baseline
    if arc.head == 0:
        return [("v", arc.x_dep, lay.top, foot)]
    y = foot - arc.level * LEVEL_HEIGHT
    xs = sorted((arc.x_head, arc.x_dep))
    return [("v", arc.x_head, y, foot), ("h", y, xs[0], xs[1]), ("v", arc.x_dep, y, foot)]


def meet(s, t):
    if s[0] == t[0]:  # parallel strokes meet only when they lie on one line and overlap
        return s[1] == t[1] and max(s[2], t[2]) <= min(s[3], t[3])
    v, h = (s, t) if s[0] == "v" else (t, s)
    return h[2] <= v[1] <= h[3] and v[2] <= h[1] <= v[3]


@pytest.mark.parametrize("seed", range(6))
def test_strokes_meet_exactly_where_arcs_cross(seed):
    """Brute force over random trees (n <= 12): two arcs' strokes meet on the page if and
    only if the arcs cross in the tree (the root's arrow spans 0..root), so a non-projective
    pair is seen crossing and a projective tree is drawn without a crossing."""
    rng = random.Random(seed)
    for _ in range(60):
        n = rng.randint(1, 12)
        tree = Tree(words=[f"w{i}" for i in range(1, n + 1)], heads=random_tree(rng, n),
                    labels=[rng.choice(["nsubj", "obj", "x", "compound:prt"]) for _ in range(n)])
        lay = layout(tree)
        assert len(lay.arcs) == n
        for i, a in enumerate(lay.arcs):
            for b in lay.arcs[i + 1:]:
                geo = any(meet(s, t) for s in strokes(a, lay) for t in strokes(b, lay))
                assert geo == crosses((a.lo, a.hi), (b.lo, b.hi)), (tree.heads, a, b)
                assert (a.crossing and b.crossing) or not crosses((a.lo, a.hi), (b.lo, b.hi))
                if a.head and b.head and a.lo <= b.lo and b.hi <= a.hi:  # nested: lower
                    assert b.level < a.level


def test_levels_and_anchors_of_a_worked_example():
    """'A hearing is scheduled on the issue today' with 'on the issue' attached to 'hearing'
    (McDonald et al. 2005's non-projective example): the nmod arc crosses the root's arrow
    and the obl:tmod arc; one arc per word, anchors apart at every word."""
    tree = Tree(words="A hearing is scheduled on the issue today".split(),
                heads=[2, 4, 4, 0, 7, 7, 2, 4],
                labels="det nsubj aux root case det nmod obl:tmod".split())
    lay = layout(tree)
    by_dep = {a.dep: a for a in lay.arcs}
    assert by_dep[7].crossing and by_dep[8].crossing and by_dep[4].crossing
    assert not by_dep[1].crossing and not by_dep[5].crossing
    assert by_dep[1].level == by_dep[6].level == 1 and by_dep[5].level == 2  # over det
    assert by_dep[7].level != by_dep[8].level
    ends = {}
    for a in lay.arcs:
        for w, x in ((a.dep, a.x_dep), (a.head, a.x_head)):
            if w:
                ends.setdefault(w, []).append(x)
    for w, xs in ends.items():
        assert len(set(xs)) == len(xs), w


def _svg(tree, **kw):
    return ET.fromstring(render_svg(tree, "t1", **kw))


def test_every_user_text_is_escaped_and_reads_back():
    words = ['<script>alert("x")</script>', "a&b", "'q'", "]]>"]
    tree = Tree(words=words, heads=[0, 1, 1, 3], labels=["root", "<b>", 'x"y', "&amp;"],
                upos=["<X>", "&", "'", '"'], lemmas=["</svg>", "&lt;", "<", ">"],
                sent_id='<img src=x onerror="y">', text="<i>t</i>")
    svg = render_svg(tree, '"><script>')
    assert "<script" not in svg and "<img" not in svg and "<b>" not in svg
    root = ET.fromstring(svg)  # well-formed XML
    forms = [t.text for t in root.iterfind(".//s:text[@class='form']", NS)]
    assert forms == words
    assert [t.text for t in root.iterfind(".//s:text[@class='lemma']", NS)] == tree.lemmas
    labels = {g.get("data-dep"): g.get("data-label") for g in root.iterfind(".//s:g", NS)
              if "arc" in g.get("class", "").split()}
    assert labels == {"1": "root", "2": "<b>", "3": 'x"y', "4": "&amp;"}
    page = page_html([tree], "<title>", intro="<intro>")
    assert "<script" not in page
    assert "&lt;title&gt;" in page and "&lt;intro&gt;" in page and "&lt;img" in page


def test_one_arc_per_word_root_marked_ids_unique():
    from depparse.conllu import read_conllu
    from depparse.viewer import tree_from_sentence

    sents = read_conllu(SAMPLE)
    page = page_html([tree_from_sentence(s) for s in sents], "sample")
    ids = re.findall(r'(?<![\w-])id="([^"]+)"', page)
    assert len(ids) == len(set(ids)) == 2 * len(sents)  # a section and a drawing each
    for s, svg in zip(sents, re.findall(r"<svg.*?</svg>", page, re.S), strict=True):
        root = ET.fromstring(svg)
        arcs = [g for g in root.iterfind(".//s:g", NS) if "arc" in g.get("class", "").split()]
        assert len(arcs) == s.n
        roots = [g for g in arcs if "root-arc" in g.get("class")]
        assert [int(g.get("data-dep")) for g in roots] == [int(m) for m in
                                                           (s.heads == 0).nonzero()[0]]
        bold = [g.get("data-id") for g in root.iterfind(".//s:g", NS)
                if g.get("class") == "word root"]
        assert bold == [g.get("data-dep") for g in roots]


def test_right_to_left_mirrors_the_words():
    heb = Tree(words=["ספר", "גדול", "מאוד"], heads=[0, 1, 2], labels=["root", "amod", "advmod"])
    assert is_rtl(heb.words) and not is_rtl(["The", "cat"])

    def xs(root):
        return [float(t.get("x")) for t in root.iterfind(".//s:text[@class='form']", NS)]

    auto, ltr = xs(_svg(heb)), xs(_svg(heb, rtl=False))
    assert auto[0] > auto[1] > auto[2] and ltr[0] < ltr[1] < ltr[2]
    assert _svg(heb).get("direction") == "rtl"
    eng = Tree(words=["The", "cat"], heads=[2, 0])
    assert xs(_svg(eng, rtl=True))[0] > xs(_svg(eng, rtl=True))[1]


def test_gold_marks_wrong_heads_and_labels():
    tree = Tree(words="She saw him".split(), heads=[2, 0, 1], labels=["nsubj", "root", "obj"],
                gold_heads=[2, 0, 2], gold_labels=["nsubj:pass", "root", "iobj"])
    arcs = {int(g.get("data-dep")): g for g in _svg(tree).iterfind(".//s:g", NS)
            if "arc" in g.get("class", "").split()}
    assert "wrong" in arcs[3].get("class").split()  # head 1, gold 2
    assert "gold: head 2 iobj" in arcs[3].find("s:title", NS).text
    assert "wrong" not in arcs[1].get("class").split()
    # nsubj vs nsubj:pass: the same universal relation, as LAS counts it
    assert "wrong-label" not in arcs[1].find("s:text", NS).get("class")
    tree2 = Tree(words=tree.words, heads=[2, 0, 2], labels=["obj", "root", "obj"],
                 gold_heads=[2, 0, 2], gold_labels=["nsubj", "root", "obj"])
    arcs2 = {int(g.get("data-dep")): g for g in _svg(tree2).iterfind(".//s:g", NS)
             if "arc" in g.get("class", "").split()}
    assert "wrong-label" in arcs2[1].find("s:text", NS).get("class")
    assert "wrong-label" not in arcs2[3].find("s:text", NS).get("class")


def test_proof_badges_in_plain_words():
    assert proof_badge({"proof": "dual", "optimal": True}) == (
        "proved", "proved optimal over the arcs the pruner keeps: dual decomposition "
                  "certificate")
    assert proof_badge({"proof": "dual", "optimal": True, "optimal_over": "all"}) == (
        "proved", "proved optimal over all arcs: dual decomposition certificate")
    assert proof_badge({"proof": "dual", "optimal": True, "optimal_over": "pruned",
                        "pruner_dev_recall": 99.614, "pruner_dev_recall_at_least": True}) == (
        "proved", "proved optimal over the arcs the pruner keeps (at least 99.61% of gold "
                  "arcs on dev): dual decomposition certificate")
    assert proof_badge({"proof": "exact", "optimal": True})[1] == (
        "proved optimal over all arcs: exact decoder (arc-factored model)")
    kind, words = proof_badge({"proof": "branch-and-bound", "optimal": True, "nodes": 1234,
                               "optimal_over": "all"})
    assert kind == "proved" and words == "proved optimal over all arcs: branch and bound " \
                                         "(1,234 nodes)"
    assert proof_badge({"proof": None, "optimal": False, "timed_out": True})[1] == (
        "not proved within the time limit: the best tree found")
    assert proof_badge({"proof": None, "optimal": False})[0] == "unproved"
    assert proof_badge(None)[0] == "unknown"


def test_words_without_head_have_no_arc():
    tree = Tree(words=["a", "b", "c"], heads=[-1, 0, -1])
    assert [(a.head, a.dep) for a in layout(tree).arcs] == [(0, 2)]
    assert layout(Tree(words=[], heads=[])).arcs == []
    ET.fromstring(render_svg(Tree(words=[], heads=[]), "e"))


# ---------------------------------------------------------------------------------------
# depparse show


def test_show_writes_a_page_with_gold_marks(tmp_path):
    sys_file = tmp_path / "sys.conllu"
    text = SAMPLE.read_text(encoding="utf-8")
    # one wrong head in the system file: word 1 of the first sentence attached to word 3
    lines = text.split("\n")
    k = next(i for i, line in enumerate(lines) if line.startswith("1\t"))
    cols = lines[k].split("\t")
    gold_head = cols[6]
    cols[6] = "3" if gold_head != "3" else "4"
    lines[k] = "\t".join(cols)
    sys_file.write_text("\n".join(lines), encoding="utf-8")
    out = tmp_path / "trees.html"
    rc, _, err = run_cli(["show", sys_file, "--gold", SAMPLE, "-o", out])
    assert rc == 0, err
    page = out.read_text(encoding="utf-8")
    assert page.count("<svg") == 8 and "1 wrong heads" in page
    assert page.count('class="arc wrong') + page.count('class="arc crossing wrong') == 1
    assert "<script" not in page and "http" not in page.replace("http://www.w3.org", "")


def test_show_refuses_a_gold_file_of_other_sentences(tmp_path):
    other = tmp_path / "other.conllu"
    other.write_text("1\tX\tx\tNOUN\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8")
    out = tmp_path / "t.html"
    rc, _, err = run_cli(["show", SAMPLE, "--gold", other, "-o", out])
    assert rc == 2 and err.count("\n") == 1 and "1 sentences, but" in err
    assert not out.exists()
    rc, _, err = run_cli(["show", tmp_path / "missing.conllu", "-o", out])
    assert rc == 2 and "no such file" in err and not out.exists()


def test_package_data_carries_the_viewer_files():
    """Every file the server and the pages read from the package (static/, trees.css) is
    matched by pyproject.toml's package-data, so a wheel carries it."""
    tomllib = pytest.importorskip("tomllib")
    from fnmatch import fnmatch

    data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]
    for pkg, folder in (("depparse.serve", REPO / "depparse/serve"),
                        ("depparse.viewer", REPO / "depparse/viewer")):
        files = [p.relative_to(folder).as_posix() for p in folder.rglob("*")
                 if p.is_file() and p.suffix not in (".py", ".pyc")
                 and "__pycache__" not in p.parts]
        assert files, pkg
        for f in files:
            assert any(fnmatch(f, g) for g in data[pkg]), (pkg, f)


# ---------------------------------------------------------------------------------------
# the report's tree page


def test_report_links_each_listed_sentence_to_its_tree(tmp_path):
    from test_report import example_report

    from depparse.report import write_report
    from depparse.report.schema import read_sentences
    from depparse.report.stats import hardest

    report = example_report()
    index = write_report(report, tmp_path)
    listed = hardest(read_sentences(report))
    assert listed
    html = index.read_text(encoding="utf-8")
    links = re.findall(r'<td><a href="trees\.html#(s\d+)">([^<]+)</a></td>', html)
    assert [t for _, t in links] == [s.label for s in listed]
    page = (tmp_path / "trees.html").read_text(encoding="utf-8")
    for (anchor, _), s in zip(links, listed, strict=True):
        section = re.search(rf'<section class="sentence" id="{anchor}">(.*?)</section>', page,
                            re.S).group(1)
        svg = ET.fromstring(re.search(r"<svg.*</svg>", section, re.S).group(0))
        arcs = {int(g.get("data-dep")): int(g.get("data-head"))
                for g in svg.iterfind(".//s:g", NS) if "arc" in g.get("class", "").split()}
        assert arcs == {m: int(h) for m, h in enumerate(s.heads) if m and h >= 0}
        badge = "proved optimal" if s.optimal else "not proved"
        assert badge in section
    # the Markdown report keeps plain text in that column
    assert listed[0].label in (tmp_path / "report.md").read_text(encoding="utf-8")
