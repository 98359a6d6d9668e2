"""Structured-output negotiation against the fake provider's refusal shapes (real HTTP)."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from helpers.fake_runs import llm_judge

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from helpers import EXAMPLE, one_incident_args

from ground_truth import IncidentSpec, Submission, load_specs, load_submissions
from judge import EvalOptions, JudgeTask, PromptRenderer, evaluate, load_rubric
from judge.cli import main
from judge.judges.llm import LLMJudge
from judge.judges.structured import Negotiation, is_format_refusal
from judge.testing import FakeProvider, FakeProviderConfig
from judge.testing.formats import LLAMA_CPP_PYTHON_FORMATS, REFUSAL_SHAPES

SPEC = IncidentSpec(
    id="checkout-port",
    ground_truth="[fault_spec] component=deployment/checkout || PRODUCT_CATALOG_ADDR uses 8082.",
)
SUB = Submission(incident_id="checkout-port", diagnosis="checkout's address uses port 8082.")

# The body llama-cpp-python 0.3.36's server sent (HTTP 500) for response_format json_schema,
# captured from a local server of that version; only the install path is shortened.
LLAMA_CPP_PYTHON_BODY = (
    "{\"error\":{\"message\":\"1 validation error:\\n  {'type': 'literal_error', 'loc': "
    "('body', 'response_format', 'type'), 'msg': \\\"Input should be 'text' or "
    "'json_object'\\\", 'input': 'json_schema', 'ctx': {'expected': \\\"'text' or "
    "'json_object'\\\"}}\\n\\n  File \\\"/venv/lib/python3.11/site-packages/llama_cpp/server/"
    'app.py\\", line 376, in create_chat_completion\\n    POST /v1/chat/completions",'
    '"type":"internal_server_error","param":null,"code":null}}'
)


def task() -> JudgeTask:
    dim = load_rubric().dimensions[0]
    return JudgeTask(SPEC, SUB, dim, PromptRenderer().render(SPEC, SUB, dim))


def server(**config) -> FakeProvider:
    return FakeProvider(FakeProviderConfig(**config))


def test_fake_refusal_is_llama_cpp_pythons_body() -> None:
    import urllib.error
    import urllib.request

    with server(response_formats=LLAMA_CPP_PYTHON_FORMATS, format_refusal="llama-cpp-python") as p:
        body = {
            "model": "fake-judge",
            "messages": [{"role": "user", "content": "hi"}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "x"}},
        }
        request = urllib.request.Request(
            p.url + "/chat/completions",
            json.dumps(body).encode(),
            {"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=5)
        body = caught.value.read()  # before the server stops and closes the connection
    assert caught.value.code == 500
    assert json.loads(body) == json.loads(LLAMA_CPP_PYTHON_BODY)


@pytest.mark.parametrize("shape", REFUSAL_SHAPES)
def test_each_refusal_shape_steps_down_once_and_is_never_retried(shape: str, llm_client) -> None:
    with server(response_formats=LLAMA_CPP_PYTHON_FORMATS, format_refusal=shape) as provider:
        judge = llm_judge(provider, client=llm_client)
        verdict = asyncio.run(judge.judge(task()))
        calls = provider.calls
    assert [c.outcome for c in calls] == ["format_refused", "ok"]
    assert [c.response_format for c in calls] == ["json_schema", "json_object"]
    assert verdict.error is None and all(a.answer for a in verdict.answers)
    assert verdict.requests == 2 and verdict.attempt_errors == {"format_refused": 1}
    described = judge.describe()
    assert described["structured_output"] == "json_object+schema"
    assert described["structured_output_negotiation"]["refused"] == ["json_schema"]


def test_a_server_without_structured_output_ends_in_prompt_mode(llm_client) -> None:
    with server(response_formats=("text",), format_refusal="openai-400") as provider:
        judge = llm_judge(provider, client=llm_client)
        first = asyncio.run(judge.judge(task()))
        second = asyncio.run(judge.judge(task()))
        calls = provider.calls
    assert [c.outcome for c in calls] == ["format_refused"] * 3 + ["ok", "ok"]
    assert [c.response_format for c in calls] == [
        "json_schema",
        "json_object",
        "json_object",
        None,
        None,
    ]
    assert first.error is None and second.error is None and second.requests == 1
    assert judge.describe()["structured_output"] == "prompt"


@pytest.mark.slow
def test_a_whole_run_meets_the_refusal_once_and_names_the_mode(llm_client) -> None:
    specs = load_specs(EXAMPLE / "ground_truth")
    subs = load_submissions(EXAMPLE / "outputs")
    config = {"response_formats": LLAMA_CPP_PYTHON_FORMATS, "format_refusal": "llama-cpp-python"}
    with server(**config) as provider:
        result = evaluate(
            specs,
            subs,
            judge=llm_judge(provider, client=llm_client),
            options=EvalOptions(max_concurrent=5, granularity="dimension"),
        )
        outcomes = [c.outcome for c in provider.calls]
    assert outcomes.count("format_refused") == 1
    assert outcomes.count("ok") == 3 * len(subs)
    assert result.usage.retries == 0 and not result.errors
    assert result.attempt_errors == {"format_refused": 1}
    assert result.config["judge"]["structured_output"] == "json_object+schema"
    assert result.complete and all(j.answer for j in result.judgments)


def test_a_forced_format_the_server_refuses_is_unscored_at_once(llm_client) -> None:
    with server(response_formats=LLAMA_CPP_PYTHON_FORMATS, format_refusal="llama-cpp-python") as p:
        verdict = asyncio.run(
            llm_judge(p, client=llm_client, structured_output="json_schema").judge(task())
        )
        n_calls = len(p.calls)
    assert n_calls == 1
    assert verdict.error_kind == "bad_request"
    assert "--structured-output json_schema" in verdict.error
    assert all(a.answer is None for a in verdict.answers)


def test_cli_structured_output_prompt_sends_no_response_format(tmp_path, llm_client) -> None:
    out = tmp_path / "r.json"
    with server(seed=4) as provider:
        code = main(
            one_incident_args(
                out,
                "--judge-model",
                "openai/fake-judge",
                "--api-base",
                provider.url,
                "--structured-output",
                "prompt",
                "--client",
                llm_client,
            )
        )
        formats = {c.response_format for c in provider.calls}
    assert code == 0 and formats == {None}
    assert json.loads(out.read_text())["config"]["judge"]["structured_output"] == "prompt"


def test_schema_accepted_but_ignored_is_repaired_and_counted(llm_client) -> None:
    with server(response_formats=LLAMA_CPP_PYTHON_FORMATS, ignore_schema=True) as provider:
        judge = llm_judge(provider, client=llm_client)
        verdict = asyncio.run(judge.judge(task()))
        calls = provider.calls
    assert [c.outcome for c in calls] == ["format_refused", "ok"]
    assert verdict.error is None and all(a.answer in {"Yes", "No"} for a in verdict.answers)
    described = judge.describe()
    assert described["replies"]["repaired"] == 1 and described["replies"]["clean"] == 0
    assert {"code fence", "answers wrapped in another key", "answer case"} <= set(
        described["repairs"]
    )


def test_the_mode_is_not_part_of_the_store_key(tmp_path) -> None:
    """The messages are the same in every mode; only server-side enforcement differs, which
    is a property of the endpoint, and the endpoint is not part of the key either."""
    specs = load_specs(EXAMPLE / "ground_truth" / "incorrect_image.yaml")
    subs = load_submissions(EXAMPLE / "outputs")
    store = tmp_path / "s.sqlite"
    with server(response_formats=("text",)) as provider:
        first = evaluate(specs, subs, judge=llm_judge(provider), options=EvalOptions(store=store))
    assert first.config["judge"]["structured_output"] == "prompt"
    with server() as provider:
        again = evaluate(specs, subs, judge=llm_judge(provider), options=EvalOptions(store=store))
        assert provider.calls == []
    assert again.usage.cache_hits == first.usage.calls_made


class _Status(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status_code = status


@pytest.mark.parametrize(
    ("status", "message", "refusal"),
    [
        (500, "Input should be 'text' or 'json_object'", True),
        (400, "Invalid parameter: 'response_format' of type 'json_schema'", True),
        (422, "guided_json is not supported", True),
        (500, "Connection error.", False),
        (400, "'messages' could not be processed", False),
        (503, "response_format backend overloaded", False),
        (429, "json_schema rate limit", False),
    ],
)
def test_what_counts_as_a_refusal_of_the_format(status: int, message: str, refusal: bool) -> None:
    assert is_format_refusal(_Status(status, message)) is refusal


def test_negotiation_steps_down_in_order_and_never_below_what_works() -> None:
    auto = Negotiation()
    assert auto.step_down("json_schema") == "json_object+schema"
    assert auto.step_down("json_schema") == "json_object+schema"  # a late refusal of a mode left
    assert auto.step_down("json_object+schema") == "json_object"
    assert auto.step_down("json_object") == "prompt"
    assert auto.step_down("prompt") is None
    assert Negotiation("json_object").step_down("json_object") is None
    with pytest.raises(ValueError, match="expected one of"):
        Negotiation("xml")


def test_a_remembered_mode_is_adopted_without_asking_again(llm_client) -> None:
    with server(response_formats=LLAMA_CPP_PYTHON_FORMATS) as provider:
        judge = llm_judge(provider, client=llm_client)
        assert judge.structured_output_key == f"structured_output:openai/fake-judge@{provider.url}"
        assert judge.negotiation.adopt("json_object+schema")
        verdict = asyncio.run(judge.judge(task()))
        calls = provider.calls
    assert [c.outcome for c in calls] == ["ok"] and verdict.requests == 1
    assert not Negotiation("prompt").adopt("json_object")
    assert not Negotiation().adopt("xml")


def test_the_store_remembers_the_mode_so_the_next_run_never_meets_the_refusal(tmp_path) -> None:
    specs = load_specs(EXAMPLE / "ground_truth" / "incorrect_image.yaml")
    subs = load_submissions(EXAMPLE / "outputs")
    store = tmp_path / "s.sqlite"
    config = {"response_formats": LLAMA_CPP_PYTHON_FORMATS, "format_refusal": "llama-cpp-python"}
    notes: list[str] = []
    with server(**config) as provider:
        evaluate(specs, subs, judge=llm_judge(provider), options=EvalOptions(store=store))
        first = [c.outcome for c in provider.calls]
        again = evaluate(
            specs,
            subs,
            judge=llm_judge(provider),
            options=EvalOptions(store=store, refresh=True, note=notes.append),
        )
        second = [c.outcome for c in provider.calls][len(first) :]
    assert first.count("format_refused") == 1
    assert second and set(second) == {"ok"}
    assert again.config["judge"]["structured_output"] == "json_object+schema"
    assert any("'json_object+schema' (kept in the store)" in n for n in notes)


def test_a_remembered_mode_the_server_now_refuses_steps_down_and_is_replaced(tmp_path) -> None:
    from judge.store import Store

    specs = load_specs(EXAMPLE / "ground_truth" / "incorrect_image.yaml")
    subs = [s for s in load_submissions(EXAMPLE / "outputs") if s.incident_id == specs[0].id][:1]
    path = tmp_path / "s.sqlite"
    with server(response_formats=("text",)) as provider:
        judge = llm_judge(provider)
        with Store(path) as store:
            store.set_meta(judge.structured_output_key, "json_object+schema")
        result = evaluate(specs, subs, judge=judge, options=EvalOptions(store=path))
    assert result.config["judge"]["structured_output"] == "prompt"
    with Store(path) as store:
        assert store.get_meta(judge.structured_output_key) == "prompt"


def test_a_forced_mode_is_not_remembered(tmp_path) -> None:
    from judge.store import Store

    specs = load_specs(EXAMPLE / "ground_truth" / "incorrect_image.yaml")
    subs = [s for s in load_submissions(EXAMPLE / "outputs") if s.incident_id == specs[0].id][:1]
    path = tmp_path / "s.sqlite"
    with server() as provider:
        judge = llm_judge(provider, structured_output="json_object")
        evaluate(specs, subs, judge=judge, options=EvalOptions(store=path))
    with Store(path) as store:
        assert store.get_meta(judge.structured_output_key) is None
        with pytest.raises(ValueError, match="store_version"):
            store.set_meta("store_version", "0")


def test_a_pinned_schema_keeps_a_small_model_from_ending_its_answers_early(llm_client) -> None:
    """At submission granularity the real 1.5B model answered three questions of nine under
    the generic schema; pinning every id in the json_object schema makes a grammar-enforcing
    server produce all of them (the fake stops early unless the list is pinned)."""
    from judge.judges.reply_format import pinned_schema

    specs = load_specs(EXAMPLE / "ground_truth" / "incorrect_image.yaml")
    subs = [s for s in load_submissions(EXAMPLE / "outputs") if s.incident_id == specs[0].id]
    config = {"response_formats": LLAMA_CPP_PYTHON_FORMATS, "stop_after_answers": 3}
    options = EvalOptions(granularity="submission")
    with server(**config) as provider:
        result = evaluate(
            specs, subs, judge=llm_judge(provider, client=llm_client), options=options
        )
        asked = [c for c in provider.calls if c.outcome == "ok"]
    assert result.complete and all(j.answer for j in result.judgments)
    assert len(asked) == len(subs) and all(len(c.question_ids) == 9 for c in asked)
    with server(stop_after_answers=3, response_formats=("json_object", "text")) as provider:
        loose = evaluate(specs, subs, judge=llm_judge(provider, client=llm_client), options=options)
    assert not loose.complete
    assert {j.unscored_reason.split(":")[0] for j in loose.judgments if j.answer is None} == {
        "unparseable reply after 3 attempts"
    }
    schema = pinned_schema(["D1-Q1", "D2-Q3"])["properties"]["answers"]
    assert [i["properties"]["id"]["const"] for i in schema["prefixItems"]] == ["D1-Q1", "D2-Q3"]
    assert schema["minItems"] == schema["maxItems"] == 2


def test_only_the_json_object_schema_mode_pins_the_ids() -> None:
    judge = LLMJudge("openai/fake-judge", api_base="http://127.0.0.1:9/v1")
    ids = ["D1-Q1", "D1-Q2"]
    pinned = judge.request([], "json_object+schema", ids)["response_format"]
    assert "prefixItems" in pinned["schema"]["properties"]["answers"]
    strict = judge.request([], "json_schema", ids)["response_format"]
    assert "prefixItems" not in json.dumps(strict)
    assert "response_format" not in judge.request([], "prompt", ids)


@pytest.mark.slow
def test_the_probe_window_starts_when_the_probe_is_sent_not_while_it_waits_for_a_slot() -> None:
    """On a loaded machine the probe's request waited longer than the window before it went
    out, and every call in flight then sent the refused format too (4 refusals, real server)."""
    from contextlib import asynccontextmanager

    from judge.judges.base import NullGate

    class SlowFirstSlot(NullGate):
        def __init__(self) -> None:
            super().__init__()
            self.first = True

        @asynccontextmanager
        async def slot(self, tokens: int = 0):
            if self.first:
                self.first = False
                await asyncio.sleep(4)  # twice the window: without arming at the slot it runs out
            yield

    async def four_at_once(judge: LLMJudge) -> None:
        await asyncio.gather(*(judge.judge(task()) for _ in range(4)))

    with server(response_formats=LLAMA_CPP_PYTHON_FORMATS) as provider:
        judge = llm_judge(provider)
        judge.negotiation = Negotiation("auto", probe_window=2)
        judge.gate = SlowFirstSlot()
        asyncio.run(four_at_once(judge))
        outcomes = [c.outcome for c in provider.calls]
    assert outcomes.count("format_refused") == 1 and outcomes.count("ok") == 4


def _arrivals_during_the_probes_reply(client: str, latency: float) -> tuple[int, int]:
    """Four calls at once on a server that accepts json_schema after `latency` seconds: how
    many requests reached it while the probe's reply was still being written, of how many."""

    async def four_at_once(judge: LLMJudge) -> None:
        await asyncio.gather(*(judge.judge(task()) for _ in range(4)))

    with server(latency=latency) as provider:
        judge = llm_judge(provider, client=client)
        asyncio.run(four_at_once(judge))
        calls = sorted(provider.calls, key=lambda c: c.timestamp)
    probe_replied = calls[0].timestamp + calls[0].latency
    during = sum(1 for c in calls[1:] if c.timestamp < probe_replied)
    assert all(c.outcome == "ok" for c in calls) and judge.negotiation.confirmed
    return during, len(calls) - 1


@pytest.mark.slow
def test_a_server_that_accepts_the_format_gets_the_other_calls_before_the_probes_reply() -> None:
    """The openai client tells when the probe's request reached the server; the others go once
    a refusal would have come back, not a whole reply's latency later."""
    assert _arrivals_during_the_probes_reply("openai", latency=3.0) == (3, 3)


@pytest.mark.slow
def test_a_client_that_cannot_tell_when_the_probe_went_out_waits_for_its_reply() -> None:
    assert _arrivals_during_the_probes_reply("litellm", latency=1.0) == (0, 3)


def test_the_others_go_once_the_probes_request_was_sent_and_a_refusal_would_be_back() -> None:
    async def main() -> tuple[bool, bool]:
        negotiation = Negotiation("auto", head_start=0.0)
        negotiation.start_probe()
        negotiation.arm_probe()
        waiting = asyncio.ensure_future(negotiation.wait_probe())
        await asyncio.sleep(0)
        before = waiting.done()
        negotiation.request_sent(connect_seconds=0.0)
        await asyncio.wait_for(waiting, timeout=10)
        return before, negotiation.probing

    before, still_probing = asyncio.run(main())
    assert not before and still_probing


def test_sent_trace_reports_the_connect_time_once_the_request_is_written() -> None:
    from judge.judges.clients.sent import SentTrace

    told: list[float | None] = []
    trace = SentTrace(told.append)

    async def events(names: list[str]) -> None:
        for name in names:
            await trace(name, {})

    asyncio.run(events(["connection.connect_tcp.started", "connection.connect_tcp.complete"]))
    assert told == []
    asyncio.run(events(["http11.send_request_body.complete"]))
    assert told == []
    asyncio.run(events(["http11.receive_response_headers.started"]))
    assert len(told) == 1 and told[0] is not None and told[0] >= 0
    reused = SentTrace(told.append)
    asyncio.run(reused("http11.receive_response_headers.started", {}))
    assert told[1] is None
