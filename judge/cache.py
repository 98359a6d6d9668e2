"""Each leaf judge's calls go through here: answered from the store when it holds them,
recorded when they finish, and reported to the run either way.

A judge is cacheable when it has `cache_identity()` (the `llm` judge). The rules judge is not
cached: it answers in about the time a store lookup and commit take (see benchmarks/README.md),
and replaying a rules run is simply running it again. A panel's members are wrapped one by
one, so each member's calls are cached under its own name (`llm:m#1`, `llm:m#2`, ...).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from .control import RunStopped
from .judges.base import Judge, JudgeTask
from .judgment import DimensionVerdict, unscored
from .rubric import Dimension, content_hash
from .store import CaseRef, KeyParts, Store, short_hash

NOT_JUDGED = "not_judged"


class Cacheable(Protocol):
    name: str

    def cache_identity(self) -> dict[str, Any]:
        """`model`, `params` (only those that change answers; never a key) and `schema`."""
        ...


@dataclass
class LeafCall:
    """One leaf judge's call for one (case, dimension), as the run accounts for it."""

    task: JudgeTask | None
    judge: str
    verdict: DimensionVerdict
    cached: bool = False
    judged: bool = True
    miss_reason: str | None = None


def is_cacheable(judge: Any) -> bool:
    return callable(getattr(judge, "cache_identity", None))


def leaves(judge: Judge) -> list[Judge]:
    members = getattr(judge, "members", None)
    if not members:
        return [judge]
    return [leaf for m in members for leaf in leaves(m)]


def case_ref(task: JudgeTask) -> CaseRef:
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
            prompt=task.prompt.hash,
            schema=self.schema,
            rubric=self.dimension_hash(task.dimension),
        )


class RecordedJudge:
    """Wraps a leaf judge for one run: store lookups and writes, and a `LeafCall` per call.

    A call the run stopped before it started (or cancelled after its grace period) comes back
    as a `not_judged` verdict instead of an exception, so a panel's other members finish and
    are stored; the engine then reports the whole (case, dimension) as not judged.
    """

    def __init__(
        self,
        inner: Judge,
        sink: Callable[[LeafCall], None],
        store: Store | None = None,
        refresh: bool = False,
    ):
        self.inner = inner
        self.name = inner.name
        self.sink = sink
        self.store = store if store is not None and is_cacheable(inner) else None
        self.refresh = refresh
        self.keys = KeyMaker(inner) if self.store is not None else None  # type: ignore[arg-type]
        if self.store is not None and self.keys is not None:
            self.store.remember_params(self.keys.params_hash, self.keys.params)

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def parts(self, task: JudgeTask) -> KeyParts | None:
        return self.keys.parts(task) if self.keys is not None else None

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        parts = self.parts(task)
        miss = None
        if self.store is not None and parts is not None:
            if not self.refresh:
                hit = self.store.get(parts)
                if hit is not None:
                    self.sink(LeafCall(task, self.name, hit, cached=True))
                    return hit
            miss = self.store.miss_reason(parts, case_ref(task))
        try:
            verdict = await self.inner.judge(task)
        except RunStopped as stop:
            return self._not_judged(task, f"not judged: {stop}")
        except asyncio.CancelledError:
            self._not_judged(task, "not judged: cancelled after the grace period")
            raise
        if self.store is not None and parts is not None:
            self.store.put(parts, case_ref(task), verdict)
        self.sink(LeafCall(task, self.name, verdict, miss_reason=miss))
        return verdict

    def _not_judged(self, task: JudgeTask, reason: str) -> DimensionVerdict:
        verdict = unscored(task.question_ids, reason, NOT_JUDGED, attempts=0)
        self.sink(LeafCall(task, self.name, verdict, judged=False))
        return verdict
