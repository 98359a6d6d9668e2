"""Judges: `rules` (offline, the default), `llm` (any litellm model), `panel` (majority vote)."""

from __future__ import annotations

from typing import Any

from .base import Judge, JudgeTask
from .panel import PanelJudge, TieRule
from .rules import RulesJudge


def make_judge(model: str | None = None, **llm_options: Any) -> Judge:
    """The `llm` judge for a model string, else the offline `rules` judge."""
    if not model or model == "rules":
        return RulesJudge()
    from .llm import LLMJudge

    return LLMJudge(model, **llm_options)


def build_judge(
    models: list[str] | None = None, repeat: int = 1, tie: TieRule = "unscored", **llm_options: Any
) -> Judge:
    """One judge, or a panel when several models are named or `repeat` > 1.

    `repeat=K` asks each model K times (seeds `seed`, `seed+1`, ...; members named `name#1`,
    `name#2`, ...), which is how `judge agreement` measures a judge's self-consistency.
    """
    models = models or [None]
    if repeat <= 1:
        members = [make_judge(m, **llm_options) for m in models]
    else:
        members = [_repetition(m, i, llm_options) for m in models for i in range(repeat)]
    return members[0] if len(members) == 1 else PanelJudge(members, tie)


def _repetition(model: str | None, index: int, llm_options: dict[str, Any]) -> Judge:
    base = make_judge(model, **llm_options)
    if isinstance(base, RulesJudge):
        return RulesJudge(name=f"{base.name}#{index + 1}")
    seed = llm_options.get("seed", 0) or 0
    return make_judge(
        model, **{**llm_options, "seed": seed + index, "name": f"{base.name}#{index + 1}"}
    )


__all__ = ["Judge", "JudgeTask", "PanelJudge", "RulesJudge", "build_judge", "make_judge"]
