"""The rules judge in a child process (`judge.run.isolated`, issue 27): the same answers as in
the parent, a stop abandons the calls in flight and kills the child at once, and a child that
dies costs its calls (a judge error each), not the run."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest
from helpers import EXAMPLE

from ground_truth import load_specs, load_submissions, match_submissions
from judge import JudgeTask, RulesJudge, load_rubric
from judge.checklist.prompts import Prompt
from judge.judges.base import RunStopped
from judge.run.control import Gate
from judge.run.isolated import IsolatedJudge
from judge.run.rules_child import REPLY_EVERY


def example_tasks() -> list[JudgeTask]:
    specs = load_specs(EXAMPLE / "ground_truth")
    pairs = match_submissions(specs, load_submissions(EXAMPLE / "outputs")).pairs
    rubric = load_rubric("sregym-v3")
    empty = Prompt(messages=[], hash="")
    return [JudgeTask(spec, sub, d, empty) for spec, sub in pairs for d in rubric.dimensions]


@pytest.mark.slow
def test_the_child_answers_as_the_judge_does() -> None:
    tasks = example_tasks()

    async def asked() -> list:
        isolated = IsolatedJudge(RulesJudge(), Gate())
        try:
            return list(await asyncio.gather(*(isolated.judge(t) for t in tasks)))
        finally:
            isolated.close()

    assert asyncio.run(asked()) == [RulesJudge().answer(t) for t in tasks]


def test_a_stop_abandons_the_calls_in_flight_and_kills_the_child() -> None:
    task = example_tasks()[0]
    long = task.submission.model_copy(update={"diagnosis": task.submission.diagnosis * 2400})
    slow = JudgeTask(task.spec, long, task.dimension, task.prompt)

    async def stopped() -> tuple[list, int | None]:
        gate = Gate()
        isolated = IsolatedJudge(RulesJudge(), gate)
        calls = [asyncio.ensure_future(isolated.judge(t)) for t in (slow, task, task)]
        while isolated._child is None or isolated._child.unsent():
            await asyncio.sleep(0.01)  # until the tasks have gone to the child
        child = isolated._child
        gate.stop("interrupted", "interrupted by SIGTERM")
        outcomes = await asyncio.gather(*calls, return_exceptions=True)
        assert child is not None
        code = child._process.poll()
        isolated.close()
        return outcomes, code

    outcomes, code = asyncio.run(stopped())
    assert all(isinstance(o, RunStopped) for o in outcomes)
    assert code == -signal.SIGKILL


def test_a_stop_in_a_batch_keeps_the_answers_already_sent_back() -> None:
    """The calls asked together go to the child in one message; it sends the answers back
    `REPLY_EVERY` at a time, so a stop during the batch's slow call abandons that call and the
    ones after it, while those answered before it keep their answers."""
    tasks = example_tasks()
    quick = tasks[:REPLY_EVERY]
    long = quick[0].submission.model_copy(
        update={"diagnosis": quick[0].submission.diagnosis * 2400}
    )
    slow = JudgeTask(quick[0].spec, long, quick[0].dimension, quick[0].prompt)

    async def stopped() -> list:
        gate = Gate()
        isolated = IsolatedJudge(RulesJudge(), gate)
        calls = [asyncio.ensure_future(isolated.judge(t)) for t in (*quick, slow, tasks[-1])]
        await asyncio.wait(calls[:REPLY_EVERY])
        gate.stop("interrupted", "interrupted by SIGTERM")
        outcomes = await asyncio.gather(*calls, return_exceptions=True)
        isolated.close()
        return outcomes

    outcomes = asyncio.run(stopped())
    assert outcomes[:REPLY_EVERY] == [RulesJudge().answer(t) for t in quick]
    assert all(isinstance(o, RunStopped) for o in outcomes[REPLY_EVERY:])


def test_a_child_that_dies_costs_its_calls_and_the_next_call_starts_another() -> None:
    tasks = example_tasks()[:3]

    async def died() -> tuple[object, object]:
        isolated = IsolatedJudge(RulesJudge(), Gate())
        await isolated.judge(tasks[0])
        assert isolated._child is not None
        os.kill(isolated._child._process.pid, signal.SIGKILL)
        try:
            lost = await isolated.judge(tasks[1])
        except RuntimeError as exc:
            lost = exc
        again = await isolated.judge(tasks[2])
        isolated.close()
        return lost, again

    lost, again = asyncio.run(died())
    assert isinstance(lost, RuntimeError) and "the rules judge's process" in str(lost)
    assert again == RulesJudge().answer(tasks[2])


def test_a_call_after_the_stop_starts_no_child() -> None:
    async def late() -> object:
        gate = Gate()
        gate.stop("interrupted", "interrupted by SIGINT")
        isolated = IsolatedJudge(RulesJudge(), gate)
        try:
            return await isolated.judge(example_tasks()[0])
        except RunStopped as exc:
            return exc, isolated._child

    outcome = asyncio.run(late())
    assert isinstance(outcome, tuple) and isinstance(outcome[0], RunStopped)
    assert outcome[1] is None
