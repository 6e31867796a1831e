"""The trees in a real browser: Debian's chromium, headless, driven by Selenium through
Debian's chromium-driver.  The server's page: type a sentence, parse, see one arc per word and
the proof's badge; `depparse show`'s page opened the same way.  Screenshots are saved beside
the test's temporary files (and, with DEPPARSE_SCREENSHOTS=DIR, into DIR).

Skips, saying what is missing, without chromium, chromedriver or selenium (CI installs them:
.ci/run)."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from fixtures_models import run_cli

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "corpora" / "sample.conllu"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM or not DRIVER:
        pytest.skip("no chromium/chromedriver: apt-get install chromium chromium-driver "
                    "(the browser tests need Debian's chromium and its driver)")
    webdriver = pytest.importorskip("selenium.webdriver",
                                    reason="selenium is not installed (pip install selenium)")
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="depparse-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # the flags that make Chromium work on a machine without a display, sandbox or network
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1400,1000",
                 f"--user-data-dir={profile}"):
        options.add_argument(flag)
    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium look for a driver online
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _save(driver, tmp_path, name):
    path = tmp_path / name
    driver.save_screenshot(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    keep = os.environ.get("DEPPARSE_SCREENSHOTS")
    if keep:
        shutil.copy(path, Path(keep) / name)
    return path


def _arcs_and_words(svg):
    from selenium.webdriver.common.by import By

    arcs = svg.find_elements(By.CSS_SELECTOR, "g.arc")
    words = svg.find_elements(By.CSS_SELECTOR, "g.word")
    return arcs, words


def test_type_a_sentence_and_see_its_proved_tree(server, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(server.url + "/")
    WebDriverWait(browser, 30).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#model option"))
    box = browser.find_element(By.ID, "input")
    box.clear()
    box.send_keys("The cat that the dog chased sat on the mat. It purred.")
    browser.find_element(By.ID, "parse").click()
    WebDriverWait(browser, 120).until(
        ec.presence_of_element_located((By.CSS_SELECTOR, "#trees section.sentence svg")))
    sections = browser.find_elements(By.CSS_SELECTOR, "#trees section.sentence")
    assert len(sections) == 2
    expected = [["The", "cat", "that", "the", "dog", "chased", "sat", "on", "the", "mat", "."],
                ["It", "purred", "."]]
    for section, words_expected in zip(sections, expected, strict=True):
        svg = section.find_element(By.TAG_NAME, "svg")
        arcs, words = _arcs_and_words(svg)
        forms = [w.find_element(By.CSS_SELECTOR, "text.form").text for w in words]
        assert forms == words_expected
        assert len(arcs) == len(words)  # one arc per word, the root's arrow included
        assert len(svg.find_elements(By.CSS_SELECTOR, "g.arc.root-arc")) == 1
        assert svg.size["width"] > 100 and svg.size["height"] > 60  # drawn, not empty
        badge = section.find_element(By.CSS_SELECTOR, ".badge")
        # the words of the viewer's own proof_badge: what is proved, over which arcs, and how
        assert re.fullmatch(r"proved optimal over (all arcs|the arcs the pruner keeps[^:]*): "
                            r"(dual decomposition certificate|branch and bound.*)",
                            badge.text), badge.text
        assert "proved" in badge.get_attribute("class").split()
        assert badge.is_displayed()
    conllu = browser.find_element(By.ID, "conllu").get_attribute("value")
    assert conllu.startswith("# newdoc") and "\tchased\t" in conllu
    assert not browser.find_element(By.ID, "error").is_displayed()
    _save(browser, tmp_path, "viewer.png")
    # a bad input shows the server's one line, and the page goes on working
    box.clear()
    browser.find_element(By.CSS_SELECTOR, "input[name=format][value=conllu]").click()
    box.send_keys("1\tbroken")
    browser.find_element(By.ID, "parse").click()
    WebDriverWait(browser, 60).until(
        ec.visibility_of_element_located((By.ID, "error")))
    assert "data:1: expected 10 tab-separated columns" in browser.find_element(
        By.ID, "error").text
    logs = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"
            and "/parse" not in e["message"]]  # the 400 of the bad input is expected
    assert not logs, logs


def test_depparse_show_page_in_the_browser(browser, tmp_path):
    from selenium.webdriver.common.by import By

    gold = tmp_path / "gold.conllu"
    system = tmp_path / "system.conllu"
    text = SAMPLE.read_text(encoding="utf-8")
    gold.write_text(text, encoding="utf-8")
    # the system file: the first sentence's first word attached elsewhere
    lines = text.split("\n")
    k = next(i for i, line in enumerate(lines) if line.startswith("1\t"))
    cols = lines[k].split("\t")
    cols[6] = "3" if cols[6] != "3" else "4"
    lines[k] = "\t".join(cols)
    system.write_text("\n".join(lines), encoding="utf-8")
    out = tmp_path / "trees.html"
    rc, _, err = run_cli(["show", system, "--gold", gold, "-o", out])
    assert rc == 0, err
    browser.get(out.as_uri())
    svgs = browser.find_elements(By.CSS_SELECTOR, "section.sentence svg")
    from depparse.conllu import read_conllu

    sents = read_conllu(system)
    assert len(svgs) == len(sents)
    for svg, s in zip(svgs, sents, strict=True):
        arcs, words = _arcs_and_words(svg)
        assert len(arcs) == len(words) == s.n
    wrong = browser.find_elements(By.CSS_SELECTOR, "g.arc.wrong")
    assert len(wrong) == 1
    color = wrong[0].find_element(By.CSS_SELECTOR, "path.arc-line").value_of_css_property(
        "stroke")
    assert color in ("rgb(204, 0, 0)", "#c00"), color  # the style sheet reached the page
    _save(browser, tmp_path, "show.png")
