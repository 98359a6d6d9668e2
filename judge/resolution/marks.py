"""SRE-Zero's aggregate metrics and its 100-point marks.

`aggregate_srezero` follows `aggregate_episode_records` (`srezero/metrics.py`, v0.6 key set):
rates over steps or remediations are pooled (sum / sum), rates over episodes are means.
`score_marks` follows `score_metrics` (`srezero/scoring.py`): success 40, mean reward 25, evidence
coverage 20, efficiency 10 (`success_rate x max(0, 1 - max(0, mean_steps - 1) /
max(1, target_steps - 1))`), validity 5 (`1 - invalid_action_rate`); components rounded to 3
decimals, and the score is the rounded sum.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from statistics import mean

from pydantic import BaseModel, Field

from .srezero import SREZeroEpisode, float_sum

MARK_WEIGHTS = {
    "success": 40.0,
    "reward": 25.0,
    "evidence": 20.0,
    "efficiency": 10.0,
    "validity": 5.0,
}
DEFAULT_TARGET_STEPS = 8.0

AGGREGATE_KEYS = (
    "success_rate",
    "mean_reward",
    "mean_steps",
    "invalid_action_rate",
    "evidence_coverage",
    "wrong_remediation_rate",
    "distractor_failure_rate",
    "premature_resolution_rate",
    "root_cause_identification_rate",
    "fix_identification_rate",
    "correct_service_remediation_rate",
    "correct_remediation_rate",
    "remediation_precision",
)


class Marks(BaseModel):
    """SRE-Zero's standard score out of 100 and its components."""

    score: float
    max_score: float = 100.0
    components: dict[str, float] = Field(default_factory=dict)
    target_steps: float = DEFAULT_TARGET_STEPS


def aggregate_srezero(episodes: Iterable[SREZeroEpisode]) -> dict[str, float]:
    """SRE-Zero's benchmark metrics over episodes (all zero when there are none)."""
    eps = list(episodes)
    if not eps:
        return dict.fromkeys(AGGREGATE_KEYS, 0.0)
    m = [e.metrics for e in eps]
    steps = sum(x.total_steps for x in m)
    remediations = sum(x.remediation_actions for x in m)

    def share(flags: Iterable[bool]) -> float:
        return mean(1.0 if flag else 0.0 for flag in flags)

    return {
        "success_rate": share(x.success for x in m),
        "mean_reward": mean(x.final_reward for x in m),
        "mean_steps": mean(x.total_steps for x in m),
        "invalid_action_rate": sum(x.invalid_actions for x in m) / max(1, steps),
        "evidence_coverage": mean(e.evidence_coverage for e in eps),
        "wrong_remediation_rate": sum(x.wrong_remediations for x in m) / max(1, remediations),
        "distractor_failure_rate": sum(x.distractor_failures for x in m) / max(1, remediations),
        "premature_resolution_rate": share(x.premature_resolutions > 0 for x in m),
        "root_cause_identification_rate": share(x.root_cause_identified for x in m),
        "fix_identification_rate": share(x.fix_identified for x in m),
        "correct_service_remediation_rate": share(x.correct_service_remediations > 0 for x in m),
        "correct_remediation_rate": share(x.correct_remediations > 0 for x in m),
        "remediation_precision": sum(x.correct_remediations for x in m) / max(1, remediations),
    }


def score_marks(overall: Mapping[str, object], target_steps: float = DEFAULT_TARGET_STEPS) -> Marks:
    """SRE-Zero's 100-point marks from aggregate metrics (missing metrics count as 0)."""

    def metric(key: str) -> float:
        value = overall.get(key, 0.0)
        return float(value) if isinstance(value, int | float) else 0.0

    success = metric("success_rate")
    efficiency = success * max(
        0.0, 1.0 - max(0.0, metric("mean_steps") - 1.0) / max(1.0, target_steps - 1.0)
    )
    components = {
        "success": success * MARK_WEIGHTS["success"],
        "reward": metric("mean_reward") * MARK_WEIGHTS["reward"],
        "evidence": metric("evidence_coverage") * MARK_WEIGHTS["evidence"],
        "efficiency": efficiency * MARK_WEIGHTS["efficiency"],
        "validity": max(0.0, 1.0 - metric("invalid_action_rate")) * MARK_WEIGHTS["validity"],
    }
    return Marks(
        score=round(float_sum(components.values()), 3),
        components={k: round(v, 3) for k, v in components.items()},
        target_steps=target_steps,
    )
