"""kill -9 a real `python -m judge eval` midway, resume it: the result equals an uninterrupted
run's, and the fake provider (its own process, logging every call) was never asked again for a
judgment the store already held.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import EXAMPLE, EXAMPLE_GT, REPO

from ground_truth import load_submissions
from judge.cli import main
from judge.testing import FakeProvider, FakeProviderConfig, read_call_log

N_SUBMISSIONS = 30
N_CALLS = 3 * N_SUBMISSIONS


def _write_submissions(path: Path) -> None:
    examples = load_submissions(EXAMPLE / "outputs")
    rows = [
        {"incident_id": s.incident_id, "trial": f"s{i}", "diagnosis": s.diagnosis}
        for i, s in ((i, examples[i % len(examples)]) for i in range(N_SUBMISSIONS))
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def _wait_for(predicate, what: str, limit: float = 120.0) -> None:
    """Poll until `predicate()`; the limit only keeps a broken run from hanging the suite."""
    deadline = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.02)


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _eval_command(outputs: Path, result: Path, url: str, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "judge", "eval",
        "--ground-truth", str(EXAMPLE_GT), "--outputs", str(outputs),
        "--result-file", str(result), "--judge-model", "openai/fake-judge",
        "--api-base", url, "--max-concurrent", "2", "--granularity", "dimension", *extra,
    ]  # fmt: skip


def _comparable(result: dict) -> dict:
    judgments = sorted(
        (j["incident_id"], j["trial"], j["dimension_id"], j["question_id"], j["answer"],
         j["evidence"], j["confidence"], j["judge"], j["prompt_hash"])
        for j in result["judgments"]
    )  # fmt: skip
    cases = sorted(json.dumps(c, sort_keys=True) for c in result["cases"])
    return {"judgments": judgments, "cases": cases, "overall": result["overall"]}


def _stored_prompts(store: Path) -> set[str]:
    with sqlite3.connect(store) as db:
        return {row[0] for row in db.execute("SELECT prompt_hash FROM judgments")}


@pytest.fixture
def provider_process(tmp_path: Path):
    log, url_file = tmp_path / "calls.jsonl", tmp_path / "url"
    command = [
        sys.executable, "-m", "judge.testing.fake_provider", "--seed", "9",
        "--latency", "0.05", "--log", str(log), "--url-file", str(url_file),
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL)
    try:
        _wait_for(url_file.exists, "the fake provider's URL")
        yield url_file.read_text().strip(), log
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


@pytest.mark.slow
def test_kill_9_then_resume_equals_an_uninterrupted_run(tmp_path: Path, provider_process) -> None:
    url, log = provider_process
    outputs, result, store = tmp_path / "subs.jsonl", tmp_path / "r.json", tmp_path / "r.sqlite"
    _write_submissions(outputs)
    env = {**os.environ, "PYTHONPATH": str(REPO), "JUDGE_API_KEY": "sk-test"}

    first = subprocess.Popen(
        _eval_command(outputs, result, url), cwd=tmp_path, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    _wait_for(lambda: _lines(log) >= N_CALLS // 3, "a third of the calls")
    first.kill()  # SIGKILL: no handler runs, nothing is flushed on the way out
    first.wait(timeout=30)
    assert first.returncode == -signal.SIGKILL
    assert not result.exists()  # killed before it could write a result
    answered = _stored_prompts(store)
    killed_at = _lines(log)
    assert 0 < len(answered) < N_CALLS

    resumed = subprocess.run(
        _eval_command(outputs, result, url, "--resume"), cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    after = read_call_log(log)[killed_at:]
    assert not [c for c in after if c.messages_hash in answered]  # nothing asked twice
    assert len(after) == N_CALLS - len(answered)
    final = json.loads(result.read_text())
    assert final["complete"] is True and final["usage"]["cache_hits"] == len(answered)

    reference_dir = tmp_path / "reference"
    reference_dir.mkdir()
    with FakeProvider(FakeProviderConfig(seed=9)) as provider:
        code = main(
            ["eval", "--ground-truth", str(EXAMPLE_GT), "--outputs", str(outputs),
             "--result-file", str(reference_dir / "r.json"), "--judge-model",
             "openai/fake-judge", "--api-base", provider.url, "--no-progress",
             "--granularity", "dimension"]
        )  # fmt: skip
    assert code == 0
    reference = json.loads((reference_dir / "r.json").read_text())
    assert _comparable(final) == _comparable(reference)
