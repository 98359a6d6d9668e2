"""Whether a leaderboard's order survives a change of judge: Kendall's tau-b and Spearman's rho
between the per-agent pass rates (and mean composites) that two judges give the same agents,
each judge against the others' consensus (leave one judge out), with intervals resampling
incidents.

A judge is a result file (`judge eval`); a panel's result brings its members too, each scored
from its own answers with the result's rubric weights and threshold (as a panel member would
have scored alone). An agent's pass rate is the mean over incidents of its cases' pass share,
its mean composite the same over composites (the result's `by_agent` means). Agents come from
the cases' `agent` field.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from agreement.errors import LabelFileError
from agreement.readers import Source, default_rater, list_field, load_result_data, text_field
from agreement.stats import CONFIDENCE, ClusterBootstrap, Estimate

Metric = Literal["pass_rate", "mean_composite"]
METRICS: tuple[Metric, ...] = ("pass_rate", "mean_composite")


class AgentScore(BaseModel):
    """One agent under one judge."""

    pass_rate: float | None
    mean_composite: float | None
    n_cases: int
    n_incidents: int


class RankCorrelation(BaseModel):
    """How alike two rankings of the agents are (1: the same order, -1: reversed)."""

    a: str
    b: str
    metric: Metric
    n_agents: int
    kendall_tau: Estimate = Field(description="Kendall's tau-b (ties counted as scipy does).")
    spearman_rho: Estimate = Field(description="Spearman's rho on average ranks.")


class RankReport(BaseModel):
    """`judge agreement --rank`: each judge's scores per agent, every pair of judges' rank
    correlations, and each judge against the mean of the others (with three judges or more)."""

    raters: list[str]
    agents: list[str]
    scores: dict[str, dict[str, AgentScore]]
    pairs: list[RankCorrelation]
    held_out: list[RankCorrelation] = Field(
        default_factory=list,
        description="Each judge (a) against the mean of the other judges' scores (b).",
    )
    n_incidents: int
    B: int
    seed: int
    notes: list[str] = Field(default_factory=list)


@dataclass
class _Rater:
    """One judge's cases: (incident, agent) -> the pass values and composites of its cases."""

    name: str
    passed: dict[tuple[str, str], list[float]] = field(default_factory=lambda: defaultdict(list))
    composite: dict[tuple[str, str], list[float]] = field(default_factory=lambda: defaultdict(list))

    def add(self, incident: str, agent: str, passed: bool | None, composite: float | None) -> None:
        if passed is not None:
            self.passed[(incident, agent)].append(float(passed))
        if composite is not None:
            self.composite[(incident, agent)].append(float(composite))


def read_raters(sources: Sequence[Source], members: bool = True) -> list[_Rater]:
    """Every judge of `sources` (a panel's members too, when `members`), names made distinct."""
    raters: list[_Rater] = []
    for source in sources:
        data, path = load_result_data(source)
        raters += _raters_of(data, path, members)
    seen: dict[str, int] = defaultdict(int)
    for rater in raters:
        seen[rater.name] += 1
        if seen[rater.name] > 1:
            rater.name = f"{rater.name} ({seen[rater.name]})"
    return raters


def _raters_of(data: Mapping[str, Any], path: str | None, members: bool) -> list[_Rater]:
    main = _Rater(default_rater(data, path))
    agents: dict[tuple[str, str], str] = {}
    for i, case in enumerate(list_field(data, "cases", path)):
        where = f"cases[{i}]"
        if not isinstance(case, Mapping):
            raise LabelFileError(path, "expected an object", field=where)
        key = (
            text_field(case, "incident_id", path, where),
            text_field(case, "trial", path, where, "1"),
        )
        agent = case.get("agent")
        if agent is None:
            continue
        agents[key] = str(agent)
        main.add(key[0], str(agent), case.get("passed"), case.get("composite"))
    if not agents:
        raise LabelFileError(
            path, "no case names its agent: ranking agents needs results of named agents"
        )
    found = [main]
    if members:
        found += _members(data, path, agents)
    return found


def _members(
    data: Mapping[str, Any], path: str | None, agents: dict[tuple[str, str], str]
) -> list[_Rater]:
    """A panel's members, each scored from its own answers with the result's rubric."""
    config = data.get("config") or {}
    own = (config.get("judge") or {}).get("label")
    rubric = config.get("rubric") or {}
    weights, threshold = rubric.get("weights"), rubric.get("threshold")
    if not own or not isinstance(weights, Mapping) or threshold is None:
        return []
    answers: dict[str, dict[tuple[str, str], dict[str, list[bool]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    rows = [*list_field(data, "judgments", path), *list_field(data, "member_judgments", path)]
    for row in rows:
        judge = row.get("judge") if isinstance(row, Mapping) else None
        if not judge or judge == own or row.get("answer") not in ("Yes", "No"):
            continue
        key = (str(row.get("incident_id")), str(row.get("trial", "1")))
        answers[str(judge)][key][str(row.get("dimension_id"))].append(row["answer"] == "Yes")
    found = []
    for name, cases in answers.items():
        rater = _Rater(str(name))
        for key, dims in cases.items():
            if key in agents:
                composite = _composite(dims, weights)
                passed = None if composite is None else composite >= float(threshold) - 1e-9
                rater.add(key[0], agents[key], passed, composite)
        found.append(rater)
    return found


def _composite(dims: Mapping[str, list[bool]], weights: Mapping[str, Any]) -> float | None:
    if any(not dims.get(d) for d in weights):
        return None
    return round(sum(float(w) * sum(dims[d]) / len(dims[d]) for d, w in weights.items()), 10)


@dataclass
class _Matrices:
    """Per rater and metric: incidents x agents of per-incident means, and where there are."""

    incidents: list[str]
    agents: list[str]
    values: dict[tuple[str, Metric], np.ndarray]
    present: dict[tuple[str, Metric], np.ndarray]

    def rates(self, rater: str, metric: Metric, weights: np.ndarray) -> np.ndarray:
        """Per-agent means over incidents weighted by `weights` (rows: resamples); nan where an
        agent has no incident."""
        values, present = self.values[(rater, metric)], self.present[(rater, metric)]
        with np.errstate(divide="ignore", invalid="ignore"):
            return (weights @ (values * present)) / (weights @ present)


def _matrices(raters: list[_Rater]) -> _Matrices:
    incidents = sorted({i for r in raters for i, _ in [*r.passed, *r.composite]})
    agents = sorted({a for r in raters for _, a in [*r.passed, *r.composite]})
    row, column = {i: n for n, i in enumerate(incidents)}, {a: n for n, a in enumerate(agents)}
    values, present = {}, {}
    for rater in raters:
        for metric, cells in (("pass_rate", rater.passed), ("mean_composite", rater.composite)):
            v = np.zeros((len(incidents), len(agents)))
            p = np.zeros_like(v)
            for (incident, agent), items in cells.items():
                v[row[incident], column[agent]] = float(np.mean(items))
                p[row[incident], column[agent]] = 1.0
            values[(rater.name, metric)], present[(rater.name, metric)] = v, p
    return _Matrices(incidents, agents, values, present)  # type: ignore[arg-type]


def rank_stability(
    sources: Sequence[Source], *, B: int = 1000, seed: int = 0, members: bool = True
) -> RankReport:
    """Rank correlations of the agents' scores between the judges of `sources` (result files
    or their parsed JSON), with 95% intervals from `B` resamples of incidents."""
    raters = read_raters(sources, members)
    if len(raters) < 2:
        raise LabelFileError(
            None, "ranking stability needs two judges or more: give two result files or a panel's"
        )
    m = _matrices(raters)
    boot = ClusterBootstrap(m.incidents, B=B, seed=seed)
    full = np.ones((1, len(m.incidents)))
    names = [r.name for r in raters]
    report = RankReport(
        raters=names,
        agents=m.agents,
        scores={r.name: _scores(r, m) for r in raters},
        pairs=[],
        n_incidents=len(m.incidents),
        B=B,
        seed=seed,
    )
    if len(m.agents) < 3:
        report.notes.append(
            f"{len(m.agents)} agents: a rank correlation of fewer than 3 agents says little"
        )
    for metric in METRICS:
        point = {n: m.rates(n, metric, full)[0] for n in names}
        resampled = {n: m.rates(n, metric, boot.weights) for n in names}
        for a, b in combinations(names, 2):
            report.pairs.append(
                _correlation(a, b, metric, point[a], point[b], resampled[a], resampled[b], boot)
            )
        if len(names) >= 3:
            for a in names:
                others = [n for n in names if n != a]
                rest = _mean_of([point[n] for n in others])
                rest_b = _mean_of([resampled[n] for n in others])
                label = "mean of the others"
                report.held_out.append(
                    _correlation(a, label, metric, point[a], rest, resampled[a], rest_b, boot)
                )
    return report


def _mean_of(arrays: list[np.ndarray]) -> np.ndarray:
    """The element-wise mean of the arrays' numbers (nan where none has one), quietly."""
    stacked = np.stack(arrays)
    counts = np.isfinite(stacked).sum(axis=0)
    sums = np.where(np.isfinite(stacked), stacked, 0.0).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def _scores(rater: _Rater, m: _Matrices) -> dict[str, AgentScore]:
    full = np.ones((1, len(m.incidents)))
    rates = {metric: m.rates(rater.name, metric, full)[0] for metric in METRICS}
    found = {}
    for n, agent in enumerate(m.agents):
        cases = sum(len(v) for (i, a), v in rater.passed.items() if a == agent)
        incidents = len({i for (i, a) in rater.passed if a == agent})
        found[agent] = AgentScore(
            pass_rate=_finite(rates["pass_rate"][n]),
            mean_composite=_finite(rates["mean_composite"][n]),
            n_cases=cases,
            n_incidents=incidents,
        )
    return found


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def _correlation(
    a: str,
    b: str,
    metric: Metric,
    x: np.ndarray,
    y: np.ndarray,
    xs: np.ndarray,
    ys: np.ndarray,
    boot: ClusterBootstrap,
) -> RankCorrelation:
    both = np.isfinite(x) & np.isfinite(y)
    tau = _estimate(
        kendall_tau_b(x, y), [kendall_tau_b(p, q) for p, q in zip(xs, ys, strict=True)], boot
    )
    rho = _estimate(
        spearman_rho(x, y), [spearman_rho(p, q) for p, q in zip(xs, ys, strict=True)], boot
    )
    return RankCorrelation(
        a=a, b=b, metric=metric, n_agents=int(both.sum()), kendall_tau=tau, spearman_rho=rho
    )


def _estimate(value: float, replicates: list[float], boot: ClusterBootstrap) -> Estimate:
    if not np.isfinite(value):
        return Estimate(undefined="undefined: fewer than 2 agents, or one judge scores all alike")
    finite = np.array([r for r in replicates if np.isfinite(r)])
    if len(boot.clusters) < 2 or finite.size < 2:
        return Estimate(value=float(value), ci_note="too few incidents for an interval")
    tail = (1 - CONFIDENCE) / 2
    low, high = np.quantile(finite, [tail, 1 - tail])
    note = (
        None
        if finite.size == boot.B
        else f"undefined in {boot.B - finite.size} of {boot.B} resamples (dropped)"
    )
    return Estimate(value=float(value), ci_low=float(low), ci_high=float(high), ci_note=note)


def kendall_tau_b(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Kendall's tau-b of the pairs where both are numbers (nan when undefined): concordant
    minus discordant pairs over the root of the untied pairs of each, as scipy computes it."""
    xv, yv = _both(x, y)
    if xv.size < 2:
        return float("nan")
    sx = np.sign(xv[:, None] - xv[None, :])[np.triu_indices(xv.size, 1)]
    sy = np.sign(yv[:, None] - yv[None, :])[np.triu_indices(yv.size, 1)]
    denominator = np.sqrt(float((sx * sx).sum()) * float((sy * sy).sum()))
    return float((sx * sy).sum() / denominator) if denominator > 0 else float("nan")


def spearman_rho(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Spearman's rho of the pairs where both are numbers: the correlation of their average
    ranks (nan when either is constant)."""
    xv, yv = _both(x, y)
    if xv.size < 2:
        return float("nan")
    rx, ry = _average_ranks(xv), _average_ranks(yv)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    denominator = np.sqrt(float((rx * rx).sum()) * float((ry * ry).sum()))
    return float((rx * ry).sum() / denominator) if denominator > 0 else float("nan")


def _both(
    x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    xv, yv = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(xv) & np.isfinite(yv)
    return xv[keep], yv[keep]


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties sharing their mean rank."""
    below = (values[None, :] < values[:, None]).sum(axis=1)
    equal = (values[None, :] == values[:, None]).sum(axis=1)
    return below + (equal + 1) / 2.0


RankTable = tuple[str, list[str], list[list[str]]]
"""A plain table: title, column names, rows of cells."""


def rank_rows(report: RankReport) -> list[RankTable]:
    """The report as plain tables (the terminal's and the HTML report's): pass rate per agent
    and judge, then the correlations."""
    tables: list[RankTable] = [
        (
            "pass rate (mean composite) per agent",
            ["agent", *report.raters],
            [
                [agent, *(_score_text(report.scores[r].get(agent)) for r in report.raters)]
                for agent in report.agents
            ],
        )
    ]
    for title, rows in (("rank correlation between judges", report.pairs),
                        ("each judge against the mean of the others", report.held_out)):  # fmt: skip
        if rows:
            tables.append(
                (
                    f"{title} (95% intervals resampling incidents)",
                    ["judge A", "judge B", "ranked by", "agents", "Kendall tau-b", "Spearman rho"],
                    [_correlation_cells(c) for c in rows],
                )
            )
    return tables


def _correlation_cells(c: RankCorrelation) -> list[str]:
    metric = c.metric.replace("_", " ")
    return [c.a, c.b, metric, str(c.n_agents), c.kendall_tau.text(), c.spearman_rho.text()]


def rank_tables(report: RankReport) -> list[Any]:
    """The report as rich tables."""
    from rich.table import Table
    from rich.text import Text

    tables: list[Any] = []
    for title, columns, rows in rank_rows(report):
        table = Table(title=title)
        for n, column in enumerate(columns):
            numbers = column == "agents" or (columns[0] == "agent" and n > 0)
            table.add_column(Text(column), justify="right" if numbers else "left")
        for row in rows:
            table.add_row(*(Text(cell) for cell in row))
        tables.append(table)
    return tables


def _score_text(score: AgentScore | None) -> str:
    if score is None or score.pass_rate is None:
        return "—"
    composite = "" if score.mean_composite is None else f" ({score.mean_composite:.2f})"
    return f"{score.pass_rate:.2f}{composite}"
