r"""Answers written as JSON: a ranked list of root causes and what each field of one says.

Agents asked for a structured answer write one: FORGE's `{"root_causes": [{"type": ...,
"description": ..., "location": ..., "justification": ..., "propagation_path": ...}, ...]}`,
a bare list of such objects, a list of `hypotheses` or `candidates`. The labelling guide reads a
list of root causes as ranked, most likely first: the first item is the diagnosis's claim and the
others are alternatives. In the claimed item, the fault type (`type`, `fault_type`, `reason`, ...)
and the place (`location`, `component`, ...) are its headline, the place is blamed in so many
words, and a propagation path is context, not blame.

`read_answer` finds these in a lowercased text in one pass over its JSON tokens (strings and
brackets, each string bounded by its line), so its work is linear in the text's length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.){0,2000}"|[\[\]{}:]')
# A key naming a list of root causes, ranked most likely first.
_RANKED_LIST = re.compile(
    r"(?:(?:likely|possible|probable|ranked|top|candidate)_)?(?:root_?causes|hypothes[ei]s|candidates)"
)
_PLACE = re.compile(
    r"(?:root_cause_|fault_|faulty_|affected_)?(?:location|component|service|entity|node|pod|resource"
    r"|target|cmdb_id)s?"
)
_TYPE = re.compile(
    r"(?:root_cause_|fault_|failure_)?(?:type|reason|kind|mechanism)|fault|failure_mode"
)
_PATH = re.compile(r"(?:propagation|call|trace|fault|failure)_?(?:path|chain)s?")
_KEY_SEPARATORS = re.compile(r"[\s-]+")


@dataclass
class Item:
    """One object of a ranked list: its span, its rank (1 = the claim) and its fields' values."""

    start: int
    end: int
    rank: int
    places: list[tuple[int, int]] = field(default_factory=list)
    types: list[tuple[int, int]] = field(default_factory=list)
    paths: list[tuple[int, int]] = field(default_factory=list)

    @property
    def headline(self) -> list[tuple[int, int]]:
        """Where the item states its claim: its fault type and its place, in text order."""
        return sorted(self.types + self.places)


@dataclass
class Answer:
    """The ranked items a text's JSON holds (empty when it holds none)."""

    items: list[Item] = field(default_factory=list)

    @property
    def claimed(self) -> list[Item]:
        return [i for i in self.items if i.rank == 1]

    @property
    def alternatives(self) -> list[tuple[int, int]]:
        return [(i.start, i.end) for i in self.items if i.rank >= 2]

    @property
    def context(self) -> list[tuple[int, int]]:
        return sorted(span for i in self.items for span in i.paths)

    @property
    def places(self) -> list[tuple[int, int]]:
        """The places the claimed items blame."""
        return sorted(span for i in self.claimed for span in i.places)


@dataclass
class _Frame:
    """An open bracket: `[` of a ranked list (`ranked`), or `{` of one of its items."""

    bracket: str
    ranked: bool = False
    item: Item | None = None
    count: int = 0


def read_answer(low: str) -> Answer:
    """The ranked root-cause lists in `low` (lowercased text) and their items' fields."""
    answer = Answer()
    stack: list[_Frame] = []
    key: str | None = None
    pending: str | None = None  # the last string read, a key if a `:` follows it
    for token in _TOKEN.finditer(low):
        text = token.group()
        if text == ":":
            key, pending = pending, None
            continue
        if text.startswith('"'):
            if key is not None and stack and stack[-1].item is not None:
                _fill(stack[-1].item, key, token.start() + 1, token.end() - 1)
            pending, key = _key(text[1:-1]), None
            continue
        pending = None
        if text in "[{":
            stack.append(_open(text, key, stack, token.start()))
            key = None
        elif stack:
            frame = stack.pop()
            if frame.item is not None:
                frame.item.end = token.end()
                answer.items.append(frame.item)
            key = None
    answer.items.sort(key=lambda i: i.start)
    return answer


def _key(text: str) -> str:
    return _KEY_SEPARATORS.sub("_", text.strip())


def _open(bracket: str, key: str | None, stack: list[_Frame], at: int) -> _Frame:
    """The frame a bracket opens: a ranked list under a root-cause key (or a list at the top of
    the text), an item of one, or anything else."""
    parent = stack[-1] if stack else None
    if bracket == "[":
        ranked = bool(key and _RANKED_LIST.fullmatch(key)) or (parent is None and key is None)
        return _Frame(bracket, ranked=ranked)
    if parent is not None and parent.ranked and parent.bracket == "[":
        parent.count += 1
        return _Frame(bracket, item=Item(at, at, parent.count))
    return _Frame(bracket)


def _fill(item: Item, key: str, start: int, end: int) -> None:
    if end <= start:
        return
    if _PLACE.fullmatch(key):
        item.places.append((start, end))
    elif _TYPE.fullmatch(key):
        item.types.append((start, end))
    elif _PATH.fullmatch(key):
        item.paths.append((start, end))
