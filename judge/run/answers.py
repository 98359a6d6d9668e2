"""A verdict as the result keeps it: judgments and call records, written to the run's sink as
soon as the verdict is in, with only their item numbers and the dimensions' scores held."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from ..checklist.judgment import (
    DimensionVerdict,
    JudgeIdentity,
    Judgment,
    QuestionAnswer,
    Usage,
    abstained,
    compact,
    trusted,
)
from ..checklist.results import CallRecord
from ..checklist.scoring import DimensionScore, dimension_score
from ..judges.panel import PANEL_TIE
from .cache import NOT_JUDGED
from .sink import Sink
from .units import EMPTY_DIAGNOSIS, Unit, per_dimension


@dataclass(slots=True)
class Answered:
    """What the result keeps of a unit's verdict, made as soon as the verdict is in: its
    judgments go to the run's sink (a spill file for a large run) and only their item
    numbers and the dimensions' counts stay here; the verdicts themselves (3-4 KB each with
    their answers) would otherwise all be held until the run ends."""

    judgments: range
    members: range
    scores: list[DimensionScore]
    failed: int
    empty: int | None
    """The call record of an empty diagnosis, which no judge was asked."""


def answered(unit: Unit, verdict: DimensionVerdict, judge_name: str, keep: Sink) -> Answered:
    parts = per_dimension(unit, verdict, judge_name)
    start = keep.count
    scores = []
    for part, part_verdict in parts:
        judgments = _judgments(part, part_verdict, judge_name)
        scores.append(compact(dimension_score(part.dimension.id, judgments)))
        _add(keep, judgments)
    judged = range(start, keep.count)
    members = _add(keep, [j for part, v in parts for j in _member_judgments(part, v)])
    empty = None
    if verdict.error == EMPTY_DIAGNOSIS:
        empty = keep.add(call_record(unit, verdict, judge_name))
    return Answered(
        judgments=judged,
        members=members,
        scores=scores,
        failed=sum(_failed_questions(v) for _, v in parts),
        empty=empty,
    )


def _add(keep: Sink, models: list[Judgment]) -> range:
    """Keep `models`, one after another (nothing else is kept meanwhile: this runs on the
    event loop without awaiting); their item numbers."""
    start = keep.count
    for model in models:
        keep.add(model)
    return range(start, keep.count)


def _judgments(unit: Unit, verdict: DimensionVerdict, judge_name: str) -> list[Judgment]:
    return [_judgment(unit, a, judge_name, _identity(verdict, a)) for a in verdict.answers]


def _identity(verdict: DimensionVerdict, answer: QuestionAnswer) -> JudgeIdentity | None:
    """Which model gave `answer`: a cascade's kept answer is its stage's."""
    stage = (verdict.members or {}).get(answer.stage) if answer.stage else None
    return stage.identity if stage is not None else verdict.identity


def _member_judgments(unit: Unit, verdict: DimensionVerdict) -> list[Judgment]:
    """A panel's members' or a cascade's stages' own answers, under their names (they do not
    enter the scores)."""
    return [
        _judgment(unit, a, name, member.identity)
        for name, member in (verdict.members or {}).items()
        for a in member.answers
    ]


def _judgment(
    unit: Unit, answer: QuestionAnswer, judge_name: str, identity: JudgeIdentity | None = None
) -> Judgment:
    """Made of validated values only (the answer's, the unit's): not validated again."""
    return trusted(
        Judgment,
        incident_id=unit.submission.incident_id,
        trial=unit.submission.trial,
        dimension_id=unit.dimension.id,
        question_id=sys.intern(answer.question_id),  # one copy per id, not per reply
        answer=answer.answer,
        evidence=answer.evidence,
        confidence=answer.confidence,
        confidence_score=answer.confidence_score,
        unscored_reason=answer.unscored_reason,
        judge=judge_name,
        prompt_hash=unit.hash,
        identity=None if identity is None else compact(identity),
        stage=answer.stage,
        abstained=abstained(answer),
    )


def call_record(
    unit: Unit, verdict: DimensionVerdict, judge_name: str, miss: str | None = None
) -> CallRecord:
    """Made of the verdict's and the unit's validated values: not validated again."""
    return trusted(
        CallRecord,
        incident_id=unit.submission.incident_id,
        trial=unit.submission.trial,
        dimension_id=unit.dimension.id,
        judge=judge_name,
        prompt_hash=unit.hash,
        attempts=verdict.attempts,
        error=verdict.error,
        error_kind=verdict.error_kind,
        usage=_settled(verdict.usage),
        requests=verdict.requests,
        attempt_errors=dict(verdict.attempt_errors),
        cached=verdict.cached,
        cache_miss=miss,
        batch_id=verdict.batch_id,
    )


def _settled(usage: Usage | None) -> Usage | None:
    """`usage` with every field set, so that `compact` can share its fields-set: a judge fills
    usage field by field, which left each of 30,000 call records its own set (216 bytes)."""
    if usage is None:
        return None
    if usage.model_fields_set == set(Usage.model_fields):
        return compact(usage)
    return trusted(Usage, **dict(usage))


def was_judged(verdict: DimensionVerdict) -> bool:
    if verdict.error_kind == NOT_JUDGED:
        return False
    return all(m.error_kind != NOT_JUDGED for m in (verdict.members or {}).values())


def _failed_questions(verdict: DimensionVerdict) -> int:
    """Questions unscored because their call failed: a provider error, an unusable reply or a
    judge's error (not a panel's tie, not a call the run never made)."""
    if not verdict.error_kind or verdict.error_kind == NOT_JUDGED:
        return 0
    return sum(
        1
        for answer in verdict.answers
        if answer.answer is None and not (answer.unscored_reason or "").startswith(PANEL_TIE)
    )
