"""Group commits (`judge.store.grouped`): a batch of answers is one transaction; until it is
committed the process serves its answers itself and another process sees their leases held,
never a key free whose answer is missing; a commit that fails is raised, never lost quietly."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest
from helpers import EXAMPLE

from ground_truth import load_specs, load_submissions
from judge import DimensionVerdict, EvalOptions, QuestionAnswer, evaluate, make_judge
from judge.errors import StorageError
from judge.store import CaseRef, KeyParts, Store
from judge.testing import FakeProvider, FakeProviderConfig

ANSWER = DimensionVerdict(answers=[QuestionAnswer(question_id="Q1", answer="Yes")])


def _parts(n: int) -> KeyParts:
    return KeyParts("llm:m", "m", "p", f"prompt{n}", "schema", "rubric")


def _case(n: int) -> CaseRef:
    return CaseRef("inc", f"t{n}", "D1")


def _committed(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT count(*) FROM judgments").fetchone()[0])


def _wait_for(predicate, what: str, limit: float = 60.0) -> None:
    """Poll until `predicate()`; the limit only keeps a broken commit from hanging the suite."""
    deadline = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.01)


def test_a_batch_is_served_by_its_process_and_committed_in_one_go(tmp_path) -> None:
    path = tmp_path / "s.sqlite"
    other = Store(path)

    async def puts() -> None:
        store = Store(path)
        store.group_commits(seconds=3600, answers=3)
        for n in (1, 2):
            store.claim(_parts(n).key, "A", 30)
            store.put(_parts(n), _case(n), ANSWER)
            store.release(_parts(n).key, "A")
        assert _committed(path) == 0
        waiting = store.get(_parts(1))
        assert waiting is not None and waiting.answers == ANSWER.answers
        assert store.keys_present([_parts(1).key, _parts(3).key]) == {_parts(1).key}
        held = other.claim(_parts(1).key, "B", 30)
        assert held.state == "held" and held.owner == "A"  # released only with its answer
        store.put(_parts(3), _case(3), ANSWER)  # the third fills the batch
        assert _committed(path) == 3
        assert other.claim(_parts(1).key, "B", 30).state == "answered"
        assert store.get(_parts(1)) == waiting  # the same from the batch as from the file
        store.close()

    asyncio.run(puts())


def test_the_batch_is_committed_when_its_oldest_answer_has_waited(tmp_path) -> None:
    path = tmp_path / "s.sqlite"

    async def put_then_wait() -> None:
        store = Store(path)
        store.group_commits(seconds=0.05)
        store.put(_parts(1), _case(1), ANSWER)
        while _committed(path) == 0:
            await asyncio.sleep(0.01)
        store.close()

    asyncio.run(asyncio.wait_for(put_then_wait(), 60))


def test_without_an_event_loop_each_answer_is_committed_at_once(tmp_path) -> None:
    store = Store(tmp_path / "s.sqlite")
    store.group_commits(seconds=3600)
    store.put(_parts(1), _case(1), ANSWER)
    assert _committed(tmp_path / "s.sqlite") == 1


def test_closing_commits_the_waiting_batch(tmp_path) -> None:
    async def put_and_close() -> None:
        store = Store(tmp_path / "s.sqlite")
        store.group_commits(seconds=3600)
        store.put(_parts(1), _case(1), ANSWER)
        store.close()

    asyncio.run(put_and_close())
    assert _committed(tmp_path / "s.sqlite") == 1


def test_a_batch_that_fails_on_its_timer_is_reported_and_raised(tmp_path) -> None:
    path = tmp_path / "s.sqlite"
    told: list[StorageError] = []

    async def put_then_lose_the_file() -> None:
        store = Store(path)
        store.group_commits(seconds=0.05, on_failure=told.append)
        store.put(_parts(1), _case(1), ANSWER)
        path.unlink()
        while not told:
            await asyncio.sleep(0.01)
        with pytest.raises(StorageError, match="deleted during the run"):
            store.put(_parts(2), _case(2), ANSWER)
        with pytest.raises(StorageError, match="deleted during the run"):
            store.end_group()
        store.close()

    asyncio.run(asyncio.wait_for(put_then_lose_the_file(), 60))
    assert "deleted during the run" in str(told[0])


def test_a_grouped_run_stores_and_returns_what_a_run_committing_each_answer_does(
    tmp_path,
) -> None:
    specs = load_specs(EXAMPLE / "ground_truth")
    subs = load_submissions(EXAMPLE / "outputs")
    results = {}
    with FakeProvider(FakeProviderConfig(seed=4)) as provider:
        for grouped in (False, True):
            judge = make_judge("openai/fake-judge", api_base=provider.url, api_key="sk-test")
            store = tmp_path / f"{grouped}.sqlite"
            options = EvalOptions(store=store, group_commits=grouped, max_concurrent=4)
            results[grouped] = evaluate(specs, subs, judge=judge, options=options)
            assert _committed(store) == results[grouped].usage.calls_made > 0
    assert results[True].judgments == results[False].judgments
