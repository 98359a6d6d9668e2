"""Scores: per dimension, per case, per incident over trials, and overall with bootstrap CIs.

- dimension score = share of Yes among its *scored* questions (unscored ones never count as No);
  a dimension with no scored question has no score, and its case is incomplete;
- composite = weighted sum of dimension scores; pass = composite >= threshold;
- per incident over its complete trials: mean composite, pass@1, pass@k (the unbiased estimator
  1 - C(n-c, k) / C(n, k)) and pass^k (C(c, k) / C(n, k): all of k trials pass);
- overall: means over incidents, with 95% percentile bootstrap CIs resampled by incident.

Every aggregate (composite, pass rates, dimension means; per incident, overall and per agent)
is taken over the same population: complete cases only, so a dimension mean never includes a
case the composite leaves out. `n_complete` (per incident) and `Estimate.n` (incidents) count it.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from math import comb
from typing import NamedTuple

from pydantic import BaseModel, Field

from .items import Items
from .judgment import Judgment, compact
from .rubric import Rubric

BOOTSTRAP_SAMPLES = 2000
BOOTSTRAP_SEED = 20261126


class DimensionScore(BaseModel):
    """One dimension of one case: the share of its scored questions answered Yes (None when none
    was scored), with the counts behind it.
    """

    dimension_id: str
    score: float | None
    n_scored: int
    n_unscored: int
    n_yes: int


class Submitted(NamedTuple):
    """What a case's result keeps of its submission besides the answers."""

    format: str | None = None
    diagnosis_chars: int | None = None


class CaseResult(BaseModel):
    """The scores of one submission (one incident, one trial)."""

    incident_id: str
    trial: str
    agent: str | None = None
    format: str | None = Field(
        None, description="The benchmark format the submission was read as (its adapter's name)."
    )
    diagnosis_chars: int | None = Field(
        None, description="The diagnosis' length in characters (the shift check compares it)."
    )
    composite: float | None
    passed: bool | None
    complete: bool
    dimensions: list[DimensionScore]
    judgments: Items[Judgment] = Field(default_factory=list, exclude=True)

    def answer(self, question_id: str) -> Judgment:
        return next(j for j in self.judgments if j.question_id == question_id)


class Interval(BaseModel):
    """A confidence interval and its level."""

    low: float
    high: float
    level: float = 0.95


class Estimate(BaseModel):
    """A mean over `n` values with its bootstrap CI; value None when n is 0, no CI when n < 2."""

    value: float | None
    ci: Interval | None = None
    n: int


class IncidentSummary(BaseModel):
    """One incident over its trials: mean composite, pass@1, pass@k and pass^k over complete
    trials (None when no trial is complete) and dimension means.
    """

    incident_id: str
    n_trials: int
    n_complete: int
    mean_composite: float | None
    pass_at_1: float | None
    pass_at_k: float | None
    pass_hat_k: float | None
    k: int
    dimension_means: dict[str, float | None]


class OverallSummary(BaseModel):
    """A run's headline numbers: means over incidents with bootstrap CIs, plus case, question,
    missing and orphan counts.
    """

    n_incidents: int
    n_incidents_scored: int
    n_cases: int
    n_incomplete_cases: int
    n_scored_questions: int
    n_unscored_questions: int
    n_failed_questions: int = Field(
        0,
        description="Of the unscored questions, those whose judge call failed (provider error, "
        "unusable reply, judge error): a rerun asks them again.",
    )
    k: int
    mean_composite: Estimate
    pass_rate: Estimate = Field(description="Mean over incidents of pass@1.")
    pass_at_k: Estimate
    pass_hat_k: Estimate
    dimension_means: dict[str, Estimate]
    n_missing: int = 0
    n_orphans: int = 0


def score_case(
    incident_id: str,
    trial: str,
    judgments: Sequence[Judgment],
    rubric: Rubric,
    agent: str | None = None,
    submitted: Submitted | None = None,
) -> CaseResult:
    """Score one case: each dimension is its Yes share, the composite their weighted sum when every
    dimension has a score (else None, and `passed` None); passed when composite >= threshold.
    """
    dims = [
        dimension_score(d.id, [j for j in judgments if j.dimension_id == d.id])
        for d in rubric.dimensions
    ]
    return scored_case(incident_id, trial, dims, judgments, rubric, agent, submitted)


def scored_case(
    incident_id: str,
    trial: str,
    dims: list[DimensionScore],
    judgments: Sequence[Judgment],
    rubric: Rubric,
    agent: str | None = None,
    submitted: Submitted | None = None,
) -> CaseResult:
    """`score_case` from the dimensions' scores already counted (one per rubric dimension, in
    its order): the engine counts them as each answer arrives, so that the judgments need
    not be read back."""
    submitted = submitted or Submitted()
    complete = all(d.score is not None for d in dims)
    composite = None
    if complete:
        composite = sum(rubric.scoring.weights[d.dimension_id] * (d.score or 0.0) for d in dims)
        composite = round(composite, 10)
    return compact(
        CaseResult(
            incident_id=incident_id,
            trial=trial,
            agent=agent,
            format=submitted.format,
            diagnosis_chars=submitted.diagnosis_chars,
            composite=composite,
            passed=None if composite is None else composite >= rubric.scoring.threshold - 1e-9,
            complete=complete,
            dimensions=dims,
            judgments=judgments,
        )
    )


def dimension_score(dimension_id: str, judgments: list[Judgment]) -> DimensionScore:
    """One dimension's score from its judgments."""
    scored = [j for j in judgments if j.answer is not None]
    yes = sum(j.answer == "Yes" for j in scored)
    return counted_score(dimension_id, len(scored), len(judgments) - len(scored), yes)


def counted_score(dimension_id: str, n_scored: int, n_unscored: int, n_yes: int) -> DimensionScore:
    """One dimension's score from its counts: the share of Yes among the scored questions."""
    return DimensionScore(
        dimension_id=dimension_id,
        score=n_yes / n_scored if n_scored else None,
        n_scored=n_scored,
        n_unscored=n_unscored,
        n_yes=n_yes,
    )


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Probability that at least one of k trials drawn without replacement passes."""
    if k < 1 or n < k:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float | None:
    """Probability that all of k trials drawn without replacement pass (tau-bench's pass^k)."""
    if k < 1 or n < k:
        return None
    return comb(c, k) / comb(n, k)


def summarize_incidents(
    cases: Iterable[CaseResult], rubric: Rubric, k: int | None = None
) -> tuple[list[IncidentSummary], int]:
    """Per-incident summaries; `k` defaults to the fewest complete trials of any scored incident."""
    return Tally(rubric, cases).all.incidents(rubric, k)


class _IncidentTally:
    """What an incident's summary reads of its cases: the trials, and the complete ones'
    composites, passes and dimension scores (floats in arrays: 8 bytes a case and dimension)."""

    __slots__ = ("composites", "n_complete", "n_passed", "n_trials", "scores")

    def __init__(self, dimension_ids: Iterable[str]) -> None:
        self.n_trials = self.n_complete = self.n_passed = 0
        self.composites = array("d")
        self.scores = {d: array("d") for d in dimension_ids}

    def add(self, case: CaseResult) -> None:
        self.n_trials += 1
        if not case.complete:
            return
        self.n_complete += 1
        self.n_passed += bool(case.passed)
        if case.composite is not None:
            self.composites.append(case.composite)
        for s in case.dimensions:
            if s.score is not None and s.dimension_id in self.scores:
                self.scores[s.dimension_id].append(s.score)

    def summary(self, incident_id: str, rubric: Rubric, k: int) -> IncidentSummary:
        n, c = self.n_complete, self.n_passed
        return IncidentSummary(
            incident_id=incident_id,
            n_trials=self.n_trials,
            n_complete=n,
            mean_composite=_mean(self.composites),
            pass_at_1=pass_at_k(n, c, 1),
            pass_at_k=pass_at_k(n, c, k),
            pass_hat_k=pass_hat_k(n, c, k),
            k=k,
            dimension_means={d.id: _mean(self.scores[d.id]) for d in rubric.dimensions},
        )


class _Group:
    """The counts of one population of cases (the run's, or one agent's) and its incidents'
    tallies, in the order the incidents first come."""

    def __init__(self, dimension_ids: list[str]) -> None:
        self.dimension_ids = dimension_ids
        self.by_incident: dict[str, _IncidentTally] = {}
        self.n_cases = self.n_incomplete = self.n_scored = self.n_unscored = 0

    def add(self, case: CaseResult) -> None:
        self.n_cases += 1
        self.n_incomplete += not case.complete
        self.n_scored += sum(d.n_scored for d in case.dimensions)
        self.n_unscored += sum(d.n_unscored for d in case.dimensions)
        incident = self.by_incident.get(case.incident_id)
        if incident is None:
            incident = self.by_incident[case.incident_id] = _IncidentTally(self.dimension_ids)
        incident.add(case)

    def incidents(self, rubric: Rubric, k: int | None = None) -> tuple[list[IncidentSummary], int]:
        if k is None:
            counts = [t.n_complete for t in self.by_incident.values()]
            k = max(1, min((n for n in counts if n), default=1))
        return [t.summary(i, rubric, k) for i, t in self.by_incident.items()], k

    def overall(
        self,
        incidents: list[IncidentSummary],
        rubric: Rubric,
        k: int,
        n_missing: int = 0,
        n_orphans: int = 0,
        seed: int = BOOTSTRAP_SEED,
    ) -> OverallSummary:
        scored = [i for i in incidents if i.n_complete]

        def estimate(values: list[float | None]) -> Estimate:
            return bootstrap_mean([v for v in values if v is not None], seed=seed)

        return OverallSummary(
            n_incidents=len(incidents),
            n_incidents_scored=len(scored),
            n_cases=self.n_cases,
            n_incomplete_cases=self.n_incomplete,
            n_scored_questions=self.n_scored,
            n_unscored_questions=self.n_unscored,
            k=k,
            mean_composite=estimate([i.mean_composite for i in scored]),
            pass_rate=estimate([i.pass_at_1 for i in scored]),
            pass_at_k=estimate([i.pass_at_k for i in scored]),
            pass_hat_k=estimate([i.pass_hat_k for i in scored]),
            dimension_means={
                d.id: estimate([i.dimension_means[d.id] for i in scored]) for d in rubric.dimensions
            },
            n_missing=n_missing,
            n_orphans=n_orphans,
        )


class Tally:
    """Everything the summaries read of the cases, counted in one pass as each case is made
    (`add`, in the result's order), so that the cases need not be held to be summed up:
    per incident the complete trials' values (a few floats each, which the means and the
    bootstrap read), per agent the same. `summarize_*` give the same summaries from a list."""

    def __init__(self, rubric: Rubric, cases: Iterable[CaseResult] = ()) -> None:
        self.dimension_ids = [d.id for d in rubric.dimensions]
        self.all = _Group(self.dimension_ids)
        self.agents: dict[str, _Group] = {}
        for case in cases:
            self.add(case)

    def add(self, case: CaseResult) -> None:
        self.all.add(case)
        if case.agent:
            group = self.agents.get(case.agent)
            if group is None:
                group = self.agents[case.agent] = _Group(self.dimension_ids)
            group.add(case)

    def by_agent(
        self, rubric: Rubric, k: int | None = None, seed: int = BOOTSTRAP_SEED
    ) -> dict[str, OverallSummary] | None:
        """The overall summary per agent, when the cases come from two or more named agents
        (`summarize_by_agent`)."""
        if len(self.agents) < 2:
            return None
        summaries = {}
        for agent in sorted(self.agents):
            group = self.agents[agent]
            incidents, agent_k = group.incidents(rubric, k)
            summaries[agent] = group.overall(incidents, rubric, agent_k, seed=seed)
        return summaries


def _mean(values: Sequence[float]) -> float | None:
    import numpy as np  # imported when a result is summed up, not by every run's start

    return float(np.mean(values)) if values else None


def bootstrap_mean(
    values: list[float], samples: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED
) -> Estimate:
    """Mean of per-incident values with a percentile CI from resampling incidents."""
    if not values:
        return Estimate(value=None, n=0)
    import numpy as np

    data = np.asarray(values, dtype=float)
    if len(data) < 2:
        return Estimate(value=float(data.mean()), n=len(data))
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(samples, len(data)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return Estimate(
        value=float(data.mean()), ci=Interval(low=float(low), high=float(high)), n=len(data)
    )


def summarize_overall(
    cases: Iterable[CaseResult],
    incidents: list[IncidentSummary],
    rubric: Rubric,
    k: int,
    n_missing: int = 0,
    n_orphans: int = 0,
    seed: int = BOOTSTRAP_SEED,
) -> OverallSummary:
    """The overall summary: means over incidents with a complete trial, CIs from resampling
    incidents with `seed`; undefined estimates when no incident is scored.
    """
    group = _Group([])
    for case in cases:
        group.add(case)
    return group.overall(incidents, rubric, k, n_missing, n_orphans, seed)


def summarize_by_agent(
    cases: Iterable[CaseResult],
    rubric: Rubric,
    k: int | None = None,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, OverallSummary] | None:
    """The overall summary per agent, when the cases come from two or more named agents.

    Benchmarks that hold several agents' answers to one incident (SREGym's submissions file,
    AIOpsLab sessions) would otherwise mix agents in one incident's trials.
    """
    return Tally(rubric, cases).by_agent(rubric, k, seed)
