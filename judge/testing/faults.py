"""Fault kinds and the seeded plan that decides, per call index, which fault (if any) to inject."""

from __future__ import annotations

import random
from enum import StrEnum


class FaultKind(StrEnum):
    """A failure the fake provider can inject. The value is what the call log records."""

    RATE_LIMIT = "429"
    SERVER_ERROR = "500"
    UNAVAILABLE = "503"
    HANG = "hang"
    MALFORMED = "malformed"
    TRUNCATED = "truncated"
    REFUSAL = "refusal"
    UNAUTHORIZED = "401"
    BAD_REQUEST = "400"


_ALIASES: dict[str, FaultKind] = {
    "rate_limit": FaultKind.RATE_LIMIT,
    "server_error": FaultKind.SERVER_ERROR,
    "unavailable": FaultKind.UNAVAILABLE,
    "timeout": FaultKind.HANG,
    "auth": FaultKind.UNAUTHORIZED,
    "unauthorized": FaultKind.UNAUTHORIZED,
    "bad_request": FaultKind.BAD_REQUEST,
}

NO_FAULT_NAMES = frozenset({"", "ok", "none", "-"})


def parse_fault_kind(name: str) -> FaultKind:
    """Accept a fault's value (`500`, `hang`) or a readable alias (`server_error`, `timeout`)."""
    key = name.strip().lower()
    if key in _ALIASES:
        return _ALIASES[key]
    try:
        return FaultKind(key)
    except ValueError:
        known = sorted({k.value for k in FaultKind} | set(_ALIASES))
        expected = ", ".join(known)
        raise ValueError(f"unknown fault kind {name!r}; expected one of {expected}") from None


class FaultPlan:
    """Decides the fault and the latency of call number `index`, independent of call order.

    Each call index gets its own `random.Random` seeded from (seed, index), so two servers
    with the same seed inject the same faults at the same indices, whatever the thread timing.
    An explicit schedule entry overrides the random draw for its index.
    """

    def __init__(
        self,
        seed: int,
        rates: dict[FaultKind, float],
        schedule: list[FaultKind | None],
        latency: tuple[float, float],
    ) -> None:
        self._seed = seed
        self._rates = [(kind, p) for kind, p in sorted(rates.items()) if p > 0]
        self._schedule = schedule
        self._latency = latency

    def fault_for(self, index: int) -> FaultKind | None:
        if index < len(self._schedule):
            return self._schedule[index]
        if not self._rates:
            return None
        draw = random.Random(f"{self._seed}:{index}:fault").random()
        cumulative = 0.0
        for kind, p in self._rates:
            cumulative += p
            if draw < cumulative:
                return kind
        return None

    def latency_for(self, index: int) -> float:
        low, high = self._latency
        if low == high:
            return low
        return random.Random(f"{self._seed}:{index}:latency").uniform(low, high)
