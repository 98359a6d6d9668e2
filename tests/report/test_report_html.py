"""The HTML report, rendered from real runs of the engine: content, self-containment, escaping,
optional sections. (The same pages opened in Chromium: test_report_chromium.py.)"""

from __future__ import annotations

import base64
import hashlib
import re
from collections import Counter

import pytest
from helpers import FIXTURES
from helpers.report import HOSTILE_INCIDENT, RATE_LIMIT, Page, example_run, hostile_run

from ground_truth import load_specs, load_submissions
from judge import EvalResult, evaluate
from judge.checklist.highlight import find_quote
from judge.checklist.texts import CaseTexts, texts_from
from judge.report import render_html

SREZERO = FIXTURES / "srezero"


@pytest.fixture(scope="module")
def example_result_and_texts() -> tuple[EvalResult, CaseTexts]:
    return example_run()


@pytest.fixture(scope="module")
def example_html(example_result_and_texts) -> str:
    result, texts = example_result_and_texts
    return render_html(result, texts)


def test_summary_configuration_and_dimensions(example_result_and_texts, example_html):
    result, _ = example_result_and_texts
    page = Page(example_html)
    text = page.all_text
    tiles = {a["data-stat"] for a in page.tags("div") if a.get("data-stat")}
    assert {"pass rate", "mean composite", "unscored questions", "provider errors"} <= tiles
    o = result.overall
    assert f"{o.pass_rate.value:.2f}" in text
    assert f"95% CI [{o.pass_rate.ci.low:.2f}, {o.pass_rate.ci.high:.2f}]" in text
    assert result.config["rubric"]["hash"] in text
    assert "Fault Localization" in text
    for dim, est in o.dimension_means.items():
        assert f"{est.value:.2f} [{est.ci.low:.2f}, {est.ci.high:.2f}]" in text, dim


def test_every_incident_has_a_row_and_a_drilldown(example_result_and_texts, example_html):
    result, _ = example_result_and_texts
    page = Page(example_html)
    rows = [a["data-incident"] for a in page.tags("tr") if a.get("data-incident")]
    assert rows == [i.incident_id for i in result.incidents]
    cases = page.tags("details")
    assert len(cases) == len(result.cases)
    assert Counter(a["data-status"] for a in cases) == Counter(
        "pass" if c.passed else "fail" for c in result.cases
    )
    sortable = [a["id"] for a in page.tags("table") if "sortable" in (a.get("class") or "")]
    assert "incident-table" in sortable


def test_evidence_marks_match_the_judgments(example_result_and_texts, example_html):
    result, texts = example_result_and_texts
    page = Page(example_html)
    quoted = [j for j in result.judgments if j.answer and j.evidence and j.evidence.strip()]
    found = [j for j in quoted if j.evidence.strip() in texts.diagnosis(j.incident_id, j.trial)]
    assert found and page.marks
    marked = "".join(page.marks)
    for j in found:
        assert j.evidence.strip() in marked, (j.incident_id, j.trial, j.question_id)
    lost = [
        j for j in quoted if find_quote(texts.diagnosis(j.incident_id, j.trial), j.evidence) is None
    ]
    assert page.all_text.count("not found in the diagnosis") == len(lost)
    assert texts.ground_truth[HOSTILE_INCIDENT][:60] in page.all_text


def test_page_is_self_contained_and_its_script_is_pinned(example_html):
    page = Page(example_html)
    assert not page.tags("link") and not page.tags("iframe") and not page.tags("img")
    scripts = page.tags("script")
    assert len(scripts) == 1 and "src" not in scripts[0]
    for tag, attrs in page.elements:
        for name in ("src", "href", "xlink:href", "action", "srcset"):
            value = attrs.get(name) or ""
            assert not value or value.startswith("#"), (tag, name, value)
    assert not re.search(r"url\(\s*['\"]?(?!#)", example_html)
    assert "@import" not in example_html
    assert not re.search(r"https?://", example_html)
    csp = next(a["content"] for a in page.tags("meta") if a.get("http-equiv"))
    digest = base64.b64encode(hashlib.sha256(page.scripts[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp
    assert "default-src 'none'" in csp


def test_plots_are_inline_svg_with_unique_ids(example_html):
    page = Page(example_html)
    assert len(page.tags("svg")) >= 3
    ids = [attrs["id"] for _, attrs in page.elements if attrs.get("id")]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    refs = re.findall(r'(?:xlink:href="|url\()#([^")]+)', example_html)
    assert refs and set(refs) <= set(ids)


def test_pass_at_k_columns_only_when_k_above_one(example_html):
    assert "pass@1" in example_html and "pass@2" not in example_html
    result, texts = example_run(k=2)
    html = render_html(result, texts)
    assert "pass@2" in html and "pass^2" in html


def test_without_texts_the_judgments_still_show(example_result_and_texts):
    result, _ = example_result_and_texts
    page = Page(render_html(result))
    assert "--ground-truth DIR --outputs DIR" in page.all_text
    assert not page.marks
    assert not [a for a in page.tags("div") if a.get("class") == "diagnosis"]
    rows = [a for a in page.tags("tr") if (a.get("class") or "").startswith(("ans-", "unscored"))]
    assert len(rows) >= len(result.judgments)
    assert "Fault Localization" in page.all_text


def test_hostile_diagnosis_is_shown_as_text():
    result, texts = hostile_run()
    html = render_html(result, texts)
    page = Page(html)
    assert len(page.tags("script")) == 1
    assert not page.tags("img") and not page.tags("b") and not page.tags("i")
    assert not [a for a in page.tags("a") if (a.get("href") or "").startswith("http")]
    text = page.all_text
    assert "<script>document.title='pwned'</script>" in text
    assert "&lt;wrong port&gt;" in text
    assert "{{ 7*7 }}" in text and "49" not in text.split("{{ 7*7 }}")[0][-5:]
    assert "<i>x</i>" in text
    assert any("<b>port 8082</b>" in m for m in page.marks)
    assert "&amp;lt;wrong port&amp;gt;" in html


def test_unscored_and_provider_errors_are_apart():
    result, texts = hostile_run()
    page = Page(render_html(result, texts))
    flaky = next(a for a in page.tags("details") if a.get("data-status") == "incomplete")
    assert flaky
    assert [a for a in page.tags("table") if a.get("id") == "error-table"]
    unscored_rows = [a for a in page.tags("tr") if a.get("class") == "unscored"]
    assert len(unscored_rows) == 2 * 3
    text = page.all_text
    assert RATE_LIMIT in text and "rate_limit" in text
    assert "1 provider error" in text


def test_resolution_section_only_when_the_result_has_one(example_html):
    assert 'id="resolution"' not in example_html
    specs = load_specs(SREZERO / "task_configs_all_40.json")
    subs = load_submissions(SREZERO / "example_results_scripted_v0.5.json")
    result = evaluate(specs, subs)
    assert result.resolution
    page = Page(render_html(result, texts_from(specs, subs)))
    ids = {a.get("id") for _, a in page.elements}
    assert {"resolution", "side-by-side", "resolution-table"} <= ids
    res_rows = page.tags("tr")
    assert "coverage-figure_1" in ids
    table = result.resolution["side_by_side"]["table"]
    assert sum(table.values()) == len(result.resolution["cases"])
    assert len(res_rows) > len(result.resolution["cases"])
    assert "P(resolved | diagnosis passed)" in page.all_text


@pytest.mark.slow
def test_agreement_section_from_the_raw_result(example_result_and_texts):
    from agreement import agreement_report

    result, texts = example_result_and_texts
    first = result.model_dump(mode="json")
    second = result.model_dump(mode="json")
    second["config"]["judge"]["name"] = "rules-flipped"
    for j in second["judgments"][::4]:
        j["answer"] = {"Yes": "No", "No": "Yes", None: None}[j["answer"]]
    report = agreement_report([first, second], B=50, seed=1)
    raw = {**first, "agreement": report.model_dump(mode="json")}
    page = Page(render_html(result, texts, raw=raw))
    assert 'id="agreement"' in "".join(f'id="{a.get("id")}"' for _, a in page.elements)
    text = page.all_text
    assert "rules-flipped" in text and "κ [95% CI]" in text
    verdict = report.level("verdict").pairwise[0]
    assert verdict.kappa.text() in text
    assert 'id="agreement"' not in render_html(result, texts)


def test_tokens_and_cost_add_up_from_the_calls(example_result_and_texts):
    from judge.checklist.judgment import Usage

    result, texts = example_result_and_texts
    calls = [
        c.model_copy(
            update={
                "usage": Usage(
                    prompt_tokens=100, completion_tokens=10, cost_usd=0.001 if i % 2 else None
                )
            }
        )
        for i, c in enumerate(result.calls)
    ]
    text = Page(render_html(result.model_copy(update={"calls": calls}), texts)).all_text
    n, priced = len(calls), len(calls) // 2
    assert f"{100 * n} prompt + {10 * n} completion ({n} calls reported usage)" in text
    assert f"${0.001 * priced:.4f} ({n - priced} calls without a known price not included)" in text
    assert "not reported" in Page(render_html(result, texts)).all_text


def test_entities_and_an_unknown_agreement_shape_are_shown(example_result_and_texts):
    result, texts = example_result_and_texts
    raw = {
        "entities": {
            "n": 3,
            "mean": {"precision": 0.5, "recall": 0.25, "f1": 0.3, "top_is_origin": None},
        },
        "agreement": {"note": "<not a report>"},
    }
    page = Page(render_html(result, texts, raw=raw))
    text = page.all_text
    assert "3 cases name structured entities" in text and "recall 0.25" in text
    assert '"note": "<not a report>"' in text
