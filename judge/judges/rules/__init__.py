"""The offline `rules` judge: deterministic answers from the ground-truth text and the diagnosis.

The truth is parsed once per spec (`truth.py`: origin, namespaces, mechanism, values, other
components, impact; what the rules derive from it alone is kept with it, `Truth.memo`), the
diagnosis once per submission (`diagnosis.py`: the text cut into role-tagged segments by
`segments.py` with the cues of `cues.py`, its components found by `mentions.py` and who is
blamed settled by `blame.py`, into the `parsed.py` model), and each
question is a small named rule over both (`questions.py` names them; `components.py`,
`mechanism.py` and `impact.py` hold them, over what `case.py` shares), which answers with what
it rests on (`basis.py`). The judge reads the diagnosis as text to match, so instructions inside
it change nothing.
"""

from __future__ import annotations

from typing import Any

from ground_truth.models import IncidentSpec

from ...checklist.judgment import DimensionVerdict, QuestionAnswer
from ..base import JudgeTask
from .basis import Basis, Ruling
from .confidence import Shape, with_confidence
from .questions import RULES, Case, bind, binding_warnings, rule_for_text
from .size import Excerpt, SizePolicy
from .truth import Truth, parse_truth

CASE_CACHE_SIZE = 256

__all__ = [
    "RULES",
    "Basis",
    "Case",
    "Excerpt",
    "RulesJudge",
    "Ruling",
    "SizePolicy",
    "bind",
    "binding_warnings",
    "rule_for_text",
]


class RulesJudge:
    """Deterministic, offline; the default when no model is configured.

    `size_policy` says what it reads of a huge diagnosis (default: the first and last 512 Ki
    characters of one longer than 1 Mi, see `SizePolicy`); an answer on a cut diagnosis says so
    at the end of its evidence.
    """

    def __init__(self, name: str = "rules", size_policy: SizePolicy | None = None):
        self.name = name
        self.size_policy = size_policy or SizePolicy()
        self._cases: dict[tuple[int, str], tuple[IncidentSpec, Case]] = {}
        self._truths: dict[int, tuple[IncidentSpec, Truth]] = {}

    def _truth(self, spec: IncidentSpec) -> Truth:
        cached = self._truths.get(id(spec))
        if cached is not None and cached[0] is spec:
            return cached[1]
        if len(self._truths) >= CASE_CACHE_SIZE:
            self._truths.pop(next(iter(self._truths)))
        truth = parse_truth(spec)
        self._truths[id(spec)] = (spec, truth)
        return truth

    def _case(self, task: JudgeTask) -> Case:
        """One `Case` per submission, shared by its dimensions."""
        key = (id(task.spec), task.submission.diagnosis)
        cached = self._cases.get(key)
        if cached is not None and cached[0] is task.spec:
            return cached[1]
        if len(self._cases) >= CASE_CACHE_SIZE:
            self._cases.pop(next(iter(self._cases)))
        case = Case.build(
            task.spec, task.submission.diagnosis, self._truth(task.spec), self.size_policy
        )
        self._cases[key] = (task.spec, case)
        return case

    def describe(self) -> dict[str, Any]:
        return {
            "name": "rules",
            "model": None,
            "params": {"rules": sorted(RULES), "size_policy": self.size_policy.model_dump()},
        }

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        return self.answer(task)

    def answer(self, task: JudgeTask) -> DimensionVerdict:
        case = self._case(task)
        rules = [bind(q.rule, q.text) for q in task.dimension.questions]
        rulings = list(zip(self.rulings(task), rules, strict=True))
        shape = Shape.of(case)  # after every ruling, as each answer's would be
        return DimensionVerdict(
            answers=[with_confidence(r, rule, case, shape) for r, rule in rulings]
        )

    def rulings(self, task: JudgeTask) -> list[Ruling]:
        """Each question's answer with what it rests on (`Basis`), in the dimension's order."""
        case = self._case(task)
        rulings = []
        for question in task.dimension.questions:
            rule = RULES.get(bind(question.rule, question.text) or "")
            if rule is None:
                reason = f"the rules judge has no rule for {question.id}"
                rulings.append(
                    Ruling(QuestionAnswer(question_id=question.id, unscored_reason=reason))
                )
            else:
                rulings.append(_noting_the_cut(rule(question.id, case), case))
        return rulings


def _noting_the_cut(ruling: Ruling, case: Case) -> Ruling:
    """An answer on a diagnosis the size policy cut says so, after its quote."""
    excerpt = case.diagnosis.excerpt
    answer = ruling.answer
    if excerpt is None or not excerpt.cut or answer.answer is None:
        return ruling
    note = f"[{excerpt.note}]"
    evidence = f"{answer.evidence} {note}" if answer.evidence else note
    return Ruling(answer.model_copy(update={"evidence": evidence}), ruling.basis)
