"""What an audit found: per probe the effect of a change that should not matter, with its
interval and the gate's decision, the judge's noise floor, self-grading counts, and what each
arm cost (`judge audit --json`; `judge schema audit`)."""

from __future__ import annotations

from pydantic import BaseModel, Field, PrivateAttr

from agreement.paired import PairedEffect
from agreement.stats import Estimate

from ..checklist.results import EvalResult, RunStop
from ..selftest.cases import CallPlan
from .families import SelfGrading

SCHEMA_VERSION = "1"


class QuestionShift(BaseModel):
    """One question under one probe: items paired, the share that flipped, the Yes-rate change."""

    question_id: str
    n: int
    flip_rate: float | None
    yes_shift: float | None


class ProbeResult(BaseModel):
    """One probe: the arms compared and how far the judge's answers moved between them.

    `yes_shift` (variant minus reference, per answer: +1 a No that became Yes) and
    `excess_flips` (answers that changed, minus those that change when the reference is asked
    again: the noise floor) decide `biased`; the composite and pass-rate shifts say what it
    does to the scores."""

    probe: str
    title: str = Field(description="What was changed, in words.")
    reference: str = Field(description="The arm compared with (base, or another named arm).")
    arms: list[str]
    n_cases: int = 0
    skipped: str | None = Field(None, description="Why the probe did not run.")
    yes_shift: PairedEffect | None = None
    excess_flips: PairedEffect | None = None
    flip_rate: PairedEffect | None = Field(
        None, description="Answers changed (no noise taken off)."
    )
    composite_shift: PairedEffect | None = None
    pass_shift: PairedEffect | None = None
    questions: list[QuestionShift] = Field(default_factory=list)
    biased: bool = Field(False, description="An effect's gate interval lies beyond the tolerance.")
    gated: bool = Field(True, description="Whether its effects count for `--fail-on-bias`.")

    @property
    def measured(self) -> bool:
        """Whether any answer was compared: a probe whose calls all failed measured nothing,
        and says so rather than "no bias"."""
        effects = (self.yes_shift, self.excess_flips)
        return any(e is not None and e.value is not None for e in effects)

    @property
    def verdict(self) -> str:
        """The gate's word on the probe, as the terminal and the HTML report show it."""
        if self.skipped:
            return "not run"
        if self.biased:
            return "BIAS"
        if not self.measured:
            return "not measured"
        return "no" if self.gated else "not gated"


class MemberFamilyEffect(BaseModel):
    """A panel member of a known family: its Yes rate on its own family's submissions, minus
    the other members', against the same difference on the other submissions (so that a family
    of better agents does not look like favour)."""

    member: str
    family: str
    n_own: int
    n_other: int
    effect: PairedEffect


class NoiseResult(BaseModel):
    """The judge asked the same cases again with another seed: how often its answers change."""

    measured: bool
    skipped: str | None = None
    flip_rate: PairedEffect | None = None
    kappa: Estimate | None = Field(None, description="Cohen's kappa, first run against repeat.")
    questions: list[QuestionShift] = Field(default_factory=list)
    n_cases: int = 0
    cases_changed: int = Field(0, description="Cases whose verdict (pass/fail) changed.")
    n_incidents: int = 0
    incidents_changed: int = Field(0, description="Incidents with a case whose verdict changed.")
    near_threshold: int = Field(
        0, description="Cases of the first run whose verdict one answer changed would change."
    )


class ArmRun(BaseModel):
    """One arm as it ran: its cases, the calls it made or found in the store, what it cost."""

    name: str
    probe: str
    cases: int
    calls_planned: int
    calls_made: int
    cache_hits: int
    cost_usd: float | None
    unscored_questions: int
    stopped: RunStop | None = None
    note: str | None = None


class AuditReport(BaseModel):
    """A judge audit's whole outcome."""

    schema_version: str = SCHEMA_VERSION
    judge: str
    rubric: dict[str, str]
    ground_truth: str | None = None
    outputs: str | None = None
    seed: int = 0
    tolerance: float
    gate_level: float = Field(description="The level of each gate interval (Bonferroni).")
    n_cases: int
    n_incidents: int
    sampled: bool = Field(False, description="A sample of the run's cases (`--sample`).")
    biased: list[str] = Field(description="The probes whose effects lie beyond the tolerance.")
    probes: list[ProbeResult]
    noise: NoiseResult
    self_grading: SelfGrading | None = None
    members: list[MemberFamilyEffect] = Field(default_factory=list)
    arms: list[ArmRun]
    plan: CallPlan | None = None
    run_calls: int = Field(description="Calls one run of these cases takes (the base arm).")
    audit_calls: int = Field(description="Calls the other arms take.")
    cost_ratio: float | None = Field(description="audit_calls / run_calls.")
    complete: bool = True
    notes: list[str] = Field(default_factory=list)
    exit_code: int | None = None
    exit_reason: str | None = None
    _results: dict[str, EvalResult] = PrivateAttr(default_factory=dict)

    @property
    def findings(self) -> str:
        """The probes found biased, and those that ran but measured nothing."""
        found = ", ".join(self.biased) or "none"
        unmeasured = [p.probe for p in self.probes if not p.skipped and not p.measured]
        return f"{found}; not measured: {', '.join(unmeasured)}" if unmeasured else found

    @property
    def results(self) -> dict[str, EvalResult]:
        """Each arm's run, by arm name, in the order they ran (not part of the JSON)."""
        return self._results

    @property
    def base_result(self) -> EvalResult | None:
        """The base arm's run: the cases as `judge eval` scores them (not part of the JSON)."""
        return self._results.get("base")

    @property
    def stopped(self) -> RunStop | None:
        """Why the audit stopped before its last arm, if it did."""
        return next((r.stopped for r in self._results.values() if r.stopped), None)
