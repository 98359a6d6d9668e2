"""The agreement report, Table 2 rows, rendering, and calibration against people."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest
from rich.console import Console
from sklearn.metrics import cohen_kappa_score

from agreement import (
    AgreementReport,
    CalibrationReport,
    ItemKey,
    RaterLabels,
    RatingTable,
    agreement_report,
    calibrate,
    pairwise,
    read_ratings,
    read_result,
    render_calibration,
    render_report,
    render_table,
    table2_markdown,
    table2_rows,
)
from agreement.render import table2
from agreement.synthetic import result_from_answers

QUESTIONS = ["D1-Q1", "D1-Q2", "D1-Q3", "D2-Q1", "D2-Q2", "D2-Q3"]
B = 60


def truth(n: int = 24, seed: int = 0) -> dict[tuple[str, str, str], str]:
    rng = random.Random(seed)
    return {
        (f"inc-{i:02d}", "1", q): rng.choice(["Yes", "No"]) for i in range(n) for q in QUESTIONS
    }


def noisy(answers: dict, flip: float, seed: int, missing: float = 0.0) -> dict:
    rng = random.Random(seed)
    out = {}
    for key, value in answers.items():
        if rng.random() < missing:
            out[key] = None
        elif rng.random() < flip:
            out[key] = "No" if value == "Yes" else "Yes"
        else:
            out[key] = value
    return out


def label_csv(path: Path, answers: dict, annotator: str, verdicts: dict | None = None) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["incident_id", "trial", "question_id", "answer", "annotator"])
        for (incident, trial, question), answer in answers.items():
            writer.writerow([incident, trial, question, answer or "", annotator])
        for (incident, trial), answer in (verdicts or {}).items():
            writer.writerow([incident, trial, "verdict", answer, annotator])
    return path


def verdicts_of(answers: dict, threshold: float = 0.7) -> dict:
    result = result_from_answers(answers, threshold=threshold)
    return {(c["incident_id"], c["trial"]): "Yes" if c["passed"] else "No" for c in result["cases"]}


@pytest.fixture
def mixed(tmp_path):
    base = truth()
    judge_a = result_from_answers(noisy(base, 0.1, 1, missing=0.05), model="judge-a")
    judge_b = result_from_answers(noisy(base, 0.25, 2), model="judge-b")
    alice = noisy(base, 0.05, 3)
    bob = noisy(base, 0.08, 4)
    paths = [
        label_csv(tmp_path / "alice.csv", alice, "alice", verdicts_of(alice)),
        label_csv(tmp_path / "bob.csv", bob, "bob", verdicts_of(bob)),
    ]
    return judge_a, judge_b, paths


def test_report_structure(mixed):
    judge_a, judge_b, paths = mixed
    report = agreement_report([judge_a, judge_b, *paths], B=B, seed=1)
    assert [r.name for r in report.raters] == ["judge-a", "judge-b", "alice", "bob"]
    assert [level.level for level in report.levels] == ["question", "dimension", "verdict"]
    for level in report.levels:
        assert len(level.pairwise) == 6
        assert level.multi_rater is not None and len(level.multi_rater.raters) == 4
        for pair in level.pairwise:
            kinds = {pair.rater_a[:5], pair.rater_b[:5]}
            if kinds == {"judge", "alice"} or kinds == {"judge", "bob"}:
                assert pair.rater_a.startswith("judge")  # the person is the reference
                assert pair.vs_reference is not None and pair.vs_reference.reference == pair.rater_b
            else:
                assert pair.vs_reference is None
    question = report.level("question")
    units = [(b.kind, b.unit) for b in question.breakdown]
    assert [u for k, u in units if k == "question"] == QUESTIONS
    assert [u for k, u in units if k == "dimension-pooled"] == ["D1", "D2"]
    pooled = next(b for b in question.breakdown if b.kind == "dimension-pooled" and b.unit == "D1")
    per_q = [b for b in question.breakdown if b.kind == "question" and b.unit.startswith("D1")]
    pair = ("judge-a", "alice")
    assert pooled.pairwise[1].n == sum(
        next(p for p in b.pairwise if (p.rater_a, p.rater_b) == pair).n for b in per_q
    )
    assert [b.unit for b in report.level("dimension").breakdown] == ["D1", "D2"]
    assert report.level("verdict").breakdown == []
    assert [g.level for g in report.human_ceiling] == ["question", "dimension", "verdict"]
    assert report.human_ceiling[0].raters == ["alice", "bob"]
    assert report.self_consistency == []


def test_pairwise_numbers_match_sklearn_on_aligned_items(mixed):
    judge_a, _, paths = mixed
    table = read_ratings([judge_a, paths[0]])
    [pair] = pairwise(table, "question", B=B)
    la, lb = table.labels("judge-a", "question"), table.labels("alice", "question")
    keys = sorted(k for k in la if la[k] is not None and lb.get(k) is not None)
    assert pair.n == len(keys) < len(la)  # the judge's unscored answers are dropped pairwise
    expected = cohen_kappa_score([la[k] for k in keys], [lb[k] for k in keys], labels=["No", "Yes"])
    assert pair.kappa.value == pytest.approx(expected)
    assert pair.kappa.ci_low < pair.kappa.value < pair.kappa.ci_high
    assert pair.n_incidents == 24


def test_report_json_round_trips_without_nan(mixed, tmp_path):
    judge_a, judge_b, paths = mixed
    only_yes = result_from_answers({k: "Yes" for k in truth(3)}, model="yes-man")
    report = agreement_report([judge_a, judge_b, only_yes, *paths], B=B, breakdown=False)
    text = report.model_dump_json()
    data = json.loads(text)
    assert data["schema_version"] == "1" and data["kind"] == "agreement"
    assert "NaN" not in text and "Infinity" not in text
    assert AgreementReport.model_validate_json(text) == report
    yes_pairs = [p for p in report.level("verdict").pairwise if "yes-man" in (p.rater_a, p.rater_b)]
    assert all(p.n == 3 for p in yes_pairs)


def test_self_consistency_from_repeated_runs_and_explicit_groups():
    base = truth(12)
    runs = [result_from_answers(noisy(base, 0.1, seed), model="m") for seed in (1, 2, 3)]
    report = agreement_report(runs, B=B, levels=["question", "verdict"])
    assert report.self_consistency == []  # three results sharing a judge name are not repeats
    table = RatingTable()
    for k, run in enumerate(runs, start=1):
        table.extend(read_result(run, rater=f"m#{k}"))
    report = agreement_report(table, B=B, levels=["question", "verdict"])
    assert [g.name for g in report.self_consistency] == ["m", "m"]
    group = report.self_consistency[0]
    assert group.raters == ["m#1", "m#2", "m#3"] and len(group.pairwise) == 3
    kappas = [p.kappa.value for p in group.pairwise]
    assert group.mean_kappa == pytest.approx(sum(kappas) / 3)
    assert group.multi_rater.krippendorff_alpha.value is not None
    named = [result_from_answers(noisy(base, 0.1, s), model=f"run{s}") for s in (1, 2)]
    explicit = agreement_report(named, B=B, levels=["question"], repeats=[["run1", "run2"]])
    assert explicit.self_consistency[0].raters == ["run1", "run2"]
    with pytest.raises(KeyError, match="nope"):
        agreement_report(named, B=B, levels=["question"], repeats=[["run1", "nope"]])


def test_no_overlap_and_single_class_are_reported_not_crashing():
    a, b = RaterLabels("a", "judge"), RaterLabels("b", "judge")
    a.labels["verdict"][ItemKey("x", "1", "verdict")] = "Yes"
    b.labels["verdict"][ItemKey("y", "1", "verdict")] = "Yes"
    report = agreement_report(RatingTable([a, b]), B=B, levels=["verdict"])
    [pair] = report.level("verdict").pairwise
    assert pair.n == 0 and pair.kappa.value is None and "no items" in pair.kappa.undefined
    assert pair.yes_rate_a is None
    console = Console(record=True, width=200)
    console.print(render_table(report))
    text = console.export_text()
    assert "undefined[1]" in text and "[1] no items answered by both raters" in text


def test_table2_rows_and_markdown(mixed):
    judge_a, judge_b, paths = mixed
    report = agreement_report([judge_a, judge_b, paths[0]], B=B)
    rows = table2_rows(report)
    assert [(r.judge_a, r.judge_b) for r in rows] == [
        ("judge-a", "judge-b"),
        ("judge-a", "alice"),
        ("judge-b", "alice"),
    ]
    cells = rows[1].cells()
    assert cells[:2] == ["judge-a", "alice"]
    assert cells[3].count("[") == 1 and cells[3].endswith("]")
    markdown = table2_markdown(report)
    assert markdown.splitlines()[0] == "| Judge A | Judge B | Agreement | Cohen's κ [95% CI] |"
    assert len(markdown.splitlines()) == 5
    console = Console(record=True, width=200)
    console.print(table2(report))
    console.print(render_report(report, breakdown=True))
    text = console.export_text()
    assert "Judge A" in text and "Krippendorff" in text and "dimension-pooled D1" in text


def test_calibrate_sweep_finds_the_people_threshold(tmp_path):
    """Composite = share of Yes over 10 questions; people pass a case iff 6+ are Yes."""
    rng = random.Random(5)
    questions = [f"D1-Q{i}" for i in range(10)]
    answers, people = {}, {}
    for i in range(30):
        k = rng.randint(2, 9)
        for j, q in enumerate(questions):
            answers[(f"inc-{i}", "1", q)] = "Yes" if j < k else "No"
        people[(f"inc-{i}", "1")] = "Yes" if k >= 6 else "No"
    judge = result_from_answers(answers, model="j", threshold=0.9)
    labels = label_csv(tmp_path / "p.csv", answers, "pat", people)
    report = calibrate([judge], labels, thresholds=[0.3, 0.5, 0.6, 0.7, 0.9], B=B)
    assert isinstance(report, CalibrationReport)
    assert report.people == ["pat"] and report.reference == "pat"
    [cal] = report.judges
    assert [p.threshold for p in cal.sweep] == [0.3, 0.5, 0.6, 0.7, 0.9]
    at = {p.threshold: p for p in cal.sweep}
    assert at[0.6].kappa.value == pytest.approx(1.0)
    assert at[0.5].kappa.value < 1 and at[0.7].kappa.value < 1
    assert cal.best_threshold == 0.6
    assert at[0.3].pass_rate > at[0.9].pass_rate
    assert all(p.n == 30 for p in cal.sweep)
    question = next(p for p in cal.vs_people if p.level == "question")
    assert question.kappa.value == pytest.approx(1.0)  # same question answers
    assert {b.kind for b in cal.breakdown} == {"question", "dimension", "dimension-pooled"}
    assert json.loads(report.model_dump_json())["kind"] == "calibration"
    console = Console(record=True, width=200)
    console.print(render_calibration(report))
    assert "best 0.60" in console.export_text()


def test_calibrate_with_two_annotators_uses_the_majority(mixed):
    judge_a, judge_b, paths = mixed
    report = calibrate([judge_a, judge_b], paths, thresholds=[0.5, 0.7], B=B)
    assert report.people == ["alice", "bob"]
    assert report.reference == "people (majority)"
    refs = {p.rater_b for p in report.judges[0].vs_people}
    assert refs == {"alice", "bob", "people (majority)"}
    assert report.human_ceiling and report.human_ceiling[0].raters == ["alice", "bob"]


def test_calibrate_needs_people(mixed):
    judge_a, judge_b, _ = mixed
    with pytest.raises(ValueError, match="human label"):
        calibrate([judge_a], [judge_b], B=B)


def test_unknown_level_is_rejected(mixed):
    with pytest.raises(ValueError, match="unknown level"):
        agreement_report([mixed[0]], B=B, levels=["verdicts"])
