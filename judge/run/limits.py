"""Client-side limits: a rate limiter that waits (rpm, tpm), a cooldown that grows over
consecutive provider failures (and holds for a provider's Retry-After), a breaker that stops a
run whose endpoint is gone, concurrency that backs off on 429s that give no Retry-After, the
run's error and cost budgets, and the rule that stops a run whose replies cannot be used.

Everything here is plain arithmetic over an injectable clock, so it is tested without sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass

from ..judges.clients.errors import CONNECTION_LEVEL, MAX_RETRY_AFTER

Clock = Callable[[], float]


class Pacer:
    """Hands out units at `rate` per second with at most `capacity` saved up.

    `reserve(n)` books `n` units at once and returns how long the caller must wait before using
    them, so concurrent callers queue in arrival order without a lock. A request larger than the
    capacity waits for a full bucket and leaves it in debt, which later requests wait off.
    """

    def __init__(self, rate: float, capacity: float, clock: Clock = time.monotonic):
        if rate <= 0 or capacity <= 0:
            raise ValueError("rate and capacity must be positive")
        self.rate = rate
        self.capacity = capacity
        self._clock = clock
        self._level = capacity
        self._updated = clock()

    def _refill(self) -> None:
        now = self._clock()
        self._level = min(self.capacity, self._level + (now - self._updated) * self.rate)
        self._updated = now

    def reserve(self, amount: float) -> float:
        self._refill()
        need = min(amount, self.capacity)
        wait = max(0.0, (need - self._level) / self.rate)
        self._level -= amount
        return wait

    def adjust(self, amount: float) -> None:
        """Give back (positive) or take more (negative) once the true amount is known."""
        self._refill()
        self._level = min(self.capacity, self._level + amount)


class RateLimiter:
    """`rpm` requests and `tpm` tokens per minute, paced evenly so that no window of the
    provider's (a minute, a second) sees a burst. Either limit may be None."""

    def __init__(
        self, rpm: float | None = None, tpm: float | None = None, clock: Clock = time.monotonic
    ):
        self.requests = Pacer(rpm / 60.0, 1.0, clock) if rpm else None
        self.tokens = Pacer(tpm / 60.0, max(tpm / 60.0, 1.0), clock) if tpm else None

    def reserve(self, tokens: int) -> float:
        waits = [0.0]
        if self.requests is not None:
            waits.append(self.requests.reserve(1))
        if self.tokens is not None:
            waits.append(self.tokens.reserve(tokens))
        return max(waits)

    def settle(self, estimated: int, actual: int | None) -> None:
        if self.tokens is not None and actual is not None:
            self.tokens.adjust(estimated - actual)


def default_cooldown_after(max_concurrent: int) -> int:
    """Consecutive failures that start a cooldown when the user named none: as many as requests
    may be in flight, at least 3.

    An outage fails every request in flight at once, so this many in a row is seen within one
    round of requests; 3 in a row at 8 in flight also happen by chance when a provider fails
    30% of requests (about 4 times in 200 requests), and each cost a 7.5 s cooldown: half the
    run's wall time in `benchmarks/cooldown.py`."""
    return max(3, max_concurrent)


class Cooldown:
    """After `after` consecutive server, timeout or connection failures, no request starts for
    a while: `seconds / 8` the first time, twice as long at each further cooldown without a
    success in between, at most `seconds`; a success starts over. A provider that is down for
    a while is waited out (7.5 + 15 + 30 s before the fourth round of retries, with the default
    60), and one that fails now and then costs seconds, not minutes.

    Rate limits (429) are not counted: the provider's Retry-After (or `AdaptiveSlots`, when a
    429 gives none) deals with them. `hold(s)` keeps every request back for `s` seconds (a Retry-After on a 503)."""

    FIRST_SHARE = 1 / 8

    def __init__(self, after: int = 3, seconds: float = 60.0, clock: Clock = time.monotonic):
        self.after = after
        self.seconds = seconds
        self._clock = clock
        self._failures = 0
        self._streak = 0
        self._until = 0.0
        self.cooldowns = 0
        self.last = 0.0
        """How long the latest cooldown was."""

    def next_length(self) -> float:
        return min(self.seconds, self.seconds * self.FIRST_SHARE * 2**self._streak)

    def failure(self) -> bool:
        """Count a failure; True when it starts a cooldown."""
        self._failures += 1
        if self.after > 0 and self._failures >= self.after:
            self._failures = 0
            self.last = self.next_length()
            self._streak += 1
            self.cooldowns += 1
            self._until = max(self._until, self._clock() + self.last)
            return True
        return False

    def success(self) -> None:
        self._failures = 0
        self._streak = 0

    def hold(self, seconds: float) -> None:
        self._until = max(self._until, self._clock() + min(seconds, MAX_RETRY_AFTER))

    def remaining(self) -> float:
        return max(0.0, self._until - self._clock())


class Breaker:
    """Fail fast when the endpoint is gone: before any request of the run has been answered,
    as many connection-level failures in a row as requests were in flight open the breaker.
    No request starts then for `wait` seconds; then one request goes as a probe while the
    others wait. If the probe fails at the connection level too, the endpoint is taken for
    dead (`failure` returns "dead") and the run stops; if it gets any answer (even an error
    status), the breaker closes and the run goes on.

    Once a request has been answered the breaker is off for the rest of the run: an outage in
    the middle of a healthy run is the cooldown's to ride out, since that endpoint did exist.

    The failures that open it are as many as requests may be in flight (`after`, see
    `default_cooldown_after`), or as many as were sent when fewer were: an endpoint that is
    gone fails every request in flight at once, so they are all seen in the first round and
    no one of them decides alone, while a run that sends one request at a time (the first
    finds out the reply format the server takes before the others go) opens it at the first:
    waiting for five of those, each retried after a longer backoff, took 20 s."""

    WAIT = 2.0
    """Seconds before the probe: long enough for a server that was restarting to take
    requests again, short enough that a dead endpoint stops the run within seconds."""

    def __init__(self, after: int, wait: float | None = None, clock: Clock = time.monotonic):
        self.after = max(1, after)
        self.wait = self.WAIT if wait is None else wait
        self._clock = clock
        self.failures = 0
        self.answered = False
        """A request was answered: the endpoint exists, and the breaker is off."""
        self.state: str = "closed"
        """closed (requests go), open (none goes until `remaining()` is 0), probing (one went)."""
        self._until = 0.0

    @property
    def armed(self) -> bool:
        """Whether connection-level failures are the breaker's to count (nothing answered)."""
        return not self.answered

    def success(self) -> None:
        """A request was answered: off for good."""
        self.answered = True
        self.failures = 0
        self.state = "closed"

    def failure(self, kind: str, probe: bool = False, sent: int | None = None) -> str | None:
        """Count a failed request (`probe`: the probe's own; `sent`: requests sent so far);
        "open" when it opens the breaker, "dead" when the probe failed at the connection
        level, else None."""
        if self.answered:
            return None
        if kind not in CONNECTION_LEVEL:
            self.failures = 0  # something answered, if not well: the endpoint is there
            if probe:
                self.state = "closed"
            return None
        self.failures += 1
        if probe:
            return "dead"
        needed = self.after if sent is None else max(1, min(self.after, sent))
        if self.state == "closed" and self.failures >= needed:
            self.state = "open"
            self._until = self._clock() + self.wait
            return "open"
        return None

    def remaining(self) -> float:
        """Seconds until the probe may go (0 when the breaker is not open)."""
        return max(0.0, self._until - self._clock()) if self.state == "open" else 0.0

    def start_probe(self) -> None:
        self.state = "probing"

    def probe_ended(self) -> None:
        """The probe's request is over, answered, refused in some other way or cut off (or it
        found the endpoint dead, and the run has stopped): let the others go."""
        if self.state == "probing":
            self.state = "closed"
            self.failures = 0


WORKERS_PER_SLOT = 4
"""Calls in progress per request slot. A call waiting out a backoff or a provider's Retry-After
holds no slot, so more calls than slots keep the slots busy meanwhile: with 50% 429s announcing
`Retry-After: 1` and 1 s latency a call takes 3 s of which 2 s in a slot, so 1.5x the slots
keep them busy; 4x does down to about 0.2 s latency."""


class AdaptiveSlots:
    """At most `limit` requests in flight, `limit` between 1 and `maximum` (`--max-concurrent`).

    `rate_limited()` halves the limit, at most once a second (one burst of 429s is one signal,
    not many); each success raises it by one, back up to `maximum`. The gate calls it only for
    a 429 that does not say when to come back (see `Gate.failed`)."""

    def __init__(self, maximum: int, clock: Clock = time.monotonic):
        self.maximum = max(1, maximum)
        self.limit = float(self.maximum)
        self.in_use = 0
        self.backoffs = 0
        self._clock = clock
        self._calm_until = float("-inf")
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def __aenter__(self) -> None:
        if self.in_use < int(self.limit) and not self._waiters:
            self.in_use += 1
            return
        granted = asyncio.get_running_loop().create_future()
        self._waiters.append(granted)
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self._release()  # granted, then cancelled: hand the slot on
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(granted)
            raise

    async def __aexit__(self, *exc: object) -> None:
        self._release()

    def _release(self) -> None:
        self.in_use -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_use < int(self.limit):
            granted = self._waiters.popleft()
            if not granted.done():
                self.in_use += 1
                granted.set_result(None)

    CALM = 1.0
    """Seconds after a halving in which further 429s count as the same burst."""

    def rate_limited(self) -> bool:
        """A 429; True when it lowered the limit."""
        now = self._clock()
        if now < self._calm_until:
            return False
        self.limit = max(1.0, self.limit / 2)
        self._calm_until = now + self.CALM
        self.backoffs += 1
        return True

    def succeeded(self) -> None:
        if self.limit < self.maximum:
            self.limit = min(float(self.maximum), self.limit + 1)
            self._wake()


@dataclass(frozen=True)
class ErrorBudget:
    """`--max-errors`: a count (`10`) or a fraction of the planned calls (`0.2`, `20%`)."""

    limit: float
    fraction: bool

    @classmethod
    def parse(cls, text: str) -> ErrorBudget:
        raw = text.strip()
        try:
            if raw.endswith("%"):
                return cls._checked(float(raw[:-1]) / 100.0, True, text)
            if "." in raw:
                return cls._checked(float(raw), True, text)
            return cls._checked(float(int(raw)), False, text)
        except ValueError:
            raise ValueError(
                f"--max-errors expects a count (10) or a fraction (0.2 or 20%), got {text!r}"
            ) from None

    @classmethod
    def _checked(cls, limit: float, fraction: bool, text: str) -> ErrorBudget:
        if limit < 0 or (fraction and limit > 1):
            raise ValueError(f"--max-errors out of range: {text!r}")
        return cls(limit, fraction)

    def allowed(self, planned: int) -> float:
        return self.limit * planned if self.fraction else self.limit

    def exceeded(self, errors: int, planned: int) -> bool:
        return errors > self.allowed(planned)

    def describe(self) -> str:
        return f"{self.limit:.0%} of the calls" if self.fraction else f"{int(self.limit)} errors"


UNUSABLE_KINDS = frozenset({"unparseable", "refusal"})
"""Calls that got replies and could use none of them: not the JSON asked for (after the
re-asks), answers to other question ids, refusals."""


class UnusableReplies:
    """Stop paying for replies that cannot be used (without `--max-errors`, whose budget
    replaces this rule).

    Each call that ends is usable (it answered), unusable (`UNUSABLE_KINDS`) or neither (a
    provider error: the retries, cooldown and breaker see to those). The run is to stop when
    the first `first` calls that end are all unusable, or when `SHARE` of the last `2 * first`
    are: a provider or model that answers nothing usable is found within a few rounds of the
    requests in flight, never after every call was paid for three times (two re-asks). A
    healthy run does not meet it by chance: a call is unusable only when its three tries all
    are, so even at half the replies malformed (1 call in 8) ten in a row come once in 10^9.
    """

    SHARE = 0.9

    def __init__(self, first: int = 10):
        self.first = first
        self.window: deque[bool] = deque(maxlen=2 * first)
        self.ended = 0
        self.usable = 0
        self.causes: Counter[str] = Counter()
        self.last: str | None = None

    @classmethod
    def for_concurrency(cls, max_concurrent: int) -> UnusableReplies:
        """K twice the requests in flight, at least 10: one round of calls ends together."""
        return cls(max(10, 2 * max_concurrent))

    def finished(self, kind: str | None, reason: str | None) -> str | None:
        """Count one call that ended; why the run is to stop, or None."""
        if kind is not None and kind not in UNUSABLE_KINDS and kind != "judge_omitted":
            return None
        unusable = kind in UNUSABLE_KINDS
        self.ended += 1
        self.usable += not unusable
        self.window.append(unusable)
        if unusable:
            self.causes[cause(kind, reason)] += 1
            self.last = reason
        if not self.usable and self.ended == self.first:
            return self._said(f"the first {self.first} calls")
        bad = sum(self.window)
        if len(self.window) == self.window.maxlen and bad >= self.SHARE * len(self.window):
            return self._said(f"{bad} of the last {len(self.window)} calls")
        return None

    def _said(self, which: str) -> str:
        causes = ", ".join(f"{name} ({n})" for name, n in self.causes.most_common())
        return (
            f"{which} gave no usable answer: {causes}; last: {self.last}. "
            "--max-errors sets a budget of failed calls instead"
        )


def cause(kind: str | None, reason: str | None) -> str:
    """What made a call's replies unusable, in words: refusals, answers to the wrong question
    ids, or replies that are not the JSON asked for."""
    text = (reason or "").lower()
    if kind == "refusal" or "refus" in text:
        return "refusals"
    if " ids" in text or "question id" in text:
        return "wrong question ids"
    return "replies not the JSON asked for"
