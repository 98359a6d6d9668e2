"""`judge eval --batch` from the command line: a run killed while polling resumes its batch by id
(one batch created in all), `judge store stats` shows batches, and combinations that cannot
batch exit 2 with the reason."""

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
from helpers import REPO
from helpers.batch import batch_command

from judge import DimensionVerdict, QuestionAnswer
from judge.cli import main
from judge.store import CaseRef, KeyParts, Store
from judge.testing import FakeProvider, FakeProviderConfig


def open_batches(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(store) as db:
            return db.execute("SELECT count(*) FROM batches WHERE closed = 0").fetchone()[0]
    except sqlite3.OperationalError:  # the tables are being created
        return 0


@pytest.mark.slow
def test_killed_while_polling_then_batch_again_resumes_without_a_second_batch(
    tmp_path: Path, capsys
) -> None:
    store = tmp_path / "r.sqlite"
    with FakeProvider(FakeProviderConfig(batch_delay=4.0)) as server:
        args = batch_command(tmp_path, server.url, "--judge-model", "openai/fake-judge")
        env = {**os.environ, "PYTHONPATH": str(REPO), "JUDGE_API_KEY": "sk-test"}
        first = subprocess.Popen(
            [sys.executable, "-m", "judge", *args], cwd=tmp_path, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while server.batches.ops["batch_retrieve"] < 1:  # it is polling
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        first.kill()
        first.wait(timeout=30)
        assert first.returncode == -signal.SIGKILL
        assert open_batches(store) == 1 and not (tmp_path / "r.json").exists()

        code = main(batch_command(tmp_path, server.url, "--judge-model", "openai/fake-judge"))
        ops = dict(server.batches.ops)
        lines = [c for c in server.calls if c.path.startswith("batch ")]
    assert code == 0
    assert ops["batch_create"] == 1 and ops["file_create"] == 1
    assert len(lines) == 9  # each call answered once, in the one batch
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["complete"] and result["usage"]["batch"]["resumed"] == ["batch_fake000000"]
    assert {c["batch_id"] for c in result["calls"]} == {"batch_fake000000"}
    assert open_batches(store) == 0
    capsys.readouterr()

    assert main(["store", "stats", str(store)]) == 0
    shown = capsys.readouterr().out
    assert "batch batch_fake000000" in shown and "9 completed" in shown and "closed" in shown
    assert main(["store", "stats", str(store), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["batches"][0]["calls"] == 9 and stats["batches"][0]["open"] is False


@pytest.mark.parametrize(
    ("judge", "extra", "words"),
    [
        ([], [], "would fall back to the offline rules judge"),  # --api-base, no model
        (["--judge-model", "rules"], [], "rules makes no provider calls"),
        (["--judge-model", "replay:STORE"], [], "makes no provider calls"),
        (["--judge-model", "openai/a", "--judge-model", "openai/b"], [], "panel"),
        (
            ["--judge-model", "anthropic/claude-3-5-haiku-latest"],
            [],
            "goes to provider 'anthropic'",
        ),
        (["--judge-model", "openai/fake-judge"], ["--no-store"], "needs a store"),
        (["--judge-model", "openai/fake-judge"], ["--batch-poll", "0"], "more than 0"),
    ],
)
def test_combinations_that_cannot_batch_exit_2_with_the_reason(
    tmp_path: Path, capsys, judge: list[str], extra: list[str], words: str
) -> None:
    if judge[-1:] == ["replay:STORE"]:
        replay = tmp_path / "old.sqlite"
        with Store(replay) as store:
            answer = QuestionAnswer(question_id="D1-Q1", answer="Yes")
            parts = KeyParts("llm:openai/old", "openai/old", "p", "h", "s", "r")
            store.put(parts, CaseRef("i", "t", "D1"), DimensionVerdict(answers=[answer]))
        judge = ["--judge-model", f"replay:{replay}"]
    try:
        code = main(batch_command(tmp_path, "http://127.0.0.1:9/v1", *judge, *extra))
    except SystemExit as stop:  # a flag's value refused while parsing (--batch-poll 0)
        code = stop.code
    out = capsys.readouterr()
    assert code == 2
    assert words in " ".join((out.out + out.err).split())
    assert not (tmp_path / "r.json").exists()
