"""`judge estimate` and `judge report --labels`: a result's means corrected with labels (PPI++),
on the bundled example with the labels the project ships for it, and the checks of the inputs.

The statistics themselves (against ppi_python, coverage by simulation) are test_ppi.py's; here:
that labels become values through the rubric as the judge's answers do, that the numbers are
`agreement.ppi`'s on those values, and that bad inputs exit 2 saying what is wrong.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from helpers import EXAMPLE

import judge
from agreement import ppi_mean, ppi_mean_difference
from ground_truth import InputError
from judge import estimate_with_labels, load_result
from judge.cli import main
from judge.labelling.labelset import CaseLabels, LabelSet, read_label_set

LABELS = EXAMPLE / "labels.csv"
QUESTIONS = [f"D{d}-Q{q}" for d in (1, 2, 3) for q in (1, 2, 3)]


@pytest.fixture(scope="module")
def example_result_file(tmp_path_factory) -> Path:
    """The bundled example judged by the rules judge, as README's first command does."""
    path = tmp_path_factory.mktemp("estimate") / "results.json"
    args = ["eval", "--ground-truth", str(EXAMPLE / "ground_truth")]
    assert main([*args, "--outputs", str(EXAMPLE / "outputs"), "--result-file", str(path)]) == 0
    return path


def write_labels(path: Path, rows: list[dict[str, str]]) -> Path:
    columns = sorted({k for row in rows for k in row})
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return path


def case_rows(incident: str, trial: str, answers: str, **extra: str) -> list[dict[str, str]]:
    """Nine rows for one case; `answers` is nine of Y/N/_ (_ left empty)."""
    word = {"Y": "Yes", "N": "No", "_": ""}
    return [
        {"incident_id": incident, "trial": trial, "question_id": q, "answer": word[a], **extra}
        for q, a in zip(QUESTIONS, answers, strict=True)
    ]


# --- the bundled example ---------------------------------------------------------------------


def test_the_example_labels_are_the_projects_on_a_seeded_random_half(example_result_file):
    labels = read_label_set(LABELS)
    assert labels.labeller == "project" and not labels.drawn
    assert all(len(c.answers) == 9 and None not in c.answers.values() for c in labels.cases)
    keys = [(c.incident_id, c.trial) for c in load_result(example_result_file).cases]
    drawn = sorted(np.random.default_rng(23).choice(len(keys), 16, replace=False))
    assert sorted(c.key for c in labels.cases) == sorted(keys[i] for i in drawn)
    notes = [row["notes"] for row in csv.DictReader(LABELS.open(encoding="utf-8"))]
    assert all(notes)  # every label says why, in the guide's terms


def test_estimate_on_the_example_from_the_cli_and_python(example_result_file, capsys):
    assert (
        main(["estimate", "--result", str(example_result_file), "--labels", str(LABELS), "--json"])
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["n_cases"] == 32 and out["n_labelled"] == 16 and out["labeller"] == "project"
    assert out["design"] == "simple random sample" and out["confidence"] == 0.95
    pass_rate = out["pass_rate"]
    for method in ("judge_only", "labels_only", "ppi"):
        est = pass_rate[method]
        assert est["ci_low"] < est["value"] < est["ci_high"], method
    assert pass_rate["ppi"]["ci_high"] - pass_rate["ppi"]["ci_low"] < (
        pass_rate["labels_only"]["ci_high"] - pass_rate["labels_only"]["ci_low"]
    )  # the judge was worth something: a narrower interval than from the labels alone
    assert pass_rate["effective_labels"] > 16
    assert set(out["dimensions"]) == {"D1", "D2", "D3"}
    assert len(out["agents"]) == 6 and len(out["differences"]) == 15  # every pair
    api = judge.estimate_with_labels(example_result_file, LABELS)
    assert isinstance(api, judge.LabelledEstimates)
    assert api.model_dump(mode="json") == {**out, "result": str(example_result_file)}

    assert main(["estimate", "--result", str(example_result_file), "--labels", str(LABELS)]) == 0
    table = capsys.readouterr().out
    assert "pass rate" in table and "PPI++" in table and "labels worth" in table
    assert "cannot tell them apart" in table and "D3 mean" in table


def test_the_numbers_are_ppi_on_the_labels_through_the_rubric(example_result_file):
    loaded = load_result(example_result_file)
    labels = read_label_set(LABELS)
    by_key = {c.key: c for c in labels.cases}
    weights = loaded.config["rubric"]["weights"]
    judge_pass, label_pass, incidents, agents = [], [], [], []
    for case in loaded.cases:
        judge_pass.append(float(case.passed))
        incidents.append(case.incident_id)
        agents.append(case.agent)
        label = by_key.get((case.incident_id, case.trial))
        if label is None:
            label_pass.append(np.nan)
            continue
        composite = sum(  # as benchmarks/validity.py derives a labeller's composite
            weights[d] * [label.answers[f"{d}-Q{q}"] for q in (1, 2, 3)].count("Yes") / 3
            for d in ("D1", "D2", "D3")
        )
        label_pass.append(float(composite >= 0.7 - 1e-9))
    got = estimate_with_labels(loaded, labels)
    assert got.pass_rate == ppi_mean(judge_pass, label_pass, incidents)
    a, b = got.differences[9].difference.a, got.differences[9].difference.b
    ia = [i for i, x in enumerate(agents) if x == a]
    ib = [i for i, x in enumerate(agents) if x == b]
    expected = ppi_mean_difference(
        [judge_pass[i] for i in ia],
        [label_pass[i] for i in ia],
        [judge_pass[i] for i in ib],
        [label_pass[i] for i in ib],
        clusters_a=[incidents[i] for i in ia],
        clusters_b=[incidents[i] for i in ib],
        names=(a, b),
    )
    assert got.differences[9].difference == expected
    assert expected.ppi.value is not None  # the example's one pair that both sides labelled


def test_report_with_labels_adds_the_section_to_the_terminal_and_html(
    example_result_file, tmp_path, capsys
):
    html = tmp_path / "report.html"
    args = ["report", str(example_result_file), "--labels", str(LABELS), "-o", str(html)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "Corrected means" in printed and "Is agent A better than agent B?" in printed
    page = html.read_text(encoding="utf-8")
    assert '<section id="estimates">' in page and 'href="#estimates"' in page
    assert "Pass rate by agent" in page and "cannot tell them apart" in page
    assert main(["report", str(example_result_file), "-o", str(tmp_path / "plain.html")]) == 0
    assert 'id="estimates"' not in (tmp_path / "plain.html").read_text(encoding="utf-8")


# --- labels through the rubric ---------------------------------------------------------------


def test_a_verdict_label_is_the_pass_and_partial_labels_count_only_where_complete(
    example_result_file,
):
    loaded = load_result(example_result_file)
    first, second, third = loaded.cases[:3]
    labels = LabelSet(
        labeller="x",
        rubric_hash=None,
        cases=[
            CaseLabels(  # nine Yes: composite 1.0, but the verdict label says fail
                incident_id=first.incident_id,
                trial=first.trial,
                answers=dict.fromkeys(QUESTIONS, "Yes"),
                verdict="No",
            ),
            CaseLabels(  # D3 incomplete: a D1 and D2 value, no composite, no pass
                incident_id=second.incident_id,
                trial=second.trial,
                answers={q: "Yes" for q in QUESTIONS[:7]},
            ),
            CaseLabels(
                incident_id=third.incident_id,
                trial=third.trial,
                answers={q: ("No" if q == "D2-Q3" else "Yes") for q in QUESTIONS},
            ),
        ],
    )
    got = estimate_with_labels(loaded, labels)
    assert got.n_labelled == 2  # the first (by its verdict) and the third
    assert got.pass_rate.labels_only.value == 0.5  # first fails by its verdict; third 0.89 passes
    assert got.mean_composite.labels_only.value == pytest.approx((1.0 + 0.33 + 0.22 + 0.34) / 2)
    assert got.dimensions["D1"].labels_only.n_labels == 3
    assert got.dimensions["D3"].labels_only.n_labels == 2
    assert any("Unsure or empty" in n for n in got.notes)


# --- bad input: exit 2, saying what is wrong --------------------------------------------------


def test_bad_labels_exit_2_saying_what_is_wrong(example_result_file, tmp_path, capsys):
    loaded = load_result(example_result_file)
    one, two = loaded.cases[0], loaded.cases[5]
    good = case_rows(one.incident_id, one.trial, "YYYYYYYYY") + case_rows(
        two.incident_id, two.trial, "NNNNNNNNY"
    )

    def run(rows: list[dict[str, str]], *flags: str) -> str:
        path = write_labels(tmp_path / "l.csv", rows)
        code = main(
            ["estimate", "--result", str(example_result_file), "--labels", str(path), *flags]
        )
        assert code == 2
        return capsys.readouterr().err

    err = run(good + case_rows("no_such_incident", "1", "YYYYYYYYY"))
    assert "labels for 1 cases the result does not hold: no_such_incident/1" in err
    err = run([{**row, "rubric_hash": "0123456789abcdef"} for row in good])
    assert "made for rubric 0123456789abcdef" in err and "13f8129d6b750348" in err
    err = run(good[:9])
    assert "too few labels: 1 cases" in err and "give 1 more labelled case" in err
    same_incident = [r for r in loaded.cases if r.incident_id == one.incident_id][1]
    err = run(good[:9] + case_rows(same_incident.incident_id, same_incident.trial, "Y" * 9))
    assert "in 1 incidents" in err and "labels in 1 more incident" in err
    err = run([*good, {**good[0], "annotator": "bob"}])
    assert "labels by 2 annotators" in err and "--annotator" in err
    err = run([*good, {**good[0], "question_id": "D9-Q9"}])
    assert "questions the result's rubric does not ask: D9-Q9" in err
    err = run([{**row, "probability": "1.5"} for row in good])
    assert "'1.5' is not a probability" in err and "row 2" in err
    with pytest.raises(SystemExit) as stopped:
        main(
            [
                "estimate",
                "--result",
                str(example_result_file),
                "--labels",
                str(tmp_path / "l.csv"),
                "--alpha",
                "5",
            ]
        )
    assert stopped.value.code == 2
    assert (
        "--alpha: expected a number between 0 and 1 (both excluded), got '5'"
        in capsys.readouterr().err
    )
    err = run([{**row, "answer": "maybe"} for row in good])
    assert "'maybe' is not a Yes/No answer" in err


def test_the_annotator_flag_chooses_among_several(example_result_file, tmp_path):
    loaded = load_result(example_result_file)
    rows = []
    for case in loaded.cases[:6]:
        rows += case_rows(case.incident_id, case.trial, "YYYYYYYYY", annotator="ann")
        rows += case_rows(case.incident_id, case.trial, "NNNNNNNNN", annotator="bob")
    path = write_labels(tmp_path / "two.csv", rows)
    with pytest.raises(InputError, match="2 annotators"):
        estimate_with_labels(example_result_file, path)
    assert (
        estimate_with_labels(example_result_file, path, annotator="ann").pass_rate.labels_only.value
        == 1
    )
    assert (
        estimate_with_labels(example_result_file, path, annotator="bob").pass_rate.labels_only.value
        == 0
    )
    with pytest.raises(InputError, match="no labels by 'eve'"):
        estimate_with_labels(example_result_file, path, annotator="eve")
