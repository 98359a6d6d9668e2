"""Each leaf judge's calls go through here: answered from the store when it holds them,
recorded when they finish, and reported to the run either way.

A judge is cacheable when it implements `Cacheable` (`cache_identity()`; the `llm` judge).
Each call it makes is written with the requests behind it (`judge.judges.clients.exchanges`:
the prompt as sent and the raw reply, `judge.store.replies`), and a call the run stopped keeps
those too.
The rules judge is not cached: it answers in about the time a store lookup and commit take
(see benchmarks/README.md), and replaying a rules run is simply running it again. A panel's
members are wrapped one by one, so each member's calls are cached under its own name
(`llm:m#1`, `llm:m#2`, ...).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ground_truth.errors import InputError

from ..checklist.judgment import DimensionVerdict, unscored
from ..checklist.results import StopKind
from ..checklist.rubric import WHOLE, Dimension, content_hash, parts_of
from ..judges.base import Cacheable, Composite, Judge, JudgeTask, RunStopped, ask
from ..judges.clients.exchanges import Exchange, recording
from ..store import CallLog, CaseRef, KeyParts, Store, short_hash
from .deferred import inputs_key_of, prompt_hash_of
from .leases import LeaseBook, hold
from .validation import checked_verdict, judge_error_verdict

NOT_JUDGED = "not_judged"


@dataclass
class LeafCall:
    """One leaf judge's call for one (case, dimension), as the run accounts for it."""

    task: JudgeTask | None
    judge: str
    verdict: DimensionVerdict
    cached: bool = False
    judged: bool = True
    miss_reason: str | None = None
    shared: bool = False
    """Answered by another call with the same key made at the same time (no request of its
    own; its usage and attempts are counted once, on that call)."""
    batched: bool = False
    """Asked in one of this run's provider batches: its request and usage count for the run,
    though no request passed the run's gate."""


@dataclass
class Prefilled:
    """Calls answered before the run's workers start (`--batch`, `judge.run.batch.fill_store`):
    the run then serves every call from the store and asks none itself.

    An answer in `batch_of` was written by one of this run's batches: it counts as a call
    made, under that batch's id. A call in `failed` failed in one of them (the store serves
    answers, not failures). Any other call the store cannot answer is not judged, for the
    reason `why_missing(key)` gives; `stop` is the stop the run records once every call is
    served (`--max-cost` left some calls out of the batch)."""

    batch_of: dict[str, str]
    failed: dict[str, DimensionVerdict]
    why_missing: Callable[[str], str]
    stop: tuple[StopKind, str] | None = None
    served: set[str] = field(default_factory=set)
    """Keys already served: another unit with the same call shares its answer."""


def is_cacheable(judge: Judge) -> bool:
    """Whether the store keeps this judge's answers (it implements `Cacheable`)."""
    return isinstance(judge, Cacheable)


def leaves(judge: Judge) -> list[Judge]:
    """The judges that answer: a panel's members or a cascade's stages (at any depth), or the
    judge itself."""
    if not isinstance(judge, Composite):
        return [judge]
    return [leaf for m in judge.judges() for leaf in leaves(m)]


def judge_models(judge: Judge) -> list[str]:
    """The models of the judge's LLM leaves (a panel's members', a cascade's stages')."""
    found = [getattr(leaf, "model", None) for leaf in leaves(judge)]
    return list(dict.fromkeys(m for m in found if isinstance(m, str)))


def case_ref(task: JudgeTask) -> CaseRef:
    """The (incident, trial, dimension) a call is about, as the store records it."""
    return CaseRef(task.submission.incident_id, task.submission.trial, task.dimension.id)


class KeyMaker:
    """The store key of a cacheable judge's call, with the per-run hashes computed once."""

    def __init__(self, judge: Cacheable):
        identity = judge.cache_identity()
        self.judge = judge.name
        self.model = identity.get("model")
        self.params = identity.get("params") or {}
        self.params_hash = short_hash(self.params)
        self.schema = identity.get("schema") or ""
        self._dimension_hashes: dict[int, str] = {}

    def dimension_hash(self, dimension: Dimension) -> str:
        found = self._dimension_hashes.get(id(dimension))
        if found is None:
            found = content_hash(dimension.model_dump())
            self._dimension_hashes[id(dimension)] = found
        return found

    def parts(self, task: JudgeTask) -> KeyParts:
        return KeyParts(
            judge=self.judge,
            model=self.model,
            params=self.params_hash,
            prompt=prompt_hash_of(task),
            schema=self.schema,
            rubric=self.dimension_hash(task.dimension),
        )


class RecordedJudge:
    """Wraps a leaf judge for one run: store lookups and writes, and a `LeafCall` per call.

    A call the run stopped before it started (or cancelled after its grace period) comes back
    as a `not_judged` verdict instead of an exception, so a panel's other members finish and
    are stored; the engine then reports the whole (case, dimension) as not judged.

    Two calls with the same key at the same time (two trials with the same diagnosis) make one
    provider call: the second waits for the first's answer and counts as a cache hit.
    """

    def __init__(
        self,
        inner: Judge,
        sink: Callable[[LeafCall], None],
        store: Store | None = None,
        refresh: bool = False,
        leases: LeaseBook | None = None,
        log_text: bool = True,
    ):
        self.inner = inner
        self.log_text = log_text
        self.name = inner.name
        self.sink = sink
        self.store = store if store is not None and is_cacheable(inner) else None
        self.refresh = refresh
        self.leases = leases
        self.keys = (
            KeyMaker(inner) if self.store is not None and isinstance(inner, Cacheable) else None
        )
        if self.store is not None and self.keys is not None:
            self.store.remember_params(self.keys.params_hash, self.keys.params)
        self._in_flight: dict[str, asyncio.Future[DimensionVerdict]] = {}
        self.prefilled: Prefilled | None = None

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def parts(self, task: JudgeTask) -> KeyParts | None:
        return self.keys.parts(task) if self.keys is not None else None

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        parts = self.parts(task)
        if self.store is None or parts is None:
            return await self._ask(task)
        if self.prefilled is not None:
            return self._serve_prefilled(task, parts, self.prefilled)
        if not self.refresh and (hit := self._stored(task, parts)) is not None:
            return hit
        if parts.key in self._in_flight:
            return await self._same_as(task, self._in_flight[parts.key])
        future = asyncio.get_running_loop().create_future()
        self._in_flight[parts.key] = future
        try:
            async with hold(self.leases, parts.key, not self.refresh) as answered:
                verdict = self._stored(task, parts) if answered else None
                if verdict is None:
                    miss = self.store.miss_reason(
                        parts, case_ref(task)
                    ) or self._granularity_changed(task, parts)
                    verdict = await self._ask(task, parts, miss)
            future.set_result(verdict)
            return verdict
        finally:
            del self._in_flight[parts.key]
            if not future.done():
                future.cancel()

    def _granularity_changed(self, task: JudgeTask, parts: KeyParts) -> str | None:
        """Why a call the store has no answer for under its own case was asked: the store
        holds this submission's answers at the other granularity (`judge.run.granularity`)."""
        assert self.store is not None
        dimensions = parts_of(task.dimension)
        sub = task.submission
        ids = [d.id for d in dimensions] if dimensions else [WHOLE]
        refs = (CaseRef(sub.incident_id, sub.trial, i) for i in ids)
        if not any(self.store.miss_reason(parts, ref) for ref in refs):
            return None
        was, now = ("dimension", "submission") if dimensions else ("submission", "dimension")
        return (
            f"granularity changed: the store holds this case's answers per {was}, "
            f"asked per {now} now"
        )

    def _serve_prefilled(
        self, task: JudgeTask, parts: KeyParts, prefilled: Prefilled
    ) -> DimensionVerdict:
        """A call of a run whose store was filled before it (see `Prefilled`)."""
        key = parts.key
        verdict = prefilled.failed.get(key)
        if verdict is None and key in prefilled.batch_of:
            verdict = self.store.get(parts) if self.store is not None else None
            if verdict is not None:
                verdict = verdict.model_copy(
                    update={"cached": False, "batch_id": prefilled.batch_of[key]}
                )
        if verdict is None:
            if (hit := self._stored(task, parts)) is not None:
                return hit
            reason = f"not judged: {prefilled.why_missing(key)}"
            return self._not_judged(task, reason)
        if key in prefilled.served:  # the same call for another unit: one line answered both
            shared = verdict.model_copy(
                update={"cached": verdict.error is None, "requests": 0, "usage": None}
            )
            self.sink(LeafCall(task, self.name, shared, cached=shared.cached, shared=True))
            return shared
        prefilled.served.add(key)
        self.sink(LeafCall(task, self.name, verdict, batched=True))
        return verdict

    def _stored(self, task: JudgeTask, parts: KeyParts) -> DimensionVerdict | None:
        assert self.store is not None
        hit = self.store.get(parts)
        if hit is not None:
            hit.requests = 0  # none this run; `usage` stays what the answer cost then
            self.sink(LeafCall(task, self.name, hit, cached=True))
        return hit

    async def _ask(
        self, task: JudgeTask, parts: KeyParts | None = None, miss: str | None = None
    ) -> DimensionVerdict:
        with recording() as log:
            try:
                verdict = await ask(self.inner, task)
            except RunStopped as stop:
                if self.store is not None and parts is not None and log:
                    self.store.log_replies(parts, case_ref(task), self._call_log(task, log))
                return self._not_judged(task, f"not judged: {stop}")
            except asyncio.CancelledError:
                self._not_judged(task, "not judged: cancelled after the grace period")
                raise
            except InputError:  # the prompt failed to render: the user's to fix, not the judge's
                raise
            except Exception as exc:  # a judge's bug costs its own questions, not the run
                verdict = judge_error_verdict(exc, task.question_ids, self.name)
            else:
                verdict = checked_verdict(verdict, task.question_ids, self.name)
        if self.store is not None and parts is not None:
            log_of = self._call_log(task, log)
            self.store.put(parts, case_ref(task), verdict, log_of, inputs_key_of(task))
        self.sink(LeafCall(task, self.name, verdict, miss_reason=miss))
        return verdict

    def _call_log(self, task: JudgeTask, log: list[Exchange]) -> CallLog:
        """A call's requests as the store logs them, with where its prompt's shared start
        ends (read only when a request was made, which rendered the prompt)."""
        shared = None
        if log and task.prompt.cache_prefix and task.prompt.messages:
            shared = (task.prompt.messages[-1]["content"], task.prompt.cache_prefix)
        return CallLog(log, task.question_ids, shared, self.log_text)

    async def _same_as(
        self, task: JudgeTask, first: asyncio.Future[DimensionVerdict]
    ) -> DimensionVerdict:
        try:
            verdict = await asyncio.shield(first)
        except asyncio.CancelledError:
            if first.cancelled():
                return self._not_judged(task, "not judged: the same call was cut off")
            raise
        if verdict.error_kind == NOT_JUDGED:
            return self._not_judged(task, verdict.error or "not judged")
        shared = verdict.model_copy(
            update={
                "cached": verdict.error is None,
                "requests": 0,
                "usage": None,
                "attempt_errors": {},
            }
        )
        self.sink(LeafCall(task, self.name, shared, cached=shared.cached, shared=True))
        return shared

    def _not_judged(self, task: JudgeTask, reason: str) -> DimensionVerdict:
        verdict = unscored(task.question_ids, reason, NOT_JUDGED, attempts=0)
        self.sink(LeafCall(task, self.name, verdict, judged=False))
        return verdict
