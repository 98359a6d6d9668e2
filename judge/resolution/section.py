"""The parts of a result file computed beside the judge: the resolution checks (per-case
results, their summary, and the side-by-side table of diagnosis verdict against resolution
success) and the root-cause entity scores. `resolution_of` and `entities_of` are the run's
sections (`judge.api.SECTIONS`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from ground_truth.entities import score_entities
from ground_truth.models import IncidentSpec, Submission

from ..checklist.scoring import CaseResult
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


def resolution_of(
    pairs: list[tuple[IncidentSpec, Submission]], cases: Sequence[CaseResult]
) -> dict[str, Any] | None:
    """The result's `resolution` field, the judge's verdicts (`cases`) beside the checks."""
    section = resolution_section(pairs, {(c.incident_id, c.trial): c.passed for c in cases})
    return section.model_dump(mode="json") if section else None


def entities_of(
    pairs: list[tuple[IncidentSpec, Submission]], cases: Sequence[CaseResult]
) -> dict[str, Any] | None:
    """The result's `entities` field: entity precision, recall and F1 for the submissions that
    name structured root-cause entities, and their means."""
    scores = [(sub, score) for spec, sub in pairs if (score := score_entities(spec, sub))]
    if not scores:
        return None
    per_case = [
        {"incident_id": s.incident_id, "trial": s.trial, **e.model_dump(mode="json")}
        for s, e in scores
    ]
    means = {
        m: sum(getattr(e, m) for _, e in scores) / len(scores)
        for m in ("precision", "recall", "f1")
    }
    top = [e.top_is_origin for _, e in scores if e.top_is_origin is not None]
    means["top_is_origin"] = sum(top) / len(top) if top else None
    return {"n": len(scores), "mean": means, "cases": per_case}
