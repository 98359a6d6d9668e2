"""The `panel` judge: several judges answer, the majority decides.

A question's answer is the majority of the members that scored it. A tie is unscored (or Yes /
No with `tie="yes"|"no"`); a question no member scored is unscored with their reasons. Its
confidence score combines the members' (`judge.judges.confidence.panel_score`: the mean of each
member's probability of the answer, the share backing it when they give none). Every
member's own answers are kept (`DimensionVerdict.members`) and written to the result file
under the member's name, so `judge agreement` can measure the panel's agreement.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any, Literal

from ..checklist.judgment import Answer, Confidence, DimensionVerdict, QuestionAnswer, Usage
from .base import Judge, JudgeTask, ask, check_judge
from .confidence import panel_score

TieRule = Literal["unscored", "yes", "no"]
PANEL_TIE = "panel tie"


class PanelJudge:
    """Several judges answer each task at once; each question's answer is their majority."""

    def __init__(self, members: list[Judge], tie: TieRule = "unscored", name: str = "panel"):
        for index, member in enumerate(members):
            check_judge(member, f"panel member {index + 1}")
        names = [m.name for m in members]
        if len(set(names)) != len(names):
            raise ValueError(f"panel members need distinct names, got {names}")
        self.members = members
        self.tie = tie
        self.name = name

    def judges(self) -> list[Judge]:
        return list(self.members)

    def with_judges(self, judges: list[Judge]) -> PanelJudge:
        return PanelJudge(judges, self.tie, self.name)

    def describe(self) -> dict[str, Any]:
        """The tie rule and each member's own description."""
        return {
            "name": "panel",
            "model": None,
            "params": {"tie": self.tie},
            "members": [m.describe() | {"member": m.name} for m in self.members],
        }

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        """Every member's verdict at once, then each question's majority."""
        verdicts = await asyncio.gather(*(ask(m, task) for m in self.members))
        members = {m.name: v for m, v in zip(self.members, verdicts, strict=True)}
        answers = [
            self._vote(qid, [v.answer_for(qid) for v in verdicts]) for qid in task.question_ids
        ]
        errors = [f"{name}: {v.error}" for name, v in members.items() if v.error]
        kinds = [v.error_kind for v in verdicts if v.error_kind]
        return DimensionVerdict(
            answers=answers,
            attempts=sum(v.attempts for v in verdicts),
            error="; ".join(errors) or None,
            error_kind=kinds[0] if kinds else None,
            usage=total_usage(verdicts),
            members=members,
        )

    def _vote(self, qid: str, answers: list[QuestionAnswer | None]) -> QuestionAnswer:
        scored = [a for a in answers if a is not None and a.answer is not None]
        if not scored:
            reasons = sorted({a.unscored_reason for a in answers if a and a.unscored_reason})
            return QuestionAnswer(
                question_id=qid, unscored_reason="no panel member scored it: " + "; ".join(reasons)
            )
        counts = Counter(a.answer for a in scored)
        ranked = counts.most_common()
        if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
            if self.tie == "unscored":
                return QuestionAnswer(
                    question_id=qid, unscored_reason=f"{PANEL_TIE} ({dict(counts)})"
                )
            winner: Answer | None = "Yes" if self.tie == "yes" else "No"
        else:
            winner = ranked[0][0]
        backing = [a for a in scored if a.answer == winner]
        confidence: Confidence = "High" if len(backing) == len(scored) else "Medium"
        return QuestionAnswer(
            question_id=qid,
            answer=winner,
            evidence=next((a.evidence for a in backing if a.evidence), ""),
            confidence=confidence,
            confidence_score=panel_score(winner, scored) if winner else None,
        )


def total_usage(verdicts: list[DimensionVerdict]) -> Usage | None:
    """The tokens and cost of several verdicts together (cost None when any is unknown)."""
    usages = [v.usage for v in verdicts if v.usage is not None]
    if not usages:
        return None
    costs = [u.cost_usd for u in usages]
    return Usage(
        prompt_tokens=sum(u.prompt_tokens or 0 for u in usages),
        completion_tokens=sum(u.completion_tokens or 0 for u in usages),
        cost_usd=None if None in costs else sum(c for c in costs if c is not None),
    )
