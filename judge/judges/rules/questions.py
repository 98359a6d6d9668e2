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

from ...checklist.judgment import QuestionAnswer
from .. import text as text_match
from . import names, taxonomy, times, values
from .basis import Basis, Claim, NameMatch, Ruling
from .diagnosis import (
    NOT_CLAIMED,
    Diagnosis,
    Mention,
    claimed_families,
    mechanism_families,
    parse_diagnosis,
)
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
        # Words every kind of fault shares: naming one is no mechanism (issue 22, mode 1).
        "container",
        "containers",
        "node",
        "nodes",
        "load",
        "injected",
        "consumption",
        "usage",
        "high",
        "level",
        "instance",
        "anomalies",
        "anomaly",
        "system",
        "performance",
        "degradation",
        "metric",
        "metrics",
        "alert",
        "alerts",
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


def _yes(qid: str, evidence: str, confidence: str = "High", basis: Basis | None = None) -> Ruling:
    answer = QuestionAnswer(
        question_id=qid,
        answer="Yes",
        evidence=evidence,
        confidence=confidence,  # type: ignore[arg-type]
    )
    return Ruling(answer, basis or Basis())


def _no(
    qid: str, evidence: str = "", confidence: str = "High", basis: Basis | None = None
) -> Ruling:
    answer = QuestionAnswer(
        question_id=qid,
        answer="No",
        evidence=evidence,
        confidence=confidence,  # type: ignore[arg-type]
    )
    return Ruling(answer, basis or Basis())


def _unscored(qid: str, reason: str, basis: Basis | None = None) -> Ruling:
    return Ruling(QuestionAnswer(question_id=qid, unscored_reason=reason), basis or Basis())


def _basis(
    case: Case,
    mention: Mention | None = None,
    claim: Claim | None = None,
    conflicting: bool = False,
) -> Basis:
    """What an answer about `mention` (or a `claim` of the text) rests on."""
    excerpt = case.diagnosis.excerpt
    name: NameMatch = "none"
    if mention is not None:
        name = _name_match(mention)
        if claim is None:
            claim = _claim_of(mention)
    return Basis(
        truth=case.truth.reading,
        name=name,
        claim=claim or "none",
        conflicting=conflicting,
        cut=bool(excerpt and excerpt.cut),
    )


def _name_match(mention: Mention) -> NameMatch:
    if mention.relation in {"instance", "container"}:
        return mention.relation
    written = names.canonical(mention.written) if mention.written else ""
    return "exact" if written == names.canonical(mention.component.name) else "alias"


def _claim_of(mention: Mention) -> Claim:
    if mention.role != "blamed":
        return "mention"
    if mention.inferred:
        return "inferred"
    return "explicit" if mention.strong else "implied"


def _text_claim(case: Case) -> Claim:
    """How the diagnosis states its mechanism: in a headline or a cause, or only somewhere."""
    d = case.diagnosis
    if taxonomy.families_in(d.headline.text) or taxonomy.families_in(d.cause_text):
        return "explicit"
    return "implied" if d.claim_text.strip() else "none"


def _origin_blamed(case: Case) -> list[Mention]:
    return [m for m in case.diagnosis.blamed if m.origin]


def _wrongly_blamed(case: Case) -> list[Mention]:
    return case.diagnosis.wrongly_blamed(case.involved)


# ------------------------------------------------------------------ D1: localization


def origin_named(qid: str, case: Case) -> Ruling:
    """Yes iff the diagnosis blames an origin component (in the truth's namespace) as faulty."""
    if not case.truth.origins:
        return _unscored(qid, "the ground truth names no fault origin", _basis(case))
    hits = _origin_blamed(case)
    if hits and not case.diagnosis.no_fault:
        conflicting = bool(_wrongly_blamed(case))
        return _yes(qid, case.quote(hits[0]), basis=_basis(case, hits[0], conflicting=conflicting))
    named = [m for m in case.diagnosis.mentions if m.origin]
    basis = _basis(case, named[0]) if named else _basis(case)
    return _no(qid, case.quote(named[0]) if named else "", "Medium" if named else "High", basis)


def origin_distinguished(qid: str, case: Case) -> Ruling:
    """Yes iff the origin is blamed and no victim or other component is blamed beside it."""
    if not case.truth.origins:
        return _unscored(qid, "the ground truth names no fault origin", _basis(case))
    hits = _origin_blamed(case)
    if not hits or case.diagnosis.no_fault:
        return _no(qid, basis=_basis(case))
    victims = [m for m in _wrongly_blamed(case) if _is_victim(case, m)]
    if victims:
        basis = _basis(case, victims[0], conflicting=True)
        return _no(qid, case.quote(victims[0]), "Medium", basis)
    return _yes(qid, case.quote(hits[0]), basis=_basis(case, hits[0]))


def _is_victim(case: Case, mention: Mention) -> bool:
    """Downstream of the fault: the truth lists it as affected, or the diagnosis itself says it
    suffers (names it in an effect)."""
    component = mention.component
    if any(same(component, a) for a in case.truth.affected):
        return True
    return bool(names.keys(component) & case.diagnosis.effect_keys)


def no_healthy_component_blamed(qid: str, case: Case) -> Ruling:
    """Yes iff the diagnosis blames something and everything it blames is an origin (or a
    component the truth's mechanism involves)."""
    return _only_involved_blamed(qid, case)


def _only_involved_blamed(qid: str, case: Case) -> Ruling:
    """D1-Q3 and D3-Q1 ask the same of the text (the guide: a positive claim, and nothing
    blamed beyond the origin and the truth's contributors); they differ only in the question."""
    if not case.truth.origins:
        return _unscored(qid, "the ground truth names no fault origin", _basis(case))
    blamed = case.diagnosis.blamed
    if not blamed or case.diagnosis.no_fault:
        return _no(qid, "", "Medium", _basis(case))
    wrong = _wrongly_blamed(case)
    if wrong:
        conflicting = bool(_origin_blamed(case))
        return _no(qid, case.quote(wrong[0]), basis=_basis(case, wrong[0], conflicting=conflicting))
    return _yes(qid, case.quote(blamed[0]), "Medium", _basis(case, blamed[0]))


# ------------------------------------------------------------------ D2: characterization


def mechanism_matched(qid: str, case: Case) -> Ruling:
    """Yes iff the diagnosis states a mutation of the truth's fault family (a category such as
    "a TLS issue" or "a configuration problem" is not enough). The mechanism is what the
    diagnosis claims as the cause; words it only uses elsewhere (an observed metric, a quoted
    log line) name no mechanism."""
    d, truth = case.diagnosis, case.truth
    basis = _basis(case, claim=_text_claim(case))
    if d.no_fault or not d.claim_text.strip():
        return _no(qid, basis=basis)
    keywords = case.spec.mechanism_keywords
    if keywords:
        hits = text_match.found_any(d.claim_text, keywords)
        if len(hits) >= math.ceil(len(keywords) / 2):
            return _yes(qid, _quote_term(d, hits[0]), basis=basis)
    if not truth.families:
        return _by_shared_words(qid, case)
    claimed = mechanism_families(d)
    for family in sorted(truth.families & claimed):
        if _same_variant(family, truth, d) and _same_level(truth, d):
            conflicting = bool(claimed - truth.families - _related(truth))
            basis = _basis(case, claim=basis.claim, conflicting=conflicting)
            return _yes(qid, _family_quote(d, family), "Medium", basis)
    return _no(qid, "", "Medium", basis)


def _related(truth: Truth) -> set[str]:
    """The truth's families and their named neighbours: one fault's related mechanisms."""
    return {
        f.name
        for f in taxonomy.FAMILIES
        if any(taxonomy.compatible(f.name, {t}) for t in truth.families)
    }


def _same_variant(family: str, truth: Truth, d: Diagnosis) -> bool:
    """A readiness probe is not the liveness probe the truth broke."""
    kinds = taxonomy.FAMILY[family]
    wanted = kinds.variants_in(truth.mechanism_text.lower())
    stated = kinds.variants_in(d.claim_text)
    return not wanted or not stated or bool(wanted & stated)


_LEVEL = re.compile(r"(?<![\w-])(container|node|jvm)(?![\w-])")
_PLACED = frozenset({"container", "node"})


def _same_level(truth: Truth, d: Diagnosis) -> bool:
    """A label's fault type names its level where the benchmark's vocabulary has the same fault
    at several (container vs node memory, the JVM's CPU vs the host's): a type stated at
    another level is another fault (the component is D1's business)."""
    if not truth.labelled:
        return True
    wanted = set(_LEVEL.findall(truth.mechanism_text.lower()))
    stated = set(_LEVEL.findall(d.stated_type.text or d.headline.text or d.cause_text))
    if ("jvm" in wanted) != ("jvm" in stated):
        return False
    placed = wanted & _PLACED
    return not placed or not (stated & _PLACED) or bool(placed & stated)


def _shared_words(case: Case) -> list[str]:
    """Content words of the truth's mechanism (not component names) the diagnosis also uses."""
    truth_words = set(_WORD.findall(case.truth.mechanism_text.lower())) - _STOPWORDS
    for c in case.truth.catalog:
        truth_words -= set(c.name.lower().split("-"))
    return sorted(truth_words & set(_WORD.findall(case.diagnosis.claim_text)))


def _by_shared_words(qid: str, case: Case) -> Ruling:
    """Outside the taxonomy: two content words of the truth's mechanism in the diagnosis."""
    shared = _shared_words(case)
    basis = _basis(case, claim="implied" if shared else "none")
    if len(shared) >= 2:
        return _yes(qid, _quote_term(case.diagnosis, shared[0]), "Low", basis)
    return _no(qid, "", "Low", basis)


def parameters_named(qid: str, case: Case) -> Ruling:
    """Yes iff the diagnosis states one of the truth's concrete details (a value, beside its key
    when it is a one-digit number; or the key itself) without a different value for that key."""
    d, truth = case.diagnosis, case.truth
    if d.no_fault:
        return _no(qid, basis=_basis(case))
    if truth.labelled:
        return _label_detail(qid, case)
    if truth.values:
        hits = values.matching(truth.values, d.claim_text)
        if hits:
            return _yes(qid, d.claim_quote(hits[0][1]), basis=_basis(case, claim="explicit"))
        return _no(qid, "", "Medium", _basis(case))
    if mechanism_matched(qid, case).answer.answer == "Yes":
        implied = _basis(case, claim="implied")
        concrete = values.CONCRETE.search(d.text)
        if concrete:
            return _yes(qid, d.quote(concrete.start(), concrete.end()), "Low", implied)
        shared = _shared_words(case)
        if len(shared) >= 2:
            return _yes(qid, _quote_term(d, shared[0]), "Low", implied)
    return _no(qid, "", "Low", _basis(case))


def _label_detail(qid: str, case: Case) -> Ruling:
    """A label row's details are its fault type on its entity and its time: Yes when the
    diagnosis puts the truth's fault type on the origin, or states the root cause's occurrence
    time within the tolerance (the type on another component, or the entity alone, is not)."""
    d = case.diagnosis
    for at in times.stated_occurrences(d.low, case.truth.times):
        if d.role_at(at) not in NOT_CLAIMED - {"context"}:
            return _yes(qid, d.quote(at), basis=_basis(case, claim="explicit"))
    hits = _origin_blamed(case)
    mechanism = mechanism_matched(qid, case)
    if hits and mechanism.answer.answer == "Yes":
        basis = _basis(case, hits[0], conflicting=mechanism.basis.conflicting)
        return _yes(qid, mechanism.answer.evidence or case.quote(hits[0]), "Medium", basis)
    blamed = d.blamed[:1]
    evidence = mechanism.answer.evidence or (case.quote(blamed[0]) if blamed else "")
    return _no(qid, evidence or "", "Medium", _basis(case, blamed[0] if blamed else None))


def fault_type_consistent(qid: str, case: Case) -> Ruling:
    """Yes iff the diagnosis characterises the fault (a family, a category, or a generic
    "configuration problem") and that characterisation fits the truth's fault type. Related
    mechanisms of one fault (a port mismatch and the missing file behind it) do not conflict:
    one fitting family is enough."""
    d, truth = case.diagnosis, case.truth
    if d.no_fault:
        return _no(qid, basis=_basis(case))
    families, categories, generic = claimed_families(d)
    claim = _text_claim(case)
    if families:
        fitting = [
            f for f in sorted(families) if taxonomy.compatible(f, truth.families | truth.categories)
        ]
        if fitting:
            basis = _basis(case, claim=claim, conflicting=len(fitting) < len(families))
            return _yes(qid, _family_quote(d, fitting[0]), "Medium", basis)
        if truth.families:
            basis = _basis(case, claim=claim)
            return _no(qid, _family_quote(d, sorted(families)[0]), "Medium", basis)
        return _by_shared_words(qid, case)
    if not (families or categories or generic) and d.category.text:
        families, categories, generic = _categorised(d.category.text)
        families, categories = set(), families | categories
    vague = _basis(case, claim="implied")
    if categories & (truth.families | truth.categories) or generic & truth.groups:
        return _yes(qid, "", "Low", vague)
    category_groups = {taxonomy.FAMILY[c].group for c in categories}
    if category_groups & truth.groups & taxonomy.CONFIGURED_GROUPS or taxonomy.vaguely_configured(
        generic, truth.groups
    ):
        return _yes(qid, "", "Low", vague)
    return _no(qid, "", "Medium", _basis(case))


def _categorised(text: str) -> tuple[set[str], set[str], set[str]]:
    """What an analysis answer's categories (`Authentication Issue`, `Misconfiguration`) name."""
    return (
        taxonomy.families_in(text),
        taxonomy.categories_in(text),
        taxonomy.generic_groups_in(text),
    )


# ------------------------------------------------------------------ D3: scope


def no_uninvolved_component_blamed(qid: str, case: Case) -> Ruling:
    """Yes iff the diagnosis blames something and blames no component outside the origin and
    the truth's contributing components (victims named as affected are fine)."""
    return _only_involved_blamed(qid, case)


def all_components_named(qid: str, case: Case) -> Ruling:
    """Yes iff every component the truth lists (origins, contributing, affected) is mentioned in
    the truth's namespace and not called healthy."""
    truth, d = case.truth, case.diagnosis
    if not truth.listed:
        return _unscored(qid, "the ground truth lists no components", _basis(case))
    if d.no_fault or not _origin_blamed(case):
        return _no(qid, basis=_basis(case))
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
            return _no(qid, "", "Medium", _basis(case))
        last = mentions[0] if mentions else last
    basis = _basis(case, last, claim="mention") if last else _basis(case, claim="mention")
    return _yes(qid, case.quote(last) if last else "", basis=basis)


def _named_as_value(case: Case, component: ComponentRef) -> bool:
    """A victim written as an address (`PRODUCT_CATALOG_ADDR=product-catalog:8082`) is named."""
    if any(same(component, o) for o in case.truth.origins):
        return False
    roles = {m.start: m.role for m in case.diagnosis.mentions}
    return any(
        roles.get(at) not in {"exonerated", "listed"}
        for at in names.find(case.diagnosis.low, component)
    )


def symptoms_matched(qid: str, case: Case) -> Ruling:
    """Yes iff the diagnosis states an impact the truth states or its mechanism implies, or,
    where the truth states none, one that follows from the diagnosis's own cause when that
    cause fits the truth's fault type. What it says only of components it rules out is not
    this fault's impact. A label row names no impact: what its fault type produces counts only
    as an impact of a fault the diagnosis puts on the truth's entity (symptoms it explains by
    another component's fault are that fault's)."""
    d, truth = case.diagnosis, case.truth
    if d.no_fault or not d.claim_text.strip():
        return _no(qid, basis=_basis(case))
    if truth.labelled and not _origin_blamed(case):
        blamed = d.blamed[:1]
        evidence = case.quote(blamed[0]) if blamed else ""
        return _no(qid, evidence, "Medium", _basis(case, blamed[0] if blamed else None))
    text = d.impact.text
    stated_basis = _basis(case, claim="explicit")
    if case.spec.symptoms:
        hits = text_match.found_any(text, case.spec.symptoms)
        if hits:
            return _yes(qid, _quote_term(d, hits[0]), basis=stated_basis)
    stated = taxonomy.impacts_in(taxonomy.without_denied_impacts(text))
    contradicted = taxonomy.contradicted_impacts(text, truth.impacts, truth.families)
    if contradicted:
        basis = _basis(case, claim="explicit", conflicting=bool(stated & truth.impacts))
        return _no(qid, _impact_quote(d, sorted(contradicted)[0]), "Medium", basis)
    if not truth.impacts:
        if stated:
            return _yes(qid, _impact_quote(d, sorted(stated)[0]), "Low", stated_basis)
        return _no(qid, "", "Low", _basis(case))
    shared = (stated & truth.impacts) - taxonomy.BROAD_IMPACTS
    if (
        not shared
        and stated & taxonomy.BROAD_IMPACTS
        and truth.impacts & (taxonomy.BROAD_IMPACTS | {"connection", "latency"})
    ):
        shared = stated & taxonomy.BROAD_IMPACTS
    if shared:
        return _yes(qid, _impact_quote(d, sorted(shared)[0]), "Medium", stated_basis)
    follows = stated & _impacts_of_a_fitting_cause(case) if not truth.stated_impacts else set()
    if follows:
        basis = _basis(case, claim="implied")
        return _yes(qid, _impact_quote(d, sorted(follows)[0]), "Low", basis)
    return _no(qid, "", "Medium", _basis(case, claim="explicit" if stated else "none"))


def _impacts_of_a_fitting_cause(case: Case) -> set[str]:
    """What the diagnosis's own cause implies, when that cause fits the truth's fault type."""
    claimed, _, _ = claimed_families(case.diagnosis)
    fitting = [
        f for f in claimed if taxonomy.compatible(f, case.truth.families | case.truth.categories)
    ]
    return {impact for f in fitting for impact in taxonomy.FAMILY[f].impacts}


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
    hit = taxonomy.IMPACTS[impact].search(d.impact.text)
    if hit:
        return d.quote(d.impact.origin(hit.start()))
    return _pattern_quote(d, taxonomy.IMPACTS[impact])


# ------------------------------------------------------------------ a truth with no fault


def fault_free(qid: str, case: Case) -> Ruling:
    """The truth says no fault was injected (a no-op problem): every question then asks
    whether the diagnosis says so too, blaming nothing."""
    d = case.diagnosis
    if d.no_fault:
        said = next((s for s in d.segments if s.role == "exonerated"), None)
        evidence = d.quote(said.start) if said else ""
        return _yes(qid, evidence, "Medium", _basis(case, claim="explicit"))
    blamed = d.blamed
    basis = _basis(case, blamed[0]) if blamed else _basis(case)
    return _no(qid, case.quote(blamed[0]) if blamed else "", "Medium", basis)


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
