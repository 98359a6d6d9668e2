"""What the HTML report shows, computed from a result: the template only lays it out.

Sections that depend on other parts of the tool (`resolution`, `agreement`, `entities`) are
read as optional plain dicts from the result, so the report works with result files written
before or without them. When the result names its store (`config.store`) and the store is
there, each case shows the raw replies behind its calls, each answer linked to its call's
(`ReplySource`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from ..checklist.highlight import highlight
from ..checklist.judgment import Judgment
from ..checklist.results import CallRecord, EvalResult
from ..checklist.scoring import CaseResult, Estimate, IncidentSummary
from ..checklist.texts import CaseTexts, case_key
from . import plots
from .estimates import EstimatesView
from .estimates import from_section as estimates_view
from .safe_text import visible

if TYPE_CHECKING:
    from ..store import LoggedReply, Store

OPTIONAL_SECTIONS = ("resolution", "agreement", "entities", "estimates")


@dataclass
class QuestionRow:
    """One question of a case as the report shows it: the answer, evidence and whether the
    evidence was found in the diagnosis, or why it is unscored.
    """

    dimension_id: str
    question_id: str
    text: str | None
    answer: str | None
    confidence: str | None
    evidence: str | None
    evidence_found: bool | None
    unscored_reason: str | None
    judge: str
    prompt_hash: str = ""
    reply: str | None = None
    """The anchor of the raw replies of the call that answered it, when the store has them."""


@dataclass
class CallReplies:
    """The raw replies behind one call of a case, from the store, as they arrived."""

    anchor: str
    dimension_id: str
    judge: str
    requests: list[LoggedReply]


@dataclass
class CaseView:
    """One case as the report shows it: scores, status, questions, failing ids, the diagnosis
    with evidence marked, failed calls and resolution checks.
    """

    anchor: str
    incident_id: str
    trial: str
    agent: str | None
    composite: float | None
    status: str
    dimensions: dict[str, float | None]
    questions: list[QuestionRow]
    failing: list[str]
    diagnosis: Markup | None
    n_marks: int
    call_errors: list[CallRecord]
    resolution: dict[str, Any] | None
    n_unscored: int
    replies: list[CallReplies] = field(default_factory=list)


@dataclass
class IncidentView:
    """One incident as the report shows it: its summary, ground truth and cases."""

    anchor: str
    summary: IncidentSummary
    ground_truth: str | None
    cases: list[CaseView]
    status: str
    href: str = ""
    """Where its cases are shown: `#anchor` on a single page, a case page's address else."""


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


@dataclass
class Table:
    """A plain table for the report: title, columns, rows of strings, notes."""

    title: str
    columns: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)


@dataclass
class PageLink:
    """A page of case details, as the summary page of a large run lists it."""

    href: str
    first: int
    last: int
    incidents: list[str]


@dataclass(frozen=True, slots=True)
class Asked:
    """What the report needs of a call to find its raw replies."""

    judge: str
    prompt_hash: str
    dimension_id: str


class ReplySource:
    """The store a result names (`config.store`), opened read-only at the first look-up, for
    the raw replies behind the result's calls. A store that is not there, or cannot be read,
    gives none, and `note` says why."""

    def __init__(self, result: EvalResult):
        found = result.config.get("store")
        self.path = Path(found) if isinstance(found, str) and found else None
        self._store: Store | None = None
        self.note: str | None = None
        if self.path is not None and not self.path.is_file():
            self.note = f"{self.path} (not found here: no raw replies)"
            self.path = None

    @property
    def found(self) -> bool:
        return self.path is not None

    def requests(self, call: Asked) -> list[LoggedReply]:
        if self.path is None or not call.prompt_hash:
            return []
        store = self._open()
        return store.replies_for(call.judge, call.prompt_hash) if store is not None else []

    def _open(self) -> Store | None:
        from ground_truth.errors import InputError

        from ..errors import StorageError
        from ..store import Store

        if self._store is None and self.path is not None:
            try:
                self._store = Store(self.path, readonly=True)
            except (InputError, StorageError) as exc:
                self.note = f"{self.path} (cannot be read: {exc}; no raw replies)"
                self.path = None
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


@dataclass
class CaseIndex:
    """Each case's judgments and calls, by `case_key`: gathered once per report; `replies`
    finds the raw replies behind a call."""

    judgments: dict[str, list[Judgment]]
    errors: dict[str, list[CallRecord]]
    resolution: dict[str, dict[str, Any]]
    replies: ReplySource | None = None
    asked: dict[str, list[Asked]] = field(default_factory=dict)
    """Each case's calls, when the store is there to show their replies."""

    @classmethod
    def of(
        cls,
        result: EvalResult,
        resolution: dict[str, Any] | None,
        replies: ReplySource | None = None,
    ) -> CaseIndex:
        judgments: dict[str, list[Judgment]] = defaultdict(list)
        for j in result.judgments:
            judgments[case_key(j.incident_id, j.trial)].append(j)
        errors: dict[str, list[CallRecord]] = defaultdict(list)
        asked: dict[str, list[Asked]] = defaultdict(list)
        linked = replies is not None and replies.found
        for call in result.calls:
            key = case_key(call.incident_id, call.trial)
            if call.error:
                errors[key].append(call)
            if linked:
                asked[key].append(Asked(call.judge, call.prompt_hash, call.dimension_id))
        by_case = {
            case_key(c["incident_id"], str(c["trial"])): c
            for c in (resolution or {}).get("cases", [])
            if isinstance(c, dict) and "incident_id" in c
        }
        return cls(judgments, errors, by_case, replies, asked)

    def case_view(self, n: int, case: CaseResult, texts: CaseTexts) -> CaseView:
        """Case `n` of the result as the report shows it."""
        key = case_key(case.incident_id, case.trial)
        view = _case(
            f"case-{n}",
            case,
            self.judgments.get(key, []),
            texts,
            self.errors.get(key, []),
            self.resolution.get(key),
        )
        if self.replies is not None and key in self.asked:
            _link_replies(view, self.asked[key], self.replies)
        return view


def _printable(logged: LoggedReply) -> LoggedReply:
    """A logged request whose reply a page can carry: a lone surrogate (a reply may hold
    one) as its escape, which UTF-8 can encode."""
    reply = logged.reply
    if reply is None:
        return logged
    shown = reply.encode("utf-8", "backslashreplace").decode("utf-8")
    return logged if shown == reply else logged.model_copy(update={"reply": shown})


def _link_replies(view: CaseView, calls: list[Asked], source: ReplySource) -> None:
    """Add the raw replies behind the case's calls, and link each answer to its call's: by
    judge and prompt (a panel's own answers link to its first member's call)."""
    anchors: dict[tuple[str, str], str] = {}
    for n, call in enumerate(calls):
        requests = [_printable(r) for r in source.requests(call)]
        if not requests:
            continue
        anchor = f"{view.anchor}-reply-{n}"
        view.replies.append(CallReplies(anchor, call.dimension_id, call.judge, requests))
        anchors.setdefault((call.judge, call.prompt_hash), anchor)
        anchors.setdefault(("", call.prompt_hash), anchor)
    for row in view.questions:
        row.reply = anchors.get((row.judge, row.prompt_hash)) or anchors.get(("", row.prompt_hash))


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
    cascade: dict[str, Any] | None = None
    """A cascade judge's run (`EvalResult.cascade`), as the template's `cascade_section` reads it."""
    entities: dict[str, Any] | None = None
    estimates: EstimatesView | None = None
    """Means corrected with labels (`judge report --labels`)."""
    n_unscored: int = 0
    n_call_errors: int = 0
    n_resolution_cases: int = 0
    pages: list[PageLink] = field(default_factory=list)
    """Pages holding the case details, when the run is too large for one page."""

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
            incidents = _incidents(result, texts, CaseIndex.of(result, resolution, replies))
        finally:
            replies.close()
    else:
        incidents = _incident_summaries(result, texts, pages)
    threshold = _rubric(result).get("threshold")
    unscored = [j for j in result.judgments if j.answer is None]
    call_errors = [c for c in result.calls if c.error]
    resolution_cases = _resolution_rows(resolution, result.cases)
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
        unscored=unscored[:MAX_TABLE_ROWS],
        call_errors=call_errors[:MAX_TABLE_ROWS],
        plots={},
        texts_note=_texts_note(result, texts),
        resolution=resolution,
        resolution_cases=resolution_cases,
        entities=extra.get("entities"),
        n_unscored=len(unscored),
        n_call_errors=len(call_errors),
        n_resolution_cases=len(resolution_cases),
        pages=[_page_link(result, page) for page in pages or []],
    )
    if "agreement" in extra:
        view.agreement, view.agreement_raw = _agreement(extra["agreement"])
    if "estimates" in extra:
        view.estimates = estimates_view(extra["estimates"])
    view.cascade = _cascade(result)
    view.plots = _plots(view)
    view.resolution_cases = resolution_cases[:MAX_TABLE_ROWS]
    return view


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
        ("threshold", _num(rubric.get("threshold"))),
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
        Stat("pass rate", _num(o.pass_rate.value), _ci(o.pass_rate), "rate"),
        Stat("mean composite", _num(o.mean_composite.value), _ci(o.mean_composite)),
    ]
    if o.k > 1:
        stats.append(Stat(f"pass@{o.k}", _num(o.pass_at_k.value), _ci(o.pass_at_k)))
        stats.append(Stat(f"pass^{o.k}", _num(o.pass_hat_k.value), _ci(o.pass_hat_k)))
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


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


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


def case_status(case: CaseResult) -> str:
    """The case's status: "pass", "fail", or "incomplete" when it has no verdict."""
    if not case.complete or case.passed is None:
        return "incomplete"
    return "pass" if case.passed else "fail"


def incident_status(case_statuses: set[str]) -> str:
    """pass / fail when every trial agrees, incomplete when none has a verdict, else mixed."""
    if len(case_statuses) == 1:
        return next(iter(case_statuses))
    return "incomplete" if not case_statuses else "mixed"


def _incidents(result: EvalResult, texts: CaseTexts, index: CaseIndex) -> list[IncidentView]:
    """Every incident with every case in full, for a single page."""
    cases: dict[str, list[CaseView]] = defaultdict(list)
    for n, case in enumerate(result.cases):
        cases[case.incident_id].append(index.case_view(n, case, texts))
    return [
        incident_view(n, summary, texts, cases.get(summary.incident_id, []))
        for n, summary in enumerate(result.incidents)
    ]


def incident_view(
    n: int,
    summary: IncidentSummary,
    texts: CaseTexts,
    cases: list[CaseView],
    statuses: set[str] | None = None,
    href: str | None = None,
) -> IncidentView:
    """Incident `n` of the result with `cases` (its status from `statuses` when given)."""
    return IncidentView(
        anchor=f"incident-{n}",
        summary=summary,
        ground_truth=texts.ground_truth.get(summary.incident_id),
        cases=cases,
        status=incident_status(statuses if statuses is not None else {c.status for c in cases}),
        href=href if href is not None else f"#incident-{n}",
    )


def _incident_summaries(
    result: EvalResult, texts: CaseTexts, pages: list[CasePage]
) -> list[IncidentView]:
    """Every incident without case detail, linked to the first page showing its cases."""
    href: dict[int, str] = {}
    statuses: dict[int, set[str]] = defaultdict(set)
    for page in pages:
        for incident, case_numbers in page.parts:
            href.setdefault(incident, f"{page.href}#incident-{incident}")
            statuses[incident].update(case_status(result.cases[k]) for k in case_numbers)
    return [
        incident_view(n, summary, texts, [], statuses[n], href.get(n, ""))
        for n, summary in enumerate(result.incidents)
    ]


def _page_link(result: EvalResult, page: CasePage) -> PageLink:
    numbers = [k for _, case_numbers in page.parts for k in case_numbers]
    names = [result.incidents[i].incident_id for i, _ in page.parts]
    return PageLink(
        href=page.href,
        first=min(numbers, default=-1) + 1,
        last=max(numbers, default=-1) + 1,
        incidents=names,
    )


@dataclass
class CasePage:
    """One page of case details: its address beside the summary page, and per incident (by
    its index in `result.incidents`) the numbers of the cases it shows, in order."""

    href: str
    parts: list[tuple[int, list[int]]]


def plan_pages(result: EvalResult, per_page: int, folder: str) -> list[CasePage]:
    """The cases, incident by incident, cut into pages of at most `per_page` cases; an
    incident with more trials than that spans pages. Incidents with no case go on the page
    where their turn comes."""
    by_incident: dict[str, list[int]] = defaultdict(list)
    for n, case in enumerate(result.cases):
        by_incident[case.incident_id].append(n)
    pages: list[list[tuple[int, list[int]]]] = [[]]
    room = per_page
    for i, summary in enumerate(result.incidents):
        numbers = by_incident.get(summary.incident_id, [])
        if not numbers:
            pages[-1].append((i, []))
        while numbers:
            if not room:
                pages.append([])
                room = per_page
            taken, numbers = numbers[:room], numbers[room:]
            pages[-1].append((i, taken))
            room -= len(taken)
    return [
        CasePage(href=f"{folder}/page-{p:03d}.html", parts=parts)
        for p, parts in enumerate(pages, 1)
    ]


def page_incidents(
    summary: ReportView, texts: CaseTexts, index: CaseIndex, page: CasePage
) -> list[IncidentView]:
    """The incidents of one case page, with their cases on that page in full; an incident's
    status is over all its cases (`summary`'s), not only those on this page."""
    result = summary.result
    views = []
    for i, case_numbers in page.parts:
        cases = [index.case_view(k, result.cases[k], texts) for k in case_numbers]
        view = incident_view(i, result.incidents[i], texts, cases)
        view.status = summary.incidents[i].status
        views.append(view)
    return views


def _case(
    anchor: str,
    case: CaseResult,
    judgments: list[Judgment],
    texts: CaseTexts,
    call_errors: list[CallRecord],
    resolution: dict[str, Any] | None,
) -> CaseView:
    diagnosis = texts.diagnosis(case.incident_id, case.trial)
    marked = None
    if diagnosis is not None:
        marked = highlight(
            diagnosis,
            [(j.question_id, j.evidence) for j in judgments if j.answer],
            {j.question_id: (j.answer or "").lower() for j in judgments},
        )
    rows = [
        QuestionRow(
            dimension_id=j.dimension_id,
            question_id=j.question_id,
            text=texts.questions.get(j.question_id),
            answer=j.answer,
            confidence=j.confidence,
            evidence=j.evidence,
            evidence_found=(
                marked.found.get(j.question_id) if marked is not None and j.answer else None
            ),
            unscored_reason=j.unscored_reason,
            judge=j.judge,
            prompt_hash=j.prompt_hash,
        )
        for j in judgments
    ]
    return CaseView(
        anchor=anchor,
        incident_id=case.incident_id,
        trial=case.trial,
        agent=case.agent,
        composite=case.composite,
        status=case_status(case),
        dimensions={d.dimension_id: d.score for d in case.dimensions},
        questions=rows,
        failing=[j.question_id for j in judgments if j.answer == "No"],
        diagnosis=marked.html if marked is not None else None,
        n_marks=marked.n_marks if marked is not None else 0,
        call_errors=call_errors,
        resolution=resolution,
        n_unscored=sum(j.answer is None for j in judgments),
    )


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


def _resolution_rows(
    resolution: dict[str, Any] | None, cases: list[CaseResult]
) -> list[dict[str, Any]]:
    if not resolution:
        return []
    verdicts = {case_key(c.incident_id, c.trial): case_status(c) for c in cases}
    rows = []
    for case in resolution.get("cases", []):
        if not isinstance(case, dict):
            continue
        checks = case.get("checks") or {}
        failed = [
            name
            for name, check in checks.items()
            if isinstance(check, dict) and check.get("passed") is False and name != "success"
        ]
        rows.append(
            {
                "incident_id": case.get("incident_id"),
                "trial": case.get("trial"),
                "format": case.get("format"),
                "success": case.get("success"),
                "evidence_coverage": case.get("evidence_coverage"),
                "diagnosis": verdicts.get(
                    case_key(str(case.get("incident_id")), str(case.get("trial")))
                ),
                "failed_checks": failed,
                "discrepancies": len(case.get("discrepancies") or []),
            }
        )
    return rows


def _agreement(section: dict[str, Any]) -> tuple[list[Table] | None, str | None]:
    """Pairwise and multi-rater tables when the section is an agreement report, else raw JSON."""
    report = section
    if "levels" not in report:
        nested = [v for v in section.values() if isinstance(v, dict) and "levels" in v]
        report = nested[0] if nested else report
    levels = report.get("levels")
    if not isinstance(levels, list):
        return None, json.dumps(section, indent=2, sort_keys=True)
    tables = []
    for level in levels:
        tables.append(_pair_table(f"Level: {level.get('level', '?')}", level.get("pairwise") or []))
        multi = level.get("multi_rater")
        if isinstance(multi, dict):
            tables[-1].notes.append(
                f"all raters ({', '.join(multi.get('raters') or [])}): Fleiss κ "
                f"{_est_text(multi.get('fleiss_kappa'))}, Krippendorff α "
                f"{_est_text(multi.get('krippendorff_alpha'))}"
            )
    for key, title in (("human_ceiling", "Among people"), ("self_consistency", "Self-consistency")):
        groups = report.get(key) or []
        if groups:
            tables.append(
                Table(
                    title=title,
                    columns=["group", "level", "raters", "mean κ", "Fleiss κ"],
                    rows=[
                        [
                            str(g.get("name")),
                            str(g.get("level")),
                            ", ".join(g.get("raters") or []),
                            _num(g.get("mean_kappa")),
                            _est_text((g.get("multi_rater") or {}).get("fleiss_kappa")),
                        ]
                        for g in groups
                    ],
                )
            )
    return tables, None


def _cascade(result: EvalResult) -> dict[str, Any] | None:
    """The cascade block as plain data (the template reads it like the JSON)."""
    return None if result.cascade is None else result.cascade.model_dump(mode="json")


def _pair_table(title: str, pairs: list[dict[str, Any]]) -> Table:
    table = Table(
        title=title,
        columns=["rater A", "rater B", "n", "agreement", "κ [95% CI]", "PABAK", "AC1"],
        rows=[],
    )
    for p in pairs:
        table.rows.append(
            [
                str(p.get("rater_a")),
                str(p.get("rater_b")),
                str(p.get("n")),
                _est_text(p.get("agreement")),
                _est_text(p.get("kappa")),
                _est_text(p.get("pabak"), ci=False),
                _est_text(p.get("ac1"), ci=False),
            ]
        )
        for name in ("kappa", "agreement"):
            reason = (p.get(name) or {}).get("undefined")
            if reason and reason not in table.notes:
                table.notes.append(reason)
    return table


def _est_text(est: Any, ci: bool = True) -> str:
    if not isinstance(est, dict):
        return "—"
    if est.get("value") is None:
        return "undefined"
    out = f"{est['value']:.2f}"
    if ci and est.get("ci_low") is not None and est.get("ci_high") is not None:
        out += f" [{est['ci_low']:.2f}, {est['ci_high']:.2f}]"
    return out


MAX_INCIDENT_BARS = 60


def _plots(view: ReportView) -> dict[str, Markup]:
    result = view.result
    threshold = view.threshold if view.threshold is not None else 0.7
    out: dict[str, Markup] = {}
    complete = [c for c in result.cases if c.composite is not None]
    if complete:
        out["distribution"] = plots.score_distribution(
            [c.composite or 0.0 for c in complete], [bool(c.passed) for c in complete], threshold
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
