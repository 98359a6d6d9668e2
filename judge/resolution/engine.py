"""Run the registered checks on one submission, and summarise many results."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from ground_truth.formats.srezero import FORMAT as SREZERO
from ground_truth.models import IncidentSpec, Submission

from .marks import DEFAULT_TARGET_STEPS, aggregate_srezero, score_marks
from .models import (
    CheckAggregate,
    CheckOutcome,
    ResolutionResult,
    ResolutionSummary,
    SREZeroAggregate,
)
from .parity import srezero_discrepancies
from .registry import normalize_format, run_checks
from .sregym import find_mitigation
from .srezero import SREZeroEpisode
from .srezero_checks import replay_cache, srezero_episode


def resolution_format(spec: IncidentSpec, submission: Submission) -> str:
    """The format whose checks apply: the adapters' `source.format`, else what the data shows."""
    for source in (spec.source, submission.source):
        name = source.get("format")
        if isinstance(name, str) and name and normalize_format(name) != "native":
            return normalize_format(name)
    if SREZERO in spec.extra:
        return SREZERO
    if submission.trajectory is not None and find_mitigation(submission.trajectory):
        return "sregym"
    return "native"


def check_resolution(spec: IncidentSpec, submission: Submission) -> ResolutionResult | None:
    """Every registered check for the case's format; None when the submission has no trajectory."""
    trajectory = submission.trajectory
    if trajectory is None:
        return None
    if spec.id != submission.incident_id:
        raise ValueError(
            f"spec {spec.id!r} does not belong to submission {submission.incident_id!r}"
        )
    fmt = resolution_format(spec, submission)
    with replay_cache():
        outcomes, not_applicable = run_checks(fmt, spec, trajectory)
        episode = srezero_episode(spec, trajectory) if fmt == SREZERO else None
    return ResolutionResult(
        incident_id=submission.incident_id,
        trial=submission.trial,
        format=fmt,
        success=_passed(outcomes.get("success")),
        evidence_coverage=_number(outcomes.get("evidence_coverage")),
        checks=outcomes,
        not_applicable=not_applicable,
        srezero=episode,
        recorded=dict(trajectory.metrics),
        discrepancies=srezero_discrepancies(episode, trajectory) if episode else [],
    )


def _passed(outcome: CheckOutcome | None) -> bool | None:
    if outcome is None or outcome.error:
        return None
    return outcome.passed if outcome.passed is not None else _as_bool(outcome.value)


def _as_bool(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def _number(outcome: CheckOutcome | None) -> float | None:
    if outcome is None or isinstance(outcome.value, bool):
        return None
    return float(outcome.value) if isinstance(outcome.value, int | float) else None


def summarize_resolution(
    results: Iterable[ResolutionResult | None], target_steps: float = DEFAULT_TARGET_STEPS
) -> ResolutionSummary:
    """Success rate, each check aggregated, and SRE-Zero's own aggregate view and marks."""
    done = [r for r in results if r is not None]
    known = [r for r in done if r.success is not None]
    n_success = sum(1 for r in known if r.success)
    episodes = [r.srezero for r in done if r.srezero is not None]
    return ResolutionSummary(
        n_results=len(done),
        n_success_known=len(known),
        n_success=n_success,
        success_rate=n_success / len(known) if known else None,
        by_format=dict(Counter(r.format for r in done)),
        checks=_aggregate_checks(done),
        srezero=_srezero_view(episodes, target_steps) if episodes else None,
        n_with_discrepancies=sum(1 for r in done if r.discrepancies),
    )


def _aggregate_checks(results: list[ResolutionResult]) -> dict[str, CheckAggregate]:
    by_name: dict[str, list[CheckOutcome]] = defaultdict(list)
    for result in results:
        for name, outcome in result.checks.items():
            by_name[name].append(outcome)
    return {name: _aggregate(name, outs) for name, outs in sorted(by_name.items())}


def _aggregate(name: str, outcomes: list[CheckOutcome]) -> CheckAggregate:
    values = [o.value for o in outcomes if o.error is None and o.value is not None]
    numbers = [float(v) for v in values if isinstance(v, int | float)]
    return CheckAggregate(
        name=name,
        n=len(values),
        n_true=sum(1 for v in values if v is True),
        n_false=sum(1 for v in values if v is False),
        mean=sum(numbers) / len(numbers) if numbers else None,
        n_errors=sum(1 for o in outcomes if o.error),
    )


def _srezero_view(episodes: list[SREZeroEpisode], target_steps: float) -> SREZeroAggregate:
    by_task: dict[str, list[SREZeroEpisode]] = defaultdict(list)
    for episode in episodes:
        by_task[episode.task_id].append(episode)
    overall = aggregate_srezero(episodes)
    return SREZeroAggregate(
        n_episodes=len(episodes),
        overall=overall,
        by_task={task: aggregate_srezero(eps) for task, eps in by_task.items()},
        marks=score_marks(overall, target_steps),
    )
