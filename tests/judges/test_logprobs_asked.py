"""Token log-probabilities are asked of a provider only when something reads them: a reply with
them is ~30x larger, and reading it was the largest part of a call's CPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import EXAMPLE

from ground_truth import load_specs, load_submissions
from judge import evaluate
from judge.cli import main
from judge.judges.cascade import cascade_judge
from judge.judges.confidence import STATED, TOP_LOGPROBS
from judge.judges.llm import LLMJudge
from judge.judges.selective.identity import identity_of
from judge.testing import FakeProvider, FakeProviderConfig


def _sure(model: str, qid: str, messages, answer: str) -> float:
    return 0.97


def _asked(judge: LLMJudge) -> list[int | None]:
    """What each request of `judge` asked for (`logprobs` of the client's `complete`)."""
    seen: list[int | None] = []
    complete = judge.client.complete

    async def recording(request, timeout, logprobs=None):
        seen.append(logprobs)
        return await complete(request, timeout, logprobs)

    judge.client.complete = recording  # type: ignore[method-assign]
    return seen


@pytest.mark.parametrize("logprobs", [False, True])
def test_log_probabilities_are_asked_only_when_the_judge_is_told_to(logprobs: bool) -> None:
    specs = load_specs(EXAMPLE / "ground_truth")
    subs = load_submissions(EXAMPLE / "outputs")[:2]
    with FakeProvider(FakeProviderConfig(confidence_policy=_sure)) as provider:
        judge = LLMJudge("openai/fake", api_base=provider.url, api_key="sk-x", logprobs=logprobs)
        asked = _asked(judge)
        result = evaluate(specs, subs, judge=judge)
    assert asked == [TOP_LOGPROBS if logprobs else None] * len(subs)
    scores = {j.confidence_score for j in result.judgments if j.answer is not None}
    assert scores == ({0.97} if logprobs else {STATED[j.confidence] for j in result.judgments})  # type: ignore[index]


def test_confidence_logprobs_keys_its_answers_apart_in_the_store(tmp_path: Path) -> None:
    subs = tmp_path / "subs.jsonl"
    subs.write_text(load_submissions(EXAMPLE / "outputs")[0].model_dump_json() + "\n")
    argv = ["eval", "--ground-truth", str(EXAMPLE / "ground_truth"), "--outputs", str(subs),
            "--judge-model", "openai/fake", "--no-progress", "--store", str(tmp_path / "s.sqlite"),
            "--result-file", str(tmp_path / "r.json")]  # fmt: skip
    with FakeProvider(FakeProviderConfig(confidence_policy=_sure)) as provider:
        url = ["--api-base", provider.url]
        assert main([*argv, *url]) == 0
        assert main([*argv, *url]) == 0
        stated = len(provider.calls)
        assert main([*argv, *url, "--confidence", "logprobs"]) == 0
        assert main([*argv, *url, "--confidence", "logprobs"]) == 0
        both = len(provider.calls)
    result = json.loads((tmp_path / "r.json").read_text())
    assert stated == 1 and both == 2, "each setting asked once, then answered by the store"
    assert {j["confidence_score"] for j in result["judgments"] if j["answer"]} == {0.97}
    assert result["config"]["judge"]["logprobs"] is True


def test_a_cascade_asks_its_llm_stages_for_them() -> None:
    cascade = cascade_judge("rules,openai/fake", api_base="http://127.0.0.1:9", logprobs=False)
    llm = cascade.stages[1]
    assert isinstance(llm, LLMJudge) and llm.logprobs
    assert "confidence" not in identity_of(llm.describe(), llm.name).params


def test_a_calibration_of_stated_levels_is_not_a_cascade_stages() -> None:
    """A judge that did not ask is marked; one that asked, and a result made before they were
    optional (no `logprobs` in its description), are not: old calibrations still load."""
    described = {"name": "llm", "model": "openai/fake", "params": {"temperature": 0.0}}
    stated = identity_of({**described, "logprobs": False}, "llm:openai/fake")
    asked = identity_of({**described, "logprobs": True}, "llm:openai/fake")
    assert stated.params["confidence"] == "stated"
    assert asked == identity_of(described, "llm:openai/fake")
    assert stated.differences(asked) == [
        "params: {'temperature': 0.0, 'confidence': 'stated'} != {'temperature': 0.0}"
    ]
