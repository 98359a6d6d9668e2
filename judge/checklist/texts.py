"""The texts a result file does not carry: spec ground truth, diagnoses, question wording.

All optional: the report and the labelling page show what they have and say what they lack.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ground_truth.errors import InputError
from ground_truth.models import IncidentSpec, Submission


class CaseTexts(BaseModel):
    """Texts a result file does not hold, for the report and the labelling page: ground truth,
    diagnoses, question texts and dimension names; any may be empty."""

    ground_truth: dict[str, str] = Field(default_factory=dict, description="By incident id.")
    diagnoses: dict[str, str] = Field(
        default_factory=dict, description='By `["incident_id", "trial"]` as JSON (see `case_key`).'
    )
    questions: dict[str, str] = Field(default_factory=dict, description="By question id.")
    dimensions: dict[str, str] = Field(default_factory=dict, description="Names by dimension id.")

    def diagnosis(self, incident_id: str, trial: str) -> str | None:
        return self.diagnoses.get(case_key(incident_id, trial))


def case_key(incident_id: str, trial: str) -> str:
    """One string per case that no two cases share: incident `a` trial `b/1` and incident `a/b`
    trial `1` would both be `a/b/1` joined with a slash."""
    return json.dumps([incident_id, trial])


def texts_from(
    specs: list[IncidentSpec] | None = None,
    submissions: Iterable[Submission] | None = None,
    rubric_config: dict[str, Any] | None = None,
) -> CaseTexts:
    """CaseTexts from specs, submissions and the result's rubric config; all optional."""
    texts = CaseTexts(
        ground_truth={s.id: s.ground_truth for s in specs or []},
        diagnoses={case_key(s.incident_id, s.trial): s.diagnosis for s in submissions or []},
    )
    _add_rubric_texts(texts, rubric_config or {})
    return texts


def load_texts(
    ground_truth: Path | None,
    outputs: Path | None,
    rubric_config: dict[str, Any] | None = None,
    format: str = "auto",
) -> CaseTexts:
    """Read specs and submissions the way `judge eval` does; either may be None."""
    from ground_truth import iter_submissions, load_specs

    specs = load_specs(ground_truth, format) if ground_truth else None
    submissions = iter_submissions(outputs, format) if outputs else None
    return texts_from(specs, submissions, rubric_config)


def _add_rubric_texts(texts: CaseTexts, config: dict[str, Any]) -> None:
    """Question wording from the rubric the run used, when it is found with the same hash."""
    from .rubric import load_rubric

    name = config.get("name")
    if not name:
        return
    try:
        rubric = load_rubric(name)
    except (InputError, OSError):
        return
    if rubric.hash != config.get("hash"):
        return
    for dim in rubric.dimensions:
        texts.dimensions[dim.id] = dim.name
        for q in dim.questions:
            texts.questions[q.id] = q.text
