"""A run's judgments and call records on disk instead of in memory.

A 10,000-submission run holds 90,000 judgments and 30,000 call records, about 4 KB per call
as pydantic objects. `SpillFile` writes each one, as its answer arrives, to an anonymous
temporary file (`tempfile.TemporaryFile`: it has no name, and the system frees it when the
last `SpilledSeq` over it is gone or the process ends) in the text the result file uses for
it; the run then keeps only item numbers. `SpilledSeq` is a read-only sequence over some of
those items that reads each one back when asked, so `result.judgments`, `result.calls` and
`case.judgments` look like the lists they were, and `write_result` copies the text as it is.

`Kept` is the same interface over a plain list, for runs too small for a file to pay.
"""

from __future__ import annotations

import os
import tempfile
import threading
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Annotated, Any, Generic, TypeVar, overload

from pydantic import BaseModel, SerializerFunctionWrapHandler, ValidatorFunctionWrapHandler
from pydantic.functional_serializers import WrapSerializer
from pydantic.functional_validators import WrapValidator

from ..errors import StorageError, os_reason
from ..judgment import compact

M = TypeVar("M", bound=BaseModel)

FLUSH_BYTES = 1 << 18
"""Appended items are written once this many bytes wait (and before any read)."""
READ_BYTES = 1 << 16
"""Neighbouring items are read back together, up to this many bytes a read."""


def _where() -> str:
    """What a `StorageError` of the spill file names: it has no path of its own."""
    return f"{tempfile.gettempdir()} (the run's temporary spill file)"


def item_text(model: BaseModel) -> str:
    """An item's text inside the result file's list (`results.result_json`)."""
    return model.model_dump_json(indent=2).replace("\n", "\n    ")


class SpillFile:
    """Items appended to an anonymous temporary file; item `n` is the `n`-th appended.

    Writes are buffered and reads flush first. A failed write (disk full) raises
    `StorageError`; so does every later use, since what was lost cannot be read back."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(buffering=0)  # noqa: SIM115  # open as long as we are
        self._fd = self._file.fileno()
        self._offsets = array("q")
        self._lengths = array("I")
        self._pending = bytearray()
        self._size = 0
        self._lock = threading.Lock()
        self._failed: str | None = None

    @property
    def count(self) -> int:
        """Items appended so far; the next one's number."""
        return len(self._offsets)

    def add(self, model: BaseModel) -> int:
        """Append `model`; its item number."""
        data = item_text(model).encode()
        with self._lock:
            self._check()
            self._offsets.append(self._size + len(self._pending))
            self._lengths.append(len(data))
            self._pending += data
            if len(self._pending) >= FLUSH_BYTES:
                self._flush()
            return len(self._offsets) - 1

    def flush(self) -> None:
        with self._lock:
            self._flush()

    def _flush(self) -> None:
        self._check()
        view = memoryview(self._pending)
        try:
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError as exc:
            self._failed = os_reason(exc)
            self._check()
        finally:
            view.release()
        self._size += len(self._pending)
        self._pending.clear()

    def _check(self) -> None:
        if self._failed is not None:
            raise StorageError(_where(), self._failed)

    def texts(self, items: Iterable[int]) -> Iterator[str]:
        """The items' texts, in the order given; neighbours in the file are read together."""
        self.flush()
        run: list[int] = []
        for item in items:
            if run and not self._follows(run, item):
                yield from self._read_run(run)
                run = []
            run.append(item)
        if run:
            yield from self._read_run(run)

    def _follows(self, run: list[int], item: int) -> bool:
        last = run[-1]
        start = self._offsets[run[0]]
        end = self._offsets[last] + self._lengths[last]
        return self._offsets[item] == end and end - start < READ_BYTES

    def _read_run(self, run: list[int]) -> Iterator[str]:
        start = self._offsets[run[0]]
        end = self._offsets[run[-1]] + self._lengths[run[-1]]
        data = self._read(start, end - start)
        for item in run:
            offset = self._offsets[item] - start
            yield data[offset : offset + self._lengths[item]].decode()

    def _read(self, offset: int, length: int) -> bytes:
        try:
            data = os.pread(self._fd, length, offset)
        except OSError as exc:
            raise StorageError(_where(), os_reason(exc)) from exc
        if len(data) != length:
            raise StorageError(
                _where(),
                f"read {len(data)} of {length} bytes at {offset}: the file was cut short",
            )
        return data

    def sequence(self, model: type[M], items: Iterable[int]) -> SpilledSeq[M]:
        return SpilledSeq(self, model, array("q", items))


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

    def sequence(self, model: type[M], items: Iterable[int]) -> list[M]:
        return [self._items[i] for i in items]  # type: ignore[misc]


class SpilledSeq(Sequence[M], Generic[M]):
    """A read-only sequence of pydantic models kept in a `SpillFile`.

    Each access reads the item back and validates it: items are equal (`==`) to what was
    written, but reading one twice gives two equal objects, not the same one. Equal to any
    sequence (a list, another `SpilledSeq`) with equal items in the same order. Pickling or
    copying gives a plain list: the file cannot travel to another process."""

    __slots__ = ("_file", "_items", "_model")

    def __init__(self, file: SpillFile, model: type[M], items: array[int]) -> None:
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
