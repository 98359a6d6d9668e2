"""`judge check`: lint inputs without calling a judge."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import FIXTURES, corpus

from judge.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sregym-mini"


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
