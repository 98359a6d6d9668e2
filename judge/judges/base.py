"""The interface every judge implements: answer one dimension's questions for one case."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ground_truth.models import IncidentSpec, Submission

from ..judgment import DimensionVerdict
from ..prompts import Prompt
from ..rubric import Dimension


@dataclass(frozen=True)
class JudgeTask:
    """One (submission, dimension) to answer, with the prompt already rendered."""

    spec: IncidentSpec
    submission: Submission
    dimension: Dimension
    prompt: Prompt
    context: Any = None

    @property
    def question_ids(self) -> list[str]:
        return [q.id for q in self.dimension.questions]


class Judge(Protocol):
    name: str
    """Short name recorded with every judgment (`rules`, `llm:openai/gpt-4o`, ...)."""

    def describe(self) -> dict[str, Any]:
        """The judge's configuration for the result file: kind, model, parameters, never a key."""
        ...

    async def judge(self, task: JudgeTask) -> DimensionVerdict: ...
