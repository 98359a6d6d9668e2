"""A spec and a diagnosis, each parsed once, and what every question's rule shares: the
answers it gives (Yes only with a quote from the diagnosis), what an answer rests on (`Basis`),
which blamed components are the origin or not involved, and the quotes for a term or a pattern.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ground_truth.models import IncidentSpec

from ...checklist.judgment import QuestionAnswer
from . import names
from .basis import Basis, Claim, NameMatch, Ruling
from .diagnosis import Diagnosis, Mention, parse_diagnosis
from .size import SizePolicy
from .truth import Truth, parse_truth, same


@dataclass
class Case:
    """A spec and a diagnosis, each parsed once; every rule reads these."""

    spec: IncidentSpec
    truth: Truth
    diagnosis: Diagnosis
    memo: dict[str, Ruling] = field(default_factory=dict, repr=False)
    """Rulings one rule asks of another (D2-Q3 of D2-Q1), kept for the case."""

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


def yes(qid: str, evidence: str, confidence: str = "High", basis: Basis | None = None) -> Ruling:
    answer = QuestionAnswer(
        question_id=qid,
        answer="Yes",
        evidence=evidence,
        confidence=confidence,  # type: ignore[arg-type]
    )
    return Ruling(answer, basis or Basis())


def no(
    qid: str, evidence: str = "", confidence: str = "High", basis: Basis | None = None
) -> Ruling:
    answer = QuestionAnswer(
        question_id=qid,
        answer="No",
        evidence=evidence,
        confidence=confidence,  # type: ignore[arg-type]
    )
    return Ruling(answer, basis or Basis())


def unscored(qid: str, reason: str, basis: Basis | None = None) -> Ruling:
    return Ruling(QuestionAnswer(question_id=qid, unscored_reason=reason), basis or Basis())


def basis_of(
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


def origin_blamed(case: Case) -> list[Mention]:
    return [m for m in case.diagnosis.blamed if m.origin]


def wrongly_blamed(case: Case) -> list[Mention]:
    return case.diagnosis.wrongly_blamed(case.involved)


def quote_term(d: Diagnosis, term: str) -> str:
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


def pattern_quote(d: Diagnosis, pattern: re.Pattern[str]) -> str:
    """The quote for the first match of `pattern` in the claim (else anywhere in the text)."""
    hit = pattern.search(d.claim_text)
    if hit:
        return d.claim_quote(hit.start())
    hit = pattern.search(d.low)
    return d.quote(hit.start(), hit.end()) if hit else ""
