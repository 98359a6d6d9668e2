"""The rules that read the mechanism the diagnosis claims: D2 (the truth's fault family at the
level of the mutation, its concrete details, and no conflicting fault type). A mechanism outside
the taxonomy is matched by the content words it shares with the truth's.
"""

from __future__ import annotations

import math
import re

from .. import text as text_match
from . import taxonomy, times, values
from .basis import Claim, Ruling
from .case import Case, basis_of, no, origin_blamed, pattern_quote, quote_term, yes
from .diagnosis import NOT_CLAIMED, Diagnosis, claimed_families, mechanism_families
from .truth import Truth

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


def _text_claim(case: Case) -> Claim:
    """How the diagnosis states its mechanism: in a headline or a cause, or only somewhere."""
    d = case.diagnosis
    if taxonomy.families_in(d.headline.text) or taxonomy.families_in(d.cause_text):
        return "explicit"
    return "implied" if d.claim_text.strip() else "none"


def mechanism_matched(qid: str, case: Case) -> Ruling:
    """Yes iff the diagnosis states a mutation of the truth's fault family (a category such as
    "a TLS issue" or "a configuration problem" is not enough). The mechanism is what the
    diagnosis claims as the cause; words it only uses elsewhere (an observed metric, a quoted
    log line) name no mechanism."""
    ruling = case.memo.get("mechanism_matched")
    if ruling is None:
        ruling = case.memo["mechanism_matched"] = _mechanism_matched(qid, case)
    if ruling.answer.question_id == qid:
        return ruling
    return Ruling(ruling.answer.model_copy(update={"question_id": qid}), ruling.basis)


def _mechanism_matched(qid: str, case: Case) -> Ruling:
    d, truth = case.diagnosis, case.truth
    basis = basis_of(case, claim=_text_claim(case))
    if d.no_fault or not d.claim_text.strip():
        return no(qid, basis=basis)
    keywords = case.spec.mechanism_keywords
    if keywords:
        hits = text_match.found_any(d.claim_text, keywords)
        if len(hits) >= math.ceil(len(keywords) / 2):
            return yes(qid, quote_term(d, hits[0]), basis=basis)
    said = _SEPARATORS.sub("", d.claim_text)
    code = next((c for c in sorted(truth.codes) if c in said), None)
    if code is not None:
        return yes(qid, "", basis=basis)
    if not truth.families:
        return _by_shared_words(qid, case)
    claimed = mechanism_families(d)
    for family in sorted(truth.families & claimed):
        if _same_variant(family, truth, d) and _same_level(truth, d):
            conflicting = bool(claimed - truth.families - _related(truth))
            basis = basis_of(case, claim=basis.claim, conflicting=conflicting)
            return yes(qid, _family_quote(d, family), "Medium", basis)
    if truth.families_inferred:
        return _by_shared_words(qid, case)
    return no(qid, "", "Medium", basis)


_SEPARATORS = re.compile(r"[\s_-]+")


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
    basis = basis_of(case, claim="implied" if shared else "none")
    if len(shared) >= 2:
        return yes(qid, quote_term(case.diagnosis, shared[0]), "Low", basis)
    return no(qid, "", "Low", basis)


def parameters_named(qid: str, case: Case) -> Ruling:
    """Yes iff the diagnosis states one of the truth's concrete details (a value, beside its key
    when it is a one-digit number; or the key itself) without a different value for that key."""
    d, truth = case.diagnosis, case.truth
    if d.no_fault:
        return no(qid, basis=basis_of(case))
    if truth.labelled:
        return _label_detail(qid, case)
    if truth.values:
        hits = values.matching(truth.values, d.claim_text)
        if hits:
            return yes(qid, d.claim_quote(hits[0][1]), basis=basis_of(case, claim="explicit"))
        return no(qid, "", "Medium", basis_of(case))
    if mechanism_matched(qid, case).answer.answer == "Yes":
        implied = basis_of(case, claim="implied")
        concrete = values.CONCRETE.search(d.text)
        if concrete:
            return yes(qid, d.quote(concrete.start(), concrete.end()), "Low", implied)
        shared = _shared_words(case)
        if len(shared) >= 2:
            return yes(qid, quote_term(d, shared[0]), "Low", implied)
    return no(qid, "", "Low", basis_of(case))


def _label_detail(qid: str, case: Case) -> Ruling:
    """A label row's details are its fault type on its entity and its time: Yes when the
    diagnosis puts the truth's fault type on the origin, or states the root cause's occurrence
    time within the tolerance (the type on another component, or the entity alone, is not)."""
    d = case.diagnosis
    for at in times.stated_occurrences(d.low, case.truth.times):
        if d.role_at(at) not in NOT_CLAIMED - {"context"}:
            return yes(qid, d.quote(at), basis=basis_of(case, claim="explicit"))
    hits = origin_blamed(case)
    mechanism = mechanism_matched(qid, case)
    if hits and mechanism.answer.answer == "Yes":
        basis = basis_of(case, hits[0], conflicting=mechanism.basis.conflicting)
        return yes(qid, mechanism.answer.evidence or case.quote(hits[0]), "Medium", basis)
    blamed = d.blamed[:1]
    evidence = mechanism.answer.evidence or (case.quote(blamed[0]) if blamed else "")
    return no(qid, evidence or "", "Medium", basis_of(case, blamed[0] if blamed else None))


def fault_type_consistent(qid: str, case: Case) -> Ruling:
    """Yes iff the diagnosis characterises the fault (a family, a category, or a generic
    "configuration problem") and that characterisation fits the truth's fault type. Related
    mechanisms of one fault (a port mismatch and the missing file behind it) do not conflict:
    one fitting family is enough. Where neither names a family or a category (`kube proxy
    unavailable`), the diagnosis fits when it shares the truth's mechanism words; and a
    diagnosis stating the truth's own mechanism (D2-Q1) characterises it consistently."""
    if case.diagnosis.no_fault:
        return no(qid, basis=basis_of(case))
    ruling = _fault_type_fits(qid, case)
    if ruling.answer.answer == "No":
        same = mechanism_matched(qid, case)
        if same.answer.answer == "Yes":
            return same
    return ruling


def _fault_type_fits(qid: str, case: Case) -> Ruling:
    d, truth = case.diagnosis, case.truth
    families, categories, generic = claimed_families(d)
    claim = _text_claim(case)
    if families:
        fitting = [
            f for f in sorted(families) if taxonomy.compatible(f, truth.families | truth.categories)
        ]
        if fitting:
            basis = basis_of(case, claim=claim, conflicting=len(fitting) < len(families))
            return yes(qid, _family_quote(d, fitting[0]), "Medium", basis)
        if truth.families:
            basis = basis_of(case, claim=claim)
            return no(qid, _family_quote(d, sorted(families)[0]), "Medium", basis)
        return _by_shared_words(qid, case)
    if not (families or categories or generic) and d.category.text:
        families, categories, generic = _categorised(d.category.text)
        families, categories = set(), families | categories
    vague = basis_of(case, claim="implied")
    if categories & (truth.families | truth.categories) or generic & truth.groups:
        return yes(qid, "", "Low", vague)
    category_groups = {taxonomy.FAMILY[c].group for c in categories}
    if category_groups & truth.groups & taxonomy.CONFIGURED_GROUPS or taxonomy.vaguely_configured(
        generic, truth.groups
    ):
        return yes(qid, "", "Low", vague)
    unknown = truth.families_inferred or not (truth.families or truth.categories)
    if unknown and not (families or categories or generic):
        return _by_shared_words(qid, case)
    return no(qid, "", "Medium", basis_of(case))


def _categorised(text: str) -> tuple[set[str], set[str], set[str]]:
    """What an analysis answer's categories (`Authentication Issue`, `Misconfiguration`) name."""
    return (
        taxonomy.families_in(text),
        taxonomy.categories_in(text),
        taxonomy.generic_groups_in(text),
    )


def _family_quote(d: Diagnosis, family: str) -> str:
    return pattern_quote(d, taxonomy.FAMILY[family].pattern)
