"""Items appended to an anonymous temporary file and read back on demand (`SpillFile`).

A run keeps its judgments and call records there (`judge.run.sink`), and `load_result` those
of a large result file, so that neither holds them all as pydantic objects (about 1 KB each;
900,000 judgments for 100,000 submissions). The file is a `tempfile.TemporaryFile`: it has no
name, and the system frees it when the last `SpilledSeq` over it is gone or the process ends.
Each item is kept in the text the result file uses for it (`item_text`), so that writing a
result copies it as it is.
"""

from __future__ import annotations

import os
import tempfile
import threading
from array import array
from collections.abc import Iterable, Iterator
from typing import TypeVar

from pydantic import BaseModel

from ..errors import StorageError, os_reason
from .items import SpilledSeq, item_text

M = TypeVar("M", bound=BaseModel)

FLUSH_BYTES = 1 << 18
"""Appended items are written once this many bytes wait (and before any read)."""
READ_BYTES = 1 << 16
"""Neighbouring items are read back together, up to this many bytes a read."""


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
