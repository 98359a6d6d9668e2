"""The HTML page `judge calibrate --html` writes: each judge's reliability diagram, ECE and
confidence maps, and the thresholds of a calibration file, self-contained like the report."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from ..checklist.results import write_json_atomic
from . import plots
from .calibration_tables import auroc_text, map_choice_text, map_counts
from .html import render_page

if TYPE_CHECKING:
    from agreement.reliability import ReliabilityDiagram

    from ..judges.selective.file import CalibrationFile
    from ..judges.selective.fit import Calibrated, StageFit

TEMPLATE = "calibration.html.j2"
MAP_POINTS = 8


@dataclass
class StageView:
    """One judge's calibration as the page shows it."""

    name: str
    n: int
    agreement: float | None
    ece_raw: float | None
    ece_calibrated: float | None
    maps: str
    auroc_raw: str = "—"
    auroc_calibrated: str = "—"
    questions: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class CalibrationView:
    guarantee: str
    n_fit: int
    n_select: int
    stages: list[StageView]
    plots: list[Markup]


def calibration_view(calibrated: Calibrated) -> CalibrationView:
    return CalibrationView(
        guarantee=calibrated.guarantee,
        n_fit=calibrated.n_fit,
        n_select=calibrated.n_select,
        stages=[_stage(s) for s in calibrated.stages],
        plots=[_plot(s, n) for n, s in enumerate(calibrated.stages)],
    )


def _stage(fit: StageFit) -> StageView:
    maps = fit.maps
    return StageView(
        name=fit.identity.name,
        n=fit.n_scored,
        agreement=fit.agreement,
        ece_raw=fit.raw.ece if fit.raw else None,
        ece_calibrated=fit.calibrated.ece if fit.calibrated else None,
        auroc_raw=auroc_text(fit.raw_ranking),
        auroc_calibrated=auroc_text(fit.ranking),
        maps=f"{map_counts(maps)}, one pooled (at least {maps.min_count} answers for a map "
        "of its own)" + (f"; {map_choice_text(maps)}" if maps.choice else ""),
        questions=[
            {
                "question": q.question if q.answer is None else f"{q.question} ({q.answer})",
                "n": q.map.n,
                "n_agreed": q.map.n_agreed,
                "points": _points(q.map.thresholds, q.map.values),
            }
            for q in maps.questions
        ],
    )


def _points(thresholds: list[float], values: list[float]) -> str:
    pairs = list(zip(thresholds, values, strict=True))
    if len(pairs) > MAP_POINTS:
        step = (len(pairs) - 1) / (MAP_POINTS - 1)
        pairs = [pairs[round(i * step)] for i in range(MAP_POINTS)]
    return ", ".join(f"{t:.2f}→{v:.2f}" for t, v in pairs)


def _curve(label: str, diagram: ReliabilityDiagram | None) -> tuple[str, list, list, list] | None:
    if diagram is None:
        return None
    full = [b for b in diagram.bins if b.count]
    return (
        f"{label} (ECE {diagram.ece:.3f})",
        [b.mean_confidence for b in full],
        [b.observed_agreement for b in full],
        [b.count for b in full],
    )


def _plot(fit: StageFit, n: int) -> Markup:
    curves = [
        c for c in (_curve("raw", fit.raw), _curve("calibrated", fit.calibrated)) if c is not None
    ]
    return plots.reliability(curves, f"rel{n}")


def write_calibration_html(
    path: str | Path, calibrated: Calibrated, calibration: CalibrationFile | None
) -> Path:
    """Write the page atomically; returns its path."""
    text = render_page(
        TEMPLATE,
        title="Judge calibration",
        view=calibration_view(calibrated),
        calibration=calibration,
    )
    write_json_atomic(path, text)
    return Path(path)
