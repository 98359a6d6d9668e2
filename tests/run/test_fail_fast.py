"""Fail fast when the provider is gone (issue 24): an endpoint that answers nothing and refuses
every connection stops the run with exit 3 after a probe, naming the endpoint and the error,
while an outage in the middle of a healthy run is still ridden out by the cooldown. A refused
connection is `connection` in the result's `errors` and `attempt_errors` alike."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from helpers import EXAMPLE_GT, EXAMPLE_OUTPUTS, Clock, eval_args

from ground_truth import load_specs, load_submissions
from judge import EvalOptions, evaluate, make_judge
from judge.cli import main
from judge.run.control import Gate
from judge.run.limits import Breaker
from judge.testing import FakeProvider, FakeProviderConfig


@pytest.fixture
def short_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Breaker, "WAIT", 0.2)


# ------------------------------------------------------------------ the breaker itself


def test_the_breaker_opens_after_as_many_failures_as_were_in_flight_then_a_failed_probe_is_dead():
    clock = Clock(now=100.0)
    breaker = Breaker(after=5, wait=2.0, clock=clock)
    assert [breaker.failure("connection", sent=5) for _ in range(4)] == [None] * 4
    assert breaker.failure("timeout", sent=5) == "open"
    assert breaker.remaining() == pytest.approx(2.0)
    clock.now += 2.0
    assert breaker.remaining() == 0
    breaker.start_probe()
    assert breaker.failure("connection", sent=5) is None  # sent before it opened: not the probe
    assert breaker.failure("connection", probe=True, sent=6) == "dead"


def test_one_request_at_a_time_opens_it_at_the_first_failure():
    """While the first request finds out the reply format the others wait: one in flight."""
    assert Breaker(after=5).failure("connection", sent=1) == "open"


def test_any_answer_even_an_error_status_means_the_endpoint_is_there():
    breaker = Breaker(after=3)
    breaker.failure("connection", sent=3)
    breaker.failure("connection", sent=3)
    breaker.failure("server", sent=3)  # a 500 came back: something listens
    assert breaker.failure("connection", sent=3) is None and breaker.state == "closed"
    for _ in range(2):
        breaker.failure("connection", sent=3)
    assert breaker.state == "open"
    breaker.start_probe()
    assert breaker.failure("rate_limit", probe=True) is None and breaker.state == "closed"
    breaker.success()
    assert not breaker.armed
    assert [breaker.failure("connection", sent=1) for _ in range(10)] == [None] * 10


def test_the_gate_stops_the_run_when_the_probe_fails_and_says_why():
    import asyncio
    import contextlib

    async def scenario() -> Gate:
        notes: list[str] = []
        gate = Gate(max_concurrent=3, breaker=Breaker(after=3, wait=0.01), note=notes.append)
        async with contextlib.AsyncExitStack() as in_flight:
            for _ in range(3):
                await in_flight.enter_async_context(gate.slot())
            for n in range(3):
                assert gate.breaker is not None and gate.breaker.state == "closed", n
                gate.failed("connection", "connection from m at http://x/v1: refused", None)
        assert gate.breaker.state == "open"
        assert gate.cooldown is None or gate.cooldown.remaining() == 0
        async with gate.slot():  # waits out the breaker, then goes as the probe
            gate.failed("connection", "connection from m at http://x/v1: refused", None)
        assert gate.stopped is not None and gate.stopped.kind == "provider"
        assert "http://x/v1: refused" in gate.stopped.message
        assert any("none was answered yet" in n for n in notes)
        return gate

    asyncio.run(scenario())


# ------------------------------------------------------------------ over real HTTP


def _example():
    return load_specs(EXAMPLE_GT), load_submissions(EXAMPLE_OUTPUTS)


def test_a_refused_port_stops_the_run_at_once_with_the_kinds_agreeing(short_wait, closed_port_url):
    """The bundled example against a closed port: a handful of requests, not 96 calls ridden
    out over minutes; every failure is `connection`, in `errors` and `attempt_errors` alike."""
    url = closed_port_url
    specs, subs = _example()
    judge = make_judge("openai/fake-judge", api_base=url, max_retries=1, retry_wait=0.01)
    options = EvalOptions(cooldown=0.5, granularity="dimension")  # 96 calls, three a case
    result = evaluate(specs, subs, judge=judge, options=options)
    assert result.stopped is not None and result.stopped.kind == "provider"
    assert url in result.stopped.message and "connection" in result.stopped.message
    assert result.usage is not None and result.usage.requests <= 2 * 5 + 1
    assert not result.complete and len(result.incomplete) == len(subs)
    assert set(result.errors) <= {"connection"}
    assert set(result.attempt_errors) == {"connection"}


@pytest.mark.slow
def test_the_cli_exits_3_naming_the_endpoint_and_keeps_what_was_answered(
    tmp_path, capsys, closed_port_url
):
    url = closed_port_url
    out = tmp_path / "r.json"
    code = main(
        eval_args(
            EXAMPLE_GT,
            EXAMPLE_OUTPUTS,
            out,
            "--judge-model",
            "openai/fake-judge",
            "--api-base",
            url,
            "--max-retries",
            "1",
            "--cooldown",
            "0.5",
            "--no-progress",
        )
    )
    printed = capsys.readouterr()
    assert code == 3
    said = " ".join((printed.out + printed.err).split())
    assert "exit 3: the run stopped before it was done: the provider cannot be reached" in said
    assert url in said
    result = json.loads(out.read_text())
    assert result["exit_code"] == 3 and result["stopped"]["kind"] == "provider"
    assert Path(tmp_path / "r.sqlite").is_file()


def _fake_run(config: FakeProviderConfig, notes: list[str], **judge_options):
    specs, subs = _example()
    subs = subs[:8]
    with FakeProvider(config) as provider:
        judge = make_judge(
            "openai/fake-judge", api_base=provider.url, retry_wait=0.01, **judge_options
        )
        options = EvalOptions(max_concurrent=3, cooldown=0.4, note=notes.append)
        result = evaluate(specs, subs, judge=judge, options=options)
        outcomes = [c.outcome for c in provider.calls]
    return result, outcomes


@pytest.mark.parametrize("structured_output", ["auto", "json_schema"])
def test_a_provider_dead_from_the_start_stops_after_one_probe(short_wait, structured_output):
    """Every connection dropped unanswered from the first request on (one request alone
    while the reply format is found out; three in flight when it is forced)."""
    config = FakeProviderConfig(fault_schedule=["hang"] * 200, hang_seconds=0)
    notes: list[str] = []
    result, outcomes = _fake_run(config, notes, structured_output=structured_output)
    assert result.stopped is not None and result.stopped.kind == "provider"
    assert "none was answered" in result.stopped.message
    assert len(outcomes) <= 2 * 3 + 1 and set(outcomes) == {"hang"}
    assert set(result.attempt_errors) == {"connection"}
    assert any("one more in 0.2 s" in n for n in notes)


def test_a_provider_back_by_the_probe_is_used_as_if_nothing_happened(short_wait):
    config = FakeProviderConfig(fault_schedule=["hang"], hang_seconds=0)
    notes: list[str] = []
    result, outcomes = _fake_run(config, notes)
    assert result.stopped is None and result.complete
    assert outcomes[0] == "hang" and outcomes.count("hang") == 1
    assert result.attempt_errors == {"connection": 1} and not result.errors
    assert any("none was answered yet" in n for n in notes)


def test_an_outage_in_the_middle_of_a_healthy_run_is_ridden_out_as_before(short_wait):
    """Six answers, then twelve connections dropped: the endpoint existed, so the breaker is
    off, and the cooldown waits the outage out; nothing is lost and the run does not stop."""
    config = FakeProviderConfig(fault_schedule=["ok"] * 6 + ["hang"] * 12, hang_seconds=0)
    notes: list[str] = []
    result, outcomes = _fake_run(config, notes, max_retries=8)
    assert outcomes.count("hang") == 12
    assert result.stopped is None and result.complete and not result.errors
    assert result.attempt_errors == {"connection": 12}
    assert any("cooling down" in n for n in notes)
    assert not any("none was answered" in n for n in notes)


def test_a_call_lost_to_dropped_connections_is_connection_in_errors_and_attempt_errors():
    """Once the provider has answered, calls that use up their retries on dropped connections
    fail as `connection` in `errors` too (it said `server`: the retry raised the exception
    again, and its new context lost the connection error it came from)."""
    config = FakeProviderConfig(fault_schedule=["ok"] * 3 + ["hang"] * 30, hang_seconds=0)
    notes: list[str] = []
    result, _ = _fake_run(config, notes, max_retries=1)
    assert result.errors and set(result.errors) == {"connection"}
    assert set(result.attempt_errors) == {"connection"}
    failed = [c for c in result.calls if c.error]
    assert failed and all(
        c.error.startswith("connection from openai/fake-judge at http://") for c in failed
    )
