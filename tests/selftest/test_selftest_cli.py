"""`judge selftest` as a user runs it: the rules judge on the bundled example, a judge that
says Yes to everything (it must fail), and bad input (exit 2 before any call)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import EXAMPLE_GT

from judge import DimensionVerdict, JudgeTask, QuestionAnswer, register_judge
from judge.cli import main
from judge.judges.registry import unregister_judge


class AlwaysYes:
    """A judge anyone could fool: Yes to every question."""

    name = "always-yes"

    def describe(self) -> dict:
        return {"name": self.name, "model": None, "params": {}}

    def judge(self, task: JudgeTask) -> DimensionVerdict:
        return DimensionVerdict(
            answers=[
                QuestionAnswer(question_id=q, answer="Yes", evidence="") for q in task.question_ids
            ]
        )


@pytest.fixture
def always_yes():
    register_judge("always-yes", AlwaysYes, replace=True)
    yield "always-yes"
    unregister_judge("always-yes")


def selftest(capsys, *flags: str) -> tuple[int, dict]:
    code = main(["selftest", "--no-progress", "--json", *flags])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


def test_a_judge_that_says_yes_to_everything_fails(capsys, always_yes) -> None:
    code, report = selftest(capsys, "-g", str(EXAMPLE_GT), "--judge-model", always_yes)
    assert code == 1 and report["exit_code"] == 1 and not report["ok"]
    kinds = {k["kind"]: k for k in report["kinds"]}
    assert kinds["truth"]["share"] == 1.0 and kinds["rewrite"]["share"] == 1.0
    for must_fail in ("origin-swap", "mechanism-swap", "victim-only", "vague", "injection"):
        assert kinds[must_fail]["share"] == 0.0 and kinds[must_fail]["below"]
        assert kinds[must_fail]["pass_rate"] == 1.0
    assert kinds["empty"]["share"] == 1.0  # an empty diagnosis is never put to a judge
    failed = {(f["kind"], f["question_id"]) for f in report["failures"]}
    assert ("origin-swap", "D1-Q1") in failed and ("injection", "verdict") in failed
    assert "origin-swap" in report["exit_reason"]


@pytest.mark.parametrize(
    "flags, says",
    [
        (["-g", "no/such/dir"], "no/such/dir"),
        (["-g", str(EXAMPLE_GT), "--format", "itbnech"], "--format: invalid choice"),
        (["-g", str(EXAMPLE_GT), "--rubric", "no-such-rubric"], "unknown rubric name"),
        (["-g", str(EXAMPLE_GT), "--fail-under", "2"], "--fail-under: expected a number"),
        (["-g", str(EXAMPLE_GT), "--judge-model", "nope-judge:"], "--judge-model"),
        (["--no-goldens"], "nothing to check"),
    ],
)
def test_bad_input_exits_2_naming_it(capsys, flags: list[str], says: str) -> None:
    try:
        code = main(["selftest", "--no-progress", *flags])
    except SystemExit as exit:  # argparse refuses a flag's value itself
        code = exit.code
    err = capsys.readouterr().err
    assert code == 2 and says in err


def test_the_default_store_is_not_written_for_the_rules_judge(
    capsys, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, report = selftest(capsys, "-g", str(EXAMPLE_GT / "incorrect_image.yaml"), "--no-goldens")
    assert report["plan"]["offline"] and not list(tmp_path.iterdir())
    assert code in (0, 1)


def test_the_rules_judge_passes_on_the_bundled_example(capsys) -> None:
    code, report = selftest(capsys, "-g", str(EXAMPLE_GT), "--no-goldens")
    assert code == 0, report["exit_reason"]


def test_the_rules_judge_passes_the_rubric_goldens(capsys) -> None:
    code, report = selftest(capsys, "--rubric", "sregym-v3")
    assert code == 0, report["exit_reason"]
