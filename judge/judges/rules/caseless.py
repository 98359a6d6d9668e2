"""Case-insensitive cues searched in lowercased text without `re.IGNORECASE`, where it changes
nothing but the speed.

The cues are compiled with `re.IGNORECASE` and mostly searched in text already lowercased.
There the flag cannot change what matches, yet Python's engine then folds every character it
compares and gives up its literal-prefix scans: a clause's cues take two to four times as long.
A `Caseless` cue holds the pattern and, when nothing in it could match an uppercase letter
(each literal and range ASCII and free of `A`-`Z`, checked on the parsed pattern), a twin
compiled without the flag, which it searches instead in text that is ASCII and has no uppercase
letter. On any other text the pattern as written runs, so every match is the same.
"""

from __future__ import annotations

import re
import re._parser as parser  # type: ignore[import-not-found]  # patterns parsed
import sys
from collections.abc import Callable, Iterator
from typing import Any

from . import literals

_UPPER = range(ord("A"), ord("Z") + 1)
# The lowercase twin (None when the pattern has none), the strings it needs, the pattern as
# written: what a `Caseless` runs, made on first use.
_Prepared = tuple[re.Pattern[str] | None, tuple[str, ...] | None, re.Pattern[str]]


class Caseless:
    """A case-insensitive pattern that runs without the flag where that matches alike (see the
    module docstring), and not at all on such text when it lacks every string the pattern needs
    (`literals.needed`); the `re.Pattern` methods the rules use, with their arguments."""

    def __init__(self, pattern: str, flags: int = 0):
        self.as_written = re.compile(pattern, flags | re.IGNORECASE)
        self.pattern = pattern
        self._prepared: _Prepared | None = None

    @property
    def twin(self) -> re.Pattern[str]:
        return self._prepare()[0] or self.as_written

    @property
    def needed(self) -> tuple[str, ...] | None:
        return self._prepare()[1]

    def _prepare(self) -> _Prepared:
        """The twin, the strings it needs and the pattern as written, each behind its first
        characters where that helps (`literals.guarded`), made on first use (a process that
        imports the cues without reading a diagnosis, the run's parent, never pays for them)."""
        if self._prepared is None:
            twin = lowercase_twin(self.as_written)
            written = literals.guarded(self.as_written)
            if twin is not self.as_written:
                self._prepared = (literals.guarded(twin), literals.needed(twin), written)
            else:
                self._prepared = (None, None, written)
        return self._prepared

    def on(self, text: str) -> re.Pattern[str] | None:
        """The pattern to run on `text`; None when it cannot match there."""
        twin, needed, written = self._prepared or self._prepare()
        last = _last  # `for_text`'s answer for the last text, read here: this runs per cue
        if twin is None or not (last[1] if last[0] is text else for_text(text)):
            return written
        if needed is None:
            return twin
        for string in needed:  # a loop, not any(): this runs for every cue on every clause
            if string in text:
                return twin
        return None

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        pattern = self.on(text)
        return pattern.search(text, pos, endpos) if pattern else None

    def match(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        pattern = self.on(text)
        return pattern.match(text, pos, endpos) if pattern else None

    def fullmatch(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        pattern = self.on(text)
        return pattern.fullmatch(text, pos, endpos) if pattern else None

    def finditer(
        self, text: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> Iterator[re.Match[str]]:
        pattern = self.on(text)
        return pattern.finditer(text, pos, endpos) if pattern else iter(())

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str, count: int = 0) -> str:
        pattern = self.on(text)
        return pattern.sub(repl, text, count) if pattern else text


def lowercase_twin(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """`pattern` without `re.IGNORECASE` when that matches alike in lowercase ASCII text (see
    the module docstring); else `pattern` itself."""
    if not pattern.flags & re.IGNORECASE or not _caseless(parser.parse(pattern.pattern)):
        return pattern
    return re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)


_last: tuple[str, bool] = ("", False)


def for_text(text: str) -> bool:
    """Whether a lowercase twin matches in `text` as its pattern does: ASCII, nothing uppercase.
    The rules search one diagnosis for cue after cue, passing the same string with other
    offsets: the answer for the last string is kept, so a long text is read once, not per cue."""
    global _last
    last = _last
    if last[0] is text:
        return last[1]
    answer = text.isascii() and (text.islower() or text == text.lower())
    _last = (text, answer)
    return answer


def _caseless(items: Any) -> bool:
    """No literal or range in the parsed pattern `items` can match an uppercase or non-ASCII
    letter (what `re.IGNORECASE` would fold to a lowercase ASCII one)."""
    for op, av in items:
        if op in (parser.LITERAL, parser.NOT_LITERAL):
            if av > 0x7F or av in _UPPER:
                return False
        elif op is parser.RANGE:
            low, high = av
            if high > 0x7F or (low <= _UPPER[-1] and high >= _UPPER[0]):
                return False
        elif op is parser.IN:
            if not _caseless(av):
                return False
        elif not all(_caseless(sub) for sub in _nested(av)):
            return False
    return True


def _nested(av: Any) -> list[Any]:
    """The sub-patterns held in an item's argument (a group, a branch, a repeat, an assertion)."""
    if isinstance(av, parser.SubPattern):
        return [av]
    if isinstance(av, (tuple, list)):
        return [p for a in av for p in _nested(a)]
    return []
