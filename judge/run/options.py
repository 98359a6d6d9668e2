"""How a run goes, in three small groups: its limits, its control, and where it keeps things.

`judge.api.EvalOptions` holds one of each (and what the run evaluates); the run reads them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .control import SignalLatch
from .limits import ErrorBudget

if TYPE_CHECKING:
    from ..checklist.results import CallRecord
    from ..store import Store
    from .batch import BatchOptions


@dataclass
class Limits:
    """How fast and how much. The defaults: 5 requests in flight, no rate, no budget.

    - `max_concurrent`: provider requests in flight.
    - `rpm` / `tpm`: client-side request and token rates; requests wait for them.
    - `cooldown_after` / `cooldown`: after that many consecutive provider failures no request
      starts for that many seconds (0 turns it off; None: as many failures as `max_concurrent`,
      at least 3, see `limits.default_cooldown_after`).
    - `max_errors` (an `ErrorBudget`, or text like "10" or "0.2") / `max_cost` (USD): past
      them no call starts and the result is marked incomplete.
    """

    max_concurrent: int = 5
    rpm: float | None = None
    tpm: float | None = None
    cooldown_after: int | None = None
    cooldown: float = 60.0
    max_errors: ErrorBudget | str | None = None
    max_cost: float | None = None


@dataclass
class Control:
    """Pausing, stopping and watching a run.

    - `pause_file`: while it exists no request starts (looked at every `pause_poll` s).
    - `handle_signals`: SIGINT/SIGTERM stop the run; calls in flight get `grace` seconds.
      `signal_latch`: the caller's `SignalLatch`; a signal it holds stops the run at its start.
    - `progress`: show progress on stderr (a bar on a terminal, a line every
      `progress_every` seconds otherwise).
    - `note`: gets every message the run prints (pauses, cooldowns, stops, batches).
    - `on_call_done`: gets each call's record as soon as the call finishes.
    - `on_started`: called once, when the first call a judge was asked (not answered from the
      store) has ended: from then on the run mostly waits for replies, the caller's moment to
      get ready what it needs after the run (`judge eval` imports its summary's modules).
    """

    pause_file: str | Path | None = None
    pause_poll: float = 0.2
    handle_signals: bool = False
    signal_latch: SignalLatch | None = None
    grace: float = 30.0
    progress: bool = False
    progress_every: float = 10.0
    note: Callable[[str], None] | None = field(default=None, repr=False)
    on_call_done: Callable[[CallRecord], None] | None = None
    on_started: Callable[[], None] | None = field(default=None, repr=False)


@dataclass
class Storage:
    """Where a run reads and keeps what it has.

    - `store`: a `Store` or a path; answers found there are not asked again (unless
      `refresh`), and every finished call is written to it.
    - `batch`: send the calls the store cannot answer as one provider batch job first
      (`judge.run.batch`); the run then serves them from the store.
    - `spill`: keep the result's judgments and call records in a temporary file and read them
      back when used (`judge.run.sink`), or in memory; None: in a file from
      `SPILL_FROM_UNITS` units on.
    - `log_text`: keep each request's prompt and raw reply text in the store's reply log
      (`judge.store.replies`); False keeps only their latency, tokens, cost and errors.
    - `group_commits`: commit finished calls to the store a batch at a time
      (`judge.store.grouped`: a kill loses the calls in flight and at most one batch) or
      each at once; None: in batches from `GROUP_FROM_UNITS` units on.
    """

    store: Store | str | Path | None = None
    refresh: bool = False
    batch: BatchOptions | None = None
    spill: bool | None = None
    log_text: bool = True
    group_commits: bool | None = None
