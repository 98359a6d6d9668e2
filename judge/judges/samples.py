"""`--samples k`: an LLM judge asked k times at a temperature above 0, its answers voted.

Where a provider gives no token probabilities, how often k samples of the same model agree is
the judge's confidence (Wang et al.'s self-consistency; the `panel` judge's score with members
that give no probability is the share backing the majority). Each sample is a call of its own,
with its own seed, counted in the cost and kept in the store under its own name (`NAME#1`,
`NAME#2`, ...), so a rerun asks none of them again.
"""

from __future__ import annotations

from typing import Any

from .base import Judge
from .panel import PanelJudge

SAMPLE_TEMPERATURE = 0.7
"""The temperature of sampled calls unless one above 0 is given."""


def sampled_judge(model: str, k: int, options: dict[str, Any]) -> PanelJudge:
    """A panel of `k` calls to `model` with seeds `seed`, `seed+1`, ... at a temperature > 0,
    named `llm:MODEL[samples=k]`; k odd avoids ties (a tie is unscored)."""
    from .llm import LLMJudge

    if k < 2:
        raise ValueError(f"samples must be at least 2 for a vote, got {k}")
    temperature = options.get("temperature") or SAMPLE_TEMPERATURE
    seed = options.get("seed", 0) or 0
    base = options.get("name") or f"llm:{model}"
    members: list[Judge] = [
        LLMJudge(
            model,
            **{**options, "temperature": temperature, "seed": seed + i, "name": f"{base}#{i + 1}"},
        )
        for i in range(k)
    ]
    return PanelJudge(members, "unscored", name=f"{base}[samples={k}]")
