"""What a judge reads of a huge diagnosis: a size policy, and the excerpt it gives.

An agent that pastes its logs can hand in megabytes. The rules judge reads a diagnosis in time
linear in its length, but a policy still says how much it reads: by default the first and the
last 512 KiB characters of a longer text (an agent states its conclusion first or last, the
pasted logs sit in between), cut at line breaks so that no sentence is glued to another. What
was read is never silent: `Excerpt.note` says it, and the rules judge adds that note to every
answer it gives on a cut diagnosis.

The policy is a small pydantic model so that another judge (the llm judge's context window)
can reuse it: `SizePolicy(max_chars=...).apply(text)`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_MAX_CHARS = 1 << 20
# A cut is moved back (or forward) to a line break, or else a space, at most this far.
SNAP_REACH = 2000
JOIN = "\n"


class Excerpt(BaseModel):
    """The text a judge reads, and which spans `[start, end)` of the original it holds."""

    model_config = ConfigDict(frozen=True)

    text: str
    total_chars: int
    spans: tuple[tuple[int, int], ...]

    @property
    def cut(self) -> bool:
        return sum(end - start for start, end in self.spans) < self.total_chars

    @property
    def note(self) -> str:
        """What was read, in words (empty when everything was)."""
        if not self.cut:
            return ""
        parts = [f"characters {start:,}-{end:,}" for start, end in self.spans]
        return f"size policy: read {' and '.join(parts)} of {self.total_chars:,}; the rest was not read"


class SizePolicy(BaseModel):
    """How much of a diagnosis a judge reads.

    `max_chars` None reads everything. Otherwise a longer text is cut to `max_chars`
    characters: its start only (`keep="head"`), or its start and its end (`keep="head_tail"`,
    the default), `head_share` of the budget going to the start.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_chars: int | None = Field(DEFAULT_MAX_CHARS, gt=0)
    keep: Literal["head", "head_tail"] = "head_tail"
    head_share: float = Field(0.5, gt=0, le=1)

    def apply(self, text: str) -> Excerpt:
        """The part of `text` this policy reads."""
        total = len(text)
        if self.max_chars is None or total <= self.max_chars:
            return Excerpt(text=text, total_chars=total, spans=((0, total),))
        head_budget = (
            self.max_chars if self.keep == "head" else int(self.max_chars * self.head_share)
        )
        head_end = _snap_back(text, head_budget)
        if self.keep == "head" or head_budget >= self.max_chars:
            return Excerpt(text=text[:head_end], total_chars=total, spans=((0, head_end),))
        tail_start = max(head_end, _snap_forward(text, total - (self.max_chars - head_budget)))
        if tail_start >= total:
            return Excerpt(text=text[:head_end], total_chars=total, spans=((0, head_end),))
        return Excerpt(
            text=text[:head_end] + JOIN + text[tail_start:],
            total_chars=total,
            spans=((0, head_end), (tail_start, total)),
        )


def _snap_back(text: str, at: int) -> int:
    """`at`, moved back to just after a line break (else a space) within reach."""
    for separator in ("\n", " "):
        found = text.rfind(separator, max(0, at - SNAP_REACH), at)
        if found > 0:
            return found + 1
    return at


def _snap_forward(text: str, at: int) -> int:
    """`at`, moved forward to just after a line break (else a space) within reach."""
    for separator in ("\n", " "):
        found = text.find(separator, at, at + SNAP_REACH)
        if found >= 0:
            return found + 1
    return at
