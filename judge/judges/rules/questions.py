"""One small rule per checklist question, over a parsed truth and a parsed diagnosis.

Each rule answers Yes only with a quote from the diagnosis as evidence, and leaves a question
unscored only when the truth lacks what the rule needs (no origin at all, say). A rule is bound to
a rubric question by the question's `rule:` key, or else by the question's text (`RULE_TEXT`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from ground_truth.models import ComponentRef, IncidentSpec

from ...judgment import QuestionAnswer
from .. import text as text_match
from . import names, taxonomy, values
from .diagnosis import Diagnosis, Mention, claimed_families, parse_diagnosis
from .size import SizePolicy
from .truth import Truth, parse_truth, same

_WORD = re.compile(r"[a-z][a-z-]{3,}")
_STOPWORDS = frozenset(
    [
        "that",
        "this",
        "with",
        "from",
        "into",
        "have",
        "been",
        "were",
        "which",
        "their",
        "there",
        "they",
        "them",
        "then",
        "than",
        "when",
        "what",
        "where",
        "while",
        "because",
        "cause",
        "caused",
        "causing",
        "service",
        "services",
        "deployment",
        "deployments",
        "pods",
        "pod",
        "namespace",
        "component",
        "components",
        "fault",
        "faults",
        "issue",
        "issues",
        "problem",
        "problems",
        "error",
        "errors",
        "failure",
        "failures",
        "failing",
        "fails",
        "failed",
        "request",
        "requests",
        "application",
        "configured",
        "config",
    ]
)


@dataclass
class Case:
    """A spec and a diagnosis, each parsed once; every rule reads these."""

    spec: IncidentSpec
    truth: Truth
    diagnosis: Diagnosis

    @classmethod
    def build(
        cls,
        spec: IncidentSpec,
        diagnosis: str,
        truth: Truth | None = None,
        policy: SizePolicy | None = None,
    ) -> Case:
        truth = truth or parse_truth(spec)
        return cls(spec, truth, parse_diagnosis(diagnosis, truth, policy))

    def quote(self, mention: Mention) -> str:
        return self.diagnosis.quote(mention.start)

    def involved(self, mention: Mention) -> bool:
        """Blamed rightly: an origin, or a component the truth's mechanism names."""
        if mention.foreign:
            return False
        return mention.origin or any(same(mention.component, c) for c in self.truth.contributing)


def _yes(qid: str, evidence: str, confidence: str = "High") -> QuestionAnswer:
    return QuestionAnswer(question_id=qid, answer="Yes", evidence=evidence, confidence=confidence)  # type: ignore[arg-type]


def _no(qid: str, evidence: str = "", confidence: str = "High") -> QuestionAnswer:
    return QuestionAnswer(question_id=qid, answer="No", evidence=evidence, confidence=confidence)  # type: ignore[arg-type]


def _unscored(qid: str, reason: str) -> QuestionAnswer:
    return QuestionAnswer(question_id=qid, unscored_reason=reason)


def _origin_blamed(case: Case) -> list[Mention]:
    return [m for m in case.diagnosis.blamed if m.origin]


def _wrongly_blamed(case: Case) -> list[Mention]:
    return case.diagnosis.wrongly_blamed(case.involved)


# ------------------------------------------------------------------ D1: localization


def origin_named(qid: str, case: Case) -> QuestionAnswer:
    """Yes iff the diagnosis blames an origin component (in the truth's namespace) as faulty."""
    if not case.truth.origins:
        return _unscored(qid, "the ground truth names no fault origin")
    hits = _origin_blamed(case)
    if hits and not case.diagnosis.no_fault:
        return _yes(qid, case.quote(hits[0]))
    named = [m for m in case.diagnosis.mentions if m.origin]
    return _no(qid, case.quote(named[0]) if named else "", "Medium" if named else "High")


def origin_distinguished(qid: str, case: Case) -> QuestionAnswer:
    """Yes iff the origin is blamed and no victim or other component is blamed beside it."""
    if not case.truth.origins:
        return _unscored(qid, "the ground truth names no fault origin")
    hits = _origin_blamed(case)
    if not hits or case.diagnosis.no_fault:
        return _no(qid)
    victims = [m for m in _wrongly_blamed(case) if _is_victim(case, m)]
    if victims:
        return _no(qid, case.quote(victims[0]), "Medium")
    return _yes(qid, case.quote(hits[0]))


def _is_victim(case: Case, mention: Mention) -> bool:
    """Downstream of the fault: the truth lists it as affected, or the diagnosis itself says it
    suffers (names it in an effect)."""
    component = mention.component
    if any(same(component, a) for a in case.truth.affected):
        return True
    return bool(names.keys(component) & case.diagnosis.effect_keys)


def no_healthy_component_blamed(qid: str, case: Case) -> QuestionAnswer:
    """Yes iff the diagnosis blames something and everything it blames is an origin (or a
    component the truth's mechanism involves)."""
    return _only_involved_blamed(qid, case)


def _only_involved_blamed(qid: str, case: Case) -> QuestionAnswer:
    """D1-Q3 and D3-Q1 ask the same of the text (the guide: a positive claim, and nothing
    blamed beyond the origin and the truth's contributors); they differ only in the question."""
    if not case.truth.origins:
        return _unscored(qid, "the ground truth names no fault origin")
    blamed = case.diagnosis.blamed
    if not blamed or case.diagnosis.no_fault:
        return _no(qid, "", "Medium")
    wrong = _wrongly_blamed(case)
    if wrong:
        return _no(qid, case.quote(wrong[0]))
    return _yes(qid, case.quote(blamed[0]), "Medium")


# ------------------------------------------------------------------ D2: characterization


def mechanism_matched(qid: str, case: Case) -> QuestionAnswer:
    """Yes iff the diagnosis states a mutation of the truth's fault family (a category such as
    "a TLS issue" or "a configuration problem" is not enough)."""
    d, truth = case.diagnosis, case.truth
    if d.no_fault or not d.claim_text.strip():
        return _no(qid)
    keywords = case.spec.mechanism_keywords
    if keywords:
        hits = text_match.found_any(d.claim_text, keywords)
        if len(hits) >= math.ceil(len(keywords) / 2):
            return _yes(qid, _quote_term(d, hits[0]))
    if not truth.families:
        return _by_shared_words(qid, case)
    for family in sorted(truth.families):
        match = taxonomy.FAMILY[family].pattern.search(d.claim_text)
        if match and _same_variant(family, truth, d):
            return _yes(qid, d.claim_quote(match.start()), "Medium")
    return _no(qid, "", "Medium")


def _same_variant(family: str, truth: Truth, d: Diagnosis) -> bool:
    """A readiness probe is not the liveness probe the truth broke."""
    kinds = taxonomy.FAMILY[family]
    wanted = kinds.variants_in(truth.mechanism_text.lower())
    stated = kinds.variants_in(d.claim_text)
    return not wanted or not stated or bool(wanted & stated)


def _shared_words(case: Case) -> list[str]:
    """Content words of the truth's mechanism (not component names) the diagnosis also uses."""
    truth_words = set(_WORD.findall(case.truth.mechanism_text.lower())) - _STOPWORDS
    for c in case.truth.catalog:
        truth_words -= set(c.name.lower().split("-"))
    return sorted(truth_words & set(_WORD.findall(case.diagnosis.claim_text)))


def _by_shared_words(qid: str, case: Case) -> QuestionAnswer:
    """Outside the taxonomy: two content words of the truth's mechanism in the diagnosis."""
    shared = _shared_words(case)
    if len(shared) >= 2:
        return _yes(qid, _quote_term(case.diagnosis, shared[0]), "Low")
    return _no(qid, "", "Low")


def parameters_named(qid: str, case: Case) -> QuestionAnswer:
    """Yes iff the diagnosis states one of the truth's concrete details (a value, beside its key
    when it is a one-digit number; or the key itself) without a different value for that key."""
    d, truth = case.diagnosis, case.truth
    if d.no_fault:
        return _no(qid)
    if truth.values:
        hits = values.matching(truth.values, d.claim_text)
        if hits:
            return _yes(qid, d.claim_quote(hits[0][1]))
        return _no(qid, "", "Medium")
    if mechanism_matched(qid, case).answer == "Yes":
        concrete = values.CONCRETE.search(d.text)
        if concrete:
            return _yes(qid, d.quote(concrete.start(), concrete.end()), "Low")
        shared = _shared_words(case)
        if len(shared) >= 2:
            return _yes(qid, _quote_term(d, shared[0]), "Low")
    return _no(qid, "", "Low")


def fault_type_consistent(qid: str, case: Case) -> QuestionAnswer:
    """Yes iff the diagnosis characterises the fault (a family, a category, or a generic
    "configuration problem") and that characterisation fits the truth's fault type."""
    d, truth = case.diagnosis, case.truth
    if d.no_fault:
        return _no(qid)
    families, categories, generic = claimed_families(d)
    if families:
        fitting = [
            f for f in sorted(families) if taxonomy.compatible(f, truth.families | truth.categories)
        ]
        if fitting:
            return _yes(qid, _family_quote(d, fitting[0]), "Medium")
        if truth.families:
            return _no(qid, _family_quote(d, sorted(families)[0]), "Medium")
        return _by_shared_words(qid, case)
    if categories & (truth.families | truth.categories) or generic & truth.groups:
        return _yes(qid, "", "Low")
    category_groups = {taxonomy.FAMILY[c].group for c in categories}
    if category_groups & truth.groups & taxonomy.CONFIGURED_GROUPS or taxonomy.vaguely_configured(
        generic, truth.groups
    ):
        return _yes(qid, "", "Low")
    return _no(qid, "", "Medium")


# ------------------------------------------------------------------ D3: scope


def no_uninvolved_component_blamed(qid: str, case: Case) -> QuestionAnswer:
    """Yes iff the diagnosis blames something and blames no component outside the origin and
    the truth's contributing components (victims named as affected are fine)."""
    return _only_involved_blamed(qid, case)


def all_components_named(qid: str, case: Case) -> QuestionAnswer:
    """Yes iff every component the truth lists (origins, contributing, affected) is mentioned in
    the truth's namespace and not called healthy."""
    truth, d = case.truth, case.diagnosis
    if not truth.listed:
        return _unscored(qid, "the ground truth lists no components")
    if d.no_fault or not _origin_blamed(case):
        return _no(qid)
    last = None
    everything = any(
        m.origin and m.component.name == "*" and m.role == "blamed" for m in d.mentions
    )
    for component in truth.listed:
        if everything and truth.owned_by_origin(component):
            continue
        mentions = [
            m
            for m in d.mentions
            if same(m.component, component)
            and not m.foreign
            and m.role not in {"exonerated", "listed"}
        ]
        if not mentions and not _named_as_value(case, component):
            return _no(qid, "", "Medium")
        last = mentions[0] if mentions else last
    return _yes(qid, case.quote(last) if last else "")


def _named_as_value(case: Case, component: ComponentRef) -> bool:
    """A victim written as an address (`PRODUCT_CATALOG_ADDR=product-catalog:8082`) is named."""
    if any(same(component, o) for o in case.truth.origins):
        return False
    roles = {m.start: m.role for m in case.diagnosis.mentions}
    return any(
        roles.get(at) not in {"exonerated", "listed"}
        for at in names.find(case.diagnosis.low, component)
    )


def symptoms_matched(qid: str, case: Case) -> QuestionAnswer:
    """Yes iff the diagnosis states an impact the truth states or its mechanism implies."""
    d, truth = case.diagnosis, case.truth
    if d.no_fault or not d.claim_text.strip():
        return _no(qid)
    if case.spec.symptoms:
        hits = text_match.found_any(d.claim_text, case.spec.symptoms)
        if hits:
            return _yes(qid, _quote_term(d, hits[0]))
    stated = taxonomy.impacts_in(taxonomy.without_denied_impacts(d.claim_text))
    contradicted = taxonomy.contradicted_impacts(d.claim_text, truth.impacts, truth.families)
    if contradicted:
        return _no(qid, _impact_quote(d, sorted(contradicted)[0]), "Medium")
    if not truth.impacts:
        if stated:
            return _yes(qid, _impact_quote(d, sorted(stated)[0]), "Low")
        return _no(qid, "", "Low")
    shared = (stated & truth.impacts) - taxonomy.BROAD_IMPACTS
    if (
        not shared
        and stated & taxonomy.BROAD_IMPACTS
        and truth.impacts & (taxonomy.BROAD_IMPACTS | {"connection", "latency"})
    ):
        shared = stated & taxonomy.BROAD_IMPACTS
    if shared:
        return _yes(qid, _impact_quote(d, sorted(shared)[0]), "Medium")
    return _no(qid, "", "Medium")


# ------------------------------------------------------------------ evidence


def _quote_term(d: Diagnosis, term: str) -> str:
    """The quote for the first place the claim (else the text) states `term` as words."""
    words = re.findall(r"[a-z0-9]+", term.lower())
    if not words:
        return ""
    pattern = re.compile(r"(?<![a-z0-9])" + r"\W{0,3}".join(map(re.escape, words)))
    hit = pattern.search(d.claim_text)
    if hit:
        return d.claim_quote(hit.start())
    hit = pattern.search(d.low)
    return d.quote(hit.start()) if hit else ""


def _pattern_quote(d: Diagnosis, pattern: re.Pattern[str]) -> str:
    """The quote for the first match of `pattern` in the claim (else anywhere in the text)."""
    hit = pattern.search(d.claim_text)
    if hit:
        return d.claim_quote(hit.start())
    hit = pattern.search(d.low)
    return d.quote(hit.start(), hit.end()) if hit else ""


def _family_quote(d: Diagnosis, family: str) -> str:
    return _pattern_quote(d, taxonomy.FAMILY[family].pattern)


def _impact_quote(d: Diagnosis, impact: str) -> str:
    return _pattern_quote(d, taxonomy.IMPACTS[impact])


# ------------------------------------------------------------------ binding

Rule = Callable[[str, Case], QuestionAnswer]

RULES: dict[str, Rule] = {
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


def rule_for_text(question_text: str) -> str | None:
    """The rule whose description the question's text matches, if any."""
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
