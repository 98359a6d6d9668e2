"""`judge resolve`, and resolution checks next to the diagnosis score in `judge eval`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import EXAMPLE, FIXTURES, corpus, one_incident_args

from judge.cli import main

SREZERO = FIXTURES / "srezero"
ITBENCH = FIXTURES / "formats" / "itbench" / "synthetic"
TASKS = SREZERO / "task_configs_all_40.json"
RUN = SREZERO / "example_results_scripted_v0.5.json"


def test_resolve_writes_every_case_with_its_checks(tmp_path: Path) -> None:
    out = tmp_path / "resolution.json"
    assert (
        main(
            [
                "resolve",
                "--ground-truth",
                str(TASKS),
                "--outputs",
                str(RUN),
                "--result-file",
                str(out),
            ]
        )
        == 0
    )
    section = json.loads(out.read_text())
    assert len(section["cases"]) == 15
    recorded = json.loads(RUN.read_text())
    assert section["summary"]["success_rate"] == recorded["overall"]["success_rate"]
    assert section["summary"]["n_success"] == sum(
        bool(r["metrics"]["success"]) for r in recorded["records"]
    )
    assert all("evidence_coverage" in case["checks"] for case in section["cases"])
    assert section["side_by_side"] is None


def test_eval_puts_resolution_beside_the_diagnosis_score(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    assert (
        main(
            ["eval", "--ground-truth", str(TASKS), "--outputs", str(RUN), "--result-file", str(out)]
        )
        == 0
    )
    result = json.loads(out.read_text())
    resolution = result["resolution"]
    sbs = resolution["side_by_side"]
    passed = {(c["incident_id"], c["trial"]): c["passed"] for c in result["cases"]}
    success = {(c["incident_id"], c["trial"]): c["success"] for c in resolution["cases"]}
    table = sbs["table"]
    assert table["passed_resolved"] == sum(
        passed[k] is True and success[k] is True for k in success
    )
    assert table["failed_unresolved"] == sum(
        passed[k] is False and success[k] is False for k in success
    )
    n_passed = sum(v is True for k, v in passed.items() if success.get(k) is not None)
    assert sbs["p_resolved_given_passed"]["denominator"] == n_passed
    assert len(result["missing"]) == 40 - 15


def test_resolve_without_trajectories_is_bad_input(tmp_path: Path, capsys) -> None:
    code = main(
        [
            "resolve",
            "--ground-truth",
            str(EXAMPLE / "ground_truth"),
            "--outputs",
            str(EXAMPLE / "outputs"),
            "--result-file",
            str(tmp_path / "r.json"),
        ]
    )
    assert code == 2
    assert "no submission carries a trajectory" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_eval_without_trajectories_has_no_resolution_section(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    main(one_incident_args(out))
    assert json.loads(out.read_text())["resolution"] is None


@pytest.mark.parametrize("where", ["fixture", pytest.param("corpus", marks=pytest.mark.corpus)])
def test_eval_scores_structured_entities_beside_the_checklist(tmp_path: Path, where: str) -> None:
    """ITBench-Evaluations' layout and agent schema: the real files (no license, corpus only)
    and hand-written ones of the same shape."""
    if where == "fixture":
        gt, outputs = ITBENCH / "ground_truths.json", ITBENCH / "agent_outputs"
    else:
        gt = corpus("itbench", "ground_truth", "itbench-evaluations_data", "ground_truths.json")
        outputs = corpus("itbench", "agent_outputs", "itbench-evaluations_data")
    out = tmp_path / "results.json"
    code = main(
        ["eval", "--ground-truth", str(gt), "--outputs", str(outputs), "--result-file", str(out)]
    )
    assert code == 0
    result = json.loads(out.read_text())
    entities = result["entities"]
    assert entities["n"] == 4
    assert {(c["incident_id"], c["trial"]) for c in entities["cases"]} == {
        ("1", "1"),
        ("1", "2"),
        ("2", "1"),
        ("2", "2"),
    }
    assert all(0 <= c["f1"] <= 1 for c in entities["cases"])
    assert any("not a defined group" in w for w in result["warnings"])
