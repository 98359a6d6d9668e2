"""The SRE-Zero checks, registered for the `srezero` format.

Each check replays the trajectory (`replay_srezero`) and reads one decision off the episode,
with the evidence for it. Inside `replay_cache()` (which `check_resolution` opens around one
submission) the replay is done once and shared by all the checks.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from pydantic import ValidationError

from ground_truth.errors import InputError
from ground_truth.formats.srezero import FORMAT, SREZeroTaskConfig
from ground_truth.models import IncidentSpec, Trajectory

from .marks import aggregate_srezero, score_marks
from .models import CheckOutcome
from .registry import register_check
from .srezero import SREZeroEpisode, replay_srezero


def srezero_task(spec: IncidentSpec) -> SREZeroTaskConfig | None:
    """The task config kept in `spec.extra["srezero"]`, or None when the spec has none."""
    raw = spec.extra.get(FORMAT)
    if raw is None:
        return None
    try:
        return SREZeroTaskConfig.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise InputError(
            spec.source.get("file"), first["msg"], field=f"{spec.id}: extra.srezero.{loc}"
        ) from None


_REPLAYS: ContextVar[dict[tuple[int, int], SREZeroEpisode | None] | None] = ContextVar(
    "srezero_replays", default=None
)


@contextmanager
def replay_cache() -> Iterator[None]:
    """Share one replay per (spec, trajectory) among the checks run inside this block."""
    token = _REPLAYS.set({})
    try:
        yield
    finally:
        _REPLAYS.reset(token)


def srezero_episode(spec: IncidentSpec, trajectory: Trajectory) -> SREZeroEpisode | None:
    """The SRE-Zero replay of `trajectory` for `spec`, None when the spec maps to no SRE-Zero
    task; shared among checks inside a replay-cache block.
    """
    cache = _REPLAYS.get()
    key = (id(spec), id(trajectory))
    if cache is not None and key in cache:
        return cache[key]
    task = srezero_task(spec)
    episode = None if task is None else replay_srezero(task, trajectory)
    if cache is not None:
        cache[key] = episode
    return episode


def _check(name: str):
    """Register `fn(episode) -> CheckOutcome` as an SRE-Zero check over (spec, trajectory)."""

    def decorator(fn):
        def check(spec: IncidentSpec, trajectory: Trajectory) -> CheckOutcome | None:
            episode = srezero_episode(spec, trajectory)
            return None if episode is None else fn(episode)

        check.__name__ = check.__qualname__ = f"srezero_{name}"
        check.__doc__ = fn.__doc__
        register_check(FORMAT, name)(check)
        return fn

    return decorator


@_check("success")
def success(ep: SREZeroEpisode) -> CheckOutcome:
    """Root cause matched, fix matched, and a correct remediation applied before resolving."""
    last = ep.resolve_attempts[-1] if ep.resolve_attempts else None
    if ep.metrics.success:
        detail = f"resolved at step {last.step}" if last else "resolved"
    elif last is None:
        detail = f"never resolved ({ep.terminal_reason or 'trajectory ended'})"
    else:
        detail = "resolution rejected: " + _rejection(last)
    remediation = ep.accepted_remediation
    return CheckOutcome(
        value=ep.metrics.success,
        passed=ep.metrics.success,
        detail=detail,
        evidence={
            "root_cause_matched": last.root_cause.matched if last else None,
            "fix_matched": last.fix.matched if last else None,
            "remediation": remediation.model_dump() if remediation else None,
            "terminal_reason": ep.terminal_reason,
        },
    )


def _rejection(attempt) -> str:
    reasons = []
    if not attempt.root_cause.matched:
        reasons.append("root cause not matched")
    if not attempt.fix.matched:
        reasons.append("fix not matched")
    if not attempt.remediation_applied:
        reasons.append("no correct remediation before resolving")
    return ", ".join(reasons)


@_check("root_cause_matched")
def root_cause_matched(ep: SREZeroEpisode) -> CheckOutcome:
    """A `resolve_incident` root cause matched (phrase, or ceil(n/2) keywords)."""
    return _text_outcome(ep, "root_cause", ep.metrics.root_cause_identified)


@_check("fix_matched")
def fix_matched(ep: SREZeroEpisode) -> CheckOutcome:
    """A `resolve_incident` fix text matched (all fix keywords, or the alias fallback)."""
    return _text_outcome(ep, "fix", ep.metrics.fix_identified)


def _text_outcome(ep: SREZeroEpisode, part: str, matched: bool) -> CheckOutcome:
    if not ep.resolve_attempts:
        return CheckOutcome(value=False, passed=False, detail="no resolve_incident")
    attempts = [getattr(a, part).model_dump() for a in ep.resolve_attempts]
    return CheckOutcome(value=matched, passed=matched, evidence={"attempts": attempts})


@_check("correct_remediation")
def correct_remediation(ep: SREZeroEpisode) -> CheckOutcome:
    """A correct remediation was applied (right service, key and value)."""
    correct = [r for r in ep.remediations if r.correct]
    first = correct[0] if correct else None
    resolve_at = ep.resolve_attempts[-1].index if ep.resolve_attempts else None
    before = None if first is None or resolve_at is None else first.index < resolve_at
    return CheckOutcome(
        value=first is not None,
        passed=first is not None,
        detail=f"{first.raw} at step {first.step}" if first else "no correct remediation",
        evidence={"remediation": first.model_dump() if first else None, "before_resolve": before},
    )


@_check("evidence_coverage")
def evidence_coverage(ep: SREZeroEpisode) -> CheckOutcome:
    """Relevant evidence keys gathered / required."""
    return CheckOutcome(
        value=ep.evidence_coverage,
        detail=f"{len(ep.evidence_found)}/{len(ep.evidence_required)} relevant evidence gathered",
        evidence={"found": ep.evidence_found, "missing": ep.evidence_missing},
    )


@_check("invalid_actions")
def invalid_actions(ep: SREZeroEpisode) -> CheckOutcome:
    """Actions that did not parse or named an unknown service."""
    bad = [
        {"index": s.index, "raw": s.raw, "status": s.status, "error": s.error}
        for s in ep.steps
        if s.status in {"invalid_syntax", "invalid_service"}
    ]
    return CheckOutcome(value=ep.metrics.invalid_actions, evidence={"actions": bad})


@_check("repeated_actions")
def repeated_actions(ep: SREZeroEpisode) -> CheckOutcome:
    """Repeats that revealed nothing new, and repeated invalid actions."""
    seen: set[str] = set()
    repeats = []
    for s in ep.steps:
        text = s.canonical or s.raw or ""
        if s.repeated or (s.status.startswith("invalid") and text in seen):
            repeats.append({"index": s.index, "raw": s.raw})
        if s.status != "after_done":
            seen.add(text)
    return CheckOutcome(value=ep.metrics.repeated_actions, evidence={"actions": repeats})


@_check("wrong_remediations")
def wrong_remediations(ep: SREZeroEpisode) -> CheckOutcome:
    """Remediations that were not the task's fix."""
    wrong = [r.model_dump() for r in ep.remediations if not r.correct]
    return CheckOutcome(value=ep.metrics.wrong_remediations, evidence={"remediations": wrong})


@_check("distractor_remediations")
def distractor_remediations(ep: SREZeroEpisode) -> CheckOutcome:
    """Wrong remediations on a service listed in the task's `distractor_services`."""
    hits = [r.model_dump() for r in ep.remediations if r.distractor]
    return CheckOutcome(value=ep.metrics.distractor_failures, evidence={"remediations": hits})


@_check("premature_resolution")
def premature_resolution(ep: SREZeroEpisode) -> CheckOutcome:
    """A `resolve_incident` was rejected (wrong text, or no correct remediation yet)."""
    rejected = [
        {"index": a.index, "step": a.step, "why": _rejection(a)}
        for a in ep.resolve_attempts
        if not a.accepted
    ]
    return CheckOutcome(
        value=ep.metrics.premature_resolutions > 0,
        detail=f"{ep.metrics.premature_resolutions} rejected resolution(s)",
        evidence={"count": ep.metrics.premature_resolutions, "rejected": rejected},
    )


@_check("steps")
def steps(ep: SREZeroEpisode) -> CheckOutcome:
    """Steps the simulator counted (invalid ones included, ignored ones after the end excluded)."""
    return CheckOutcome(
        value=ep.metrics.total_steps,
        evidence={
            "max_steps": ep.max_steps,
            "actions_after_done": ep.actions_after_done,
            "terminal_reason": ep.terminal_reason,
        },
    )


@_check("final_reward")
def final_reward(ep: SREZeroEpisode) -> CheckOutcome:
    """The episode reward in [0, 1] with its components and penalties."""
    return CheckOutcome(value=ep.metrics.final_reward, evidence=ep.reward.model_dump())


@_check("marks")
def marks(ep: SREZeroEpisode) -> CheckOutcome:
    """SRE-Zero's 100-point marks for this one episode (target 8 steps)."""
    scored = score_marks(aggregate_srezero([ep]))
    return CheckOutcome(value=scored.score, evidence=scored.model_dump())
