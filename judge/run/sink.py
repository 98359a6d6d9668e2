"""Where a run keeps its judgments and call records until the result is assembled: in memory
(`Kept`) or, for a large run, on disk (`judge.checklist.spill.SpillFile`); both are a `Sink`.

A 10,000-submission run holds 90,000 judgments and 30,000 call records, about 4 KB per call
as pydantic objects. `SpillFile` writes each one, as its answer arrives, to an anonymous
temporary file in the text the result file uses for it; the run then keeps only item
numbers, and hands the result `SpilledSeq`s over them (`judge.checklist.items`), which look
like the lists they were.

`Kept` is the same interface over a plain list, for runs too small for a file to pay.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

from pydantic import BaseModel

from ..checklist.spill import SpillFile

__all__ = ["Kept", "Sink", "SpillFile"]

M = TypeVar("M", bound=BaseModel)


class Sink(Protocol):
    """Items kept one after another, numbered from 0; sequences of them for the result."""

    @property
    def count(self) -> int: ...

    def add(self, model: BaseModel) -> int: ...

    def flush(self) -> None: ...

    def sequence(self, model: type[M], items: Iterable[int]) -> Sequence[M]: ...


class Kept:
    """`SpillFile`'s interface over a list in memory: the run spills nothing."""

    def __init__(self) -> None:
        self._items: list[BaseModel] = []

    @property
    def count(self) -> int:
        return len(self._items)

    def add(self, model: BaseModel) -> int:
        self._items.append(model)
        return len(self._items) - 1

    def flush(self) -> None:
        """Nothing to write."""

    def items(self) -> list[BaseModel]:
        """Everything kept, in item order."""
        return self._items

    def sequence(self, model: type[M], items: Iterable[int]) -> list[M]:
        return [self._items[i] for i in items]  # type: ignore[misc]
