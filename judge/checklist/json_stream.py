"""Read one big JSON object member by member, its large arrays item by item, with the stdlib.

`json.loads` of a 55 MB result file builds every case, judgment and call as a dict at once
(several hundred MB) before a model sees the first; here each array item is decoded, handed
over and dropped before the next is read, so only the caller's own form of the data stays.
The decoding is `json`'s own (`JSONDecoder.raw_decode`) on a buffer that grows on demand.
"""

from __future__ import annotations

import json
from collections.abc import Container, Iterator
from typing import Any, TextIO

CHUNK = 1 << 20
_WS = " \t\n\r"
_NUMBER = "0123456789+-.eE"
_DECODER = json.JSONDecoder()


class JSONStreamError(ValueError):
    """The text is not one JSON object; `position` is the character offset of the problem."""

    def __init__(self, message: str, position: int):
        super().__init__(f"{message} at character {position}")
        self.position = position


class ObjectReader:
    """The members of the JSON object in `handle`, read a chunk at a time."""

    def __init__(self, handle: TextIO, chunk: int = CHUNK):
        self._handle = handle
        self._chunk = chunk
        self._buffer = ""
        self._pos = 0
        self._offset = 0  # characters dropped from the front of the buffer
        self._eof = False

    def members(self, streamed: Container[str] = ()) -> Iterator[tuple[str, Any]]:
        """(key, value) per member, in file order. A member named in `streamed` whose value is
        an array comes as an iterator of its items, to be consumed before the next member
        (what is left of it is skipped otherwise)."""
        self._expect("{")
        if self._peek() == "}":
            self._pos += 1
        else:
            while True:
                key = self._value()
                if not isinstance(key, str):
                    raise self._error("expected a member name")
                self._expect(":")
                if key in streamed and self._peek() == "[":
                    items = self._items()
                    yield key, items
                    for _ in items:
                        pass
                else:
                    yield key, self._value()
                if self._separator("}"):
                    break
        if self._peek():
            raise self._error("extra data after the object")

    def _items(self) -> Iterator[Any]:
        self._expect("[")
        if self._peek() == "]":
            self._pos += 1
            return
        while True:
            yield self._value()
            if self._separator("]"):
                return

    def _separator(self, close: str) -> bool:
        """Step over a `,` (False) or the closing bracket (True)."""
        char = self._peek()
        if char not in (",", close):
            raise self._error(f"expected ',' or {close!r}")
        self._pos += 1
        return char == close

    def _value(self) -> Any:
        self._peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self._buffer, self._pos)
            except json.JSONDecodeError as exc:
                if self._more():
                    continue
                raise JSONStreamError(exc.msg, self._offset + exc.pos) from None
            if self._may_go_on(value, end) and self._more():
                continue
            self._pos = end
            return value

    def _may_go_on(self, value: Any, end: int) -> bool:
        """Whether a number decoded up to `end` may have more digits in the next chunk: nothing
        but characters of a number follow it in the buffer."""
        if not isinstance(value, int | float) or isinstance(value, bool):
            return False
        return not self._buffer[end:].strip(_NUMBER)

    def _peek(self) -> str:
        """The next character that is not white space, or "" at the end of the text."""
        while True:
            while self._pos < len(self._buffer) and self._buffer[self._pos] in _WS:
                self._pos += 1
            if self._pos < len(self._buffer):
                return self._buffer[self._pos]
            if not self._more():
                return ""

    def _expect(self, char: str) -> None:
        if self._peek() != char:
            raise self._error(f"expected {char!r}")
        self._pos += 1

    def _more(self) -> bool:
        """Read more text: at least a chunk, and as much as is buffered, so that a value
        spanning many chunks is decoded a logarithmic number of times, not once per chunk."""
        if self._eof:
            return False
        data = self._handle.read(max(self._chunk, len(self._buffer) - self._pos))
        if not data:
            self._eof = True
            return False
        self._offset += self._pos
        self._buffer = self._buffer[self._pos :] + data
        self._pos = 0
        return True

    def _error(self, message: str) -> JSONStreamError:
        return JSONStreamError(message, self._offset + self._pos)
