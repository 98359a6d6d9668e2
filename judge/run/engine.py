"""The evaluation loop: for every (submission, dimension) render a prompt, ask the judge, score.

This is the Python API harnesses call: `evaluate` and `evaluate_submission` from plain code
(a script, or a notebook whose event loop is running: the run then gets a thread and a loop of
its own), `evaluate_async` and `evaluate_submission_async` from async code. The CLI is a thin
layer over it.

A run is reliable and resumable: each leaf judge's call goes through the store when one is
given (answered from it when it can, recorded as soon as it finishes), every provider request
passes the run's gate (pause file, cooldown, rate limit, concurrency, stop), and a run stopped
early (signal, fatal provider error, error or cost budget) still returns a result, marked
incomplete, in which the cases nobody judged are listed and their questions are unscored.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from ground_truth.matching import match_submissions
from ground_truth.models import IncidentSpec, Submission

from ..batch import BatchOptions, BatchReport, batch_phase
from ..checklist.prompts import Prompt, PromptRenderer
from ..checklist.results import CallRecord, EvalResult, IncompleteCase, Orphan, RunUsage
from ..checklist.rubric import Dimension, Rubric, load_rubric
from ..checklist.scoring import (
    CaseResult,
    DimensionScore,
    dimension_score,
    scored_case,
    summarize_by_agent,
    summarize_incidents,
    summarize_overall,
)
from ..errors import StorageError
from ..judges import Gated, Judge, JudgeTask, PanelJudge, check_judge, make_judge
from ..judges.base import ask
from ..judges.panel import PANEL_TIE
from ..judgment import DimensionVerdict, Judgment, QuestionAnswer, Usage, compact
from ..store import Store
from .cache import NOT_JUDGED, LeafCall, RecordedJudge, is_cacheable, leaves
from .control import FATAL_KINDS, Gate, NullGate, PauseFile, SignalLatch, SignalStop
from .deferred import DeferredTask
from .granularity import DEFAULT as DEFAULT_GRANULARITY
from .granularity import Granularity, parts_of, split, whole_submission
from .granularity import check as check_granularity
from .leases import Deferred, UnitQueue, lease_book
from .limits import (
    WORKERS_PER_SLOT,
    Cooldown,
    ErrorBudget,
    RateLimiter,
    default_cooldown_after,
)
from .progress import Reporter, RunStats
from .remembered_formats import adopt_remembered, remember
from .shard import Shard
from .shard import select as select_shard
from .spill import Kept, SpillFile
from .validation import checked_verdict, judge_error_verdict

EMPTY_DIAGNOSIS = "the diagnosis is empty"
SPILL_FROM_UNITS = 1000
"""Runs of this many units or more keep their judgments and call records in a temporary file
(`judge.run.spill`), smaller ones in memory: there they take under 5 MB, and a harness that keeps
many small results (one `evaluate_submission` per submission) would hold a file each."""
CUT_OFF = "cut_off"
T = TypeVar("T")


def tool_version() -> str:
    """The installed distribution's version, recorded in every result."""
    try:
        return version("diagnosis-judge")
    except PackageNotFoundError:
        return "0+unknown"


@dataclass
class EvalOptions:
    """How a run goes. The defaults ask every call with no store, limit or budget.

    - `store`: a `Store` or a path; answers found there are not asked again (unless
      `refresh`), and every finished call is written to it at once.
    - `rpm` / `tpm`: client-side request and token rates; requests wait for them.
    - `cooldown_after` / `cooldown`: after that many consecutive provider failures no request
      starts for that many seconds (0 turns it off; None: as many failures as `max_concurrent`,
      at least 3, see `limits.default_cooldown_after`).
    - `max_errors` (an `ErrorBudget`, or text like "10" or "0.2") / `max_cost` (USD): past
      them no call starts and the result is marked incomplete.
    - `pause_file`: while it exists no request starts.
    - `handle_signals`: SIGINT/SIGTERM stop the run; calls in flight get `grace` seconds.
      `signal_latch`: the caller's `SignalLatch`; a signal it holds stops the run at its start.
    - `progress`: show progress on stderr (a bar on a terminal, a line every
      `progress_every` seconds otherwise).
    - `granularity`: `"dimension"` (one call per submission and dimension) or
      `"submission"` (one call per submission asking every selected dimension's questions;
      see `judge.run.granularity`).
    """

    max_concurrent: int = 5
    dimensions: list[str] | None = None
    k: int | None = None
    seed: int = 20261126
    on_call_done: Callable[[CallRecord], None] | None = None
    store: Store | str | Path | None = None
    refresh: bool = False
    rpm: float | None = None
    tpm: float | None = None
    cooldown_after: int | None = None
    cooldown: float = 60.0
    max_errors: ErrorBudget | str | None = None
    max_cost: float | None = None
    pause_file: str | Path | None = None
    pause_poll: float = 0.2
    handle_signals: bool = False
    signal_latch: SignalLatch | None = None
    grace: float = 30.0
    progress: bool = False
    progress_every: float = 10.0
    note: Callable[[str], None] | None = field(default=None, repr=False)
    shard: Shard | None = None
    granularity: Granularity = DEFAULT_GRANULARITY
    batch: BatchOptions | None = None
    """Send the calls the store cannot answer as one provider batch job (`judge.batch`)."""
    spill: bool | None = None
    """Keep the result's judgments and call records in a temporary file and read them back
    when used (`judge.run.spill`), or in memory; None: in a file from `SPILL_FROM_UNITS` units."""


@runtime_checkable
class Prefetching(Protocol):
    """A judge with something slow to get ready for its first request (the llm judge imports
    litellm): the run calls `prefetch()` once it knows the judge has calls to make, which a
    run the store answers in full never has."""

    def prefetch(self) -> None: ...


@dataclass(slots=True)
class _Unit:
    """One (submission, dimension). The prompt is rendered when a judge reads it and not kept
    (only its hash is): 10,000 submissions' prompts would otherwise sit in memory all run
    long. `kept` is a prompt planning rendered for a call the store cannot answer, held until
    that call takes it, so that the prompt is rendered once."""

    spec: IncidentSpec
    submission: Submission
    dimension: Dimension
    renderer: PromptRenderer
    prompt_hash: str | None = None
    kept: Prompt | None = field(default=None, repr=False)

    @property
    def prompt(self) -> Prompt:
        prompt, self.kept = self.kept, None
        if prompt is None:
            prompt = self.renderer.render(self.spec, self.submission, self.dimension)
        self.prompt_hash = prompt.hash
        return prompt

    @property
    def hash(self) -> str:
        """The prompt's hash; empty when no judge read the prompt (the rules judge)."""
        return self.prompt_hash or ""

    def task(self) -> JudgeTask:
        return DeferredTask(
            self.spec, self.submission, self.dimension, lambda: self.prompt, self.prompt_hash
        )


def _units(
    pairs: list[tuple[IncidentSpec, Submission]],
    rubric: Rubric,
    renderer: PromptRenderer,
    granularity: Granularity = DEFAULT_GRANULARITY,
) -> list[_Unit]:
    dimensions = rubric.dimensions
    if granularity == "submission":
        dimensions = [whole_submission(rubric.dimensions)]
    return [_Unit(spec, sub, dim, renderer) for spec, sub in pairs for dim in dimensions]


def _per_dimension(
    unit: _Unit, verdict: DimensionVerdict, judge_name: str
) -> list[tuple[_Unit, DimensionVerdict]]:
    """A whole-submission unit's verdict as one verdict per dimension (each validated again);
    a dimension's unit as it is."""
    parts = parts_of(unit.dimension)
    if parts is None:
        return [(unit, verdict)]
    prompt_hash = unit.hash
    return [
        (_Unit(unit.spec, unit.submission, part, unit.renderer, prompt_hash), part_verdict)
        for part, part_verdict in zip(parts, split(verdict, parts, judge_name), strict=True)
    ]


def render_prompts(
    specs: list[IncidentSpec],
    submissions: list[Submission],
    rubric: Rubric,
    renderer: PromptRenderer | None = None,
    granularity: Granularity = DEFAULT_GRANULARITY,
) -> list[tuple[Submission, Dimension, Prompt]]:
    """Every prompt a run would send, without calling any judge (`judge eval --dry-run`).
    With `granularity="submission"` the dimension is the whole-submission pseudo-dimension
    (id `*`)."""
    matching = match_submissions(specs, submissions)
    units = _units(matching.pairs, rubric, renderer or PromptRenderer(), granularity)
    return [(u.submission, u.dimension, u.prompt) for u in units]


def _empty_verdict(unit: _Unit) -> DimensionVerdict:
    answers = [
        QuestionAnswer(question_id=q.id, answer="No", evidence="", confidence="High")
        for q in unit.dimension.questions
    ]
    return DimensionVerdict(answers=answers, attempts=0, error=EMPTY_DIAGNOSIS)


@dataclass(slots=True)
class _Answered:
    """What the result keeps of a unit's verdict, made as soon as the verdict is in: its
    judgments go to the run's keeper (a spill file for a large run) and only their item
    numbers and the dimensions' counts stay here; the verdicts themselves (3-4 KB each with
    their answers) would otherwise all be held until the run ends."""

    judgments: range
    members: range
    scores: list[DimensionScore]
    failed: int
    empty: int | None
    """The call record of an empty diagnosis, which no judge was asked."""


def _answered(
    unit: _Unit, verdict: DimensionVerdict, judge_name: str, keep: SpillFile | Kept
) -> _Answered:
    parts = _per_dimension(unit, verdict, judge_name)
    start = keep.count
    scores = []
    for part, part_verdict in parts:
        judgments = _judgments(part, part_verdict, judge_name)
        scores.append(compact(dimension_score(part.dimension.id, judgments)))
        _add(keep, judgments)
    judged = range(start, keep.count)
    members = _add(keep, [j for part, v in parts for j in _member_judgments(part, v)])
    empty = None
    if verdict.error == EMPTY_DIAGNOSIS:
        empty = keep.add(_call_record(unit, verdict, judge_name))
    return _Answered(
        judgments=judged,
        members=members,
        scores=scores,
        failed=sum(_failed_questions(v) for _, v in parts),
        empty=empty,
    )


def _add(keep: SpillFile | Kept, models: list[Judgment]) -> range:
    """Keep `models`, one after another (nothing else is kept meanwhile: this runs on the
    event loop without awaiting); their item numbers."""
    start = keep.count
    for model in models:
        keep.add(model)
    return range(start, keep.count)


def _judgments(unit: _Unit, verdict: DimensionVerdict, judge_name: str) -> list[Judgment]:
    return [_judgment(unit, a, judge_name) for a in verdict.answers]


def _member_judgments(unit: _Unit, verdict: DimensionVerdict) -> list[Judgment]:
    """A panel's members' own answers, under their names (they do not enter the scores)."""
    return [
        _judgment(unit, a, name)
        for name, member in (verdict.members or {}).items()
        for a in member.answers
    ]


def _judgment(unit: _Unit, answer: QuestionAnswer, judge_name: str) -> Judgment:
    return compact(
        Judgment(
            incident_id=unit.submission.incident_id,
            trial=unit.submission.trial,
            dimension_id=unit.dimension.id,
            question_id=sys.intern(answer.question_id),  # one copy per id, not per reply
            answer=answer.answer,
            evidence=answer.evidence,
            confidence=answer.confidence,
            unscored_reason=answer.unscored_reason,
            judge=judge_name,
            prompt_hash=unit.hash,
        )
    )


def _call_record(
    unit: _Unit, verdict: DimensionVerdict, judge_name: str, miss: str | None = None
) -> CallRecord:
    return compact(
        CallRecord(
            incident_id=unit.submission.incident_id,
            trial=unit.submission.trial,
            dimension_id=unit.dimension.id,
            judge=judge_name,
            prompt_hash=unit.hash,
            attempts=verdict.attempts,
            error=verdict.error,
            error_kind=verdict.error_kind,
            usage=_settled(verdict.usage),
            requests=verdict.requests,
            attempt_errors=verdict.attempt_errors,
            cached=verdict.cached,
            cache_miss=miss,
            batch_id=verdict.batch_id,
        )
    )


def _settled(usage: Usage | None) -> Usage | None:
    """`usage` with every field set, so that `compact` can share its fields-set: a judge fills
    usage field by field, which left each of 30,000 call records its own set (216 bytes)."""
    if usage is None or usage.model_fields_set == set(Usage.model_fields):
        return usage
    return Usage.model_construct(**dict(usage))


def _was_judged(verdict: DimensionVerdict) -> bool:
    if verdict.error_kind == NOT_JUDGED:
        return False
    return all(m.error_kind != NOT_JUDGED for m in (verdict.members or {}).values())


def _not_judged(unit: _Unit, reason: str) -> DimensionVerdict:
    answers = [
        QuestionAnswer(question_id=q.id, unscored_reason=f"not judged: {reason}")
        for q in unit.dimension.questions
    ]
    return DimensionVerdict(answers=answers, attempts=0)


class _Run:
    """One run's moving parts: the wrapped judge, the gate, the store, the counters."""

    def __init__(self, judge: Judge, units: list[_Unit], options: EvalOptions):
        self.judge = judge
        self.units = units
        self.options = options
        self.stats = RunStats()
        self.reporter = Reporter(self.stats, every=options.progress_every, enabled=options.progress)
        self.store, self._owns_store = _open_store(options.store)
        self.gate = Gate(
            max_concurrent=options.max_concurrent,
            limiter=RateLimiter(options.rpm, options.tpm) if options.rpm or options.tpm else None,
            cooldown=Cooldown(
                default_cooldown_after(options.max_concurrent)
                if options.cooldown_after is None
                else options.cooldown_after,
                options.cooldown,
            ),
            pause=PauseFile(options.pause_file, options.pause_poll) if options.pause_file else None,
            stats=self.stats,
            error_budget=_error_budget(options.max_errors),
            max_cost=options.max_cost,
            note=self._note,
        )
        self.leaves = leaves(judge)
        self.leases = lease_book(self.store, len(self.leaves))
        spill = options.spill if options.spill is not None else len(units) >= SPILL_FROM_UNITS
        self.keep: SpillFile | Kept = SpillFile() if spill else Kept()
        self.calls: dict[str, array[int]] = {}
        """Each leaf's call record per unit, as an item number in `keep` (-1: none)."""
        self._task_unit: dict[int, int] = {}
        self.wrapped = self._wrap(judge)
        self.verdicts: list[_Answered | None] = [None] * len(units)
        self.finished_requests = 0
        self.finished_failures: Counter[str] = Counter()
        """Failed requests by kind inside the calls that finished; the rest of the gate's
        count (`stats.failed_requests`) happened inside calls a stop cut off."""
        self.batch: BatchReport | None = None

    def _note(self, message: str) -> None:
        self.reporter.note(message)
        if self.options.note:
            self.options.note(message)

    def _wrap(self, judge: Judge) -> Judge:
        if isinstance(judge, PanelJudge):
            return PanelJudge([self._wrap(m) for m in judge.members], judge.tie, judge.name)
        return RecordedJudge(judge, self._record, self.store, self.options.refresh, self.leases)

    def _record(self, call: LeafCall) -> None:
        index = self._task_unit[id(call.task)]
        call.task = None  # the task holds the rendered prompt: do not keep it all run long
        if call.judged:
            unit = self.units[index]
            record = _call_record(unit, call.verdict, call.judge, call.miss_reason)
            if call.judge not in self.calls:
                self.calls[call.judge] = array("q", [-1]) * len(self.units)
            self.calls[call.judge][index] = self.keep.add(record)
            self.finished_requests += call.verdict.requests
            self.finished_failures.update(call.verdict.attempt_errors)
        if call.cached and not call.shared:
            self.stats.cached += 1
        elif call.judged:
            self.gate.call_finished(call.verdict.error_kind)
            if self.options.on_call_done:
                unit = self.units[index]
                self.options.on_call_done(_call_record(unit, call.verdict, call.judge))
        self.reporter.tick()

    def _plan(self) -> None:
        """Count the calls to make: every leaf's call the store cannot answer."""
        asked = [u for u in self.units if u.submission.diagnosis.strip()]
        self.stats.total = len(asked) * len(self.leaves)
        hits: Counter[str] = Counter()
        stored = [
            leaf
            for leaf in leaves(self.wrapped)
            if isinstance(leaf, RecordedJudge) and leaf.store is not None
        ]
        if stored and self.store is not None and not self.options.refresh:
            known = set(self.store.judges())
            # a judge the store holds no answer of misses every call: no prompt to render
            stored = [leaf for leaf in stored if leaf.name in known]
            hits = _count_stored(self.store, asked, stored) if stored else hits
        self.stats.planned = self.stats.total - hits.total()
        for leaf in self.leaves:
            if isinstance(leaf, Prefetching) and hits[leaf.name] < len(asked):
                leaf.prefetch()

    async def run(self) -> None:
        adopt_remembered(self.leaves, self.store, self._note)
        self._plan()
        for leaf in self.leaves:
            if isinstance(leaf, Gated):
                leaf.gate = self.gate
        self.reporter.start()
        queue = UnitQueue(enumerate(self.units))
        workers: list[asyncio.Task[None]] = []
        stopper = None
        if self.options.handle_signals:
            stopper = SignalStop(
                self.gate, self.options.grace, lambda: _cancel(workers), self.options.signal_latch
            )
            stopper.install()
        ticker = asyncio.create_task(self._tick())
        try:
            if self.options.batch is not None:
                await self._batch_phase(self.options.batch)
            workers.extend(
                asyncio.create_task(self._worker(queue))
                for _ in range(
                    max(1, self.options.max_concurrent)
                    * WORKERS_PER_SLOT
                    * max(1, len(self.leaves))
                )
            )
            await asyncio.gather(*workers, return_exceptions=True)
        finally:
            ticker.cancel()
            if stopper is not None:
                stopper.remove()
            for leaf in self.leaves:
                if isinstance(leaf, Gated) and leaf.gate is self.gate:
                    leaf.gate = NullGate()
            self.reporter.stop()
            with contextlib.suppress(StorageError):  # a hint for later runs; the loss is reported
                remember(self.leaves, self.store)
            if self._owns_store and self.store is not None:
                self.store.close()
        for failure in (w.exception() for w in workers if not w.cancelled()):
            if failure is not None:
                raise failure

    async def _batch_phase(self, options: BatchOptions) -> None:
        """Batch mode: one provider batch for the calls the store cannot answer; the workers
        then serve every unit from its results (see `judge.batch`)."""
        if self.store is None:
            raise ValueError("batch mode needs a store: it records the batch to resume it")
        asked = (u.task() for u in self.units if u.submission.diagnosis.strip())
        self.wrapped, self.batch = await batch_phase(
            self.judge,  # type: ignore[arg-type]  # checked by batch_provider
            asked,
            self.store,
            options,
            self.gate,
            self._record,
            self._note,
            self.options.refresh,
        )

    async def _worker(self, queue) -> None:
        for index, unit in queue:
            if self.gate.stopped is not None:
                continue
            if not unit.submission.diagnosis.strip():
                self._keep(index, unit, _empty_verdict(unit))
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
            except Exception as exc:  # a judge's bug costs its own questions, not the run
                verdict = judge_error_verdict(exc, task.question_ids, self.judge.name)
            finally:
                self._task_unit.pop(id(task), None)
            if _was_judged(verdict):
                self._keep(index, unit, verdict)
            await asyncio.sleep(0)

    def _keep(self, index: int, unit: _Unit, verdict: DimensionVerdict) -> None:
        try:
            self.verdicts[index] = _answered(unit, verdict, self.judge.name, self.keep)
        except StorageError as exc:  # the spill file failed: nothing more can be recorded
            self.gate.stop("storage", str(exc))
            raise

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(min(1.0, self.options.progress_every))
            self.reporter.tick()

    # ------------------------------------------------------------------ the result's parts

    def take_answers(self) -> Iterator[tuple[_Unit, _Answered]]:
        """Each unit with its answers (or ones saying it was not judged), letting go of each
        as it is handed over: the last use of them (`incomplete` and `call_records` first)."""
        reason = self.gate.stopped.message if self.gate.stopped else "the run stopped"
        for index, unit in enumerate(self.units):
            answered, self.verdicts[index] = self.verdicts[index], None
            if answered is None:
                answered = _answered(unit, _not_judged(unit, reason), self.judge.name, self.keep)
            yield unit, answered

    def incomplete(self) -> list[IncompleteCase]:
        missing: dict[tuple[str, str], list[str]] = {}
        for unit, verdict in zip(self.units, self.verdicts, strict=True):
            if verdict is None:
                dimensions = parts_of(unit.dimension) or [unit.dimension]
                missing.setdefault(unit.submission.key, []).extend(d.id for d in dimensions)
        return [
            IncompleteCase(incident_id=i, trial=t, dimensions=d) for (i, t), d in missing.items()
        ]

    def call_records(self) -> Sequence[CallRecord]:
        items: list[int] = []
        names = [leaf.name for leaf in self.leaves]
        for index, answered in enumerate(self.verdicts):
            if answered is not None and answered.empty is not None:
                items.append(answered.empty)
                continue
            items += [
                n for name in names if name in self.calls and (n := self.calls[name][index]) >= 0
            ]
        return self.keep.sequence(CallRecord, items)

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
        self.verdicts = []
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


KEEP_PROMPTS = 2048
"""Prompts planning renders for calls the store cannot answer and keeps until they are sent
(about 6 KB each); the calls past them render their prompt again."""
PLAN_BATCH = 500


def _count_stored(store: Store, units: list[_Unit], stored: list[RecordedJudge]) -> Counter[str]:
    """How many of each leaf's calls the store answers, by leaf name. Every unit's prompt is
    rendered to find its key (its hash stays on the unit); the prompts of the first
    `KEEP_PROMPTS` units with a call to make are kept for that call."""
    hits: Counter[str] = Counter()
    kept = 0
    for start in range(0, len(units), PLAN_BATCH):
        batch = units[start : start + PLAN_BATCH]
        tasks = [unit.task() for unit in batch]
        keys = [
            [(leaf.name, parts.key) for leaf in stored if (parts := leaf.parts(task)) is not None]
            for task in tasks
        ]
        present = store.keys_present(key for unit_keys in keys for _, key in unit_keys)
        for unit, task, unit_keys in zip(batch, tasks, keys, strict=True):
            found = [name for name, key in unit_keys if key in present]
            hits.update(found)
            if len(found) < len(unit_keys) and kept < KEEP_PROMPTS:
                unit.kept = task.prompt
                kept += 1
    return hits


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


async def evaluate_async(
    specs: list[IncidentSpec],
    submissions: list[Submission],
    rubric: Rubric | str | Path | None = None,
    judge: Judge | None = None,
    renderer: PromptRenderer | None = None,
    options: EvalOptions | None = None,
    config: dict[str, Any] | None = None,
) -> EvalResult:
    """Score every submission against its spec, from async code (`await evaluate_async(...)`).

    - `specs`, `submissions`: each submission is matched to the spec with its incident id;
      a submission with no spec is an orphan and a spec with none is missing (both counted
      in the result, neither scored).
    - `rubric`: a `Rubric`, a shipped rubric's name (`"sregym-v3"`, the default) or a YAML
      path.
    - `judge`: any `Judge` (default: the offline rules judge); checked before the first call.
    - `renderer`: the prompt templates (default: the shipped ones).
    - `options`: concurrency, store, limits, budgets, signals (`EvalOptions`).
    - `config`: extra entries for the result's `config` block.

    Returns the whole `EvalResult` (cases, per-incident and overall scores, every judgment,
    every call). From `SPILL_FROM_UNITS` (submission, dimension) units on (or as
    `options.spill` says), the judgments and calls are read-only sequences over a temporary
    file that lives as long as the result (`judge.run.spill.SpilledSeq`), not lists. Provider
    failures leave questions unscored, counted in the result, never No.
    Raises `TypeError` for a judge that is not a `Judge`, `InputError` for a rubric that
    cannot be loaded, `ValueError` for an unknown `options.granularity`.
    """
    rubric, judge = _resolve(rubric, judge)
    options = options or EvalOptions()
    check_granularity(options.granularity)
    renderer = renderer or PromptRenderer()
    if options.dimensions:
        rubric = rubric.select(options.dimensions)
    matching = match_submissions(specs, submissions)
    all_units = _units(matching.pairs, rubric, renderer, options.granularity)
    units, shard = select_shard(all_units, options.shard, _key)
    if shard is not None:
        config = {**(config or {}), "shard": {**shard, "k": options.k}}
    run = _Run(judge, units, options)
    await run.run()
    run.keep.flush()  # a spill file that cannot be written fails the run here, not later
    calls = run.call_records()
    attempt_errors = run.attempt_errors(calls)
    incomplete = run.incomplete()
    stopped = run.gate.stopped if incomplete else None
    usage = run.usage() if any(_metered(leaf) for leaf in run.leaves) else None
    cases, judgments, failed = _assemble(run, rubric)
    run.release()
    incidents, k = summarize_incidents(cases, rubric, options.k)
    overall = summarize_overall(
        cases, incidents, rubric, k, len(matching.missing), len(matching.orphans), options.seed
    )
    if run.batch is not None:
        config = {
            **(config or {}),
            "batch": {"provider": run.batch.provider, "discount": run.batch.discount},
        }
    overall.n_failed_questions = failed
    return EvalResult(
        by_agent=summarize_by_agent(cases, rubric, options.k, options.seed),
        resolution=_resolution(matching.pairs, cases),
        entities=_entities(matching.pairs),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        tool_version=tool_version(),
        complete=not incomplete and not overall.n_failed_questions,
        config=_config(rubric, judge, renderer, options, config),
        overall=overall,
        incidents=incidents,
        cases=cases,
        judgments=judgments,
        calls=calls,
        errors=dict(Counter(c.error_kind for c in calls if c.error_kind)),
        attempt_errors=attempt_errors,
        stopped=stopped,
        incomplete=incomplete,
        usage=usage,
        missing=matching.missing,
        orphans=[
            Orphan(
                incident_id=o.incident_id,
                trial=o.trial,
                file=o.source.get("loaded_from") or o.source.get("file"),
            )
            for o in matching.orphans
        ],
    )


def _metered(judge: Judge) -> bool:
    """Whether the result gets a `usage` block: the judge makes calls worth counting."""
    return is_cacheable(judge) or isinstance(judge, Gated)


def _key(unit: _Unit) -> tuple[str, str, str]:
    return unit.submission.incident_id, unit.submission.trial, unit.dimension.id


def _failed_questions(verdict: DimensionVerdict) -> int:
    """Questions unscored because their call failed: a provider error, an unusable reply or a
    judge's error (not a panel's tie, not a call the run never made)."""
    if not verdict.error_kind or verdict.error_kind == NOT_JUDGED:
        return 0
    return sum(
        1
        for answer in verdict.answers
        if answer.answer is None and not (answer.unscored_reason or "").startswith(PANEL_TIE)
    )


def _resolution(
    pairs: list[tuple[IncidentSpec, Submission]], cases: list[CaseResult]
) -> dict[str, Any] | None:
    if not any(sub.trajectory for _, sub in pairs):
        return None
    from ..resolution.section import resolution_section

    section = resolution_section(pairs, {(c.incident_id, c.trial): c.passed for c in cases})
    return section.model_dump(mode="json") if section else None


def _entities(pairs: list[tuple[IncidentSpec, Submission]]) -> dict[str, Any] | None:
    """Programmatic root-cause entity scores, for submissions that name structured entities."""
    if not any(sub.entities for _, sub in pairs):
        return None
    from ground_truth.entities import score_entities

    scores = [(sub, score) for spec, sub in pairs if (score := score_entities(spec, sub))]
    if not scores:
        return None
    cases = [
        {"incident_id": s.incident_id, "trial": s.trial, **e.model_dump(mode="json")}
        for s, e in scores
    ]
    means = {
        m: sum(getattr(e, m) for _, e in scores) / len(scores)
        for m in ("precision", "recall", "f1")
    }
    top = [e.top_is_origin for _, e in scores if e.top_is_origin is not None]
    means["top_is_origin"] = sum(top) / len(top) if top else None
    return {"n": len(scores), "mean": means, "cases": cases}


def _assemble(run: _Run, rubric: Rubric) -> tuple[list[CaseResult], Sequence[Judgment], int]:
    """The scored cases, every judgment (the cases' in their order, then the panel members')
    and the failed questions' count, from the run's answers, each let go of once its case
    holds it."""
    items: dict[tuple[str, str], array[int]] = {}
    scores: dict[tuple[str, str], dict[str, DimensionScore]] = {}
    agents: dict[tuple[str, str], str | None] = {}
    members = array("q")
    failed = 0
    for unit, answered in run.take_answers():
        key = unit.submission.key
        items.setdefault(key, array("q")).extend(answered.judgments)
        scores.setdefault(key, {}).update((s.dimension_id, s) for s in answered.scores)
        agents[key] = unit.submission.agent
        members.extend(answered.members)
        failed += answered.failed
    cases = [
        scored_case(
            i,
            t,
            _case_scores(scores[(i, t)], rubric),
            run.keep.sequence(Judgment, js),
            rubric,
            agents[(i, t)],
        )
        for (i, t), js in items.items()
    ]
    every = array("q")
    for js in items.values():
        every.extend(js)
    every.extend(members)
    return cases, run.keep.sequence(Judgment, every), failed


def _case_scores(scores: dict[str, DimensionScore], rubric: Rubric) -> list[DimensionScore]:
    """One score per rubric dimension, in its order; none for a dimension nobody answered."""
    return [scores.get(d.id) or dimension_score(d.id, []) for d in rubric.dimensions]


def _config(
    rubric: Rubric,
    judge: Judge,
    renderer: PromptRenderer,
    options: EvalOptions,
    extra: dict[str, Any] | None,
) -> dict[str, Any]:
    return {
        "rubric": {
            "name": rubric.name,
            "version": rubric.version,
            "hash": rubric.hash,
            "threshold": rubric.scoring.threshold,
            "weights": rubric.scoring.weights,
        },
        "judge": {**judge.describe(), "label": judge.name},
        "prompt_template": {
            "dir": str(renderer.template_dir) if renderer.template_dir else None,
            "hash": renderer.fingerprint,
        },
        "dimensions": [d.id for d in rubric.dimensions],
        "granularity": options.granularity,
        "max_concurrent": options.max_concurrent,
        "seed": options.seed,
        **(extra or {}),
    }


def _resolve(rubric: Rubric | str | Path | None, judge: Judge | None) -> tuple[Rubric, Judge]:
    if not isinstance(rubric, Rubric):
        rubric = load_rubric(rubric) if rubric is not None else load_rubric()
    return rubric, check_judge(judge) if judge is not None else make_judge()


def evaluate(
    specs: list[IncidentSpec],
    submissions: list[Submission],
    rubric: Rubric | str | Path | None = None,
    judge: Judge | None = None,
    renderer: PromptRenderer | None = None,
    options: EvalOptions | None = None,
) -> EvalResult:
    """Score every submission against its spec; `evaluate_async` without `await`.

    Defaults: the `sregym-v3` rubric, the rules judge. Works from a script and inside a
    running event loop (Jupyter), where the run gets a worker thread and a loop of its own;
    async code should `await evaluate_async(...)` instead, which does not block its loop.
    """
    rubric, judge = _resolve(rubric, judge)  # a bad judge fails here, in the caller's thread
    return run_sync(evaluate_async(specs, submissions, rubric, judge, renderer, options))


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run`, but the main task's result is not the run's result.

    On Python 3.11 `asyncio.run` ends by looking up the SIGINT handler, and the enum lookup
    formats `repr()` of a partial holding the finished main task, whose repr includes its
    result: the whole `EvalResult`, seconds for a large run. Handing the result over through
    a box keeps that repr tiny.
    """
    box: list[T] = []

    async def main() -> None:
        box.append(await coroutine)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(main())
    else:  # a notebook's loop is running in this thread: run ours in another one
        with concurrent.futures.ThreadPoolExecutor(1, "diagnosis-judge") as worker:
            worker.submit(asyncio.run, main()).result()
    return box[0]


def evaluate_submission(
    spec: IncidentSpec,
    submission: Submission,
    rubric: Rubric | str | Path | None = None,
    judge: Judge | None = None,
    renderer: PromptRenderer | None = None,
    options: EvalOptions | None = None,
) -> CaseResult:
    """Score one submission; the result holds every question's answer (`case.judgments`).

    The submission is scored against `spec` whatever incident id it carries. Works from a
    script and inside a running event loop, like `evaluate`.
    """
    rubric, judge = _resolve(rubric, judge)
    return run_sync(evaluate_submission_async(spec, submission, rubric, judge, renderer, options))


async def evaluate_submission_async(
    spec: IncidentSpec,
    submission: Submission,
    rubric: Rubric | str | Path | None = None,
    judge: Judge | None = None,
    renderer: PromptRenderer | None = None,
    options: EvalOptions | None = None,
) -> CaseResult:
    """`evaluate_submission` for async code: `case = await evaluate_submission_async(...)`."""
    if submission.incident_id != spec.id:
        submission = submission.model_copy(update={"incident_id": spec.id})
    result = await evaluate_async([spec], [submission], rubric, judge, renderer, options)
    return result.cases[0]
