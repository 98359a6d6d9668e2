"""Numbers that stay true when the judge is wrong: a result's means corrected with labels.

`estimate_with_labels(result, labels)` gives, for the pass rate, the mean composite, each
dimension's mean, each agent's pass rate and every pair of agents' difference: the judge-only
estimate (the judge on every case), the labels-only estimate (the labelled cases alone) and
the PPI++ estimate (both, power-tuned; `agreement.ppi`), each with its interval, and how many
labels the judge was worth. However biased the judge, the PPI++ interval stays valid.

What is estimated is the mean over the cases with a verdict from the judge (complete cases),
each case (submission) counting once: the population the labelled cases are sampled from.
The result's own means count each incident once (its trials averaged), so where incidents
have different numbers of trials the judge-only value here differs from the result's figure.
Trials of one incident are not independent: incidents are the clusters of every interval.

A case's labels become its values through the rubric, as the judge's answers do: a
dimension's score is the share of Yes among its questions (all of them labelled), the
composite their weighted sum, pass = composite >= threshold; a `verdict` label, when given,
is the case's pass. An agent is a case's `agent` (the submission's, as `by_agent` in the
result groups them), considered when two or more agents are named.

The labelled cases must be a simple random sample of the cases, or drawn with recorded
probabilities (`judge labels serve --order informative`, whose export carries each drawn
case's probability): then the estimates are inverse-probability weighted (active PPI++).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from agreement.ppi import (
    DEFAULT_ALPHA,
    MeanDifference,
    MeanEstimate,
    PPIEstimate,
    active_ppi_mean,
    active_ppi_mean_difference,
    ppi_mean,
    ppi_mean_difference,
)
from agreement.ppi_strata import StratifiedEstimate, stratified_ppi_mean
from agreement.ratings import Answer
from ground_truth.errors import InputError

from ..checklist.results import EvalResult, load_result
from ..checklist.scoring import CaseResult
from .labelset import CaseKey, CaseLabels, LabelSet, read_label_set

Design = Literal["simple random sample", "drawn with recorded probabilities"]
By = Literal["benchmark", "agent", "incident-family"]
BY: tuple[By, ...] = ("benchmark", "agent", "incident-family")
_INSTANCE = re.compile(r"[-_.]?\d+$")
FEW_CLUSTERS = 30
MAX_LISTED = 5


class AgentDifference(BaseModel):
    """One agent's pass rate minus another's, three ways, and whether they can be told apart."""

    difference: MeanDifference
    effective_labels: float | None = Field(
        description="How many labels the labels-only difference would need to be as precise."
    )


class LabelledEstimates(BaseModel):
    """A result's means three ways: the judge alone, the labels alone, and PPI++."""

    result: str | None = None
    labels: str | None = None
    labeller: str
    rubric_hash: str | None
    design: Design
    confidence: float = Field(description="The intervals' nominal coverage, 1 - alpha.")
    n_cases: int = Field(description="Cases with a verdict from the judge: the population.")
    n_incidents: int
    n_labelled: int = Field(description="Of those cases, how many have a pass/fail label.")
    n_labelled_incidents: int
    pass_rate: PPIEstimate
    mean_composite: PPIEstimate
    dimensions: dict[str, PPIEstimate]
    agents: dict[str, PPIEstimate] = Field(description="Each agent's pass rate.")
    differences: list[AgentDifference] = Field(description="Every pair of agents, A minus B.")
    stratified: Stratified | None = Field(
        None, description="With --by: the means of this run's cases, stratified PPI++."
    )
    notes: list[str] = Field(default_factory=list)


class Stratified(BaseModel):
    """The run's means estimated stratum by stratum (`judge estimate --by`)."""

    by: By
    pass_rate: StratifiedEstimate
    mean_composite: StratifiedEstimate
    dimensions: dict[str, StratifiedEstimate]


@dataclass
class _Scheme:
    """How labels become a case's values: the rubric's questions, weights and threshold."""

    questions: dict[str, list[str]]  # dimension id -> its question ids
    weights: dict[str, float]
    threshold: float

    def values(self, case: CaseLabels) -> dict[str, float]:
        """The case's labelled values (pass, composite, each dimension) that it has."""
        out: dict[str, float] = {}
        for dim, questions in self.questions.items():
            answers = [case.answers.get(q) for q in questions]
            if all(a is not None for a in answers):
                out[dim] = answers.count("Yes") / len(answers)
        if all(d in out for d in self.weights):
            out["composite"] = sum(w * out[d] for d, w in self.weights.items())
        verdict: Answer | None = case.verdict
        if verdict is not None:
            out["pass"] = float(verdict == "Yes")
        elif "composite" in out:
            out["pass"] = float(out["composite"] >= self.threshold - 1e-9)
        return out


@dataclass
class _Population:
    """The cases estimated over, with the judge's and the labels' values per quantity."""

    keys: list[CaseKey]
    incidents: np.ndarray
    agents: list[str | None]
    judge: dict[str, np.ndarray]
    labels: dict[str, np.ndarray]
    probabilities: np.ndarray  # 1.0 where none was recorded (unused for unlabelled cases)
    alpha: float
    active: bool

    def mean(self, quantity: str, index: np.ndarray) -> PPIEstimate:
        f = self.judge[quantity][index]
        y = self.labels[quantity][index]
        clusters = self.incidents[index].tolist()
        if self.active:
            pi = self.probabilities[index]
            return active_ppi_mean(f, y, pi, clusters, alpha=self.alpha)
        return ppi_mean(f, y, clusters, alpha=self.alpha)

    def difference(self, a: str, b: str) -> AgentDifference:
        ia, ib = self.of_agent(a), self.of_agent(b)
        if self.active:
            diff = active_ppi_mean_difference(
                self.judge["pass"][ia],
                self.labels["pass"][ia],
                self.probabilities[ia],
                self.judge["pass"][ib],
                self.labels["pass"][ib],
                self.probabilities[ib],
                clusters_a=self.incidents[ia].tolist(),
                clusters_b=self.incidents[ib].tolist(),
                names=(a, b),
                alpha=self.alpha,
            )
        else:
            diff = ppi_mean_difference(
                self.judge["pass"][ia],
                self.labels["pass"][ia],
                self.judge["pass"][ib],
                self.labels["pass"][ib],
                clusters_a=self.incidents[ia].tolist(),
                clusters_b=self.incidents[ib].tolist(),
                names=(a, b),
                alpha=self.alpha,
            )
        return AgentDifference(
            difference=diff, effective_labels=effective_labels(diff.labels_only, diff.ppi)
        )

    def of_agent(self, agent: str) -> np.ndarray:
        return np.flatnonzero([a == agent for a in self.agents])

    def labelled(self, quantity: str = "pass") -> np.ndarray:
        return ~np.isnan(self.labels[quantity])


def estimate_with_labels(
    result: EvalResult | str | Path,
    labels: LabelSet | str | Path,
    *,
    alpha: float = DEFAULT_ALPHA,
    annotator: str | None = None,
    by: By | None = None,
) -> LabelledEstimates:
    """Judge-only, labels-only and PPI++ estimates of a result's means, corrected with labels.

    Args:
        result: an `EvalResult` or the path of a result file.
        labels: a `LabelSet` or the path of a label CSV (the labelling page's export, or a
            sheet in the project's label format).
        alpha: intervals have nominal coverage 1 - alpha.
        annotator: whose labels, when the CSV holds several annotators'.
        by: also estimate this run's means stratum by stratum (`agreement.ppi_strata`): by
            the cases' benchmark format, their agent, or their incident family (the incident
            id without a trailing instance number: `revoke_auth_mongodb-2` is in
            `revoke_auth_mongodb`). Needs a simple random sample within each stratum.

    Raises:
        InputError: labels for cases the result does not hold, for questions its rubric does
            not ask, made for another rubric (by hash), or too few to estimate from (fewer
            than 2 labelled cases in 2 incidents).
    """
    result_path = None if isinstance(result, EvalResult) else str(result)
    if not isinstance(result, EvalResult):
        result = load_result(result)
    if not isinstance(labels, LabelSet):
        labels = read_label_set(labels, annotator)
    notes: list[str] = []
    population = _population(result, labels, alpha, notes)
    estimates = _estimates(population, result, labels, result_path, notes)
    if by is not None:
        if labels.drawn:
            raise InputError(
                labels.source,
                "--by estimates from a simple random sample of labels within each stratum; "
                "these were drawn with probabilities (--order informative): estimate without "
                "--by",
                field="--by",
            )
        estimates.stratified = _stratified(population, result, by)
    return estimates


def _stratified(population: _Population, result: EvalResult, by: By) -> Stratified:
    cases = {(c.incident_id, c.trial): c for c in result.cases}
    strata = [stratum(cases[key], by) for key in population.keys]
    clusters = population.incidents.tolist()

    def estimate(quantity: str) -> StratifiedEstimate:
        return stratified_ppi_mean(
            population.judge[quantity],
            population.labels[quantity],
            strata,
            clusters,
            alpha=population.alpha,
        )

    return Stratified(
        by=by,
        pass_rate=estimate("pass"),
        mean_composite=estimate("composite"),
        dimensions={d: estimate(d) for d in _dimensions(result)},
    )


def stratum(case: CaseResult, by: By) -> str:
    """A case's stratum under `by` (see `estimate_with_labels`)."""
    if by == "benchmark":
        return case.format or "(not recorded)"
    if by == "agent":
        return case.agent or "(no agent)"
    return _INSTANCE.sub("", case.incident_id) or case.incident_id


def pass_rate_with_labels(
    result: EvalResult, labels: LabelSet, *, alpha: float = DEFAULT_ALPHA
) -> PPIEstimate:
    """The pass rate alone, three ways (the labelling page's live estimate): no minimum of
    labels, an estimate it cannot make is undefined with the reason."""
    return _population(result, labels, alpha, [], strict=False).mean(
        "pass", np.arange(len(_complete(result)))
    )


def _estimates(
    population: _Population,
    result: EvalResult,
    labels: LabelSet,
    result_path: str | None,
    notes: list[str],
) -> LabelledEstimates:
    every = np.arange(len(population.keys))
    labelled = population.labelled()
    agents = sorted({a for a in population.agents if a})
    if len(agents) < 2:
        agents = []
    if len({i for i in population.incidents[labelled].tolist()}) < FEW_CLUSTERS:
        notes.append(
            f"the labels cover fewer than {FEW_CLUSTERS} incidents: normal intervals from "
            "few clusters run somewhat narrow; label more incidents for a firmer interval"
        )
    return LabelledEstimates(
        result=result_path,
        labels=labels.source,
        labeller=labels.labeller,
        rubric_hash=labels.rubric_hash,
        design="drawn with recorded probabilities" if population.active else "simple random sample",
        confidence=1 - population.alpha,
        n_cases=len(every),
        n_incidents=len(set(population.incidents.tolist())),
        n_labelled=int(labelled.sum()),
        n_labelled_incidents=len(set(population.incidents[labelled].tolist())),
        pass_rate=population.mean("pass", every),
        mean_composite=population.mean("composite", every),
        dimensions={d: population.mean(d, every) for d in _dimensions(result)},
        agents={a: population.mean("pass", population.of_agent(a)) for a in agents},
        differences=[population.difference(a, b) for a, b in combinations(agents, 2)],
        notes=notes,
    )


def _complete(result: EvalResult) -> list[int]:
    return [
        i for i, c in enumerate(result.cases) if c.composite is not None and c.passed is not None
    ]


def _dimensions(result: EvalResult) -> list[str]:
    return list((result.config.get("rubric") or {}).get("weights") or {})


def _population(
    result: EvalResult, labels: LabelSet, alpha: float, notes: list[str], strict: bool = True
) -> _Population:
    _check_rubric(result, labels)
    scheme = _scheme(result)
    _check_questions(labels, scheme)
    cases = [result.cases[i] for i in _complete(result)]
    keys = [(c.incident_id, c.trial) for c in cases]
    by_key = {c.key: c for c in labels.cases}
    _check_cases(result, labels, set(keys), notes)
    quantities = ["pass", "composite", *scheme.questions]
    judge = {q: np.empty(len(cases)) for q in quantities}
    values = {q: np.full(len(cases), np.nan) for q in quantities}
    probabilities = np.ones(len(cases))
    undrawn = 0
    for i, case in enumerate(cases):
        judge["pass"][i] = float(bool(case.passed))
        judge["composite"][i] = case.composite or 0.0
        for dim in case.dimensions:
            if dim.dimension_id in judge:
                judge[dim.dimension_id][i] = dim.score or 0.0
        label = by_key.get(keys[i])
        if label is None:
            continue
        if labels.drawn and label.probability is None:
            undrawn += 1
            continue
        for quantity, value in scheme.values(label).items():
            values[quantity][i] = value
        probabilities[i] = label.probability or 1.0
    if undrawn:
        notes.append(
            f"{undrawn} labelled cases were not drawn by the labelling design (no probability): "
            "left out, since their chance of being labelled is unknown"
        )
    population = _Population(
        keys=keys,
        incidents=np.array([k[0] for k in keys], dtype=object),
        agents=[c.agent for c in cases],
        judge=judge,
        labels=values,
        probabilities=probabilities,
        alpha=alpha,
        active=labels.drawn,
    )
    _note_partial(population, notes)
    if strict:
        _check_enough(population, labels)
    return population


def _scheme(result: EvalResult) -> _Scheme:
    """The rubric as the result ran it: its weights and threshold, and which questions each
    weighted dimension asked (from the result's judgments)."""
    rubric = result.config.get("rubric") or {}
    weights = dict(rubric.get("weights") or {})
    questions: dict[str, set[str]] = {d: set() for d in weights}
    for j in result.judgments:
        if j.dimension_id in questions:
            questions[j.dimension_id].add(j.question_id)
    return _Scheme(
        questions={d: sorted(q) for d, q in questions.items()},
        weights=weights,
        threshold=float(rubric.get("threshold", 0.7)),
    )


def _check_rubric(result: EvalResult, labels: LabelSet) -> None:
    expected = (result.config.get("rubric") or {}).get("hash")
    if labels.rubric_hash and expected and labels.rubric_hash != expected:
        raise InputError(
            labels.source,
            f"the labels were made for rubric {labels.rubric_hash}, the result was judged with "
            f"rubric {expected}: the questions may differ; label the result's rubric",
            field="rubric_hash",
        )


def _check_questions(labels: LabelSet, scheme: _Scheme) -> None:
    known = {q for qs in scheme.questions.values() for q in qs}
    unknown = sorted({q for c in labels.cases for q in c.answers} - known)
    if unknown:
        raise InputError(
            labels.source,
            f"labels for questions the result's rubric does not ask: {_listed(unknown)}; "
            f"expected {', '.join(sorted(known))} or verdict",
            field="question_id",
        )


def _check_cases(
    result: EvalResult, labels: LabelSet, complete: set[CaseKey], notes: list[str]
) -> None:
    held = {(c.incident_id, c.trial) for c in result.cases}
    foreign = [k for k in (c.key for c in labels.cases) if k not in held]
    if foreign:
        raise InputError(
            labels.source,
            f"labels for {len(foreign)} cases the result does not hold: "
            f"{_listed([f'{i}/{t}' for i, t in foreign])}; expected labels on the result's cases",
            field="incident_id",
        )
    incomplete = [c.key for c in labels.cases if c.key not in complete]
    if incomplete:
        notes.append(
            f"{len(incomplete)} labelled cases have no verdict from the judge (incomplete): "
            "left out, as the result's means leave them out"
        )


def _note_partial(population: _Population, notes: list[str]) -> None:
    some = np.any([~np.isnan(v) for v in population.labels.values()], axis=0)
    lacking = int((some & np.isnan(population.labels["composite"])).sum())
    if lacking:
        notes.append(
            f"{lacking} labelled cases lack a label on some question (Unsure or empty): they "
            "count only for the dimensions they complete, and for the pass rate when they "
            "carry a verdict label"
        )


def _check_enough(population: _Population, labels: LabelSet) -> None:
    labelled = population.labelled()
    n = int(labelled.sum())
    incidents = len(set(population.incidents[labelled].tolist()))
    if n >= 2 and incidents >= 2:
        return
    need = []
    if n < 2:
        need.append(f"{2 - n} more labelled case{'s' if 2 - n > 1 else ''}")
    if incidents < 2:
        need.append(f"labels in {2 - incidents} more incident{'s' if 2 - incidents > 1 else ''}")
    drawn = (
        "; under --order informative only the cases of the largest fully labelled sample "
        "count: label in the page's order"
        if labels.drawn
        else ""
    )
    raise InputError(
        labels.source,
        f"too few labels: {n} cases with a pass/fail label in {incidents} incidents; a "
        f"corrected estimate needs at least 2 labelled cases in 2 incidents (give "
        f"{' and '.join(need)}; about 30 incidents for a firm interval){drawn}",
    )


def effective_labels(labels_only: MeanEstimate, ppi: MeanEstimate) -> float | None:
    """How many labels the labels-only estimate would need to be as precise as PPI."""
    if labels_only.se is None or ppi.se is None or ppi.se == 0:
        return None
    return labels_only.n_labels * labels_only.se**2 / ppi.se**2


def _listed(items: Sequence[str]) -> str:
    shown = ", ".join(items[:MAX_LISTED])
    return shown + (f" and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else "")
