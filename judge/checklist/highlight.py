"""Evidence quotes marked inside the diagnosis they quote, without ever trusting either text.

Quotes are located in the *raw* diagnosis (exactly, then ignoring case and runs of whitespace,
then without surrounding quote marks or a trailing ellipsis), in time and memory linear in the
diagnosis (`benchmarks/html_large.py`: a 50 MB one); the diagnosis is then cut at the span
boundaries and every piece is HTML-escaped on its own before `<mark>` tags are put around
the marked pieces. No user text reaches the page unescaped, and a mark can never fall inside
an escaped entity such as `&amp;lt;`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise

from markupsafe import Markup, escape

_TRIM = " \t\r\n\"'“”‘’`"
_ELLIPSIS = ("...", "…")


@dataclass
class Highlighted:
    """The marked-up diagnosis and, per label, whether its quote was found."""

    html: Markup
    found: dict[str, bool] = field(default_factory=dict)
    n_marks: int = 0


class Quotes:
    """Finds quotes in one text, leniently, in time and memory linear in the text: the text is
    searched as it is, then ignoring case and runs of whitespace (in its lower-cased copy,
    made once and only when a quote needs it). Each search is one regular expression, run by
    `re` over the whole text at C speed."""

    def __init__(self, text: str):
        self.text = text
        self._folded: str | None = None

    def _lowered(self) -> tuple[str, int]:
        """The text to search ignoring case, and the flags its patterns need: the lower-cased
        copy when lower-casing keeps every index (nearly always), else the text itself."""
        if self._folded is None:
            lowered = self.text.lower()
            self._folded = lowered if len(lowered) == len(self.text) else self.text
        return self._folded, 0 if self._folded is not self.text else re.IGNORECASE

    def find(self, quote: str | None) -> tuple[int, int] | None:
        """The first span of the text holding `quote`, leniently; None when it is not there.

        An occurrence whose ends fall on word boundaries wins over an earlier one inside a
        longer word (the quote "pod" marks "pod", not the start of "pods" or "tripod")."""
        if not quote or not self.text:
            return None
        for candidate in _candidates(quote):
            span = _search(self.text, [candidate], 0)
            if span is not None:
                return span
            folded, flags = self._lowered()
            words = (candidate.lower() if not flags else candidate).split()
            span = _search(folded, words, flags)
            if span is not None:
                return span
        return None


def _search(text: str, words: list[str], flags: int) -> tuple[int, int] | None:
    """The first span of `text` holding `words` separated by whitespace (one word: the text
    of it exactly), preferring one that cuts no word in two at either end."""
    body = "".join(r"\s+" + re.escape(word) for word in words[1:])
    first = re.escape(words[0])
    # the check of what comes before sits after the first word, so that the search still
    # skips ahead to each place the first word occurs (an assertion in front would not)
    before = rf"(?<![^\W_]{first})" if words[0][0].isalnum() else ""
    after = r"(?![^\W_])" if words[-1][-1].isalnum() else ""
    found = re.compile(first + before + body + after, flags).search(text)
    found = found or re.compile(first + body, flags).search(text)
    return found.span() if found else None


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
    """The first span of `text` holding `quote`, leniently; None when it is not there (see
    `Quotes.find`)."""
    return Quotes(text).find(quote)


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
    finder = Quotes(text)
    for label, quote in quotes:
        if not quote:
            continue
        span = finder.find(quote)
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
