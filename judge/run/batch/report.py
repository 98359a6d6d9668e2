"""What the batch phase did, for the result's `usage.batch` and `config.batch`, and the shards'
blocks put together by `judge merge`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class BatchReport:
    """What the batch phase did, for the result's `usage.batch` and `config.batch`."""

    provider: str
    discount: float | None
    submitted: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    lines: int = 0
    answered: int = 0
    errors: int = 0
    refused: int = 0
    """Lines the server refused for their reply format (asked again in a weaker one)."""
    lost: Counter[str] = field(default_factory=Counter)
    http_requests: int = 0
    wall_seconds: float = 0.0
    seconds: dict[str, float] = field(
        default_factory=lambda: {"submit": 0.0, "wait": 0.0, "collect": 0.0}
    )
    """Summed over batches: `submit` (build, upload, create), `wait` (created until its end
    was seen), `collect` (read, parse, store)."""
    reports: list[str] = field(default_factory=list)

    def usage(self) -> dict[str, Any]:
        return {
            "batches": self.submitted,
            "resumed": self.resumed,
            "lines": self.lines,
            "answered": self.answered,
            "errors": self.errors,
            "format_refused": self.refused,
            "lost": dict(self.lost),
            "http_requests": self.http_requests,
            "wall_seconds": round(self.wall_seconds, 3),
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
            "discount": self.discount,
            "reports": self.reports,
        }


def merge_batch_usage(blocks: Iterable[dict[str, Any] | None]) -> dict[str, Any] | None:
    """Shards' `usage.batch` blocks as one (`judge merge`): lists joined, counts added, the
    wall time the longest shard's (they ran side by side), the discount the first known."""
    present = [b for b in blocks if b]
    if not present:
        return None
    merged: dict[str, Any] = {}
    for block in present:
        for name, value in block.items():
            if name == "wall_seconds":
                merged[name] = max(merged.get(name, 0.0), value)
            elif name == "discount":
                merged[name] = merged.get(name) if merged.get(name) is not None else value
            elif isinstance(value, list):
                merged[name] = [*merged.get(name, []), *value]
            elif isinstance(value, dict):
                total = Counter(merged.get(name, {}))
                total.update(value)
                merged[name] = dict(total)
            else:
                merged[name] = merged.get(name, 0) + value
    return merged
