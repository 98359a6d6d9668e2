"""What a stored answer is keyed by: the parts that decide it, hashed, and the case it is for;
and how the `judgments` rows of keys are found."""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .file import rows_in
from .migrations import same_hash, short

COMPONENTS = ("judge", "model", "params", "prompt", "schema", "rubric")


def short_hash(data: Any) -> str:
    """First 16 hex digits of SHA-256 over `data` as canonical JSON (non-JSON values via str)."""
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class KeyParts:
    """What decides a judge's answer: who (judge name, model, params that change answers),
    what was asked (rendered prompt, response schema) and under which rubric dimension."""

    judge: str
    model: str | None
    params: str
    prompt: str
    schema: str
    rubric: str

    @functools.cached_property
    def key(self) -> str:
        parts = {c: getattr(self, c) for c in COMPONENTS}
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()

    def differences(self, other: KeyParts) -> list[str]:
        return [c for c in COMPONENTS if getattr(self, c) != getattr(other, c)]


@dataclass(frozen=True)
class CaseRef:
    """Which case and dimension a stored answer belongs to."""

    incident_id: str
    trial: str
    dimension_id: str


BY_KEY = same_hash("key")
"""The `judgments` row of one key (see `migrations.short`)."""


def keys_in(db: sqlite3.Connection, keys: Iterable[str]) -> set[str]:
    """Those of `keys` that have an answer row."""
    sql = f"SELECT key FROM judgments WHERE {short('key')} IN ({{marks}}) AND key IN ({{marks}})"
    return {key for (key,) in rows_in(db, sql, set(keys), short=True)}
