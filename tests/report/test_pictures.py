"""The pictures issue 36 adds, as HTML: the report's per-question view (Yes/No/unscored share of
each question, overall and by agent, with its text; a case's questions answered No with their
text), and `judge agreement --html` (kappa per question with CIs, confusion matrices).
tests/test_pictures_browser.py opens them in a real browser."""

from __future__ import annotations

import pytest
from helpers.report import Page, example_run

from agreement import agreement_report
from judge.cli import main
from judge.report import render_html
from judge.report.agreement_page import write_agreement_html
from judge.report.questions import ALL_AGENTS, question_shares


@pytest.fixture(scope="module")
def example():
    return example_run()


def test_question_shares_count_every_answer_once_overall_and_once_per_agent(example):
    result, texts = example
    shares = question_shares(result.judgments, result.cases, texts)
    overall = [s for s in shares if s.agent == ALL_AGENTS]
    assert [s.question_id for s in overall] == [f"D{d}-Q{q}" for d in (1, 2, 3) for q in (1, 2, 3)]
    assert all(s.text for s in overall)
    for s in overall:
        answers = [j.answer for j in result.judgments if j.question_id == s.question_id]
        assert (s.yes, s.no, s.unscored) == (
            answers.count("Yes"),
            answers.count("No"),
            answers.count(None),
        )
        per_agent = [x for x in shares if x.question_id == s.question_id and x.agent != ALL_AGENTS]
        assert sum(x.n for x in per_agent) == s.n
    agents = {c.agent or "unnamed agent" for c in result.cases}
    assert {s.agent for s in shares} == {ALL_AGENTS, *agents}


def test_the_report_has_a_per_question_view_and_failed_questions_with_their_text(example):
    result, texts = example
    page = render_html(result, texts)
    parsed = Page(page)
    rows = [a["data-question"] for a in parsed.tags("tr") if a.get("data-question")]
    assert len(rows) == len(question_shares(result.judgments, result.cases, texts))
    assert 'id="question-chart"' in page and "<svg" in page.split('id="question-chart"')[1][:400]
    failed = next(c for c in result.cases if any(j.answer == "No" for j in c.judgments))
    question = next(j.question_id for j in failed.judgments if j.answer == "No")
    assert f"<code>{question}</code> {texts.questions[question]}" in page
    assert f'<abbr title="{texts.questions[question]}">{question}</abbr>' in page


def test_the_agreement_page_has_the_kappa_chart_and_every_confusion_matrix(sources, tmp_path):
    report = agreement_report(sources, B=50, seed=1)
    page = write_agreement_html(tmp_path / "agreement.html", report).read_text()
    pairs = sum(len(level.pairwise) for level in report.levels)
    assert page.count('<table class="confusion">') == pairs
    assert 'id="kappa-chart"' in page and page.count("<svg") == 1
    assert (
        "Content-Security-Policy" in page and "http" not in page.split("<svg")[0].split("<body")[1]
    )
    verdict = report.level("verdict").pairwise[0]
    assert (
        f"{verdict.kappa.value:.2f} [{verdict.kappa.ci_low:.2f}, {verdict.kappa.ci_high:.2f}]"
        in page
    )


def test_judge_agreement_html_writes_the_page_and_never_over_an_input(sources, tmp_path, capsys):
    page = tmp_path / "agreement.html"
    assert main(["agreement", *map(str, sources), "--html", str(page), "--bootstrap", "50"]) == 0
    assert page.is_file() and "Confusion matrices" in page.read_text()
    capsys.readouterr()
    assert main(["agreement", *map(str, sources), "--html", str(sources[0])]) == 2
    assert "--html" in capsys.readouterr().err
