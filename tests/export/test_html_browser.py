"""The HTML view in a real headless Chromium: nodes render, search selects, click inspects, screenshot."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from acms.cli.main import cli

from ..conftest import FIXTURES, run_index

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER),
                                reason="needs Debian's chromium and chromium-driver (.ci/run installs them in CI)")
ARTIFACTS = Path(__file__).resolve().parents[2] / "bench" / "out"


def test_html_view_in_headless_chromium(tmp_path: Path) -> None:
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    root = tmp_path / "sample"
    shutil.copytree(FIXTURES / "sample_project", root)
    run_index(root)
    page = tmp_path / "graph.html"
    result = CliRunner().invoke(cli, ["export", "-C", str(root), "--format", "html", "-o", str(page)])
    assert result.exit_code == 0, result.output
    assert "http://" not in page.read_text().split("<script type=\"application/json\"")[0].replace(
        "http://www.w3.org/2000/svg", "")  # nothing fetched from the network

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1200,800",
                 f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=DRIVER), options=options)
    try:
        driver.get(page.as_uri())
        WebDriverWait(driver, 20).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
        nodes = driver.find_elements(By.CSS_SELECTOR, "g.node")
        assert len(nodes) >= 10
        assert driver.find_element(By.CSS_SELECTOR, "g.node circle").get_attribute("fill").startswith("#")
        search = driver.find_element(By.ID, "search")
        search.send_keys("parse_header", Keys.ENTER)
        inspector = driver.find_element(By.ID, "inspector")
        assert "kind: Method" in inspector.text and "where: pkg/mod.py:20-23" in inspector.text
        target = driver.find_element(By.CSS_SELECTOR, "g.node[data-label='pkg.util.normalize']")
        driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", target)
        assert "name: pkg.util.normalize" in inspector.text and "Lower-case and strip" in inspector.text
        assert "sel" in target.get_attribute("class")
        driver.find_element(By.ID, "bytier").click()
        assert "warm" in driver.find_element(By.ID, "legend").text
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = tmp_path / "html-view.png"
        driver.save_screenshot(str(shot))
        shutil.copy(shot, ARTIFACTS / "html-view.png")
        assert shot.stat().st_size > 5000
    finally:
        driver.quit()
