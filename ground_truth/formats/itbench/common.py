"""What the ITBench readers share: the format's name, incident ids, small text helpers."""

from __future__ import annotations

import re
from typing import Any

FORMAT = "itbench"
PLACEHOLDERS = {"", "to be specified", "tbd", "todo", "n/a", "none", "unknown"}
_ID_PATTERNS = (
    re.compile(r"^scenario[-_]?i?(\d+)$", re.I),
    re.compile(r"^incident[-_]?(\d+)$", re.I),
    re.compile(r"[-_](\d+)$"),
)


def canonical_incident_id(name: str | int) -> str:
    """`Scenario-2`, `scenario_2`, `incident-2`, `2` -> `2` (ITBench-Evaluations' rule)."""
    text = str(name).strip()
    if text.isdigit():
        return text
    for pattern in _ID_PATTERNS:
        match = pattern.search(text)
        if match:
            return match.group(1)
    return text


def join(prefix: str, field: str) -> str:
    """`prefix.field`, or `field` alone when there is no prefix."""
    return f"{prefix}.{field}" if prefix else field


def text(value: Any) -> str | None:
    """A field's text, or None when it is missing or a placeholder ("To Be Specified", "n/a")."""
    shown = str(value).strip() if value is not None else ""
    return None if shown.lower() in PLACEHOLDERS else shown


def compact(value: Any, limit: int = 240) -> str:
    """`value` on one line, cut to `limit` characters."""
    shown = " ".join(str(value).split())
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"
