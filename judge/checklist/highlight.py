"""Evidence quotes marked inside the diagnosis they quote, without ever trusting either text.

Quotes are located in the *raw* diagnosis (exactly, then ignoring case and runs of whitespace,
then without surrounding quote marks or a trailing ellipsis); the diagnosis is then cut at the
span boundaries and every piece is HTML-escaped on its own before `<mark>` tags are put around
the marked pieces. No user text reaches the page unescaped, and a mark can never fall inside
an escaped entity such as `&amp;lt;`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise

from markupsafe import Markup, escape

_WS = re.compile(r"\s+")
_TRIM = " \t\r\n\"'“”‘’`"
_ELLIPSIS = ("...", "…")


@dataclass
class Highlighted:
    """The marked-up diagnosis and, per label, whether its quote was found."""

    html: Markup
    found: dict[str, bool] = field(default_factory=dict)
    n_marks: int = 0


def _normalised(text: str) -> tuple[str, list[int]]:
    """`text` lower-cased with whitespace runs collapsed to one space, and a map to raw indices."""
    chars: list[str] = []
    index: list[int] = []
    for match in re.finditer(r"\s+|\S", text):
        chars.append(" " if match.group().isspace() else match.group().lower())
        index.append(match.start())
    index.append(len(text))
    return "".join(chars), index


def _candidates(quote: str) -> list[str]:
    first = quote.strip()
    trimmed = first.strip(_TRIM)
    for tail in _ELLIPSIS:
        if trimmed.endswith(tail):
            trimmed = trimmed[: -len(tail)].rstrip()
        if trimmed.startswith(tail):
            trimmed = trimmed[len(tail) :].lstrip()
    return [c for c in dict.fromkeys([first, trimmed]) if c]


def find_quote(text: str, quote: str | None) -> tuple[int, int] | None:
    """The first span of `text` holding `quote`, leniently; None when it is not there.

    An occurrence whose ends fall on word boundaries wins over an earlier one inside a longer
    word (the quote "pod" marks "pod", not the start of "pods" or "tripod")."""
    if not quote or not text:
        return None
    folded, index = _normalised(text)
    for candidate in _candidates(quote):
        starts = _occurrences(text, candidate)
        if starts:
            start = _on_word_bounds(text, starts, len(candidate), candidate)
            return start, start + len(candidate)
        needle = _WS.sub(" ", candidate).lower()
        starts = _occurrences(folded, needle)
        if starts:
            at = _on_word_bounds(folded, starts, len(needle), needle)
            end = at + len(needle)
            return index[at], index[end - 1] + _char_len(text, index[end - 1])
    return None


def _occurrences(text: str, needle: str) -> list[int]:
    starts: list[int] = []
    at = text.find(needle)
    while at >= 0:
        starts.append(at)
        at = text.find(needle, at + 1)
    return starts


def _on_word_bounds(text: str, starts: list[int], length: int, needle: str) -> int:
    """The first start whose match does not cut a word in two; the first start if none."""
    for start in starts:
        end = start + length
        cuts_before = needle[0].isalnum() and start > 0 and text[start - 1].isalnum()
        cuts_after = needle[-1].isalnum() and end < len(text) and text[end].isalnum()
        if not cuts_before and not cuts_after:
            return start
    return starts[0]


def _char_len(text: str, start: int) -> int:
    """Length in `text` of the normalised character that starts at `start` (whitespace runs)."""
    match = re.compile(r"\s+|\S").match(text, start)
    return len(match.group()) if match else 1


def highlight(
    text: str, quotes: list[tuple[str, str | None]], kinds: dict[str, str] | None = None
) -> Highlighted:
    """Mark each (label, quote) in `text`. Overlapping quotes share marks; titles list labels.

    `kinds` maps a label to a CSS class for its marks (e.g. the answer, `yes` / `no`); a piece
    marked for labels of different kinds gets the class `mixed`.
    """
    kinds = kinds or {}
    found: dict[str, bool] = {}
    spans: list[tuple[int, int, str]] = []
    for label, quote in quotes:
        if not quote:
            continue
        span = find_quote(text, quote)
        found[label] = span is not None
        if span and span[1] > span[0]:
            spans.append((span[0], span[1], label))
    cuts = sorted({0, len(text), *(s for s, _, _ in spans), *(e for _, e, _ in spans)})
    parts: list[str] = []
    n_marks = 0
    for start, end in pairwise(cuts):
        piece = escape(text[start:end])
        labels = [label for s, e, label in spans if s <= start and end <= e]
        if labels:
            n_marks += 1
            title = escape(", ".join(dict.fromkeys(labels)))
            classes = {kinds.get(label, "") for label in labels}
            css = escape(classes.pop() if len(classes) == 1 else "mixed")
            attr = f' class="{css}"' if css else ""
            parts.append(f'<mark{attr} title="{title}" data-q="{title}">{piece}</mark>')
        else:
            parts.append(str(piece))
    return Highlighted(html=Markup("".join(parts)), found=found, n_marks=n_marks)
