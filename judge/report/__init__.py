"""Reports people read and CIs gate on: terminal tables, the HTML report, CSV, JSONL, JUnit."""

from __future__ import annotations

from .html import render_html, write_html
from .texts import ReportTexts, load_texts, texts_from

__all__ = ["ReportTexts", "load_texts", "render_html", "texts_from", "write_html"]
