"""Pair submissions with specs; report incidents nobody answered and answers nobody asked for."""

from __future__ import annotations

from pydantic import BaseModel, Field

from .models import IncidentSpec, Submission


class Matching(BaseModel):
    """Specs paired with their submissions, plus what could not be paired: spec ids no
    submission answers (`missing`) and submissions naming an unknown incident (`orphans`).
    """

    pairs: list[tuple[IncidentSpec, Submission]] = Field(default_factory=list)
    missing: list[str] = Field(
        default_factory=list, description="Incident ids with a spec but no submission."
    )
    orphans: list[Submission] = Field(
        default_factory=list, description="Submissions whose incident id has no spec."
    )


def match_submissions(specs: list[IncidentSpec], submissions: list[Submission]) -> Matching:
    """Pair every submission with the spec of its incident id, ordered by incident id then trial
    (numeric trials first, in numeric order). A spec may get several submissions (one per trial);
    nothing is dropped silently: unpaired specs and submissions are listed in the result.
    """
    by_id = {spec.id: spec for spec in specs}
    pairs, orphans, answered = [], [], set()
    for sub in sorted(submissions, key=lambda s: (s.incident_id, _trial_order(s.trial))):
        spec = by_id.get(sub.incident_id)
        if spec is None:
            orphans.append(sub)
            continue
        pairs.append((spec, sub))
        answered.add(spec.id)
    missing = [spec.id for spec in specs if spec.id not in answered]
    # built from validated models: validating 20,000 pairs again took a second
    return Matching.model_construct(pairs=pairs, missing=missing, orphans=orphans)


def _trial_order(trial: str) -> tuple[int, str]:
    return (int(trial), "") if trial.isdigit() else (1 << 30, trial)
