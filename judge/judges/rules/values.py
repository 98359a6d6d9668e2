"""Concrete injected details: read from the truth's mechanism text, found again in a diagnosis.

A detail is a value (`app-image:latest`, `8082`, `/healthz`, `hotel-frontend-tls`) with the key
it belongs to when the text gives one (`failureThreshold=1`, `replicas: 0`, `GOGC ... 10`).
`key=value`, `key: value`, `key value` and `key set to value` are the same statement. The values
0 and 1 (and other one-digit numbers) count only beside their key: alone they say nothing.
A diagnosis that gives the right key a different value has the detail wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .truth import Truth

_DETAIL = re.compile(
    r"`([^`]{1,160})`|'([^'\s]{1,80})'|\"([^\"\s]{1,80})\""
    r"|\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b"
    r"|(?<![\w./-])([a-z0-9][\w./-]*:[\w.-]*[\w])(?![\w])"
    r"|(?<![\w/])(/[a-z][\w./-]*[\w])"
    r"|(?<![\w.])(\d[\d,]*(?:\.\d+)?(?:\s?(?:ms|s|m|mi|gi|ki|mib|gib|mb|gb|%))?)(?![\w.])",
    re.I,
)
_KEY_VALUE = re.compile(
    r"\b([a-z][\w.]{1,60})\s*(?:=|:|\s+(?:set\s+)?to|\s+of|\s+is)\s*[`'\"]?([\w./-]+)", re.I
)
_NUMBER = re.compile(r"^\d[\d,]*(?:\.\d+)?(?:\s?[a-z%]+)?$", re.I)
_BORING = frozenset(
    {
        "true",
        "false",
        "none",
        "null",
        "latest",
        "yes",
        "no",
        "the",
        "and",
        "or",
        "default",
        "http",
        "https",
        "fail",
        "ignore",
        "always",
        "never",
        "on",
        "off",
        "enabled",
        "disabled",
    }
)
_KEY_STOPWORDS = frozenset(
    {
        "the",
        "a",
        "an",
        "to",
        "of",
        "is",
        "set",
        "with",
        "at",
        "on",
        "in",
        "and",
        "or",
        "from",
        "by",
        "for",
        "about",
        "than",
        "instead",
        "only",
        "which",
        "that",
        "this",
        "these",
        "those",
        "when",
        "while",
        "where",
        "but",
        "so",
        "because",
        "it",
        "its",
        "are",
        "was",
        "were",
    }
)


@dataclass(frozen=True)
class Value:
    """One detail; `pattern` finds the value, `key_pattern` its key."""

    value: str
    key: str | None
    pattern: re.Pattern[str]
    key_pattern: re.Pattern[str] | None

    @property
    def small_number(self) -> bool:
        """A value that says nothing without its key: one digit, or a word like `none`, `true`."""
        return (self.value.isdigit() and len(self.value) == 1) or self.value in _BORING


def _normalise(value: str) -> str:
    value = value.strip().strip("`'\".,;()").lower()
    return re.sub(r"(?<=\d),(?=\d{3})", "", value)


def _value_regex(value: str) -> re.Pattern[str]:
    if _NUMBER.match(value):
        number = re.match(r"\d+(?:\.\d+)?", value)
        digits = re.escape(number.group(0)) if number else re.escape(value)
        return re.compile(rf"(?<![\w.]){digits}(?![\d.]\d)")
    body = r"[-_ ]?".join(re.escape(p) for p in re.split(r"[-_\s]+", value) if p)
    return re.compile(rf"(?<![\w]){body}(?![\w])")


def _key_regex(key: str) -> re.Pattern[str]:
    """`failureThreshold` also as `failure threshold`; `a|b` is either key."""
    bodies = []
    for alternative in key.split("|"):
        parts = [p for p in re.split(r"[-_\s.]+|(?<=[a-z])(?=[A-Z])", alternative) if p]
        bodies.append(r"[-_ .]?".join(re.escape(p.lower()) for p in parts))
    return re.compile(rf"(?<![a-z0-9])(?:{'|'.join(bodies)})(?![a-z0-9])")


_NUMBER_WORDS = {
    "zero": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.I)


def with_digits(text: str) -> str:
    """`scaled to zero replicas` states the same value as `replicas: 0`; padded with spaces so
    that every offset into the text stays true."""
    return _NUMBER_WORD.sub(_digits_for, text)


def _digits_for(match: re.Match[str]) -> str:
    digits = _NUMBER_WORDS[match.group(1).lower()]
    return digits.ljust(len(match.group(1)))


def make_value(value: str, key: str | None) -> Value | None:
    """A concrete detail to look for (a value, optionally under a key such as `memory`); None
    for values too short or too common to mean anything without a key.
    """
    norm = _normalise(value)
    keys = [k.strip().strip("`'\"") for k in (key or "").split("|")]
    keys = [k for k in keys if len(k) >= 2 and k.lower() not in _KEY_STOPWORDS]
    key_norm = "|".join(keys) or None
    if len(norm) < 1 or (not norm.isdigit() and len(norm) < 2):
        return None
    if (norm in _BORING or (norm.isdigit() and len(norm) == 1)) and not key_norm:
        return None
    return Value(
        value=norm,
        key=key_norm,
        pattern=_value_regex(norm),
        key_pattern=_key_regex(key_norm) if key_norm else None,
    )


def truth_values(
    mechanism_text: str, truth: Truth, parameters: list[tuple[str, str]]
) -> list[Value]:
    """Details of the mutation, without component, namespace and system names (they locate, not
    detail): `app_name: hotel_reservation` or `deployment/frontend` says where, not what."""
    from . import names

    excluded = {n.lower() for c in truth.catalog for n in c.all_names()} | {
        ns.lower() for ns in truth.namespaces
    }
    located = {names.canonical(n) for n in excluded} | {
        names.canonical(n) for n in (truth.system.names if truth.system else ())
    }

    def locates(raw: str) -> bool:
        return raw.lower() in excluded or names.canonical(raw.rsplit("/", 1)[-1]) in located

    found: list[Value] = []
    mechanism_text = _without_names(with_digits(mechanism_text), excluded, truth)
    keyed = {
        m.group(2).lower().strip("`'\""): m.group(1) for m in _KEY_VALUE.finditer(mechanism_text)
    }
    for match in _DETAIL.finditer(mechanism_text):
        raw = next(g for g in match.groups() if g)
        norm = _normalise(raw)
        key = keyed.get(norm) or _key_around(mechanism_text, match.start(), match.end(), norm)
        if "=" in raw or ": " in raw:
            key, _, rest = raw.partition("=" if "=" in raw else ": ")
            norm = _normalise(rest)
        if locates(norm):
            continue
        value = make_value(norm, key)
        if value:
            found.append(value)
    for key, raw in parameters:
        if locates(raw):
            continue
        value = make_value(raw.replace("|", " "), key if not key.isdigit() else None)
        if value:
            found.append(value)
    return list({(v.value, v.key): v for v in found}.values())


_TOKEN = re.compile(r"[\w./:-]+")


def _without_names(text: str, names: set[str], truth: Truth) -> str:
    """`text` with every word that is a component's name, an instance of one
    (`checkoutservice-2`) or the system's name (`Online-Boutique-cloudbed-1`) blanked: the
    number in a pod's name is no injected value."""
    from . import systems

    system_names = truth.system.names if truth.system else ()

    def blank(match: re.Match[str]) -> str:
        word = match.group(0).lower().strip(".:")
        is_name = word in names or any(systems.instance_of(word, n) for n in names)
        is_system = any(word.startswith(n) for n in system_names)
        return " " * len(match.group(0)) if is_name or is_system else match.group(0)

    return _TOKEN.sub(blank, text)


def _key_around(text: str, start: int, end: int, value: str) -> str | None:
    """For a number: the word before it and the word after it (`GOGC ... set to 10`,
    `0 replicas`), either of which may name it in a diagnosis."""
    if not _NUMBER.match(value):
        return None
    before = [
        w
        for w in re.findall(r"[A-Za-z][\w.]*", text[max(0, start - 60) : start])
        if w.lower() not in _KEY_STOPWORDS
    ]
    after = re.match(r"\s*([A-Za-z][\w.]*)", text[end : end + 30])
    keys = before[-1:]
    if after and after.group(1).lower() not in _KEY_STOPWORDS:
        keys.append(after.group(1))
    return "|".join(keys) or None


def matching(values: list[Value], text_lower: str) -> list[tuple[Value, int]]:
    """The truth's details the diagnosis states (value beside the right key, or a named key),
    with where; a key followed by another value does not count."""
    hits: list[tuple[Value, int]] = []
    text_lower = with_digits(text_lower)
    for value in values:
        at = _value_at(value, text_lower)
        if at is not None:
            hits.append((value, at))
        elif value.key_pattern is not None and _names_key(value, text_lower) is not None:
            hits.append((value, _names_key(value, text_lower) or 0))
    return hits


def _value_at(value: Value, text: str) -> int | None:
    for match in value.pattern.finditer(text):
        if not value.small_number or _key_near(value, text, match.start()):
            return match.start()
    return _phrase_at(value.value, text)


PHRASE_WINDOW = 3


def _phrase_at(value: str, text: str) -> int | None:
    """A quoted message (`request did not complete within requested timeout`) is stated when
    any three of its words are quoted in a row."""
    words = re.findall(r"[a-z0-9]+", value)
    if len(words) <= PHRASE_WINDOW:
        return None
    for i in range(len(words) - PHRASE_WINDOW + 1):
        window = r"\W+".join(re.escape(w) for w in words[i : i + PHRASE_WINDOW])
        match = re.search(rf"(?<![a-z0-9]){window}(?![a-z0-9])", text)
        if match:
            return match.start()
    return None


def _key_near(value: Value, text: str, at: int) -> bool:
    if value.key_pattern is None:
        return False
    window = text[max(0, at - 48) : at + 48]
    return bool(value.key_pattern.search(window))


KEY_REACH = 120
_VALUE_AFTER = re.compile(r"\s*(?:=|:|\s+(?:is\s+)?set\s+to|\s+to|\s+of|\s+is)\s*[`'\"]?([\w./-]+)")


def _names_key(value: Value, text: str) -> int | None:
    """A key written as an identifier (`CART_ADDR`, `failureThreshold`) counts as a detail unless
    the diagnosis gives it a different value."""
    key = value.key or ""
    specific = "_" in key or re.search(r"[a-z][A-Z]", key) or "." in key or key.isupper()
    if not specific or value.key_pattern is None:
        return None
    match = value.key_pattern.search(text)
    if not match:
        return None
    after = _VALUE_AFTER.match(text, match.end(), match.end() + KEY_REACH)
    if (
        after
        and after.group(1)
        and after.group(1) != value.value
        and re.search(r"\d", after.group(1))
    ):
        return None
    return match.start()


CONCRETE = re.compile(
    r"`[^`]{2,80}`|'[^'\s]{2,80}'|\"[^\"\s]{2,80}\"|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"
    r"|[\w.-]+:[\w.-]*\d[\w.-]*|\b\d{2,}\b|\b\w+\s*=\s*\S+|(?<![\w/])/[a-z][\w./-]+"
)


_TIMES = re.compile(
    r"\b\d{4}-\d{2}-\d{2}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\b\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\b|\b\d{10,13}\b|\b\d{1,3}(?:\.\d{1,3}){3}\b"
)


def without_times(text: str) -> str:
    """Dates, clock times, epoch timestamps and IP addresses say when and where a fault was
    injected, not what it mutated."""
    return _TIMES.sub(" ", text)


MAX_PARAMETER_VALUES = 200
MAX_PARAMETER_DEPTH = 12
# Parameters that say when a fault ran or which record it is, not what it mutated.
_WHEN_KEY = re.compile(
    r"(?:^|_)(?:time|date|datetime|timestamp|duration|st|ed|start|end|id)(?:_|$)", re.I
)


def parameter_values(parameters: dict[str, Any]) -> list[tuple[str, str]]:
    """(key, value) leaves of a spec's `parameters`, bounded in depth and count: an alias bomb
    or a 900-level value is cut short, never expanded."""
    out: list[tuple[str, str]] = []
    stack: list[tuple[str, Any, int]] = [("", parameters, 0)]
    visited = 0
    while stack and len(out) < MAX_PARAMETER_VALUES and visited < MAX_PARAMETER_VALUES * 10:
        key, value, depth = stack.pop()
        visited += 1
        if isinstance(value, dict):
            if depth < MAX_PARAMETER_DEPTH:
                stack.extend(
                    (str(k), v, depth + 1)
                    for k, v in reversed(list(value.items())[:MAX_PARAMETER_VALUES])
                )
        elif isinstance(value, (list, tuple)):
            if depth < MAX_PARAMETER_DEPTH:
                stack.extend((key, v, depth + 1) for v in reversed(value[:MAX_PARAMETER_VALUES]))
        elif value is not None and not isinstance(value, bool) and not _WHEN_KEY.search(key):
            out.append((key, str(value).strip()))
    return out
