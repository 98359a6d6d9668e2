"""The self-contained HTML report: one file, inline CSS, inline SVG plots, a little inline JS.

A Content-Security-Policy in the page forbids every fetch and allows only the report's own
script (by its hash), so even a diagnosis that got past escaping could neither run code nor
reach the network. jinja2 autoescaping is on for everything user-provided.

A run with more than `MAX_SINGLE_PAGE_CASES` cases (10,000 submissions made a 45 MB page
that needed 700 MB to build) gets a summary page instead: everything but the case details,
which go on pages of `CASES_PER_PAGE` cases in a folder beside it (`report.html` ->
`report-cases/page-001.html`, ...), each self-contained too, each built, written and dropped
in turn.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from ..checklist.results import EvalResult, write_json_atomic
from ..checklist.texts import CaseTexts, texts_from
from .cases import CaseIndex
from .pages import CasePage, page_incidents, plan_pages
from .replies import ReplySource
from .safe_text import visible
from .view import ReportView, build_view

TEMPLATE = "report.html.j2"
PAGE_TEMPLATE = "cases.html.j2"
MAX_SINGLE_PAGE_CASES = 1000
CASES_PER_PAGE = 250
_PAGE_NAME = re.compile(r"page-\d{3,}\.html")


def _templates_dir() -> Path:
    return Path(str(resources.files("judge.report") / "templates"))


def _asset(name: str) -> str:
    return (_templates_dir() / name).read_text(encoding="utf-8")


def _num(value: Any, digits: int = 2) -> str:
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return "—" if value is None else str(value)
    return f"{value:.{digits}f}"


def _yesno(value: Any) -> str:
    return "unknown" if value is None else "yes" if value else "no"


def _visible(value: Any) -> Any:
    """Every value the page shows, with control characters made visible (`\\x1b`, `\\x00`):
    an escape sequence or a NUL in an incident id must not reach a terminal that `cat`s the
    page, nor hide text in a browser."""
    if isinstance(value, Markup):
        return Markup(visible(str(value), keep="\n\t"))
    return visible(value, keep="\n\t") if isinstance(value, str) else value


@cache
def _environment() -> Environment:
    env = Environment(
        finalize=_visible,
        loader=FileSystemLoader(_templates_dir()),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = _num
    env.filters["yesno"] = _yesno
    return env


def content_security_policy(script: str) -> str:
    """A CSP that lets the report run only `script` (by hash) and load nothing from anywhere."""
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    return (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )


def render_html(
    result: EvalResult,
    texts: CaseTexts | None = None,
    raw: dict[str, Any] | None = None,
    title: str | None = None,
    pages: list[CasePage] | None = None,
) -> str:
    """The report as one HTML string (a large run's summary page, with `pages`).

    `texts` holds spec texts, diagnoses and question wording (by default only the wording, from
    the rubric the run used); `raw` is the result file's JSON, for sections the `EvalResult`
    model may not know (e.g. `agreement`).
    """
    if texts is None:
        texts = texts_from(rubric_config=result.config.get("rubric"))
    return render_page(TEMPLATE, view=build_view(result, texts, raw, title, pages))


def render_page(template: str, **context: Any) -> str:
    """A page of `template` (the report, a case page, the calibration page) with the report's
    inline CSS and script and the CSP that allows only that script."""
    script = _asset("report.js")
    return (
        _environment()
        .get_template(template)
        .render(
            **context,
            css=Markup(_asset("report.css")),
            script=Markup(script),
            csp=content_security_policy(script),
        )
    )


def write_html(
    path: str | Path,
    result: EvalResult,
    *,
    texts: CaseTexts | None = None,
    raw: dict[str, Any] | None = None,
    title: str | None = None,
    max_single_page: int = MAX_SINGLE_PAGE_CASES,
    per_page: int = CASES_PER_PAGE,
) -> Path:
    """Write the HTML report to `path` atomically; returns the path.

    Up to `max_single_page` cases it is one page. Beyond, `path` is a summary page and the
    case details go on pages of `per_page` cases in the folder `<stem>-cases` beside it,
    written first (page files an earlier, larger report left there are removed), so that
    the summary never links to a page not yet written."""
    path = Path(path)
    if len(result.cases) <= max_single_page:
        write_json_atomic(path, render_html(result, texts, raw, title))
        return path
    if texts is None:
        texts = texts_from(rubric_config=result.config.get("rubric"))
    folder = f"{path.stem}-cases"
    pages = plan_pages(result, per_page, folder)
    view = build_view(result, texts, raw, title, pages)
    _write_pages(path, result, texts, view, pages)
    write_json_atomic(path, render_page(TEMPLATE, view=view))
    return path


def _write_pages(
    path: Path,
    result: EvalResult,
    texts: CaseTexts,
    summary: ReportView,
    pages: list[CasePage],
) -> None:
    replies = ReplySource(result)
    try:
        _write_page_files(
            path, result, texts, summary, pages, CaseIndex.of(result, summary.resolution, replies)
        )
    finally:
        replies.close()


def _write_page_files(
    path: Path,
    result: EvalResult,
    texts: CaseTexts,
    summary: ReportView,
    pages: list[CasePage],
    index: CaseIndex,
) -> None:
    names = [page.href.rsplit("/", 1)[1] for page in pages]
    for n, (page, link) in enumerate(zip(pages, summary.pages, strict=True)):
        text = render_page(
            PAGE_TEMPLATE,
            result=result,
            title=summary.title,
            link=link,
            number=n + 1,
            n_pages=len(pages),
            summary=path.name,
            previous=names[n - 1] if n else None,
            next=names[n + 1] if n + 1 < len(names) else None,
            texts_note=summary.texts_note,
            incidents=page_incidents(result, summary.incidents, texts, index, page),
        )
        write_json_atomic(path.parent / page.href, text)
    _remove_other_pages(path.parent / pages[0].href.rsplit("/", 1)[0], set(names))


def _remove_other_pages(folder: Path, keep: set[str]) -> None:
    """Pages an earlier report with more cases left in `folder`: they would mix two runs."""
    with contextlib.suppress(OSError):
        for stale in folder.iterdir():
            if _PAGE_NAME.fullmatch(stale.name) and stale.name not in keep:
                stale.unlink()
