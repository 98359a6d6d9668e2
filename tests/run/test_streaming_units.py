"""A run takes its units as they are made: the first calls go out while later submissions are
still being read, and the result is the one a run over the whole list gives."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLE

from ground_truth import InputError, iter_submissions, load_submissions
from judge import DimensionVerdict, EvalOptions, JudgeTask, RulesJudge, evaluate
from judge.judges.base import ask
from judge.run.shard import Shard


class Source:
    """Submissions handed over one at a time, counting how many were."""

    def __init__(self, submissions: list[Any], fail_after: int | None = None):
        self.submissions = submissions
        self.fail_after = fail_after
        self.given = 0

    def __iter__(self) -> Iterator[Any]:
        for sub in self.submissions:
            if self.given == self.fail_after:
                raise InputError("outputs/bad/agent_output.json", "invalid JSON")
            self.given += 1
            yield sub


class Watching:
    """The rules judge, noting how many submissions the source had given at its first call."""

    name = "watching"

    def __init__(self, source: Source | None = None):
        self.source = source
        self.given_at_first_call: int | None = None
        self.calls = 0
        self.rules = RulesJudge()

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": None, "params": {}}

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        if self.given_at_first_call is None and self.source is not None:
            self.given_at_first_call = self.source.given
        self.calls += 1
        await asyncio.sleep(0)
        return await ask(self.rules, task)


def _comparable(result) -> dict[str, Any]:
    data = result.model_dump(mode="json")
    data.pop("created_at")
    return data


@pytest.mark.parametrize("shard", [None, Shard(index=2, count=3)], ids=["whole", "shard"])
@pytest.mark.parametrize("granularity", ["submission", "dimension"])
def test_the_first_call_goes_out_before_the_last_submission_is_read_and_the_result_is_the_same(
    example_inputs, shard, granularity
) -> None:
    specs, submissions = example_inputs
    options = EvalOptions(granularity=granularity, shard=shard)
    whole = evaluate(specs, submissions, judge=Watching(), options=options)
    source = Source(list(reversed(submissions)))  # read in another order than the result's
    judge = Watching(source)
    streamed = evaluate(specs, source, judge=judge, options=options)
    assert judge.given_at_first_call is not None
    assert judge.given_at_first_call < len(submissions)
    assert source.given == len(submissions)
    assert _comparable(streamed) == _comparable(whole)


def test_a_bad_file_met_midway_stops_new_calls_and_is_raised_after_those_in_flight(
    example_inputs,
) -> None:
    specs, submissions = example_inputs
    source = Source(submissions, fail_after=len(submissions) // 2)
    judge = Watching(source)
    with pytest.raises(InputError, match="invalid JSON"):
        evaluate(specs, source, judge=judge)
    assert 0 < judge.calls <= len(submissions) // 2


def test_submissions_are_read_one_at_a_time_from_an_outputs_folder(tmp_path: Path) -> None:
    found = iter_submissions(EXAMPLE / "outputs")
    first = next(found)
    assert first.source["format"] == "native"
    rest = list(found)
    assert sorted(s.key for s in [first, *rest]) == sorted(
        s.key for s in load_submissions(EXAMPLE / "outputs")
    )


class Holding(Watching):
    """Holds every call a while, noting how many submissions were read when the first ends."""

    given_after_first_call: int | None = None

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        first = self.given_at_first_call is None
        verdict = await super().judge(task)
        await asyncio.sleep(0.05)
        if first:
            assert self.source is not None
            self.given_after_first_call = self.source.given
        return verdict


def test_until_the_first_call_ends_no_more_is_read_than_keeps_the_workers_busy(
    example_inputs,
) -> None:
    """Reading more would only slow whatever the first request waits for (an SDK importing)."""
    specs, submissions = example_inputs
    source = Source(submissions)
    judge = Holding(source)
    result = evaluate(specs, source, judge=judge, options=EvalOptions(max_concurrent=1))
    assert judge.given_after_first_call is not None
    assert judge.given_after_first_call < len(submissions)
    assert result.usage is None or result.usage.calls_made == len(submissions)
    assert len(result.cases) == len(submissions)
