"""Offsets into a diagnosis that stay true: a same-length lowercase copy, verbatim quotes cut at
word boundaries, texts joined from pieces that remember where each piece came from, and
sentences cut into bounded pieces so that no rule ever scans more than a bounded window.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

QUOTE_WIDTH = 160
# A sentence longer than this (pasted logs with no full stop) is read in pieces of this size,
# cut at whitespace: every per-clause rule then scans a bounded window, so the work is linear.
MAX_PIECE = 1200
# How far a quote looks back and ahead for the sentence around its match.
_REACH = 4 * QUOTE_WIDTH
_SENTENCE_STOP = re.compile(r"[.!?](?=\s)|\n")
_SPACE = re.compile(r"\s")


def lower_same_length(text: str) -> str:
    """`text.lower()` with every offset unchanged (a character whose lowercase is longer, such
    as `İ`, is kept as it is)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(lower if len(lower := c.lower()) == 1 else c for c in text)


def quote_span(text: str, at: int, end: int, width: int = QUOTE_WIDTH) -> tuple[int, int]:
    """`[start, stop)` of the sentence of `text` holding `[at, end)`, stripped, cut to about
    `width` characters around the match when longer. Both ends fall on word boundaries: the
    cut is made at whitespace, never inside a word."""
    if not text:
        return 0, 0
    at = min(max(at, 0), len(text) - 1)
    end = min(max(end, at + 1), len(text))
    start = _sentence_start(text, at)
    stop = _sentence_stop(text, end)
    if stop - start > width:
        start = _word_start(text, max(start, at - width // 4), at)
        stop = _word_stop(text, min(stop, max(end, start + width)), end)
    while start < stop and text[start].isspace():
        start += 1
    while stop > start and text[stop - 1].isspace():
        stop -= 1
    return start, stop


def _sentence_start(text: str, at: int) -> int:
    lo = max(0, at - _REACH)
    start = lo
    for match in _SENTENCE_STOP.finditer(text, lo, at):
        start = match.end()
    return start


def _sentence_stop(text: str, end: int) -> int:
    match = _SENTENCE_STOP.search(text, end, end + _REACH)
    if match is None:
        return min(len(text), end + _REACH)
    return match.end() if match.group() != "\n" else match.start()


def _word_start(text: str, at: int, limit: int) -> int:
    """The first word start at or after `at` (not past `limit`)."""
    if at == 0 or text[at - 1].isspace():
        return at
    space = _SPACE.search(text, at, limit)
    return space.end() if space else limit


def _word_stop(text: str, at: int, limit: int) -> int:
    """The last word end at or before `at` (not before `limit`)."""
    if at >= len(text) or text[at].isspace():
        return at
    found = max(
        text.rfind(" ", limit, at), text.rfind("\n", limit, at), text.rfind("\t", limit, at)
    )
    if found >= limit:
        return found
    space = _SPACE.search(text, at, at + _REACH)
    return space.start() if space else min(len(text), at + _REACH)


@dataclass
class Joined:
    """Pieces of a text joined with spaces, each remembering the offset it was taken from."""

    text: str = ""
    starts: list[int] = field(default_factory=list)
    origins: list[int] = field(default_factory=list)

    @classmethod
    def of(cls, source: str, spans: list[tuple[int, int]]) -> Joined:
        parts, starts, origins, at = [], [], [], 0
        for start, end in spans:
            parts.append(source[start:end])
            starts.append(at)
            origins.append(start)
            at += end - start + 1
        return cls(" ".join(parts), starts, origins)

    def origin(self, at: int) -> int:
        """The offset in the source of offset `at` of the joined text."""
        i = bisect.bisect_right(self.starts, at) - 1
        if i < 0:
            return 0
        return self.origins[i] + (at - self.starts[i])


def pieces(text: str, start: int, end: int, size: int = MAX_PIECE) -> list[tuple[int, int]]:
    """`[start, end)` cut at whitespace into pieces of at most about `size` characters."""
    out = []
    while end - start > size:
        lo, hi = start + size // 2, start + size
        cut = max(text.rfind(" ", lo, hi), text.rfind("\n", lo, hi))
        cut = cut if cut > start else start + size
        out.append((start, cut))
        start = cut
    out.append((start, end))
    return out
