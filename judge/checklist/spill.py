"""Items appended to an anonymous temporary file and read back on demand (`SpillFile`).

A run keeps its judgments and call records there (`judge.run.sink`), and `load_result` those
of a large result file, so that neither holds them all as pydantic objects (about 1 KB each;
900,000 judgments for 100,000 submissions). The file is a `tempfile.TemporaryFile`: it has no
name, and the system frees it when the last `SpilledSeq` over it is gone or the process ends.
Each item is kept in the text the result file uses for it (`item_text`), so that writing a
result copies it as it is.

Items are written in blocks of about `FLUSH_BYTES`, each compressed (zlib, fastest level): a
run's items are ~6.4 KB per answer, and the file's pages reach the disk once they have waited
~30 s (the kernel's writeback), so a run of 10,000 submissions wrote all of them there, almost
as much as its result file; compressed, ~11x less. A read decompresses the item's block (the
last one read is kept, and items not yet written are read from memory).
"""

from __future__ import annotations

import os
import tempfile
import threading
import zlib
from array import array
from collections.abc import Iterable, Iterator
from typing import TypeVar

from pydantic import BaseModel

from ..errors import StorageError, os_reason
from .items import SpilledSeq, item_text

M = TypeVar("M", bound=BaseModel)

FLUSH_BYTES = 1 << 14
"""Appended items are compressed and written as one block once this many bytes wait (and
when flushed): small enough that reading one item decompresses little, large enough for the
items' repeated field names and texts to compress (~11x for a run's judgments)."""
LEVEL = 1
"""zlib's fastest level: ~the ratio of its default at a third of the time on these items."""
CACHED_BLOCKS = 64
"""Blocks kept decompressed (~1 MB): a result lists a case's judgments together, but a run
appended them unit by unit among the other units in flight, some blocks apart. Writing the
result of 1,000 submissions run at 50 in flight decompressed 3,202 blocks for 428 written with
one block kept, 1,589 with 64. It does not help a larger run, whose result reads its cases in
an order that sweeps the whole file once per incident (8,000 submissions: ~10 decompressions
per block either way)."""


def _where() -> str:
    """What a `StorageError` of the spill file names: it has no path of its own."""
    return f"{tempfile.gettempdir()} (the run's temporary spill file)"


class SpillFile:
    """Items appended to an anonymous temporary file; item `n` is the `n`-th appended.

    Writes are buffered and compressed a block at a time. A failed write (disk full) raises
    `StorageError`; so does every later use, since what was lost cannot be read back."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(buffering=0)  # noqa: SIM115  # open as long as we are
        self._fd = self._file.fileno()
        self._block = array("I")
        """Each item's block (the number of blocks written: still in `_pending`)."""
        self._start = array("I")
        """Where each item starts in its block's text."""
        self._blocks = array("q")
        """Where each written block starts in the file; it ends where the next starts."""
        self._pending = bytearray()
        self._size = 0
        self._lock = threading.Lock()
        self._failed: str | None = None
        self._cached: dict[int, bytes] = {}
        """The blocks read last, decompressed (`CACHED_BLOCKS` at most)."""

    @property
    def count(self) -> int:
        """Items appended so far; the next one's number."""
        return len(self._block)

    def add(self, model: BaseModel) -> int:
        """Append `model`; its item number."""
        data = item_text(model).encode()
        with self._lock:
            self._check()
            self._block.append(len(self._blocks))
            self._start.append(len(self._pending))
            self._pending += data
            if len(self._pending) >= FLUSH_BYTES:
                self._flush()
            return len(self._block) - 1

    def flush(self) -> None:
        with self._lock:
            self._flush()

    def _flush(self) -> None:
        self._check()
        if not self._pending:
            return
        view = memoryview(zlib.compress(self._pending, LEVEL))
        written = len(view)
        try:
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError as exc:
            self._failed = os_reason(exc)
            self._check()
        finally:
            view.release()
        self._blocks.append(self._size)
        self._size += written
        self._pending.clear()

    def _check(self) -> None:
        if self._failed is not None:
            raise StorageError(_where(), self._failed)

    def texts(self, items: Iterable[int]) -> Iterator[str]:
        """The items' texts, in the order given."""
        for item in items:
            with self._lock:
                text = self._text(item)
            yield text

    def _text(self, item: int) -> str:
        block, start = self._block[item], self._start[item]
        data = self._pending if block == len(self._blocks) else self._block_text(block)
        end = len(data)
        if item + 1 < len(self._block) and self._block[item + 1] == block:
            end = self._start[item + 1]
        return data[start:end].decode()

    def _block_text(self, block: int) -> bytes:
        text = self._cached.get(block)
        if text is None:
            start = self._blocks[block]
            end = self._blocks[block + 1] if block + 1 < len(self._blocks) else self._size
            try:
                text = zlib.decompress(self._read(start, end - start))
            except zlib.error as exc:
                raise StorageError(_where(), f"block at {start} is damaged: {exc}") from exc
            if len(self._cached) >= CACHED_BLOCKS:
                del self._cached[next(iter(self._cached))]  # the one read first
            self._cached[block] = text
        return text

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
