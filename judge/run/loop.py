"""The run loop: wrap each leaf judge for the store, plan, start the workers, and keep every
answer as it comes in.

A run is reliable and resumable: each leaf judge's call goes through the store when one is
given (answered from it when it can, recorded as soon as it finishes), every provider request
passes the run's gate (pause file, cooldown, rate limit, concurrency, stop), and a run stopped
early (signal, fatal provider error, error or cost budget) still has what it finished; the
units nobody judged come out as not judged (`take_answers`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from ground_truth.errors import InputError, visible

from ..checklist.judgment import DimensionVerdict
from ..checklist.results import CallRecord, IncompleteCase, RunUsage
from ..checklist.rubric import parts_of
from ..errors import StorageError
from ..judges import Gated, Judge
from ..judges.base import Composite, NullGate, ask
from ..judges.clients.loading import Background
from ..store import Store
from .answers import answered, call_record, was_judged
from .cache import LeafCall, Prefilled, RecordedJudge, leaves
from .control import FATAL_KINDS, Gate, PauseFile, SignalStop
from .isolated import IsolatedJudge, isolable
from .leases import Deferred, UnitQueue, lease_book
from .limits import (
    WORKERS_PER_SLOT,
    Cooldown,
    ErrorBudget,
    RateLimiter,
    UnusableReplies,
    default_cooldown_after,
)
from .options import Control, Limits, Storage
from .plan import PLAN_BATCH, Closing, Planner
from .progress import Reporter, RunStats
from .remembered_formats import adopt_remembered, remember
from .sink import Kept, Sink, SpillFile
from .units import Done, Unit, done, empty_verdict, not_judged
from .validation import checked_verdict, judge_error_verdict

if TYPE_CHECKING:
    from .batch import BatchOptions, BatchReport

NUMPY: Background[object] = Background("numpy", lambda: import_module("numpy"))
"""The result's summary needs numpy (bootstrap intervals, `judge.checklist.scoring`; ~0.07 s
to import): a run that sends requests imports it while the replies are awaited, not after the
last one."""
SPILL_FROM_UNITS = 1000
"""Runs of this many units or more keep their judgments and call records in a temporary file
(`judge.run.sink`), smaller ones in memory: there they take under 5 MB, and a harness that
keeps many small results (one `evaluate_submission` per submission) would hold a file each."""
GROUP_FROM_UNITS = 100
"""Runs of this many units or more commit their answers to the store a batch at a time
(`judge.store.grouped`) from their first answer; smaller ones each at once, where the bytes
written are few. An answer committed alone writes a page of each table and index it touches
(~50 KB): from `SPILL_FROM_UNITS`, as it was, a run of 10,000 committed its first ~500
answers one by one (the units are read ~500 ahead of the answers), ~2.4 KB per answer of the
run's store writes (`benchmarks/store_logs.py --writes`)."""
CUT_OFF = "cut_off"
ADMIT_SECONDS = 0.005
"""The longest the unit source holds the event loop (reading and planning units) before the
workers get it back."""
READ_AHEAD = PLAN_BATCH
"""Units read ahead of the workers, at most (or twice the workers, if more): a unit holds
its submission, so reading a large input faster than it is judged would hold all of it."""


class Run:
    """One run's moving parts: the wrapped judge, the gate, the store, the counters.

    `units` may be a list or any iterable: they are taken from it while the workers already
    judge the first ones (a generator reading submission files as it goes), so that the
    first request never waits for the last unit to be made, and no further ahead than
    `READ_AHEAD`. `units` grows as they arrive, and each unit there becomes its `Done` once
    its answers are kept: from then on its submission is held by nothing of the run's."""

    def __init__(
        self,
        judge: Judge,
        units: Iterable[Unit],
        limits: Limits,
        control: Control,
        storage: Storage,
    ):
        self.judge = judge
        self._source = iter(units)
        self.units: list[Unit | Done] = []
        self.source_error: BaseException | None = None
        """What stopped the units from arriving (a bad input file met mid-run): no unit
        starts after it, and `run()` raises it once the calls in flight are done."""
        self.limits = limits
        self.control = control
        self.storage = storage
        self.stats = RunStats()
        self.reporter = Reporter(self.stats, every=control.progress_every, enabled=control.progress)
        self.store, self._owns_store = _open_store(storage.store)
        if self.store is not None and storage.group_commits:
            self._group_commits(self.store)
        self.gate = _gate(limits, control, self.stats, self._note)
        self.leaves = leaves(judge)
        self.leases = lease_book(self.store, len(self.leaves))
        self.keep: Sink = SpillFile() if storage.spill else Kept()
        self.calls: dict[str, array[int]] = {}
        """Each leaf's call record per unit, as an item number in `keep` (-1: none)."""
        self._task_unit: dict[int, int] = {}
        self.isolated: list[IsolatedJudge] = []
        self.wrapped = self._wrap(judge)
        self._judging = False
        self.finished_requests = 0
        self.finished_failures: Counter[str] = Counter()
        """Failed requests by kind inside the calls that finished; the rest of the gate's
        count (`stats.failed_requests`) happened inside calls a stop cut off."""
        self.batch: BatchReport | None = None
        self._on_started = control.on_started

    def _note(self, message: str) -> None:
        self.reporter.note(visible(message))  # may hold a provider's words: escape sequences
        if self.control.note:
            self.control.note(message)

    def _wrap(self, judge: Judge) -> Judge:
        if isinstance(judge, Composite):
            return judge.with_judges([self._wrap(m) for m in judge.judges()])
        if self.control.handle_signals and isolable(judge):  # a stop never waits for it
            judge = IsolatedJudge(judge, self.gate)  # type: ignore[arg-type]
            self.isolated.append(judge)
        return RecordedJudge(
            judge,
            self._record,
            self.store,
            self.storage.refresh,
            self.leases,
            self.storage.log_text,
        )

    def _record(self, call: LeafCall) -> None:
        index = self._task_unit[id(call.task)]
        call.task = None  # the task holds the rendered prompt: do not keep it all run long
        if call.judged:
            unit = self._unit(index)
            record = call_record(unit, call.verdict, call.judge, call.miss_reason)
            calls = self.calls.setdefault(call.judge, array("q"))
            if len(calls) <= index:
                calls.extend([-1] * (len(self.units) - len(calls)))
            calls[index] = self.keep.add(record)
            self.finished_requests += call.verdict.requests
            self.finished_failures.update(call.verdict.attempt_errors)
        if call.batched:
            usage = call.verdict.usage
            self.stats.requests += call.verdict.requests
            if usage is not None:
                self.stats.add_usage(usage.prompt_tokens, usage.completion_tokens, usage.cost_usd)
        if call.cached and not call.shared:
            self.stats.cached += 1
        elif call.judged:
            self.gate.call_finished(call.verdict.error_kind, call.verdict.error)
            if self._on_started is not None:  # the first call asked of a judge has ended
                started, self._on_started = self._on_started, None
                started()
            if self.control.on_call_done:
                unit = self._unit(index)
                self.control.on_call_done(call_record(unit, call.verdict, call.judge))
        self.reporter.tick()

    def _unit(self, index: int) -> Unit:
        """Unit `index`, which a call is judging: its answers are not kept yet."""
        unit = self.units[index]
        assert isinstance(unit, Unit), "a call ended after its unit's answers were kept"
        return unit

    async def _take_units(self, queue: UnitQueue[tuple[int, Unit]]) -> None:
        """Take the units from their source into the queue, planning each batch (store
        lookups, the calls to make, prefetch) as it arrives. The first batch is one unit and
        each is twice the last, up to `PLAN_BATCH`, and the loop is handed back to the workers
        at least every `ADMIT_SECONDS`: the first request leaves at once. Until the run's
        first request or answer, no more units are read than keep every worker busy: reading
        more would only take the interpreter from whatever the first request waits for (the
        client's HTTP library importing in another thread)."""
        planner = Planner(self.stats, self.leaves, self.wrapped, self.store, self.storage.refresh)
        size, batch = 1, []
        since = time.perf_counter()
        try:
            for unit in self._source:
                batch.append(unit)
                if len(batch) >= size or time.perf_counter() - since >= ADMIT_SECONDS:
                    self._admit(batch, planner, queue)
                    size, batch = min(2 * size, PLAN_BATCH), []
                    await asyncio.sleep(0)
                    while queue.waiting() and not self._under_way():
                        await asyncio.sleep(ADMIT_SECONDS)
                    while queue.waiting() >= self._read_ahead() and self._judging:
                        await asyncio.sleep(ADMIT_SECONDS)
                    since = time.perf_counter()
            self._admit(batch, planner, queue)
        except Exception as exc:  # raised by run() once the calls in flight end
            self.source_error = exc
            # no call starts from here: a unit a worker already took would be paid for and lost
            self.gate.stop("storage" if isinstance(exc, StorageError) else "input", str(exc))
        finally:
            queue.close()
        if self.stats.requests:
            NUMPY.start()
        self.gate.units_known()
        self.reporter.start()

    def _read_ahead(self) -> int:
        """How many units may wait for a worker (no limit in batch mode, whose calls are all
        known before any worker starts)."""
        if self.storage.batch is not None:
            return 1 << 62
        workers = max(1, self.limits.max_concurrent) * WORKERS_PER_SLOT * len(self.leaves)
        return max(READ_AHEAD, 2 * workers)

    def _under_way(self) -> bool:
        """Whether a request was sent or a call ended (or the run stopped, or is filled by a
        batch, whose calls are not taken by workers)."""
        stats = self.stats
        return bool(stats.requests or stats.done or stats.cached or stats.not_judged) or (
            self.gate.stopped is not None or self.storage.batch is not None
        )

    def _admit(
        self, batch: list[Unit], planner: Planner, queue: UnitQueue[tuple[int, Unit]]
    ) -> None:
        start = len(self.units)
        self.units.extend(batch)
        if self.storage.spill is None and len(self.units) >= SPILL_FROM_UNITS:
            self._spill()
        if self.storage.group_commits is None and len(self.units) >= GROUP_FROM_UNITS:
            self._group_commits(self.store)
        planner.add(batch)
        for index, unit in enumerate(batch, start):
            queue.put((index, unit))

    def _spill(self) -> None:
        """From `SPILL_FROM_UNITS` units on, keep answers in a file: what was kept in memory
        so far moves there under the same item numbers."""
        if isinstance(self.keep, SpillFile):
            return
        kept, self.keep = self.keep, SpillFile()
        assert isinstance(kept, Kept)
        for item in kept.items():
            self.keep.add(item)

    def reorder(self, key: Callable[[Unit | Done], tuple[str, int, str]]) -> None:
        """Put the units (and what the run kept for each) in `key`'s order: units that arrived
        in the order their files were read come out in the order the result lists them."""
        order = sorted(range(len(self.units)), key=lambda i: key(self.units[i]))
        if order == list(range(len(order))):
            return
        self.units = [self.units[i] for i in order]
        for name in list(self.calls):
            self.calls[name] = array("q", (self._call_item(name, i) for i in order))

    async def run(self) -> None:
        adopt_remembered(self.leaves, self.store, self._note)
        for leaf in self.leaves:
            if isinstance(leaf, Gated):
                leaf.gate = self.gate
        queue: UnitQueue[tuple[int, Unit]] = UnitQueue(closed=False)
        self.gate.units_arriving()
        taking = asyncio.create_task(self._take_units(queue))
        workers: list[asyncio.Task[None]] = []
        stopper = None
        if self.control.handle_signals:
            stopper = SignalStop(
                self.gate, self.control.grace, lambda: _cancel(workers), self.control.signal_latch
            )
            stopper.install()
        ticker = asyncio.create_task(self._tick())
        prefilled = None
        try:
            if self.storage.batch is not None:
                await taking  # a batch is sent with every call in it
                if self.source_error is not None:
                    raise self.source_error
                prefilled = await self._fill_from_batch(self.storage.batch)
            slots = max(1, self.limits.max_concurrent) * WORKERS_PER_SLOT
            workers.extend(
                asyncio.create_task(self._worker(queue))
                for _ in range(slots * max(1, len(self.leaves)))
            )
            self._judging = True
            await asyncio.gather(*workers, return_exceptions=True)
            self._judging = False  # no worker takes the units still arriving: read them all
            await taking  # every unit is listed, judged or not (after a stop too)
            if prefilled is not None and prefilled.stop is not None:
                self.gate.stop(*prefilled.stop)
        finally:
            if not taking.done():
                taking.cancel()
            ticker.cancel()
            if stopper is not None:
                stopper.remove()
            for child in self.isolated:
                child.close()
            for leaf in self.leaves:
                if isinstance(leaf, Gated) and leaf.gate is self.gate:
                    leaf.gate = NullGate()
                if isinstance(leaf, Closing):
                    with contextlib.suppress(Exception):  # a socket's close cannot fail a run
                        await leaf.aclose()
            self.reporter.stop()
            with contextlib.suppress(StorageError):  # a hint for later runs; the loss is reported
                remember(self.leaves, self.store)
            unsaved = self._end_group()
            if self._owns_store and self.store is not None:
                self.store.close()
        if unsaved is not None:
            raise unsaved
        for failure in (w.exception() for w in workers if w.done() and not w.cancelled()):
            if failure is not None:
                raise failure
        if self.source_error is not None:
            raise self.source_error

    def _group_commits(self, store: Store | None) -> None:
        if store is not None:
            store.group_commits(on_failure=lambda exc: self.gate.stop("storage", str(exc)))

    def _end_group(self) -> StorageError | None:
        """Commit the answers waiting for their batch (after a stop too: they are paid for);
        the error when that failed, which fails the run as a failed write of an answer does."""
        if self.store is None:
            return None
        try:
            self.store.end_group()
        except StorageError as exc:
            self.gate.stop("storage", str(exc))
            return exc
        return None

    async def _fill_from_batch(self, options: BatchOptions) -> Prefilled:
        """Batch mode: the calls the store cannot answer go out as provider batches, whose
        answers fill the store; the workers then serve every unit from it (`judge.run.batch`)."""
        from .batch import fill_store

        if self.store is None or not isinstance(self.wrapped, RecordedJudge):
            raise ValueError("batch mode needs a store: it records the batch to resume it")
        asked = (u.task() for u in self.units if isinstance(u, Unit) and u.asked)
        prefilled, self.batch = await fill_store(
            self.judge,  # type: ignore[arg-type]  # checked by batch_provider
            asked,
            self.store,
            options,
            self.gate,
            self.storage.refresh,
        )
        self.wrapped.prefilled = prefilled
        return prefilled

    async def _worker(self, queue: UnitQueue[tuple[int, Unit]]) -> None:
        while (item := await queue.get()) is not None:
            index, unit = item
            if self.gate.stopped is not None or self.source_error is not None:
                continue
            if not unit.asked:
                self._keep(index, unit, empty_verdict(unit))
                continue
            task = unit.task()
            self._task_unit[id(task)] = index
            try:
                verdict = checked_verdict(
                    await ask(self.wrapped, task), task.question_ids, self.judge.name
                )
            except asyncio.CancelledError:
                return
            except Deferred:  # another process is asking it: come back to it at the end
                queue.later((index, unit))
                continue
            except StorageError as exc:  # no other worker may start a call it cannot record
                self.gate.stop("storage", str(exc))
                raise
            except InputError as exc:  # a prompt that cannot be rendered: exit 2 once calls end
                self.gate.stop("input", str(exc))
                raise
            except Exception as exc:  # a judge's bug costs its own questions, not the run
                verdict = judge_error_verdict(exc, task.question_ids, self.judge.name)
            finally:
                self._task_unit.pop(id(task), None)
            if was_judged(verdict):
                self._keep(index, unit, verdict)
            await asyncio.sleep(0)

    def _keep(self, index: int, unit: Unit, verdict: DimensionVerdict) -> None:
        try:
            self.units[index] = done(unit, answered(unit, verdict, self.judge.name, self.keep))
        except StorageError as exc:  # the spill file failed: nothing more can be recorded
            self.gate.stop("storage", str(exc))
            raise

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(min(1.0, self.control.progress_every))
            self.reporter.tick()

    # ------------------------------------------------------------------ the result's parts

    def take_answers(self) -> Iterator[Done]:
        """Each unit's answers (or ones saying it was not judged), letting go of each as it
        is handed over: the last use of them (`incomplete` and `call_records` first)."""
        reason = self.gate.stopped.message if self.gate.stopped else "the run stopped"
        for index, unit in enumerate(self.units):
            self.units[index] = None  # type: ignore[call-overload]  # handed over
            if isinstance(unit, Unit):
                unit = done(
                    unit, answered(unit, not_judged(unit, reason), self.judge.name, self.keep)
                )
            yield unit

    def incomplete(self) -> list[IncompleteCase]:
        missing: dict[tuple[str, str], list[str]] = {}
        for unit in self.units:
            if isinstance(unit, Unit):
                dimensions = parts_of(unit.dimension) or [unit.dimension]
                missing.setdefault(unit.submission.key, []).extend(d.id for d in dimensions)
        return [
            IncompleteCase(incident_id=i, trial=t, dimensions=d) for (i, t), d in missing.items()
        ]

    def call_records(self) -> Sequence[CallRecord]:
        items: list[int] = []
        names = [leaf.name for leaf in self.leaves]
        for index, unit in enumerate(self.units):
            if isinstance(unit, Done) and unit.empty >= 0:
                items.append(unit.empty)
                continue
            items += [n for name in names if (n := self._call_item(name, index)) >= 0]
        return self.keep.sequence(CallRecord, items)

    def _call_item(self, name: str, index: int) -> int:
        """The item number of `name`'s call record for unit `index`, -1 for none. A leaf's
        numbers reach only as far as the units known at its last record: after a stop the
        units still arriving are listed, never recorded (`_take_units`)."""
        calls = self.calls.get(name)
        return calls[index] if calls is not None and index < len(calls) else -1

    def attempt_errors(self, calls: Sequence[CallRecord]) -> dict[str, int]:
        """Failed requests and unusable replies by kind, and as `cut_off` the requests sent
        by calls a stop ended before they could finish (their reply was never counted); the
        failures those calls met before the stop are counted under their own kinds."""
        counts = sum((Counter(c.attempt_errors) for c in calls), Counter())
        lost = self.stats.failed_requests - self.finished_failures
        failed_before = {kind: n for kind, n in lost.items() if kind not in FATAL_KINDS}
        counts.update(failed_before)
        cut_off = self.stats.requests - self.finished_requests - sum(failed_before.values())
        if cut_off > 0:
            counts[CUT_OFF] += cut_off
        return dict(counts)

    def release(self) -> None:
        """Drop the run's verdicts and units now: the judge wrappers point back at this run,
        so without it they would live until the garbage collector finds the cycle, which
        for a large run means while the result file is being written."""
        self.calls.clear()
        self.keep = Kept()  # the result's sequences hold a spill file as long as they need it
        self.units = []
        self.wrapped = self.judge

    def usage(self) -> RunUsage:
        stats = self.stats
        return RunUsage(
            calls_planned=stats.planned,
            calls_made=stats.done,
            cache_hits=stats.cached,
            requests=stats.requests,
            retries=stats.retries,
            prompt_tokens=stats.prompt_tokens,
            completion_tokens=stats.completion_tokens,
            cached_tokens=stats.cached_tokens,
            cache_write_tokens=stats.cache_write_tokens,
            cost_usd=stats.cost,
            cost_unknown_requests=stats.cost_unknown,
            batch=self.batch.usage() if self.batch is not None else None,
        )


def _gate(limits: Limits, control: Control, stats: RunStats, note) -> Gate:
    rate = RateLimiter(limits.rpm, limits.tpm) if limits.rpm or limits.tpm else None
    after = limits.cooldown_after
    return Gate(
        max_concurrent=limits.max_concurrent,
        limiter=rate,
        cooldown=Cooldown(
            default_cooldown_after(limits.max_concurrent) if after is None else after,
            limits.cooldown,
        ),
        pause=PauseFile(control.pause_file, control.pause_poll) if control.pause_file else None,
        stats=stats,
        error_budget=_error_budget(limits.max_errors),
        max_cost=limits.max_cost,
        note=note,
        unusable=None
        if limits.max_errors
        else UnusableReplies.for_concurrency(limits.max_concurrent),
    )


def _cancel(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()


def _open_store(store: Store | str | Path | None) -> tuple[Store | None, bool]:
    if store is None or isinstance(store, Store):
        return store, False
    return Store(store), True


def _error_budget(value: ErrorBudget | str | None) -> ErrorBudget | None:
    if value is None or isinstance(value, ErrorBudget):
        return value
    return ErrorBudget.parse(str(value))
