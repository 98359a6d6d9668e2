"""Planning a run: how many calls it will make, which the store already answers, and whether
a judge should start getting ready (`Prefetching`) for the calls it will have to make."""

from __future__ import annotations

from collections import Counter
from typing import Protocol, runtime_checkable

from ..judges import Judge
from ..store import Store
from .cache import RecordedJudge, leaves
from .progress import RunStats
from .units import Unit

KEEP_PROMPTS = 2048
"""Prompts planning renders for calls the store cannot answer and keeps until they are sent
(about 6 KB each); the calls past them render their prompt again."""
PLAN_BATCH = 500


@runtime_checkable
class Prefetching(Protocol):
    """A judge with something slow to get ready for its first request (the llm judge imports
    litellm): the run calls `prefetch()` once it knows the judge has calls to make, which a
    run the store answers in full never has."""

    def prefetch(self) -> None: ...


@runtime_checkable
class Closing(Protocol):
    """A judge holding connections on the run's event loop (the llm judge's HTTP client):
    the run calls `aclose()` once its last call is done."""

    async def aclose(self) -> None: ...


def plan(
    stats: RunStats,
    units: list[Unit],
    judges: list[Judge],
    wrapped: Judge,
    store: Store | None,
    refresh: bool,
) -> None:
    """Count the calls to make (every leaf's call the store cannot answer) into `stats`, and
    prefetch for the leaves that have calls to make. `judges`: the leaves; `wrapped`: the
    run's judge with its leaves wrapped for the store."""
    asked = [u for u in units if u.asked]
    stats.total = len(asked) * len(judges)
    hits: Counter[str] = Counter()
    stored = [
        leaf
        for leaf in leaves(wrapped)
        if isinstance(leaf, RecordedJudge) and leaf.store is not None
    ]
    if stored and store is not None and not refresh:
        known = set(store.judges())
        # a judge the store holds no answer of misses every call: no prompt to render
        stored = [leaf for leaf in stored if leaf.name in known]
        hits = _count_stored(store, asked, stored) if stored else hits
    stats.planned = stats.total - hits.total()
    for leaf in judges:
        if isinstance(leaf, Prefetching) and hits[leaf.name] < len(asked):
            leaf.prefetch()


def _count_stored(store: Store, units: list[Unit], stored: list[RecordedJudge]) -> Counter[str]:
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
