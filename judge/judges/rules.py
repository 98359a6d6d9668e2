"""The offline `rules` judge: deterministic answers from the spec's structured fields.

Each question of the default rubric has a rule (by question id, or a rubric question's `rule:`
key). A rule that lacks the spec field it needs leaves the question unscored, never No. The
judge reads the diagnosis as text to match, so instructions inside it change nothing.

How the rules read a diagnosis:
- a component is *named* when one of its names or aliases occurs in any common spelling
  (`product-catalog`, `productcatalog`, `product-catalog-service`, a pod of it, `ns/Kind/name`);
- a sentence that calls something healthy ("is Running and healthy", "not the cause",
  "recovered") names it without blaming it, and is left out of what follows;
- a *cause clause* is a sentence with "root cause", "misconfigured", "points to", ..., or the
  text after "because", "due to", "caused by", ... (the whole diagnosis when nothing has a cue);
- a component is *wrongly blamed* when a cause clause names it and names no involved
  (origin or contributing) component: a clause naming the origin is about the right cause, and
  the victims it mentions are context;
- the *known* components are the spec's own plus the services of the application's namespace
  (see `catalog.py`), so blaming an uninvolved service the spec never lists is still noticed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from ground_truth.models import ComponentRef, IncidentSpec

from ..judgment import DimensionVerdict, QuestionAnswer
from . import text
from .base import JudgeTask
from .catalog import FAULT_TYPES, KNOWN_SERVICES

OVERSCOPE_BYSTANDERS = 3
CASE_CACHE_SIZE = 256

RULE_BY_QUESTION = {
    "D1-Q1": "origin_named",
    "D1-Q2": "origin_distinguished",
    "D1-Q3": "no_healthy_component_blamed",
    "D2-Q1": "mechanism_matched",
    "D2-Q2": "parameters_named",
    "D2-Q3": "fault_type_consistent",
    "D3-Q1": "no_uninvolved_component_blamed",
    "D3-Q2": "all_components_named",
    "D3-Q3": "symptoms_matched",
}


class Case:
    """A spec and a diagnosis with the facts every rule needs, computed once."""

    def __init__(self, spec: IncidentSpec, diagnosis: str):
        self.spec = spec
        self.diagnosis = diagnosis
        self.accusing = text.without_exonerations(diagnosis)
        self.clauses = text.cause_clauses(self.accusing) if self.accusing else []
        self.origins = spec.fault_origin
        self.involved = [*spec.fault_origin, *spec.contributing_components]
        self.known = self._known_components()

    def _known_components(self) -> list[ComponentRef]:
        spec = self.spec
        listed = [*self.involved, *spec.affected_components, *spec.distractors]
        namespaces = {c.namespace for c in listed if c.namespace}
        extra = [
            ComponentRef(name=name, namespace=ns)
            for ns in sorted(namespaces)
            for name in KNOWN_SERVICES.get(ns, [])
        ]
        return _unique([*listed, *extra])

    def is_involved(self, component: ComponentRef) -> bool:
        return any(_same(component, c) for c in self.involved)

    def without_namespaces(self, passage: str) -> str:
        """`social-network` names a namespace, not a network fault."""
        for ns in {c.namespace for c in self.known if c.namespace}:
            passage = re.sub(re.escape(ns), " ", passage, flags=re.I)
        return passage

    def named(self, passage: str) -> list[ComponentRef]:
        return [c for c in self.known if text.mentions(passage, c)]

    def blamed(self) -> list[ComponentRef]:
        """Components named in any cause clause."""
        return _unique([c for clause in self.clauses for c in self.named(clause)])

    def wrongly_blamed(self) -> list[ComponentRef]:
        """Components blamed by a cause clause that names no involved component.

        A clause that names the origin (or a contributing component) is about the right cause,
        and the victims it also names are context; one that names only other components blames
        them instead.
        """
        wrong: list[ComponentRef] = []
        for clause in self.clauses:
            named = self.named(clause)
            if named and not any(self.is_involved(c) for c in named):
                wrong.extend(named)
        return _unique(wrong)

    def bystanders(self) -> list[ComponentRef]:
        """Known components named anywhere that the spec lists neither as involved nor affected."""
        listed = [*self.involved, *self.spec.affected_components]
        return [c for c in self.named(self.diagnosis) if not any(_same(c, x) for x in listed)]

    def quote(self, component: ComponentRef) -> str:
        at = text.first_mention(self.diagnosis, component)
        return text.quote_around(self.diagnosis, at) if at is not None else ""


def _same(a: ComponentRef, b: ComponentRef) -> bool:
    names_a = {n.lower() for n in a.all_names()}
    return any(n.lower() in names_a for n in b.all_names())


def _unique(components: list[ComponentRef]) -> list[ComponentRef]:
    """First of each group of components that share a name or alias (case-insensitive)."""
    kept: list[ComponentRef] = []
    seen: set[str] = set()
    for c in components:
        names = {n.lower() for n in c.all_names()}
        if not names & seen:
            kept.append(c)
        seen |= names
    return kept


def _yes(qid: str, evidence: str, confidence: str = "High") -> QuestionAnswer:
    return QuestionAnswer(question_id=qid, answer="Yes", evidence=evidence, confidence=confidence)


def _no(qid: str, evidence: str = "", confidence: str = "High") -> QuestionAnswer:
    return QuestionAnswer(question_id=qid, answer="No", evidence=evidence, confidence=confidence)


def _unscored(qid: str, reason: str) -> QuestionAnswer:
    return QuestionAnswer(question_id=qid, unscored_reason=reason)


# ------------------------------------------------------------------ rules: localization


def origin_named(qid: str, case: Case) -> QuestionAnswer:
    if not case.origins:
        return _unscored(qid, "the spec names no fault origin")
    named = [c for c in case.origins if text.mentions(case.accusing, c)]
    needed = math.ceil(len(case.origins) / 2)
    if len(named) >= needed:
        return _yes(qid, case.quote(named[0]))
    return _no(qid)


def origin_distinguished(qid: str, case: Case) -> QuestionAnswer:
    """Yes when the origin is named (not as healthy), no cause clause blames only others, and
    the diagnosis does not lump `OVERSCOPE_BYSTANDERS` or more uninvolved components in with it."""
    if not case.origins:
        return _unscored(qid, "the spec names no fault origin")
    named = [c for c in case.origins if text.mentions(case.accusing, c)]
    if not named:
        return _no(qid)
    wrong = case.wrongly_blamed() or case.bystanders()[OVERSCOPE_BYSTANDERS - 1 :][:1]
    if wrong:
        return _no(qid, case.quote(wrong[0]), "Medium")
    return _yes(qid, case.quote(named[0]))


def no_healthy_component_blamed(qid: str, case: Case) -> QuestionAnswer:
    if not case.origins:
        return _unscored(qid, "the spec names no fault origin")
    wrong = case.wrongly_blamed()
    if wrong:
        return _no(qid, case.quote(wrong[0]))
    return _yes(qid, "", "Medium")


# ------------------------------------------------------------------ rules: characterization


def mechanism_matched(qid: str, case: Case) -> QuestionAnswer:
    keywords = case.spec.mechanism_keywords
    if not keywords:
        return _mechanism_by_fault_type(qid, case)
    hits = text.found_any(case.diagnosis, keywords)
    if len(hits) >= math.ceil(len(keywords) / 2):
        return _yes(qid, _quote_term(case.diagnosis, hits[0]))
    return _no(qid, _quote_term(case.diagnosis, hits[0]) if hits else "", "Medium")


def _mechanism_by_fault_type(qid: str, case: Case) -> QuestionAnswer:
    """Without mechanism_keywords: does the diagnosis claim the ground truth's fault type?"""
    true_types = _fault_types(case.without_namespaces(_truth_text(case.spec)))
    if not true_types:
        return _unscored(
            qid, "the spec lists no mechanism_keywords and its text names no known fault type"
        )
    claims = case.without_namespaces(case.accusing)
    shared = sorted(_fault_types(claims) & true_types)
    if shared:
        terms = text.found_any(claims, FAULT_TYPES[shared[0]])
        return _yes(qid, _quote_term(case.diagnosis, terms[0]), "Low")
    return _no(qid, "", "Low")


def parameters_named(qid: str, case: Case) -> QuestionAnswer:
    values = _parameter_values(case) or _text_details(case)
    if not values:
        return _unscored(qid, "the spec holds no injected parameter values or concrete details")
    hits = text.found_any(case.diagnosis, values)
    if hits:
        return _yes(qid, _quote_term(case.diagnosis, hits[0]))
    return _no(qid)


_DETAIL = re.compile(
    r"`([^`]{2,80})`|'([^'\s]{2,80})'|\"([^\"\s]{2,80})\""  # quoted or backticked values
    r"|\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b"  # ENV_VAR_NAMES
    r"|(?<![\w.-])([\w./-]+:[\w.-]+)(?![\w])"  # image:tag, host:port
    r"|\b(\d{2,}(?:ms|s|m|Mi|Gi|Ki|MB|GB|%)?)\b"  # ports, limits, durations
)


def _text_details(case: Case) -> list[str]:
    """Concrete values the ground-truth text itself names, when the spec has no parameters."""
    description = case.spec.ground_truth.split("||", 1)[-1]
    names = {n.lower() for c in case.known for n in c.all_names()}
    namespaces = {c.namespace.lower() for c in case.known if c.namespace}
    found = [next(g for g in m.groups() if g) for m in _DETAIL.finditer(description)]
    return list(
        dict.fromkeys(
            d
            for d in found
            if d.lower() not in names | namespaces and not d.lower().startswith("http")
        )
    )


def _truth_text(spec: IncidentSpec) -> str:
    return " ".join(
        [
            spec.ground_truth,
            spec.mechanism or "",
            spec.problem_class or "",
            *spec.mechanism_keywords,
            *spec.symptoms,
        ]
    )


def _parameter_values(case: Case) -> list[str]:
    names = {n.lower() for c in case.known for n in c.all_names()}
    values: list[str] = []
    for value in _flatten(case.spec.parameters):
        text_value = str(value).strip()
        if isinstance(value, bool) or len(text_value) < 2 or text_value.lower() in names:
            continue
        values.append(text_value.replace("|", " "))
    return values


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [v for item in value.values() for v in _flatten(item)]
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in _flatten(item)]
    return [value]


def fault_type_consistent(qid: str, case: Case) -> QuestionAnswer:
    """No when the cause clauses claim fault types and none of them is the ground truth's."""
    truth = _truth_text(case.spec)
    claims = case.without_namespaces(" ".join(case.clauses))
    claimed = _fault_types(claims)
    if claimed and not claimed & _fault_types(case.without_namespaces(truth)):
        terms = text.found_any(claims, FAULT_TYPES[sorted(claimed)[0]])
        return _no(qid, _quote_term(case.diagnosis, terms[0]), "Medium")
    return _yes(qid, "", "Medium")


def _fault_types(passage: str) -> set[str]:
    return {kind for kind, terms in FAULT_TYPES.items() if text.found_any(passage, terms)}


# ------------------------------------------------------------------ rules: scope


def no_uninvolved_component_blamed(qid: str, case: Case) -> QuestionAnswer:
    """No when a cause clause blames only uninvolved components, or when the diagnosis drags in
    `OVERSCOPE_BYSTANDERS` or more components the spec lists neither as involved nor affected."""
    if not case.origins:
        return _unscored(qid, "the spec names no fault origin")
    wrong = case.wrongly_blamed()
    if wrong:
        return _no(qid, case.quote(wrong[0]))
    bystanders = case.bystanders()
    if len(bystanders) >= OVERSCOPE_BYSTANDERS:
        return _no(qid, case.quote(bystanders[0]), "Medium")
    return _yes(qid, "", "Medium")


def all_components_named(qid: str, case: Case) -> QuestionAnswer:
    spec = case.spec
    required = _unique(
        [*spec.fault_origin, *spec.contributing_components, *spec.affected_components]
    )
    if not required:
        return _unscored(qid, "the spec lists no components")
    missing = [c for c in required if not text.mentions(case.diagnosis, c)]
    if missing:
        return _no(qid, "", "Medium")
    return _yes(qid, case.quote(required[-1]))


def symptoms_matched(qid: str, case: Case) -> QuestionAnswer:
    if not case.spec.symptoms:
        return _unscored(qid, "the spec lists no symptoms")
    hits = text.found_any(case.diagnosis, case.spec.symptoms)
    if hits:
        return _yes(qid, _quote_term(case.diagnosis, hits[0]))
    return _no(qid, "", "Medium")


def _quote_term(diagnosis: str, term: str) -> str:
    at = diagnosis.lower().find(term.lower().split()[0])
    return text.quote_around(diagnosis, at) if at >= 0 else term


RULES: dict[str, Callable[[str, Case], QuestionAnswer]] = {
    "origin_named": origin_named,
    "origin_distinguished": origin_distinguished,
    "no_healthy_component_blamed": no_healthy_component_blamed,
    "mechanism_matched": mechanism_matched,
    "parameters_named": parameters_named,
    "fault_type_consistent": fault_type_consistent,
    "no_uninvolved_component_blamed": no_uninvolved_component_blamed,
    "all_components_named": all_components_named,
    "symptoms_matched": symptoms_matched,
}


class RulesJudge:
    """Deterministic, offline; the default when no model is configured."""

    def __init__(self, name: str = "rules"):
        self.name = name
        self._cases: dict[tuple[int, str], tuple[IncidentSpec, Case]] = {}

    def _case(self, task: JudgeTask) -> Case:
        """One `Case` per submission, shared by its dimensions (building one costs milliseconds)."""
        key = (id(task.spec), task.submission.diagnosis)
        cached = self._cases.get(key)
        if cached is not None and cached[0] is task.spec:
            return cached[1]
        if len(self._cases) >= CASE_CACHE_SIZE:
            self._cases.pop(next(iter(self._cases)))
        case = Case(task.spec, task.submission.diagnosis)
        self._cases[key] = (task.spec, case)
        return case

    def describe(self) -> dict[str, Any]:
        return {"name": "rules", "model": None, "params": {"rules": sorted(RULES)}}

    async def judge(self, task: JudgeTask) -> DimensionVerdict:
        return self.answer(task)

    def answer(self, task: JudgeTask) -> DimensionVerdict:
        case = self._case(task)
        answers = []
        for question in task.dimension.questions:
            rule_name = question.rule or RULE_BY_QUESTION.get(question.id)
            rule = RULES.get(rule_name or "")
            if rule is None:
                answers.append(
                    _unscored(question.id, f"the rules judge has no rule for {question.id}")
                )
            else:
                answers.append(rule(question.id, case))
        return DimensionVerdict(answers=answers)
