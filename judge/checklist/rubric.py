"""Checklist rubrics: YAML in SREGym's format, validated into a `Rubric` with a content hash."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ground_truth.errors import InputError
from ground_truth.loaders import read_data, validate

DEFAULT_RUBRIC = "sregym-v3"
WEIGHT_TOLERANCE = 1e-6


class Question(BaseModel):
    """One Yes/No checklist question; `rule` names the rules judge's rule when it is not the id.
    Extra keys are kept.
    """

    model_config = ConfigDict(extra="allow")

    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    evaluator_hint: str | None = None
    rule: str | None = Field(
        None, description="The rules judge's rule for this question, if not by id."
    )


class Dimension(BaseModel):
    """A scored dimension: its questions, whose Yes share is its score. Extra keys are kept."""

    model_config = ConfigDict(extra="allow")

    id: str = Field(min_length=1)
    name: str
    definition: str = ""
    category: str | None = None
    questions: list[Question]


class Scoring(BaseModel):
    """Dimension weights (keyed by dimension id) and the composite a case needs to pass."""

    model_config = ConfigDict(extra="allow")

    threshold: float
    weights: dict[str, float]


class Rubric(BaseModel):
    """A validated checklist. `hash` covers the content (not the name or path)."""

    model_config = ConfigDict(extra="allow")

    version: str
    scoring: Scoring
    dimensions: list[Dimension]
    name: str = ""
    path: str | None = None
    hash: str = ""

    def dimension(self, dimension_id: str) -> Dimension:
        return next(d for d in self.dimensions if d.id == dimension_id)

    @property
    def question_count(self) -> int:
        return sum(len(d.questions) for d in self.dimensions)

    def select(self, dimension_ids: list[str]) -> Rubric:
        """Keep only some dimensions; their weights are rescaled to sum to 1 (an explicit choice)."""
        unknown = [d for d in dimension_ids if d not in self.scoring.weights]
        if unknown:
            known = ", ".join(d.id for d in self.dimensions)
            raise InputError(
                self.path or self.name,
                f"unknown dimension(s) {', '.join(unknown)}; the rubric has {known}",
                field="--dimensions",
            )
        kept = [d for d in self.dimensions if d.id in dimension_ids]
        total = sum(self.scoring.weights[d.id] for d in kept)
        if total <= 0:
            raise InputError(
                self.path or self.name,
                f"the selected dimension(s) {', '.join(dimension_ids) or '(none)'} "
                "have a total weight of 0; nothing could be scored",
                field="--dimensions",
            )
        weights = {d.id: self.scoring.weights[d.id] / total for d in kept}
        scoring = self.scoring.model_copy(update={"weights": weights})
        return self.model_copy(update={"dimensions": kept, "scoring": scoring})


def content_hash(data: dict[str, Any]) -> str:
    """First 16 hex digits of SHA-256 over `data` as canonical JSON: equal content, equal hash."""
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def rubrics_dir() -> Path:
    """Shipped rubrics: inside the installed wheel, or `rubrics/` of a source checkout."""
    installed = Path(__file__).parents[1] / "_rubrics"
    return installed if installed.is_dir() else Path(__file__).resolve().parents[2] / "rubrics"


def available_rubrics() -> list[str]:
    """Names of the shipped rubrics, sorted ([] if none); a rubric's goldens
    (`<name>.goldens.yaml`, `judge selftest`) are not rubrics."""
    return sorted(p.stem for p in rubrics_dir().glob("*.yaml") if not p.stem.endswith(".goldens"))


def resolve_rubric_path(name_or_path: str | Path) -> Path:
    """The rubric file for a shipped name or a path: a value with a YAML/JSON suffix or that
    exists is a path. InputError for a missing file or an unknown name (listing shipped ones).
    """
    candidate = Path(name_or_path)
    if candidate.suffix.lower() in {".yaml", ".yml", ".json"} or candidate.exists():
        if not candidate.is_file():
            raise InputError(candidate, "no such rubric file", field="--rubric")
        return candidate
    shipped = rubrics_dir() / f"{name_or_path}.yaml"
    if not shipped.is_file():
        names = ", ".join(available_rubrics()) or "none"
        raise InputError(
            str(name_or_path),
            f"unknown rubric name; shipped rubrics: {names} (or give a path)",
            field="--rubric",
        )
    return shipped


def load_rubric(name_or_path: str | Path = DEFAULT_RUBRIC) -> Rubric:
    """Load a shipped rubric by name (`sregym-v3`) or any rubric file by path."""
    path = resolve_rubric_path(name_or_path)
    data = read_data(path)
    if not isinstance(data, dict):
        raise InputError(path, "expected a mapping with version, scoring and dimensions")
    rubric = validate(Rubric, data, path)
    check_rubric(rubric, path)
    name = path.stem if path.parent == rubrics_dir() else str(name_or_path)
    content = rubric.model_dump(exclude={"name", "path", "hash"})
    return rubric.model_copy(
        update={"name": name, "path": str(path), "hash": content_hash(content)}
    )


def check_rubric(rubric: Rubric, path: Path) -> None:
    """The rules pydantic cannot state: unique ids, sane weights and threshold."""
    if not rubric.dimensions:
        raise InputError(path, "a rubric needs at least one dimension", field="dimensions")
    _check_ids(rubric, path)
    _check_weights(rubric, path)
    threshold = rubric.scoring.threshold
    if not 0.0 <= threshold <= 1.0 or math.isnan(threshold):
        raise InputError(
            path, f"must be between 0 and 1, got {threshold}", field="scoring.threshold"
        )


def _check_ids(rubric: Rubric, path: Path) -> None:
    dims: set[str] = set()
    questions: dict[str, str] = {}
    for i, dim in enumerate(rubric.dimensions):
        if dim.id in dims:
            raise InputError(
                path, f"duplicate dimension id {dim.id!r}", field=f"dimensions[{i}].id"
            )
        dims.add(dim.id)
        if not dim.questions:
            raise InputError(
                path, f"dimension {dim.id!r} has no questions", field=f"dimensions[{i}].questions"
            )
        for j, question in enumerate(dim.questions):
            if question.id in questions:
                raise InputError(
                    path,
                    f"duplicate question id {question.id!r} (also in dimension {questions[question.id]})",
                    field=f"dimensions[{i}].questions[{j}].id",
                )
            questions[question.id] = dim.id


def _check_weights(rubric: Rubric, path: Path) -> None:
    weights = rubric.scoring.weights
    dims = {d.id for d in rubric.dimensions}
    for dim_id, weight in weights.items():
        if dim_id not in dims:
            raise InputError(
                path,
                f"weight for unknown dimension {dim_id!r}; dimensions are {sorted(dims)}",
                field=f"scoring.weights.{dim_id}",
            )
        if weight < 0 or math.isnan(weight):
            raise InputError(
                path, f"weights must be >= 0, got {weight}", field=f"scoring.weights.{dim_id}"
            )
    for dim_id in sorted(dims - weights.keys()):
        raise InputError(
            path, f"dimension {dim_id!r} has no weight", field=f"scoring.weights.{dim_id}"
        )
    total = sum(weights.values())
    if abs(total - 1.0) > WEIGHT_TOLERANCE:
        raise InputError(
            path,
            f"weights sum to {total:g}, expected 1 (they are not renormalised)",
            field="scoring.weights",
        )


WHOLE = "*"
"""The dimension id of a call that asks the whole submission (calls, store rows, shards)."""


def whole_submission(dimensions: list[Dimension]) -> Dimension:
    """One pseudo-dimension asking every question of `dimensions` (kept in its `parts`)."""
    return Dimension.model_validate(
        {
            "id": WHOLE,
            "name": "every dimension",
            "questions": [q for d in dimensions for q in d.questions],
            "parts": list(dimensions),
        }
    )


def parts_of(dimension: Dimension) -> list[Dimension] | None:
    """The real dimensions a `whole_submission` pseudo-dimension asks; None for a real one."""
    parts = (dimension.model_extra or {}).get("parts")
    return list(parts) if dimension.id == WHOLE and parts else None
