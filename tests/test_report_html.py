"""The HTML report, rendered from real runs of the engine: content, self-containment, escaping,
optional sections. (The same pages opened in Chromium: test_report_chromium.py.)"""

from __future__ import annotations

import base64
import hashlib
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ground_truth import Submission, load_specs, load_submissions
from judge import EvalOptions, RulesJudge, evaluate
from judge.checklist.highlight import find_quote
from judge.checklist.judgment import DimensionVerdict, unscored
from judge.checklist.results import EvalResult
from judge.checklist.texts import CaseTexts, texts_from
from judge.judges import JudgeTask
from judge.report import render_html

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "sregym-mini"
SREZERO = REPO / "tests" / "fixtures" / "srezero"

HOSTILE_INCIDENT = "incorrect_port_assignment"
HOSTILE = (
    "Root cause: the checkout deployment sets PRODUCT_CATALOG_ADDR to <b>port 8082</b> "
    "instead of 8080 &lt;wrong port&gt;, so product-catalog connections are refused. "
    "<script>document.title='pwned'</script> "
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\"> "
    '<a href="https://evil.example/">click</a> </textarea> ]]> {{ 7*7 }}'
)
RATE_LIMIT = "429 Too Many Requests (gave up after 3 attempts)"


class FlakyJudge:
    """The rules judge, except that dimension D2 of trial `flaky` hits a provider error."""

    name = "rules"

    def __init__(self) -> None:
        self._rules = RulesJudge()

    def describe(self) -> dict:
        return self._rules.describe()

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        if task.submission.trial == "flaky" and task.dimension.id == "D2":
            return unscored(task.question_ids, RATE_LIMIT, "rate_limit", attempts=3)
        return await self._rules.judge(task)


def example_run(k: int | None = None) -> tuple[EvalResult, CaseTexts]:
    specs = load_specs(EXAMPLE / "ground_truth")
    subs = load_submissions(EXAMPLE / "outputs")
    result = evaluate(specs, subs, options=EvalOptions(k=k))
    return result, texts_from(specs, subs, result.config["rubric"])


def hostile_run() -> tuple[EvalResult, CaseTexts]:
    """One hostile diagnosis (trial `hostile`) and one case with a provider error (`flaky`)."""
    specs = [s for s in load_specs(EXAMPLE / "ground_truth") if s.id == HOSTILE_INCIDENT]
    subs = [
        Submission(
            incident_id=HOSTILE_INCIDENT, trial="hostile", diagnosis=HOSTILE, agent="<i>x</i>"
        ),
        Submission(incident_id=HOSTILE_INCIDENT, trial="flaky", diagnosis=HOSTILE),
    ]
    # one call per dimension, so that only D2 of `flaky` fails
    result = evaluate(specs, subs, judge=FlakyJudge(), options=EvalOptions(granularity="dimension"))
    return result, texts_from(specs, subs, result.config["rubric"])


class Page(HTMLParser):
    """Tags, attributes and text of a page, as a browser's parser would see them."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.marks: list[str] = []
        self.scripts: list[str] = []
        self._stack: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        if tag not in {"meta", "br", "img", "input", "link"}:
            self._stack.append(tag)
        if tag == "mark":
            self.marks.append("")

    def handle_endtag(self, tag):
        if tag in self._stack:
            while self._stack.pop() != tag:
                pass

    def handle_data(self, data):
        if "script" in self._stack:
            self.scripts.append(data)
        elif "style" not in self._stack:
            self.text.append(data)
        if "mark" in self._stack:
            self.marks[-1] += data

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.elements if tag == name]

    @property
    def all_text(self) -> str:
        return "".join(self.text)


@pytest.fixture(scope="module")
def example() -> tuple[EvalResult, CaseTexts]:
    return example_run()


@pytest.fixture(scope="module")
def example_html(example) -> str:
    result, texts = example
    return render_html(result, texts)


def test_summary_configuration_and_dimensions(example, example_html):
    result, _ = example
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


def test_every_incident_has_a_row_and_a_drilldown(example, example_html):
    result, _ = example
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


def test_evidence_marks_match_the_judgments(example, example_html):
    result, texts = example
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


def test_without_texts_the_judgments_still_show(example):
    result, _ = example
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


def test_agreement_section_from_the_raw_result(example):
    from agreement import agreement_report

    result, texts = example
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


def test_tokens_and_cost_add_up_from_the_calls(example):
    from judge.checklist.judgment import Usage

    result, texts = example
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


def test_entities_and_an_unknown_agreement_shape_are_shown(example):
    result, texts = example
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
