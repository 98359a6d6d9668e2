"""One small rule per checklist question, over a parsed truth and a parsed diagnosis, by name.

The rules live by what they read: `components.py` (which components are named and blamed: D1,
D3-Q1, D3-Q2), `mechanism.py` (the claimed mechanism: D2), `impact.py` (the stated impact:
D3-Q3). Each answers Yes only with a quote from the diagnosis as evidence, and leaves a question
unscored only when the truth lacks what the rule needs (no origin at all, say). A rule is bound to
a rubric question by the question's `rule:` key, or else by the question's text (`RULE_TEXT`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from .basis import Ruling
from .case import Case, basis_of, no, yes
from .components import (
    all_components_named,
    no_healthy_component_blamed,
    no_uninvolved_component_blamed,
    origin_distinguished,
    origin_named,
)
from .impact import symptoms_matched
from .mechanism import fault_type_consistent, mechanism_matched, parameters_named

__all__ = ["RULES", "Case", "Rule", "bind", "binding_warnings", "rule_for_text"]


# ------------------------------------------------------------------ a truth with no fault


def fault_free(qid: str, case: Case) -> Ruling:
    """The truth says no fault was injected (a no-op problem): every question then asks
    whether the diagnosis says so too, blaming nothing."""
    d = case.diagnosis
    if d.no_fault:
        said = next((s for s in d.segments if s.role == "exonerated"), None)
        evidence = d.quote(said.start) if said else ""
        return yes(qid, evidence, "Medium", basis_of(case, claim="explicit"))
    blamed = d.blamed
    basis = basis_of(case, blamed[0]) if blamed else basis_of(case)
    return no(qid, case.quote(blamed[0]) if blamed else "", "Medium", basis)


Rule = Callable[[str, Case], Ruling]


def _unless_fault_free(rule: Rule) -> Rule:
    def checked(qid: str, case: Case) -> Ruling:
        return fault_free(qid, case) if case.truth.no_fault else rule(qid, case)

    checked.__name__ = checked.__qualname__ = rule.__name__
    checked.__doc__ = rule.__doc__
    return checked


# ------------------------------------------------------------------ binding

RULES: dict[str, Rule] = {
    rule.__name__: _unless_fault_free(rule)
    for rule in (
        origin_named,
        origin_distinguished,
        no_healthy_component_blamed,
        mechanism_matched,
        parameters_named,
        fault_type_consistent,
        no_uninvolved_component_blamed,
        all_components_named,
        symptoms_matched,
    )
}

# What a question asking for each rule says (checked in this order; the first match binds).
RULE_TEXT: dict[str, re.Pattern[str]] = {
    "no_healthy_component_blamed": re.compile(
        r"\b(?:avoid|not)\b.*\b(?:misidentif\w+|blam\w+)\b.*\bhealthy\b.*\borigin", re.I | re.S
    ),
    "origin_distinguished": re.compile(
        r"\bdistinguish\w*\b.*\borigin\b.*\b(?:secondary|cascad\w+|downstream)", re.I | re.S
    ),
    "origin_named": re.compile(
        r"\b(?:name|identif\w+|point\w* to)\b.*\b(?:component|service|deployment)\b.*\b(?:fault\s+)?origin",
        re.I | re.S,
    ),
    "fault_type_consistent": re.compile(
        r"\b(?:avoid|not)\b.*\b(?:incorrect|unrelated|wrong)\b.*\bfault\s+type", re.I | re.S
    ),
    "mechanism_matched": re.compile(r"\b(?:same|correct)\b.*\bmechanism\b", re.I | re.S),
    "parameters_named": re.compile(
        r"\bconcrete\b.*\b(?:details?|values?|parameters?)\b", re.I | re.S
    ),
    "no_uninvolved_component_blamed": re.compile(
        r"\b(?:avoid|not)\b.*\bblam\w+\b.*\bcomponents?\b.*\bnot\b", re.I | re.S
    ),
    "all_components_named": re.compile(
        r"\ball\b.*\bcomponents\b.*\b(?:contributing|affected)", re.I | re.S
    ),
    "symptoms_matched": re.compile(r"\b(?:impact|symptoms?)\b", re.I),
}


@lru_cache(maxsize=1024)
def rule_for_text(question_text: str) -> str | None:
    """The rule whose description the question's text matches, if any (a rubric's few question
    texts are asked for each submission: matched once each)."""
    return next(
        (name for name, pattern in RULE_TEXT.items() if pattern.search(question_text)), None
    )


def bind(question_rule: str | None, question_text: str) -> str | None:
    """A question's rule: its `rule:` key if it names one, else the one its text asks for."""
    return question_rule or rule_for_text(question_text)


def binding_warnings(questions: list[tuple[str, str | None, str]]) -> list[str]:
    """For `judge rubric validate`: (id, rule, text) whose text does not ask what its rule checks."""
    warnings = []
    for qid, rule, question_text in questions:
        by_text = rule_for_text(question_text)
        if rule and rule not in RULES:
            warnings.append(
                f"{qid}: unknown rule {rule!r}; the rules judge knows {', '.join(sorted(RULES))}"
            )
        elif rule and by_text != rule:
            found = f"asks for {by_text!r}" if by_text else "matches no rule"
            warnings.append(f"{qid}: rule {rule!r} is bound, but the question's text {found}")
        elif not rule and by_text is None:
            warnings.append(
                f"{qid}: the question's text matches no rule; the rules judge leaves it unscored"
            )
    return warnings
