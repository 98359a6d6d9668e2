"""`--shard I/N`: a stable, content-hashed share of a run's (submission, dimension) units.

A unit belongs to shard `sha256([incident id, trial, dimension id]) mod N`, so the share does
not depend on file order, on the other submissions, or on which shards run where: N machines
given the same inputs split the work without talking to each other, and `judge merge` puts the
shards' results back together (see `judge.run.merge`).

A shard's result records in `config.shard` which share it holds, the k it was asked for, and a
fingerprint of the whole run's units, so a merge can refuse shards cut from different inputs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field


class Shard(BaseModel):
    """Shard `index` of `count` (1-based, as typed: `--shard 2/4`)."""

    index: int = Field(ge=1)
    count: int = Field(ge=1)

    @classmethod
    def parse(cls, text: str) -> Shard:
        index, sep, count = text.strip().partition("/")
        try:
            shard = cls(index=int(index), count=int(count)) if sep else None
        except ValueError:
            shard = None
        if shard is None or shard.index > shard.count:
            raise ValueError(f"--shard expects I/N with 1 <= I <= N (e.g. 2/4), got {text!r}")
        return shard

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, incident_id: str, trial: str, dimension_id: str) -> bool:
        return unit_bucket(incident_id, trial, dimension_id, self.count) == self.index - 1


def unit_bucket(incident_id: str, trial: str, dimension_id: str, count: int) -> int:
    """Which of `count` shards (0-based) the unit belongs to."""
    digest = hashlib.sha256(json.dumps([incident_id, trial, dimension_id]).encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


def units_fingerprint(units: Iterable[tuple[str, str, str]]) -> str:
    """A hash of the whole run's (incident, trial, dimension) units, in any order."""
    canonical = json.dumps(sorted(units), separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def select(units: list[Any], shard: Shard | None, key) -> tuple[list[Any], dict[str, Any] | None]:
    """The units of `shard` (all of them when None) and what the result records about it.
    `key(unit)` gives a unit's (incident id, trial, dimension id)."""
    if shard is None:
        return units, None
    keys = [key(u) for u in units]
    mine = [u for u, k in zip(units, keys, strict=True) if shard.holds(*k)]
    return mine, shard_record(shard, keys)


def shard_record(shard: Shard, keys: list[tuple[str, str, str]]) -> dict[str, Any]:
    """What a shard's result records: its share, and how many units the whole run had and
    their fingerprint (`keys`: every unit's (incident id, trial, dimension id))."""
    return {
        "index": shard.index,
        "count": shard.count,
        "units": len(keys),
        "fingerprint": units_fingerprint(keys),
    }
