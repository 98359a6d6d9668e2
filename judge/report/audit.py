"""The audit section of the HTML report (`judge audit --html`): one table row and one picture
per probe, the noise floor and the cost, read from an `audit` section (an `AuditReport` as
JSON) beside the run's result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from agreement.paired import PairedEffect

from ..audit.render import cost_line, noise_lines, summary_lines
from ..audit.report import AuditReport, ProbeResult
from . import plots


@dataclass
class ProbeRow:
    """One probe as the section shows it."""

    probe: str
    title: str
    cells: list[str]
    verdict: str
    plot: Markup | None = None


@dataclass
class AuditView:
    """The section: a headline, a row (and picture) per probe, the noise floor, notes."""

    headline: str
    rows: list[ProbeRow]
    noise_plot: Markup | None
    lines: list[str] = field(default_factory=list)
    members: list[list[str]] = field(default_factory=list)
    columns: tuple[str, ...] = (
        "probe", "changed", "Yes shift", "flips beyond noise", "pass-rate shift", "bias",
    )  # fmt: skip


def from_section(section: dict[str, Any]) -> AuditView:
    """The view of an `audit` section."""
    report = AuditReport.model_validate(section)
    floor = report.noise.flip_rate.value if report.noise.flip_rate is not None else None
    rows = [_row(p, n, floor) for n, p in enumerate(report.probes)]
    noise_plot = None
    if report.noise.measured and report.noise.questions:
        effect = report.noise.flip_rate
        noise_plot = plots.audit_probe(
            [q.question_id for q in report.noise.questions],
            [q.flip_rate or 0.0 for q in report.noise.questions],
            _overall(effect),
            "share of answers changed when asked again",
            "audit-noise",
        )
    headline = (
        f"{report.judge} audited on {report.n_cases} cases of {report.n_incidents} incidents "
        f"(rubric {report.rubric.get('name')}); 95% intervals resampling incidents. Biases "
        f"found: {report.findings}."
    )
    members = [
        [m.member, m.family, str(m.n_own), str(m.n_other), m.effect.text()] for m in report.members
    ]
    lines = [*noise_lines(report), cost_line(report), *summary_lines(report)[1:]]
    return AuditView(headline, rows, noise_plot, lines, members)


def _row(probe: ProbeResult, n: int, floor: float | None) -> ProbeRow:
    if probe.skipped:
        return ProbeRow(probe.probe, probe.skipped, ["—", "—", "—"], probe.verdict)
    plot = None
    if probe.questions:
        plot = plots.audit_probe(
            [q.question_id for q in probe.questions],
            [q.yes_shift or 0.0 for q in probe.questions],
            _overall(probe.yes_shift),
            f"change in Yes rate ({', '.join(probe.arms)} minus {probe.reference})",
            f"audit-{n}",
        )
    cells = [_text(probe.yes_shift), _text(probe.excess_flips), _text(probe.pass_shift)]
    return ProbeRow(probe.probe, probe.title, cells, probe.verdict, plot)


def _overall(effect: PairedEffect | None) -> tuple[float, float | None, float | None] | None:
    if effect is None or effect.value is None:
        return None
    return effect.value, effect.ci_low, effect.ci_high


def _text(effect: PairedEffect | None) -> str:
    return "—" if effect is None else effect.text()
