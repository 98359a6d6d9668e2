"""A run stopped by a fatal provider error while its submissions are still being read: the
units read after the stop are listed as not judged, and the calls that failed are counted and
reported with the exit code the docs give (exit-codes.md: 400 from the provider is exit 3).

A panel whose members all got HTTP 400 raised `IndexError` here: each member's call records
reached only as far as the units known when it recorded, and the result read past them."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from helpers import EXAMPLE_GT, eval_args
from helpers.fake_runs import submissions

import ground_truth
from ground_truth.matching import submission_order
from judge.cli import main
from judge.run import loop
from judge.testing import FakeProvider, FakeProviderConfig
from judge.testing.faults import FaultKind

N = 60


def _slow_reading(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Submissions read 5 ms apart (the run hands the loop back between them); the number of
    units known at each call record, returned for the test to check its own premise."""
    reading = ground_truth.iter_submissions

    def slowly(*args, **kwargs):
        for sub in reading(*args, **kwargs):
            time.sleep(0.005)
            yield sub

    monkeypatch.setattr(ground_truth, "iter_submissions", slowly)
    known: list[int] = []
    record = loop.Run._record

    def counted(self, call):
        known.append(len(self.units))
        record(self, call)

    monkeypatch.setattr(loop.Run, "_record", counted)
    return known


def test_a_panel_whose_members_all_get_400_ends_in_counted_failures_and_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    known = _slow_reading(monkeypatch)
    outputs = tmp_path / "outputs.jsonl"  # in the result's order: the run reorders nothing
    outputs.write_text(
        "".join(
            s.model_dump_json(include={"incident_id", "trial", "diagnosis"}) + "\n"
            for s in sorted(submissions(N), key=submission_order)
        )
    )
    result = tmp_path / "result.json"
    config = FakeProviderConfig(models=["a", "b"], fault_rates={FaultKind.BAD_REQUEST: 1.0})
    with FakeProvider(config) as provider:
        args = eval_args(EXAMPLE_GT, outputs, result, "--api-base", provider.url)
        args += ["--judge-model", "openai/a", "--judge-model", "openai/b", "--no-progress"]
        monkeypatch.setenv("JUDGE_API_KEY", "sk-test")
        code = main(args)
    assert known and max(known) < N  # the premise: the records came before the last unit
    assert code == 3
    written = json.loads(result.read_text())
    assert written["exit_code"] == 3 and "bad_request" in written["exit_reason"]
    assert written["complete"] is False
    assert written["errors"] == {"bad_request": 2}
    assert {c["error_kind"] for c in written["calls"]} == {"bad_request"}
    assert len(written["incomplete"]) == N - 1
