"""A large run's report on several pages: the summary page lists every incident without its
cases and links to the pages of case details, each a self-contained page of its own."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ..checklist.results import EvalResult
from ..checklist.texts import CaseTexts
from .cases import CaseIndex, IncidentView, case_status, incident_view


@dataclass
class CasePage:
    """One page of case details: its address beside the summary page, and per incident (by
    its index in `result.incidents`) the numbers of the cases it shows, in order."""

    href: str
    parts: list[tuple[int, list[int]]]


@dataclass
class PageLink:
    """A page of case details, as the summary page of a large run lists it."""

    href: str
    first: int
    last: int
    incidents: list[str]


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


def page_link(result: EvalResult, page: CasePage) -> PageLink:
    """How the summary page lists `page`: its address, case numbers and incidents."""
    numbers = [k for _, case_numbers in page.parts for k in case_numbers]
    names = [result.incidents[i].incident_id for i, _ in page.parts]
    return PageLink(
        href=page.href,
        first=min(numbers, default=-1) + 1,
        last=max(numbers, default=-1) + 1,
        incidents=names,
    )


def incident_summaries(
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


def page_incidents(
    result: EvalResult,
    summaries: list[IncidentView],
    texts: CaseTexts,
    index: CaseIndex,
    page: CasePage,
) -> list[IncidentView]:
    """The incidents of one case page, with their cases on that page in full; an incident's
    status is over all its cases (its view in `summaries`), not only those on this page."""
    views = []
    for i, case_numbers in page.parts:
        cases = [index.case_view(k, result.cases[k], texts) for k in case_numbers]
        view = incident_view(i, result.incidents[i], texts, cases)
        view.status = summaries[i].status
        views.append(view)
    return views
