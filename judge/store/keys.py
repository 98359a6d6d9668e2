"""What a stored answer is keyed by: the parts that decide it, hashed, and the case it is for."""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from typing import Any

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
