"""The rules that read which components the diagnosis names and blames: D1 (is the origin
blamed, apart from its victims, and nothing healthy beside it) and D3's scope (nothing
uninvolved blamed; every component the truth lists named in a fitting role).
"""

from __future__ import annotations

from ground_truth.models import ComponentRef

from . import names
from .basis import Ruling
from .case import (
    Case,
    basis_of,
    no,
    origin_blamed,
    unscored,
    wrongly_blamed,
    yes,
)
from .diagnosis import Mention
from .truth import same


def origin_named(qid: str, case: Case) -> Ruling:
    """Yes iff the diagnosis blames an origin component (in the truth's namespace) as faulty."""
    if not case.truth.origins:
        return unscored(qid, "the ground truth names no fault origin", basis_of(case))
    hits = origin_blamed(case)
    if hits and not case.diagnosis.no_fault:
        conflicting = bool(wrongly_blamed(case))
        return yes(qid, case.quote(hits[0]), basis=basis_of(case, hits[0], conflicting=conflicting))
    named = [m for m in case.diagnosis.mentions if m.origin]
    basis = basis_of(case, named[0]) if named else basis_of(case)
    return no(qid, case.quote(named[0]) if named else "", "Medium" if named else "High", basis)


def origin_distinguished(qid: str, case: Case) -> Ruling:
    """Yes iff the origin is blamed and no victim or other component is blamed beside it."""
    if not case.truth.origins:
        return unscored(qid, "the ground truth names no fault origin", basis_of(case))
    hits = origin_blamed(case)
    if not hits or case.diagnosis.no_fault:
        return no(qid, basis=basis_of(case))
    victims = [m for m in wrongly_blamed(case) if _is_victim(case, m)]
    if victims:
        basis = basis_of(case, victims[0], conflicting=True)
        return no(qid, case.quote(victims[0]), "Medium", basis)
    return yes(qid, case.quote(hits[0]), basis=basis_of(case, hits[0]))


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
        return unscored(qid, "the ground truth names no fault origin", basis_of(case))
    blamed = case.diagnosis.blamed
    if not blamed or case.diagnosis.no_fault:
        return no(qid, "", "Medium", basis_of(case))
    wrong = wrongly_blamed(case)
    if wrong:
        conflicting = bool(origin_blamed(case))
        return no(
            qid, case.quote(wrong[0]), basis=basis_of(case, wrong[0], conflicting=conflicting)
        )
    return yes(qid, case.quote(blamed[0]), "Medium", basis_of(case, blamed[0]))


def no_uninvolved_component_blamed(qid: str, case: Case) -> Ruling:
    """Yes iff the diagnosis blames something and blames no component outside the origin and
    the truth's contributing components (victims named as affected are fine)."""
    return _only_involved_blamed(qid, case)


def all_components_named(qid: str, case: Case) -> Ruling:
    """Yes iff every component the truth lists (origins, contributing, affected) is mentioned in
    the truth's namespace and not called healthy."""
    truth, d = case.truth, case.diagnosis
    if not truth.listed:
        return unscored(qid, "the ground truth lists no components", basis_of(case))
    if d.no_fault or not origin_blamed(case):
        return no(qid, basis=basis_of(case))
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
            return no(qid, "", "Medium", basis_of(case))
        last = mentions[0] if mentions else last
    basis = basis_of(case, last, claim="mention") if last else basis_of(case, claim="mention")
    return yes(qid, case.quote(last) if last else "", basis=basis)


def _named_as_value(case: Case, component: ComponentRef) -> bool:
    """A victim written as an address (`PRODUCT_CATALOG_ADDR=product-catalog:8082`) is named."""
    if any(same(component, o) for o in case.truth.origins):
        return False
    roles = {m.start: m.role for m in case.diagnosis.mentions}
    return any(
        roles.get(at) not in {"exonerated", "listed"}
        for at in names.find(case.diagnosis.low, component)
    )
