"""SQLite's failures in words a user acts on, raised as `StorageError` (exit 4) or, for a file
that is no store at all, `InputError` (exit 2), naming the store. A store whose header was
overwritten is corrupted, not "no store": what is left of it still holds its schema."""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from ground_truth.errors import InputError

from ..errors import StorageError

REASONS = {
    "SQLITE_READONLY": "read-only: the store cannot be written (check the permissions of the "
    "file and its folder, and the mount); answers stored before are kept",
    "SQLITE_CORRUPT": "corrupted: database disk image is malformed "
    "(`judge store recover {path}` rebuilds a readable store from what is left)",
    "SQLITE_FULL": "disk full: no space left to store answers; the answers stored before are "
    "kept, and a rerun asks only the rest",
    "SQLITE_NOTADB": "not a judgment store: file is not a database",
    "SQLITE_CANTOPEN": "cannot open the store or create its journal beside it "
    "(check that the folder exists and is writable)",
    "SQLITE_BUSY": "locked by another process for more than 30 s",
    "SQLITE_LOCKED": "locked by another connection",
    "SQLITE_IOERR": "I/O error",
}


DAMAGED_HEADER = (
    "corrupted: its header is damaged (SQLite: file is not a database) "
    "(`judge store recover {path}` rebuilds a readable store from what is left)"
)


def sqlite_reason(exc: sqlite3.DatabaseError, path: Path) -> str:
    """SQLite's error in words a user acts on: the primary code of `exc` picks them."""
    name = getattr(exc, "sqlite_errorname", None) or ""
    for code, reason in REASONS.items():
        if name == code or name.startswith(code + "_"):
            words = reason.format(path=path)
            return f"{words} ({name}: {exc})" if code == "SQLITE_IOERR" else words
    return f"{exc} ({name})" if name else str(exc)


def open_error(path: Path, exc: sqlite3.DatabaseError) -> InputError | StorageError:
    """A file that is no SQLite database at all is bad input (exit 2); any other failure to
    open a store is a storage failure (exit 4), and one SQLite cannot open because the file or
    its folder cannot be written says so (SQLite itself only says "unable to open")."""
    name = getattr(exc, "sqlite_errorname", None)
    if name == "SQLITE_NOTADB":
        from .recover import looks_like_a_store

        if looks_like_a_store(path):  # the header is gone, the schema is there: damaged
            return StorageError(path, DAMAGED_HEADER.format(path=path))
        return InputError(path, REASONS["SQLITE_NOTADB"])
    if name in {"SQLITE_CANTOPEN", "SQLITE_READONLY"} and (where := read_only(path)):
        return StorageError(path, f"read-only: {where}; answers stored before are kept")
    return StorageError(path, sqlite_reason(exc, path))


def read_only(path: Path) -> str | None:
    """Which of the store file and its folder cannot be written (`access` also sees a
    read-only mount for root), or None."""
    if path.exists() and not os.access(path, os.W_OK):
        return "the file cannot be written"
    if not os.access(path.parent, os.W_OK):
        return "its folder cannot be written (the store needs its -wal and -shm files beside it)"
    return None


class _OnFile(Protocol):
    path: Path


S = TypeVar("S", bound=_OnFile)
P = ParamSpec("P")
R = TypeVar("R")


def guarded(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """`method`, with SQLite's errors raised as a `StorageError` naming the store."""

    @functools.wraps(method)
    def wrapper(self: S, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            raise StorageError(self.path, sqlite_reason(exc, self.path)) from exc

    return wrapper
