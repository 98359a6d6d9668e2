"""The strings a pattern cannot match without, so that a search that cannot succeed is skipped.

The rules search each clause of a diagnosis for a dozen cues, and most find nothing: Python's
engine tries a cue at every offset, `str.__contains__` scans for a string far faster.
`needed(pattern)` reads the parsed pattern for strings one of which every match must hold (a
run of literal characters in its top-level sequence, or one per alternative of a required
group); `caseless.Caseless` skips a search in text holding none of them. It is a necessary
condition only: a pattern whose strings are present is searched as before, so every match is
the same. (The taxonomy's families are searched without it: their strings are many and short,
their texts short, and checking the strings cost more than the searches it saved.)
"""

from __future__ import annotations

import re
import re._parser as parser  # type: ignore[import-not-found]  # patterns parsed
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
