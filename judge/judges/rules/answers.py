r"""Answers written as JSON: a ranked list of root causes, a submitted answer, and what each field
of one says.

Agents asked for a structured answer write one: FORGE's `{"root_causes": [{"type": ...,
"description": ..., "location": ..., "justification": ..., "propagation_path": ...}, ...]}`,
a bare list of such objects, a list of `hypotheses` or `candidates`, AIOpsLab's
`submit(["user-service"])` or `submit({"system_level": ..., "fault_type": ...})`. The labelling
guide reads them so:
- a list of root causes is ranked, most likely first: the first item is the diagnosis's claim and
  the others are alternatives; in the claimed item, the fault type (`type`, `fault_type`,
  `reason`, ...) and the place (`location`, `component`, ...) are its headline, the place is
  blamed in so many words, and a propagation path is context, not blame;
- a submitted list of components claims each of them as a fault origin, and states no
  mechanism; an empty one claims nothing;
- an analysis answer (an object with a `system_level`) names categories, not a mechanism and no
  component;
- an entity flagged as a cause (ITBench's `{"name": ..., "contributing_factor": true}`) blames
  its name in so many words; one flagged `false` is context, as the ITBench adapter reads them.

`read_answer` finds these in a lowercased text in one pass over its JSON tokens (strings and
brackets, each string bounded by its line), so its work is linear in the text's length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.){0,2000}"|[\[\]{}:]|\b(?:true|false)\b')
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
_SUBMIT = re.compile(r"\bsubmit\s*\(\s*$")
SUBMIT_REACH = 24
_ANALYSIS_KEY = "system_level"
# An entity flagged as a cause or not: ITBench's `{"name": ..., "contributing_factor": true}`.
_FLAG = re.compile(r"(?:is_)?(?:contributing_factor|root_cause)")
_NAME = "name"


@dataclass
class Item:
    """One object of a ranked list: its span, its rank (1 = the claim) and its fields' values."""

    start: int
    end: int
    rank: int
    places: list[tuple[int, int]] = field(default_factory=list)
    types: list[tuple[int, int]] = field(default_factory=list)
    paths: list[tuple[int, int]] = field(default_factory=list)
    submitted: bool = False
    """A submitted list of components: its strings are names, not words of a mechanism."""

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

    categories: list[tuple[int, int]] = field(default_factory=list)
    """The values of analysis answers: categories of the fault, no mechanism, no component."""

    @property
    def names_only(self) -> list[tuple[int, int]]:
        """The components submitted lists name (`submit(["flagd"])` names flagd, not a
        feature flag)."""
        return sorted(span for i in self.items if i.submitted for span in i.places)


@dataclass
class _Frame:
    """An open bracket: `[` of a ranked list (`ranked`) or of a submitted one (its `item`), `{`
    of an item of a ranked list (its `item`) or of any other object (its string `values` by
    key, to tell an analysis answer)."""

    bracket: str
    start: int = 0
    ranked: bool = False
    item: Item | None = None
    count: int = 0
    values: list[tuple[str, int, int]] = field(default_factory=list)
    flag: bool | None = None


def read_answer(low: str) -> Answer:
    """The ranked root-cause lists, submitted answers and analysis answers in `low`
    (lowercased text), and their items' fields."""
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
            if stack:
                _value(stack[-1], key, token.start() + 1, token.end() - 1)
            pending, key = _key(text[1:-1]), None
            continue
        pending = None
        if text in ("true", "false"):
            if stack and key is not None and _FLAG.fullmatch(key):
                stack[-1].flag = text == "true"
            key = None
            continue
        if text in "[{":
            submitted = bool(
                _SUBMIT.search(low, max(0, token.start() - SUBMIT_REACH), token.start())
            )
            stack.append(_open(text, key, stack, token.start(), submitted))
            key = None
        elif stack:
            _close(stack.pop(), token.end(), answer)
            key = None
    answer.items.sort(key=lambda i: i.start)
    answer.categories.sort()
    return answer


def _value(frame: _Frame, key: str | None, start: int, end: int) -> None:
    """A string read inside `frame`: a field of an item, a submitted component, or a value of
    another object."""
    if frame.item is not None and frame.bracket == "[":
        if end > start:
            frame.item.places.append((start, end))
    elif key is not None and frame.item is not None:
        _fill(frame.item, key, start, end)
    elif key is not None and frame.bracket == "{":
        frame.values.append((key, start, end))


def _close(frame: _Frame, end: int, answer: Answer) -> None:
    if frame.item is not None:
        frame.item.end = end
        answer.items.append(frame.item)
    elif any(key == _ANALYSIS_KEY for key, _, _ in frame.values):
        answer.categories.extend((s, e) for _, s, e in frame.values if e > s)
    elif frame.flag is not None:
        answer.items.append(_entity(frame, end))


def _entity(frame: _Frame, end: int) -> Item:
    """An entity flagged as a cause is a claim that blames its name; one flagged as none is
    context (the adapter reads an ITBench output so: causes, then the other entities)."""
    if frame.flag:
        places = [(s, e) for key, s, e in frame.values if key == _NAME and e > s]
        return Item(frame.start, end, 1, places=places)
    return Item(frame.start, end, 0, paths=[(frame.start, end)])


def _key(text: str) -> str:
    return _KEY_SEPARATORS.sub("_", text.strip())


def _open(bracket: str, key: str | None, stack: list[_Frame], at: int, submitted: bool) -> _Frame:
    """The frame a bracket opens: a submitted list, a ranked list under a root-cause key (or a
    list at the top of the text), an item of one, or anything else."""
    parent = stack[-1] if stack else None
    if bracket == "[":
        if submitted:
            return _Frame(bracket, at, item=Item(at, at, 1, submitted=True))
        ranked = bool(key and _RANKED_LIST.fullmatch(key)) or (parent is None and key is None)
        return _Frame(bracket, at, ranked=ranked)
    if parent is not None and parent.ranked and parent.bracket == "[":
        parent.count += 1
        return _Frame(bracket, at, item=Item(at, at, parent.count))
    return _Frame(bracket, at)


def _fill(item: Item, key: str, start: int, end: int) -> None:
    if end <= start:
        return
    if _PLACE.fullmatch(key):
        item.places.append((start, end))
    elif _TYPE.fullmatch(key):
        item.types.append((start, end))
    elif _PATH.fullmatch(key):
        item.paths.append((start, end))
