"""The HTML page `judge agreement --html` writes: per question, each pair of raters' Cohen's
kappa with its 95% CI as a chart; per level, the pairwise table and each pair's confusion
matrix. Self-contained like the report (inline CSS and SVG, a CSP that forbids every fetch)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from markupsafe import Markup

from ..checklist.results import write_json_atomic
from . import plots
from .html import render_page

if TYPE_CHECKING:
    from agreement import AgreementReport
    from agreement.stats import PairStats

TEMPLATE = "agreement.html.j2"
MAX_CHART_PAIRS = 6
"""Pairs drawn in the per-question chart (those against people first); the tables hold all."""


@dataclass
class LevelView:
    level: str
    pairs: list[PairStats]


@dataclass
class AgreementView:
    raters: list[tuple[str, str, str]]
    """Name, kind (judge or human) and source file of each rater."""
    levels: list[LevelView]
    questions: list[str]
    chart: Markup | None
    charted: list[str]
    """The pairs the chart draws, as `A vs B`."""
    n_pairs: int


def _label(pair: PairStats) -> str:
    return f"{pair.rater_a} vs {pair.rater_b}"


def agreement_view(report: AgreementReport) -> AgreementView:
    question = next((lv for lv in report.levels if lv.level == "question"), None)
    units = [u for u in question.breakdown if u.kind == "question"] if question else []
    pairs = list(dict.fromkeys(_label(p) for u in units for p in u.pairwise))
    against_people = [_label(p) for u in units for p in u.pairwise if p.vs_reference]
    charted = list(dict.fromkeys([*against_people, *pairs]))[:MAX_CHART_PAIRS]
    by_unit = {u.unit: {_label(p): p for p in u.pairwise} for u in units}
    series = []
    for label in charted:
        stats = [by_unit[u.unit].get(label) for u in units]
        series.append(
            (
                label,
                [s.kappa.value if s else None for s in stats],
                [s.kappa.ci_low if s else None for s in stats],
                [s.kappa.ci_high if s else None for s in stats],
            )
        )
    chart = plots.kappa_forest([u.unit for u in units], series) if units and series else None
    return AgreementView(
        raters=[(r.name, r.kind, r.source or "") for r in report.raters],
        levels=[LevelView(lv.level, lv.pairwise) for lv in report.levels],
        questions=[u.unit for u in units],
        chart=chart,
        charted=charted,
        n_pairs=len(pairs),
    )


def write_agreement_html(path: str | Path, report: AgreementReport) -> Path:
    """Write the page atomically; returns its path."""
    text = render_page(TEMPLATE, title="Agreement", view=agreement_view(report))
    write_json_atomic(path, text)
    return Path(path)
