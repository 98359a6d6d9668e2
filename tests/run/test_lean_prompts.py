"""Prompts are rendered only for judges that read them, and once per call (issue 16)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.lean import SMALL_SPECS, PromptReader, small_submissions

import judge.run.plan as engine
from ground_truth import IncidentSpec, Submission
from judge import EvalOptions, PromptRenderer, evaluate
from judge.checklist.prompts import Prompt


class CountingRenderer(PromptRenderer):
    def __init__(self) -> None:
        super().__init__()
        self.renders = 0

    def render(self, spec: IncidentSpec, submission: Submission, dimension: Any) -> Prompt:
        self.renders += 1
        return super().render(spec, submission, dimension)


def run(subs: list[Submission], judge: Any, store: Path | None, renderer: PromptRenderer):
    options = EvalOptions(store=store, max_concurrent=4, granularity="dimension")
    return evaluate(SMALL_SPECS, subs, judge=judge, renderer=renderer, options=options)


def test_the_rules_judge_renders_no_prompt() -> None:
    renderer = CountingRenderer()
    result = evaluate(SMALL_SPECS, small_submissions(6), renderer=renderer)
    assert renderer.renders == 0
    assert len(result.judgments) == 6 * 9
    assert {j.prompt_hash for j in result.judgments} == {""}


def test_a_judge_that_reads_the_prompt_gets_it_rendered_once_per_call() -> None:
    renderer, reader = CountingRenderer(), PromptReader()
    result = run(small_submissions(4), reader, None, renderer)
    assert renderer.renders == len(reader.asked) == 12
    assert {j.prompt_hash for j in result.judgments} == set(reader.asked)


def test_a_run_with_a_store_renders_each_prompt_once(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    first, reader = CountingRenderer(), PromptReader()
    run(small_submissions(4), reader, store, first)
    assert first.renders == len(reader.asked) == 12

    rerun, again = CountingRenderer(), PromptReader()
    result = run(small_submissions(4), again, store, rerun)
    assert again.asked == [] and result.usage.cache_hits == 12
    assert rerun.renders == 0  # the store knows each prompt's hash by what it is rendered from
    assert all(len(j.prompt_hash) == 64 for j in result.judgments)

    resumed, more = CountingRenderer(), PromptReader()
    result = run(small_submissions(6), more, store, resumed)
    assert len(more.asked) == result.usage.calls_planned == 6
    assert resumed.renders == 6  # the new ones, kept by planning for their calls


def test_past_the_kept_prompts_a_call_renders_its_prompt_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "s.sqlite"
    run(small_submissions(1), PromptReader(), store, PromptRenderer())
    monkeypatch.setattr(engine, "KEEP_PROMPTS", 2)
    renderer, reader = CountingRenderer(), PromptReader()
    result = run(small_submissions(4), reader, store, renderer)
    assert len(reader.asked) == 9 and result.usage.cache_hits == 3
    assert renderer.renders == 9 + 9 - 2  # the 3 stored ones are not rendered
    assert result.complete


def test_a_store_without_this_judge_renders_nothing_to_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "s.sqlite"
    run(small_submissions(2), PromptReader("other"), store, PromptRenderer())
    monkeypatch.setattr(engine, "KEEP_PROMPTS", 0)  # a planning render would show twice
    renderer, reader = CountingRenderer(), PromptReader()
    result = run(small_submissions(2), reader, store, renderer)
    assert result.usage.calls_planned == 6 and renderer.renders == len(reader.asked) == 6
