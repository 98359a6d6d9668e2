"""Pair submissions with specs; report incidents nobody answered and answers nobody asked for."""

from __future__ import annotations

from collections.abc import Callable

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
    matcher = Matcher(specs)
    for sub in sorted(submissions, key=submission_order):
        matcher.add(sub)
    return matcher.matching()


class Matcher:
    """`match_submissions` one submission at a time, as they are read: `add` says at once
    which spec a submission is for; `matching()` gives the whole pairing, in its order, once
    the last one was added. With `keep`, `matching()` lists only the pairs whose submission
    `keep` says yes to (a caller that reads few of them need not hold every submission);
    `missing` still counts every submission added."""

    def __init__(self, specs: list[IncidentSpec], keep: Callable[[Submission], bool] | None = None):
        self.specs = specs
        self._by_id = {spec.id: spec for spec in specs}
        self._keep = keep
        self._answered: set[str] = set()
        self._pairs: list[tuple[IncidentSpec, Submission]] = []
        self._orphans: list[Submission] = []

    def add(self, sub: Submission) -> IncidentSpec | None:
        """The spec `sub` answers; None for an orphan."""
        spec = self._by_id.get(sub.incident_id)
        if spec is None:
            self._orphans.append(sub)
            return None
        self._answered.add(spec.id)
        if self._keep is None or self._keep(sub):
            self._pairs.append((spec, sub))
        return spec

    def matching(self) -> Matching:
        pairs = sorted(self._pairs, key=lambda pair: submission_order(pair[1]))
        missing = [spec.id for spec in self.specs if spec.id not in self._answered]
        orphans = sorted(self._orphans, key=submission_order)
        # built from validated models: validating 20,000 pairs again took a second
        return Matching.model_construct(pairs=pairs, missing=missing, orphans=orphans)


def submission_order(sub: Submission) -> tuple[str, int, str]:
    """Where a submission comes in a run: by incident id, then trial (numeric trials first, in
    numeric order)."""
    return (sub.incident_id, *trial_order(sub.trial))


def trial_order(trial: str) -> tuple[int, str]:
    """A trial's place among an incident's trials: numeric trials first, in numeric order."""
    return (int(trial), "") if trial.isdigit() else (1 << 30, trial)
