"""Compare what we recompute with what the simulator recorded."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ground_truth.models import Trajectory

from .models import Discrepancy
from .srezero import SREZeroEpisode

TOLERANCE = 1e-9


def same(ours: Any, recorded: Any) -> bool:
    """Whether our value equals the recorded one: numbers within 1e-9, bools only with bools."""
    if isinstance(ours, bool) or isinstance(recorded, bool):
        return ours == recorded
    if isinstance(ours, int | float) and isinstance(recorded, int | float):
        return abs(ours - recorded) <= TOLERANCE
    return ours == recorded


def srezero_discrepancies(episode: SREZeroEpisode, trajectory: Trajectory) -> list[Discrepancy]:
    """Per-step acceptance and reward, then every episode metric the record holds."""
    found: list[Discrepancy] = []
    for step in episode.steps:
        if step.recorded_accepted is not None and step.recorded_accepted != step.accepted:
            found.append(
                Discrepancy(
                    what="accepted",
                    index=step.index,
                    ours=step.accepted,
                    recorded=step.recorded_accepted,
                )
            )
        rewarded = step.recorded_reward is not None and step.status != "after_done"
        if rewarded and not same(step.reward, step.recorded_reward):
            found.append(
                Discrepancy(
                    what="step_reward",
                    index=step.index,
                    ours=step.reward,
                    recorded=step.recorded_reward,
                )
            )
    ours = {**episode.metrics.model_dump(), "evidence_coverage": episode.evidence_coverage}
    found.extend(compare_metrics(ours, trajectory.metrics))
    return found


def compare_metrics(ours: Mapping[str, Any], recorded: Mapping[str, Any]) -> list[Discrepancy]:
    """Keys both sides hold whose values differ (keys only one side has are not compared)."""
    return [
        Discrepancy(what=key, ours=ours[key], recorded=recorded[key])
        for key in ours
        if key in recorded and not same(ours[key], recorded[key])
    ]
