"""Terminal output: the per-incident table and the overall summary (rich; plain when piped).

Both fit 80 columns: no vertical rules, long incident names shortened in the middle (their
distinguishing tail kept; the full names are in the result file and the HTML report), and the
pass@k / pass^k columns only when k > 1 (with one trial they equal pass@1).
"""

from __future__ import annotations

from rich import box
from rich.console import Console, JustifyMethod
from rich.table import Table
from rich.text import Text

from ..checklist.results import EvalResult
from ..checklist.scoring import Estimate
from .safe_text import visible

MIN_NAME_WIDTH = 10
ELLIPSIS = "…"


def fmt(value: float | None, digits: int = 2) -> str:
    """`value` to `digits` decimals, or an em dash when it is None."""
    return "—" if value is None else f"{value:.{digits}f}"


def fmt_estimate(est: Estimate) -> str:
    """`0.62 [0.50, 0.74]`; the value alone when it has no CI, an em dash when it is undefined."""
    if est.value is None:
        return "—"
    if est.ci is None:
        return f"{est.value:.2f}"
    return f"{est.value:.2f} [{est.ci.low:.2f}, {est.ci.high:.2f}]"


def shorten(name: str, width: int) -> str:
    """`name` cut in the middle to `width` characters, keeping its start and its end."""
    if len(name) <= width:
        return name
    if width <= 1:
        return ELLIPSIS[:width]
    head = (width - 1) // 2
    tail = width - 1 - head
    return name[:head] + ELLIPSIS + (name[-tail:] if tail else "")


def _incident_rows(result: EvalResult, dims: list[str], show_k: bool) -> list[list[str]]:
    rows = []
    for inc in result.incidents:
        trials = (
            str(inc.n_trials)
            if inc.n_complete == inc.n_trials
            else f"{inc.n_complete}/{inc.n_trials}"
        )
        cells = [visible(inc.incident_id), trials, fmt(inc.mean_composite), fmt(inc.pass_at_1)]
        if show_k:
            cells += [fmt(inc.pass_at_k), fmt(inc.pass_hat_k)]
        rows.append(cells + [fmt(inc.dimension_means.get(d)) for d in dims])
    return rows


def incident_table(result: EvalResult, width: int = 80) -> Table:
    """Per incident: trials, mean composite, pass@1 (pass@k and pass^k when k > 1) and dimension
    means, the incident column narrowed as needed to fit `width`.
    """
    dims = result.config.get("dimensions") or list(result.overall.dimension_means)
    k = result.overall.k
    show_k = k > 1
    headers = ["incident", "trials", "mean", "pass@1"]
    if show_k:
        headers += [f"pass@{k}", f"pass^{k}"]
    headers += list(dims)
    rows = _incident_rows(result, dims, show_k)
    longest = max([len(headers[0]), *(len(r[0]) for r in rows)])
    spare = width - _measure(_build(headers, rows, result, longest), width)
    return _build(headers, rows, result, max(MIN_NAME_WIDTH, longest + min(spare, 0)))


def _measure(table: Table, width: int) -> int:
    """The width the table needs when nothing in it is shortened."""
    return Console(width=max(width, 1000)).measure(table).maximum


def _build(headers: list[str], rows: list[list[str]], result: EvalResult, name_width: int) -> Table:
    table = Table(title="Per incident", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    table.add_column("incident", no_wrap=True, overflow="ellipsis", max_width=name_width)
    for i, header in enumerate(headers[1:], 1):
        size = max(len(header), *(len(r[i]) for r in rows)) if rows else len(header)
        table.add_column(header, justify="right", no_wrap=True, min_width=size)
    threshold = (result.config.get("rubric") or {}).get("threshold")
    for inc, row in zip(result.incidents, rows, strict=True):
        low = (
            threshold is not None
            and inc.mean_composite is not None
            and inc.mean_composite < threshold - 1e-9
        )
        name = Text(shorten(row[0], name_width))  # Text: never parsed as rich markup
        table.add_row(name, *row[1:], style="red" if low else None)
    return table


def summary_table(result: EvalResult) -> Table:
    """The run's overall numbers with bootstrap CIs, question and case counts, and failed calls."""
    o = result.overall
    table = Table(
        title="Overall (95% bootstrap CI over incidents)", show_header=False, box=box.SIMPLE
    )
    table.add_column("what", no_wrap=True)
    table.add_column("value", overflow="fold")
    table.add_row("incidents scored", f"{o.n_incidents_scored} of {o.n_incidents}")
    table.add_row("mean composite", fmt_estimate(o.mean_composite))
    table.add_row("pass rate (pass@1)", fmt_estimate(o.pass_rate))
    if o.k > 1:
        table.add_row(f"pass@{o.k}", fmt_estimate(o.pass_at_k))
        table.add_row(f"pass^{o.k}", fmt_estimate(o.pass_hat_k))
    for dim, est in o.dimension_means.items():
        table.add_row(f"{dim} mean", fmt_estimate(est))
    table.add_row("cases (incomplete)", f"{o.n_cases} ({o.n_incomplete_cases})")
    table.add_row(
        "questions scored / unscored",
        f"{o.n_scored_questions} / {o.n_unscored_questions}"
        + (f" ({o.n_failed_questions} by failed calls)" if o.n_failed_questions else ""),
    )
    entities = _entities_row(result)
    if entities is not None:
        table.add_row("root-cause entities", entities)
    if result.errors:
        table.add_row(
            "provider errors", ", ".join(f"{k}: {v}" for k, v in sorted(result.errors.items()))
        )
    batch = _batch_row(result)
    if batch is not None:
        table.add_row("batch", batch)
    table.add_row("missing incidents", _listing(result.missing))
    orphans = [f"{o.incident_id} (trial {o.trial})" for o in result.orphans]
    table.add_row("orphan submissions", _listing(orphans))
    return table


def _entities_row(result: EvalResult) -> str | None:
    """Entity precision, recall and F1 (means over the cases whose submissions name structured
    root-cause entities, computed in code), and how often the first entity is the origin; None
    when no submission names any."""
    block = result.entities or {}
    mean = block.get("mean") or {}
    if not block.get("n"):
        return None
    text = (
        f"precision {fmt(mean.get('precision'))}, recall {fmt(mean.get('recall'))}, "
        f"F1 {fmt(mean.get('f1'))} over {block['n']} cases"
    )
    top = mean.get("top_is_origin")
    return text + (f"; first entity is the origin in {fmt(top)}" if top is not None else "")


def _batch_row(result: EvalResult) -> Text | None:
    """Batch mode (`--batch`): the answers its batches gave, their ids, and the discount in
    the cost; None for a run that batched nothing."""
    from ..run.progress import cost_text

    usage = result.usage
    if usage is None or usage.batch is None:
        return None
    answered = [c for c in result.calls if c.batch_id and c.error is None]
    ids = [c.batch_id for c in result.calls if c.batch_id]
    ids += [*usage.batch.get("batches", []), *usage.batch.get("resumed", [])]
    if not ids:
        return None
    shown = ", ".join(visible(str(i)) for i in dict.fromkeys(ids))
    cost = cost_text(usage.cost_usd, usage.cost_unknown_requests)
    return Text(
        f"{len(answered)} answers from batch {shown}; cost {cost} at the batch price "
        f"({_discount_words(usage.batch.get('discount'))})"
    )


def _discount_words(discount: float | None) -> str:
    if discount is None:
        return "batch discount unknown"
    if not discount:
        return "no batch discount from this provider"
    return f"{discount:.0%} batch discount"


def _listing(items: list[str], most: int = 5) -> Text:
    if not items:
        return Text("0")
    shown = ", ".join(visible(item) for item in items[:most])
    return Text(f"{len(items)}: {shown}" + (" …" if len(items) > most else ""))


def agent_table(result: EvalResult) -> Table | None:
    """One row per agent (95% bootstrap CIs over that agent's incidents), when several answered."""
    if not result.by_agent:
        return None
    from agreement.render import keep_whole  # here: a run with one agent never imports numpy

    table = Table(title="By agent", box=box.SIMPLE_HEAVY)
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("agent", "left"),
        ("incidents", "right"),
        ("mean composite", "right"),
        ("pass rate", "right"),
    )
    for col, justify in columns:
        table.add_column(col, justify=justify)
    for agent, o in result.by_agent.items():
        table.add_row(
            Text(visible(agent)),  # whole at any width: wrapped, never cut
            f"{o.n_incidents_scored} of {o.n_incidents}",
            fmt_estimate(o.mean_composite),
            fmt_estimate(o.pass_rate),
        )
    return keep_whole(table, ("agent",))


def print_result(result: EvalResult, console: Console) -> None:
    """Print a result's incident table (at most 120 wide), summary and, if any, per-agent table."""
    console.print(incident_table(result, width=min(console.width, 120)))
    console.print(summary_table(result))
    agents = agent_table(result)
    if agents is not None:
        console.print(agents)
