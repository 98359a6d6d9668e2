"""The error a person can act on: which file, which field, what was expected."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` is not imported by `judge --help`
    from typing import Any

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def visible(text: str, keep: str = "") -> str:
    """`text` with every control character but those in `keep` shown as an escape (`\\x1b`):
    names read from input files cannot clear a terminal, move its cursor, hide text behind a
    carriage return or reorder it with bidi controls when printed."""
    return _CONTROL.sub(lambda m: m.group() if m.group() in keep else _escape(m.group()), text)


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def located(path: str | Path | None, message: str, field: str | None = None) -> str:
    """`file: field: message`, the shape of every message about an input file."""
    where = visible(str(path)) if path is not None else "<input>"
    if field:
        where += f": {visible(field)}"
    return f"{where}: {visible(message, keep=chr(10))}"


class InputError(ValueError):
    """A bad input file. `str()` names the file, the field (or line) and what was expected."""

    def __init__(self, path: str | Path | None, message: str, field: str | None = None):
        self.path = str(path) if path is not None else None
        self.field = field
        self.message = message
        super().__init__(located(path, message, field))


class FormatWarning(UserWarning):
    """A known problem in an input file: loaded anyway (or the item skipped), but a person should
    know. `judge check --strict` counts them."""

    def __init__(self, path: str | Path | None, message: str, field: str | None = None):
        self.path = str(path) if path is not None else None
        self.field = field
        self.message = message
        super().__init__(located(path, message, field))


def validation_error(path: str | Path | None, exc: Any, prefix: str = "") -> InputError:
    """pydantic's `ValidationError` as one `InputError` naming the first bad field, and every
    other bad field with what was expected there in its message (none is left out)."""
    problems = []
    for error in exc.errors():
        loc = ".".join(str(p) for p in error["loc"])
        problems.append((f"{prefix}.{loc}" if prefix and loc else (prefix or loc or None), error))
    (field, first), rest = problems[0], problems[1:]
    also = "".join(f"; {where or '(top)'}: {error['msg']}" for where, error in rest)
    return InputError(path, f"{first['msg']}{also}", field=field)


_warning_sinks: list[Callable[[FormatWarning], None]] = []


def warn_format(path: str | Path | None, message: str, field: str | None = None) -> None:
    """Emit a FormatWarning about `path` (and `field`), attributed to the caller's caller; inside
    `format_warnings_to(sink)`, hand it to `sink` instead."""
    warning = FormatWarning(path, message, field)
    if _warning_sinks:
        _warning_sinks[-1](warning)
        return
    warnings.warn(warning, stacklevel=3)


@contextmanager
def format_warnings_to(sink: Callable[[FormatWarning], None]) -> Iterator[None]:
    """Inside the block, loaders hand their FormatWarnings to `sink` rather than to `warnings`:
    a loader that goes on reading while a run is under way must not swap the process's warning
    filters (`warnings.catch_warnings` is global to all threads, one of which may be importing
    a provider's SDK and setting its own)."""
    _warning_sinks.append(sink)
    try:
        yield
    finally:
        _warning_sinks.remove(sink)


_collectors: list[list[InputError]] = []


@contextmanager
def collecting_bad_files() -> Iterator[list[InputError]]:
    """Inside the block a loader that meets a bad file (or row, or a duplicate id) records it
    here and goes on without it, so that `judge check` can report every one; outside, the
    first one is raised, as a run must not go on without some of its inputs."""
    found: list[InputError] = []
    _collectors.append(found)
    try:
        yield found
    finally:
        _collectors.remove(found)


def bad_file(error: InputError) -> None:
    """Raise `error`, or, inside `collecting_bad_files()`, record it for the caller to skip."""
    if not _collectors:
        raise error
    _collectors[-1].append(error)
