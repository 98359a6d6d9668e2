"""The HTML report in a real browser: Debian's headless Chromium loads it from a file.

Chromium runs with a fresh profile, its background services off, and every host name mapped to
NOTFOUND, so nothing leaves the machine even if a page asked. The net log then tells which
requests the *page* made (initiator: the file page) apart from the browser's own housekeeping
(initiator: 'not an origin'); a control page with a remote image proves the check can fail.
Skipped when /usr/bin/chromium is absent (.ci/run installs it).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers.report import HOSTILE_INCIDENT, Page, example_run, hostile_run
from helpers.visit import Visit, visit
from matplotlib.image import imread

from judge.report import render_html

# Deselected by default like the corpus tests (chromium is not pip-installable); .ci/run selects it.
pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def example_report(tmp_path_factory):
    result, texts = example_run()
    path = tmp_path_factory.mktemp("report") / "report.html"
    path.write_text(render_html(result, texts), encoding="utf-8")
    return result, path


@pytest.fixture(scope="module")
def example_visit(example_report, tmp_path_factory) -> Visit:
    return visit(example_report[1], tmp_path_factory.mktemp("dom"))


def test_dom_holds_the_summary_every_incident_and_the_marks(example_report, example_visit):
    result, path = example_report
    dom = Page(example_visit.dom)
    source = Page(path.read_text(encoding="utf-8"))
    stats = {a["data-stat"] for a in dom.tags("div") if a.get("data-stat")}
    assert {"pass rate", "mean composite", "cases"} <= stats
    assert f"{result.overall.pass_rate.value:.2f}" in dom.all_text
    rows = [a["data-incident"] for a in dom.tags("tr") if a.get("data-incident")]
    assert rows == [i.incident_id for i in result.incidents]
    assert len(dom.tags("details")) == len(result.cases)
    assert dom.marks and dom.marks == source.marks
    sortable_heads = [a for a in dom.tags("th") if a.get("tabindex") == "0"]
    assert sortable_heads, "the inline script did not run (blocked by the CSP?)"


def test_the_page_requests_nothing(example_visit, example_report, tmp_path):
    assert example_visit.page_requests == []
    hostile_result, texts = hostile_run()
    hostile = tmp_path / "hostile.html"
    hostile.write_text(render_html(hostile_result, texts), encoding="utf-8")
    assert visit(hostile, tmp_path / "h").page_requests == []


def test_the_request_check_sees_a_page_that_does_fetch(tmp_path):
    leak = tmp_path / "leak.html"
    leak.write_text('<!DOCTYPE html><p>x</p><img src="http://127.0.0.1:9/pixel.png">')
    requests = visit(leak, tmp_path / "v").page_requests
    assert "http://127.0.0.1:9/pixel.png" in requests


def test_screenshot_is_a_rendered_page(example_report, tmp_path):
    shot = visit(example_report[1], tmp_path, screenshot=True).screenshot
    image = imread(shot)
    assert image.shape[:2] == (2000, 1280)
    rgb = np.round(image[..., :3] * 255).astype(np.uint8)
    colours = np.unique(rgb.reshape(-1, 3), axis=0)
    assert len(colours) > 200
    non_white = np.any(rgb < 245, axis=2).mean()
    assert 0.05 < non_white < 0.9
    header = rgb[5:60, 0:1200].reshape(-1, 3).astype(int)
    assert (np.abs(header - [0x17, 0x32, 0x4D]).sum(axis=1) < 30).mean() > 0.8


def test_hostile_diagnosis_stays_text_in_the_browser(tmp_path):
    result, texts = hostile_run()
    path = tmp_path / "hostile.html"
    path.write_text(render_html(result, texts), encoding="utf-8")
    seen = visit(path, tmp_path / "v")
    dom = Page(seen.dom)
    assert re.search(r"<title>(.*?)</title>", seen.dom).group(1) == "Diagnosis scores — sregym-v3"
    assert len(dom.tags("script")) == 1
    assert not dom.tags("img") and not dom.tags("b")
    body = dom.tags("body")[0]
    assert "data-pwned" not in body
    text = dom.all_text
    assert "<script>document.title='pwned'</script>" in text
    assert "&lt;wrong port&gt;" in text
    assert any("<b>port 8082</b>" in m for m in dom.marks)
    assert HOSTILE_INCIDENT in text
