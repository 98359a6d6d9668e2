"""Rate limiter, cooldown, Retry-After and budgets: arithmetic over a fake clock, no sleeping."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from helpers import Clock

from judge.judges.base import RunStopped
from judge.judges.clients.errors import retry_after_seconds
from judge.run.control import FATAL_KINDS, Gate
from judge.run.limits import Cooldown, ErrorBudget, Pacer, RateLimiter
from judge.run.progress import RunStats


def test_requests_are_paced_evenly_never_in_a_burst() -> None:
    clock = Clock()
    limiter = RateLimiter(rpm=600, clock=clock)  # 10 per second
    waits = [limiter.reserve(0) for _ in range(5)]
    assert waits == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4])
    clock.now += 10  # a quiet spell saves up at most one request
    assert [limiter.reserve(0) for _ in range(2)] == pytest.approx([0.0, 0.1])


def test_tokens_per_minute_wait_for_the_budget_and_settle_on_actual_use() -> None:
    clock = Clock()
    limiter = RateLimiter(tpm=6000, clock=clock)  # 100 tokens per second, bucket of 100
    assert limiter.reserve(100) == 0.0
    assert limiter.reserve(300) == pytest.approx(1.0)  # waits for a full bucket, then owes 200
    assert limiter.reserve(50) == pytest.approx(3.5)
    limiter.settle(estimated=300, actual=100)  # the reply was smaller: 200 tokens come back
    assert limiter.reserve(50) == pytest.approx(2.0)


def test_pacer_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        Pacer(0, 1)


def test_cooldown_after_consecutive_failures_only() -> None:
    clock = Clock()
    cooldown = Cooldown(after=3, seconds=60, clock=clock)
    assert not cooldown.failure() and not cooldown.failure()
    cooldown.success()  # a success in between resets the count
    assert not cooldown.failure() and not cooldown.failure()
    assert cooldown.remaining() == 0
    assert cooldown.failure()
    assert cooldown.remaining() == pytest.approx(60 / 8)  # the first cooldown; they grow
    clock.now += 61
    assert cooldown.remaining() == 0 and cooldown.cooldowns == 1


def test_retry_after_holds_every_request() -> None:
    clock = Clock()
    cooldown = Cooldown(after=0, seconds=60, clock=clock)
    assert not cooldown.failure()  # after=0: no cooldowns
    cooldown.hold(2.5)
    assert cooldown.remaining() == pytest.approx(2.5)


class ProviderError(Exception):
    def __init__(self, headers: dict[str, str] | None, on_response: bool = False):
        super().__init__("429")
        if on_response:
            self.response = httpx.Response(429, headers=headers)
        else:
            self.litellm_response_headers = httpx.Headers(headers) if headers else None


@pytest.mark.parametrize(
    ("headers", "on_response", "seconds"),
    [
        ({"retry-after": "3", "retry-after-ms": "2500"}, False, 2.5),
        ({"Retry-After": "7"}, False, 7.0),
        ({"retry-after": "1.5"}, True, 1.5),
        ({"x-other": "1"}, False, None),
        (None, False, None),
    ],
)
def test_retry_after_is_read_from_litellm_exception_headers(headers, on_response, seconds) -> None:
    assert retry_after_seconds(ProviderError(headers, on_response)) == seconds


def test_retry_after_as_http_date() -> None:
    from email.utils import formatdate
    from time import time

    later = formatdate(time() + 30, usegmt=True)
    assert 25 < retry_after_seconds(ProviderError({"retry-after": later})) <= 30


@pytest.mark.parametrize(
    ("text", "planned", "errors", "exceeded"),
    [
        ("10", 1000, 10, False),
        ("10", 1000, 11, True),
        ("0.2", 50, 10, False),
        ("0.2", 50, 11, True),
        ("20%", 50, 11, True),
        ("0", 5, 1, True),
    ],
)
def test_error_budget(text: str, planned: int, errors: int, exceeded: bool) -> None:
    assert ErrorBudget.parse(text).exceeded(errors, planned) is exceeded


@pytest.mark.parametrize("text", ["many", "-1", "1.5", ""])
def test_error_budget_rejects_bad_values(text: str) -> None:
    with pytest.raises(ValueError, match="--max-errors"):
        ErrorBudget.parse(text)


def test_gate_stops_at_a_fatal_error_and_refuses_new_requests() -> None:
    async def scenario() -> list[str]:
        notes: list[str] = []
        gate = Gate(max_concurrent=2, note=notes.append)
        async with gate.slot():
            pass
        gate.failed("auth", "auth from m: Incorrect API key", None)
        with pytest.raises(RunStopped, match="Incorrect API key"):
            async with gate.slot():
                pass
        assert gate.stopped.kind == "provider" and gate.stats.requests == 1
        return notes

    notes = asyncio.run(scenario())
    assert notes and "Incorrect API key" in notes[0]
    assert {"auth", "bad_request"} <= FATAL_KINDS


def test_gate_error_budget_and_unknown_price_stop_the_run() -> None:
    async def scenario() -> tuple[Gate, Gate]:
        budget = Gate(stats=RunStats(planned=10), error_budget=ErrorBudget.parse("0.2"))
        for kind in ["rate_limit", None, "timeout"]:
            budget.call_finished(kind)
        assert budget.stopped is None
        budget.call_finished("server")
        priced = Gate(max_cost=1.0)
        priced.succeeded(0, 10, 5, None)
        return budget, priced

    budget, priced = asyncio.run(scenario())
    assert budget.stopped.kind == "max_errors" and "3 failed calls of 10" in budget.stopped.message
    assert priced.stopped.kind == "max_cost" and "unknown" in priced.stopped.message


def test_gate_sleep_wakes_when_the_run_stops() -> None:
    async def scenario() -> bool:
        gate = Gate()
        sleeper = asyncio.create_task(gate.sleep(3600))
        await asyncio.sleep(0)
        gate.stop("interrupted", "test")
        await asyncio.wait_for(sleeper, timeout=30)
        return sleeper.done()

    assert asyncio.run(scenario())


def test_progress_lines_say_what_was_done_and_spent() -> None:
    import io

    from judge.run.progress import Reporter

    stats = RunStats(planned=10, cached=4)
    out = io.StringIO()
    reporter = Reporter(stats, stream=out, every=0, tty=False)
    reporter.start()
    stats.done, stats.requests, stats.retries, stats.errors = 3, 5, 2, 1
    stats.failed_requests["rate_limit"] = 2
    stats.add_usage(100, 20, 0.001)
    reporter.tick()
    reporter.note("paused: PAUSE exists")
    stats.add_usage(100, 20, None)
    reporter.stop()
    lines = out.getvalue().splitlines()
    assert lines[0] == "judging: 10 calls to make, 4 cached"
    assert lines[1] == (
        "calls 3/10 | cached 4 | retries 2 | errors 1 (failed requests: rate_limit 2) | "
        "tokens 120 | cost $0.0010"
    )
    assert lines[2] == "paused: PAUSE exists"
    assert "cost unknown (1 request(s) without a known price)" in lines[3]


def test_progress_bar_on_a_terminal() -> None:
    import io

    from judge.run.progress import Reporter

    stats = RunStats(planned=4)
    out = io.StringIO()
    reporter = Reporter(stats, stream=out, tty=True)
    reporter.start()
    stats.done = 4
    reporter.tick()
    reporter.stop()
    assert "4/4" in out.getvalue()


def test_retry_waits_at_least_the_providers_retry_after() -> None:
    from types import SimpleNamespace

    from judge.judges.llm import _RetryAfterOrBackoff

    wait = _RetryAfterOrBackoff(multiplier=0.01)

    def state(exc: BaseException, attempt: int = 1) -> SimpleNamespace:
        return SimpleNamespace(
            attempt_number=attempt, outcome=SimpleNamespace(exception=lambda: exc)
        )

    assert 2.5 <= wait(state(ProviderError({"retry-after-ms": "2500"}))) <= 2.5 * 1.5  # jitter
    assert wait(state(ProviderError({"retry-after": "100000"}))) == 600  # capped at MAX_RETRY_AFTER
    assert wait(state(ProviderError(None))) <= 0.01  # no header: backoff with jitter


def test_a_retry_after_holds_back_every_request_of_the_run() -> None:
    clock = Clock()

    async def scenario() -> Gate:  # a 429's Retry-After holds back only its own call
        gate = Gate(cooldown=Cooldown(after=3, seconds=60, clock=clock))
        gate.failed("rate_limit", "rate_limit from m: slow down", 2.5)
        assert gate.cooldown.remaining() == 0
        gate.failed("unavailable", "unavailable from m: overloaded", 2.5)
        return gate

    gate = asyncio.run(scenario())
    assert gate.cooldown.remaining() == pytest.approx(2.5)
    assert gate.stats.failed_requests == {"rate_limit": 1, "unavailable": 1}
    assert gate.stopped is None
