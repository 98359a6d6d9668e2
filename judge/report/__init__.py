"""Reports people read and CIs gate on: terminal tables, the HTML report, CSV, JSONL, JUnit.

The names below are imported when first used: the HTML report pulls in the agreement
statistics (~0.1 s), which printing a result's table (`judge.report.display`) at the end of
every `judge eval` never needs."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .html import render_html, write_html

__all__ = ["render_html", "write_html"]
_HOMES = {"render_html": ".html", "write_html": ".html"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(home, __name__), name)
