"""Client-side limits: a rate limiter that waits (rpm, tpm), a cooldown after consecutive
provider failures, the provider's Retry-After, and the run's error and cost budgets.

Everything here is plain arithmetic over an injectable clock, so it is tested without sleeping.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Clock = Callable[[], float]

MAX_RETRY_AFTER = 600.0
"""Longest Retry-After honoured (seconds); a provider asking for more is waited on this long."""


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


class Cooldown:
    """After `after` consecutive provider failures, no request starts for `seconds`.

    `hold(s)` also keeps requests back for `s` seconds: a provider's Retry-After concerns
    every request made with the same key, not only the one that got it."""

    def __init__(self, after: int = 3, seconds: float = 60.0, clock: Clock = time.monotonic):
        self.after = after
        self.seconds = seconds
        self._clock = clock
        self._failures = 0
        self._until = 0.0
        self.cooldowns = 0

    def failure(self) -> bool:
        """Count a failure; True when it starts a cooldown."""
        self._failures += 1
        if self.after > 0 and self._failures >= self.after:
            self._failures = 0
            self.cooldowns += 1
            self._until = max(self._until, self._clock() + self.seconds)
            return True
        return False

    def success(self) -> None:
        self._failures = 0

    def hold(self, seconds: float) -> None:
        self._until = max(self._until, self._clock() + min(seconds, MAX_RETRY_AFTER))

    def remaining(self) -> float:
        return max(0.0, self._until - self._clock())


def retry_after_seconds(exc: BaseException) -> float | None:
    """The delay a provider asked for in a failed response's headers, if any.

    litellm keeps the provider's response headers on its exceptions as
    `litellm_response_headers` (and on `exc.response.headers` for HTTP errors). OpenAI's
    `retry-after-ms` is read first (finer), then `Retry-After` as seconds or an HTTP date.
    """
    headers = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
    if headers is None or not hasattr(headers, "get"):
        return None
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return max(0.0, millis / 1000.0)
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return max(0.0, seconds)
    parsed = email.utils.parsedate_tz(str(value))
    if parsed is None:
        return None
    return max(0.0, email.utils.mktime_tz(parsed) - time.time())


def _number(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


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
