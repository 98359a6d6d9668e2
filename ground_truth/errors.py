"""The error a person can act on: which file, which field, what was expected."""

from __future__ import annotations

import warnings
from pathlib import Path


def located(path: str | Path | None, message: str, field: str | None = None) -> str:
    """`file: field: message`, the shape of every message about an input file."""
    where = str(path) if path is not None else "<input>"
    if field:
        where += f": {field}"
    return f"{where}: {message}"


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


def warn_format(path: str | Path | None, message: str, field: str | None = None) -> None:
    warnings.warn(FormatWarning(path, message, field), stacklevel=3)
