"""Named checks over (spec, trajectory), registered per format.

A check is any callable `fn(spec, trajectory)` returning a `CheckOutcome`, a bool (a predicate),
a number (a metric), or None (not applicable to this case). Register it for a format, or for
every format with `"*"`:

    @register_check("sregym", "pods_healthy")
    def pods_healthy(spec, trajectory):
        return trajectory.final_state.get("unhealthy_pods") == 0

A check named `success` decides `ResolutionResult.success`; one named `evidence_coverage`
fills `ResolutionResult.evidence_coverage`. A check that raises is recorded as an outcome with
`error` set, so one broken user check does not stop a sweep.

The checks are a `ground_truth.registry.Registry` (`CHECKS`, the shape formats and judges use),
each under the name `FORMAT.NAME`; an installed package adds its own under the entry-point group
`diagnosis_judge.checks`, and `CHECKS.register("myformat.name", "package.module:function")`
registers one lazily:

    [project.entry-points."diagnosis_judge.checks"]
    "mysim.pods_healthy" = "mysim_checks:pods_healthy"
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ground_truth.models import IncidentSpec, Trajectory
from ground_truth.registry import Registry

from .models import CheckOutcome

CheckFn = Callable[[IncidentSpec, Trajectory], CheckOutcome | bool | int | float | None]
ANY_FORMAT = "*"
ENTRY_POINT_GROUP = "diagnosis_judge.checks"


def _as_check(obj: Any, name: str) -> CheckFn:
    """The protocol check of an entry: a check is callable as `fn(spec, trajectory)`."""
    if not callable(obj):
        raise TypeError(f"check {name!r} is not callable: {obj!r}")
    return obj


CHECKS: Registry[CheckFn] = Registry("resolution check", ENTRY_POINT_GROUP, _as_check)


def normalize_format(name: str) -> str:
    """`SRE-Zero`, `sre_zero` and `srezero` name the same format."""
    return name if name == ANY_FORMAT else name.lower().replace("-", "").replace("_", "")


def _split(key: str) -> tuple[str, str]:
    """(normalised format, check name) of a registry key `FORMAT.NAME`."""
    fmt, _, name = key.partition(".")
    return normalize_format(fmt), name


def register_check(
    format: str, name: str, *, replace: bool = False
) -> Callable[[CheckFn], CheckFn]:
    """Decorator: register `fn` as check `name` for `format` (`"*"` = every format)."""
    if not name:
        raise ValueError("a check needs a name")
    return CHECKS.register(f"{normalize_format(format)}.{name}", replace=replace)


def unregister_check(format: str, name: str) -> None:
    """Remove a check from `format`; nothing happens if it is not registered."""
    CHECKS.unregister(f"{normalize_format(format)}.{name}")


def registered_checks(format: str) -> dict[str, CheckFn]:
    """The checks that apply to `format`: the `"*"` ones, overridden by the format's own."""
    wanted = {ANY_FORMAT, normalize_format(format)}
    general: dict[str, CheckFn] = {}
    own: dict[str, CheckFn] = {}
    for key, fn in CHECKS.items(lambda key: _split(key)[0] in wanted):
        fmt, name = _split(key)
        (general if fmt == ANY_FORMAT else own)[name] = fn
    return {**general, **own}


def run_checks(
    format: str, spec: IncidentSpec, trajectory: Trajectory
) -> tuple[dict[str, CheckOutcome], list[str]]:
    """Run every applicable check; return the outcomes and the names that did not apply."""
    outcomes: dict[str, CheckOutcome] = {}
    not_applicable: list[str] = []
    for name, fn in registered_checks(format).items():
        try:
            outcome = as_outcome(name, fn(spec, trajectory))
        except Exception as exc:  # a user's check must not stop the sweep; the error is kept
            outcome = CheckOutcome(name=name, error=f"{type(exc).__name__}: {exc}")
        if outcome is None:
            not_applicable.append(name)
        else:
            outcomes[name] = outcome
    return outcomes, not_applicable


def as_outcome(name: str, result: Any) -> CheckOutcome | None:
    """A check's return value as a CheckOutcome named `name`: a bool passes or fails, a number is
    a value, None means not applicable (None); TypeError for anything else.
    """
    if result is None:
        return None
    if isinstance(result, CheckOutcome):
        return result.model_copy(update={"name": name})
    if isinstance(result, bool):
        return CheckOutcome(name=name, value=result, passed=result)
    if isinstance(result, int | float):
        return CheckOutcome(name=name, value=result)
    raise TypeError(
        f"check {name!r} returned {type(result).__name__}; "
        "expected CheckOutcome, bool, number or None"
    )
