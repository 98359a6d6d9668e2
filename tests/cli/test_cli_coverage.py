"""CLI branches no other test reaches: `--rpm` / `--tpm` pacing inside a real run against a
provider with its own rate limit, exit 3 when every call fails, `judge rubric list/show` and
`judge labels template`. The provider is the fake one on 127.0.0.1; no test asserts a time."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from helpers import EXAMPLE, one_incident_args

from ground_truth import load_specs, load_submissions
from judge import load_rubric, render_prompts
from judge.cli import main
from judge.judges.llm import estimate_tokens
from judge.testing import FakeProvider, FakeProviderConfig

GT = EXAMPLE / "ground_truth" / "incorrect_image.yaml"
# three calls (one dimension, three trials), never retried, so a 429 shows as an error
QUICK = ("--dimensions", "D1", "--max-retries", "0", "--cooldown-after", "0", "--no-store")
# the provider takes 2 requests in any second: three at once get one 429
STRICT = FakeProviderConfig(rpm=2, rate_window=1.0)


def run(tmp_path: Path, config: FakeProviderConfig, *extra: str) -> tuple[int, dict]:
    result = tmp_path / "r.json"
    with FakeProvider(config) as provider:
        code = main(
            one_incident_args(
                result, "--judge-model", "openai/fake-judge", "--api-base", provider.url,
                "--no-progress", *extra,
            )
        )  # fmt: skip
    return code, json.loads(result.read_text())


def test_without_pacing_the_strict_provider_refuses_a_burst(tmp_path: Path) -> None:
    """The control for the two tests below: the same run, unpaced, meets a 429."""
    _, result = run(tmp_path, STRICT, *QUICK, "--max-concurrent", "3")
    assert result["errors"].get("rate_limit", 0) >= 1


@pytest.mark.slow
def test_rpm_paces_requests_under_the_providers_limit(tmp_path: Path) -> None:
    code, result = run(tmp_path, STRICT, *QUICK, "--max-concurrent", "3", "--rpm", "60")
    assert code == 0 and result["errors"] == {} and result["complete"] is True
    assert result["usage"]["requests"] == 3


def test_tpm_paces_requests_under_the_providers_limit(tmp_path: Path) -> None:
    rubric = load_rubric().select(["D1"])
    prompts = render_prompts(load_specs(GT), load_submissions(EXAMPLE / "outputs"), rubric)
    largest = max(estimate_tokens(p.messages) for _, _, p in prompts)
    tpm = str(60 * largest)  # about one request a second
    code, result = run(tmp_path, STRICT, *QUICK, "--max-concurrent", "3", "--tpm", tpm)
    assert code == 0 and result["errors"] == {} and result["complete"] is True


def test_every_call_failing_is_exit_3(tmp_path: Path, capsys) -> None:
    config = FakeProviderConfig(fault_rates={"500": 1.0})
    code, result = run(tmp_path, config, *QUICK)
    assert code == 3 and result["errors"] == {"server": 3}
    assert "failed on 3 of 3 calls" in result["exit_reason"]
    assert "exit 3: the judge failed on 3 of 3 calls" in capsys.readouterr().err


def test_rubric_list_names_the_shipped_rubric(capsys) -> None:
    assert main(["rubric", "list"]) == 0
    assert "sregym-v3" in capsys.readouterr().out.split()


def test_rubric_show_prints_every_question(capsys) -> None:
    rubric = load_rubric()
    assert main(["rubric", "show", "sregym-v3"]) == 0
    out = capsys.readouterr().out
    assert rubric.hash in out
    assert all(q.id in out for d in rubric.dimensions for q in d.questions)


def test_rubric_show_of_an_unknown_rubric_is_exit_2(capsys) -> None:
    assert main(["rubric", "show", "no-such-rubric"]) == 2
    assert "no-such-rubric" in capsys.readouterr().err


def test_labels_template_writes_a_blind_sheet(tmp_path: Path, capsys) -> None:
    result = tmp_path / "r.json"
    assert main(one_incident_args(result, "--no-progress")) == 0
    sheet = tmp_path / "labels.csv"
    code = main(
        ["labels", "template", str(result), "-o", str(sheet), "--ground-truth", str(GT),
         "--outputs", str(EXAMPLE / "outputs"), "--annotator", "ana"]
    )  # fmt: skip
    assert code == 0 and "wrote 30 rows" in capsys.readouterr().out
    with sheet.open(encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 30  # three cases: nine questions and a verdict each
    assert {(r["incident_id"], r["trial"]) for r in rows} == {
        (c["incident_id"], c["trial"]) for c in json.loads(result.read_text())["cases"]
    }
    assert all(r["answer"] == "" and r["annotator"] == "ana" for r in rows)
    assert all(r["ground_truth"] and r["diagnosis"] for r in rows)
    assert sum(r["question_id"] == "verdict" for r in rows) == 3


def test_labels_template_of_a_missing_result_is_exit_2(tmp_path: Path, capsys) -> None:
    code = main(["labels", "template", str(tmp_path / "none.json"), "-o", str(tmp_path / "l.csv")])
    assert code == 2 and "none.json" in capsys.readouterr().err
