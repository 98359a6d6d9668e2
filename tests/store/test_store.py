"""The judgment store: keys, answers vs errors, JSON columns, WAL, miss reasons, no secrets."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from ground_truth import IncidentSpec, InputError, Submission
from judge import DimensionVerdict, JudgeTask, PromptRenderer, QuestionAnswer, load_rubric
from judge.checklist.judgment import Usage, unscored
from judge.errors import StorageError
from judge.judges.mask import scrub_params
from judge.run.cache import KeyMaker, LeafCall, RecordedJudge
from judge.store import CaseRef, KeyParts, Store

SPEC = IncidentSpec(id="inc-1", ground_truth="checkout points to port 8082 instead of 8080.")
SUB = Submission(incident_id="inc-1", trial="1", diagnosis="checkout uses port 8082.")
CASE = CaseRef("inc-1", "1", "D1")


def parts(**change: str) -> KeyParts:
    base = dict(judge="llm:m", model="m", params="p1", prompt="h1", schema="s1", rubric="r1")
    return KeyParts(**{**base, **change})


def answer(*values: str) -> DimensionVerdict:
    return DimensionVerdict(
        answers=[
            QuestionAnswer(question_id=f"D1-Q{i}", answer=v, evidence="e", confidence="High")
            for i, v in enumerate(values, 1)
        ],
        attempts=1,
        requests=2,
        usage=Usage(prompt_tokens=10, completion_tokens=5, cost_usd=None),
    )


def test_answer_round_trips_and_is_marked_cached(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        store.put(parts(), CASE, answer("Yes", "No", "Yes"))
        got = store.get(parts())
    assert got is not None and got.cached
    assert [a.answer for a in got.answers] == ["Yes", "No", "Yes"]
    assert got.requests == 2 and got.usage.prompt_tokens == 10 and got.usage.cost_usd is None


@pytest.mark.parametrize("component", ["judge", "model", "params", "prompt", "schema", "rubric"])
def test_any_changed_component_misses_and_says_why(tmp_path: Path, component: str) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        store.put(parts(), CASE, answer("Yes", "No", "Yes"))
        changed = parts(**{component: "other"})
        assert store.get(changed) is None
        assert store.miss_reason(changed, CASE) == f"{component} changed"


def test_params_miss_names_the_parameter(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        store.remember_params("p1", {"temperature": 0.0})
        store.remember_params("p2", {"temperature": 0.7})
        store.put(parts(params="p1"), CASE, answer("Yes"))
        reason = store.miss_reason(parts(params="p2"), CASE)
    assert reason == "params changed: temperature 0.0 -> 0.7"


def test_errors_are_stored_but_never_served(tmp_path: Path) -> None:
    failed = unscored(["D1-Q1"], "rate_limit from m: slow down", "rate_limit", 1)
    with Store(tmp_path / "s.sqlite") as store:
        store.put(parts(), CASE, failed)
        assert store.get(parts()) is None
        assert store.stats()["errors"] == {"rate_limit": 1}
        [row] = list(store.rows("errors"))
    assert row["error_kind"] == "rate_limit" and row["attempt_errors"] == {}


def test_plain_json_in_wal_mode_readable_by_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.put(parts(), CASE, answer("Yes", "No"))
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    first = db.execute("SELECT json_extract(answers, '$[1].answer') FROM judgments").fetchone()
    assert first == ("No",)
    raw = db.execute("SELECT answers, usage FROM judgments").fetchone()
    assert all(json.loads(column) for column in raw)


def test_a_write_is_committed_at_once(tmp_path: Path) -> None:
    """Another connection sees each answer as soon as `put` returns: a kill loses nothing."""
    path = tmp_path / "s.sqlite"
    store = Store(path)
    store.put(parts(), CASE, answer("Yes"))
    other = sqlite3.connect(path)
    assert other.execute("SELECT count(*) FROM judgments").fetchone() == (1,)
    store.close()


def test_not_a_store_is_input_error(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.sqlite"
    bogus.write_text("not sqlite at all, just text " * 100)
    with pytest.raises(InputError, match="not a judgment store"):
        Store(bogus)
    with pytest.raises(InputError, match="no such store"):
        Store(tmp_path / "absent.sqlite", readonly=True)


@pytest.mark.parametrize("name", ["odd ?#% name.sqlite", "what?mode=memory.sqlite"])
def test_any_file_name_is_the_file_it_names(tmp_path: Path, name: str) -> None:
    """The store is opened through a URI: characters that mean something there are quoted."""
    path = tmp_path / name
    with Store(path) as store:
        store.put(parts(), CASE, answer("Yes"))
    with Store(path, readonly=True) as store:
        assert store.get(parts()) is not None
    assert {p.name for p in tmp_path.iterdir()} <= {name, f"{name}-wal", f"{name}-shm"}


def test_writing_to_a_read_only_store_says_read_only(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    Store(path).close()
    with Store(path, readonly=True) as store, pytest.raises(StorageError, match="read-only"):
        store.put(parts(), CASE, answer("Yes"))


def test_secrets_never_reach_params() -> None:
    params = {"temperature": 0, "api_key": "sk-1", "extra_headers_token": "t", "top_p": 1}
    assert scrub_params(params) == {"temperature": 0, "top_p": 1}


class CountingJudge:
    """A cacheable stand-in for the llm judge: answers Yes, counts its calls."""

    def __init__(self, name: str = "llm:fake", temperature: float = 0.0):
        self.name = name
        self.temperature = temperature
        self.calls = 0

    def describe(self) -> dict:
        return {"name": "llm", "model": "fake"}

    def cache_identity(self) -> dict:
        return {"model": "fake", "params": {"temperature": self.temperature}, "schema": "s"}

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        self.calls += 1
        return DimensionVerdict(
            answers=[QuestionAnswer(question_id=q, answer="Yes") for q in task.question_ids]
        )


def _task(dimension_index: int = 0, rubric=None) -> JudgeTask:
    rubric = rubric or load_rubric()
    dim = rubric.dimensions[dimension_index]
    return JudgeTask(SPEC, SUB, dim, PromptRenderer().render(SPEC, SUB, dim))


def test_recorded_judge_asks_once_then_answers_from_the_store(tmp_path: Path) -> None:
    seen: list[LeafCall] = []
    inner = CountingJudge()
    with Store(tmp_path / "s.sqlite") as store:
        wrapped = RecordedJudge(inner, seen.append, store)
        first = asyncio.run(wrapped.judge(_task()))
        second = asyncio.run(wrapped.judge(_task()))
        refreshed = asyncio.run(
            RecordedJudge(inner, seen.append, store, refresh=True).judge(_task())
        )
    assert inner.calls == 2
    assert not first.cached and second.cached and not refreshed.cached
    assert [c.cached for c in seen] == [False, True, False]


def test_changed_rubric_question_or_param_misses(tmp_path: Path) -> None:
    rubric = load_rubric()
    dim = rubric.dimensions[0]
    edited_q = dim.questions[0].model_copy(update={"evaluator_hint": "a new hint"})
    edited = rubric.model_copy(
        update={
            "dimensions": [dim.model_copy(update={"questions": [edited_q, *dim.questions[1:]]})]
        }
    )
    hotter = CountingJudge(temperature=0.7)
    with Store(tmp_path / "s.sqlite") as store:
        base = KeyMaker(CountingJudge()).parts(_task())
        store.put(base, CASE, answer("Yes"))
        assert KeyMaker(CountingJudge()).parts(_task()) == base
        assert KeyMaker(CountingJudge()).parts(_task(rubric=edited)).differences(base) == [
            "prompt",
            "rubric",
        ]
        assert KeyMaker(hotter).parts(_task()).differences(base) == ["params"]
        assert KeyMaker(CountingJudge("llm:fake#2")).parts(_task()).differences(base) == ["judge"]
