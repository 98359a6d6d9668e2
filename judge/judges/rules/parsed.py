"""A diagnosis as the rules judge reads it: role-tagged segments, the component mentions in them,
and the texts of what it blames, claims and reports; with the small look-ups every reader shares
(the segment holding an offset, the mentions by segment, the token at an offset).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from ground_truth.models import ComponentRef

from . import names
from .cues import COORDINATED
from .size import Excerpt
from .spans import QUOTE_WIDTH, Joined, quote_span
from .truth import Relation

Role = Literal["blamed", "exonerated", "effect", "mentioned", "listed", "context"]
# Roles whose text is not part of what the diagnosis claims.
NOT_CLAIMED = frozenset({"exonerated", "listed", "context"})


@dataclass
class Mention:
    """A component named in a diagnosis at `start`: its role in the clause (blamed, exonerated,
    effect, mentioned, listed or context), whether it is outside the incident (`foreign`), the
    fault's origin, blamed in so many words (`strong`), and how the name as written stands to
    the origin (`relation`: the origin itself, an instance of it, the service it is an instance
    of, a sibling instance); `inferred` when the blame was read from a cause that does not
    name it (`its logs show ...`, a failing component with no cause stated).
    """

    component: ComponentRef
    start: int
    role: Role
    foreign: bool = False
    origin: bool = False
    strong: bool = False
    relation: Relation = "none"
    inferred: bool = False
    written: str = ""


@dataclass
class Segment:
    """A span `[start, end)` of the lowercased diagnosis with one role, its clause and sentence."""

    start: int
    end: int
    role: Role
    clause: int = 0
    sentence: int = 0
    strong: bool = False
    observed: bool = False


@dataclass
class Diagnosis:
    """A diagnosis as the rules judge reads it: role-tagged segments, component mentions, the
    text of what it blames and claims, and whether it says there is no fault or is word salad.
    """

    text: str
    low: str
    segments: list[Segment]
    mentions: list[Mention] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    no_fault: bool = False
    salad: bool = False
    has_cause: bool = False
    cause: Joined = field(default_factory=Joined)
    claim: Joined = field(default_factory=Joined)
    impact: Joined = field(default_factory=Joined)
    headline: Joined = field(default_factory=Joined)
    stated_type: Joined = field(default_factory=Joined)
    category: Joined = field(default_factory=Joined)
    excerpt: Excerpt | None = None

    @property
    def cause_text(self) -> str:
        """What the diagnosis blames, lowercased: its cause segments joined."""
        return self.cause.text

    @property
    def claim_text(self) -> str:
        """What the diagnosis claims, lowercased: all but its exonerating and listed segments."""
        return self.claim.text

    @functools.cached_property
    def effect_keys(self) -> frozenset[str]:
        """The name keys (`names.keys`) of every component the diagnosis names as suffering."""
        return frozenset(
            k for m in self.mentions if m.role == "effect" for k in names.keys(m.component)
        )

    @property
    def blamed(self) -> list[Mention]:
        return [m for m in self.mentions if m.role == "blamed"]

    @property
    def positive_claim(self) -> bool:
        return bool(self.blamed)

    @property
    def origin_blamed(self) -> bool:
        return any(m.origin for m in self.blamed)

    def wrongly_blamed(self, involved: Callable[[Mention], bool]) -> list[Mention]:
        """Blamed components that are not involved. Where the origin is blamed, a component only
        weakly implicated (named in a clause that merely mentions a mechanism, or said to fail)
        is context: the fault is put at the origin, the other is its client or victim."""
        origin = self.origin_blamed
        return [
            m
            for m in self.blamed
            if not involved(m) and (m.strong or not origin or self._beside_the_origin(m))
        ]

    def _beside_the_origin(self, mention: Mention) -> bool:
        """Coordinated with a blamed origin in one clause (`frontend-0, frontend-1 and
        frontend-2 are out of memory`): blamed as much as the origin is."""
        segment = segment_of(self, mention.start)
        origins = self._blamed_origins_by_segment.get(id(segment), [])
        return any(coordinated(self, m, mention) for m in origins)

    @functools.cached_property
    def _blamed_origins_by_segment(self) -> dict[int, list[Mention]]:
        return by_segment(self, [m for m in self.mentions if m.origin and m.role == "blamed"])

    def role_at(self, at: int) -> Role | None:
        """The role of the segment holding offset `at` (None between segments)."""
        segment = segment_of(self, at)
        return segment.role if segment else None

    def quote(self, at: int, end: int | None = None, width: int = QUOTE_WIDTH) -> str:
        """The sentence holding `text[at:end]`, verbatim: cut to about `width` characters around
        it at word boundaries when longer (see `quote_span`)."""
        start, stop = quote_span(self.text, at, at if end is None else end, width)
        return self.text[start:stop]

    def claim_quote(self, at: int, width: int = QUOTE_WIDTH) -> str:
        """The quote for offset `at` of `claim_text`."""
        return self.quote(self.claim.origin(at), width=width)

    def cause_quote(self, at: int, width: int = QUOTE_WIDTH) -> str:
        """The quote for offset `at` of `cause_text`."""
        return self.quote(self.cause.origin(at), width=width)


def by_segment(diagnosis: Diagnosis, mentions: list[Mention]) -> dict[int, list[Mention]]:
    """Mentions grouped by the segment (its id) that holds them, in order."""
    grouped: dict[int, list[Mention]] = {}
    for mention in mentions:
        segment = segment_of(diagnosis, mention.start)
        if segment is not None:
            grouped.setdefault(id(segment), []).append(mention)
    return grouped


def segment_of(diagnosis: Diagnosis, at: int) -> Segment | None:
    """The segment holding offset `at` (segments are sorted and disjoint: a binary search)."""
    segments = diagnosis.segments
    i = bisect.bisect_right(diagnosis.starts, at) - 1
    if 0 <= i < len(segments) and segments[i].start <= at < segments[i].end:
        return segments[i]
    return None


_TOKEN = re.compile(r"[a-z0-9_-]+")
TOKEN_REACH = 160
# Patterns anchored at the end of a lead-in (`calls to the X`) read at most this much of it.
TAIL_REACH = 160


def token_at(low: str, start: int) -> str:
    match = _TOKEN.match(low, start, start + TOKEN_REACH)
    return match.group(0) if match else ""


def coordinated(diagnosis: Diagnosis, a: Mention, b: Mention) -> bool:
    first, second = (a, b) if a.start < b.start else (b, a)
    gap = diagnosis.low[end_of(diagnosis, first) : second.start]
    return bool(COORDINATED.match(gap))


def tail(text: str) -> str:
    """The end of `text` that a pattern anchored at its end (`... to the $`) can reach."""
    return text[-TAIL_REACH:]


def end_of(diagnosis: Diagnosis, mention: Mention) -> int:
    return mention.start + len(token_at(diagnosis.low, mention.start))
