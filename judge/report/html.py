"""The self-contained HTML report: one file, inline CSS, inline SVG plots, a little inline JS.

A Content-Security-Policy in the page forbids every fetch and allows only the report's own
script (by its hash), so even a diagnosis that got past escaping could neither run code nor
reach the network. jinja2 autoescaping is on for everything user-provided.
"""

from __future__ import annotations

import base64
import hashlib
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from ..results import EvalResult, write_json_atomic
from ..safe_text import visible
from .texts import ReportTexts, texts_from
from .view import build_view

TEMPLATE = "report.html.j2"


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
    texts: ReportTexts | None = None,
    raw: dict[str, Any] | None = None,
    title: str | None = None,
) -> str:
    """The report as one HTML string.

    `texts` holds spec texts, diagnoses and question wording (by default only the wording, from
    the rubric the run used); `raw` is the result file's JSON, for sections the `EvalResult`
    model may not know (e.g. `agreement`).
    """
    if texts is None:
        texts = texts_from(rubric_config=result.config.get("rubric"))
    view = build_view(result, texts, raw, title)
    script = _asset("report.js")
    return (
        _environment()
        .get_template(TEMPLATE)
        .render(
            view=view,
            css=Markup(_asset("report.css")),
            script=Markup(script),
            csp=content_security_policy(script),
        )
    )


def write_html(path: str | Path, result: EvalResult, **kwargs: Any) -> Path:
    """Write the HTML report (`render_html`'s keywords) to `path` atomically; returns the path."""
    write_json_atomic(path, render_html(result, **kwargs))
    return Path(path)
