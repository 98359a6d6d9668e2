"""Rubric goldens: hand-written diagnoses shipped beside a rubric, each with the answers a
good judge must give it (`rubrics/<name>.goldens.yaml`; `judge schema goldens`).

A goldens file is self-contained: it holds the specs its cases are written against, so it
checks a judge wherever it is installed, with no benchmark at hand. Each case says whether
the diagnosis must pass or fail the rubric's threshold and, per question id, "Yes", "No" or
"any"; a question it does not list is not checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ground_truth.errors import InputError
from ground_truth.loaders import read_data, validate
from ground_truth.models import IncidentSpec

from ..checklist.rubric import Rubric
from .probes import Expected, Probe

GOLDENS_SUFFIX = ".goldens.yaml"


class GoldenCase(BaseModel):
    """One hand-written diagnosis of one of the file's specs, and what a judge must answer."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, description="Unique in the file.")
    spec: str = Field(min_length=1, description="The id of the spec it answers, in `specs`.")
    must: Literal["pass", "fail"] = Field(description="The verdict at the rubric's threshold.")
    diagnosis: str
    expected: dict[str, Expected] = Field(
        default_factory=dict, description="Answer per question id; unlisted questions: any."
    )
    why: str = Field("", description="What the case checks, for the person reading a failure.")


class GoldenFile(BaseModel):
    """A rubric's goldens: the specs, then the cases written against them."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    rubric: str | None = Field(None, description="The rubric the expectations are written for.")
    specs: list[IncidentSpec] = Field(min_length=1)
    cases: list[GoldenCase] = Field(min_length=1)


def goldens_path(rubric: Rubric) -> Path | None:
    """The goldens file beside a rubric's file (`<stem>.goldens.yaml`), if there is one."""
    if not rubric.path:
        return None
    path = Path(rubric.path)
    found = path.with_name(path.stem + GOLDENS_SUFFIX)
    return found if found.is_file() else None


def load_goldens(path: str | Path, rubric: Rubric) -> tuple[list[IncidentSpec], list[Probe]]:
    """A goldens file's specs and its cases as probes, every question id checked against
    `rubric` (`InputError` naming the file and field otherwise)."""
    path = Path(path)
    data = read_data(path)
    if not isinstance(data, dict):
        raise InputError(path, "expected a mapping with schema_version, specs and cases")
    goldens = validate(GoldenFile, data, path)
    specs = {spec.id: spec for spec in goldens.specs}
    questions = {q.id for d in rubric.dimensions for q in d.questions}
    seen: set[str] = set()
    probes = []
    for index, case in enumerate(goldens.cases):
        where = f"cases[{index}]"
        if case.id in seen:
            raise InputError(path, f"case id {case.id!r} is used twice", field=f"{where}.id")
        seen.add(case.id)
        if case.spec not in specs:
            raise InputError(
                path, f"names no spec of the file ({', '.join(specs)})", field=f"{where}.spec"
            )
        unknown = sorted(set(case.expected) - questions)
        if unknown:
            raise InputError(
                path,
                f"{', '.join(unknown)}: not a question of rubric {rubric.name or rubric.path}",
                field=f"{where}.expected",
            )
        probes.append(
            Probe(
                id=case.id,
                spec_id=case.spec,
                kind="golden-pass" if case.must == "pass" else "golden-fail",
                diagnosis=case.diagnosis,
                expected=case.expected,
                verdict=case.must,
                note=case.why,
            )
        )
    return list(specs.values()), probes
