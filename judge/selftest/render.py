"""A selftest report as terminal tables: the probe kinds, the questions under each, the
failing checks with the judge's evidence, and what could not be derived or judged. Every
string from a spec, a diagnosis or a judge is shown as plain text (`rich.text.Text`, control
characters made visible), never read as markup."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.table import Table
from rich.text import Text

from agreement.render import Cell, Columns, Folding, fitted_table
from ground_truth.errors import visible

from .cases import CallPlan
from .report import SelftestReport

MOST_FAILURES = 30


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _text(value: Any, most: int = 160) -> Text:
    shown = visible(" ".join(str(value if value is not None else "").split()))
    return Text(shown if len(shown) <= most else shown[: most - 1] + "…")


def kinds_table(report: SelftestReport) -> Table:
    """One row per probe kind: probes, scored, behaved as expected, share, pass rate."""
    table = Table(title=f"judge selftest: {report.judge} on rubric {report.rubric.get('name')}")
    for column in ("probe kind", "must", "probes", "scored", "as expected", "share", "pass rate"):
        table.add_column(column, justify="left" if column in ("probe kind", "must") else "right")
    for kind in report.kinds:
        must = "pass" if kind.kind in ("truth", "rewrite", "golden-pass") else "fail"
        share = Text(_pct(kind.share), style="red" if kind.below else "green")
        table.add_row(
            kind.kind,
            must,
            str(kind.probes),
            str(kind.scored),
            str(kind.behaved),
            share,
            _pct(kind.pass_rate),
        )
    return table


def questions_table(report: SelftestReport) -> Folding:
    """The share of each question's checks met, one column per probe kind (folded into
    several tables, the question repeated in each, when the terminal is too narrow)."""
    kinds = list(dict.fromkeys(q.kind for q in report.questions))
    cells = {(q.question_id, q.kind): q for q in report.questions}
    questions = sorted({q.question_id for q in report.questions})
    rows: list[list[Cell]] = []
    for qid in questions:
        row: list[Cell] = []
        for kind in kinds:
            cell = cells.get((qid, kind))
            style = "green" if cell is not None and cell.share == 1 else "red"
            shown = "" if cell is None else f"{_pct(cell.share)} ({cell.expected})"
            row.append(Text(shown, style=style))
        rows.append(row)
    title = "per question: share as expected (expected answer)"
    keys: list[list[Cell]] = [[qid] for qid in questions]
    wide = fitted_table(
        ["question", *kinds], [[*k, *r] for k, r in zip(keys, rows, strict=True)], title
    )
    return Folding(wide, Columns(["question"], keys, kinds, rows), title)


def failures_table(report: SelftestReport, most: int = MOST_FAILURES) -> Table | None:
    """The first `most` failing checks; None when there is none."""
    if not report.failures:
        return None
    shown = report.failures[:most]
    more = len(report.failures) - len(shown)
    title = f"failing checks ({len(report.failures)}" + (
        f"; the first {len(shown)} shown, --json lists all)" if more else ")"
    )
    table = Table(title=title)
    for column in ("probe", "check", "expected", "answer", "evidence"):
        table.add_column(column, overflow="fold")
    for failure in shown:
        table.add_row(
            _text(failure.probe_id, 70),
            failure.question_id,
            failure.expected,
            _text(failure.answer),
            _text(failure.evidence),
        )
    return table


def notes(report: SelftestReport) -> list[str]:
    """One line each for skipped probes (by kind and reason) and unscored probes."""
    lines = []
    skipped = Counter((s.kind, s.reason) for s in report.skipped)
    for (kind, reason), count in sorted(skipped.items()):
        lines.append(f"skipped {count} {kind} probe(s): {reason}")
    unscored = [p for p in report.probes if p.behaved is None]
    if unscored:
        reasons = Counter(r for p in unscored for r in p.unscored.values())
        common = "; ".join(f"{visible(r)} ({n})" for r, n in reasons.most_common(3))
        lines.append(f"{len(unscored)} probe(s) unscored, counted apart: {common}")
    return lines


def plan_line(plan: CallPlan, max_cost: float | None = None, unit: str = "probes") -> str:
    """What the selftest (or another run over cases: `unit` names them) will ask, said before
    it asks."""
    head = f"{plan.cases} {unit}"
    if plan.offline:
        return f"{head}: {plan.calls} judge calls, answered offline (no provider, no cost)"
    head += f": {plan.calls} calls to make, {plan.stored} answered by the store"
    if plan.calls == 0:
        cost = "nothing to pay"
    elif plan.cost_usd is None:
        cost = f"cost unknown (no price for {', '.join(plan.unpriced)})"
    else:
        cost = (
            f"estimated cost ${plan.cost_usd:.4f} (prompt characters / 4 and "
            f"{plan.completion_tokens} completion tokens a call, at litellm's prices)"
        )
    limit = f"; --max-cost {max_cost:g} stops it" if max_cost is not None else ""
    return f"{head}; {cost}{limit}"
