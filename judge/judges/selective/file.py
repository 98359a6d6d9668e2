"""The calibration file `judge calibrate --target-agreement` writes and a cascade reads.

One JSON document (`judge schema calibration`): which judges, in which order, for which rubric
and which labels; per judge the maps from raw confidence to P(agree with the labels) and the
threshold on that calibrated confidence, with the bound that backs it and the coverage it
reached on the labels. Written atomically; read with every field checked (exit 2 naming the
file and the field when it is not one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from agreement.ranking import Ranking
from agreement.reliability import ConfidenceCalibration, IsotonicMap, ReliabilityDiagram
from agreement.selective import SelectiveResult
from ground_truth.errors import InputError
from ground_truth.loaders import validate
from ground_truth.reading import max_input_bytes, regular_file_size

from .identity import JudgeIdentity
from .shift import Profile
from .verdict import RubricShape

Guarantee = Literal["question", "verdict"]
CANNOT_ANSWER = -1.0
"""The calibrated confidence of an answer a stage could not give (unscored, no verdict): under
every threshold, so it never answers, and counted as a disagreement in the bound."""


class StageCalibration(BaseModel):
    """One judge of the cascade: its maps, its threshold and how they were found."""

    judge: JudgeIdentity
    maps: ConfidenceCalibration = Field(
        description="Raw confidence -> P(agree) per (judge, question), with judge and pooled "
        "fallbacks (fitted on the fitting share of the labelled items)."
    )
    verdict_map: IsotonicMap | None = Field(
        None, description="Verdict guarantee: the verdict's confidence -> P(verdict agrees)."
    )
    n_reaching: int = Field(description="Selection items no earlier judge answered.")
    selection: SelectiveResult = Field(
        description="The threshold on calibrated confidence (fixed-sequence testing with the "
        "exact Clopper-Pearson bound), or why there is none: then this judge never answers."
    )
    ranking: Ranking | None = Field(
        None,
        description="How its calibrated confidence ranks its answers on the selection items "
        "that reached it: AUROC for agreeing with the label. A threshold that leaves answers "
        "out is refused unless it ranks better than chance.",
    )
    selects: bool | None = Field(
        None,
        description="Its threshold leaves some of its answers out. False: it keeps every answer "
        "it gives, so the guarantee is its agreement on the labels, not a selection.",
    )
    reliability_raw: ReliabilityDiagram | None = Field(
        None, description="Raw confidence against agreement on the selection items."
    )
    reliability_calibrated: ReliabilityDiagram | None = Field(
        None, description="Calibrated confidence against agreement on the selection items."
    )

    @property
    def threshold(self) -> float | None:
        """Answers with calibrated confidence at least this are kept; None: never."""
        return self.selection.threshold if self.selection.status == "guaranteed" else None


class LabelSet(BaseModel):
    """The labels a calibration was made with."""

    hash: str = Field(description="sha256 of the labelled items and answers used, sorted.")
    files: list[str]
    reference: str = Field(description="The annotator, or `people (majority)` for several.")
    n_items: int = Field(description="Labelled items every judge answered (questions or cases).")
    n_fit: int = Field(description="Of those, items the maps were fitted on.")
    n_select: int = Field(description="Items the thresholds were chosen on (the rest).")


class CalibrationFile(BaseModel):
    """A calibrated cascade of judges, cheapest first (a single judge is a cascade of one)."""

    schema_version: Literal["1"] = "1"
    kind: Literal["selective-calibration"] = "selective-calibration"
    created_at: str
    tool_version: str
    guarantee: Guarantee = Field(
        description="question: each answer kept agrees with its label; verdict: each case's "
        "pass/fail kept agrees with the labels' verdict."
    )
    target: float = Field(description="The agreement guaranteed on what is answered.")
    alpha: float = Field(description="The guarantee holds with probability at least 1 - alpha.")
    stage_alpha: float = Field(description="The level each judge was tested at.")
    rubric_hash: str
    rubric: RubricShape
    labels: LabelSet
    fit_share: float = Field(description="Share of labelled incidents the maps were fitted on.")
    seed: int = Field(description="Seed of the split of incidents into fitting and selection.")
    stages: list[StageCalibration]
    coverage: float = Field(description="Share of selection items some judge answers.")
    agreement: float | None = Field(
        None, description="Agreement with the labels on the selection items answered."
    )
    profile: Profile | None = Field(
        None,
        description="The labelled cases without their labels (incident, agent, format, "
        "diagnosis length, the first asked judge's answers and confidence): what a run is "
        "compared with before the guarantee applies to it. None in a file made before the "
        "shift check: no run can then be shown to be like the calibration set.",
    )

    @property
    def thresholds(self) -> list[float | None]:
        return [stage.threshold for stage in self.stages]


def load_calibration(path: str | Path) -> CalibrationFile:
    """Read and check a calibration file; `InputError` (exit 2) naming what is wrong."""
    import json

    path = Path(path)
    if regular_file_size(path) > max_input_bytes():
        raise InputError(
            path,
            f"is larger than the {max_input_bytes() / 2**20:g} MB an input may be "
            "(raise --max-input-mb to read it)",
            field="--calibration",
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(
            path, f"not a readable calibration file: {exc}", field="--calibration"
        ) from None
    if not isinstance(data, dict) or data.get("kind") != "selective-calibration":
        raise InputError(
            path,
            "not a calibration file (expected kind 'selective-calibration', as "
            "`judge calibrate --target-agreement` writes)",
            field="--calibration",
        )
    return validate(CalibrationFile, data, path)


def write_calibration(calibration: CalibrationFile, path: str | Path) -> None:
    """Write the file atomically (a failed write leaves an earlier one whole)."""
    from ...checklist.results import write_json_atomic

    write_json_atomic(path, calibration.model_dump_json(indent=2) + "\n")
