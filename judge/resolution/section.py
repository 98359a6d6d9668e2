"""The resolution part of a result file: per-case checks, their summary, and the side-by-side
table of diagnosis verdict against resolution success."""

from __future__ import annotations

from pydantic import BaseModel

from ground_truth.models import IncidentSpec, Submission

from .engine import check_resolution, summarize_resolution
from .models import ResolutionResult, ResolutionSummary
from .side_by_side import SideBySide, side_by_side


class ResolutionSection(BaseModel):
    """The result file's `resolution` section: summary, per-case results and, when judged
    too, the judge-versus-resolution side by side.
    """

    summary: ResolutionSummary
    side_by_side: SideBySide | None = None
    cases: list[ResolutionResult]


def resolution_section(
    pairs: list[tuple[IncidentSpec, Submission]],
    diagnosis_passed: dict[tuple[str, str], bool | None] | None = None,
) -> ResolutionSection | None:
    """Run the checks on every submission that carries a trajectory; None when none does.

    With `diagnosis_passed` (the judge's verdict per (incident, trial)) the section also holds
    the side-by-side table.
    """
    results = [r for spec, sub in pairs if (r := check_resolution(spec, sub)) is not None]
    if not results:
        return None
    table = None
    if diagnosis_passed is not None:
        table = side_by_side(diagnosis_passed, {r.key: r for r in results})
    return ResolutionSection(
        summary=summarize_resolution(results), side_by_side=table, cases=results
    )
