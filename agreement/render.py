"""Rich tables for the terminal. Undefined statistics print as `undefined` with a footnote."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table

from agreement.calibrate import CalibrationReport, JudgeCalibration
from agreement.ratings import Level
from agreement.report import TABLE2_HEADER, AgreementReport, GroupAgreement, table2_rows
from agreement.stats import Estimate, MultiRaterStats, PairStats


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _est(estimate: Estimate, notes: list[str], ci: bool = True) -> str:
    """The value (and interval); an undefined one points to its reason in the caption."""
    if estimate.value is None:
        if estimate.undefined and estimate.undefined not in notes:
            notes.append(estimate.undefined)
        return (
            f"undefined[{notes.index(estimate.undefined) + 1}]"
            if estimate.undefined
            else "undefined"
        )
    return estimate.text(ci=ci)


def _caption(notes: list[str]) -> str | None:
    return "  ".join(f"[{i}] {note}" for i, note in enumerate(notes, 1)) or None


def pair_table(pairs: list[PairStats], title: str) -> Table:
    """Rater A | Rater B | n | Yes-rate A/B | agreement | kappa [CI] | PABAK | AC1 (| F1 vs B)."""
    notes: list[str] = []
    with_reference = any(p.vs_reference for p in pairs)
    with_level = len({p.level for p in pairs}) > 1
    table = Table(title=title, title_justify="left")
    if with_level:
        table.add_column("Level")
    for header in (
        "Rater A",
        "Rater B",
        "n",
        "Yes A",
        "Yes B",
        "Agreement",
        "κ [95% CI]",
        "PABAK",
        "AC1",
    ):
        table.add_column(header, justify="left" if header.startswith("Rater") else "right")
    if with_reference:
        for header in ("TPR", "TNR", "Macro F1"):
            table.add_column(header, justify="right")
    for p in pairs:
        row = [
            p.rater_a,
            p.rater_b,
            str(p.n),
            _num(p.yes_rate_a),
            _num(p.yes_rate_b),
            _est(p.agreement, notes),
            _est(p.kappa, notes),
            _est(p.pabak, notes, ci=False),
            _est(p.ac1, notes, ci=False),
        ]
        if with_level:
            row.insert(0, p.level or "")
        if with_reference:
            ref = p.vs_reference
            row += (
                [_est(e, notes, ci=False) for e in (ref.tpr, ref.tnr, ref.macro_f1)]
                if ref
                else ["", "", ""]
            )
        table.add_row(*row)
    table.caption = _caption(notes)
    return table


def multi_table(stats: MultiRaterStats, title: str) -> Table:
    """A one-row table of Fleiss κ and Krippendorff α over all raters; undefined estimates
    show as n/a with their reason in the caption.
    """
    notes: list[str] = []
    table = Table(title=title, title_justify="left")
    for header in ("Raters", "Items (2+ raters)", "Items (all)", "Fleiss κ", "Krippendorff α"):
        table.add_column(header)
    table.add_row(
        ", ".join(stats.raters),
        str(stats.n_items),
        str(stats.n_complete),
        _est(stats.fleiss_kappa, notes),
        _est(stats.krippendorff_alpha, notes),
    )
    table.caption = _caption(notes)
    return table


def table2(report: AgreementReport, level: Level = "verdict") -> Table:
    """SREGym Table 2 shape: Judge A | Judge B | agreement | kappa [CI]."""
    table = Table(title=f"Agreement ({level})", title_justify="left")
    for header in TABLE2_HEADER:
        table.add_column(header)
    for row in table2_rows(report, level):
        table.add_row(*row.cells())
    return table


def _group_tables(groups: list[GroupAgreement], title: str) -> list[Table]:
    return [
        pair_table(g.pairwise, f"{title}: {g.name} ({g.level}), mean κ {_num(g.mean_kappa)}")
        for g in groups
    ]


def render_table(report: AgreementReport, level: Level = "verdict") -> Table:
    """The pairwise matrix of one level, as one table."""
    return pair_table(report.level(level).pairwise, f"Pairwise agreement ({level})")


def render_report(report: AgreementReport, breakdown: bool = False) -> Group:
    """All levels' pairwise tables, multi-rater stats, ceiling and self-consistency."""
    parts: list[Table] = []
    for entry in report.levels:
        parts.append(pair_table(entry.pairwise, f"Pairwise agreement ({entry.level})"))
        if entry.multi_rater:
            parts.append(multi_table(entry.multi_rater, f"All raters ({entry.level})"))
        if breakdown:
            for unit in entry.breakdown:
                parts.append(pair_table(unit.pairwise, f"{unit.kind} {unit.unit}"))
    parts += _group_tables(report.human_ceiling, "Human ceiling")
    parts += _group_tables(report.self_consistency, "Self-consistency")
    return Group(*parts)


def sweep_table(judge: JudgeCalibration) -> Table:
    """A judge's threshold sweep, one row per threshold, titled with its best threshold."""
    notes: list[str] = []
    table = Table(
        title=f"{judge.judge}: verdict vs {judge.reference} by threshold "
        f"(best {_num(judge.best_threshold)})",
        title_justify="left",
    )
    for header in ("Threshold", "n", "Pass rate", "Agreement", "κ [95% CI]", "TPR", "TNR"):
        table.add_column(header, justify="right")
    for p in judge.sweep:
        table.add_row(
            f"{p.threshold:.2f}",
            str(p.n),
            _num(p.pass_rate),
            _est(p.agreement, notes, ci=False),
            _est(p.kappa, notes),
            _est(p.tpr, notes, ci=False),
            _est(p.tnr, notes, ci=False),
        )
    table.caption = _caption(notes)
    return table


def render_calibration(report: CalibrationReport) -> Group:
    """A calibration report for the terminal: per judge its agreement with the people and its
    threshold sweep, then the human ceiling tables.
    """
    parts: list[Table] = []
    for judge in report.judges:
        parts.append(pair_table(judge.vs_people, f"{judge.judge} vs people"))
        parts.append(sweep_table(judge))
    parts += _group_tables(report.human_ceiling, "Human ceiling")
    return Group(*parts)
