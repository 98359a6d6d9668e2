"""A rerun finds its stored answers without rendering a prompt: the store remembers which prompt
each call's render inputs gave (`judge.store.prompt_keys`). A store written before it did still
answers: its prompts are rendered once, then remembered."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLE

from ground_truth import load_specs, load_submissions
from judge import DimensionVerdict, EvalOptions, JudgeTask, PromptRenderer, QuestionAnswer, evaluate


class Stored:
    """A judge the store keeps (`Cacheable`) that answers from the prompt it reads."""

    name = "stored"

    def __init__(self) -> None:
        self.calls = 0

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": "m", "params": {}}

    def cache_identity(self) -> dict[str, Any]:
        return {"model": "m", "params": {}, "schema": "s"}

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        self.calls += 1
        answer = "Yes" if len(task.prompt.messages[-1]["content"]) % 2 else "No"
        return DimensionVerdict(
            answers=[
                QuestionAnswer(question_id=q, answer=answer, evidence="e", confidence="High")
                for q in task.question_ids
            ]
        )


class Counting(PromptRenderer):
    renders = 0

    def render(self, *args: Any, **kwargs: Any):
        Counting.renders += 1
        return super().render(*args, **kwargs)


def _run(store: Path, granularity: str) -> tuple[Any, int, int]:
    specs = load_specs(EXAMPLE / "ground_truth")
    subs = load_submissions(EXAMPLE / "outputs")
    judge = Stored()
    Counting.renders = 0
    options = EvalOptions(store=store, granularity=granularity)
    result = evaluate(specs, subs, judge=judge, renderer=Counting(), options=options)
    return result, judge.calls, Counting.renders


def _answers(result) -> list[tuple[str, str, str, str | None, str]]:
    return [
        (j.incident_id, j.trial, j.question_id, j.answer, j.prompt_hash) for j in result.judgments
    ]


@pytest.mark.parametrize("granularity", ["submission", "dimension"])
def test_a_rerun_renders_no_prompt_and_finds_every_answer(tmp_path: Path, granularity) -> None:
    store = tmp_path / "s.sqlite"
    first, asked, rendered = _run(store, granularity)
    assert asked == rendered > 0
    again, asked_again, rendered_again = _run(store, granularity)
    assert asked_again == 0 and rendered_again == 0
    assert again.usage is None or again.usage.cache_hits == asked
    assert _answers(again) == _answers(first)


def test_a_store_written_before_prompt_keys_still_answers(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    first, asked, _ = _run(store, "submission")
    with sqlite3.connect(store) as db:  # as the code before the table wrote it
        db.execute("DROP TABLE prompt_keys")
        db.execute("DELETE FROM migrations WHERE name = 'm005_prompt_keys'")
    again, asked_again, rendered = _run(store, "submission")
    assert asked_again == 0 and rendered == asked  # each prompt rendered once to find its key
    assert _answers(again) == _answers(first)
    third, asked_third, rendered_third = _run(store, "submission")
    assert asked_third == 0 and rendered_third == 0
    assert _answers(third) == _answers(first)


def test_other_templates_are_other_inputs(tmp_path: Path) -> None:
    renderer = PromptRenderer()
    spec = load_specs(EXAMPLE / "ground_truth")[0]
    sub = load_submissions(EXAMPLE / "outputs")[0]
    from judge import load_rubric

    dimension = load_rubric().dimensions[0]
    key = renderer.inputs_key(spec, sub, dimension)
    assert key == PromptRenderer().inputs_key(spec, sub, dimension)
    other = sub.model_copy(update={"diagnosis": sub.diagnosis + " more"})
    assert renderer.inputs_key(spec, other, dimension) != key
    evidence_first = PromptRenderer(reply_order="evidence-first")
    assert evidence_first.inputs_key(spec, sub, dimension) != key
    (tmp_path / "case.j2").write_text("{{ spec.id }} {{ diagnosis }}")
    custom = PromptRenderer(tmp_path)
    assert custom.inputs_key(spec, sub, dimension) != key
    assert custom.inputs_key(spec, sub, load_rubric().dimensions[1]) != custom.inputs_key(
        spec, sub, dimension
    )
