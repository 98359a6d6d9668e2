"""Run control: the gate every provider request passes, the pause file, graceful stop.

The `Gate` is shared by all leaf judges of a run. Before each request (first try, retry or
re-ask) it waits while the pause file exists, while the breaker is open (an endpoint that has
answered nothing and refuses connections), while a cooldown or a provider's Retry-After holds,
and for the rate limiter; then it takes one of `max_concurrent` slots. Once the run is stopped
(signal, fatal provider error, a dead endpoint, error or cost budget) no request starts:
`slot()` raises `RunStopped`, and requests already sent are left to finish.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from contextvars import ContextVar
from pathlib import Path
from types import FrameType
from typing import Any

from ..checklist.results import RunStop, StopKind
from ..judges.base import RunStopped
from ..judges.clients.errors import CONNECTION_LEVEL
from .limits import (
    AdaptiveSlots,
    Breaker,
    Cooldown,
    ErrorBudget,
    RateLimiter,
    UnusableReplies,
    default_cooldown_after,
)
from .progress import RunStats

SignalHandler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None
"""What `signal.signal` returns and takes back (typeshed's private `_HANDLER`)."""

FATAL_KINDS = frozenset({"auth", "bad_request"})
"""Provider errors no retry can fix (401/403, 400/404/422): the run stops at the first one."""


_PROBE: ContextVar[bool] = ContextVar("judge_breaker_probe", default=False)
"""True inside the request the breaker let through as its probe (the request's own task)."""


class PauseFile:
    """`--pause-file`: while the file exists no request starts (checked every `poll` s)."""

    def __init__(self, path: str | Path, poll: float = 0.2):
        self.path = Path(path)
        self.poll = poll

    def active(self) -> bool:
        """Whether the run is paused now."""
        return self.path.exists()


class Gate:
    """The run's gate: pause, cooldown, rate limits, concurrency, budgets and stop, shared by
    every leaf judge of a run (see the module docstring)."""

    def __init__(
        self,
        max_concurrent: int = 5,
        limiter: RateLimiter | None = None,
        cooldown: Cooldown | None = None,
        pause: PauseFile | None = None,
        stats: RunStats | None = None,
        error_budget: ErrorBudget | None = None,
        max_cost: float | None = None,
        note: Callable[[str], None] | None = None,
        breaker: Breaker | bool = True,
        unusable: UnusableReplies | None = None,
    ):
        """`breaker`: True for one that opens after as many connection-level failures as
        requests may be in flight (`Breaker`), False for none, or a `Breaker` of your own;
        `unusable`: the rule that stops a run whose replies cannot be used (none: never)."""
        self.limiter = limiter
        self.cooldown = cooldown
        self.pause = pause
        self.stats = stats or RunStats()
        self.error_budget = error_budget
        self.unusable = unusable
        self.max_cost = max_cost
        self.note = note or (lambda message: None)
        self.stopped: RunStop | None = None
        self._all_planned = True
        """False while a run's units are still arriving (`Run` sets it, `units_known`)."""
        self._slots = AdaptiveSlots(max_concurrent)
        self._stop_event = asyncio.Event()
        if breaker is True:
            breaker = Breaker(default_cooldown_after(max_concurrent))
        self.breaker: Breaker | None = breaker or None

    # ------------------------------------------------------------------ stopping

    def stop(self, kind: StopKind, message: str) -> None:
        """Start no more requests (the first reason is the one recorded)."""
        if self.stopped is None:
            self.stopped = RunStop(kind=kind, message=message)
            self._stop_event.set()
            self.note(f"stopping: {message}; no new call starts, calls in flight may finish")

    def _check(self) -> None:
        if self.stopped is not None:
            raise RunStopped(self.stopped.message)

    async def sleep(self, seconds: float) -> None:
        """Sleep, waking early when the run stops."""
        if seconds <= 0 or self.stopped is not None:
            await asyncio.sleep(0)
            return
        with suppress(TimeoutError):
            await asyncio.wait_for(self._stop_event.wait(), timeout=seconds)

    # ------------------------------------------------------------------ before a request

    @asynccontextmanager
    async def slot(self, tokens: int = 0) -> AsyncIterator[None]:
        """Hold while one request is in flight; waits for pause, cooldown and rate limits first
        and raises `RunStopped` once the run has stopped."""
        self._check()
        async with self._slots:
            await self._wait_paused()
            probe = await self._wait_breaker()
            await self._wait_cooldown()
            if self.limiter is not None:
                await self.sleep(self.limiter.reserve(tokens))
            self._check()
            self.stats.requests += 1
            if not probe:
                yield
                return
            marked = _PROBE.set(True)
            try:
                yield
            finally:
                _PROBE.reset(marked)
                if self.breaker is not None:
                    self.breaker.probe_ended()

    async def _wait_paused(self) -> None:
        if self.pause is None or not self.pause.active():
            return
        if not self.stats.paused:
            self.stats.paused = True
            self.note(f"paused: {self.pause.path} exists; calls in flight finish, none starts")
        while self.pause.active() and self.stopped is None:
            await self.sleep(self.pause.poll)
        if self.stats.paused:
            self.stats.paused = False
            self.note(f"resumed: {self.pause.path} is gone")
        self._check()

    PROBE_POLL = 0.05
    """Seconds between looks at the breaker while its probe is out."""

    async def _wait_breaker(self) -> bool:
        """Wait while the breaker is open or its probe is out; True when this request is to
        be the probe."""
        breaker = self.breaker
        if breaker is None:
            return False
        while breaker.state != "closed" and self.stopped is None:
            if breaker.state == "open":
                if (left := breaker.remaining()) > 0:
                    await self.sleep(left)
                    continue
                breaker.start_probe()
                return True
            await self.sleep(self.PROBE_POLL)
        self._check()
        return False

    async def _wait_cooldown(self) -> None:
        if self.cooldown is None:
            return
        while (left := self.cooldown.remaining()) > 0 and self.stopped is None:
            self.stats.cooling = True
            await self.sleep(left)
        self.stats.cooling = False
        self._check()

    # ------------------------------------------------------------------ after a request

    def succeeded(
        self,
        estimated: int,
        prompt: int | None,
        completion: int | None,
        cost: float | None,
        cached: int | None = None,
        written: int | None = None,
    ) -> None:
        """A request answered: settle the token estimate, count usage (`cached`/`written`:
        prompt tokens read from / written to the provider's prompt cache) and cost, check the
        budget."""
        self._slots.succeeded()
        if self.breaker is not None:
            self.breaker.success()
        if self.cooldown is not None:
            self.cooldown.success()
        if self.limiter is not None:
            actual = None if prompt is None else prompt + (completion or 0)
            self.limiter.settle(estimated, actual)
        self.stats.add_usage(prompt, completion, cost, cached, written)
        self._check_cost()

    def failed(self, kind: str, message: str, retry_after: float | None) -> None:
        """A request failed: fatal kinds stop the run, others feed the cooldown and Retry-After.

        A 429 that gives a Retry-After is left to it: the request waits that long before it is
        retried, holding no slot, and the others go on. Halving the concurrency as well cost a
        fifth of the throughput under 429s that come at random and bought nothing under a
        provider's own quota, which the run kept to the pace of either way (both measured by
        `benchmarks/cooldown.py`). Only a 429 that does not say when to come back lowers the
        concurrency (`AdaptiveSlots`)."""
        self.stats.failed_requests[kind] += 1
        if kind in FATAL_KINDS:
            self.stop("provider", message)
            return
        if self._breaker_failed(kind, message):
            return
        if kind == "rate_limit":
            if retry_after is None:
                self._slots.rate_limited()
            return
        if self.cooldown is None:
            return
        if retry_after:
            self.cooldown.hold(retry_after)
        if self.cooldown.failure():
            self.note(
                f"cooling down for {self.cooldown.last:g} s after "
                f"{self.cooldown.after} consecutive provider failures (last: {message})"
            )

    def _breaker_failed(self, kind: str, message: str) -> bool:
        """Count a failure towards the breaker; True when it is the breaker's alone (a
        connection-level failure before anything was answered, which no cooldown waits out:
        the probe decides)."""
        breaker = self.breaker
        if breaker is None or not breaker.armed:
            return False
        outcome = breaker.failure(kind, probe=_PROBE.get(), sent=self.stats.requests)
        if outcome == "dead":
            self.stop(
                "provider",
                f"the provider cannot be reached: {_requests(breaker.failures - 1)} failed "
                f"and none was answered, and one more {breaker.wait:g} s later failed too "
                f"({message})",
            )
        elif outcome == "open":
            self.note(
                f"{_requests(breaker.failures)} failed and none was answered yet; one more "
                f"in {breaker.wait:g} s, and the run stops if it fails too (last: {message})"
            )
        return kind in CONNECTION_LEVEL

    def retrying(self) -> None:
        """A request is about to be sent again."""
        self.stats.retries += 1

    def call_finished(self, error_kind: str | None, error: str | None = None) -> None:
        """A leaf call ended (answered or unscored, `error` saying why); checks the error
        budget and whether replies are usable at all."""
        self.stats.done += 1
        if self.unusable is not None and (why := self.unusable.finished(error_kind, error)):
            self.stop("max_errors", why)
        if error_kind is None:
            return
        self.stats.errors += 1
        self._check_errors()

    def units_arriving(self) -> None:
        """The run's units are still arriving (see `units_known`)."""
        self._all_planned = False

    def units_known(self) -> None:
        """Every unit of the run has arrived: a budget that is a share of the planned calls
        can be checked from now on (before, the share of a count still growing would stop a
        run whose first few calls failed)."""
        self._all_planned = True
        self._check_errors()

    def _check_errors(self) -> None:
        budget = self.error_budget
        if budget is None or (budget.fraction and not self._all_planned):
            return
        if budget.exceeded(self.stats.errors, self.stats.planned):
            self.stop(
                "max_errors",
                f"{self.stats.errors} failed calls of {self.stats.planned} planned, "
                f"past --max-errors ({budget.describe()})",
            )

    def _check_cost(self) -> None:
        if self.max_cost is None:
            return
        if self.stats.cost_unknown:
            self.stop(
                "max_cost",
                "the provider's price for this model is unknown, so --max-cost cannot be kept",
            )
        elif self.stats.cost_usd >= self.max_cost:
            self.stop(
                "max_cost",
                f"spent ${self.stats.cost_usd:.4f}, reached --max-cost {self.max_cost:g}",
            )


def _requests(n: int) -> str:
    return "1 request" if n == 1 else f"{n} requests in a row"


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived before the run loop started: nothing was written."""


class SignalLatch:
    """SIGINT/SIGTERM over a whole command, outside the run loop (which `SignalStop` covers).

    Until `defer()` a signal raises `Interrupted` at once (nothing paid for, nothing written).
    After it a signal is only remembered: the run loop stops at once if one came before it
    started (`SignalStop` reads `received`), and one that comes after the last call lets the
    command finish writing its result and exports before it exits 130. Main thread only.
    """

    def __init__(self) -> None:
        self.received: signal.Signals | None = None
        self.deferring = False
        self._previous: dict[signal.Signals, SignalHandler] = {}

    def __enter__(self) -> SignalLatch:
        for sig in STOP_SIGNALS:
            with suppress(ValueError):  # not the main thread: leave signals alone
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous = {}

    def defer(self) -> None:
        """From now on a signal is only recorded; the run's `SignalStop` acts on it."""
        self.deferring = True

    def _handle(self, signum: int, frame: object) -> None:
        sig = signal.Signals(signum)
        self.received = self.received or sig
        if not self.deferring:
            raise Interrupted(
                f"interrupted by {sig.name} before any judge was called; no result was written"
            )


class SignalStop:
    """SIGINT/SIGTERM: the first stops the run and gives calls in flight `grace` seconds; then,
    or at a second signal, `cancel()` cuts them off. Main thread only; a no-op elsewhere.

    A signal a `latch` caught before the loop started stops the run as soon as it starts, and
    the handlers in place before `install()` are put back by `remove()`."""

    def __init__(
        self,
        gate: Gate,
        grace: float,
        cancel: Callable[[], None],
        latch: SignalLatch | None = None,
    ):
        self.gate = gate
        self.grace = grace
        self.cancel = cancel
        self.latch = latch
        self.received = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._installed: list[signal.Signals] = []
        self._previous: dict[signal.Signals, SignalHandler] = {}

    def install(self) -> SignalStop:
        """Put the handlers in place on the running loop (where it can: the main thread)."""
        self._loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            try:
                previous = signal.getsignal(sig)
                self._loop.add_signal_handler(sig, self._handle, sig)
            except (RuntimeError, ValueError, NotImplementedError):
                continue
            self._installed.append(sig)
            self._previous[sig] = previous
        if self.latch is not None and self.latch.received is not None:
            self._handle(self.latch.received)
        return self

    def _handle(self, sig: signal.Signals) -> None:
        self.received += 1
        if self.received == 1:
            self.gate.stop(
                "interrupted",
                f"interrupted by {sig.name}; calls in flight have {self.grace:g} s to finish",
            )
            assert self._loop is not None
            self._timer = self._loop.call_later(self.grace, self.cancel)
        else:
            self.cancel()

    def remove(self) -> None:
        """Put back the handlers that were there before `install()`."""
        if self._timer is not None:
            self._timer.cancel()
        if self._loop is not None:
            for sig in self._installed:
                self._loop.remove_signal_handler(sig)
                previous = self._previous.get(sig)
                if previous is not None:
                    signal.signal(sig, previous)
        self._installed = []
