"""The strings a pattern cannot match without, so that a search that cannot succeed is skipped.

The rules search each clause of a diagnosis for a dozen cues, and most find nothing: Python's
engine tries a cue at every offset, `str.__contains__` scans for a string far faster.
`needed(pattern)` reads the parsed pattern for strings one of which every match must hold (a
run of literal characters in its top-level sequence, or one per alternative of a required
group); `caseless.Caseless` skips a search in text holding none of them. It is a necessary
condition only: a pattern whose strings are present is searched as before, so every match is
the same. (The taxonomy's families are searched without it: their strings are many and short,
their texts short, and checking the strings cost more than the searches it saved.)
`first_characters(pattern)` reads the characters a match can begin with, by which
`vocabulary.Vocabulary` tries a family only where its first character stands, and `guarded`
puts them in front of a pattern that opens with a word boundary, a lookaround or alternatives
not all opening with a character, which keeps the engine from its own scan for a first
character: it then tries every alternative at every offset, where the guard turns most offsets
away at one character's test.
"""

from __future__ import annotations

import re
import re._parser as parser  # type: ignore[import-not-found]  # patterns parsed
from collections.abc import Iterable
from typing import Any

_REPEATS = (parser.MAX_REPEAT, parser.MIN_REPEAT, parser.POSSESSIVE_REPEAT)


def needed(pattern: re.Pattern[str]) -> tuple[str, ...] | None:
    """Strings one of which is in every text `pattern` matches in; None when none can be told
    (a pattern ignoring case: its literals stand for other strings too)."""
    if pattern.flags & re.IGNORECASE:
        return None
    found = _sequence(parser.parse(pattern.pattern, pattern.flags))
    return tuple(sorted(found)) if found else None


def _sequence(items: Any) -> frozenset[str] | None:
    """For a sequence of parsed items: the most selective of the requirements its items make
    (the longest shortest string), or None when no item makes one."""
    best: frozenset[str] | None = None
    run: list[str] = []

    def consider(option: frozenset[str] | None) -> None:
        nonlocal best
        if option and (best is None or min(map(len, option)) > min(map(len, best))):
            best = option

    for op, av in items:
        if op is parser.LITERAL:
            run.append(chr(av))
            continue
        consider(frozenset({"".join(run)}) if run else None)
        run = []
        consider(_item(op, av))
    consider(frozenset({"".join(run)}) if run else None)
    return best


def _item(op: Any, av: Any) -> frozenset[str] | None:
    """What one item that must match requires; None when it requires nothing we can tell."""
    if op is parser.SUBPATTERN:
        _, add_flags, _, sub = av
        return None if add_flags & re.IGNORECASE else _sequence(sub)
    if op is parser.ATOMIC_GROUP:
        return _sequence(av)
    if op in _REPEATS:
        low, _, sub = av
        return _sequence(sub) if low >= 1 else None
    if op is parser.BRANCH:
        options = [_sequence(alternative) for alternative in av[1]]
        if any(option is None for option in options):
            return None
        return frozenset().union(*(o for o in options if o is not None))
    return None


def first_characters(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """Every character a match of `pattern` can begin with; None when that cannot be told (a
    class such as `\\w`, any character, ignoring case, or a pattern that can match nothing)."""
    if pattern.flags & re.IGNORECASE:
        return None
    found = _first(parser.parse(pattern.pattern, pattern.flags))
    return None if found is None or found[1] else frozenset(found[0])


def _first(items: Any) -> tuple[set[str], bool] | None:
    """The first characters of a sequence of parsed items, and whether it can match nothing."""
    chars: set[str] = set()
    for op, av in items:
        if op in (parser.AT, parser.ASSERT, parser.ASSERT_NOT):
            continue  # consumes nothing: the first character comes after it
        if op is parser.LITERAL:
            return chars | {chr(av)}, False
        if op is parser.IN:
            inside = _in(av)
            return None if inside is None else (chars | inside, False)
        if op is parser.SUBPATTERN:
            if av[1] & re.IGNORECASE:
                return None
            options = [av[3]]
        elif op is parser.BRANCH:
            options = av[1]
        elif op in _REPEATS:
            options = [av[2]] if av[0] >= 1 else [av[2], []]
        else:
            return None
        found = [_first(option) for option in options]
        if any(f is None for f in found):
            return None
        chars.update(*(f[0] for f in found if f is not None))
        if not any(f[1] for f in found if f is not None):
            return chars, False
    return chars, True


def _in(items: Any) -> set[str] | None:
    """The characters of a class made of characters and small ranges; None for any other."""
    chars: set[str] = set()
    for op, av in items:
        if op is parser.LITERAL:
            chars.add(chr(av))
        elif op is parser.RANGE and av[1] - av[0] < 256:
            chars.update(map(chr, range(av[0], av[1] + 1)))
        elif op is parser.CATEGORY and av is parser.CATEGORY_SPACE:
            chars.update(WHITESPACE)
        else:
            return None
    return chars


_ZERO_WIDTH = (parser.AT, parser.ASSERT, parser.ASSERT_NOT)
# What `\s` matches in a str pattern: the characters `str.isspace` holds (both ask
# Py_UNICODE_ISSPACE; a test checks every code point).
WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def _scanned(items: Any) -> bool:
    """Whether the engine scans for the start of the parsed pattern `items` by itself: it opens
    with a character, a class, or alternatives that each open with a character (through groups)."""
    if not items.data:
        return False
    op, av = items.data[0]
    if op is parser.SUBPATTERN:
        return _scanned(av[3])
    if op is parser.BRANCH:
        return all(a.data and a.data[0][0] is parser.LITERAL for a in av[1])
    return op in (parser.LITERAL, parser.IN)


def any_of(chars: Iterable[str]) -> str:
    """A character class holding `chars`."""
    return "[" + "".join(re.escape(c) for c in sorted(chars)) + "]"


def word_starts(chars: Iterable[str], before: str) -> re.Pattern[str]:
    """Where a match of a pattern opening with `(?<!{before})` and beginning with one of
    `chars` can begin: one of them not preceded by a character of `before` (a character class).
    The engine scans fast for a first character, not for a lookbehind: one scan with this finds
    the few offsets to try such patterns at."""
    return re.compile(f"{any_of(chars)}(?<!{before}.)", re.DOTALL)


def guarded(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """`pattern` behind a lookahead for its first characters when the engine would not scan
    for its start by itself (see `_scanned`) and they can be told; else `pattern` itself. The
    guard consumes nothing and holds wherever a match begins: every match is the same (under
    `re.IGNORECASE` too: the guard's characters fold as the pattern's literals do)."""
    items = parser.parse(pattern.pattern, pattern.flags & ~re.IGNORECASE)
    if not items.data:
        return pattern
    found = None if _scanned(items) else _first(items)
    if found is None or found[1]:
        return pattern
    return re.compile(f"(?={any_of(found[0])})(?:{pattern.pattern})", pattern.flags)
