"""Diagnosis verdict next to resolution success (SREGym's Table 5; SRE-Zero's evidence view).

The 2x2 table counts cases present on both sides with a known verdict on each: the judge's pass
(True/False; None = unscored) and the resolution checks' `success` (None = unknown). Everything
else is listed in `excluded` with the reason. The evidence-coverage view uses every resolution
result with a coverage and a known success, whether or not the diagnosis was judged.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TypeVar

from pydantic import BaseModel, Field

from .models import ResolutionResult

K = TypeVar("K", bound=Hashable)

NO_RESULT = "no resolution result (no trajectory)"
# Coverage buckets: [low, high) except the last, which is exactly full coverage.
COVERAGE_BUCKETS = ((0.0, 0.25), (0.25, 0.5), (0.5, 0.75), (0.75, 1.0), (1.0, 1.0))


class Table2x2(BaseModel):
    """Cases by judge verdict (passed/failed) and resolution (resolved/unresolved)."""

    passed_resolved: int = 0
    passed_unresolved: int = 0
    failed_resolved: int = 0
    failed_unresolved: int = 0


class ConditionalRate(BaseModel):
    """numerator / denominator, or None with the reason when the denominator is 0."""

    value: float | None
    numerator: int
    denominator: int
    undefined_reason: str | None = None


class CoverageBucket(BaseModel):
    """Cases whose evidence coverage lies in [low, high) (the last bucket: exactly full
    coverage) and their success rate (None when empty).
    """

    label: str
    low: float
    high: float
    n: int
    n_success: int
    success_rate: float | None


class CoverageView(BaseModel):
    """Evidence coverage against resolution: mean coverage of successes and failures, by bucket."""

    n: int
    mean_coverage_success: float | None
    mean_coverage_failure: float | None
    buckets: list[CoverageBucket]


class Exclusion(BaseModel):
    """A case left out of the side by side, and why."""

    key: str
    reason: str


class SideBySide(BaseModel):
    """Judge verdicts against resolution outcomes over the cases with both: the 2x2 table,
    P(resolved | passed), P(resolved | failed), coverage, and the cases excluded.
    """

    n_pairs: int
    table: Table2x2
    p_resolved_given_passed: ConditionalRate
    p_resolved_given_failed: ConditionalRate
    coverage: CoverageView
    excluded: list[Exclusion] = Field(default_factory=list)


def side_by_side(
    diagnosis_passed: Mapping[K, bool | None],
    resolution: Mapping[K, ResolutionResult | None],
) -> SideBySide:
    """Cross the judge's pass/fail with resolution success, keyed alike (e.g. (incident, trial))."""
    table = Table2x2()
    excluded: list[Exclusion] = []
    for key in _ordered_keys(diagnosis_passed, resolution):
        reason = _exclusion(key, diagnosis_passed, resolution)
        result = resolution.get(key)
        if reason or result is None:
            excluded.append(Exclusion(key=key_text(key), reason=reason or NO_RESULT))
            continue
        field = ("passed_" if diagnosis_passed[key] else "failed_") + (
            "resolved" if result.success else "unresolved"
        )
        setattr(table, field, getattr(table, field) + 1)
    return SideBySide(
        n_pairs=table.passed_resolved
        + table.passed_unresolved
        + table.failed_resolved
        + table.failed_unresolved,
        table=table,
        p_resolved_given_passed=_rate(
            table.passed_resolved, table.passed_resolved + table.passed_unresolved, "passed"
        ),
        p_resolved_given_failed=_rate(
            table.failed_resolved, table.failed_resolved + table.failed_unresolved, "failed"
        ),
        coverage=coverage_view([r for r in resolution.values() if r is not None]),
        excluded=excluded,
    )


def _ordered_keys(*maps: Mapping[K, object]) -> list[K]:
    keys: dict[K, None] = {}
    for mapping in maps:
        keys.update(dict.fromkeys(mapping))
    return list(keys)


def _exclusion(
    key: K,
    diagnosis: Mapping[K, bool | None],
    resolution: Mapping[K, ResolutionResult | None],
) -> str | None:
    if key not in diagnosis:
        return "no diagnosis verdict"
    if diagnosis[key] is None:
        return "diagnosis unscored"
    result = resolution.get(key)
    if result is None:
        return NO_RESULT
    if result.success is None:
        return "resolution success unknown"
    return None


def _rate(numerator: int, denominator: int, group: str) -> ConditionalRate:
    if denominator == 0:
        return ConditionalRate(
            value=None,
            numerator=0,
            denominator=0,
            undefined_reason=f"no case whose diagnosis {group} has a known resolution outcome",
        )
    return ConditionalRate(
        value=numerator / denominator, numerator=numerator, denominator=denominator
    )


def coverage_view(results: list[ResolutionResult]) -> CoverageView:
    """Mean evidence coverage among successes and failures, and success rate per coverage bucket."""
    pairs = [
        (r.evidence_coverage, bool(r.success))
        for r in results
        if r.evidence_coverage is not None and r.success is not None
    ]
    wins = [c for c, ok in pairs if ok]
    losses = [c for c, ok in pairs if not ok]
    return CoverageView(
        n=len(pairs),
        mean_coverage_success=sum(wins) / len(wins) if wins else None,
        mean_coverage_failure=sum(losses) / len(losses) if losses else None,
        buckets=[_bucket(low, high, pairs) for low, high in COVERAGE_BUCKETS],
    )


def _bucket(low: float, high: float, pairs: list[tuple[float, bool]]) -> CoverageBucket:
    if low == high:
        inside = [ok for c, ok in pairs if c >= low]
        label = f"{low:.0%}"
    else:
        inside = [ok for c, ok in pairs if low <= c < high]
        label = f"{low:.0%}-<{high:.0%}"
    n_success = sum(inside)
    return CoverageBucket(
        label=label,
        low=low,
        high=high,
        n=len(inside),
        n_success=n_success,
        success_rate=n_success / len(inside) if inside else None,
    )


def key_text(key: Hashable) -> str:
    """A case key as text: tuple parts joined with `/`."""
    return "/".join(str(part) for part in key) if isinstance(key, tuple) else str(key)
