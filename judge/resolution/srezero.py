"""Replay a trajectory against an SRE-Zero task config and recompute the simulator's metrics.

The replay follows `SREEnv.step` of SRE-Zero (`srezero/env.py`, commits e610bb2 -> e9a2eb5) and
its `RewardTracker` (`srezero/rewards.py`) step by step:

- An action that does not parse counts one step and one invalid action; an action on a service
  outside the five SRE-Zero services counts the same (`invalid_service`). The first time a given
  invalid string is seen costs `invalid_action` (-0.05); each repeat costs
  `repeated_invalid_action` (-0.10) and counts as a repeated action.
- A valid action repeated (same canonical form) that yields no new evidence counts as a repeated
  action (-0.05), except `resolve_incident` and `escalate`.
- Evidence keys are `tool:service` or `inspect_config:service:KEY`; `inspect_config(service)`
  without a key reveals every relevant key of that service. Coverage = found / required.
- `restart_service` / `update_config` are remediations. Correct = right tool and service, and for
  `update_config` the right key (case-insensitive) and value (`== exact_value`, or
  `float(value) >= min_numeric_value`). A wrong one costs -0.15, a restart of a service other
  than the fix's another -0.10, and counts as a distractor failure when its service is listed in
  `distractor_services`.
- `resolve_incident` succeeds when the root cause and the fix text match and a correct remediation
  was applied earlier; any other resolution is premature (-0.20) and ends the episode unless the
  task sets `terminal_on_wrong_resolution: false`. `escalate` ends it too; so does reaching
  `max_steps`. Actions after the end are ignored, as the simulator ignores them.
- Reward = evidence 0.20 x coverage + root cause 0.25 + remediation 0.25 + resolution 0.20 +
  efficiency 0.10 x (max_steps - steps) / max_steps, plus penalties; the episode reward is that
  sum clamped to [0, 1] and is only set when the episode ends (0.0 otherwise, as recorded).

Sums of floats use the compensated (Neumaier) summation that `sum()` has used since CPython
3.12, which is what SRE-Zero's records were computed with (0.2 + 0.25 + 0.25 + 0.2 + 0.0375 is
0.9375 there, 0.9374999999999999 with 3.11's naive `sum`), so rewards agree bit for bit on any
interpreter.

One addition of ours: a remediation the trajectory itself marks `accepted: false` is not credited
as correct (it counts as wrong), so a simulator's refusal is never overruled by the replay.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from ground_truth.formats.srezero import (
    REMEDIATION_TOOLS,
    SERVICE_TOOLS,
    SREZERO_SERVICES,
    SREZERO_TOOLS,
    SREZeroActionError,
    SREZeroTaskConfig,
    format_srezero_action,
    parse_srezero_action,
    validate_srezero_args,
)
from ground_truth.models import Action, Trajectory

from .srezero_text import FixMatch, RootCauseMatch, match_fix_text, match_root_cause

COMPONENT_MAX = {
    "evidence": 0.20,
    "root_cause": 0.25,
    "remediation": 0.25,
    "resolution": 0.20,
    "efficiency": 0.10,
}
PENALTY_VALUES = {
    "invalid_action": -0.05,
    "repeated_invalid_action": -0.10,
    "wrong_remediation": -0.15,
    "premature_resolution": -0.20,
    "restart_unrelated_service": -0.10,
    "repeated_useless_action": -0.05,
}


class SREZeroMetrics(BaseModel):
    """SRE-Zero's per-episode metrics (the v0.6 `EpisodeMetrics` field set)."""

    total_steps: int = 0
    invalid_actions: int = 0
    repeated_actions: int = 0
    evidence_actions: int = 0
    remediation_actions: int = 0
    correct_service_remediations: int = 0
    correct_remediations: int = 0
    wrong_remediations: int = 0
    distractor_failures: int = 0
    premature_resolutions: int = 0
    root_cause_identified: bool = False
    fix_identified: bool = False
    correct_remediation_applied: bool = False
    success: bool = False
    final_reward: float = 0.0


class RewardBreakdown(BaseModel):
    """SRE-Zero's reward for an episode: components, penalties, raw sum, total clipped to [0, 1]."""

    components: dict[str, float]
    penalties: dict[str, float]
    raw_total: float
    total: float


class RemediationEvent(BaseModel):
    """One `restart_service` / `update_config` and the verdict on it."""

    index: int = Field(description="Position in the trajectory (0-based).")
    step: int
    raw: str | None
    tool: str
    service: str
    key: str | None = None
    value: Any = None
    correct: bool
    reason: str
    correct_service: bool
    distractor: bool


class ResolveAttempt(BaseModel):
    """One `resolve_incident` and why it was accepted or rejected."""

    index: int
    step: int
    root_cause: RootCauseMatch
    fix: FixMatch
    remediation_applied: bool
    accepted: bool


class StepTrace(BaseModel):
    """What the replay made of one trajectory entry."""

    index: int
    step: int | None = Field(None, description="The simulator's step counter after the action.")
    raw: str | None
    canonical: str | None = None
    status: Literal["ok", "invalid_syntax", "invalid_service", "after_done"]
    error: str | None = None
    accepted: bool
    new_evidence: list[str] = Field(default_factory=list)
    repeated: bool = False
    reward: float | None = None
    recorded_reward: float | None = None
    recorded_accepted: bool | None = None


class SREZeroEpisode(BaseModel):
    """The replayed episode: SRE-Zero's metrics plus the evidence for every decision."""

    task_id: str
    max_steps: int
    metrics: SREZeroMetrics
    evidence_coverage: float
    evidence_required: list[str]
    evidence_found: list[str]
    evidence_missing: list[str]
    reward: RewardBreakdown
    terminated: bool
    terminal_reason: str | None = None
    actions_after_done: int = 0
    accepted_remediation: RemediationEvent | None = Field(
        None, description="The first correct remediation applied before the successful resolve."
    )
    remediations: list[RemediationEvent] = Field(default_factory=list)
    resolve_attempts: list[ResolveAttempt] = Field(default_factory=list)
    steps: list[StepTrace] = Field(default_factory=list)


def float_sum(values: Iterable[float]) -> float:
    """CPython 3.12+ `sum()` over floats: Neumaier-compensated, starting from 0."""
    total = 0.0
    compensation = 0.0
    for x in values:
        t = total + x
        if abs(total) >= abs(x):
            compensation += (total - t) + x
        else:
            compensation += (x - t) + total
        total = t
    if compensation and math.isfinite(compensation):
        total += compensation
    return total


class _Rewards:
    """SRE-Zero's reward bookkeeping, summed in the same order so floats agree bit for bit."""

    def __init__(self, total_evidence: int) -> None:
        self.total_evidence = max(total_evidence, 1)
        self.components = dict.fromkeys(COMPONENT_MAX, 0.0)
        self.penalties = dict.fromkeys(PENALTY_VALUES, 0.0)

    def evidence(self, found: int) -> None:
        coverage = min(1.0, found / self.total_evidence)
        self.components["evidence"] = COMPONENT_MAX["evidence"] * coverage

    def mark(self, component: str) -> None:
        self.components[component] = COMPONENT_MAX[component]

    def efficiency(self, steps_used: int, max_steps: int) -> None:
        remaining = max(0.0, (max_steps - steps_used) / max_steps)
        self.components["efficiency"] = COMPONENT_MAX["efficiency"] * remaining

    def penalty(self, name: str) -> None:
        self.penalties[name] += PENALTY_VALUES[name]

    def raw(self) -> float:
        return float_sum(self.components.values()) + float_sum(self.penalties.values())

    def episode(self) -> float:
        return max(0.0, min(1.0, self.raw()))

    def breakdown(self) -> RewardBreakdown:
        return RewardBreakdown(
            components=dict(self.components),
            penalties=dict(self.penalties),
            raw_total=self.raw(),
            total=self.episode(),
        )


class _Replay:
    def __init__(self, task: SREZeroTaskConfig) -> None:
        self.task = task
        self.services = set(SREZERO_SERVICES) | set(task.service_patches)
        self.metrics = SREZeroMetrics()
        self.rewards = _Rewards(len(task.relevant_evidence))
        self.step_count = 0
        self.done = False
        self.terminal_reason: str | None = None
        self.found: list[str] = []
        self.seen: Counter[str] = Counter()
        self.seen_invalid: Counter[str] = Counter()
        self.applied: RemediationEvent | None = None
        self.remediations: list[RemediationEvent] = []
        self.attempts: list[ResolveAttempt] = []
        self.steps: list[StepTrace] = []
        self.after_done = 0

    def run(self, actions: list[Action]) -> SREZeroEpisode:
        for index, action in enumerate(actions):
            self.step(index, action)
        task = self.task
        return SREZeroEpisode(
            task_id=task.task_id,
            max_steps=task.max_steps,
            metrics=self.metrics,
            evidence_coverage=len(self.found) / max(1, len(task.relevant_evidence)),
            evidence_required=list(task.relevant_evidence),
            evidence_found=list(self.found),
            evidence_missing=[k for k in task.relevant_evidence if k not in self.found],
            reward=self.rewards.breakdown(),
            terminated=self.done,
            terminal_reason=self.terminal_reason,
            actions_after_done=self.after_done,
            accepted_remediation=self.applied if self.metrics.success else None,
            remediations=self.remediations,
            resolve_attempts=self.attempts,
            steps=self.steps,
        )

    def step(self, index: int, action: Action) -> None:
        recorded = _recorded_reward(action)
        if self.done:
            self.after_done += 1
            self.steps.append(
                StepTrace(
                    index=index,
                    raw=action.raw,
                    status="after_done",
                    accepted=False,
                    recorded_reward=recorded,
                    recorded_accepted=action.accepted,
                )
            )
            return
        before = self.rewards.raw()
        self.step_count += 1
        self.metrics.total_steps += 1
        trace = self._execute(index, action)
        if not self.done and self.step_count >= self.task.max_steps:
            self.done = True
            self.terminal_reason = self.terminal_reason or "step_budget_exhausted"
        if self.done:
            self.metrics.final_reward = self.rewards.episode()
        trace.step = self.step_count
        trace.reward = max(-1.0, min(1.0, self.rewards.raw() - before))
        trace.recorded_reward = recorded
        trace.recorded_accepted = action.accepted
        self.steps.append(trace)

    def _execute(self, index: int, action: Action) -> StepTrace:
        try:
            tool, args = interpret_action(action)
        except SREZeroActionError as exc:
            self._invalid(action.raw or "")
            return StepTrace(
                index=index, raw=action.raw, status="invalid_syntax", error=str(exc), accepted=False
            )
        canonical = format_srezero_action(tool, args)
        if tool in SERVICE_TOOLS and args["service"] not in self.services:
            self._invalid(canonical)
            return StepTrace(
                index=index,
                raw=action.raw,
                canonical=canonical,
                status="invalid_service",
                error=f"unknown service {args['service']!r}",
                accepted=False,
            )
        repeated = self.seen[canonical] > 0
        self.seen[canonical] += 1
        accepted = self._dispatch(index, action, tool, args)
        new_evidence = self._evidence(tool, args)
        useless = repeated and not new_evidence and tool not in {"resolve_incident", "escalate"}
        if useless:
            self.metrics.repeated_actions += 1
            self.rewards.penalty("repeated_useless_action")
        return StepTrace(
            index=index,
            raw=action.raw,
            canonical=canonical,
            status="ok",
            accepted=accepted,
            new_evidence=new_evidence,
            repeated=useless,
        )

    def _invalid(self, text: str) -> None:
        self.metrics.invalid_actions += 1
        self.seen_invalid[text] += 1
        if self.seen_invalid[text] > 1:
            self.metrics.repeated_actions += 1
            self.rewards.penalty("repeated_invalid_action")
        else:
            self.rewards.penalty("invalid_action")

    def _dispatch(self, index: int, action: Action, tool: str, args: dict[str, Any]) -> bool:
        if tool in REMEDIATION_TOOLS:
            self._remediate(index, action, tool, args)
        elif tool == "resolve_incident":
            return self._resolve(index, args)
        elif tool == "escalate":
            self.done = True
            self.terminal_reason = "escalated"
        return True

    def _remediate(self, index: int, action: Action, tool: str, args: dict[str, Any]) -> None:
        fix = self.task.correct_fix
        self.metrics.remediation_actions += 1
        service = args["service"]
        if service == fix.service:
            self.metrics.correct_service_remediations += 1
        correct, reason = remediation_verdict(self.task, tool, args)
        if correct and action.accepted is False:
            correct, reason = False, "matches the fix but the simulator did not accept it"
        event = RemediationEvent(
            index=index,
            step=self.step_count,
            raw=action.raw,
            tool=tool,
            service=service,
            key=args.get("key"),
            value=args.get("value"),
            correct=correct,
            reason=reason,
            correct_service=service == fix.service,
            distractor=not correct and service in self.task.distractor_services,
        )
        self.remediations.append(event)
        if correct:
            self.applied = self.applied or event
            self.metrics.correct_remediations += 1
            self.metrics.correct_remediation_applied = True
            self.rewards.mark("remediation")
            return
        self.metrics.wrong_remediations += 1
        if event.distractor:
            self.metrics.distractor_failures += 1
        self.rewards.penalty("wrong_remediation")
        if tool == "restart_service" and service != fix.service:
            self.rewards.penalty("restart_unrelated_service")

    def _resolve(self, index: int, args: dict[str, Any]) -> bool:
        root = match_root_cause(self.task, args["root_cause"])
        fix = match_fix_text(self.task.correct_fix, args["fix"])
        applied = self.applied is not None
        if root.matched:
            self.metrics.root_cause_identified = True
            self.rewards.mark("root_cause")
        if fix.matched:
            self.metrics.fix_identified = True
        accepted = root.matched and fix.matched and applied
        self.attempts.append(
            ResolveAttempt(
                index=index,
                step=self.step_count,
                root_cause=root,
                fix=fix,
                remediation_applied=applied,
                accepted=accepted,
            )
        )
        if accepted:
            self.rewards.mark("resolution")
            self.rewards.efficiency(self.step_count, self.task.max_steps)
            self.done = True
            self.metrics.success = True
            self.terminal_reason = "resolved"
            return True
        self.metrics.premature_resolutions += 1
        self.rewards.penalty("premature_resolution")
        if self.task.terminal_on_wrong_resolution:
            self.done = True
            self.terminal_reason = "premature_or_incorrect_resolution"
        return False

    def _evidence(self, tool: str, args: dict[str, Any]) -> list[str]:
        keys = evidence_keys(self.task, tool, args)
        new = [k for k in keys if k not in self.found]
        if not new:
            return []
        self.found.extend(new)
        self.metrics.evidence_actions += 1
        self.rewards.evidence(len(self.found))
        return new


def replay_srezero(task: SREZeroTaskConfig, trajectory: Trajectory) -> SREZeroEpisode:
    """Recompute SRE-Zero's episode metrics from a trajectory; see the module docstring."""
    return _Replay(task).run(trajectory.actions)


def interpret_action(action: Action) -> tuple[str, dict[str, Any]]:
    """(tool, args) from the structured fields when present, else from the raw string."""
    if action.tool:
        if action.tool not in SREZERO_TOOLS:
            raise SREZeroActionError(f"Unknown action: {action.tool}")
        return action.tool, validate_srezero_args(action.tool, dict(action.args))
    return parse_srezero_action(action.raw or "")


def remediation_verdict(
    task: SREZeroTaskConfig, tool: str, args: dict[str, Any]
) -> tuple[bool, str]:
    """SRE-Zero's `CorrectFix.matches_action`, with the reason spelled out."""
    fix = task.correct_fix
    if tool != fix.action_type:
        return False, f"expected {fix.action_type}, got {tool}"
    if args["service"] != fix.service:
        return False, f"expected service {fix.service}, got {args['service']}"
    if tool == "restart_service":
        return True, f"restarted {fix.service}"
    if tool != "update_config":
        return False, f"{tool} is not a remediation"
    if fix.key is not None and str(args.get("key") or "").upper() != fix.key.upper():
        return False, f"expected key {fix.key}, got {args.get('key')}"
    value: Any = args.get("value")
    if fix.exact_value is not None:
        ok = value == fix.exact_value
        return ok, f"value {value!r} {'==' if ok else '!='} {fix.exact_value!r}"
    if fix.min_numeric_value is not None:
        try:
            ok = float(value) >= fix.min_numeric_value
        except (TypeError, ValueError):
            return False, f"value {value!r} is not a number"
        return ok, f"value {value!r} {'>=' if ok else '<'} {fix.min_numeric_value:g}"
    return True, f"updated {fix.service} {fix.key}"


def evidence_keys(task: SREZeroTaskConfig, tool: str, args: dict[str, Any]) -> list[str]:
    """The relevant-evidence keys an action reveals (SRE-Zero's `matching_evidence_keys`)."""
    service = args.get("service")
    if service is None:
        return []
    base = f"{tool}:{service}"
    candidates = [base]
    if tool == "inspect_config":
        if args.get("key") is not None:
            candidates.append(f"{base}:{str(args['key']).upper()}")
        else:
            prefix = f"inspect_config:{service}:"
            candidates.extend(k for k in task.relevant_evidence if k.startswith(prefix))
    return [k for k in candidates if k in task.relevant_evidence]


def _recorded_reward(action: Action) -> float | None:
    value = (action.model_extra or {}).get("reward")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
