"""Untrusted text (incident ids, trial and agent names, a provider's error messages) made safe
to show in a terminal, a page or a spreadsheet: control characters visible
(`ground_truth.errors.visible`), rich's markup inert where a string is printed with markup
(`[bold]` in a provider's reply would otherwise style, or hide, what follows), and a CSV cell
that starts like a formula (`=`, `+`, `-`, `@`, tab, CR: OWASP's CSV-injection list) prefixed
with `'`, which spreadsheets read as "this is text"."""

from __future__ import annotations

from ground_truth.errors import visible

__all__ = ["FORMULA_START", "csv_cell", "markup_safe", "visible"]

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(text: str) -> str:
    """A CSV cell: control characters visible (newlines kept), a formula-like start made inert."""
    text = visible(text, keep="\n")
    return "'" + text if text.startswith(FORMULA_START) else text


def markup_safe(text: str) -> str:
    """`text` for a rich string printed with markup: control characters visible, and any
    `[...]` that rich would read as a style tag escaped."""
    from rich.markup import escape

    return escape(visible(text))
