"""Terminal output: the per-incident table and the overall summary (rich; plain when piped)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from .results import EvalResult
from .scoring import Estimate


def fmt(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def fmt_estimate(est: Estimate) -> str:
    if est.value is None:
        return "—"
    if est.ci is None:
        return f"{est.value:.2f}"
    return f"{est.value:.2f} [{est.ci.low:.2f}, {est.ci.high:.2f}]"


def incident_table(result: EvalResult) -> Table:
    dims = result.config.get("dimensions", [])
    k = result.overall.k
    table = Table(title="Per incident", show_lines=False)
    table.add_column("incident", overflow="fold")
    table.add_column("trials", justify="right")
    table.add_column("mean", justify="right")
    table.add_column("pass@1", justify="right")
    table.add_column(f"pass@{k}", justify="right")
    table.add_column(f"pass^{k}", justify="right")
    for dim in dims:
        table.add_column(dim, justify="right")
    for inc in result.incidents:
        trials = (
            str(inc.n_trials)
            if inc.n_complete == inc.n_trials
            else f"{inc.n_complete}/{inc.n_trials}"
        )
        table.add_row(
            inc.incident_id,
            trials,
            fmt(inc.mean_composite),
            fmt(inc.pass_at_1),
            fmt(inc.pass_at_k),
            fmt(inc.pass_hat_k),
            *(fmt(inc.dimension_means.get(d)) for d in dims),
        )
    return table


def summary_table(result: EvalResult) -> Table:
    o = result.overall
    table = Table(title="Overall (95% bootstrap CI over incidents)", show_header=False)
    table.add_column("what")
    table.add_column("value")
    table.add_row("incidents scored", f"{o.n_incidents_scored} of {o.n_incidents}")
    table.add_row("mean composite", fmt_estimate(o.mean_composite))
    table.add_row("pass rate (pass@1)", fmt_estimate(o.pass_rate))
    table.add_row(
        f"pass@{o.k} / pass^{o.k}", f"{fmt_estimate(o.pass_at_k)} / {fmt_estimate(o.pass_hat_k)}"
    )
    for dim, est in o.dimension_means.items():
        table.add_row(f"{dim} mean", fmt_estimate(est))
    table.add_row("cases (incomplete)", f"{o.n_cases} ({o.n_incomplete_cases})")
    table.add_row(
        "questions scored / unscored", f"{o.n_scored_questions} / {o.n_unscored_questions}"
    )
    if result.errors:
        table.add_row(
            "provider errors", ", ".join(f"{k}: {v}" for k, v in sorted(result.errors.items()))
        )
    table.add_row("missing incidents", _listing(result.missing))
    table.add_row(
        "orphan submissions", _listing([f"{o.incident_id}/{o.trial}" for o in result.orphans])
    )
    return table


def _listing(items: list[str], most: int = 5) -> str:
    if not items:
        return "0"
    shown = ", ".join(items[:most])
    return f"{len(items)}: {shown}" + (" …" if len(items) > most else "")


def print_result(result: EvalResult, console: Console) -> None:
    console.print(incident_table(result))
    console.print(summary_table(result))
