"""Result models of the resolution checks."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from .marks import Marks
from .srezero import SREZeroEpisode


class CheckOutcome(BaseModel):
    """What one named check said about one trajectory.

    `value` is the metric (a bool for predicates, a number for counts and rates); `passed` is
    set when the check is a pass/fail criterion (True = good). `error` is set, and `value` left
    None, when the check itself raised.
    """

    name: str = ""
    value: bool | int | float | str | None = None
    passed: bool | None = None
    detail: str | None = None
    evidence: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None


class Discrepancy(BaseModel):
    """A place where our recomputation and the simulator's own record disagree."""

    what: str
    index: int | None = Field(None, description="Trajectory position, for per-step values.")
    ours: Any = None
    recorded: Any = None


class ResolutionResult(BaseModel):
    """Every resolution metric of one submission, with the evidence behind each decision."""

    incident_id: str
    trial: str
    format: str
    success: bool | None = Field(None, description="The outcome of the check named `success`.")
    evidence_coverage: float | None = None
    checks: dict[str, CheckOutcome] = Field(default_factory=dict)
    not_applicable: list[str] = Field(
        default_factory=list, description="Registered checks that returned None for this case."
    )
    srezero: SREZeroEpisode | None = None
    recorded: dict[str, Any] = Field(
        default_factory=dict, description="The metrics the simulator itself recorded."
    )
    discrepancies: list[Discrepancy] = Field(default_factory=list)

    @property
    def key(self) -> tuple[str, str]:
        return (self.incident_id, self.trial)


class CheckAggregate(BaseModel):
    """One check over many results: how often true, and the mean of its value."""

    name: str
    n: int = Field(description="Results where the check gave a value.")
    n_true: int = 0
    n_false: int = 0
    mean: float | None = None
    n_errors: int = 0


class SREZeroAggregate(BaseModel):
    """SRE-Zero's own aggregate view of the episodes, overall and per task, with its marks."""

    n_episodes: int
    overall: dict[str, float]
    by_task: dict[str, dict[str, float]]
    marks: Marks


class ResolutionSummary(BaseModel):
    """The resolution checks over a run: success rate where success is known, per-check
    aggregates, SRE-Zero totals and how many cases differ from recorded results.
    """

    n_results: int
    n_success_known: int
    n_success: int
    success_rate: float | None
    by_format: dict[str, int] = Field(default_factory=dict)
    checks: dict[str, CheckAggregate] = Field(default_factory=dict)
    srezero: SREZeroAggregate | None = None
    n_with_discrepancies: int = 0
