"""The cases a person labels: texts, the rubric's questions and the judge's answers, per case.

Built once from a result file, the specs and the submissions. The judge's answers ride along so
the server can reveal them when the blind person is done; they never reach the page earlier.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from agreement.ratings import VERDICT
from agreement.readers import VERDICT_TEXT

from ..checklist.highlight import find_quote
from ..checklist.results import EvalResult
from ..checklist.rubric import Rubric
from ..checklist.texts import CaseTexts

VERDICT_HINT = "Your overall call, whatever the questions above say."


class LabelQuestion(BaseModel):
    """A question put to the labeller, or the final verdict (empty `dimension_id`)."""

    id: str
    dimension_id: str = Field(description="Empty for the final verdict.")
    dimension_name: str = ""
    text: str
    hint: str | None = None


class JudgeAnswer(BaseModel):
    """The judge's answer to one question as the labelling page shows it, with where its
    evidence quote sits in the diagnosis, or why it is unscored.
    """

    answer: str | None = Field(description="Yes, No, or None when the judge left it unscored.")
    evidence: str | None = None
    span: tuple[int, int] | None = Field(
        None, description="Where the evidence quote sits in the diagnosis (character offsets)."
    )
    unscored_reason: str | None = None
    confidence: str | float | None = Field(
        None, description="The judge's stated confidence, for `--order informative`."
    )


class LabelCase(BaseModel):
    """One case to label: ground truth, diagnosis, the questions and the judge's answers (by
    question id, `verdict` for pass/fail), and on how many the judges split.
    """

    incident_id: str
    trial: str
    agent: str | None = None
    ground_truth: str = ""
    diagnosis: str = ""
    questions: list[LabelQuestion]
    judge: dict[str, JudgeAnswer] = Field(description="By question id; `verdict` for pass/fail.")
    composite: float | None = None
    judges_split: int = Field(
        0,
        description="Questions (and the verdict) a panel's members, or other judges, answered apart.",
    )
    split_questions: list[str] = Field(
        default_factory=list, description="The ids of the questions counted in judges_split."
    )

    @property
    def key(self) -> str:
        return f"{self.incident_id}/{self.trial}"

    @property
    def verdict(self) -> str:
        answer = self.judge.get(VERDICT)
        return "incomplete" if answer is None or answer.answer is None else answer.answer


def build_cases(
    result: EvalResult, rubric: Rubric, texts: CaseTexts, others: Sequence[EvalResult] = ()
) -> list[LabelCase]:
    """One `LabelCase` per case of the result, in the result's order.

    `others` are other judges' results on the same cases: where they answer apart from this
    result's judge, the case counts as split (for `--order informative`, `--disagreements`).
    """
    answers: dict[tuple[str, str], dict[str, Any]] = defaultdict(dict)
    members: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for j in result.judgments:
        answers[(j.incident_id, j.trial)][j.question_id] = j
    for j in result.member_judgments:
        if j.answer is not None:
            members[(j.incident_id, j.trial)][j.question_id].add(j.answer)
    other = [_own_answers(o) for o in others]
    cases = []
    for case in result.cases:
        diagnosis = texts.diagnosis(case.incident_id, case.trial) or ""
        dims = {d.dimension_id for d in case.dimensions}
        judged = answers[(case.incident_id, case.trial)]
        judge = {
            qid: JudgeAnswer(
                answer=j.answer,
                evidence=j.evidence,
                span=find_quote(diagnosis, j.evidence),
                unscored_reason=j.unscored_reason,
                confidence=j.confidence,
            )
            for qid, j in judged.items()
        }
        verdict = None if case.passed is None else ("Yes" if case.passed else "No")
        judge[VERDICT] = JudgeAnswer(answer=verdict)
        split = [q for q, seen in members[(case.incident_id, case.trial)].items() if len(seen) > 1]
        for theirs in other:
            given = theirs.get((case.incident_id, case.trial), {})
            split += [
                q
                for q, a in given.items()
                if a is not None and q in judge and judge[q].answer not in (None, a)
            ]
        cases.append(
            LabelCase(
                incident_id=case.incident_id,
                trial=case.trial,
                agent=case.agent,
                ground_truth=texts.ground_truth.get(case.incident_id, ""),
                diagnosis=diagnosis,
                questions=_questions(rubric, dims, set(judged)),
                judge=judge,
                composite=case.composite,
                judges_split=len(split),
                split_questions=sorted(set(split)),
            )
        )
    return cases


def _own_answers(result: EvalResult) -> dict[tuple[str, str], dict[str, str | None]]:
    """A result's own judge's answers by (incident, trial), then question; verdicts included."""
    found: dict[tuple[str, str], dict[str, str | None]] = defaultdict(dict)
    for j in result.judgments:
        found[(j.incident_id, j.trial)][j.question_id] = j.answer
    for case in result.cases:
        verdict = None if case.passed is None else ("Yes" if case.passed else "No")
        found[(case.incident_id, case.trial)][VERDICT] = verdict
    return found


def _questions(rubric: Rubric, dims: set[str], judged: set[str]) -> list[LabelQuestion]:
    """The rubric's questions of the case's dimensions (those judged, if any were), then the verdict."""
    questions = [
        LabelQuestion(
            id=q.id,
            dimension_id=d.id,
            dimension_name=d.name,
            text=q.text,
            hint=q.evaluator_hint,
        )
        for d in rubric.dimensions
        if d.id in dims
        for q in d.questions
        if not judged or q.id in judged
    ]
    questions.append(
        LabelQuestion(id=VERDICT, dimension_id="", text=VERDICT_TEXT, hint=VERDICT_HINT)
    )
    return questions
