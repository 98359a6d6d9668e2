"""The `replay` judge: answers from a judgment store, never from a provider.

It finds the stored answer to the same rendered prompt under the same rubric dimension
(questions and hints) by the stored judge it replays. A prompt the store never saw is
unscored (`not_in_store`), never guessed. Use it to re-score a run under another threshold
or weights, to rebuild a result file, or to compare judges offline:

    judge eval ... --judge-model replay:results.sqlite [--replay-judge llm:openai/gpt-4o]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from ground_truth.errors import InputError

from ..checklist.judgment import DimensionVerdict, unscored
from ..checklist.rubric import Dimension, content_hash
from .base import JudgeTask

NOT_IN_STORE = "not_in_store"


class StoredAnswers(Protocol):
    """What the replay judge reads: a judgment store (`judge.store.Store`, opened read-only)."""

    path: Path

    def judges(self) -> list[str]:
        """The names of the judges whose answers it holds."""
        ...

    def find(
        self, prompt_hash: str, rubric_hash: str, judge: str | None = None
    ) -> list[tuple[str, DimensionVerdict]]:
        """Its answers to this prompt under this rubric dimension: (judge name, verdict)."""
        ...


class ReplayJudge:
    """Answers from `store` as the stored judge `source` gave them (the only one if None)."""

    def __init__(self, store: StoredAnswers, source: str | None = None):
        self.store = store
        self.source = source or _only_judge(self.store)
        if source is not None and source not in self.store.judges():
            raise InputError(
                self.store.path,
                f"no answers by {source}; stored judges: {', '.join(self.store.judges())}",
                field="--replay-judge",
            )
        self.name = f"replay:{self.source}"
        self._dimension_hashes: dict[int, str] = {}

    def describe(self) -> dict[str, Any]:
        """The store and the judge replayed."""
        return {
            "name": "replay",
            "model": None,
            "params": {"store": str(self.store.path), "source": self.source},
        }

    def _dimension_hash(self, dimension: Dimension) -> str:
        found = self._dimension_hashes.get(id(dimension))
        if found is None:
            found = self._dimension_hashes[id(dimension)] = content_hash(dimension.model_dump())
        return found

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        """The stored verdict for this prompt and dimension, or unscored (`not_in_store`)."""
        found = self.store.find(task.prompt.hash, self._dimension_hash(task.dimension), self.source)
        if not found:
            reason = f"{self.store.path} holds no answer by {self.source} to this prompt"
            return unscored(task.question_ids, reason, NOT_IN_STORE, attempts=0)
        verdict = found[0][1]
        return verdict.model_copy(update={"cached": False, "requests": 0})


def _only_judge(store: StoredAnswers) -> str:
    judges = store.judges()
    if len(judges) == 1:
        return judges[0]
    if not judges:
        raise InputError(store.path, "the store holds no answers to replay", field="--replay-store")
    raise InputError(
        store.path,
        f"the store holds answers by {len(judges)} judges ({', '.join(judges)}); "
        "choose with --replay-judge NAME (repeat it for a panel)",
        field="--replay-judge",
    )
