"""Batch mode's step before the run: find the calls the store cannot answer, run the batch
phase for them, and hand the run what it needs to serve every call from the store."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ...judges.base import JudgeTask
from ...store import Store
from ..cache import KeyMaker, Prefilled, case_ref
from ..control import Gate
from .phase import BatchOptions, BatchPhase, Call
from .report import BatchReport

if TYPE_CHECKING:
    from ...judges.llm import LLMJudge

CHUNK = 500


async def fill_store(
    judge: LLMJudge,
    tasks: Iterable[JudgeTask],
    store: Store,
    options: BatchOptions,
    gate: Gate,
    refresh: bool = False,
) -> tuple[Prefilled, BatchReport]:
    """Ask every call of `tasks` that `store` cannot answer (all of them with `refresh`) in
    provider batches, each answer written to the store as it is collected. Returns what the
    run serves besides the store's answers (`Prefilled`: which batch answered what, the calls
    that failed, why a call has no answer) and the phase's report."""
    phase = BatchPhase(judge, store, options, gate)
    await phase.run(pending_calls(tasks, KeyMaker(judge), store, refresh))

    def why_missing(key: str) -> str:
        if key in phase.left_out:
            return phase.budget_stop()
        return gate.stopped.message if gate.stopped else "no answer"

    prefilled = Prefilled(phase.answered, phase.failed, why_missing)
    if phase.left_out:
        prefilled.stop = ("max_cost", phase.budget_stop())
    return prefilled, phase.report


def pending_calls(
    tasks: Iterable[JudgeTask], keys: KeyMaker, store: Store, refresh: bool
) -> dict[str, Call]:
    """The calls the store cannot answer, one per key, with their messages (looked up
    `CHUNK` at a time so that only the misses' prompts are held)."""
    found: dict[str, Call] = {}
    chunk: list[Call] = []

    def flush() -> None:
        present = set() if refresh else store.keys_present(c.key for c in chunk)
        found.update((c.key, c) for c in chunk if c.key not in present)
        chunk.clear()

    for task in tasks:
        parts = keys.parts(task)
        call = Call(parts.key, parts, case_ref(task), task.question_ids, task.prompt.messages)
        chunk.append(call)
        if len(chunk) >= CHUNK:
            flush()
    flush()
    return found
