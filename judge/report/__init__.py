"""Reports people read and CIs gate on: the HTML report, CSV, JSONL and JUnit exports."""

from __future__ import annotations

from .html import render_html, write_html
from .texts import ReportTexts, load_texts, texts_from

__all__ = ["ReportTexts", "load_texts", "render_html", "texts_from", "write_html"]
