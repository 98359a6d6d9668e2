"""The report's case details: each case's scores, its questions with their answers and
evidence (marked in the diagnosis where it was found), failed calls, resolution checks and raw
replies, and the incident they belong to."""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from markupsafe import Markup

from ..checklist.highlight import highlight
from ..checklist.items import SpilledSeq
from ..checklist.judgment import Judgment
from ..checklist.results import CallRecord, EvalResult
from ..checklist.scoring import CaseResult, IncidentSummary
from ..checklist.texts import CaseTexts, case_key
from .replies import Asked, CallReplies, ReplySource

T = TypeVar("T", Judgment, CallRecord)


class ByCase(Generic[T]):
    """`items` (judgments or calls) by case: each case's positions in them, 8 bytes an item,
    and its items read when asked, so that a result whose items are in a spill file
    (`judge.checklist.spill`) is never held whole in memory."""

    def __init__(self, items: Sequence[T]) -> None:
        self.items: Sequence[T] = items
        self.positions: dict[str, array[int]] = {}
        for n, item in enumerate(items):
            key = case_key(item.incident_id, item.trial)
            found = self.positions.get(key)
            if found is None:
                self.positions[key] = found = array("q")
            found.append(n)

    def get(self, key: str) -> Sequence[T]:
        """The case's items, in the order of `items` (a list; empty for a case with none)."""
        positions = self.positions.get(key)
        if positions is None:
            return []
        if isinstance(self.items, SpilledSeq):
            return list(self.items.subset(positions))
        return [self.items[n] for n in positions]


@dataclass
class QuestionRow:
    """One question of a case as the report shows it: the answer, evidence and whether the
    evidence was found in the diagnosis, or why it is unscored.
    """

    dimension_id: str
    question_id: str
    text: str | None
    answer: str | None
    confidence: str | None
    evidence: str | None
    evidence_found: bool | None
    unscored_reason: str | None
    judge: str
    prompt_hash: str = ""
    reply: str | None = None
    """The anchor of the raw replies of the call that answered it, when the store has them."""


@dataclass
class CaseView:
    """One case as the report shows it: scores, status, questions, failing ids, the diagnosis
    with evidence marked, failed calls and resolution checks.
    """

    anchor: str
    incident_id: str
    trial: str
    agent: str | None
    composite: float | None
    status: str
    dimensions: dict[str, float | None]
    questions: list[QuestionRow]
    failing: list[str]
    diagnosis: Markup | None
    n_marks: int
    call_errors: list[CallRecord]
    resolution: dict[str, Any] | None
    n_unscored: int
    replies: list[CallReplies] = field(default_factory=list)


@dataclass
class IncidentView:
    """One incident as the report shows it: its summary, ground truth and cases."""

    anchor: str
    summary: IncidentSummary
    ground_truth: str | None
    cases: list[CaseView]
    status: str
    href: str = ""
    """Where its cases are shown: `#anchor` on a single page, a case page's address else."""


@dataclass
class CaseIndex:
    """Each case's judgments and calls, by `case_key`: gathered once per report; `replies`
    finds the raw replies behind a call."""

    judgments: ByCase[Judgment]
    errors: dict[str, list[CallRecord]]
    resolution: dict[str, dict[str, Any]]
    replies: ReplySource | None = None
    members: ByCase[Judgment] = field(default_factory=lambda: ByCase[Judgment]([]))
    """Each case's panel members' or cascade stages' own answers, shown after the run's."""
    asked: dict[str, list[Asked]] = field(default_factory=dict)
    """Each case's calls, when the store is there to show their replies."""

    @classmethod
    def of(
        cls,
        result: EvalResult,
        resolution: dict[str, Any] | None,
        replies: ReplySource | None = None,
    ) -> CaseIndex:
        errors: dict[str, list[CallRecord]] = defaultdict(list)
        asked: dict[str, list[Asked]] = defaultdict(list)
        linked = replies is not None and replies.found
        for call in result.calls:
            key = case_key(call.incident_id, call.trial)
            if call.error:
                errors[key].append(call)
            if linked:
                asked[key].append(Asked(call.judge, call.prompt_hash, call.dimension_id))
        by_case = {
            case_key(c["incident_id"], str(c["trial"])): c
            for c in (resolution or {}).get("cases", [])
            if isinstance(c, dict) and "incident_id" in c
        }
        return cls(
            ByCase(result.judgments),
            errors,
            by_case,
            replies,
            members=ByCase(result.member_judgments),
            asked=asked,
        )

    def case_view(self, n: int, case: CaseResult, texts: CaseTexts) -> CaseView:
        """Case `n` of the result as the report shows it."""
        key = case_key(case.incident_id, case.trial)
        view = _case(
            f"case-{n}",
            case,
            self.judgments.get(key),
            self.members.get(key),
            texts,
            self.errors.get(key, []),
            self.resolution.get(key),
        )
        if self.replies is not None and key in self.asked:
            _link_replies(view, self.asked[key], self.replies)
        return view


def _link_replies(view: CaseView, calls: list[Asked], source: ReplySource) -> None:
    """Add the raw replies behind the case's calls, and link each answer to its call's: by
    judge and prompt (a panel's own answers link to its first member's call)."""
    anchors: dict[tuple[str, str], str] = {}
    for n, call in enumerate(calls):
        requests = source.requests(call)
        if not requests:
            continue
        anchor = f"{view.anchor}-reply-{n}"
        view.replies.append(CallReplies(anchor, call.dimension_id, call.judge, requests))
        anchors.setdefault((call.judge, call.prompt_hash), anchor)
        anchors.setdefault(("", call.prompt_hash), anchor)
    for row in view.questions:
        row.reply = anchors.get((row.judge, row.prompt_hash)) or anchors.get(("", row.prompt_hash))


def case_status(case: CaseResult) -> str:
    """The case's status: "pass", "fail", or "incomplete" when it has no verdict."""
    if not case.complete or case.passed is None:
        return "incomplete"
    return "pass" if case.passed else "fail"


def incident_status(case_statuses: set[str]) -> str:
    """pass / fail when every trial agrees, incomplete when none has a verdict, else mixed."""
    if len(case_statuses) == 1:
        return next(iter(case_statuses))
    return "incomplete" if not case_statuses else "mixed"


def incident_views(result: EvalResult, texts: CaseTexts, index: CaseIndex) -> list[IncidentView]:
    """Every incident with every case in full, for a single page."""
    cases: dict[str, list[CaseView]] = defaultdict(list)
    for n, case in enumerate(result.cases):
        cases[case.incident_id].append(index.case_view(n, case, texts))
    return [
        incident_view(n, summary, texts, cases.get(summary.incident_id, []))
        for n, summary in enumerate(result.incidents)
    ]


def incident_view(
    n: int,
    summary: IncidentSummary,
    texts: CaseTexts,
    cases: list[CaseView],
    statuses: set[str] | None = None,
    href: str | None = None,
) -> IncidentView:
    """Incident `n` of the result with `cases` (its status from `statuses` when given)."""
    return IncidentView(
        anchor=f"incident-{n}",
        summary=summary,
        ground_truth=texts.ground_truth.get(summary.incident_id),
        cases=cases,
        status=incident_status(statuses if statuses is not None else {c.status for c in cases}),
        href=href if href is not None else f"#incident-{n}",
    )


def _case(
    anchor: str,
    case: CaseResult,
    judgments: Sequence[Judgment],
    members: Sequence[Judgment],
    texts: CaseTexts,
    call_errors: list[CallRecord],
    resolution: dict[str, Any] | None,
) -> CaseView:
    diagnosis = texts.diagnosis(case.incident_id, case.trial)
    marked = None
    if diagnosis is not None:
        marked = highlight(
            diagnosis,
            [(j.question_id, j.evidence) for j in judgments if j.answer],
            {j.question_id: (j.answer or "").lower() for j in judgments},
        )
    rows = [
        QuestionRow(
            dimension_id=j.dimension_id,
            question_id=j.question_id,
            text=texts.questions.get(j.question_id),
            answer=j.answer,
            confidence=j.confidence,
            evidence=j.evidence,
            evidence_found=(
                marked.found.get(j.question_id) if marked is not None and j.answer else None
            ),
            unscored_reason=j.unscored_reason,
            judge=j.judge,
            prompt_hash=j.prompt_hash,
        )
        for j in [*judgments, *members]
    ]
    return CaseView(
        anchor=anchor,
        incident_id=case.incident_id,
        trial=case.trial,
        agent=case.agent,
        composite=case.composite,
        status=case_status(case),
        dimensions={d.dimension_id: d.score for d in case.dimensions},
        questions=rows,
        failing=[j.question_id for j in judgments if j.answer == "No"],
        diagnosis=marked.html if marked is not None else None,
        n_marks=marked.n_marks if marked is not None else 0,
        call_errors=call_errors,
        resolution=resolution,
        n_unscored=sum(j.answer is None for j in judgments),
    )
