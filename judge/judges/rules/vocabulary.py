"""Which of many named patterns occur in a text, in one pass over it instead of one search each.

The taxonomy's families (and its categories, generic groups and impacts) are each a pattern that
opens with a lookbehind, `(?<![a-z0-9])`, which keeps Python's engine from its fast scan for a
first character: searching a clause for forty families tried forty patterns at every offset. A
`Vocabulary` finds the offsets where a word starts with a character some pattern can begin with
(one scan, `literals.first_characters`), asks all the patterns that can begin with that
character at once whether any matches there, and only then which. A pattern whose first
characters cannot be told is searched as before. Every pattern matches where it did: the set of
names found is the set of patterns whose `search` succeeds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .literals import first_characters

_PLAIN = re.compile("").flags


class Vocabulary:
    """Named patterns, each of which opens with `(?<!{before})`, `before` a character class."""

    def __init__(self, named: Iterable[tuple[str, re.Pattern[str]]], before: str):
        self._searched: list[tuple[str, re.Pattern[str]]] = []
        by_first: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
        for name, pattern in named:
            if not pattern.pattern.startswith(f"(?<!{before})"):
                raise ValueError(f"{pattern.pattern!r} does not open with (?<!{before})")
            chars = first_characters(pattern) if pattern.flags == _PLAIN else None
            if chars is None:
                self._searched.append((name, pattern))
            for char in chars or ():
                by_first.setdefault(char, []).append((name, pattern))
        self._by_first = {
            char: (re.compile("|".join(p.pattern for _, p in named)), named)
            for char, named in by_first.items()
        }
        # A character that may begin a match and is not preceded by one of `before`.
        firsts = re.escape("".join(sorted(by_first)))
        self._starts = re.compile(f"[{firsts}](?<!{before}.)", re.DOTALL) if firsts else None

    def present(self, text: str) -> frozenset[str]:
        """The names of the patterns that match somewhere in `text`."""
        found = {name for name, pattern in self._searched if pattern.search(text)}
        if self._starts is None:
            return frozenset(found)
        by_first = self._by_first
        for start in self._starts.finditer(text):
            at = start.start()
            any_of, named = by_first[text[at]]
            if any_of.match(text, at):
                for name, pattern in named:
                    if name not in found and pattern.match(text, at):
                        found.add(name)
        return frozenset(found)
