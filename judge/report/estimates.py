"""The corrected-with-labels section (`judge estimate`, `judge report --labels`): the same
rows for the terminal (rich) and the HTML report (plain tables)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agreement.ppi import MeanEstimate, PPIEstimate

from ..labelling.estimate import AgentDifference, LabelledEstimates, Stratified

MEAN_COLUMNS = ["", "judge only", "labels only", "PPI++", "λ", "labels worth"]
DIFFERENCE_COLUMNS = ["A − B", "judge only", "labels only", "PPI++", "labels worth", "verdict"]


@dataclass
class EstimateTable:
    """A table of the section: title, columns, rows of text."""

    title: str
    columns: list[str]
    rows: list[list[str]]


@dataclass
class EstimatesView:
    """The section as shown: a headline, its tables and the notes."""

    headline: str
    tables: list[EstimateTable]
    notes: list[str] = field(default_factory=list)


def build(estimates: LabelledEstimates) -> EstimatesView:
    """The section's headline, tables and notes; an undefined estimate points to its reason."""
    e = estimates
    cells = _Cells()
    level = f"{100 * e.confidence:g}%"
    headline = (
        f"Labels by {e.labeller} on {e.n_labelled} of {e.n_cases} cases "
        f"({e.n_labelled_incidents} of {e.n_incidents} incidents; {e.design}); {level} "
        "intervals. Means over the cases with a verdict, each case once; incidents are the "
        "clusters. PPI++ stays valid however biased the judge; 'labels worth' is how many "
        "labels the labels-only estimate would need to be as precise as PPI++."
    )
    means = [cells.mean("pass rate", e.pass_rate), cells.mean("mean composite", e.mean_composite)]
    means += [cells.mean(f"{d} mean", est) for d, est in e.dimensions.items()]
    tables = [EstimateTable("Corrected means", MEAN_COLUMNS, means)]
    if e.agents:
        number = {agent: f"#{n}" for n, agent in enumerate(e.agents, 1)}
        rows = [cells.mean(f"{number[a]} {a}", est) for a, est in e.agents.items()]
        tables.append(EstimateTable("Pass rate by agent", ["agent", *MEAN_COLUMNS[1:]], rows))
        diffs = [cells.difference(d, number) for d in e.differences]
        tables.append(EstimateTable("Is agent A better than agent B?", DIFFERENCE_COLUMNS, diffs))
    if e.stratified is not None:
        tables += _stratified_tables(e.stratified, cells)
    notes = list(e.notes)
    if any(_zero_width(est) for est in _all(e)):
        notes.append(
            "a zero-width interval means every label (and judge value) in it agrees: a normal "
            "interval then understates the uncertainty of so few cases"
        )
    notes += [f"[{n}] {reason}" for n, reason in enumerate(cells.reasons, 1)]
    return EstimatesView(headline, tables, notes)


def from_section(section: dict[str, Any]) -> EstimatesView:
    """The view of an `estimates` section of a result file (LabelledEstimates as JSON)."""
    return build(LabelledEstimates.model_validate(section))


def render(estimates: LabelledEstimates) -> Any:
    """The section for the terminal: rich tables under the headline, the notes below."""
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    view = build(estimates)
    parts: list[Any] = [Text(view.headline)]
    for t in view.tables:
        table = Table(title=t.title, title_justify="left", box=box.SIMPLE_HEAD)
        for n, column in enumerate(t.columns):
            table.add_column(column, justify="left" if n == 0 or column == "verdict" else "right")
        for row in t.rows:
            table.add_row(*row)
        parts.append(table)
    parts += [Text(f"note: {n}") for n in view.notes]
    return Group(*parts)


class _Cells:
    """Table cells; an undefined estimate is `undefined[n]`, its reason the n-th footnote."""

    def __init__(self) -> None:
        self.reasons: list[str] = []

    def text(self, est: MeanEstimate) -> str:
        if est.value is not None or not est.note:
            return est.text(2)
        if est.note not in self.reasons:
            self.reasons.append(est.note)
        return f"undefined[{self.reasons.index(est.note) + 1}]"

    def mean(self, name: str, est: PPIEstimate) -> list[str]:
        return [
            name,
            self.text(est.judge_only),
            f"{self.text(est.labels_only)} (n={est.labels_only.n_labels})",
            self.text(est.ppi),
            "—" if est.ppi.lam is None else f"{est.ppi.lam:.2f}",
            _worth(est.effective_labels, est.labels_only.n_labels),
        ]

    def difference(self, d: AgentDifference, number: dict[str, str]) -> list[str]:
        diff = d.difference
        a, b = number[diff.a], number[diff.b]
        verdict = {
            "A better": f"{a} better",
            "B better": f"{b} better",
            "cannot tell apart": "cannot tell them apart",
        }[diff.verdict]
        return [
            f"{a} − {b}",
            self.text(diff.judge_only),
            f"{self.text(diff.labels_only)} (n={diff.labels_only.n_labels})",
            self.text(diff.ppi),
            _worth(d.effective_labels, diff.labels_only.n_labels),
            verdict,
        ]


def _stratified_tables(s: Stratified, cells: _Cells) -> list[EstimateTable]:
    """`judge estimate --by`: the run's means corrected stratum by stratum, and each
    stratum's pass rate."""
    columns = ["", "judge only", "labels only", "PPI++", "labels worth"]
    named = [("pass rate", s.pass_rate), ("mean composite", s.mean_composite)]
    named += [(f"{d} mean", est) for d, est in s.dimensions.items()]
    means = [
        [
            name,
            cells.text(est.judge_only),
            f"{cells.text(est.labels_only)} (n={est.labels_only.n_labels})",
            cells.text(est.ppi),
            _worth(est.effective_labels, est.labels_only.n_labels),
        ]
        for name, est in named
    ]
    correction = "with the finite-population correction" if s.pass_rate.finite_population else ""
    strata = [
        [
            stratum.stratum,
            f"{stratum.share:.2f}",
            f"{stratum.n_labels} of {stratum.n_items}",
            cells.text(stratum.judge_only),
            cells.text(stratum.labels_only),
            cells.text(stratum.ppi),
            "—" if stratum.ppi.lam is None else f"{stratum.ppi.lam:.2f}",
        ]
        for stratum in s.pass_rate.strata
    ]
    return [
        EstimateTable(
            f"This run's means, stratified by {s.by} (stratified PPI++ {correction})".strip(),
            columns,
            means,
        ),
        EstimateTable(
            f"Pass rate by {s.by}",
            [s.by, "share", "labelled", "judge only", "labels only", "PPI++", "λ"],
            strata,
        ),
    ]


def _worth(effective: float | None, n: int) -> str:
    return "—" if effective is None else f"{effective:.1f} (of {n})"


def _all(e: LabelledEstimates) -> list[MeanEstimate]:
    ests = [e.pass_rate, e.mean_composite, *e.dimensions.values(), *e.agents.values()]
    out = [x for est in ests for x in (est.labels_only, est.ppi)]
    if e.stratified is not None:
        s = e.stratified
        for est in [s.pass_rate, s.mean_composite, *s.dimensions.values()]:
            out += [est.labels_only, est.ppi]
    return out + [x for d in e.differences for x in (d.difference.labels_only, d.difference.ppi)]


def _zero_width(est: MeanEstimate) -> bool:
    return est.se == 0 and est.n_labels > 0
