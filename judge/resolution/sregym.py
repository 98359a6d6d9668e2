"""SREGym-style resolution: the mitigation oracle's `Mitigation.success`, as the run recorded it.

SREGym's results hold one row per problem with flattened `Stage.key` columns
(`Mitigation.success`, `Mitigation.fault_applied`, ...) and, in newer runs, whole stage dicts
written with Python's `str()`. Any of these shapes is read, from `trajectory.final_state` first,
then `trajectory.metrics`:

- `{"Mitigation.success": True}` (or `"True"`, `"false"`, 1, 0)
- `{"Mitigation": {"success": True, ...}}` or `{"Mitigation": "{'success': True, ...}"}`
- the same with a lower-case `mitigation`, or `{"mitigation_success": ...}`
"""

from __future__ import annotations

import ast
from typing import Any

from ground_truth.models import IncidentSpec, Trajectory

from .models import CheckOutcome
from .registry import register_check

FLAT_KEYS = ("Mitigation.success", "mitigation.success", "mitigation_success")
STAGE_KEYS = ("Mitigation", "mitigation")
_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


def find_mitigation(trajectory: Trajectory) -> tuple[str, Any] | None:
    """(where, raw value) of the recorded mitigation success, or None when there is none."""
    for place, data in (("final_state", trajectory.final_state), ("metrics", trajectory.metrics)):
        for key in FLAT_KEYS:
            if key in data:
                return f"{place}[{key!r}]", data[key]
        for key in STAGE_KEYS:
            stage = _stage(data.get(key))
            if stage is not None and "success" in stage:
                return f"{place}[{key!r}]['success']", stage["success"]
    return None


def _stage(value: Any) -> dict[str, Any] | None:
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return None
    return value if isinstance(value, dict) else None


def as_bool(value: Any) -> bool | None:
    """A recorded flag as a bool: bools, 0/1, and "true"/"yes"/"1" or "false"/"no"/"0" in any
    case; None for anything else.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    return None


@register_check("sregym", "success")
def mitigation_success(spec: IncidentSpec, trajectory: Trajectory) -> CheckOutcome | None:
    """SREGym's mitigation oracle verdict (`Mitigation.success`)."""
    found = find_mitigation(trajectory)
    if found is None:
        return None
    where, raw = found
    value = as_bool(raw)
    if value is None:
        return CheckOutcome(error=f"unreadable Mitigation.success {raw!r} in {where}")
    return CheckOutcome(
        value=value, passed=value, detail=f"read from {where}", evidence={"raw": raw}
    )
