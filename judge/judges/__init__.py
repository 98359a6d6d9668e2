"""Judges: `rules` (offline, the default), `llm` (any litellm model)."""

from __future__ import annotations

from typing import Any

from .base import Judge, JudgeTask
from .rules import RulesJudge


def make_judge(model: str | None = None, **llm_options: Any) -> Judge:
    """The `llm` judge for a model string, else the offline `rules` judge."""
    if not model or model == "rules":
        return RulesJudge()
    from .llm import LLMJudge

    return LLMJudge(model, **llm_options)


__all__ = ["Judge", "JudgeTask", "RulesJudge", "make_judge"]
