"""Where a run keeps its judgments and call records until the result is assembled: in memory
(`Kept`) or, for a large run, on disk (`SpillFile`); both are a `Sink`.

A 10,000-submission run holds 90,000 judgments and 30,000 call records, about 4 KB per call
as pydantic objects. `SpillFile` writes each one, as its answer arrives, to an anonymous
temporary file (`tempfile.TemporaryFile`: it has no name, and the system frees it when the
last `SpilledSeq` over it is gone or the process ends) in the text the result file uses for
it; the run then keeps only item numbers, and hands the result `SpilledSeq`s over them
(`judge.checklist.items`), which look like the lists they were.

`Kept` is the same interface over a plain list, for runs too small for a file to pay.
"""

from __future__ import annotations

import os
import tempfile
import threading
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol, TypeVar

from pydantic import BaseModel

from ..checklist.items import SpilledSeq, item_text
from ..errors import StorageError, os_reason

M = TypeVar("M", bound=BaseModel)

FLUSH_BYTES = 1 << 18
"""Appended items are written once this many bytes wait (and before any read)."""
READ_BYTES = 1 << 16
"""Neighbouring items are read back together, up to this many bytes a read."""


class Sink(Protocol):
    """Items kept one after another, numbered from 0; sequences of them for the result."""

    @property
    def count(self) -> int: ...

    def add(self, model: BaseModel) -> int: ...

    def flush(self) -> None: ...

    def sequence(self, model: type[M], items: Iterable[int]) -> Sequence[M]: ...


def _where() -> str:
    """What a `StorageError` of the spill file names: it has no path of its own."""
    return f"{tempfile.gettempdir()} (the run's temporary spill file)"


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

    def items(self) -> list[BaseModel]:
        """Everything kept, in item order."""
        return self._items

    def sequence(self, model: type[M], items: Iterable[int]) -> list[M]:
        return [self._items[i] for i in items]  # type: ignore[misc]
