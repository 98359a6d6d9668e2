"""The result's judgments and call records as sequences that may live in a file.

`result.judgments`, `result.calls` and `case.judgments` are lists, or, for a run that spilled
them (`judge.run.sink.SpillFile`), `SpilledSeq`s: read-only sequences that read each item
back from the run's temporary file when asked, in the text the result file uses for it
(`item_text`), so that `write_result` copies the text as it is. `Items` is the model field
type that holds either.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Annotated, Any, Generic, Protocol, TypeVar, overload

from pydantic import BaseModel, SerializerFunctionWrapHandler, ValidatorFunctionWrapHandler
from pydantic.functional_serializers import WrapSerializer
from pydantic.functional_validators import WrapValidator

from .judgment import compact

M = TypeVar("M", bound=BaseModel)


def item_text(model: BaseModel) -> str:
    """An item's text inside the result file's list (`results.result_json`)."""
    return model.model_dump_json(indent=2).replace("\n", "\n    ")


class ItemTexts(Protocol):
    """Where a `SpilledSeq` reads its items' texts (a `judge.run.sink.SpillFile`)."""

    def texts(self, items: Iterable[int]) -> Iterator[str]: ...


class SpilledSeq(Sequence[M], Generic[M]):
    """A read-only sequence of pydantic models kept in a spill file (`ItemTexts`).

    Each access reads the item back and validates it: items are equal (`==`) to what was
    written, but reading one twice gives two equal objects, not the same one. Equal to any
    sequence (a list, another `SpilledSeq`) with equal items in the same order. Pickling or
    copying gives a plain list: the file cannot travel to another process."""

    __slots__ = ("_file", "_items", "_model")

    def __init__(self, file: ItemTexts, model: type[M], items: array[int]) -> None:
        self._file = file
        self._model = model
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> M: ...
    @overload
    def __getitem__(self, index: slice) -> SpilledSeq[M]: ...
    def __getitem__(self, index: int | slice) -> M | SpilledSeq[M]:
        if isinstance(index, slice):
            return SpilledSeq(self._file, self._model, self._items[index])
        item = self._items[index]  # IndexError as a list gives it
        return self._read(next(self._file.texts([item])))

    def __iter__(self) -> Iterator[M]:
        return (self._read(text) for text in self._file.texts(self._items))

    def subset(self, positions: Iterable[int]) -> SpilledSeq[M]:
        """The items at `positions` (in that order), still in the file."""
        return SpilledSeq(self._file, self._model, array("q", (self._items[i] for i in positions)))

    def _read(self, text: str) -> M:
        """The item `text` holds, sharing its fields-set (`compact`): a list made of them is
        as small as the one the run would have kept."""
        return compact(self._model.model_validate_json(text))

    def texts(self) -> Iterator[str]:
        """Each item's text as the result file holds it (`item_text`), without parsing it."""
        return self._file.texts(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SpilledSeq) and self._same_items(other):
            return True
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    def _same_items(self, other: SpilledSeq[Any]) -> bool:
        return other._file is self._file and other._items == self._items

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SpilledSeq[{self._model.__name__}]({len(self)} items)"

    def __reduce__(self) -> tuple[Any, ...]:
        return list, (list(self),)


class WithParts(SpilledSeq[M]):
    """Spilled items that each hold a slice of another spilled sequence in a field their text
    leaves out (a case's `judgments`): item `i`'s is `parts[bounds[i]:bounds[i + 1]]`, put
    back when the item is read, as the run had set it."""

    __slots__ = ("_bounds", "_field", "_parts")

    def __init__(
        self,
        file: ItemTexts,
        model: type[M],
        items: array[int],
        field: str,
        parts: SpilledSeq[Any],
        bounds: array[int],
    ) -> None:
        super().__init__(file, model, items)
        self._field, self._parts, self._bounds = field, parts, bounds

    @overload
    def __getitem__(self, index: int) -> M: ...
    @overload
    def __getitem__(self, index: slice) -> SpilledSeq[M]: ...
    def __getitem__(self, index: int | slice) -> M | SpilledSeq[M]:
        if isinstance(index, slice):
            return self.subset(range(len(self))[index])
        position = range(len(self))[index]  # IndexError as a list gives it
        return self._with_part(position, next(self._file.texts([self._items[position]])))

    def __iter__(self) -> Iterator[M]:
        texts = self._file.texts(self._items)
        return (self._with_part(i, text) for i, text in enumerate(texts))

    def subset(self, positions: Iterable[int]) -> SpilledSeq[M]:
        chosen = list(positions)
        bounds = array("q", [0])
        parts = array("q")
        for i in chosen:
            parts.extend(self._parts._items[self._bounds[i] : self._bounds[i + 1]])
            bounds.append(len(parts))
        items = array("q", (self._items[i] for i in chosen))
        spilled = SpilledSeq(self._parts._file, self._parts._model, parts)
        return WithParts(self._file, self._model, items, self._field, spilled, bounds)

    def _with_part(self, position: int, text: str) -> M:
        item = self._read(text)
        part = self._parts._items[self._bounds[position] : self._bounds[position + 1]]
        setattr(item, self._field, SpilledSeq(self._parts._file, self._parts._model, part))
        return compact(item)  # every field set now: its fields-set can be shared again


def _keep_spilled(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """A `SpilledSeq` as it is (validating it would read every item back); anything else as
    the field's type says."""
    return value if isinstance(value, SpilledSeq) else handler(value)


def _dump_spilled(value: Any, handler: SerializerFunctionWrapHandler):
    # no return annotation: pydantic would take it for the field's serialized schema
    return handler(list(value) if isinstance(value, SpilledSeq) else value)


Items = Annotated[
    Sequence[M], WrapValidator(_keep_spilled), WrapSerializer(_dump_spilled, when_used="always")
]
"""A model field holding a list of `M` or a `SpilledSeq` of them: a list validates (and its
JSON schema reads) as before, a `SpilledSeq` passes through unread, and both dump as a list."""
