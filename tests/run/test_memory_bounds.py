"""What a large LLM run keeps per call: prompts only while their call is in flight, the
result's records without a private copy of what every record shares, and, spilled, only
the scores and item numbers of its judgments and calls."""

from __future__ import annotations

import asyncio
import gc
import json
import tracemalloc
import weakref
from typing import Any

import pytest
from helpers import EXAMPLE

from ground_truth import load_specs, load_submissions
from judge import DimensionVerdict, EvalOptions, JudgeTask, PromptRenderer, QuestionAnswer, evaluate
from judge.checklist.judgment import Usage
from judge.checklist.prompts import Prompt
from judge.checklist.rubric import Dimension
from judge.run.limits import WORKERS_PER_SLOT

CONCURRENCY = 2


class CountingRenderer(PromptRenderer):
    """Remembers every prompt it renders, weakly: those still alive are held by someone."""

    def __init__(self) -> None:
        super().__init__()
        self.rendered: list[weakref.ref[Prompt]] = []

    def render(self, spec: Any, submission: Any, dimension: Dimension) -> Prompt:
        prompt = super().render(spec, submission, dimension)
        self.rendered.append(weakref.ref(prompt))
        return prompt

    def alive(self) -> int:
        return sum(ref() is not None for ref in self.rendered)


class PromptReadingJudge:
    """Reads its prompt like the llm judge, stays in flight a few loop turns, fills its usage
    field by field and parses its question ids from JSON (a new string each reply)."""

    name = "prompt-reader"

    def __init__(self, renderer: CountingRenderer) -> None:
        self.renderer = renderer
        self.most_alive = 0

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": None, "params": {}}

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        assert task.prompt.messages
        for _ in range(3):
            await asyncio.sleep(0)
        self.most_alive = max(self.most_alive, self.renderer.alive())
        usage = Usage(prompt_tokens=10, completion_tokens=5)
        usage.cost_usd = 0.001
        ids = json.loads(json.dumps(task.question_ids))
        answers = [QuestionAnswer(question_id=q, answer="Yes", evidence="x") for q in ids]
        return DimensionVerdict(answers=answers, usage=usage, requests=1)


def _run(submissions: int = 120) -> tuple[Any, PromptReadingJudge, CountingRenderer]:
    specs = load_specs(EXAMPLE / "ground_truth")
    examples = load_submissions(EXAMPLE / "outputs")
    subs = [
        examples[i % len(examples)].model_copy(update={"trial": f"s{i}"})
        for i in range(submissions)
    ]
    renderer = CountingRenderer()
    judge = PromptReadingJudge(renderer)
    options = EvalOptions(max_concurrent=CONCURRENCY)
    return evaluate(specs, subs, judge=judge, renderer=renderer, options=options), judge, renderer


def test_prompts_live_only_while_their_call_is_in_flight() -> None:
    result, judge, renderer = _run()
    calls = len(result.calls)
    assert len(renderer.rendered) == calls  # each prompt rendered once, when its call starts
    in_flight = CONCURRENCY * WORKERS_PER_SLOT
    assert 1 < judge.most_alive <= in_flight < calls
    assert renderer.alive() == 0  # none kept by the result


def test_call_records_share_one_usage_fields_set() -> None:
    result, _, _ = _run(20)
    usages = [c.usage for c in result.calls]
    assert all(u is not None and u.cost_usd == 0.001 for u in usages)
    assert len({id(u.__pydantic_fields_set__) for u in usages if u is not None}) == 1


def test_judgments_share_their_question_ids() -> None:
    result, _, _ = _run(20)
    ids = [j.question_id for j in result.judgments]
    assert len({id(q) for q in ids}) == len(set(ids)) < len(ids)


SPILLED_BYTES_PER_UNIT = 1200
"""What a result keeps per (submission, dimension) with its judgments and call records in the
spill file: the case's scores and item numbers, about 600 bytes (2,600 in memory)."""


def _retained(submissions: int, spill: bool) -> tuple[int, int]:
    """Bytes allocated by a rules run of `submissions` and still held by its result, and the
    run's units."""
    specs = load_specs(EXAMPLE / "ground_truth")
    examples = load_submissions(EXAMPLE / "outputs")
    subs = [
        examples[i % len(examples)].model_copy(update={"trial": f"s{i}"})
        for i in range(submissions)
    ]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = evaluate(specs, subs, options=EvalOptions(spill=spill, granularity="dimension"))
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    return held, len(result.calls)


def _bytes_per_unit(spill: bool) -> float:
    """Retained bytes per extra unit between a small and a larger run: the fixed costs (the
    rubric, the judge, caches filled on first use) cancel out."""
    small, small_units = _retained(100, spill)
    large, large_units = _retained(400, spill)
    return (large - small) / (large_units - small_units)


@pytest.mark.slow
def test_a_spilled_result_keeps_few_bytes_per_unit() -> None:
    evaluate(load_specs(EXAMPLE / "ground_truth"), load_submissions(EXAMPLE / "outputs"))
    spilled = _bytes_per_unit(spill=True)
    kept = _bytes_per_unit(spill=False)
    assert spilled < SPILLED_BYTES_PER_UNIT < kept, (spilled, kept)
