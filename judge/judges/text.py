"""Text matching for the offline rules judge: component names, keywords, cause clauses."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from ground_truth.models import ComponentRef

_SUFFIXES = r"(?:[-_ ]?(?:service|svc|deployment|deploy|pod|pods|server|container))?"
_POD_HASH = r"(?:-(?=[a-z]*\d)[a-z0-9]{1,10}){0,2}"
_AFTER_CUES = re.compile(
    r"\bcaused by\b|\bbecause\b|\bdue to\b|\bresult of\b|\bsince\b|\bstems from\b", re.I
)
_SENTENCE_CUES = re.compile(
    r"\broot[- ]?cause\b|\bmisconfigur|\bis configured\b|\bhas been configured\b|\bconfigured with\b"
    r"|\bpoints to\b|\bis missing\b|\blacks\b|\bfault(?:y)? (?:is|lies)\b|\bthe culprit\b"
    r"|\bresponsible\b|\bis set to\b|\bwas changed\b|\bwas modified\b",
    re.I,
)
_EXONERATING = re.compile(
    r"(?<!not )(?<!n't )\bhealthy\b|\b(?:is|are|looks?|seems?) fine\b|\bnot the (?:root )?cause\b"
    r"|\bnot the problem\b|\bunaffected\b|\brecovered\b|\bruled out\b|\bno errors\b"
    r"|\bworking (?:fine|normally)\b|\bfunctioning normally\b",
    re.I,
)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


def normalize(text: str) -> str:
    return text.lower()


@lru_cache(maxsize=4096)
def name_pattern(name: str) -> re.Pattern[str]:
    """Match a component name as people write it: `product-catalog`, `product catalog`,
    `productcatalog`, `product-catalog-service`, a pod `product-catalog-7d9f8-x2k1p`, or
    `ns/Deployment/product-catalog`; but not `mongodb-product-catalog` or `product-catalog-db`."""
    parts = [re.escape(p) for p in re.split(r"[-_\s.]+", name.lower()) if p]
    body = r"[-_ ]?".join(parts)
    return re.compile(rf"(?<![a-z0-9-]){body}{_SUFFIXES}{_POD_HASH}(?![a-z0-9-])")


def mentions(text: str, component: ComponentRef) -> bool:
    low = normalize(text)
    return any(name_pattern(n).search(low) for n in component.all_names())


def first_mention(text: str, component: ComponentRef) -> int | None:
    low = normalize(text)
    hits = [m.start() for n in component.all_names() if (m := name_pattern(n).search(low))]
    return min(hits) if hits else None


def term_found(text: str, term: str) -> str | None:
    """Whether a keyword (with `a|b` alternatives) occurs; returns the matching alternative."""
    low = normalize(text)
    for alternative in term.split("|"):
        alt = alternative.strip().lower()
        if alt and _term_regex(alt).search(low):
            return alternative.strip().rstrip("*")
    return None


@lru_cache(maxsize=4096)
def _term_regex(term: str) -> re.Pattern[str]:
    """`a-b` also matches `a b` and `ab`, and a plural; a trailing `*` makes a stem (`throttl*`)."""
    stem = term.endswith("*")
    term = term.rstrip("*")
    flexible = r"[-_ ]?".join(re.escape(p) for p in re.split(r"[-_\s]+", term) if p)
    left = r"(?<![a-z0-9])" if term[:1].isalnum() else ""
    right = r"(?:e?s)?(?![a-z0-9])" if term[-1:].isalnum() and not stem else ""
    return re.compile(left + flexible + right)


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text) if s.strip()]


def without_exonerations(text: str) -> str:
    """Drop sentences that call something healthy: naming a component there does not blame it."""
    return " ".join(s for s in sentences(text) if not _EXONERATING.search(s))


def cause_clauses(text: str) -> list[str]:
    """The parts of a diagnosis that say what caused the incident.

    A sentence with "root cause", "misconfigured", "points to", ... counts whole; in a sentence
    with "because", "due to", "caused by", ... only the text after the cue counts (what comes
    before it is the symptom). When nothing has a cue, the whole diagnosis stands for the claim.
    """
    clauses = []
    for sentence in sentences(text):
        if _SENTENCE_CUES.search(sentence):
            clauses.append(sentence)
        elif cue := _AFTER_CUES.search(sentence):
            clauses.append(sentence[cue.end() :])
    return clauses or [text]


def quote_around(text: str, needle_at: int, width: int = 120) -> str:
    start = max(0, text.rfind(".", 0, needle_at) + 1)
    end = text.find(".", needle_at)
    end = len(text) if end == -1 else end + 1
    return text[start:end].strip()[:width]


def found_any(text: str, terms: Iterable[str]) -> list[str]:
    return [hit for term in terms if (hit := term_found(text, term))]
