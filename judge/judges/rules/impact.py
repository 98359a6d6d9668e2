"""The rule that reads the impact the diagnosis states (D3-Q3): a symptom the truth states or
its mechanism implies, none it rules out, and only what is said of this fault.
"""

from __future__ import annotations

from .. import text as text_match
from . import taxonomy
from .basis import Ruling
from .case import Case, basis_of, no, origin_blamed, pattern_quote, quote_term, yes
from .diagnosis import Diagnosis, claimed_families


def symptoms_matched(qid: str, case: Case) -> Ruling:
    """Yes iff the diagnosis states an impact the truth states or its mechanism implies, or,
    where the truth states none, one that follows from the diagnosis's own cause when that
    cause fits the truth's fault type. What it says only of components it rules out is not
    this fault's impact. A label row names no impact: what its fault type produces counts only
    as an impact of a fault the diagnosis puts on the truth's entity (symptoms it explains by
    another component's fault are that fault's)."""
    d, truth = case.diagnosis, case.truth
    if d.no_fault or not d.claim_text.strip():
        return no(qid, basis=basis_of(case))
    if truth.labelled and not origin_blamed(case):
        blamed = d.blamed[:1]
        evidence = case.quote(blamed[0]) if blamed else ""
        return no(qid, evidence, "Medium", basis_of(case, blamed[0] if blamed else None))
    text = d.impact.text
    stated_basis = basis_of(case, claim="explicit")
    if case.spec.symptoms:
        hits = text_match.found_any(text, case.spec.symptoms)
        if hits:
            return yes(qid, quote_term(d, hits[0]), basis=stated_basis)
    stated = taxonomy.impacts_in(taxonomy.without_denied_impacts(text))
    contradicted = taxonomy.contradicted_impacts(text, truth.impacts, truth.families)
    if contradicted:
        basis = basis_of(case, claim="explicit", conflicting=bool(stated & truth.impacts))
        return no(qid, _impact_quote(d, sorted(contradicted)[0]), "Medium", basis)
    if not truth.impacts:
        if stated:
            return yes(qid, _impact_quote(d, sorted(stated)[0]), "Low", stated_basis)
        return no(qid, "", "Low", basis_of(case))
    shared = (stated & truth.impacts) - taxonomy.BROAD_IMPACTS
    if (
        not shared
        and stated & taxonomy.BROAD_IMPACTS
        and truth.impacts & (taxonomy.BROAD_IMPACTS | {"connection", "latency"})
    ):
        shared = stated & taxonomy.BROAD_IMPACTS
    if shared:
        return yes(qid, _impact_quote(d, sorted(shared)[0]), "Medium", stated_basis)
    follows = stated & _impacts_of_a_fitting_cause(case) if not truth.stated_impacts else set()
    if follows:
        basis = basis_of(case, claim="implied")
        return yes(qid, _impact_quote(d, sorted(follows)[0]), "Low", basis)
    return no(qid, "", "Medium", basis_of(case, claim="explicit" if stated else "none"))


def _impacts_of_a_fitting_cause(case: Case) -> set[str]:
    """What the diagnosis's own cause implies, when that cause fits the truth's fault type."""
    claimed, _, _ = claimed_families(case.diagnosis)
    fitting = [
        f for f in claimed if taxonomy.compatible(f, case.truth.families | case.truth.categories)
    ]
    return {impact for f in fitting for impact in taxonomy.FAMILY[f].impacts}


def _impact_quote(d: Diagnosis, impact: str) -> str:
    hit = taxonomy.IMPACTS[impact].search(d.impact.text)
    if hit:
        return d.quote(d.impact.origin(hit.start()))
    return pattern_quote(d, taxonomy.IMPACTS[impact])
