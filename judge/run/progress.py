"""The run's counters and how they are shown: a rich progress bar on a terminal, plain
periodic lines otherwise (CI logs, pipes), always on stderr.

Counters are per leaf call: one judge answering one (case, dimension); a panel of three makes
three. `planned` are the calls the store could not answer; `cached` those it did.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, TextIO


@dataclass
class RunStats:
    """A run's live counters for the progress display: calls planned, answered from the store,
    done and failed; requests, retries and failures by kind; tokens and cost.
    """

    total: int = 0
    planned: int = 0
    cached: int = 0
    done: int = 0
    errors: int = 0
    not_judged: int = 0
    requests: int = 0
    retries: int = 0
    failed_requests: Counter[str] = field(default_factory=Counter)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    cost_unknown: int = 0
    paused: bool = False
    cooling: bool = False
    started: float = field(default_factory=time.monotonic)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cost(self) -> float | None:
        """Spent so far; None once any request's price was unknown (never a made-up 0)."""
        return None if self.cost_unknown else self.cost_usd

    def add_usage(
        self,
        prompt: int | None,
        completion: int | None,
        cost: float | None,
        cached: int | None = None,
        written: int | None = None,
    ) -> None:
        self.prompt_tokens += prompt or 0
        self.completion_tokens += completion or 0
        self.cached_tokens += cached or 0
        self.cache_write_tokens += written or 0
        if cost is None:
            self.cost_unknown += 1
        else:
            self.cost_usd += cost

    def _cached_text(self) -> str:
        if not (self.cached_tokens or self.cache_write_tokens):
            return ""
        written = f", {self.cache_write_tokens:,} written" if self.cache_write_tokens else ""
        return f" (cached {self.cached_tokens:,}{written})"

    def line(self) -> str:
        parts = [f"calls {self.done}/{self.planned}"]
        if self.cached:
            parts.append(f"cached {self.cached}")
        parts.append(f"retries {self.retries}")
        errors = f"errors {self.errors}"
        if self.failed_requests:
            kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.failed_requests.items()))
            errors += f" (failed requests: {kinds})"
        parts.append(errors)
        if self.requests:
            parts.append(f"tokens {self.tokens:,}" + self._cached_text())
            parts.append("cost " + cost_text(self.cost, self.cost_unknown))
        if self.paused:
            parts.append("PAUSED")
        if self.cooling:
            parts.append("COOLING DOWN")
        return " | ".join(parts)


def cost_text(cost: float | None, unknown: int = 0) -> str:
    """`$0.0123`; when `cost` is None, "unknown" and how many requests had no known price."""
    if cost is not None:
        return f"${cost:.4f}"
    return f"unknown ({unknown} request(s) without a known price)" if unknown else "unknown"


class Reporter:
    """Shows `stats` while the run goes: `tick()` often (cheap), `note()` for events."""

    def __init__(
        self,
        stats: RunStats,
        stream: TextIO | None = None,
        every: float = 10.0,
        tty: bool | None = None,
        enabled: bool = True,
    ):
        self.stats = stats
        self.stream = stream or sys.stderr
        self.every = every
        self.tty = self.stream.isatty() if tty is None else tty
        self.enabled = enabled
        self._last = 0.0
        self._bar: Any = None
        self._task: Any = None
        self._started = False

    def start(self) -> None:
        """Show the calls to make (the run knows them all once its units are planned)."""
        self._started = True
        if not self.enabled or not self.stats.planned:
            return
        if self.tty:
            self._start_bar()
        else:
            self._print(f"judging: {self.stats.planned} calls to make, {self.stats.cached} cached")
            self._last = time.monotonic()

    def _start_bar(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self._bar = Progress(
            TextColumn("judging"),
            BarColumn(bar_width=20),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
            console=Console(file=self.stream),
            transient=False,
        )
        self._task = self._bar.add_task(self._bar_text(), total=self.stats.planned)
        self._bar.start()

    def _bar_text(self) -> str:
        """Short enough for an 80-column terminal beside the bar."""
        s = self.stats
        parts = [f"cached {s.cached}", f"retries {s.retries}", f"errors {s.errors}"]
        if s.requests:
            cost = "?" if s.cost is None else f"${s.cost:.4f}"
            parts += [
                f"{s.tokens:,} tok" + (f" ({s.cached_tokens:,} cached)" if s.cached_tokens else ""),
                cost,
            ]
        if s.paused:
            parts.append("PAUSED")
        if s.cooling:
            parts.append("COOLING")
        return " · ".join(parts)

    BAR_EVERY = 0.1
    """Seconds between updates of the bar (rich redraws it ten times a second): a call's end
    ticks it, and at 50 in flight calls end hundreds of times a second."""

    def tick(self, force: bool = False) -> None:
        if not self.enabled or not self._started:
            return
        if self._bar is not None:
            now = time.monotonic()
            if force or now - self._last >= self.BAR_EVERY:
                self._last = now
                description = self._bar_text()
                self._bar.update(self._task, completed=self.stats.done, description=description)
        elif self.stats.planned and time.monotonic() - self._last >= self.every:
            self._last = time.monotonic()
            self._print(self.stats.line())

    def note(self, message: str) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.console.print(message, markup=False, highlight=False)
        else:
            self._print(message)

    def stop(self) -> None:
        if not self.enabled or not self._started:
            return
        if self._bar is not None:
            self.tick(force=True)
            self._bar.stop()
            self._bar = None
        elif self.stats.planned:
            self._print(self.stats.line())

    def _print(self, text: str) -> None:
        print(text, file=self.stream, flush=True)
