"""`--granularity dimension|submission`: how many of a submission's questions one call asks.

`submission` (the default) asks every question of the selected dimensions in one call with one
response schema: a third of the calls (with three dimensions) and about half the prompt
tokens, as SREGym's validated judge and ITBench's evaluator ask. `dimension` asks one call per
(submission, dimension): each dimension gets the model's whole attention, at three times the
calls. Why the default is `submission`: docs/real-model.md, "One call per submission or per dimension".
The run then treats the whole submission as one unit whose
"dimension" is `judge.checklist.rubric.whole_submission(...)` (id `*`, the questions of every
part, the parts kept in `parts`), and `split` gives each real dimension its own verdict again, through the same
validation every verdict passes (`judge.run.validation`).
"""

from __future__ import annotations

from typing import Literal

from ..checklist.judgment import DimensionVerdict
from ..checklist.rubric import Dimension
from .validation import JUDGE_OMITTED, checked_verdict

Granularity = Literal["dimension", "submission"]
GRANULARITIES: tuple[Granularity, ...] = ("dimension", "submission")
DEFAULT: Granularity = "submission"


def check(granularity: str) -> Granularity:
    """`granularity` when it is one of `GRANULARITIES`, else a `ValueError` naming them."""
    for known in GRANULARITIES:
        if granularity == known:
            return known
    raise ValueError(f"granularity {granularity!r}: expected one of {', '.join(GRANULARITIES)}")


def split(verdict: DimensionVerdict, parts: list[Dimension], judge: str) -> list[DimensionVerdict]:
    """One verdict per dimension of a whole-submission verdict (already checked against all of
    its question ids). Each part keeps its own answers, names only its own omitted questions,
    and carries the call's error only when one of its questions is unscored; the call's usage
    and requests stay with the call (`calls[]`), not with its parts."""
    return [_part(verdict, dimension, judge) for dimension in parts]


def _part(verdict: DimensionVerdict, dimension: Dimension, judge: str) -> DimensionVerdict:
    ids = [q.id for q in dimension.questions]
    answers = [a for a in verdict.answers if a.question_id in set(ids)]
    unscored = [a for a in answers if a.answer is None]
    error, kind = (verdict.error, verdict.error_kind) if unscored else (None, None)
    if kind == JUDGE_OMITTED:
        omitted = [a.question_id for a in unscored if (a.unscored_reason or "").startswith(kind)]
        error = f"{judge} did not answer {', '.join(omitted)}" if omitted else verdict.error
    members = verdict.members and {
        name: _part(member, dimension, name) for name, member in verdict.members.items()
    }
    part = DimensionVerdict(
        answers=answers,
        attempts=verdict.attempts,
        error=error,
        error_kind=kind,
        cached=verdict.cached,
        members=members,
        identity=verdict.identity,
    )
    return checked_verdict(part, ids, judge)
