"""A typed table of Yes/No ratings from several raters (judges and people).

An item is keyed by `(incident_id, trial, unit)`; the unit is a question id (question level),
a dimension id (dimension level) or the literal `verdict` (the case's final pass/fail). A value
is `"Yes"`, `"No"` or `None` (missing: unscored by a judge, left empty by a person). Raters are
always aligned by key, never by position.

Dimension level: an item is Yes when the dimension "passes", i.e. its score (share of Yes among
the scored questions of that dimension, as in the judge's own scoring) is at least
`dimension_pass` (0.5 by default). Judges carry it from the result file's
`cases[].dimensions[].score`; for people, and for judges read without case scores, it is derived
from their question answers by the same rule. The pooled answers of a dimension's questions are
the question level restricted to that dimension (see `agreement.report`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

from agreement.errors import LabelFileError

Answer = Literal["Yes", "No"]
Level = Literal["question", "dimension", "verdict"]
RaterKind = Literal["judge", "human"]

LEVELS: tuple[Level, ...] = ("question", "dimension", "verdict")
VERDICT = "verdict"
DIMENSION_PASS = 0.5

YES_SPELLINGS = frozenset({"yes", "true", "1", "pass"})
NO_SPELLINGS = frozenset({"no", "false", "0", "fail"})
ACCEPTED = "yes/no, true/false, 1/0, pass/fail (any case), or empty for missing"


class ItemKey(NamedTuple):
    """One rated item: a question or dimension (`unit`) of one trial of one incident."""

    incident_id: str
    trial: str
    unit: str


def normalize_answer(
    value: Any,
    *,
    path: str | None = None,
    row: int | None = None,
    field: str = "answer",
) -> Answer | None:
    """Map the accepted spellings to `"Yes"`/`"No"`, empty or None to None; reject the rest."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, int) and value in (0, 1):
        return "Yes" if value == 1 else "No"
    if isinstance(value, str):
        text = value.strip().lower()
        if not text:
            return None
        if text in YES_SPELLINGS:
            return "Yes"
        if text in NO_SPELLINGS:
            return "No"
    raise LabelFileError(
        path, f"{value!r} is not a Yes/No answer; use {ACCEPTED}", row=row, field=field
    )


def base_name(name: str) -> str:
    """`gpt-4o#2` -> `gpt-4o`: repeated runs of one judge differ only by a `#` suffix."""
    head, sep, tail = name.rpartition("#")
    return head if sep and head and tail else name


@dataclass
class RaterLabels:
    """Everything one rater said. `composites` (judges only) feeds the threshold sweep."""

    name: str
    kind: RaterKind
    source: str | None = None
    labels: dict[Level, dict[ItemKey, Answer | None]] = field(
        default_factory=lambda: {level: {} for level in LEVELS}
    )
    dimension_of: dict[str, str] = field(default_factory=dict)
    dimension_scores: dict[ItemKey, float | None] = field(default_factory=dict)
    composites: dict[tuple[str, str], float | None] = field(default_factory=dict)
    rubric: str | None = None  # content hash of the rubric a judge answered (judges only)

    def renamed(self, name: str) -> RaterLabels:
        return RaterLabels(
            name,
            self.kind,
            self.source,
            self.labels,
            self.dimension_of,
            self.dimension_scores,
            self.composites,
            self.rubric,
        )


class PairedItems(NamedTuple):
    """The items two raters both answered, in one order: keys and each rater's answers."""

    keys: list[ItemKey]
    a: list[Answer]
    b: list[Answer]


class RatingTable:
    """Raters by name, with aligned access by level and unit.

    Adding a rater whose name is taken: two people of the same name are merged (one person may
    label in several files; conflicting answers are an error). Two judges of the same name from
    different sources are different raters, named after their file (`m (run2.json)`): a shared
    name does not make two result files repeated runs. Self-consistency comes from the repeats one
    result holds (`name#1`, `name#2`, from `judge eval --repeat`) or from explicit groups.
    """

    def __init__(self, raters: Iterable[RaterLabels] = (), dimension_pass: float = DIMENSION_PASS):
        self.dimension_pass = dimension_pass
        self._raters: dict[str, RaterLabels] = {}
        for rater in raters:
            self.add(rater)

    def add(self, rater: RaterLabels) -> str:
        """Add a rater; return the name it is stored under."""
        existing = self._raters.get(rater.name)
        if existing is None:
            self._raters[rater.name] = rater
            return rater.name
        if existing.kind == rater.kind == "human":
            _merge_into(existing, rater)
            return existing.name
        if existing.kind != rater.kind:
            return self.add(rater.renamed(f"{rater.name} ({rater.kind})"))
        return self.add(rater.renamed(self._qualified(rater)))

    def extend(self, other: RatingTable | Iterable[RaterLabels]) -> None:
        raters = other.raters if isinstance(other, RatingTable) else other
        for rater in raters:
            self.add(rater)

    def _qualified(self, rater: RaterLabels) -> str:
        """A free name for a judge whose name is taken, saying which file it came from."""
        candidates = []
        if rater.source:
            candidates = [
                f"{rater.name} ({Path(rater.source).name})",
                f"{rater.name} ({rater.source})",
            ]
        candidates += [f"{rater.name} ({k})" for k in range(2, len(self._raters) + 3)]
        return next(name for name in candidates if name not in self._raters)

    @property
    def raters(self) -> list[RaterLabels]:
        return list(self._raters.values())

    @property
    def names(self) -> list[str]:
        return list(self._raters)

    def __contains__(self, name: object) -> bool:
        return name in self._raters

    def __getitem__(self, name: str) -> RaterLabels:
        try:
            return self._raters[name]
        except KeyError:
            known = ", ".join(self._raters) or "none"
            raise KeyError(f"no rater named {name!r}; raters: {known}") from None

    def __len__(self) -> int:
        return len(self._raters)

    def kind(self, name: str) -> RaterKind:
        return self[name].kind

    def dimension_map(self) -> dict[str, str]:
        """Question id -> dimension id, merged over all raters (first seen wins)."""
        merged: dict[str, str] = {}
        for rater in self._raters.values():
            for question, dimension in rater.dimension_of.items():
                merged.setdefault(question, dimension)
        return merged

    def labels(self, name: str, level: Level) -> dict[ItemKey, Answer | None]:
        """A rater's items at `level`; the dimension level is resolved as the module doc says."""
        rater = self[name]
        if level != "dimension" or rater.labels["dimension"]:
            return rater.labels[level]
        if rater.dimension_scores:
            return {
                key: None if score is None else ("Yes" if score >= self.dimension_pass else "No")
                for key, score in rater.dimension_scores.items()
            }
        return derive_dimensions(
            rater.labels["question"], self.dimension_map(), self.dimension_pass
        )

    def count(self, name: str, level: Level) -> int:
        """Items at `level` the rater answered (missing ones not counted)."""
        return sum(v is not None for v in self.labels(name, level).values())

    def units(self, level: Level) -> list[str]:
        """Units at `level` in first-seen order."""
        seen: dict[str, None] = {}
        for name in self._raters:
            for key in self.labels(name, level):
                seen.setdefault(key.unit, None)
        return list(seen)

    def incidents(self) -> list[str]:
        seen: dict[str, None] = {}
        for rater in self._raters.values():
            for level in LEVELS:
                for key in rater.labels[level]:
                    seen.setdefault(key.incident_id, None)
        return list(seen)

    def paired(
        self, a: str, b: str, level: Level, units: Iterable[str] | None = None
    ) -> PairedItems:
        """Items both raters answered (pairwise deletion), aligned by key, in a stable order."""
        la, lb = self.labels(a, level), self.labels(b, level)
        wanted = set(units) if units is not None else None
        pairs = sorted(
            (k, x, y)
            for k, x in la.items()
            if x is not None
            and (y := lb.get(k)) is not None
            and (wanted is None or k.unit in wanted)
        )
        return PairedItems(
            [k for k, _, _ in pairs], [x for _, x, _ in pairs], [y for _, _, y in pairs]
        )

    def matrix(
        self, names: list[str], level: Level, units: Iterable[str] | None = None
    ) -> tuple[list[ItemKey], list[list[Answer | None]]]:
        """Items rated by at least one of `names`, with one column per rater (None = missing)."""
        wanted = set(units) if units is not None else None
        columns = [self.labels(n, level) for n in names]
        keys = sorted(
            {
                k
                for col in columns
                for k, v in col.items()
                if v is not None and (wanted is None or k.unit in wanted)
            }
        )
        rows = [[col.get(k) for col in columns] for k in keys]
        return keys, rows


def derive_dimensions(
    questions: Mapping[ItemKey, Answer | None],
    dimension_of: Mapping[str, str],
    threshold: float = DIMENSION_PASS,
) -> dict[ItemKey, Answer | None]:
    """Dimension pass from question answers: share of Yes among answered questions >= threshold.

    Questions whose dimension is unknown are ignored; a dimension with no answered question is
    missing.
    """
    tallies: dict[ItemKey, list[int]] = {}
    for key, answer in questions.items():
        dimension = dimension_of.get(key.unit)
        if dimension is None:
            continue
        tally = tallies.setdefault(ItemKey(key.incident_id, key.trial, dimension), [0, 0])
        if answer is not None:
            tally[0] += answer == "Yes"
            tally[1] += 1
    return {
        key: (None if n == 0 else ("Yes" if yes / n >= threshold else "No"))
        for key, (yes, n) in tallies.items()
    }


def _merge_into(target: RaterLabels, extra: RaterLabels) -> None:
    for level in LEVELS:
        mine = target.labels[level]
        for key, answer in extra.labels[level].items():
            old = mine.get(key)
            if old is not None and answer is not None and old != answer:
                raise LabelFileError(
                    extra.source,
                    f"annotator {target.name!r} answered {old} in {target.source} and {answer} "
                    f"here for {key.incident_id} / trial {key.trial} / {key.unit}",
                )
            if old is None:
                mine[key] = answer
    for question, dimension in extra.dimension_of.items():
        target.dimension_of.setdefault(question, dimension)
    target.dimension_scores.update(extra.dimension_scores)
    target.composites.update(extra.composites)


def check_labels_match(table: RatingTable, most: int = 5) -> None:
    """Refuse (`LabelFileError`) a label file none of whose labels is about a case a judge in
    `table` rated: its pairs with every judge would be empty, every number `undefined`. Names
    the file, the first `most` cases it labels and the first `most` the judges hold. A table of
    people alone (agreement among them) is not checked."""
    judged = _cases(r for r in table.raters if r.kind == "judge")
    if not judged:
        return
    by_source: dict[str | None, list[RaterLabels]] = {}
    for rater in table.raters:
        if rater.kind == "human":
            by_source.setdefault(rater.source, []).append(rater)
    for source, raters in by_source.items():
        labelled = _cases(raters)
        if labelled and not labelled & judged:
            raise LabelFileError(
                source,
                f"no label matches a case of the results (incident_id/trial): it labels "
                f"{_first(labelled, most)}; the results hold {_first(judged, most)}",
            )


def _cases(raters: Iterable[RaterLabels]) -> set[tuple[str, str]]:
    return {
        (key.incident_id, key.trial)
        for rater in raters
        for level in LEVELS
        for key in rater.labels[level]
    }


def _first(cases: set[tuple[str, str]], most: int) -> str:
    shown = [f"{incident}/{trial}" for incident, trial in sorted(cases)[:most]]
    more = len(cases) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")
