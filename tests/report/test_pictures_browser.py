"""The pictures of issue 36 in a real browser (Debian's headless Chromium over the DevTools
pipe, as tests/test_labelling_browser.py drives it): the report's per-question view, the page of
`judge agreement --html` and the calibration page's reliability diagram. Each is opened at a
desktop and a narrow width: its elements are there, its charts are drawn inside the window, the
page never scrolls sideways, and a screenshot is taken (kept in DIAGNOSIS_JUDGE_SCREENSHOTS when
that names a folder: the manual's docs/img/*.png are the 800-pixel ones)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import EXAMPLE
from helpers.browser import Browser
from helpers.report import example_run
from matplotlib.image import imread

from agreement import agreement_report
from judge import write_result
from judge.cli import main
from judge.report import render_html
from judge.report.agreement_page import write_agreement_html

pytestmark = [pytest.mark.browser, pytest.mark.slow]
WIDTHS = (1280, 800)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    b = Browser(tmp_path_factory.mktemp("profile"))
    yield b
    b.close()


@pytest.fixture(scope="module")
def pages(tmp_path_factory, sources) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("pictures")
    result, texts = example_run()
    report = tmp / "report.html"
    report.write_text(render_html(result, texts), encoding="utf-8")
    agreement = write_agreement_html(tmp / "agreement.html", agreement_report(sources, B=50))
    results = tmp / "results.json"
    write_result(result, results)
    calibration = tmp / "calibration.html"
    labels = str(EXAMPLE / "labels.csv")
    assert main(["calibrate", str(results), "--human", labels, "--html", str(calibration)]) == 0
    return {"report": report, "agreement": agreement, "calibration": calibration}


def open_page(browser: Browser, page: Path, width: int) -> None:
    browser.page(
        "Emulation.setDeviceMetricsOverride",
        width=width,
        height=900,
        deviceScaleFactor=1,
        mobile=False,
    )
    browser.page("Page.navigate", url=page.resolve().as_uri())
    browser.until("document.readyState === 'complete' && !!document.querySelector('main')")


def inside_window(browser: Browser, selector: str) -> list[dict]:
    """Each element `selector` matches: its box, and whether it lies inside the window's width."""
    return browser.js(
        f"[...document.querySelectorAll({json.dumps(selector)})].map(e => {{"
        " const r = e.getBoundingClientRect();"
        " return {left: r.left, right: r.right, width: r.width, inside: r.left >= 0"
        " && r.right <= document.documentElement.clientWidth + 0.5}; })"
    )


def shoot(browser: Browser, anchor: str, name: str, tmp_path: Path) -> np.ndarray:
    browser.js(f"document.querySelector({json.dumps(anchor)}).scrollIntoView()")
    shot = browser.screenshot(tmp_path / f"{name}.png")
    keep = os.environ.get("DIAGNOSIS_JUDGE_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)
    image = imread(shot)
    assert image.std() > 0.05, f"{name}: the screenshot is blank"
    return image


def no_sideways_scroll(browser: Browser) -> bool:
    return browser.js(
        "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_the_report_s_per_question_view(browser, pages, width, tmp_path):
    open_page(browser, pages["report"], width)
    rows = browser.js("document.querySelectorAll('#question-table tr[data-question]').length")
    assert rows == 9 * 7  # nine questions, all agents and each of the example's six
    texts = browser.js("[...document.querySelectorAll('#question-table .qtext')].length")
    assert texts == rows
    charts = inside_window(browser, "#question-chart svg")
    assert len(charts) == 1 and charts[0]["inside"] and charts[0]["width"] > 200
    assert browser.js("document.querySelectorAll('.failed-questions li').length") > 0
    assert no_sideways_scroll(browser)
    shoot(browser, "#questions", f"report-questions-{width}", tmp_path)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_agreement_page(browser, pages, width, tmp_path):
    open_page(browser, pages["agreement"], width)
    charts = inside_window(browser, "#kappa-chart svg")
    assert len(charts) == 1 and charts[0]["inside"] and charts[0]["width"] > 200
    confusions = inside_window(browser, "table.confusion")
    assert len(confusions) == 9 and all(c["inside"] for c in confusions)  # 3 pairs, 3 levels
    assert no_sideways_scroll(browser)
    shoot(browser, "#per-question", f"agreement-kappa-{width}", tmp_path)
    shoot(browser, "#level-verdict", f"agreement-confusions-{width}", tmp_path)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_calibration_page_s_reliability_diagram_is_readable(browser, pages, width, tmp_path):
    open_page(browser, pages["calibration"], width)
    diagrams = inside_window(browser, "#reliability svg")
    assert diagrams and all(d["inside"] and d["width"] >= min(440, width - 80) for d in diagrams)
    assert no_sideways_scroll(browser)
    shoot(browser, "#reliability", f"calibration-reliability-{width}", tmp_path)
