"""The rules judge in the CLI: `judge rubric validate` warns about rule binding, `judge check`
lists components the rules cannot normalise."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from helpers import EXAMPLE, REPO, eval_args

from judge.cli import main

RUBRIC = REPO / "rubrics" / "sregym-v3.yaml"


def _rubric_with(tmp_path: Path, **changes: str) -> Path:
    data = yaml.safe_load(RUBRIC.read_text(encoding="utf-8"))
    question = data["dimensions"][1]["questions"][0]
    question.update(changes)
    path = tmp_path / "rubric.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_validate_is_silent_for_the_shipped_rubric(capsys) -> None:
    assert main(["rubric", "validate", str(RUBRIC)]) == 0
    captured = capsys.readouterr()
    assert "valid rubric" in captured.out and "warning" not in captured.err


def test_validate_warns_when_a_rule_key_does_not_match_the_question_text(tmp_path, capsys) -> None:
    path = _rubric_with(tmp_path, rule="symptoms_matched")
    assert main(["rubric", "validate", str(path)]) == 0
    err = capsys.readouterr().err
    assert "D2-Q1" in err and "symptoms_matched" in err and "mechanism_matched" in err


def test_validate_warns_when_no_rule_fits_a_question(tmp_path, capsys) -> None:
    path = _rubric_with(tmp_path, text="Is the diagnosis written in a friendly tone?")
    assert main(["rubric", "validate", str(path)]) == 0
    err = capsys.readouterr().err
    assert "D2-Q1" in err and "matches no rule" in err and "unscored" in err


def test_eval_refuses_a_rubric_the_rules_judge_cannot_answer(tmp_path, capsys) -> None:
    """Every case would leave the question unscored and the run would exit 0 (issue 27): the
    run is refused before it starts, naming the question; an LLM judge may take the rubric."""
    path = _rubric_with(tmp_path, text="Is the diagnosis written in a friendly tone?")
    result = tmp_path / "r.json"
    args = eval_args(EXAMPLE / "ground_truth", EXAMPLE / "outputs", result, "--rubric", str(path))
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{path}: --rubric: the rules judge has no rule for 1 of the 9 questions" in err
    assert "D2-Q1 ('Is the diagnosis written in a friendly tone?')" in err
    assert not result.exists()
    assert main([*args, "--dimensions", "D1,D3", "--no-progress"]) == 0


def _specs(tmp_path: Path, component: str) -> Path:
    folder = tmp_path / "gt"
    folder.mkdir()
    spec = {"id": "weird", "ground_truth": "A fault.", "fault_origin": [{"name": component}]}
    (folder / "weird.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    return folder


def test_check_lists_components_it_cannot_normalise(tmp_path, capsys) -> None:
    folder = _specs(tmp_path, "my service (v2)")
    assert main(["check", "--ground-truth", str(folder), "--json"]) == 0
    findings = json.loads(capsys.readouterr().out)
    assert findings["unnormalised_components"] == {"weird": ["my service (v2)"]}
    assert main(["check", "--ground-truth", str(folder), "--strict"]) == 1
    assert "cannot normalise" in capsys.readouterr().out


def test_check_accepts_normalised_components(tmp_path, capsys) -> None:
    folder = _specs(tmp_path, "pod-policy.validation.k8s.io")
    assert main(["check", "--ground-truth", str(folder), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["unnormalised_components"] == {}
