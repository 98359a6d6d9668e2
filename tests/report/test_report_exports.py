"""CSV, JSONL and JUnit exports: round trips against the result, JUnit's structure."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET

import pytest
from helpers.report import RATE_LIMIT, hostile_run

from judge import EvalResult, Judgment
from judge.report.exports import (
    NO_SUBMISSION,
    csv_columns,
    csv_text,
    junit_xml,
    write_csv,
    write_jsonl,
    write_junit,
)


@pytest.fixture(scope="module")
def hostile_result() -> EvalResult:
    return hostile_run()[0]


def _float(cell: str) -> float | None:
    return None if cell == "" else float(cell)


def _bool(cell: str) -> bool | None:
    return {"true": True, "false": False, "": None}[cell]


def test_csv_round_trips_every_case(example_result, tmp_path):
    path = write_csv(tmp_path / "cases.csv", example_result)
    rows = list(csv.DictReader(path.open(encoding="utf-8", newline="")))
    assert list(rows[0]) == csv_columns(example_result)
    assert len(rows) == len(example_result.cases)
    for row, case in zip(rows, example_result.cases, strict=True):
        assert (row["incident_id"], row["trial"], row["agent"]) == (
            case.incident_id,
            case.trial,
            case.agent,
        )
        assert _float(row["composite"]) == case.composite
        assert _bool(row["passed"]) == case.passed
        for dim in case.dimensions:
            assert _float(row[dim.dimension_id]) == dim.score
        failing = [
            j.question_id
            for j in example_result.judgments
            if (j.incident_id, j.trial) == (case.incident_id, case.trial) and j.answer == "No"
        ]
        assert row["failing_questions"].split() == failing


def test_csv_marks_incomplete_cases(hostile_result):
    rows = {r["trial"]: r for r in csv.DictReader(io.StringIO(csv_text(hostile_result)))}
    assert rows["flaky"]["status"] == "incomplete"
    assert rows["flaky"]["passed"] == "" and rows["flaky"]["composite"] == ""
    assert rows["flaky"]["D2"] == "" and rows["flaky"]["n_unscored"] == "3"
    assert rows["hostile"]["status"] in {"pass", "fail"}
    assert "resolution_success" not in rows["flaky"]


def test_csv_has_resolution_columns_when_the_result_has_resolution(example_result):
    with_resolution = example_result.model_copy(
        update={
            "resolution": {
                "cases": [
                    {
                        "incident_id": example_result.cases[0].incident_id,
                        "trial": example_result.cases[0].trial,
                        "success": True,
                        "evidence_coverage": 0.5,
                    }
                ]
            }
        }
    )
    rows = list(csv.DictReader(io.StringIO(csv_text(with_resolution))))
    assert (rows[0]["resolution_success"], rows[0]["evidence_coverage"]) == ("true", "0.5")
    assert (rows[1]["resolution_success"], rows[1]["evidence_coverage"]) == ("", "")


def test_jsonl_round_trips_every_judgment(example_result, hostile_result, tmp_path):
    for result in (example_result, hostile_result):
        path = write_jsonl(tmp_path / "j.jsonl", result)
        lines = path.read_text(encoding="utf-8").splitlines()
        assert [Judgment.model_validate_json(line) for line in lines] == result.judgments
        assert all(json.loads(line)["judge"] == "rules" for line in lines)


def _suite(text: str) -> ET.Element:
    suite = ET.fromstring(text.encode("utf-8"))
    assert suite.tag == "testsuite"
    for case in suite.iter("testcase"):
        assert set(case.attrib) >= {"classname", "name"}
        children = [c.tag for c in case]
        assert len(children) <= 1 and set(children) <= {"failure", "error", "skipped"}
    return suite


def test_junit_one_testcase_per_incident_and_trial(example_result, tmp_path):
    suite = _suite(write_junit(tmp_path / "junit.xml", example_result).read_text(encoding="utf-8"))
    cases = suite.findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        (c.incident_id, c.trial) for c in example_result.cases
    ]
    failed = [c for c in example_result.cases if c.passed is False]
    assert int(suite.get("tests")) == len(example_result.cases)
    assert int(suite.get("failures")) == len(failed) == len(suite.findall("testcase/failure"))
    assert suite.get("errors") == "0" and suite.get("skipped") == "0"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert float(props["pass_rate"]) == example_result.overall.pass_rate.value
    for element, case in zip(cases, example_result.cases, strict=True):
        failure = element.find("failure")
        assert (failure is not None) == (case.passed is False)
        if failure is None:
            continue
        no = [
            j.question_id
            for j in example_result.judgments
            if (j.incident_id, j.trial) == (case.incident_id, case.trial) and j.answer == "No"
        ]
        message = failure.get("message")
        assert message.startswith(f"composite {case.composite:.2f} < threshold 0.70")
        assert message.endswith("answered No: " + ", ".join(no))
        assert [line.split(":")[0].split()[1] for line in failure.text.splitlines()] == no


def test_junit_a_case_the_provider_failed_is_an_error_with_the_reason_never_skipped(hostile_result):
    """CI systems read `<skipped>` as fine: a case without a verdict because the provider
    failed is an `<error>`, typed by the failed calls' kinds."""
    suite = _suite(junit_xml(hostile_result))
    flaky = next(c for c in suite.iter("testcase") if c.get("name") == "flaky")
    assert flaky.find("skipped") is None
    error = flaky.find("error")
    assert error is not None and error.get("type") == "rate_limit"
    assert "3 question(s) unscored" in error.get("message") and RATE_LIMIT in error.get("message")
    assert RATE_LIMIT in error.text
    assert (suite.get("errors"), suite.get("skipped")) == ("1", "0")


def _stopped(result: EvalResult, kind: str) -> EvalResult:
    """`result` with its first case's judgments not judged because the run stopped (`kind`)."""
    first = result.cases[0]
    reason = f"not judged: stopped ({kind})"
    judgments = [
        j.model_copy(update={"answer": None, "unscored_reason": reason})
        if (j.incident_id, j.trial) == (first.incident_id, first.trial)
        else j
        for j in result.judgments
    ]
    cases = [first.model_copy(update={"complete": False, "passed": None}), *result.cases[1:]]
    stop = {"kind": kind, "message": f"stopped ({kind})"}
    return EvalResult.model_validate(
        {**result.model_dump(), "judgments": judgments, "cases": cases, "stopped": stop}
    )


@pytest.mark.parametrize(
    ("kind", "tag"),
    [
        ("interrupted", "skipped"),
        ("max_cost", "skipped"),
        ("provider", "error"),
        ("max_errors", "error"),
    ],
)
def test_junit_skips_only_what_the_user_stopped_the_run_before(example_result, kind, tag):
    """A signal or the user's --max-cost left a case out on purpose: skipped. A provider that
    cannot be reached or --max-errors (provider failures) stopped it: an error."""
    suite = _suite(junit_xml(_stopped(example_result, kind)))
    first = suite.findall("testcase")[0]
    assert [c.tag for c in first] == [tag]
    assert f"not judged: stopped ({kind})" in first.find(tag).text
    counts = {"skipped": suite.get("skipped"), "error": suite.get("errors")}
    assert counts[tag] == "1"


def test_junit_lists_missing_incidents_and_survives_control_characters(example_result):
    broken = example_result.model_copy(
        update={
            "missing": ["never_submitted"],
            "cases": [
                example_result.cases[1].model_copy(update={"incident_id": "bad\x00id\x1b[31m"}),
                *example_result.cases[2:],
            ],
        }
    )
    suite = _suite(junit_xml(broken))
    last = suite.findall("testcase")[-1]
    assert (last.get("classname"), last.get("name")) == ("never_submitted", NO_SUBMISSION)
    assert last.find("skipped") is not None
    assert suite.findall("testcase")[0].get("classname") == "bad\ufffdid\ufffd[31m"
    assert int(suite.get("tests")) == len(example_result.cases) - 1 + 1


def test_hostile_evidence_is_escaped_in_junit(example_result):
    evil = '<script>alert(1)</script> & ]]> "quoted" </failure>'
    target = next(j for j in example_result.judgments if j.answer == "No")
    judgments = [
        j.model_copy(update={"evidence": evil}) if j is target else j
        for j in example_result.judgments
    ]
    text = junit_xml(example_result.model_copy(update={"judgments": judgments}))
    assert "<script>" not in text
    suite = _suite(text)
    case = next(
        c
        for c in suite.iter("testcase")
        if (c.get("classname"), c.get("name")) == (target.incident_id, target.trial)
    )
    assert (
        f"{target.question_id}: No ({target.confidence}) — evidence: {evil}"
        in case.find("failure").text
    )
