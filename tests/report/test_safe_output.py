"""Names from input files are printed safely (terminal, HTML, CSV, label sheet, messages), and
cases are keyed unambiguously however their ids and trial names use `/`."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from helpers import quiet
from rich.console import Console

from agreement import read_labels, write_label_template
from ground_truth import IncidentSpec, Submission, load_submissions
from judge import evaluate
from judge.checklist.texts import texts_from
from judge.report import render_html
from judge.report.display import print_result
from judge.report.exports import csv_text
from judge.report.view import build_view

GT = "[fault_spec] component=deployment/checkout; namespace=shop || A wrong image tag."
GOOD = "The checkout deployment in namespace shop runs a wrong image tag; roll back the image."
EVIL_ID = "evil\x1b[2J\x1b]0;owned\x07\x00[bold red]x[/]\r"
FORMULA_ID = '=HYPERLINK("http://x","y")'
RAW_CONTROLS = ("\x1b", "\x00", "\x07", "\r")


def run(specs: list[IncidentSpec], subs: list[Submission]):
    result = evaluate(specs, subs)
    return result, texts_from(specs, subs, result.config["rubric"])


@pytest.fixture(scope="module")
def hostile_names_result_and_texts():
    specs = [IncidentSpec(id=i, ground_truth=GT) for i in (EVIL_ID, FORMULA_ID, "@calc")]
    subs = [
        Submission(incident_id=EVIL_ID, trial="1\x1b[31m", diagnosis=GOOD, agent="-2+3"),
        Submission(incident_id=FORMULA_ID, trial="+1", diagnosis=GOOD, agent="a\x00b"),
        Submission(incident_id="@calc", trial="1", diagnosis=GOOD, agent="\tcmd"),
    ]
    return run(specs, subs)


def test_terminal_output_escapes_control_characters_and_markup(
    hostile_names_result_and_texts,
) -> None:
    result, _ = hostile_names_result_and_texts
    console = Console(file=io.StringIO(), width=200, force_terminal=False, color_system=None)
    print_result(result, console)
    out = console.file.getvalue()
    assert not any(c in out for c in RAW_CONTROLS)
    assert "\\x1b[2J" in out and "[bold red]x[/]" in out  # shown, not interpreted
    assert "a\\x00b" in out


def test_html_report_escapes_control_characters(hostile_names_result_and_texts) -> None:
    result, texts = hostile_names_result_and_texts
    page = render_html(result, texts)
    body = page.split("<script", 1)[0]
    assert not any(c in body for c in RAW_CONTROLS)
    assert "evil\\x1b[2J" in page and "a\\x00b" in page


def test_csv_export_neutralises_formulas_and_controls(hostile_names_result_and_texts) -> None:
    result, _ = hostile_names_result_and_texts
    text = csv_text(result)
    assert not any(c in text for c in RAW_CONTROLS)
    rows = list(csv.DictReader(io.StringIO(text)))
    cells = {(r["incident_id"], r["trial"], r["agent"]) for r in rows}
    assert ("'" + FORMULA_ID, "'+1", "a\\x00b") in cells
    assert ("'@calc", "1", "\\x09cmd") in cells  # a tab is escaped, hence inert
    assert any(r["agent"] == "'-2+3" and r["incident_id"].startswith("evil\\x1b") for r in rows)
    for row in rows:
        assert not row["incident_id"].startswith(("=", "+", "-", "@"))


def test_label_template_neutralises_formulas_and_reads_back_the_same_ids(tmp_path: Path) -> None:
    result, _ = run(
        [IncidentSpec(id=FORMULA_ID, ground_truth=GT)],
        [Submission(incident_id=FORMULA_ID, trial="-1", diagnosis="@SUM(A1)")],
    )
    sheet = tmp_path / "labels.csv"
    write_label_template(
        result.model_dump(mode="json"), sheet, diagnoses={(FORMULA_ID, "-1"): "@SUM(A1)"}
    )
    rows = list(csv.DictReader(io.StringIO(sheet.read_text(encoding="utf-8-sig"))))
    assert rows and all(r["incident_id"] == "'" + FORMULA_ID and r["trial"] == "'-1" for r in rows)
    assert all(r["diagnosis"] == "'@SUM(A1)" for r in rows if r.get("diagnosis"))
    for row in rows:
        row["answer"] = "Yes"
    with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    table = read_labels(sheet, annotator="pat")
    keys = {key for level in ("question", "verdict") for key in table["pat"].labels[level]}
    assert {(k.incident_id, k.trial) for k in keys} == {(FORMULA_ID, "-1")}


def test_warning_messages_escape_control_characters(tmp_path: Path) -> None:
    file = tmp_path / "a" / "1" / "agent_output.json"
    file.parent.mkdir(parents=True)
    file.write_text(json.dumps({"diagnosis": "x", "incident_id": "b\x1b[2J"}))
    _, found = quiet(load_submissions, tmp_path)
    assert found and "\x1b" not in str(found[0]) and "b\\x1b[2J" in str(found[0])


# ------------------------------------------------------------------ unambiguous case keys


def test_cases_whose_joined_names_look_alike_do_not_collide() -> None:
    specs = [IncidentSpec(id="a", ground_truth=GT), IncidentSpec(id="a/b", ground_truth=GT)]
    subs = [
        Submission(incident_id="a", trial="b/1", diagnosis=GOOD),
        Submission(incident_id="a/b", trial="1", diagnosis="asdf qwerty lorem ipsum."),
    ]
    result, texts = run(specs, subs)
    view = build_view(result, texts)
    cases = {(c.incident_id, c.trial): c for i in view.incidents for c in i.cases}
    assert set(cases) == {("a", "b/1"), ("a/b", "1")}
    assert "roll back" in str(cases[("a", "b/1")].diagnosis)
    assert "lorem" in str(cases[("a/b", "1")].diagnosis)
    own = {(j.incident_id, j.trial, j.question_id) for j in result.judgments}
    for (incident, trial), case in cases.items():
        assert {q.question_id for q in case.questions} == {
            q for i, t, q in own if (i, t) == (incident, trial)
        }
    rows = {
        (r["incident_id"], r["trial"]): r for r in csv.DictReader(io.StringIO(csv_text(result)))
    }
    by_case = {
        key: " ".join(
            j.question_id
            for j in result.judgments
            if (j.incident_id, j.trial) == key and j.answer == "No"
        )
        for key in rows
    }
    assert {key: row["failing_questions"] for key, row in rows.items()} == by_case


def test_judge_check_prints_names_safely(tmp_path: Path, capsys) -> None:
    from judge.cli import main

    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps([{"id": "a", "ground_truth": GT}]))
    trial = tmp_path / "out" / "x[red]y[bold]\x1b[2J" / "1"
    trial.mkdir(parents=True)
    (trial / "agent_output.json").write_text('{"diagnosis": "d"}')
    assert main(["check", "--ground-truth", str(gt), "--outputs", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "x[red]y[bold]\\x1b[2J" in out
