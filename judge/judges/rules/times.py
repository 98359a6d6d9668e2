"""When a fault happened: the times a label row gives, and the occurrence times a diagnosis states.

Benchmarks that label faults in rows (OpenRCA, FORGE) give each failure's time, and the guide
counts it among the fault's concrete details: a diagnosis that states when the root cause
occurred, within the benchmark's tolerance (OpenRCA scores 60 s), states a detail of the
injected fault. Only a time the diagnosis states as the occurrence (`"root cause occurrence
datetime": ...`, `occurred at ...`, `started at ...`) counts; a timestamp quoted from an alert
or a log line is evidence, not a claim about the fault.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

TOLERANCE = timedelta(seconds=60)
MAX_TIMES = 64
MAX_DEPTH = 8

_DATETIME = re.compile(
    r"(?<!\d)(\d{4})-(\d{2})-(\d{2})[ t](\d{1,2}):(\d{2})(?::(\d{2}))?(?:[.,]\d+)?(?!\d)|(?<![\d.])(\d{10})(?:\d{3})?(?:\.\d+)?(?![\d.])"
)
# The time a diagnosis gives as the fault's: after a word that says it is the occurrence.
_OCCURRENCE = re.compile(
    r"(?:occurr\w*|datetime|timestamp|onset|start(?:ed|s|ing)?(?:\s+time)?|began|begin\w*"
    r"|injected|happened|fault\s+time|time\s+of\s+(?:the\s+)?(?:root\s+cause|fault|failure))"
    r"[\"'`]?\s*(?:at|on|around|was|is|[:=])?\s*[\"'`]?\s*$"
)
OCCURRENCE_REACH = 48
_TIME_KEY = re.compile(r"(?:^|_)(?:time|datetime|timestamp|date)(?:_|$)", re.I)
# A label sentence's time: `... into the node node-6 at 2022-03-20 13:51:51`, `(pod) at ...`.
_LABEL_TIME = re.compile(
    r"\b(?:injected|component|root\s+cause)\b[^.\n]{0,120}?\bat\s+$"
    r"|(?:^|\n)\W*(?:\w+[_ ])?(?:date)?time(?:stamp)?\W*[:=]\s*[\"']?$"
)


def parse(match: re.Match[str]) -> datetime | None:
    """The moment a `_DATETIME` match names (epoch seconds or milliseconds read as UTC)."""
    if match.group(7):
        return datetime.fromtimestamp(int(match.group(7)), UTC).replace(tzinfo=None)
    year, month, day, hour, minute, second = (int(g or 0) for g in match.groups()[:6])
    try:
        return datetime(year, month, day, hour, minute, second)
    except ValueError:
        return None


def truth_times(parameters: dict[str, Any], text: str) -> list[datetime]:
    """The failure times a label gives: its parameters' time fields, its rows' time fields
    (`datetime: 2021-03-07 21:36:00`), and the time its rendered sentence puts after the origin
    (`... into the node node-6 at 2022-03-20 13:51:51`). Epoch timestamps count only where no
    written date does (a row gives both, and the epoch's time zone is not stated)."""
    written: list[datetime] = []
    epochs: list[datetime] = []
    stack: list[tuple[str, Any, int]] = [("", parameters, 0)]
    while stack and len(written) + len(epochs) < MAX_TIMES:
        key, value, depth = stack.pop()
        if isinstance(value, dict) and depth < MAX_DEPTH:
            stack.extend((str(k), v, depth + 1) for k, v in list(value.items())[:MAX_TIMES])
        elif isinstance(value, (list, tuple)) and depth < MAX_DEPTH:
            stack.extend((key, v, depth + 1) for v in value[:MAX_TIMES])
        elif isinstance(value, (str, int, float)) and _TIME_KEY.search(key):
            match = _DATETIME.search(str(value))
            if match:
                _add(match, written, epochs)
    low = text.lower()
    for match in _DATETIME.finditer(low):
        if _LABEL_TIME.search(low, max(0, match.start() - 160), match.start()):
            _add(match, written, epochs)
    return (written or epochs)[:MAX_TIMES]


def _add(match: re.Match[str], written: list[datetime], epochs: list[datetime]) -> None:
    moment = parse(match)
    if moment is not None:
        (epochs if match.group(7) else written).append(moment)


def stated_occurrences(low: str, truth: list[datetime]) -> list[int]:
    """The offsets in `low` of the occurrence times the diagnosis states within the tolerance of
    one of the `truth` times (a time value is often quoted: `"...datetime": "2021-03-10 16:41"`,
    so the caller decides which parts of the text are claims)."""
    if not truth:
        return []
    found = []
    for match in _DATETIME.finditer(low):
        if not _OCCURRENCE.search(low, max(0, match.start() - OCCURRENCE_REACH), match.start()):
            continue
        moment = parse(match)
        if moment is not None and any(abs(moment - t) <= TOLERANCE for t in truth):
            found.append(match.start())
    return found
