"""Three small incidents and a judge that reads its prompts, for the tests of what a run renders
and prepares only when it has calls to make."""

from __future__ import annotations

from typing import Any

from ground_truth import IncidentSpec, Submission
from judge import DimensionVerdict, JudgeTask, QuestionAnswer

SMALL_SPECS = [
    IncidentSpec(id=f"inc-{i}", ground_truth=f"checkout points to port 80{i} instead of 8080.")
    for i in range(3)
]


def small_submissions(n: int) -> list[Submission]:
    return [
        Submission(incident_id=f"inc-{i % 3}", trial=str(i), diagnosis=f"port 80{i % 3} ({i})")
        for i in range(n)
    ]


class PromptReader:
    """A cacheable judge that reads the prompt it is sent, like the llm judge."""

    def __init__(self, name: str = "reader") -> None:
        self.name = name
        self.asked: list[str] = []

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": "m", "params": {}}

    def cache_identity(self) -> dict[str, Any]:
        return {"model": "m", "params": {}, "schema": "s"}

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        assert task.prompt.messages[-1]["content"]
        self.asked.append(task.prompt.hash)
        return DimensionVerdict(
            answers=[
                QuestionAnswer(question_id=q, answer="Yes", evidence="port", confidence="High")
                for q in task.question_ids
            ]
        )
