"""`judge check`: lint inputs without calling a judge."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import EXAMPLE, FIXTURES, corpus

from judge.cli import main


def check(capsys, *args: str) -> tuple[int, dict]:
    code = main(["check", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_clean_example_has_no_missing_or_orphans(capsys) -> None:
    code, findings = check(
        capsys,
        "--ground-truth",
        str(EXAMPLE / "ground_truth"),
        "--outputs",
        str(EXAMPLE / "outputs"),
    )
    assert code == 0
    assert findings["ground_truth"]["n_specs"] == 13
    assert (
        findings["missing"] == []
        and findings["orphans"] == []
        and findings["empty_diagnoses"] == []
    )


def test_reports_missing_orphans_empty_and_unanswerable(tmp_path: Path, capsys) -> None:
    gt, outputs = tmp_path / "gt", tmp_path / "outputs"
    shutil.copytree(EXAMPLE / "ground_truth", gt)
    (gt / "bare.yaml").write_text("id: bare\nground_truth: Something broke.\n")
    shutil.copytree(EXAMPLE / "outputs" / "incorrect_image", outputs / "incorrect_image")
    (outputs / "ghost" / "1").mkdir(parents=True)
    (outputs / "ghost" / "1" / "agent_output.json").write_text('{"diagnosis": "x"}')
    (outputs / "incorrect_image" / "9").mkdir()
    (outputs / "incorrect_image" / "9" / "agent_output.json").write_text('{"diagnosis": "  "}')
    code, findings = check(capsys, "--ground-truth", str(gt), "--outputs", str(outputs), "--strict")
    assert code == 1
    assert "bare" in findings["missing"] and "ghost/1" in findings["orphans"]
    assert findings["empty_diagnoses"] == ["incorrect_image/9"]
    assert any("D1-Q1" in reason for reason in findings["rules_unanswerable"]["bare"])


@pytest.mark.parametrize("where", ["fixture", pytest.param("corpus", marks=pytest.mark.corpus)])
def test_dirty_itbench_ground_truth_warns_with_file_and_field(capsys, where: str) -> None:
    gt = (
        FIXTURES / "formats" / "itbench" / "synthetic" / "ground_truths.json"
        if where == "fixture"
        else corpus("itbench", "ground_truth", "itbench-evaluations_data", "ground_truths.json")
    )
    code, findings = check(capsys, "--ground-truth", str(gt))
    assert code == 0
    assert any(
        "ground_truths.json" in w and "'*.*' is not a valid regex" in w
        for w in findings["warnings"]
    )
    assert any("is not a defined group" in w for w in findings["warnings"])


def test_unusable_input_exits_2(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: [unclosed\n")
    assert main(["check", "--ground-truth", str(bad)]) == 2
    assert "bad.yaml" in capsys.readouterr().err


# ------------------------------------------------------------------ every bad file (issue 27)


def test_every_bad_file_is_reported_and_the_rest_checked(tmp_path: Path, capsys) -> None:
    """Ten bad files of twenty, the first among them: all ten are named (it was the first
    only), the good specs and submissions are still checked, and the exit is 2."""
    gt, outputs = tmp_path / "gt", tmp_path / "outputs"
    shutil.copytree(EXAMPLE / "ground_truth", gt)
    shutil.copytree(EXAMPLE / "outputs", outputs)
    bad = []
    for i in range(5):
        (gt / f"0-broken-{i}.yaml").write_text("id: [unclosed\n")
        bad.append(str(gt / f"0-broken-{i}.yaml"))
    (gt / "no-truth.yaml").write_text("id: no-truth\n")
    (gt / "same-id.yaml").write_text("id: incorrect_image\nground_truth: again\n")
    bad += [str(gt / "no-truth.yaml"), str(gt / "same-id.yaml")]
    for trial in ("incorrect_image/1", "incorrect_image/2", "incorrect_image/3"):
        (outputs / trial / "agent_output.json").write_text('{"diagnosis": ')
        bad.append(str(outputs / trial / "agent_output.json"))
    code, findings = check(capsys, "--ground-truth", str(gt), "--outputs", str(outputs))
    assert code == 2
    assert sorted(e["file"] for e in findings["errors"]) == sorted(bad)
    assert findings["ground_truth"]["n_specs"] == 13 and findings["outputs"]["n_submissions"] == 29
    assert findings["missing"] == ["incorrect_image"]


def test_json_is_printed_when_nothing_can_be_loaded(tmp_path: Path, capsys) -> None:
    code, findings = check(capsys, "--ground-truth", str(tmp_path / "nowhere"))
    assert code == 2
    assert findings["errors"] == [
        {"file": str(tmp_path / "nowhere"), "field": "--ground-truth",
         "message": "no such file or directory"}
    ]  # fmt: skip
    assert findings["ground_truth"]["n_specs"] == 0 and findings["warnings"] == []


def test_json_is_printed_for_a_bad_rubric_and_unreadable_outputs(tmp_path: Path, capsys) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, findings = check(
        capsys, "--ground-truth", str(EXAMPLE / "ground_truth"), "--outputs", str(empty),
        "--rubric", "nope-v9",
    )  # fmt: skip
    assert code == 2 and len(findings["errors"]) == 2
    assert findings["ground_truth"]["n_specs"] == 13 and "missing" not in findings


@pytest.mark.slow
def test_the_rules_judge_is_not_run_for_specs_naming_their_origin(tmp_path: Path) -> None:
    """`judge check` asks the rules judge only about specs that name no fault origin (the one
    thing in a truth whose lack leaves its questions unscored); the answer must be the one
    the judge itself gives for every spec."""
    import yaml

    from ground_truth import IncidentSpec, Submission, load_specs
    from judge import JudgeTask, RulesJudge, load_rubric
    from judge.checklist.prompts import Prompt
    from judge.cli.check import _unanswerable

    sregym = yaml.safe_load((FIXTURES / "rules" / "sregym_root_causes_123.yaml").read_text())
    specs = load_specs(EXAMPLE / "ground_truth")
    for row in sregym:
        spec = IncidentSpec(id=row["problem_id"], ground_truth=row["root_cause_text"])
        prose = row["root_cause_text"].partition("||")[2] or "x"
        specs += [spec, IncidentSpec(id=f"{spec.id} (prose)", ground_truth=prose)]
    specs.append(IncidentSpec(id="nothing", ground_truth="x"))
    assert any(s.fault_origin for s in specs) and any(not s.fault_origin for s in specs)
    data = load_rubric("sregym-v3").model_dump()
    data["dimensions"][1]["questions"][0]["text"] = "Is the diagnosis polite?"
    rubric = type(load_rubric("sregym-v3")).model_validate(data)
    judge, everything = RulesJudge(), {}
    for spec in specs:
        probe = Submission(incident_id=spec.id, diagnosis="-")
        tasks = [JudgeTask(spec, probe, d, Prompt(messages=[], hash="")) for d in rubric.dimensions]
        reasons = [
            f"{a.question_id}: {a.unscored_reason}"
            for task in tasks
            for a in judge.answer(task).answers
            if a.answer is None
        ]
        if reasons:
            everything[spec.id] = reasons
    assert _unanswerable(specs, rubric) == everything
    assert len(everything["nothing"]) > 1 and everything["incorrect_image"] == [
        "D2-Q1: the rules judge has no rule for D2-Q1"
    ]
