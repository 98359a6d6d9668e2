"""Rich tables for the terminal. Undefined statistics print as `undefined` with a footnote.

Every number is shown whole at any width: its column is as wide as its widest cell, and names
wrap (a long one folds) rather than being cut. A pairwise table too wide for the terminal (80
columns hold about nine of its twelve columns) folds to a narrow layout: the raters keyed by
number under the title, and its statistics in two tables, one above the other.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

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


Cell = str | Text
"""A table cell: plain text, or styled `Text` (its plain text is what is measured)."""


def fitted_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Cell]],
    title: str | None = None,
    names: int | Collection[int] = 0,
    **table_options: Any,
) -> Table:
    """A table whose name columns (the first `names`, or those indexes) are left-aligned and
    wrapped or folded, never cut, and whose other columns are as wide as their widest cell and
    their header, never cut (rich keeps a column that does not wrap at its whole width, so the
    table's measured minimum is the width it needs)."""
    text = set(range(names)) if isinstance(names, int) else set(names)
    table = Table(title=title, title_justify="left", **table_options)
    for i, header in enumerate(headers):
        if i in text:
            table.add_column(header, overflow="fold")
        else:
            widest = max([len(header), *(len(str(r[i])) for r in rows)])
            table.add_column(header, justify="right", no_wrap=True, min_width=widest)
    for row in rows:
        table.add_row(
            *(Text(c) if i in text and isinstance(c, str) else c for i, c in enumerate(row))
        )
    return table


def keep_whole(table: Table, names: Collection[str]) -> Table:
    """Make an existing table's columns headed `names` wrap or fold, never cut, and every
    other column as wide as its widest cell and its header, never cut."""
    for column in table.columns:
        if column.header in names:
            column.overflow = "fold"
            continue
        column.no_wrap = True
        cells = [len(str(cell)) for cell in column._cells]
        column.min_width = max([len(str(column.header)), *cells])
    return table


@dataclass(frozen=True)
class Columns:
    """A table's cells: key columns, repeated in every part of the narrow layout, and the
    other columns; those headed by one of `names` hold names (wrapped, never cut)."""

    key_headers: Sequence[str]
    keys: Sequence[Sequence[Cell]]
    headers: Sequence[str]
    rows: Sequence[Sequence[Cell]]
    names: Collection[str] = ()

    def part(self, start: int, end: int, **options: Any) -> Table:
        headers = [*self.key_headers, *self.headers[start:end]]
        return fitted_table(
            headers,
            [[*k, *r[start:end]] for k, r in zip(self.keys, self.rows, strict=True)],
            names=[i for i, h in enumerate(headers) if h in self.names],
            **options,
        )


class Folding:
    """A table shown whole when its numbers fit the width it is given; else folded: the title,
    a legend (the raters' names keyed by number), then the statistics' columns in as many
    tables, one above the other, as the width needs, the key columns repeated in each."""

    def __init__(
        self, wide: Table, narrow: Columns, title: str, legend: str = "", caption: str | None = None
    ) -> None:
        self.wide, self.narrow, self.title = wide, narrow, title
        self.legend, self.caption = legend, caption

    def __rich_console__(
        self, console: Console, options: ConsoleOptions
    ) -> Iterator[RenderableType]:
        width = options.max_width
        if _least_width(console, self.wide) <= width:
            yield self.wide
            return
        yield Text(self.title, style="italic", overflow="fold")
        if self.legend:
            yield Text(self.legend, overflow="fold")
        start, total = 0, len(self.narrow.headers)
        while start < total:
            end = start + 1
            while end < total and _least_width(console, self._part(start, end + 1)) <= width:
                end += 1
            yield self._part(start, end)
            start = end
        if self.caption:
            yield Text(self.caption, overflow="fold")

    def _part(self, start: int, end: int) -> Table:
        return self.narrow.part(start, end, box=box.SIMPLE_HEAD, show_edge=False)


def _least_width(console: Console, table: Table) -> int:
    unbounded = console.options.update(width=100_000)
    return Measurement.get(console, unbounded, table).minimum


def pair_table(pairs: list[PairStats], title: str) -> Folding:
    """Rater A | Rater B | n | Yes-rate A/B | agreement | kappa [CI] | PABAK | AC1 (| TPR | TNR |
    F1 vs B), folded (`Folding`) when the terminal is too narrow for it."""
    notes: list[str] = []
    with_reference = any(p.vs_reference for p in pairs)
    with_level = len({p.level for p in pairs}) > 1
    numbers = ["n", "Yes A", "Yes B", "Agreement", "κ [95% CI]", "PABAK", "AC1"]
    if with_reference:
        numbers += ["TPR", "TNR", "Macro F1"]
    rows = []
    for p in pairs:
        row = [
            str(p.n),
            _num(p.yes_rate_a),
            _num(p.yes_rate_b),
            _est(p.agreement, notes),
            _est(p.kappa, notes),
            _est(p.pabak, notes, ci=False),
            _est(p.ac1, notes, ci=False),
        ]
        if with_reference:
            ref = p.vs_reference
            row += (
                [_est(e, notes, ci=False) for e in (ref.tpr, ref.tnr, ref.macro_f1)]
                if ref
                else ["", "", ""]
            )
        rows.append(row)
    level = ["Level"] if with_level else []
    levels: list[list[str]] = [[str(p.level or "")] if with_level else [] for p in pairs]
    wide = fitted_table(
        [*level, "Rater A", "Rater B", *numbers],
        [[*lv, p.rater_a, p.rater_b, *r] for lv, p, r in zip(levels, pairs, rows, strict=True)],
        title,
        names=len(level) + 2,
        caption=_caption(notes),
    )
    raters = list(dict.fromkeys(r for p in pairs for r in (p.rater_a, p.rater_b)))
    key = {name: f"[{i}]" for i, name in enumerate(raters, 1)}
    keyed = Columns(
        [*level, "A", "B"],
        [[*lv, key[p.rater_a], key[p.rater_b]] for lv, p in zip(levels, pairs, strict=True)],
        numbers,
        rows,
    )
    legend = "\n".join(f"{key[name]} {name}" for name in raters)
    return Folding(wide, keyed, title, legend, _caption(notes))


def multi_table(stats: MultiRaterStats, title: str) -> Table:
    """A one-row table of Fleiss κ and Krippendorff α over all raters; undefined estimates
    show as n/a with their reason in the caption.
    """
    notes: list[str] = []
    row = [
        ", ".join(stats.raters),
        str(stats.n_items),
        str(stats.n_complete),
        _est(stats.fleiss_kappa, notes),
        _est(stats.krippendorff_alpha, notes),
    ]
    headers = ("Raters", "Items (2+ raters)", "Items (all)", "Fleiss κ", "Krippendorff α")
    return fitted_table(headers, [row], title, names=1, caption=_caption(notes))


def table2(report: AgreementReport, level: Level = "verdict") -> Table:
    """SREGym Table 2 shape: Judge A | Judge B | agreement | kappa [CI]."""
    rows = [row.cells() for row in table2_rows(report, level)]
    return fitted_table(TABLE2_HEADER, rows, f"Agreement ({level})", names=2)


def _group_tables(groups: list[GroupAgreement], title: str) -> list[Folding]:
    return [
        pair_table(g.pairwise, f"{title}: {g.name} ({g.level}), mean κ {_num(g.mean_kappa)}")
        for g in groups
    ]


def render_table(report: AgreementReport, level: Level = "verdict") -> Folding:
    """The pairwise matrix of one level, as one table."""
    return pair_table(report.level(level).pairwise, f"Pairwise agreement ({level})")


def render_report(report: AgreementReport, breakdown: bool = False) -> Group:
    """All levels' pairwise tables, multi-rater stats, ceiling and self-consistency."""
    parts: list[Table | Folding] = []
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


def sweep_table(judge: JudgeCalibration) -> Folding:
    """A judge's threshold sweep, one row per threshold, titled with its best threshold."""
    notes: list[str] = []
    rows = [
        [
            str(p.n),
            _num(p.pass_rate),
            _est(p.agreement, notes, ci=False),
            _est(p.kappa, notes),
            _est(p.tpr, notes, ci=False),
            _est(p.tnr, notes, ci=False),
        ]
        for p in judge.sweep
    ]
    thresholds = [[f"{p.threshold:.2f}"] for p in judge.sweep]
    headers = ["n", "Pass rate", "Agreement", "κ [95% CI]", "TPR", "TNR"]
    title = (
        f"{judge.judge}: verdict vs {judge.reference} by threshold "
        f"(best {_num(judge.best_threshold)})"
    )
    wide = fitted_table(
        ["Threshold", *headers],
        [[*t, *r] for t, r in zip(thresholds, rows, strict=True)],
        title,
        caption=_caption(notes),
        box=box.SIMPLE_HEAD,
    )
    return Folding(
        wide, Columns(["Threshold"], thresholds, headers, rows), title, "", _caption(notes)
    )


def render_calibration(report: CalibrationReport) -> Group:
    """A calibration report for the terminal: per judge its agreement with the people and its
    threshold sweep, then the human ceiling tables.
    """
    parts: list[Folding] = []
    for judge in report.judges:
        parts.append(pair_table(judge.vs_people, f"{judge.judge} vs people"))
        parts.append(sweep_table(judge))
    parts += _group_tables(report.human_ceiling, "Human ceiling")
    return Group(*parts)
