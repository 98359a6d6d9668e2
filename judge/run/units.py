"""What a run asks: one unit per (submission, dimension), or per submission when one call asks
every dimension's questions (`judge.run.granularity`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ground_truth.models import IncidentSpec, Submission

from ..checklist.judgment import DimensionVerdict, QuestionAnswer
from ..checklist.prompts import Prompt, PromptRenderer
from ..checklist.rubric import Dimension, Rubric, parts_of, whole_submission
from ..judges.base import JudgeTask
from .deferred import DeferredTask
from .granularity import DEFAULT, Granularity, split

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
