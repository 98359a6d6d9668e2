"""`judge eval`'s exit codes: a run whose judge never gave a usable answer is not a success
(3), a run that matches nothing is bad input (2), 1 is only `--fail-under`, and a bug is one
line on stderr plus a traceback file (70). The provider is the fake one on 127.0.0.1."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from helpers import EXAMPLE, eval_args, one_incident_args

from judge.cli import main
from judge.testing import FakeProvider, FakeProviderConfig

MODEL = ("--judge-model", "openai/fake-judge", "--no-progress", "--cooldown-after", "0")


def run(tmp_path: Path, config: FakeProviderConfig, *extra: str) -> tuple[int, dict]:
    result = tmp_path / "r.json"
    with FakeProvider(config) as provider:
        code = main(
            one_incident_args(result, *MODEL, "--api-base", provider.url, "--no-store",
                              "--granularity", "dimension", *extra)  # nine calls: their counts
        )  # fmt: skip
    return code, json.loads(result.read_text())


@pytest.mark.parametrize("fault", ["malformed", "refusal"])
def test_every_reply_unusable_exits_3_and_is_not_complete(tmp_path: Path, fault: str) -> None:
    code, result = run(tmp_path, FakeProviderConfig(fault_rates={fault: 1.0}))
    assert code == 3
    assert result["complete"] is False and result["overall"]["n_failed_questions"] == 27
    assert result["exit_code"] == 3 and "failed on 9 of 9 calls" in result["exit_reason"]


def test_unusable_replies_count_against_max_errors(tmp_path: Path) -> None:
    config = FakeProviderConfig(fault_rates={"malformed": 1.0})
    code, result = run(tmp_path, config, "--max-errors", "1", "--max-concurrent", "1")
    assert code == 3 and result["stopped"]["kind"] == "max_errors"


SIX_OF_NINE = "500,ok,500,500,ok,500,500,ok,500"


@pytest.mark.parametrize("limit, expected", [(None, 3), ("0.7", 0), ("0.6", 3)])
def test_max_unscored(tmp_path: Path, limit: str | None, expected: int) -> None:
    """Six of nine calls fail (18 of 27 questions, 0.67): past the default 0.5, under 0.7."""
    config = FakeProviderConfig(fault_schedule=SIX_OF_NINE)
    flags = ["--max-retries", "0", "--max-concurrent", "1"]
    code, result = run(tmp_path, config, *flags, *(["--max-unscored", limit] if limit else []))
    assert result["overall"]["n_failed_questions"] == 18 and result["errors"] == {"server": 6}
    assert code == expected and result["exit_code"] == expected
    if expected == 3:
        assert "18 of 27 questions are unscored" in result["exit_reason"]
        assert "--max-unscored" in result["exit_reason"]
    else:
        assert result["exit_reason"] is None


def test_max_unscored_must_be_a_fraction(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit:
        main(one_incident_args(tmp_path / "r.json", "--max-unscored", "2"))
    err = capsys.readouterr().err
    assert exit.value.code == 2 and "--max-unscored: expected a number from 0 to 1" in err


def test_only_orphans_exit_2_and_say_why(tmp_path: Path, capsys) -> None:
    outputs = tmp_path / "subs.jsonl"
    outputs.write_text(json.dumps({"incident_id": "nope", "trial": "1", "diagnosis": "x"}) + "\n")
    gt = EXAMPLE / "ground_truth" / "incorrect_image.yaml"
    code = main(eval_args(gt, outputs, tmp_path / "r.json", "--no-progress"))
    err = capsys.readouterr().err
    assert code == 2 and not (tmp_path / "r.json").exists()
    assert "none of the 1 submissions names an incident" in err and "'nope'" in err


@pytest.mark.parametrize("empty", ["folder", "subs.jsonl"])
def test_no_submission_at_all_exits_2(tmp_path: Path, capsys, empty: str) -> None:
    outputs = tmp_path / empty
    outputs.mkdir() if empty == "folder" else outputs.write_text("")
    gt = EXAMPLE / "ground_truth"
    code = main(eval_args(gt, outputs, tmp_path / "r.json", "--no-progress"))
    err = capsys.readouterr().err
    assert code == 2 and not (tmp_path / "r.json").exists()
    assert str(outputs) in err and "is empty: no submission to score" in err


def test_fail_under_is_exit_1_with_its_reason_in_the_result(tmp_path: Path) -> None:
    result = tmp_path / "r.json"
    assert main(one_incident_args(result, "--no-progress", "--fail-under", "1")) == 1
    saved = json.loads(result.read_text())
    assert saved["exit_code"] == 1 and "below --fail-under 1" in saved["exit_reason"]


def test_an_unexpected_exception_is_one_line_and_a_traceback_file(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug in scoring")

    monkeypatch.setattr("judge.run.result.scored_case", broken)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    code = main(one_incident_args(tmp_path / "r.json", "--no-progress"))
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 70
    assert len(lines) == 1 and "ZeroDivisionError: a bug in scoring" in lines[0]
    [trace] = tmp_path.glob("judge-traceback-*.txt")
    assert str(trace) in lines[0]
    assert "Traceback" in trace.read_text() and "broken" in trace.read_text()
