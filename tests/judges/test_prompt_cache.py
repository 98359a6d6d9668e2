"""Provider prompt caching: a submission's dimension prompts share their start, Anthropic-like
models get it marked `cache_control`, and cached tokens reported by the provider reach each
call's usage, the run's usage and the progress line (counted once, priced by litellm)."""

from __future__ import annotations

import json

import pytest

from ground_truth import load_specs, load_submissions
from judge import EvalOptions, evaluate, load_rubric
from judge.judges.clients.litellm_client import import_litellm, needs_cache_marker
from judge.judges.clients.reply import cache_tokens as _cache_tokens
from judge.judges.llm import LLMJudge
from judge.run.progress import RunStats
from judge.testing import FakeProvider, FakeProviderConfig
from judge.testing.prefix_cache import MIN_TOKENS, PrefixCache

RUBRIC = load_rubric("sregym-v3")


def _messages(text: str) -> list[dict]:
    return [{"role": "system", "content": "S" * 400}, {"role": "user", "content": text}]


def test_prefix_cache_counts_the_start_an_earlier_prompt_shared() -> None:
    cache = PrefixCache()
    case = "ground truth and diagnosis " * 80
    assert cache.cached_tokens(_messages(case + "questions of D1"), 10_000) == 0
    second = cache.cached_tokens(_messages(case + "questions of D2"), 10_000)
    shared_tokens = (len("<system>") + 401 + len("<user>") + len(case)) // 4
    assert shared_tokens - 16 <= second <= shared_tokens, "whole 16-token blocks of the start"
    assert cache.cached_tokens(_messages(case + "questions of D2"), 10_000) >= second
    assert cache.cached_tokens(_messages("another case " * 200), 10_000) < MIN_TOKENS
    assert cache.cached_tokens(_messages(case + "x"), 200) == 200, "never more than the prompt"


def test_short_shared_starts_are_not_reported() -> None:
    cache = PrefixCache()
    short = [{"role": "user", "content": "a" * (MIN_TOKENS * 4 - 100) + "one"}]
    cache.cached_tokens(short, 1_000)
    again = [{"role": "user", "content": "a" * (MIN_TOKENS * 4 - 100) + "two"}]
    assert cache.cached_tokens(again, 1_000) == 0


def test_cache_tokens_are_read_once_from_either_spelling() -> None:
    litellm = import_litellm()
    openai = litellm.ModelResponse(
        usage=litellm.Usage(
            prompt_tokens=2000, completion_tokens=5, prompt_tokens_details={"cached_tokens": 1500}
        )
    )
    anthropic = litellm.ModelResponse(
        usage=litellm.Usage(
            prompt_tokens=2000,
            completion_tokens=5,
            cache_read_input_tokens=1500,
            cache_creation_input_tokens=300,
        )
    )
    plain = litellm.ModelResponse(usage=litellm.Usage(prompt_tokens=2000, completion_tokens=5))
    assert _cache_tokens(openai) == (1500, None)
    assert _cache_tokens(anthropic) == (1500, 300)
    assert _cache_tokens(plain)[0] in (None, 0)


@pytest.mark.parametrize(
    ("model", "marked"),
    [
        ("anthropic/claude-3-5-sonnet-20240620", True),
        ("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", True),
        ("openai/gpt-4o-mini", False),
        ("openai/fake-judge", False),
        ("ollama/llama3", False),
    ],
)
def test_only_providers_that_need_it_get_the_marker(model: str, marked: bool) -> None:
    assert needs_cache_marker(model) is marked


@pytest.fixture(scope="module")
def six_example_inputs(example_ground_truth, example_outputs):
    specs = load_specs(example_ground_truth)
    return specs, load_submissions(example_outputs)[:6]


def test_cached_tokens_reach_each_call_the_run_and_the_progress_line(six_example_inputs) -> None:
    specs, subs = six_example_inputs
    with FakeProvider(FakeProviderConfig(seed=3)) as server:
        judge = LLMJudge("openai/fake-judge", api_base=server.url, retry_wait=0.01)
        result = evaluate(
            specs,
            subs,
            rubric=RUBRIC,
            judge=judge,
            options=EvalOptions(max_concurrent=1, granularity="dimension"),
        )
        reported = [c.cached_tokens for c in server.calls]
        prompt_tokens = sum(c.prompt_tokens for c in server.calls)
    assert result.usage is not None
    per_call = [c.usage.cached_tokens or 0 for c in result.calls]
    assert per_call == reported
    assert result.usage.cached_tokens == sum(reported) > 0
    assert result.usage.prompt_tokens == prompt_tokens, "cached tokens are not added on top"
    assert result.usage.cached_tokens < result.usage.prompt_tokens
    by_case: dict[tuple[str, str], list[int]] = {}
    for call in result.calls:
        by_case.setdefault((call.incident_id, call.trial), []).append(call.usage.cached_tokens or 0)
    first_case = next(iter(by_case.values()))
    assert first_case[1] > first_case[0] and first_case[2] > first_case[0], (
        "the second and third dimension call of a submission find the first's start"
    )
    stats = RunStats(requests=1)
    stats.add_usage(900, 100, None, cached=600, written=0)
    assert "tokens 1,000 (cached 600)" in stats.line()


def test_anthropic_style_marker_keeps_the_text_and_caches_the_case(
    six_example_inputs, monkeypatch
) -> None:
    specs, subs = six_example_inputs
    litellm = import_litellm()
    sent: list[list[dict]] = []
    original = litellm.acompletion

    async def recording(**kwargs):
        sent.append(kwargs["messages"])
        return await original(**kwargs)

    monkeypatch.setattr(litellm, "acompletion", recording)
    with FakeProvider(FakeProviderConfig(seed=3)) as server:
        judge = LLMJudge(
            "openai/fake-judge", api_base=server.url, retry_wait=0.01, client="litellm"
        )
        judge.cache_marker = True  # as for anthropic/: the fake speaks OpenAI's protocol
        options = EvalOptions(max_concurrent=1, granularity="dimension")
        marked = evaluate(specs, subs[:1], rubric=RUBRIC, judge=judge, options=options)
    assert marked.overall.n_unscored_questions == 0
    user = next(m for m in sent[0] if m["role"] == "user")
    first, rest = user["content"]
    assert first["cache_control"] == {"type": "ephemeral"}
    assert first["text"].startswith("# Ground truth") and "END DIAGNOSIS" in first["text"]
    assert "cache_control" not in rest and rest["text"].lstrip().startswith("# Dimension D1")
    users = [next(m for m in messages if m["role"] == "user") for messages in sent]
    assert [u["content"][0]["text"] for u in users] == [first["text"]] * 3
    assert len(marked.calls) == 3 and sum(c.usage.cached_tokens or 0 for c in marked.calls) > 0
    assert json.dumps(sent[1][0]) == json.dumps(sent[0][0]), "the system message is plain"
