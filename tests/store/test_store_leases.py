"""One store, several processes: a unit is claimed in the store before its call, so processes
sharing a store make no provider call twice (beyond leases that expired) and lose nothing."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from helpers import EXAMPLE, REPO
from helpers.fake_runs import write_submissions

from judge import DimensionVerdict, QuestionAnswer
from judge.run.leases import Deferred, LeaseBook, UnitQueue, owner_gone
from judge.store import CaseRef, KeyParts, Store
from judge.testing import FakeProvider, FakeProviderConfig

PARTS = KeyParts("llm:m", "m", "p", "prompt", "schema", "rubric")
ANSWER = DimensionVerdict(answers=[QuestionAnswer(question_id="Q1", answer="Yes")])


def test_a_live_lease_is_held_an_expired_one_taken_over_an_answer_served(tmp_path) -> None:
    a, b = Store(tmp_path / "s.sqlite"), Store(tmp_path / "s.sqlite")
    key = PARTS.key
    assert a.claim(key, "A", 30, now=100).state == "claimed"
    held = b.claim(key, "B", 30, now=110)
    assert held.state == "held" and held.owner == "A" and held.expires == 130
    taken = b.claim(key, "B", 30, now=131)  # A died: its lease ran out
    assert taken.state == "claimed" and taken.took_over
    assert not a.renew(key, "A", 30)  # A's lease is gone
    assert b.renew(key, "B", 30)
    b.release(key, "B")
    assert a.claim(key, "A", 30).state == "claimed" and not a.claim(key, "A", 30).took_over
    a.put(PARTS, CaseRef("i", "1", "D1"), ANSWER)
    assert b.claim(key, "B", 30).state == "answered"
    assert b.claim(key, "B", 30, served=False).state == "held"  # --refresh asks again
    a.close(), b.close()


def test_a_lease_of_a_process_that_is_gone_is_taken_over_at_once(tmp_path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    owner = f"{socket.gethostname()}:{dead.pid}:abcd"
    alive = f"{socket.gethostname()}:{os.getppid()}:abcd"
    assert owner_gone(owner) and not owner_gone(alive) and not owner_gone(f"elsewhere:{dead.pid}:x")
    store = Store(tmp_path / "s.sqlite")
    store.claim(PARTS.key, owner, 30)
    claim = store.claim(PARTS.key, "me", 30, gone=owner_gone)
    assert claim.state == "claimed" and claim.took_over
    store.close()


def test_a_held_unit_is_put_back_once_then_waited_for(tmp_path) -> None:
    async def scenario() -> tuple[bool, bool]:
        store = Store(tmp_path / "s.sqlite")
        other = Store(tmp_path / "s.sqlite")
        other.claim(PARTS.key, "other", 30)
        book = LeaseBook(store, poll=0.01)
        with pytest.raises(Deferred):
            async with book.hold(PARTS.key):
                pass

        async def answer_later() -> None:
            await asyncio.sleep(0.05)
            other.put(PARTS, CaseRef("i", "1", "D1"), ANSWER)
            other.release(PARTS.key, "other")

        writer = asyncio.create_task(answer_later())
        async with book.hold(PARTS.key) as answered:
            await writer
        async with LeaseBook(store).hold("another key") as mine:
            row = store._db.execute("SELECT owner FROM leases").fetchone()
        left = store._db.execute("SELECT count(*) FROM leases").fetchone()[0]
        return answered, (not mine and row is not None and left == 0)

    assert asyncio.run(scenario()) == (True, True)


def test_units_put_back_come_after_all_others_and_the_queue_moves_elsewhere() -> None:
    queue = UnitQueue(range(100), seed=1)
    seen = [next(queue), next(queue)]
    queue.later(seen[0])
    seen += list(queue)
    assert sorted(seen) == [0, *range(100)] and seen[-1] == 0
    assert seen[2] != 2  # jumped to another part of the units left
    alone = UnitQueue(range(100))
    assert list(alone) == list(range(100))  # never put back: the units' own order


def _eval_command(outputs: Path, result: Path, store: Path, url: str, pause: Path) -> list[str]:
    return [
        sys.executable, "-m", "judge", "eval", "--ground-truth", str(EXAMPLE / "ground_truth"),
        "--outputs", str(outputs), "--result-file", str(result), "--store", str(store),
        "--judge-model", "openai/fake-judge", "--api-base", url, "--max-concurrent", "2",
        "--pause-file", str(pause), "--no-progress", "--granularity", "dimension",
    ]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("processes", [2, 4])
def test_processes_sharing_a_store_never_ask_twice_and_lose_nothing(tmp_path, processes) -> None:
    outputs, store, pause = tmp_path / "subs.jsonl", tmp_path / "shared.sqlite", tmp_path / "PAUSE"
    write_submissions(outputs, 24)
    pause.touch()  # every process is started and waiting before any call is made
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with FakeProvider(FakeProviderConfig(latency=0.05, seed=2)) as server:
        runs = [
            subprocess.Popen(
                _eval_command(outputs, tmp_path / f"r{i}.json", store, server.url, pause),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                cwd=REPO,
            )
            for i in range(processes)
        ]
        for run in runs:
            assert run.stdout is not None and run.stdout.readline().startswith("Judge:")
        pause.unlink()
        outcomes = [run.communicate(timeout=300) for run in runs]
        calls = server.calls
    assert [run.returncode for run in runs] == [0] * processes, outcomes
    asked = Counter(c.messages_hash for c in calls)
    assert len(asked) == 24 * 3 and set(asked.values()) == {1}  # no call asked twice
    results = [json.loads((tmp_path / f"r{i}.json").read_text()) for i in range(processes)]
    made = [r["usage"]["calls_made"] for r in results]
    assert sum(made) == 24 * 3 and sum(m > 0 for m in made) >= 2
    for result in results:  # every process has every answer
        assert result["complete"] and result["overall"]["n_unscored_questions"] == 0
        assert result["judgments"] == results[0]["judgments"]
