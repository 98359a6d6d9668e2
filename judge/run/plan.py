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


class Planner:
    """Counts the calls to make (every leaf's call the store cannot answer) into `stats` as
    units arrive, and prefetches for a leaf the first time one of its calls has to be made.
    `judges`: the leaves; `wrapped`: the run's judge with its leaves wrapped for the store."""

    def __init__(
        self,
        stats: RunStats,
        judges: list[Judge],
        wrapped: Judge,
        store: Store | None,
        refresh: bool,
    ):
        self.stats = stats
        self.judges = judges
        self.store = store
        self.stored: list[RecordedJudge] = []
        self._prefetched: set[int] = set()
        self._keep = KEEP_PROMPTS
        if store is not None and not refresh:
            known = set(store.judges())
            # a judge the store holds no answer of misses every call: no prompt to render
            self.stored = [
                leaf
                for leaf in leaves(wrapped)
                if isinstance(leaf, RecordedJudge) and leaf.store is not None and leaf.name in known
            ]

    def add(self, units: list[Unit]) -> None:
        asked = [u for u in units if u.asked]
        total = len(asked) * len(self.judges)
        hits: Counter[str] = Counter()
        if self.stored and self.store is not None and asked:
            hits, kept = _count_stored(self.store, asked, self.stored, self._keep)
            self._keep -= kept
        self.stats.total += total
        self.stats.planned += total - hits.total()
        for leaf in self.judges:
            if id(leaf) in self._prefetched or hits[leaf.name] >= len(asked):
                continue
            if isinstance(leaf, Prefetching):
                leaf.prefetch()
            self._prefetched.add(id(leaf))


def _count_stored(
    store: Store, units: list[Unit], stored: list[RecordedJudge], keep: int
) -> tuple[Counter[str], int]:
    """How many of each leaf's calls the store answers, by leaf name, and how many prompts were
    kept. Every unit's prompt hash is found to make its key (it stays on the unit): from the
    store when it has seen the prompt rendered from the same inputs, by rendering it otherwise
    (`_known_prompts`); the prompts of the first `keep` units with a call to make are kept for
    that call."""
    hits: Counter[str] = Counter()
    kept = 0
    for start in range(0, len(units), PLAN_BATCH):
        batch = units[start : start + PLAN_BATCH]
        _known_prompts(store, batch)
        tasks = [unit.task() for unit in batch]
        keys = [
            [(leaf.name, parts.key) for leaf in stored if (parts := leaf.parts(task)) is not None]
            for task in tasks
        ]
        present = store.keys_present(key for unit_keys in keys for _, key in unit_keys)
        for unit, task, unit_keys in zip(batch, tasks, keys, strict=True):
            found = [name for name, key in unit_keys if key in present]
            hits.update(found)
            if len(found) < len(unit_keys) and kept < keep:
                unit.kept = task.prompt  # the one `_known_prompts` rendered, if it did
                kept += 1
            else:
                unit.kept = None
    return hits, kept


def _known_prompts(store: Store, units: list[Unit]) -> None:
    """Give each unit whose render inputs the store knows its prompt's hash (`prompt_keys`);
    render the others' prompts now and have the store remember them."""
    inputs = [unit.inputs_key() for unit in units]
    known = store.prompt_hashes(inputs)
    rendered = []
    for unit, key in zip(units, inputs, strict=True):
        if (found := known.get(key)) is not None:
            unit.prompt_hash = found
        elif unit.prompt_hash is None:
            unit.kept = prompt = unit.prompt
            rendered.append((key, prompt.hash))
    store.remember_prompts(rendered)
