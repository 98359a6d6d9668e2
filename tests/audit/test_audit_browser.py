"""The HTML report's audit section in a real browser (Debian's headless Chromium, as
`tests/report/test_report_chromium.py` opens the report): the section and its pictures render, one
per probe that ran and one of the noise floor, and the page requests nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import CHROMIUM, EXAMPLE
from helpers.report import Page
from helpers.visit import visit

from ground_truth import load_specs, load_submissions
from judge import audit_judge
from judge.checklist.texts import texts_from
from judge.report import render_html
from judge.testing import FakeProviderConfig
from judge.testing.answers import grounded_policy
from judge.testing.biases import PlantedBiases
from judge.testing.inprocess import inprocess_judge

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_audit_section_and_its_pictures_render_offline(tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.fail(f"this test is marked `browser` and needs {CHROMIUM}", pytrace=False)
    specs = load_specs(EXAMPLE / "ground_truth")
    subs = load_submissions(EXAMPLE / "outputs")
    config = FakeProviderConfig(
        answer_policy=grounded_policy, biases=PlantedBiases(yes_first=3, flip_rate=0.05)
    )
    report = audit_judge(specs, subs, judge=inprocess_judge(config, "openai/gpt-4o-mini"))
    result = report.base_result
    assert result is not None and report.biased == ["order"]
    page = tmp_path / "audit.html"
    texts = texts_from(specs, subs, result.config.get("rubric"))
    page.write_text(render_html(result, texts, raw={"audit": report.model_dump(mode="json")}))
    seen = visit(page, tmp_path / "chromium")
    dom = Page(seen.dom)
    assert seen.page_requests == []
    section = seen.dom[seen.dom.index('id="audit"') :]
    ran = [p for p in report.probes if not p.skipped]
    assert section.count("<svg") == len(ran) + 1
    assert "Judge audit" in dom.all_text and "BIAS" in dom.all_text
    assert "Biases found: order." in dom.all_text
