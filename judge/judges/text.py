"""Keyword matching for the offline rules judge (`a|b` alternatives, stems, plurals)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from .rules.names import mentions

__all__ = ["found_any", "mentions", "term_found"]


def term_found(text: str, term: str) -> str | None:
    """Whether a keyword (with `a|b` alternatives) occurs; returns the matching alternative."""
    low = text.lower()
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


def found_any(text: str, terms: Iterable[str]) -> list[str]:
    """The matching alternative of each term that occurs in `text` (see `term_found`)."""
    return [hit for term in terms if (hit := term_found(text, term))]
