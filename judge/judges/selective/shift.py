"""Before a cascade promises agreement on a run: does the run look like its calibration set?

The guarantee holds for cases drawn like the labelled ones it was calibrated on. A calibration
file keeps a profile of those cases (`Profile`), made of what a run has without labels: per
case its incident, agent, benchmark format and diagnosis length, and the answer and raw
confidence of the first judge the cascade asks (it answers every case) per question. After a
run, `check_run` compares the run's cases with the profile (`agreement.shift.shift_test`: a
permutation test per feature, incidents permuted, adjusted for the many features; a benchmark
or agent the calibration never saw is a shift by itself). When they differ the run's answers
stay, and the guarantee is not established for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, Field

from agreement.shift import (
    DEFAULT_LEVEL,
    DEFAULT_PERMUTATIONS,
    Sample,
    ShiftTest,
    as_sample,
    shift_test,
)

from ...checklist.judgment import Answer, QuestionAnswer
from ...checklist.results import EvalResult
from ...checklist.scoring import CaseResult
from ..confidence import stated_score

LENGTH = "diagnosis length"
CATEGORIES = ("format", "agent")


class CaseProfile(BaseModel):
    """One case as the shift check sees it: no label, no text."""

    incident_id: str
    agent: str | None = None
    format: str | None = None
    diagnosis_chars: int | None = None
    answers: dict[str, Answer | None] = Field(
        default_factory=dict, description="The profiled judge's answer per question."
    )
    confidence: dict[str, float | None] = Field(
        default_factory=dict, description="Its raw confidence per question."
    )


class Profile(BaseModel):
    """The calibration cases as the shift check compares a run with them."""

    judge: str = Field(description="Whose answers are profiled: the first judge a run asks.")
    questions: list[str]
    level: float = Field(
        DEFAULT_LEVEL, description="The shift check's chance of a false alarm on a like run."
    )
    permutations: int = DEFAULT_PERMUTATIONS
    cases: list[CaseProfile]


def profile_cases(
    cases: Iterable[CaseResult],
    answers: Mapping[tuple[str, str], Mapping[str, QuestionAnswer]],
) -> list[CaseProfile]:
    """Each case's profile from its result entry and one judge's answers to it."""
    out = []
    for case in cases:
        given = answers.get((case.incident_id, case.trial), {})
        out.append(
            CaseProfile(
                incident_id=case.incident_id,
                agent=case.agent,
                format=case.format,
                diagnosis_chars=case.diagnosis_chars,
                answers={q: a.answer for q, a in given.items()},
                confidence={q: stated_score(a) for q, a in given.items()},
            )
        )
    return out


def run_answers(result: EvalResult, judge: str) -> dict[tuple[str, str], dict[str, QuestionAnswer]]:
    """`judge`'s own answers in a result, by case: a member's or stage's, or the result's own."""
    own = (result.config.get("judge") or {}).get("label")
    source = result.judgments if judge == own else result.member_judgments
    found: dict[tuple[str, str], dict[str, QuestionAnswer]] = {}
    for j in source:
        if j.judge == judge:
            found.setdefault((j.incident_id, j.trial), {})[j.question_id] = QuestionAnswer(
                question_id=j.question_id,
                answer=j.answer,
                confidence=j.confidence,
                confidence_score=j.confidence_score,
                unscored_reason=j.unscored_reason,
            )
    return found


def check_run(profile: Profile, result: EvalResult, seed: int = 0) -> ShiftTest:
    """The run's cases (those its profiled judge answered) against the calibration profile."""
    answers = run_answers(result, profile.judge)
    cases = [c for c in result.cases if (c.incident_id, c.trial) in answers]
    return compare(profile, profile_cases(cases or result.cases, answers), seed)


def compare(profile: Profile, run: list[CaseProfile], seed: int = 0) -> ShiftTest:
    """`run`'s cases against the profile's, feature by feature."""
    return shift_test(
        _sample(profile.cases, profile.questions),
        _sample(run, profile.questions),
        level=profile.level,
        permutations=profile.permutations,
        seed=seed,
    )


def _sample(cases: list[CaseProfile], questions: list[str]) -> Sample:
    numbers: dict[str, list[float | None]] = {
        LENGTH: [None if c.diagnosis_chars is None else float(c.diagnosis_chars) for c in cases]
    }
    for q in questions:
        numbers[f"{q} confidence"] = [c.confidence.get(q) for c in cases]
        numbers[f"{q} Yes"] = [_yes(c.answers.get(q)) for c in cases]
    categories = {
        "format": [c.format for c in cases],
        "agent": [c.agent for c in cases],
    }
    return as_sample([c.incident_id for c in cases], numbers, categories)


def _yes(answer: Literal["Yes", "No"] | None) -> float | None:
    return None if answer is None else float(answer == "Yes")
