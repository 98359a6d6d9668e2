"""What a run asks: one unit per (submission, dimension), or per submission when one call asks
every dimension's questions (`judge.run.granularity`)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ground_truth.models import IncidentSpec, Submission

from ..checklist.judgment import DimensionVerdict, QuestionAnswer, compact
from ..checklist.prompts import Prompt, PromptRenderer
from ..checklist.rubric import Dimension, Rubric, parts_of, whole_submission
from ..checklist.scoring import DimensionScore, Submitted, counted_score
from ..judges.base import JudgeTask
from .deferred import DeferredTask
from .granularity import DEFAULT, Granularity, split

if TYPE_CHECKING:
    from .answers import Answered

EMPTY_DIAGNOSIS = "the diagnosis is empty"


@dataclass(slots=True)
class Unit:
    """One (submission, dimension). The prompt is rendered when a judge reads it and not kept
    (only its hash is): 10,000 submissions' prompts would otherwise sit in memory all run
    long. `kept` is a prompt planning rendered for a call the store cannot answer, held until
    that call takes it, so that the prompt is rendered once."""

    spec: IncidentSpec
    submission: Submission
    dimension: Dimension
    renderer: PromptRenderer
    prompt_hash: str | None = None
    kept: Prompt | None = field(default=None, repr=False)

    @property
    def prompt(self) -> Prompt:
        prompt, self.kept = self.kept, None
        if prompt is None:
            prompt = self.renderer.render(self.spec, self.submission, self.dimension)
        self.prompt_hash = prompt.hash
        return prompt

    @property
    def hash(self) -> str:
        """The prompt's hash; empty when no judge read the prompt (the rules judge)."""
        return self.prompt_hash or ""

    @property
    def asked(self) -> bool:
        """Whether a judge is asked at all (an empty diagnosis is not)."""
        return bool(self.submission.diagnosis.strip())

    def key(self) -> tuple[str, str, str]:
        """(incident id, trial, dimension id): what a shard is cut by."""
        return self.submission.incident_id, self.submission.trial, self.dimension.id

    def inputs_key(self) -> str:
        """What the prompt is rendered from, hashed (`PromptRenderer.inputs_key`)."""
        return self.renderer.inputs_key(self.spec, self.submission, self.dimension)

    def task(self) -> JudgeTask:
        return DeferredTask(
            self.spec,
            self.submission,
            self.dimension,
            lambda: self.prompt,
            self.prompt_hash,
            self.inputs_key,
        )


@dataclass(slots=True)
class Done:
    """What the result needs of a unit once its answers are kept (`Run`): which case it is
    part of, and its answers' item numbers in the run's sink and counts. The unit itself (its
    submission, diagnosis and all) is let go of: 100,000 of them would be held all run long.
    Its judgments are the `n_judgments` items from `first`, its members' the `n_members` after
    them; `counts` are each dimension's (scored, unscored, Yes) in turn, for the unit's
    dimension or its parts (`parts_of`), one tuple shared by every unit with the same counts;
    `empty` is the item of an empty diagnosis' call record, or -1. About 250 bytes a unit."""

    incident_id: str
    trial: str
    agent: str | None
    format: str | None
    diagnosis_chars: int
    dimension: Dimension
    first: int
    n_judgments: int
    n_members: int
    counts: tuple[int, ...]
    failed: int
    empty: int

    def key(self) -> tuple[str, str, str]:
        return self.incident_id, self.trial, self.dimension.id

    @property
    def judgments(self) -> range:
        return range(self.first, self.first + self.n_judgments)

    @property
    def members(self) -> range:
        start = self.first + self.n_judgments
        return range(start, start + self.n_members)

    @property
    def submitted(self) -> Submitted:
        return Submitted(self.format, self.diagnosis_chars)

    def scores(self) -> list[DimensionScore]:
        """The dimensions' scores, as `dimension_score` counted them."""
        dimensions = parts_of(self.dimension) or [self.dimension]
        c = self.counts
        return [
            compact(counted_score(d.id, c[3 * n], c[3 * n + 1], c[3 * n + 2]))
            for n, d in enumerate(dimensions)
        ]


_COUNTS: dict[tuple[int, ...], tuple[int, ...]] = {}
"""One copy of each `Done.counts` seen: small numbers, few distinct tuples."""


def done(unit: Unit, answers: Answered) -> Done:
    """What is kept of `unit` once its `answers` are (`Done`)."""
    dimensions = parts_of(unit.dimension) or [unit.dimension]
    scores = answers.scores
    assert [s.dimension_id for s in scores] == [d.id for d in dimensions]
    assert answers.members.start == answers.judgments.stop  # kept one after the other
    counts = tuple(n for s in scores for n in (s.n_scored, s.n_unscored, s.n_yes))
    sub = unit.submission
    return Done(
        incident_id=sys.intern(sub.incident_id),
        trial=sub.trial,
        agent=sys.intern(sub.agent) if sub.agent else sub.agent,
        format=sub.source.get("format"),
        diagnosis_chars=len(sub.diagnosis),
        dimension=unit.dimension,
        first=answers.judgments.start,
        n_judgments=len(answers.judgments),
        n_members=len(answers.members),
        counts=_COUNTS.setdefault(counts, counts),
        failed=answers.failed,
        empty=-1 if answers.empty is None else answers.empty,
    )


def units(
    pairs: list[tuple[IncidentSpec, Submission]],
    rubric: Rubric,
    renderer: PromptRenderer,
    granularity: Granularity = DEFAULT,
) -> list[Unit]:
    dimensions = rubric.dimensions
    renderer.check_granularity(granularity)
    if granularity == "submission":
        dimensions = [whole_submission(rubric.dimensions)]
    return [Unit(spec, sub, dim, renderer) for spec, sub in pairs for dim in dimensions]


def per_dimension(
    unit: Unit, verdict: DimensionVerdict, judge_name: str
) -> list[tuple[Unit, DimensionVerdict]]:
    """A whole-submission unit's verdict as one verdict per dimension (each validated again);
    a dimension's unit as it is."""
    parts = parts_of(unit.dimension)
    if parts is None:
        return [(unit, verdict)]
    prompt_hash = unit.hash
    return [
        (Unit(unit.spec, unit.submission, part, unit.renderer, prompt_hash), part_verdict)
        for part, part_verdict in zip(parts, split(verdict, parts, judge_name), strict=True)
    ]


def empty_verdict(unit: Unit) -> DimensionVerdict:
    """An empty diagnosis answers No to every question, without asking a judge."""
    answers = [
        QuestionAnswer(
            question_id=q.id, answer="No", evidence="", confidence="High", confidence_score=1.0
        )
        for q in unit.dimension.questions
    ]
    return DimensionVerdict(answers=answers, attempts=0, error=EMPTY_DIAGNOSIS)


def not_judged(unit: Unit, reason: str) -> DimensionVerdict:
    answers = [
        QuestionAnswer(question_id=q.id, unscored_reason=f"not judged: {reason}")
        for q in unit.dimension.questions
    ]
    return DimensionVerdict(answers=answers, attempts=0)
