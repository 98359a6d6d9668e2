"""The `llm` judge: litellm's mock_response, and real HTTP to the local fake provider."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from helpers.fake_runs import llm_judge

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from helpers import EXAMPLE, one_incident_args

from ground_truth import IncidentSpec, Submission, load_specs, load_submissions
from judge import JudgeTask, PromptRenderer, evaluate, evaluate_submission, load_rubric
from judge.cli import main
from judge.judges.clients import Reply
from judge.judges.llm import LLMJudge
from judge.judges.repair import UnparseableReply, parse_reply
from judge.run.control import Gate
from judge.testing import FakeProvider, FakeProviderConfig

SPEC = IncidentSpec(
    id="checkout-port",
    ground_truth="[fault_spec] component=deployment/checkout; namespace=astronomy-shop || "
    "PRODUCT_CATALOG_ADDR points to port 8082 instead of 8080.",
)
SUB = Submission(
    incident_id="checkout-port", diagnosis="checkout's PRODUCT_CATALOG_ADDR uses port 8082."
)
D1 = ["D1-Q1", "D1-Q2", "D1-Q3"]


def reply(*items: tuple[str, str]) -> str:
    return json.dumps(
        {
            "answers": [
                {"id": i, "answer": a, "evidence": "port 8082", "confidence": "High"}
                for i, a in items
            ]
        }
    )


def task(dimension_index: int = 0) -> JudgeTask:
    dim = load_rubric().dimensions[dimension_index]
    return JudgeTask(SPEC, SUB, dim, PromptRenderer().render(SPEC, SUB, dim))


# ------------------------------------------------------------------ parsing


def test_parse_reply_accepts_each_id_once() -> None:
    parsed = parse_reply(reply(("D1-Q2", "No"), ("D1-Q1", "Yes"), ("D1-Q3", "Yes")), D1)
    answers = parsed.answers
    assert parsed.clean
    assert [(a.question_id, a.answer) for a in answers] == [
        ("D1-Q1", "Yes"),
        ("D1-Q2", "No"),
        ("D1-Q3", "Yes"),
    ]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (reply(("D1-Q1", "Yes"), ("D1-Q2", "Yes")), "missing ids: D1-Q3"),
        (
            reply(("D1-Q1", "Yes"), ("D1-Q1", "No"), ("D1-Q2", "Yes"), ("D1-Q3", "Yes")),
            "duplicate ids: D1-Q1",
        ),
        (
            reply(("D1-Q1", "Yes"), ("D1-Q2", "Yes"), ("D1-Q3", "Yes"), ("D9-Q9", "Yes")),
            "unknown ids: D9-Q9",
        ),
        ("I think the diagnosis is good.", "not the requested JSON"),
        ('{"answers": [{"id": "D1-Q1", "answer": "Maybe"', "not the requested JSON"),
        ("", "empty reply"),
    ],
)
def test_parse_reply_rejects_bad_replies(content: str, problem: str) -> None:
    with pytest.raises(UnparseableReply, match=problem):
        parse_reply(content, D1)


# ------------------------------------------------------------------ litellm mock_response


def test_llm_judge_through_litellm_mock_response() -> None:
    judge = LLMJudge(
        "openai/gpt-4o-mini",
        extra_params={"mock_response": reply(("D1-Q1", "Yes"), ("D1-Q2", "Yes"), ("D1-Q3", "No"))},
    )
    verdict = asyncio.run(judge.judge(task()))
    assert [a.answer for a in verdict.answers] == ["Yes", "Yes", "No"]
    assert verdict.attempts == 1 and verdict.error is None
    assert verdict.answers[0].evidence == "port 8082"


def test_unparseable_mock_reply_is_unscored_after_bounded_reasks() -> None:
    judge = LLMJudge("openai/gpt-4o-mini", max_reasks=2, extra_params={"mock_response": "not json"})
    verdict = asyncio.run(judge.judge(task()))
    assert verdict.attempts == 3
    assert verdict.error_kind == "unparseable"
    assert all(a.answer is None and "unparseable" in a.unscored_reason for a in verdict.answers)


# ------------------------------------------------------------------ real HTTP to the fake provider


def test_good_reply_over_http(llm_client) -> None:
    with FakeProvider(FakeProviderConfig(seed=1)) as provider:
        verdict = asyncio.run(llm_judge(provider, client=llm_client).judge(task(1)))
        calls = provider.calls
    assert all(a.answer in {"Yes", "No"} for a in verdict.answers)
    assert [a.question_id for a in verdict.answers] == ["D2-Q1", "D2-Q2", "D2-Q3"]
    assert len(calls) == 1 and calls[0].question_ids == ["D2-Q1", "D2-Q2", "D2-Q3"]
    assert calls[0].response_format == "json_schema"
    assert verdict.usage.prompt_tokens > 0


@pytest.mark.parametrize("fault", ["malformed", "truncated", "refusal"])
def test_bad_reply_is_reasked_then_scored(fault: str, llm_client) -> None:
    with FakeProvider(FakeProviderConfig(fault_schedule=[fault])) as provider:
        verdict = asyncio.run(llm_judge(provider, client=llm_client).judge(task()))
        outcomes = [c.outcome for c in provider.calls]
    assert outcomes == [fault, "ok"]
    assert verdict.attempts == 2 and all(a.answer for a in verdict.answers)


def test_always_bad_reply_is_unscored_with_reason(llm_client) -> None:
    with FakeProvider(FakeProviderConfig(fault_schedule=["malformed"] * 10)) as provider:
        verdict = asyncio.run(llm_judge(provider, client=llm_client, max_reasks=2).judge(task()))
        n_calls = len(provider.calls)
    assert n_calls == 3
    assert verdict.error_kind == "unparseable"
    assert all(a.answer is None for a in verdict.answers)


def test_missing_then_duplicate_ids_are_reasked_until_valid(monkeypatch) -> None:
    replies = iter(
        [
            reply(("D1-Q1", "Yes"), ("D1-Q2", "Yes")),
            reply(("D1-Q1", "Yes"), ("D1-Q1", "No"), ("D1-Q2", "Yes"), ("D1-Q3", "No")),
            reply(("D1-Q1", "Yes"), ("D1-Q2", "Yes"), ("D1-Q3", "No")),
        ]
    )
    seen: list[list[dict]] = []

    async def scripted(messages, question_ids):
        seen.append(messages)
        return Reply(content=next(replies), prompt_tokens=10, completion_tokens=5)

    judge = LLMJudge("openai/gpt-4o-mini", max_reasks=2)
    monkeypatch.setattr(judge, "_call", scripted)
    verdict = asyncio.run(judge.judge(task()))
    assert verdict.attempts == 3
    assert [a.answer for a in verdict.answers] == ["Yes", "Yes", "No"]
    assert "missing ids: D1-Q3" in seen[1][-1]["content"]
    assert "duplicate ids: D1-Q1" in seen[2][-1]["content"]


def test_transient_errors_are_retried_not_answered_no(llm_client) -> None:
    with FakeProvider(
        FakeProviderConfig(fault_schedule=["500", "429", "503"], retry_after=0)
    ) as provider:
        verdict = asyncio.run(llm_judge(provider, client=llm_client).judge(task()))
        outcomes = [c.outcome for c in provider.calls]
    assert outcomes == ["500", "429", "503", "ok"]
    assert verdict.error is None and all(a.answer for a in verdict.answers)


def test_auth_error_is_unscored_and_not_retried(llm_client) -> None:
    with FakeProvider(FakeProviderConfig(fault_schedule=["401"] * 5)) as provider:
        verdict = asyncio.run(llm_judge(provider, client=llm_client).judge(task()))
        n_calls = len(provider.calls)
    assert n_calls == 1
    assert verdict.error_kind == "auth"
    assert "openai/fake-judge" in verdict.error
    assert all(a.answer is None for a in verdict.answers)


@pytest.mark.slow
def test_whole_example_through_fake_provider(llm_client) -> None:
    specs = load_specs(EXAMPLE / "ground_truth")
    subs = load_submissions(EXAMPLE / "outputs")
    with FakeProvider(FakeProviderConfig(seed=3)) as provider:
        result = evaluate(specs, subs, judge=llm_judge(provider, client=llm_client))
        n_calls = len(provider.calls)
    assert n_calls == len(subs)  # one call per submission, the default
    assert len(result.judgments) == 9 * len(subs)
    assert all(j.answer in {"Yes", "No"} for j in result.judgments)
    assert result.config["judge"]["model"] == "openai/fake-judge"


def test_cli_uses_env_model_and_never_writes_the_key(
    tmp_path, monkeypatch, capsys, llm_client
) -> None:
    secret = "sk-very-secret-key-123"
    with FakeProvider(FakeProviderConfig(seed=2)) as provider:
        monkeypatch.setenv("JUDGE_MODEL", "openai/fake-judge")
        monkeypatch.setenv("JUDGE_BASE_URL", provider.url)
        monkeypatch.setenv("JUDGE_API_KEY", secret)
        out = tmp_path / "results.json"
        code = main(one_incident_args(out, "--client", llm_client))
        assert provider.calls and all(c.auth_present for c in provider.calls)
    assert code == 0
    printed = capsys.readouterr().out
    assert "llm:openai/fake-judge" in printed
    assert secret not in out.read_text() and secret not in printed


def test_cli_exits_3_when_every_call_fails(tmp_path, monkeypatch, llm_client) -> None:
    with FakeProvider(FakeProviderConfig(fault_schedule=["401"] * 100)) as provider:
        code = main(
            one_incident_args(
                tmp_path / "r.json",
                "--judge-model",
                "openai/fake-judge",
                "--api-base",
                provider.url,
                "--client",
                llm_client,
            )
        )
    assert code == 3
    result = json.loads((tmp_path / "r.json").read_text())
    # a 401 stops the run at once: only the calls already in flight (<= --max-concurrent) fail
    assert set(result["errors"]) == {"auth"} and result["errors"]["auth"] <= 5
    assert result["complete"] is False and result["stopped"]["kind"] == "provider"
    assert all(j["answer"] is None for j in result["judgments"])


def test_evaluate_submission_with_llm_judge(llm_client) -> None:
    with FakeProvider(FakeProviderConfig(answer_policy=lambda qid, messages: "Yes")) as provider:
        case = evaluate_submission(SPEC, SUB, judge=llm_judge(provider, client=llm_client))
    assert case.composite == pytest.approx(1.0) and case.passed


class _OrderedClient:
    """A client whose requests take a moment, noting when each one's first byte leaves."""

    name = "openai"

    def __init__(self, events: list[str]) -> None:
        self.events = events

    def prefetch(self) -> None:
        pass

    async def ready(self) -> None:
        pass

    def cache_marker(self) -> bool:
        return False

    async def complete(self, request, timeout, logprobs=None) -> Reply:
        for _ in range(3):  # httpx yields to the loop on a request's way out (its pool's locks)
            await asyncio.sleep(0)
        self.events.append("request")
        await asyncio.sleep(0.01)
        return Reply(content=reply(("D1-Q1", "Yes"), ("D1-Q2", "Yes"), ("D1-Q3", "No")))

    async def aclose(self) -> None:
        pass


def test_the_call_waiting_for_the_slot_sends_before_a_finished_call_reads_its_reply(
    monkeypatch,
) -> None:
    """The handover: reading, scoring and storing a reply waits until the request that took
    its slot has gone out (`HANDOVER_SECONDS`, lengthened here so that a slow machine cannot
    change the order), not the other way round."""
    monkeypatch.setattr("judge.judges.llm.HANDOVER_SECONDS", 0.5)
    events: list[str] = []
    judge = LLMJudge("openai/m", api_base="http://fake", structured_output="json_schema")
    judge.client = _OrderedClient(events)
    judge.gate = Gate(max_concurrent=1)

    async def one() -> None:
        verdict = await judge.judge(task())
        assert [a.answer for a in verdict.answers] == ["Yes", "Yes", "No"]
        events.append("read")

    async def two() -> None:
        await asyncio.gather(one(), one())

    asyncio.run(two())
    assert events == ["request", "request", "read", "read"]
