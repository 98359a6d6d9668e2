"""Calibrate judges against people: per-judge agreement with each annotator, and a sweep of the
pass threshold showing the verdict kappa vs people at each composite threshold.

The reference ("people") is the single annotator when there is one; with two or more it is
their majority (`people (majority)`; ties and items nobody labelled are missing), and each
annotator is also reported separately. The sweep turns the judge's `cases[].composite` into a
verdict `composite >= t` (a 1e-9 tolerance absorbs float noise like 0.7000000001) and compares
it with the reference's `verdict` labels.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, TypeGuard

from pydantic import BaseModel, Field

from agreement.ratings import (
    LEVELS,
    VERDICT,
    Answer,
    ItemKey,
    Level,
    RaterLabels,
    RatingTable,
    check_labels_match,
)
from agreement.readers import Entry, Source, read_ratings
from agreement.report import GroupAgreement, Settings, UnitBreakdown, human_ceiling, pairwise
from agreement.stats import DEFAULT_B, ClusterBootstrap, Estimate, PairStats, pair_stats

CONSENSUS = "people (majority)"
DEFAULT_THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(21))
TOLERANCE = 1e-9


class ThresholdPoint(BaseModel):
    """A judge's verdict agreement with the reference if it passed cases at `threshold`:
    agreement, kappa, TPR and TNR with CIs (undefined estimates carry a reason, not a number).
    """

    threshold: float
    n: int = Field(description="Cases with a composite and a reference verdict.")
    pass_rate: float | None = Field(description="Share of those cases the judge would pass.")
    agreement: Estimate
    kappa: Estimate
    tpr: Estimate
    tnr: Estimate


class JudgeCalibration(BaseModel):
    """One judge against the people: per level and per unit agreement, and how its pass
    threshold would change verdict agreement with the reference.
    """

    judge: str
    source: str | None
    reference: str
    vs_people: list[PairStats] = Field(
        description="Per level, against each annotator and the majority."
    )
    breakdown: list[UnitBreakdown] = Field(
        description="Against the reference, per question and dimension."
    )
    sweep: list[ThresholdPoint]
    best_threshold: float | None = Field(
        description="The threshold with the highest defined verdict kappa (lowest on ties)."
    )


class CalibrationReport(BaseModel):
    """What `calibrate` returns: per judge, its agreement with each person and with the reference,
    a threshold sweep and the best threshold, plus the human ceiling among the people.
    """

    schema_version: Literal["1"] = "1"
    kind: Literal["calibration"] = "calibration"
    settings: Settings
    people: list[str]
    reference: str
    judges: list[JudgeCalibration]
    human_ceiling: list[GroupAgreement] = Field(default_factory=list)


def majority(table: RatingTable, people: Sequence[str], name: str = CONSENSUS) -> RaterLabels:
    """The people's majority answer per item; ties are missing."""
    consensus = RaterLabels(name=name, kind="human", source="majority of " + ", ".join(people))
    for level in LEVELS:
        votes: dict[ItemKey, list[int]] = {}
        for person in people:
            for key, answer in table.labels(person, level).items():
                tally = votes.setdefault(key, [0, 0])
                if answer is not None:
                    tally[answer == "No"] += 1
        for key, (yes, no) in votes.items():
            consensus.labels[level][key] = "Yes" if yes > no else "No" if no > yes else None
    for person in people:
        for question, dimension in table[person].dimension_of.items():
            consensus.dimension_of.setdefault(question, dimension)
    return consensus


def sweep(
    judge: RaterLabels,
    reference: dict[ItemKey, Answer | None],
    thresholds: Iterable[float],
    bootstrap: ClusterBootstrap,
) -> list[ThresholdPoint]:
    """One ThresholdPoint per threshold: the judge passes a case when its composite is at least
    the threshold (within 1e-9); cases with no composite or no reference verdict are left out,
    so every point is over the same cases. Empty `thresholds` gives an empty list.
    """
    points = []
    cases = [
        (key, composite, answer)
        for key, answer in sorted(reference.items())
        if key.unit == VERDICT
        and answer is not None
        and (composite := judge.composites.get((key.incident_id, key.trial))) is not None
    ]
    for t in thresholds:
        verdicts = ["Yes" if c >= t - TOLERANCE else "No" for _, c, _ in cases]
        stats = pair_stats(
            verdicts,
            [a for _, _, a in cases],
            [k.incident_id for k, _, _ in cases],
            rater_a=judge.name,
            rater_b="reference",
            level="verdict",
            reference=True,
            bootstrap=bootstrap,
        )
        assert stats.vs_reference is not None
        points.append(
            ThresholdPoint(
                threshold=t,
                n=stats.n,
                pass_rate=stats.yes_rate_a,
                agreement=stats.agreement,
                kappa=stats.kappa,
                tpr=stats.vs_reference.tpr,
                tnr=stats.vs_reference.tnr,
            )
        )
    return points


def _best(points: list[ThresholdPoint]) -> float | None:
    defined = [p for p in points if p.kappa.value is not None]
    if not defined:
        return None
    return max(defined, key=lambda p: (p.kappa.value, -p.threshold)).threshold


def calibrate(
    judge_results: Iterable[Source | RatingTable],
    human: Entry | Iterable[Entry],
    thresholds: Iterable[float] | None = None,
    *,
    B: int = DEFAULT_B,
    seed: int = 0,
    dimension_pass: float = 0.5,
) -> CalibrationReport:
    """How well each judge matches people, plus the verdict-threshold sweep for each judge."""
    humans = read_ratings(_as_list(human), dimension_pass=dimension_pass)
    judges = read_ratings(judge_results, dimension_pass=dimension_pass)
    people = [r.name for r in humans.raters if r.kind == "human"]
    if not people:
        raise ValueError("calibrate needs at least one human label file")
    table = RatingTable(dimension_pass=dimension_pass)
    table.extend(judges)
    table.extend(humans)
    check_labels_match(table)
    people = [r.name for r in table.raters if r.kind == "human"]
    reference = people[0]
    if len(people) >= 2:
        table.add(majority(table, people))
        reference = CONSENSUS
    references = [*people, CONSENSUS] if len(people) >= 2 else people
    bootstrap = ClusterBootstrap(table.incidents(), B=B, seed=seed)
    points = list(thresholds) if thresholds is not None else list(DEFAULT_THRESHOLDS)
    out = []
    for judge in (r for r in table.raters if r.kind == "judge"):
        vs_people = [
            p
            for level in LEVELS
            for ref in references
            for p in pairwise(table, level, [judge.name, ref], bootstrap=bootstrap)
        ]
        curve = sweep(judge, table.labels(reference, "verdict"), points, bootstrap)
        out.append(
            JudgeCalibration(
                judge=judge.name,
                source=judge.source,
                reference=reference,
                vs_people=vs_people,
                breakdown=_breakdown(table, judge.name, reference, bootstrap),
                sweep=curve,
                best_threshold=_best(curve),
            )
        )
    return CalibrationReport(
        settings=Settings(bootstrap_B=B, seed=seed, dimension_pass=dimension_pass),
        people=people,
        reference=reference,
        judges=out,
        human_ceiling=human_ceiling(table, LEVELS, bootstrap, people),
    )


def _breakdown(
    table: RatingTable, judge: str, reference: str, bootstrap: ClusterBootstrap
) -> list[UnitBreakdown]:
    raters = [judge, reference]
    dimension_of = table.dimension_map()
    out = []
    levels: tuple[tuple[Level, Literal["question", "dimension"]], ...] = (
        ("question", "question"),
        ("dimension", "dimension"),
    )
    for level, kind in levels:
        for unit in table.units(level):
            pairs = pairwise(
                table, level, raters, units=[unit], unit_label=unit, bootstrap=bootstrap
            )
            out.append(UnitBreakdown(unit=unit, kind=kind, pairwise=pairs))
    pooled: dict[str, list[str]] = {}
    for question in table.units("question"):
        if question in dimension_of:
            pooled.setdefault(dimension_of[question], []).append(question)
    for dimension, questions in pooled.items():
        pairs = pairwise(
            table, "question", raters, units=questions, unit_label=dimension, bootstrap=bootstrap
        )
        out.append(UnitBreakdown(unit=dimension, kind="dimension-pooled", pairwise=pairs))
    return out


def _as_list(human: Entry | Iterable[Entry]) -> list[Entry]:
    if isinstance(human, (str, os.PathLike, RatingTable, Mapping)) or _is_named(human):
        return [human]
    return list(human)


def _is_named(entry: object) -> TypeGuard[tuple[Source, str]]:
    return isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], str)
