"""The llm judge's two clients behave the same (issue 26): every fault shape the fake provider
injects, every way a server refuses a reply format, tokens, cached tokens, cost and
log-probabilities give the same verdict and the same accounting through litellm and through
the `openai` SDK; and the price the openai client reads from litellm's bundled map is the
price litellm computes. The other llm-judge tests run through both clients too (the
`llm_client` fixture)."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from ground_truth import IncidentSpec, Submission
from judge import JudgeTask, PromptRenderer, load_rubric
from judge.judges.clients import MissingKeyError, choose, error_kind
from judge.judges.clients.prices import PRICES, cost, priced_entry
from judge.judges.llm import LLMJudge
from judge.judges.reply_format import REPLY_FORMATS, REPLY_MODELS, strict_format
from judge.testing import FakeProvider, FakeProviderConfig, FaultKind
from judge.testing.formats import LLAMA_CPP_PYTHON_FORMATS, REFUSAL_SHAPES

SPEC = IncidentSpec(
    id="checkout-port",
    ground_truth="[fault_spec] component=deployment/checkout; namespace=astronomy-shop || "
    "PRODUCT_CATALOG_ADDR points to port 8082 instead of 8080. " * 30,
)
SUB = Submission(incident_id="checkout-port", diagnosis="checkout's address uses port 8082.")
CLIENTS = ("litellm", "openai")


def task(index: int = 0) -> JudgeTask:
    dim = load_rubric().dimensions[index]
    return JudgeTask(SPEC, SUB, dim, PromptRenderer().render(SPEC, SUB, dim))


def judge(client: str, url: str, model: str = "openai/fake-judge", **options: Any) -> LLMJudge:
    settings = {"timeout": 5.0, "retry_wait": 0.01, "max_retries": 2, **options}
    return LLMJudge(model, api_base=url, api_key="sk-test", client=client, **settings)


def behaviour(client: str, config: FakeProviderConfig, **options: Any) -> dict[str, Any]:
    """What a judge did with two dimensions of one case against a fresh fake provider: every
    part of its verdicts and accounting, and what the provider saw."""
    with FakeProvider(config) as provider:
        llm = judge(client, provider.url, **options)
        assert llm.client.name == client
        verdicts = [asyncio.run(llm.judge(task(i))) for i in (0, 1)]
        calls = provider.calls
    return {
        "verdicts": [
            {
                "answers": [
                    (a.question_id, a.answer, (a.unscored_reason or "").split(":")[0])
                    for a in v.answers
                ],
                "attempts": v.attempts,
                "requests": v.requests,
                "error_kind": v.error_kind,
                "attempt_errors": v.attempt_errors,
                "usage": v.usage.model_dump() if v.usage else None,
            }
            for v in verdicts
        ],
        "provider": [(c.outcome, c.response_format, c.question_ids) for c in calls],
        "structured_output": llm.describe()["structured_output"],
        "replies": llm.describe()["replies"],
    }


def same_through_both(config: FakeProviderConfig, **options: Any) -> dict[str, Any]:
    seen = {client: behaviour(client, config, **options) for client in CLIENTS}
    assert seen["litellm"] == seen["openai"]
    return seen["openai"]


@pytest.mark.parametrize("fault", [kind.value for kind in FaultKind])
def test_every_fault_shape_gives_the_same_verdicts_through_both_clients(fault: str) -> None:
    config = FakeProviderConfig(fault_schedule=[fault], retry_after=0.01, hang_seconds=0.0, seed=1)
    seen = same_through_both(config)
    assert seen["provider"][0][0] == fault
    first = seen["verdicts"][0]
    if fault in {"401", "400"}:  # never retried; unscored, never No
        assert first["error_kind"] == {"401": "auth", "400": "bad_request"}[fault]
        assert first["requests"] == 1 and all(a[1] is None for a in first["answers"])
    else:  # retried or re-asked, then answered
        assert first["error_kind"] is None and all(a[1] for a in first["answers"])
        assert first["requests"] == 2


@pytest.mark.slow
def test_a_hang_past_the_timeout_is_a_timeout_through_both_clients() -> None:
    config = FakeProviderConfig(fault_schedule=["hang", "hang"], hang_seconds=3.0)
    seen = same_through_both(config, timeout=0.5, max_retries=1)
    assert seen["verdicts"][0]["error_kind"] == "timeout"
    assert seen["verdicts"][0]["attempt_errors"] == {"timeout": 2}


@pytest.mark.parametrize("shape", REFUSAL_SHAPES)
def test_every_refusal_shape_is_negotiated_the_same_through_both_clients(shape: str) -> None:
    config = FakeProviderConfig(response_formats=LLAMA_CPP_PYTHON_FORMATS, format_refusal=shape)
    seen = same_through_both(config)
    assert [c[0] for c in seen["provider"]] == ["format_refused", "ok", "ok"]
    assert seen["structured_output"] == "json_object+schema"


def test_a_server_taking_no_format_ends_in_prompt_mode_through_both_clients() -> None:
    seen = same_through_both(FakeProviderConfig(response_formats=("text",)))
    assert seen["structured_output"] == "prompt"


def test_tokens_cached_tokens_and_cost_are_the_same_through_both_clients() -> None:
    """A priced model at the fake provider: the second dimension's prompt starts like the
    first's, so the fake reports cached tokens, which both clients count once and price at
    the model's cache-read rate."""
    seen = same_through_both(FakeProviderConfig(seed=2), model="openai/gpt-4o-mini")
    second = seen["verdicts"][1]["usage"]
    assert second["cached_tokens"] > 0 and second["prompt_tokens"] > second["cached_tokens"]
    entry = PRICES.entry("gpt-4o-mini")
    assert entry is not None
    expected = cost(
        entry, second["prompt_tokens"], second["completion_tokens"], second["cached_tokens"]
    )
    assert second["cost_usd"] == pytest.approx(expected, rel=1e-9)
    unpriced = same_through_both(FakeProviderConfig(seed=2))
    assert unpriced["verdicts"][0]["usage"]["cost_usd"] is None  # unknown, never 0


@pytest.mark.parametrize("top", [None, 0, 3])
def test_log_probabilities_come_back_the_same_through_both_clients(top: int | None) -> None:
    request = {
        "model": "openai/fake-judge",
        "messages": [{"role": "user", "content": "Say OK."}],
        "temperature": 0,
    }
    replies = {}
    with FakeProvider(FakeProviderConfig(plain_reply="OK, and more.")) as provider:
        for client in CLIENTS:
            llm = judge(client, provider.url)
            replies[client] = asyncio.run(llm.client.complete(request, 5.0, top))
    assert replies["litellm"] == replies["openai"]
    logprobs = replies["openai"].logprobs
    assert replies["openai"].content == "OK, and more."
    if top is None:
        assert logprobs is None
    else:
        assert logprobs is not None and "".join(t.token for t in logprobs) == "OK, and more."
        assert all(len(t.top) <= top for t in logprobs)
        assert top == 0 or all(t.top and t.top[0][0] == t.token for t in logprobs)


def test_both_clients_ask_for_the_same_reply_format() -> None:
    from litellm.utils import type_to_response_format_param

    for order, model in REPLY_MODELS.items():
        sent = type_to_response_format_param(model)  # type: ignore[arg-type]
        assert json.dumps(strict_format(order)) == json.dumps(sent)  # in the same order


def test_the_shipped_reply_formats_are_the_sdks_conversion_of_the_reply_models() -> None:
    """judge/judges/reply_formats.json is written out so that no request waits for the
    `openai` SDK's import; after a change to a reply model, write it again with
    `{order: strict(model) for order, model in REPLY_MODELS.items()}` below,
    json.dumps(..., indent=1). The order of the properties is part of what is asked (the
    reply's field order), so it is compared too."""
    from openai.lib._pydantic import to_strict_json_schema

    def strict(model: Any) -> dict[str, Any]:
        schema = to_strict_json_schema(model)
        return {"type": "json_schema", "json_schema": {"schema": schema, "name": model.__name__, "strict": True}}  # fmt: skip

    shipped = json.loads(REPLY_FORMATS.read_text())
    expected = {order: strict(model) for order, model in REPLY_MODELS.items()}
    assert json.dumps(shipped) == json.dumps(expected)


@pytest.mark.parametrize(
    ("model", "api_base", "params", "chosen"),
    [
        ("openai/gpt-4o-mini", None, None, "openai"),
        ("openai/my-model", "http://127.0.0.1:8000/v1", None, "openai"),
        ("my-model", "http://127.0.0.1:8000/v1", None, "openai"),
        ("meta-llama/Llama-3.1-8B", "http://127.0.0.1:8000/v1", None, "openai"),
        ("GCP/gemini-2.5-pro", "https://gateway.example/v1", None, "openai"),
        ("anthropic/claude-sonnet-4", None, None, "litellm"),
        ("anthropic/claude-sonnet-4", "https://proxy.example", None, "litellm"),
        ("ollama/llama3", "http://127.0.0.1:11434", None, "litellm"),
        ("gpt-4o-mini", None, None, "litellm"),
        ("openai/gpt-4o-mini", None, {"mock_response": "{}"}, "litellm"),
    ],
)
def test_auto_chooses_the_openai_client_for_openai_compatible_endpoints(
    model: str, api_base: str | None, params: dict | None, chosen: str
) -> None:
    assert choose(model, api_base, "auto", params) == chosen
    assert choose(model, api_base, "litellm", params) == "litellm"
    assert choose(model, api_base, "openai", params) == "openai"
    with pytest.raises(ValueError, match="auto, litellm, openai"):
        choose(model, api_base, "requests")


def test_no_key_for_openai_is_an_auth_failure_before_any_request(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llm = LLMJudge("openai/gpt-4o-mini", client="openai", retry_wait=0.01)
    verdict = asyncio.run(llm.judge(task()))
    assert verdict.error_kind == "auth" and verdict.requests == 1
    assert "JUDGE_API_KEY" in (verdict.error or "")
    assert error_kind(MissingKeyError("x")) == "auth"


def _openai_chat_models() -> list[str]:
    import json

    assert PRICES.path is not None
    whole = json.loads(PRICES.path.read_text())
    return sorted(
        name
        for name, entry in whole.items()
        if isinstance(entry, dict)
        and entry.get("litellm_provider") == "openai"
        and entry.get("mode") == "chat"
        and entry.get("input_cost_per_token") is not None  # not a container's price
    )


@pytest.mark.parametrize(
    ("prompt", "completion", "cached", "reasoning"),
    [(1_200, 300, 0, 0), (3_000, 400, 2_048, 0), (300_000, 900, 150_000, 500)],
)
def test_the_openai_clients_price_is_litellms_for_every_openai_chat_model(
    prompt: int, completion: int, cached: int, reasoning: int
) -> None:
    from judge.judges.clients.litellm_client import import_litellm

    litellm = import_litellm()
    models = _openai_chat_models()
    assert len(models) > 50
    differ = {}
    for name in models:
        usage = litellm.Usage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=prompt + completion,
            prompt_tokens_details={"cached_tokens": cached},
            completion_tokens_details={"reasoning_tokens": reasoning} if reasoning else None,
        )
        response = litellm.ModelResponse(model=name, usage=usage)
        theirs = litellm.completion_cost(
            completion_response=response, model=name, custom_llm_provider="openai"
        )
        ours = cost(priced_entry([name]), prompt, completion, cached, reasoning)
        if ours is None or abs(ours - theirs) > 1e-9 * max(1.0, theirs):
            differ[name] = (ours, theirs)
    assert differ == {}
