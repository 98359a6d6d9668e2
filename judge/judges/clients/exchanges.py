"""The requests a judge's call makes, gathered while the call runs, for the store's reply log
(`judge.store.replies`, `judge store logs`): each one an `Exchange`.

The run opens a log around each call it asks (`recording()`); a judge adds each request it
sends to it (`record()`), as the llm judge does. Outside a run, or for a judge that records
nothing, nothing is kept. A context variable carries the log, so the calls a run's many tasks
make at once never mix (each task has a copy of the context it was started in).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any


@dataclass
class Exchange:
    """One request of a call, as the judge saw it: the messages sent, and the reply text as
    it arrived (`reply`, with `finish_reason`) or why none came (`error_kind`, `error`); an
    answered request whose text could not be used has its reply and `error_kind`
    "unparseable"."""

    messages: Sequence[dict[str, Any]]
    reply: str | None = None
    finish_reason: str | None = None
    error_kind: str | None = None
    error: str | None = None
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None


_LOG: ContextVar[list[Exchange] | None] = ContextVar("judge_reply_log", default=None)


def record(exchange: Exchange) -> None:
    """Add one request to the log of the call under way, if the run keeps one."""
    log = _LOG.get()
    if log is not None:
        log.append(exchange)


@contextmanager
def recording() -> Iterator[list[Exchange]]:
    """Gather the requests made inside the block (by this task, and threads it starts with
    its context), in the order they were made."""
    log: list[Exchange] = []
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)
