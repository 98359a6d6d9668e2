"""A cooldown that fits the fault: 429s are retried after their Retry-After (those that give
none lower the concurrency), never cooled down for; server and connection failures start a cooldown that grows
while they go on and starts over after a success, and a 30 s outage is still ridden out."""

from __future__ import annotations

import asyncio

import pytest
from helpers import EXAMPLE, Clock

from ground_truth import load_specs, load_submissions
from judge import EvalOptions, evaluate, make_judge
from judge.run.control import Gate
from judge.run.limits import AdaptiveSlots, Cooldown, default_cooldown_after
from judge.testing import FakeProvider, FakeProviderConfig


def test_cooldowns_grow_while_failures_go_on_and_start_over_after_a_success() -> None:
    clock = Clock()
    cooldown = Cooldown(after=3, seconds=60, clock=clock)
    lengths = []
    for _ in range(5):
        assert not cooldown.failure() and not cooldown.failure() and cooldown.failure()
        lengths.append(cooldown.remaining())
        clock.now += cooldown.remaining()
    assert lengths == pytest.approx([7.5, 15, 30, 60, 60])
    cooldown.success()
    cooldown.failure(), cooldown.failure(), cooldown.failure()
    assert cooldown.remaining() == pytest.approx(7.5)


def _attempts_through_outage(
    cooldown_seconds: float, outage: float = 30.0, after: int = 3
) -> list[int]:
    """Five calls in flight when the provider goes down for `outage` seconds, each retried at
    once (the backoff's jitter can be 0) but every request waiting out the gate's cooldown:
    how many attempts each call needs. Event by event, on a fake clock."""
    clock = Clock()
    start = clock.now
    cooldown = Cooldown(after=after, seconds=cooldown_seconds, clock=clock)
    latency = 0.5
    ready = [start] * 5
    attempts = [0] * 5
    done = [False] * 5
    while not all(done):
        call = min((i for i in range(5) if not done[i]), key=lambda i: ready[i])
        clock.now = max(ready[call], clock.now)
        clock.now += cooldown.remaining()
        attempts[call] += 1
        if clock.now - start >= outage:
            cooldown.success()
            done[call] = True
        else:
            cooldown.failure()
            ready[call] = clock.now + latency
    return attempts


@pytest.mark.parametrize("after", [3, default_cooldown_after(5)])
def test_a_30_s_outage_is_ridden_out_within_the_retries(after: int) -> None:
    attempts = _attempts_through_outage(60.0, after=after)
    assert max(attempts) <= 6  # --max-retries 5: no call fails
    assert max(_attempts_through_outage(4.0, after=after)) > 6  # too short to ride it out


def test_by_default_a_cooldown_waits_for_as_many_failures_as_requests_in_flight() -> None:
    from judge import RulesJudge
    from judge.run.loop import Run

    def after(options: EvalOptions) -> int:
        run = Run(RulesJudge(), [], options.limits, options.control, options.storage)
        cooldown = run.gate.cooldown
        assert cooldown is not None
        return cooldown.after

    assert after(EvalOptions(max_concurrent=8)) == 8
    assert after(EvalOptions(max_concurrent=2)) == 3
    assert after(EvalOptions(max_concurrent=8, cooldown_after=3)) == 3
    assert after(EvalOptions(max_concurrent=8, cooldown_after=0)) == 0


def test_429s_lower_the_concurrency_once_per_burst_and_successes_restore_it() -> None:
    clock = Clock()
    slots = AdaptiveSlots(8, clock=clock)
    assert slots.rate_limited() and slots.limit == 4
    assert not slots.rate_limited()  # the same burst
    clock.now += AdaptiveSlots.CALM
    assert slots.rate_limited() and slots.limit == 2
    for _ in range(10):
        slots.succeeded()
    assert slots.limit == 8 and slots.backoffs == 2


def test_429s_never_start_a_cooldown_but_server_errors_do() -> None:
    async def scenario() -> Gate:
        gate = Gate(max_concurrent=4, cooldown=Cooldown(after=3, seconds=60))
        for _ in range(10):
            gate.failed("rate_limit", "rate_limit from m: slow down", None)
        assert gate.cooldown.remaining() == 0 and gate._slots.limit == 2
        for _ in range(3):
            gate.failed("server", "server from m: 500", None)
        assert gate.cooldown.remaining() > 0
        return gate

    asyncio.run(scenario())


def test_a_429_with_a_retry_after_leaves_the_concurrency_alone() -> None:
    async def scenario() -> tuple[float, int]:
        gate = Gate(max_concurrent=8, cooldown=Cooldown(after=3, seconds=60))
        for _ in range(10):
            gate.failed("rate_limit", "rate_limit from m: try again in 1s", 1.0)
        return gate._slots.limit, gate.stats.failed_requests["rate_limit"]

    assert asyncio.run(scenario()) == (8, 10)


def test_requests_in_flight_follow_the_limit_and_a_cancelled_waiter_leaks_no_slot() -> None:
    async def scenario() -> tuple[int, int]:
        slots = AdaptiveSlots(4)
        slots.rate_limited()  # limit 2
        peak = 0

        async def request() -> None:
            nonlocal peak
            async with slots:
                peak = max(peak, slots.in_use)
                await asyncio.sleep(0.01)

        waiting = asyncio.create_task(request())
        tasks = [asyncio.create_task(request()) for _ in range(6)]
        await asyncio.sleep(0)
        waiting.cancel()
        await asyncio.gather(*tasks, waiting, return_exceptions=True)
        return peak, slots.in_use

    assert asyncio.run(scenario()) == (2, 0)


def test_a_run_with_half_its_requests_rate_limited_answers_everything_without_cooling_down():
    specs = load_specs(EXAMPLE / "ground_truth")
    submissions = load_submissions(EXAMPLE / "outputs")[:10]
    notes: list[str] = []
    config = FakeProviderConfig(seed=4, fault_rates={"429": 0.5}, retry_after=0.01)
    with FakeProvider(config) as server:
        judge = make_judge("openai/fake-judge", api_base=server.url, max_retries=8)
        options = EvalOptions(max_concurrent=4, note=notes.append)
        result = evaluate(specs, submissions, judge=judge, options=options)
        rate_limited = server.injected_counts()["429"]
    assert rate_limited >= 5 and result.attempt_errors.get("rate_limit") == rate_limited
    assert result.complete and not result.errors
    assert not [n for n in notes if "cooling down" in n]


def test_a_429_is_retried_after_its_retry_after_not_a_longer_backoff() -> None:
    from types import SimpleNamespace

    from judge.judges.llm import _RetryAfterOrBackoff

    rate_limited = Exception("429")
    rate_limited.litellm_response_headers = {"retry-after": "1"}  # type: ignore[attr-defined]
    wait = _RetryAfterOrBackoff(multiplier=10.0)
    outcome = SimpleNamespace(exception=lambda: rate_limited)
    state = SimpleNamespace(attempt_number=5, outcome=outcome)
    waits = [wait(state) for _ in range(200)]  # the backoff alone could be anything up to 160 s
    assert 1.0 <= min(waits) < 1.1 and 1.4 < max(waits) <= 1.5  # spread: calls do not meet again
