"""The report's per-question view: for each rubric question, how often it was answered Yes, No
or left unscored, overall and (when two or more agents answered) by agent, with its text.

It shows at a glance which questions an agent fails (a question almost always No), and which a
judge cannot answer (a large unscored share), which the per-case tables hide across hundreds of
cases."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ..checklist.judgment import Judgment
from ..checklist.results import CaseResult
from ..checklist.texts import CaseTexts

ALL_AGENTS = "all agents"
MAX_PLOTTED_AGENTS = 6
"""Agents drawn in the chart, one bar each per question; the table lists every agent."""


@dataclass(frozen=True)
class QuestionShare:
    """One question's answers over the cases of one agent (or of all)."""

    question_id: str
    text: str
    agent: str
    yes: int
    no: int
    unscored: int

    @property
    def n(self) -> int:
        return self.yes + self.no + self.unscored

    def share(self, count: int) -> float:
        return count / self.n if self.n else 0.0


def question_shares(
    judgments: Iterable[Judgment], cases: Iterable[CaseResult], texts: CaseTexts
) -> list[QuestionShare]:
    """Every question's Yes/No/unscored counts over all cases, then per agent when two or more
    agents answered; questions in the order first answered (the rubric's), agents by name."""
    agent_of = {(c.incident_id, c.trial): c.agent for c in cases}
    counts: dict[tuple[str, str], Counter[str]] = {}
    order: dict[str, None] = {}
    for j in judgments:
        order.setdefault(j.question_id)
        kind = "unscored" if j.answer is None else j.answer.lower()
        agent = agent_of.get((j.incident_id, j.trial)) or "unnamed agent"
        for who in (ALL_AGENTS, agent):
            counts.setdefault((j.question_id, who), Counter())[kind] += 1
    agents = sorted({who for _, who in counts} - {ALL_AGENTS})
    shown = [ALL_AGENTS, *agents] if len(agents) > 1 else [ALL_AGENTS]
    return [
        QuestionShare(
            question_id=qid,
            text=texts.questions.get(qid, ""),
            agent=who,
            yes=counts[qid, who]["yes"],
            no=counts[qid, who]["no"],
            unscored=counts[qid, who]["unscored"],
        )
        for qid in order
        for who in shown
        if (qid, who) in counts
    ]


def plotted(shares: list[QuestionShare]) -> list[QuestionShare]:
    """The rows the chart draws: all agents together, and each agent while there are few."""
    agents = {s.agent for s in shares} - {ALL_AGENTS}
    if len(agents) > MAX_PLOTTED_AGENTS:
        return [s for s in shares if s.agent == ALL_AGENTS]
    return shares
