"""Which of many named patterns occur in a text, in one pass over it instead of one search each.

The taxonomy's families (and its categories, generic groups and impacts) are each a pattern that
opens with a lookbehind, `(?<![a-z0-9])`, which keeps Python's engine from its fast scan for a
first character: searching a clause for forty families tried forty patterns at every offset. A
`Vocabulary` finds the offsets where a word starts with a character some pattern can begin with
(one scan, `literals.first_characters`) and tries there only the patterns that can begin
with that character (one pattern joining them all was measured faster per text but cost more
to compile, once per process, than a run of a few thousand texts saved). A pattern whose first
characters cannot be told is searched as before. Every pattern matches where it did: the set of
names found is the set of patterns whose `search` succeeds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .literals import first_characters, word_starts

_PLAIN = re.compile("").flags


Named = list[tuple[str, re.Pattern[str]]]


class Vocabulary:
    """Named patterns, each of which opens with `(?<!{before})`, `before` a character class.
    What it reads the patterns for is made on first use: a process that imports the taxonomy
    without judging (the run's parent) pays nothing."""

    def __init__(self, named: Iterable[tuple[str, re.Pattern[str]]], before: str):
        self._named = list(named)
        self._before = before
        for _, pattern in self._named:
            if not pattern.pattern.startswith(f"(?<!{before})"):
                raise ValueError(f"{pattern.pattern!r} does not open with (?<!{before})")
        self._read: tuple[Named, dict[str, Named], re.Pattern[str] | None] | None = None

    def _reading(self) -> tuple[Named, dict[str, Named], re.Pattern[str] | None]:
        """The patterns searched whole, the others by first character, and the scan for the
        characters that may begin a match not preceded by one of `before`."""
        if self._read is None:
            searched: Named = []
            by_first: dict[str, Named] = {}
            for name, pattern in self._named:
                chars = first_characters(pattern) if pattern.flags == _PLAIN else None
                if chars is None:
                    searched.append((name, pattern))
                for char in chars or ():
                    by_first.setdefault(char, []).append((name, pattern))
            starts = word_starts(by_first, self._before) if by_first else None
            self._read = (searched, by_first, starts)
        return self._read

    def present(self, text: str) -> frozenset[str]:
        """The names of the patterns that match somewhere in `text`."""
        searched, by_first, starts = self._read or self._reading()
        found = {name for name, pattern in searched if pattern.search(text)}
        if starts is None:
            return frozenset(found)
        for start in starts.finditer(text):
            at = start.start()
            for name, pattern in by_first[text[at]]:
                if name not in found and pattern.match(text, at):
                    found.add(name)
        return frozenset(found)
