"""What the HTML report shows, computed from a result: the template only lays it out.

This module assembles the view and computes its top: the run's configuration, the headline
figures, the dimensions and the plots. The case details are `cases.py` (with the raw replies
behind each call, `replies.py`, when the result names its store and the store is there), a
large run's pages of cases `pages.py`, and the sections computed beside the judge
(`resolution`, `agreement`, a cascade) `sections.py`: those are read as optional plain data
from the result, so the report works with result files written before or without them.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any, TypeVar

from markupsafe import Markup

from ..checklist.judgment import Judgment
from ..checklist.results import CallRecord, EvalResult
from ..checklist.scoring import Estimate
from ..checklist.texts import CaseTexts
from . import plots
from .cases import CaseIndex, IncidentView, incident_views
from .display import fmt
from .estimates import EstimatesView
from .estimates import from_section as estimates_view
from .pages import CasePage, PageLink, incident_summaries, page_link
from .questions import ALL_AGENTS, QuestionShare, plotted, question_shares
from .replies import ReplySource
from .safe_text import visible
from .sections import (
    Table,
    agreement_tables,
    cascade_section,
    ranking_tables,
    resolution_rows,
)

if TYPE_CHECKING:
    from .audit import AuditView

T = TypeVar("T")
OPTIONAL_SECTIONS = ("resolution", "agreement", "entities", "estimates", "audit")


@dataclass
class Stat:
    """A headline figure: label, value, a detail line and a colour tone."""

    label: str
    value: str
    detail: str = ""
    tone: str = ""


@dataclass
class DimensionRow:
    """One dimension's mean over incidents with its weight and scored/unscored counts."""

    id: str
    name: str | None
    weight: float | None
    estimate: Estimate
    n_scored: int
    n_unscored: int


@dataclass
class Usage:
    """A run's call totals: calls, attempts, tokens and the cost of the calls with a known price."""

    n_calls: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    n_with_usage: int = 0
    n_priced: int = 0


MAX_TABLE_ROWS = 1000
"""Rows of the unscored-question, provider-error and resolution tables; the rest are counted."""


@dataclass
class ReportView:
    """Everything the HTML template shows, computed from a result and optional texts."""

    title: str
    result: EvalResult
    config_rows: list[tuple[str, str]]
    usage: Usage
    headline: list[Stat]
    threshold: float | None
    dimensions: list[DimensionRow]
    show_k: bool
    incidents: list[IncidentView]
    unscored: list[Judgment]
    call_errors: list[CallRecord]
    plots: dict[str, Markup]
    texts_note: str | None
    resolution: dict[str, Any] | None = None
    resolution_cases: list[dict[str, Any]] = field(default_factory=list)
    agreement: list[Table] | None = None
    agreement_raw: str | None = None
    ranking: list[Table] = field(default_factory=list)
    """A panel's members' ranking of the agents and its rank correlations."""
    cascade: dict[str, Any] | None = None
    """A cascade judge's run (`EvalResult.cascade`), as the template's `cascade_section` reads it."""
    entities: dict[str, Any] | None = None
    estimates: EstimatesView | None = None
    """Means corrected with labels (`judge report --labels`)."""
    audit: AuditView | None = None
    """The judge's audit (`judge audit --html`)."""
    n_unscored: int = 0
    n_call_errors: int = 0
    n_resolution_cases: int = 0
    pages: list[PageLink] = field(default_factory=list)
    """Pages holding the case details, when the run is too large for one page."""
    questions: list[QuestionShare] = field(default_factory=list)
    """Each question's Yes/No/unscored counts, overall and by agent."""

    @property
    def dimension_ids(self) -> list[str]:
        return [d.id for d in self.dimensions]


def optional_sections(result: EvalResult, raw: dict[str, Any] | None = None) -> dict[str, Any]:
    """The optional sections, from the model when it has them, else from the raw JSON."""
    found: dict[str, Any] = {}
    dumped = result.model_dump(mode="json", include=set(OPTIONAL_SECTIONS))
    for name in OPTIONAL_SECTIONS:
        value = dumped.get(name)
        if value is None and raw is not None:
            value = raw.get(name)
        if value:
            found[name] = value
    return found


def build_view(
    result: EvalResult,
    texts: CaseTexts | None = None,
    raw: dict[str, Any] | None = None,
    title: str | None = None,
    pages: list[CasePage] | None = None,
) -> ReportView:
    """The report's view of `result`; `texts` adds ground truth and diagnoses, `raw` (the
    result file's JSON) any optional sections the model does not carry. With `pages` the
    view is a large run's summary page: each incident links to the page of its cases, and no
    case detail is built.
    """
    texts = texts or CaseTexts()
    extra = optional_sections(result, raw)
    resolution = extra.get("resolution")
    replies = ReplySource(result)
    if pages is None:
        try:
            incidents = incident_views(result, texts, CaseIndex.of(result, resolution, replies))
        finally:
            replies.close()
    else:
        incidents = incident_summaries(result, texts, pages)
    threshold = _rubric(result).get("threshold")
    unscored, n_unscored = _first((j for j in result.judgments if j.answer is None), MAX_TABLE_ROWS)
    call_errors = [c for c in result.calls if c.error]
    resolution_cases = resolution_rows(resolution, result.cases)
    view = ReportView(
        title=title or f"Diagnosis scores — {_rubric(result).get('name') or 'rubric'}",
        result=result,
        config_rows=_config_rows(result, replies),
        usage=usage_totals(result.calls),
        headline=_headline(result),
        threshold=threshold,
        dimensions=_dimensions(result, texts),
        show_k=result.overall.k > 1,
        incidents=incidents,
        unscored=unscored,
        call_errors=call_errors[:MAX_TABLE_ROWS],
        plots={},
        texts_note=_texts_note(result, texts),
        resolution=resolution,
        resolution_cases=resolution_cases,
        entities=extra.get("entities"),
        n_unscored=n_unscored,
        n_call_errors=len(call_errors),
        n_resolution_cases=len(resolution_cases),
        pages=[page_link(result, page) for page in pages or []],
    )
    if "agreement" in extra:
        view.agreement, view.agreement_raw = agreement_tables(extra["agreement"])
    if "estimates" in extra:
        view.estimates = estimates_view(extra["estimates"])
    if "audit" in extra:
        from .audit import from_section as audit_view  # the audit's models, only when needed

        view.audit = audit_view(extra["audit"])
    view.ranking = ranking_tables(result)
    view.cascade = cascade_section(result)
    view.questions = question_shares(result.judgments, result.cases, texts)
    view.plots = _plots(view)
    view.resolution_cases = resolution_cases[:MAX_TABLE_ROWS]
    return view


def _first(items: Iterator[T], n: int) -> tuple[list[T], int]:
    """The first `n` of `items`, and how many there are: the rest are only counted."""
    first = list(islice(items, n))
    return first, len(first) + sum(1 for _ in items)


def _rubric(result: EvalResult) -> dict[str, Any]:
    rubric = result.config.get("rubric")
    return rubric if isinstance(rubric, dict) else {}


def _config_rows(result: EvalResult, replies: ReplySource) -> list[tuple[str, str]]:
    config = result.config
    rubric = _rubric(result)
    found = config.get("judge")
    judge: dict[str, Any] = found if isinstance(found, dict) else {}
    rows = [
        ("rubric", f"{rubric.get('name', '?')} v{rubric.get('version', '?')}"),
        ("rubric hash", str(rubric.get("hash", "—"))),
        ("threshold", fmt(rubric.get("threshold"))),
        (
            "weights",
            ", ".join(f"{k} {v:.2f}" for k, v in (rubric.get("weights") or {}).items()) or "—",
        ),
        ("judge", str(judge.get("name", "?"))),
        ("model", str(judge.get("model") or "— (no model)")),
    ]
    if judge.get("api_base"):
        rows.append(("API base", str(judge["api_base"])))
    params = judge.get("params") or {}
    if params:
        rows.append(("judge parameters", ", ".join(f"{k}={_plain(v)}" for k, v in params.items())))
    template = config.get("prompt_template") or {}
    if isinstance(template, dict) and template.get("hash"):
        rows.append(("prompt template", f"{template.get('dir') or 'shipped'} ({template['hash']})"))
    for key in ("ground_truth", "outputs"):
        if config.get(key):
            rows.append((key.replace("_", " "), str(config[key])))
    if replies.note or replies.found:
        rows.append(("store", replies.note or f"{replies.path} (raw replies linked per case)"))
    rows += [
        ("date", result.created_at),
        ("tool version", result.tool_version),
        ("schema version", result.schema_version),
    ]
    return rows


def _plain(value: Any) -> str:
    if isinstance(value, list | dict):
        text = json.dumps(value)
        return text if len(text) <= 80 else text[:77] + "…"
    return str(value)


def usage_totals(calls: Sequence[CallRecord]) -> Usage:
    """What this run spent: calls answered from the store cost nothing now."""
    usage = Usage(n_calls=len(calls), attempts=sum(c.attempts for c in calls))
    for call in calls:
        if call.usage is None or call.cached:
            continue
        usage.n_with_usage += 1
        usage.prompt_tokens += call.usage.prompt_tokens or 0
        usage.completion_tokens += call.usage.completion_tokens or 0
        if call.usage.cost_usd is not None:
            usage.n_priced += 1
            usage.cost_usd += call.usage.cost_usd
    return usage


def _headline(result: EvalResult) -> list[Stat]:
    o = result.overall
    n_pass = sum(c.passed is True for c in result.cases)
    n_fail = sum(c.passed is False for c in result.cases)
    stats = [
        Stat("pass rate", fmt(o.pass_rate.value), _ci(o.pass_rate), "rate"),
        Stat("mean composite", fmt(o.mean_composite.value), _ci(o.mean_composite)),
    ]
    if o.k > 1:
        stats.append(Stat(f"pass@{o.k}", fmt(o.pass_at_k.value), _ci(o.pass_at_k)))
        stats.append(Stat(f"pass^{o.k}", fmt(o.pass_hat_k.value), _ci(o.pass_hat_k)))
    stats += [
        Stat("incidents scored", f"{o.n_incidents_scored}/{o.n_incidents}"),
        Stat(
            "cases",
            str(o.n_cases),
            f"{n_pass} pass · {n_fail} fail · {o.n_incomplete_cases} incomplete",
            "warn" if o.n_incomplete_cases else "",
        ),
        Stat(
            "unscored questions",
            str(o.n_unscored_questions),
            f"of {o.n_scored_questions + o.n_unscored_questions}",
            "warn" if o.n_unscored_questions else "",
        ),
        Stat(
            "provider errors",
            str(sum(result.errors.values())),
            ", ".join(f"{k} {v}" for k, v in sorted(result.errors.items())),
            "bad" if result.errors else "",
        ),
    ]
    if o.n_missing or o.n_orphans:
        stats.append(Stat("missing / orphans", f"{o.n_missing} / {o.n_orphans}", "", "warn"))
    return stats


def _ci(est: Estimate) -> str:
    if est.ci is None:
        return f"n={est.n}, no CI" if est.value is not None and est.n < 2 else f"n={est.n}"
    return f"95% CI [{est.ci.low:.2f}, {est.ci.high:.2f}], n={est.n}"


def _dimensions(result: EvalResult, texts: CaseTexts) -> list[DimensionRow]:
    weights = _rubric(result).get("weights") or {}
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for case in result.cases:
        for dim in case.dimensions:
            counts[dim.dimension_id][0] += dim.n_scored
            counts[dim.dimension_id][1] += dim.n_unscored
    return [
        DimensionRow(
            id=dim_id,
            name=texts.dimensions.get(dim_id),
            weight=weights.get(dim_id),
            estimate=est,
            n_scored=counts[dim_id][0],
            n_unscored=counts[dim_id][1],
        )
        for dim_id, est in result.overall.dimension_means.items()
    ]


def _texts_note(result: EvalResult, texts: CaseTexts) -> str | None:
    lacking = []
    if not texts.ground_truth:
        lacking.append("ground-truth texts")
    if not texts.diagnoses:
        lacking.append("diagnoses")
    if not lacking:
        return None
    return (
        f"The result file does not carry the {' or the '.join(lacking)}; "
        "run `judge report RESULT.json --ground-truth DIR --outputs DIR` to show them "
        "with the evidence highlighted."
    )


MAX_INCIDENT_BARS = 60


def _plots(view: ReportView) -> dict[str, Markup]:
    result = view.result
    threshold = view.threshold if view.threshold is not None else 0.7
    out: dict[str, Markup] = {}
    scored = [(c.composite, bool(c.passed)) for c in result.cases if c.composite is not None]
    if scored:  # the two numbers only: 100,000 cases are 230 MB as models
        out["distribution"] = plots.score_distribution(
            [composite for composite, _ in scored], [passed for _, passed in scored], threshold
        )
    if view.dimensions:
        out["dimensions"] = plots.dimension_breakdown(
            [f"{d.id} {d.name}" if d.name else d.id for d in view.dimensions],
            [d.estimate.value for d in view.dimensions],
            [d.estimate.ci.low if d.estimate.ci else None for d in view.dimensions],
            [d.estimate.ci.high if d.estimate.ci else None for d in view.dimensions],
        )
    if 1 < len(result.incidents) <= MAX_INCIDENT_BARS:
        out["incidents"] = plots.incident_scores(
            [visible(i.incident_id) for i in result.incidents],
            [i.mean_composite for i in result.incidents],
            threshold,
        )
    drawn = plotted(view.questions)
    if drawn:
        out["questions"] = plots.question_shares(
            [
                s.question_id if s.agent == ALL_AGENTS else f"{s.question_id} · {visible(s.agent)}"
                for s in drawn
            ],
            [s.share(s.yes) for s in drawn],
            [s.share(s.no) for s in drawn],
            [s.share(s.unscored) for s in drawn],
        )
    points = [
        r
        for r in view.resolution_cases
        if r["evidence_coverage"] is not None and r["success"] is not None
    ]
    if points:
        out["coverage"] = plots.coverage_vs_success(
            [float(r["evidence_coverage"]) for r in points],
            [bool(r["success"]) for r in points],
            [
                None if r["diagnosis"] in (None, "incomplete") else r["diagnosis"] == "pass"
                for r in points
            ],
        )
    return out
