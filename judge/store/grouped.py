"""Group commits: a large run's answers written a batch at a time, one transaction each.

Committed one by one, each answer made SQLite write every page it touched (the judgments table
and its three indexes, the reply log's tables and index, the prompt keys) to the WAL, and its
statements were each a transaction of their own: ~100 KB written per answer at 2,000
submissions, for ~5 KB kept (`benchmarks/store_logs.py --writes`). A batch writes most of
those pages once for all its answers. The leases taken before the calls are committed before
the calls are made (another process must see them), those asked for in one turn of the event
loop in one transaction (`judge.run.leases`).

While a batch waits, the process reads its own answers from it (`Pending.answer`), and the
lease on each of its keys is released only with the batch, so another process sharing the
store never sees a key free whose answer is not yet there. A kill loses the calls in flight and
at most one batch (`GROUP_SECONDS` of answers, or `GROUP_ANSWERS`); a resumed run asks those
again, as it asks the calls that were in flight.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import StorageError

if TYPE_CHECKING:
    from ..checklist.judgment import DimensionVerdict
    from .keys import CaseRef, KeyParts
    from .replies import CallLog

GROUP_SECONDS = 2.0
"""The longest an answer waits for its batch's commit."""
GROUP_ANSWERS = 1000
"""A batch is committed once it holds this many answers, whatever its age."""


@dataclass
class Put:
    """One finished call as `Store.put` got it, with its answer's row already made."""

    parts: KeyParts
    case: CaseRef
    verdict: DimensionVerdict
    log: CallLog | None
    prompt_inputs: str | None
    row: tuple[Any, ...] | None
    """The `judgments` row of an answer (None for a failed call, an `errors` row)."""


@dataclass
class Pending:
    """The batch being gathered, and when it must be committed."""

    commit: Callable[[], None]
    seconds: float = GROUP_SECONDS
    answers: int = GROUP_ANSWERS
    puts: list[Put] = field(default_factory=list)
    by_key: dict[str, Put] = field(default_factory=dict)
    keys: set[str] = field(default_factory=set)
    cases: set[tuple[str, str, str]] = field(default_factory=set)
    releases: list[tuple[str, str]] = field(default_factory=list)
    failed: StorageError | None = None
    """A commit that failed on the timer: raised by the next `add`."""
    on_failure: Callable[[StorageError], None] | None = None
    """Told at once of a commit that failed on the timer (the run stops its calls)."""
    _timer: asyncio.TimerHandle | None = None

    def add(self, put: Put) -> bool:
        """Keep `put`; True when the batch is due now (full, or no event loop to wait on)."""
        if self.failed is not None:
            raise self.failed
        self.puts.append(put)
        if put.row is not None:
            self.by_key[put.parts.key] = put
        self.keys.add(put.parts.key)
        self.cases.add((put.case.incident_id, put.case.trial, put.case.dimension_id))
        if len(self.puts) >= self.answers:
            return True
        if self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return True
            self._timer = loop.call_later(self.seconds, self._due)
        return False

    def answer(self, key: str) -> tuple[Any, ...] | None:
        """The waiting answer's row for `key`, if one waits."""
        put = self.by_key.get(key)
        return None if put is None else put.row

    def holds_case(self, case: CaseRef) -> bool:
        return (case.incident_id, case.trial, case.dimension_id) in self.cases

    def release_later(self, key: str, owner: str) -> bool:
        """Hold a lease's release for the batch that holds its key's answer."""
        if key not in self.keys:
            return False
        self.releases.append((key, owner))
        return True

    def take(self) -> tuple[list[Put], list[tuple[str, str]]]:
        """The batch's puts and lease releases, leaving the batch empty."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        puts, releases = self.puts, self.releases
        self.puts, self.releases, self.by_key, self.keys, self.cases = [], [], {}, set(), set()
        return puts, releases

    def _due(self) -> None:
        self._timer = None
        try:
            self.commit()
        except StorageError as exc:
            self.failed = exc
            if self.on_failure is not None:
                self.on_failure(exc)
