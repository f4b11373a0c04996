"""The HTML view in a real headless Chromium: the summary level first, expand on click, search and
inspect with a source preview, arrows, the calls / file / tiers views, filters, legend colours, and a
screenshot (kept in the test's folder and in bench/out/)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from acms.cli.main import cli
from acms.export.colours import KIND_COLOURS

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER),
                                reason="needs Debian's chromium and chromium-driver (.ci/run installs them in CI)")
ARTIFACTS = Path(__file__).resolve().parents[2] / "bench" / "out"


def _chromium(tmp_path: Path) -> Any:
    """A headless Chromium driven by selenium (Debian's chromedriver), its profile in ``tmp_path``."""
    webdriver = pytest.importorskip("selenium.webdriver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1300,850",
                 f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    return webdriver.Chrome(service=webdriver.ChromeService(executable_path=DRIVER), options=options)


def test_html_view_in_headless_chromium(tmp_path: Path, indexed_sample: Path) -> None:
    pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    root = indexed_sample
    page = tmp_path / "graph.html"
    result = CliRunner().invoke(cli, ["export", "-C", str(root), "--format", "html", "-o", str(page)])
    assert result.exit_code == 0, result.output
    html = page.read_text()
    assert not re.search(r"<(script|link|img|iframe)\b[^>]*\b(src|href)=", html)  # nothing fetched
    assert "cytoscapeFcose" in html  # the vendored layout is inlined

    driver = _chromium(tmp_path)
    js = driver.execute_script
    body = lambda attr: driver.find_element(By.TAG_NAME, "body").get_attribute(attr)  # noqa: E731
    try:
        driver.get(page.as_uri())
        WebDriverWait(driver, 30).until(lambda d: body("data-ready"))
        total, summary = int(body("data-ready")), int(body("data-visible"))
        assert total >= 10 and 0 < summary < total  # the summary level first
        labels = js("return acmsView.cy.nodes().map(n => n.data('label'))")
        assert any(label.startswith("pkg (") for label in labels), labels  # the package, collapsed
        js("acmsView.cy.nodes().filter(n => n.data('label').startsWith('pkg (')).emit('tap')")  # click it
        assert int(body("data-visible")) > summary
        assert js("return acmsView.cy.nodes(':parent').length") >= 1  # modules nested in their package
        # search, then inspect: path:line and a preview of the source
        search = driver.find_element(By.ID, "search")
        search.send_keys("parse_header", Keys.ENTER)
        inspector = driver.find_element(By.ID, "inspector")
        assert "kind: Method" in inspector.text and "where: pkg/mod.py:20-23" in inspector.text
        assert "def parse_header" in driver.find_element(By.CSS_SELECTOR, "#inspector pre").text
        # neighbours of the method: what it calls appears; every edge drawn has an arrow
        driver.find_element(By.XPATH, "//button[text()='Show neighbours']").click()
        assert "pkg.util.normalize" in js("return acmsView.cy.nodes().map(n => n.data('label')).join(' ')")
        arrows = js("return acmsView.cy.edges().map(e => e.style('target-arrow-shape'))")
        assert arrows and set(arrows) == {"triangle"}
        # legend: one colour per kind, the table's
        rows = driver.find_elements(By.CSS_SELECTOR, "#kinds label")
        legend = {r.text.strip(): r.get_attribute("data-colour") for r in rows}
        assert legend and all(KIND_COLOURS[k] == c for k, c in legend.items())
        assert len(set(legend.values())) == len(legend)
        # filter by kind: methods disappear
        driver.find_element(By.CSS_SELECTOR, "#kinds input[data-name='Method']").click()
        assert "Method" not in js("return acmsView.cy.nodes().map(n => n.data('colour') === '"
                                  + KIND_COLOURS["Method"] + "' ? 'Method' : '').join(' ')")
        driver.find_element(By.CSS_SELECTOR, "#kinds input[data-name='Method']").click()
        # the other views
        driver.find_element(By.XPATH, "//button[text()='Calls around']").click()
        assert body("data-view") == "calls" and int(body("data-visible")) >= 2
        assert js("return acmsView.cy.edges().filter(e => e.data('relation') === 'calls').length") >= 1
        driver.find_element(By.CSS_SELECTOR, "input[name=view][value=file]").click()
        assert body("data-view") == "file" and int(body("data-visible")) >= 3
        driver.find_element(By.CSS_SELECTOR, "input[name=view][value=tiers]").click()
        assert body("data-view") == "tiers" and "warm" in js("return acmsView.cy.nodes().map(n => n.data('label')).join(' ')")
        driver.find_element(By.CSS_SELECTOR, "input[name=view][value=structure]").click()
        # path filter
        path = driver.find_element(By.ID, "path")
        path.send_keys("util")
        WebDriverWait(driver, 5).until(lambda d: "pkg/mod" not in js(
            "return acmsView.cy.nodes().map(n => n.data('label')).join(' ')") and int(body("data-visible")) >= 1)
        path.clear()
        path.send_keys(" ")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = tmp_path / "html-view.png"
        driver.save_screenshot(str(shot))
        shutil.copy(shot, ARTIFACTS / "html-view.png")
        assert shot.stat().st_size > 5000
    finally:
        driver.quit()


def test_html_view_of_this_repository_packages_first_then_expand(tmp_path: Path) -> None:
    """This repository, indexed and exported by the real commands: the page opens on its top-level
    folders (thousands of nodes folded into a few dozen), a click on ``src`` opens the ``acms`` package.
    The screenshot is kept in the test's folder and as bench/out/html-view-acms.png."""
    pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    repo = Path(__file__).resolve().parents[2]
    store, page = tmp_path / "store", tmp_path / "acms.html"
    env = {**os.environ, "ACMS_EMBED_ON_INDEX": "off"}  # the view draws no vectors
    for args in (["index", str(repo), "--store", str(store), "--quiet"],
                 ["export", "-C", str(repo), "--store", str(store), "--format", "html", "-o", str(page), "--quiet"]):
        done = subprocess.run([sys.executable, "-m", "acms", *args], capture_output=True, text=True, env=env,
                              timeout=240)
        assert done.returncode == 0, done.stderr
    driver = _chromium(tmp_path)
    js = driver.execute_script
    body = lambda attr: driver.find_element(By.TAG_NAME, "body").get_attribute(attr)  # noqa: E731
    try:
        driver.get(page.as_uri())
        WebDriverWait(driver, 60).until(lambda d: body("data-ready"))
        total, summary = int(body("data-ready")), int(body("data-visible"))
        labels = js("return acmsView.cy.nodes().map(n => n.data('label'))")
        assert total > 1000 and summary < 60, (total, summary)
        assert {"src", "tests", "queries"} <= {label.split(" (")[0] for label in labels}, labels
        js("acmsView.cy.nodes().filter(n => n.data('label').startsWith('src (')).emit('tap')")  # click src
        WebDriverWait(driver, 10).until(lambda d: int(body("data-visible")) > summary)
        labels = js("return acmsView.cy.nodes().map(n => n.data('label'))")
        assert any(label.startswith("acms (") for label in labels), labels
        shot = tmp_path / "html-view-acms.png"
        driver.save_screenshot(str(shot))
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, ARTIFACTS / "html-view-acms.png")
        assert shot.stat().st_size > 5000
        print(f"screenshot: {shot} ({total} nodes, {summary} shown first)")
    finally:
        driver.quit()
